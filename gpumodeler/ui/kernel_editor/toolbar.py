"""The kernel editor's tool bar: kernel, latency table, tool mode, edge kind, loop, layout.

It fits a 1280-pixel screen beside the Kernel Properties dock: the kernel's New, Import…
and Export… are one "Kernel" menu button, and the combos are sized to their choices'
usual names (their full names are in the drop-down), so Auto-layout, Fit and Delete are
on the bar itself, not in its overflow.

:func:`build_toolbar` makes the bar's controls attributes of the editor (as a Designer
``setupUi`` would) and connects them to the editor's methods; the editor decides what they do.
"""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QActionGroup, QIcon, QKeySequence, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QComboBox, QLineEdit, QMenu, QToolBar, QToolButton

from gpumodeler.core.kernel.graph import EDGE_KINDS

from .items import EDGE_STYLES
from .scene import KIND_NAMES


def _kind_icon(kind: str) -> QIcon:
    colour, style = EDGE_STYLES[kind]
    pm = QPixmap(28, 12)
    pm.fill(Qt.transparent)
    p = QPainter(pm)
    p.setRenderHint(QPainter.Antialiasing)
    p.setPen(QPen(colour, 2.2, style))
    p.drawLine(2, 6, 26, 6)
    p.end()
    return QIcon(pm)


def build_toolbar(editor) -> QToolBar:
    """The tool bar of ``editor``; its controls become the editor's ``toolbar``,
    ``kernel_button`` (its menu: New, Import…, Export…), ``kernel_combo``, ``new_action``, ``import_action``, ``export_action``, ``table_combo``,
    ``select_action``, ``connect_action``, ``kind_combo``, ``loop_iterations``,
    ``loop_action``, ``layout_action``, ``fit_action`` and ``delete_action``."""
    toolbar = editor.toolbar = QToolBar("Kernel")
    toolbar.setIconSize(QSize(28, 12))
    editor.kernel_combo = QComboBox()
    editor.kernel_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
    editor.kernel_combo.setMinimumContentsLength(10)
    editor.kernel_combo.setToolTip("The kernel to edit")
    editor.kernel_combo.activated.connect(editor._on_kernel_chosen)
    menu = QMenu(editor)
    editor.new_action = menu.addAction("New Kernel", editor.new_kernel)
    editor.new_action.setToolTip("Add an empty kernel to the project")
    editor.import_action = menu.addAction("Import Kernel Graph…", editor._on_import)
    editor.import_action.setToolTip("Read a kernel graph (gpumodeler-kernel JSON) into the project")
    editor.export_action = menu.addAction("Export Kernel Graph…", editor._on_export)
    editor.export_action.setToolTip("Write this kernel graph as gpumodeler-kernel JSON")
    menu.setToolTipsVisible(True)
    editor.kernel_button = QToolButton()
    editor.kernel_button.setObjectName("kernel_menu_button")
    editor.kernel_button.setText("Kernel")
    editor.kernel_button.setMenu(menu)
    editor.kernel_button.setPopupMode(QToolButton.InstantPopup)
    editor.kernel_button.setToolTip("New, import or export a kernel")
    toolbar.addWidget(editor.kernel_button)
    toolbar.addWidget(editor.kernel_combo)
    toolbar.addSeparator()
    editor.table_combo = QComboBox()
    editor.table_combo.addItem("(no table)", None)   # the tables: KernelEditor._fill_table_choices
    editor.table_combo.setToolTip("Latency table: the architecture whose latencies fill the edges")
    editor.table_combo.activated.connect(editor._on_table_chosen)
    editor.table_combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
    editor.table_combo.setMinimumContentsLength(12)
    toolbar.addWidget(editor.table_combo)
    toolbar.addSeparator()
    group = QActionGroup(editor)
    editor.select_action = QAction("Select", editor, checkable=True, checked=True)
    editor.select_action.setToolTip("Select and move (Shift+drag from an instruction draws an edge)")
    editor.connect_action = QAction("Connect", editor, checkable=True)
    editor.connect_action.setToolTip("Drag from one instruction to another to add an edge of the chosen kind")
    for a in (editor.select_action, editor.connect_action):
        group.addAction(a)
        toolbar.addAction(a)
    editor.select_action.toggled.connect(lambda on: editor._set_mode("select" if on else "connect"))
    editor.kind_combo = QComboBox()
    for kind in EDGE_KINDS:
        editor.kind_combo.addItem(_kind_icon(kind), kind, kind)
        editor.kind_combo.setItemData(editor.kind_combo.count() - 1, KIND_NAMES[kind], Qt.ToolTipRole)
    editor.kind_combo.setToolTip("Kind of the edges you draw")
    editor.kind_combo.currentIndexChanged.connect(
        lambda i: setattr(editor.scene, "edge_kind", editor.kind_combo.itemData(i)))
    toolbar.addWidget(editor.kind_combo)
    toolbar.addSeparator()
    editor.loop_iterations = QLineEdit("a")
    editor.loop_iterations.setMaximumWidth(60)
    editor.loop_iterations.setToolTip("Iterations of the loop to make: a count or an expression (a, N/256)")
    editor.loop_action = QAction("Loop ×", editor)
    editor.loop_action.setToolTip("Make the selected instructions a loop with this many iterations")
    editor.loop_action.triggered.connect(lambda: editor.make_loop())
    toolbar.addAction(editor.loop_action)
    toolbar.addWidget(editor.loop_iterations)
    toolbar.addSeparator()
    editor.layout_action = toolbar.addAction("Auto-layout", editor.auto_layout)
    editor.layout_action.setToolTip("Program order in columns that wrap to the view's shape; loops kept "
                                    "together as regions, loop bodies indented (undoable)")
    editor.fit_action = QAction("Fit", editor)
    editor.fit_action.setShortcut(QKeySequence(Qt.Key_F))
    editor.fit_action.setShortcutContext(Qt.WidgetWithChildrenShortcut)
    editor.fit_action.setToolTip("Fit the graph in the view (F)")
    editor.fit_action.triggered.connect(lambda: editor.view.fit())
    toolbar.addAction(editor.fit_action)
    editor.delete_action = QAction("Delete", editor)
    editor.delete_action.setShortcuts([QKeySequence(QKeySequence.Delete), QKeySequence(Qt.Key_Backspace)])
    editor.delete_action.setShortcutContext(Qt.WidgetShortcut)
    editor.delete_action.setToolTip("Delete the selection (Del)")
    editor.delete_action.triggered.connect(editor.delete_selection)
    toolbar.addAction(editor.delete_action)
    return toolbar

