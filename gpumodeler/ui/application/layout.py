"""The Application tab's widgets and their layout (built once by ApplicationPanel): the
application bar, the step list with its buttons, the step form, the Gantt chart with its
export buttons, and the table of measured vs predicted time per kernel or stream. Signals are connected to the panel's slots here."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QFormLayout, QFrame,
                               QHBoxLayout, QLabel, QLineEdit, QListWidget, QPushButton, QScrollArea,
                               QSplitter, QTabWidget, QVBoxLayout, QWidget)

from gpumodeler.core.application.timeline import POLICIES
from gpumodeler.ui.application.gantt import GanttChart
from gpumodeler.ui.application.groups import GroupsTable


def build_panel(panel) -> None:
    """Create ``panel``'s widgets as attributes and lay them out."""
    top = QHBoxLayout()
    panel.app_combo = QComboBox(toolTip="The application shown (a project can hold several)")
    panel.app_combo.currentIndexChanged.connect(panel.app_chosen)
    panel.new_app_button = QPushButton("New application", toolTip="Add an empty application")
    panel.new_app_button.clicked.connect(panel.new_application)
    panel.delete_app_button = QPushButton("Delete", toolTip="Delete this application (undoable)")
    panel.delete_app_button.clicked.connect(panel.delete_application)
    panel.policy_combo = QComboBox(toolTip="in-order: each engine takes its steps in program order "
                                          "(monotone); greedy: a ready step may overtake a waiting one")
    panel.policy_combo.addItems(POLICIES)
    panel.policy_combo.currentTextChanged.connect(lambda t: panel.set_app(policy=t))
    panel.host_power = QLineEdit(placeholderText="host power W (optional)",
                                toolTip="The host's power while the application runs, for the energy")
    panel.host_power.editingFinished.connect(panel.host_power_edited)
    for w in (QLabel("Application"), panel.app_combo, panel.new_app_button, panel.delete_app_button,
              QLabel("Engine queues"), panel.policy_combo, panel.host_power):
        top.addWidget(w)
    top.addStretch(1)

    panel.steps = QListWidget(toolTip="Steps in program order; drag to reorder")
    panel.steps.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
    panel.steps.model().rowsMoved.connect(panel.rows_moved)
    panel.steps.currentItemChanged.connect(panel.step_chosen)
    buttons = QHBoxLayout()
    panel.add_kernel_button = QPushButton("+ Kernel", toolTip="Add a kernel step (a launch of the project)")
    panel.add_kernel_button.clicked.connect(lambda: panel.add_step("kernel"))
    panel.add_copy_button = QPushButton("+ Copy", toolTip="Add a copy between two devices of the system")
    panel.add_copy_button.clicked.connect(lambda: panel.add_step("copy"))
    panel.add_sync_button = QPushButton("+ Sync", toolTip="Add a synchronisation")
    panel.add_sync_button.clicked.connect(lambda: panel.add_step("sync"))
    panel.split_button = QPushButton("Split launch…", toolTip="Split a launch over several GPUs "
                                    "with scatter and gather copies")
    panel.split_button.clicked.connect(panel.split_dialog)
    panel.remove_button = QPushButton("Remove", toolTip="Remove the selected step")
    panel.remove_button.clicked.connect(panel.remove_step)
    for b in (panel.add_kernel_button, panel.add_copy_button, panel.add_sync_button, panel.split_button,
              panel.remove_button):
        buttons.addWidget(b)
    left = QWidget()
    lv = QVBoxLayout(left)
    lv.setContentsMargins(0, 0, 0, 0)
    lv.addWidget(panel.steps, 1)
    lv.addLayout(buttons)

    panel.form_widget = QWidget()
    panel.form = QFormLayout(panel.form_widget)
    panel.name_edit = QLineEdit(toolTip="The step's name")
    panel.name_edit.editingFinished.connect(lambda: panel.set_step(name=panel.name_edit.text()))
    panel.stream_edit = QLineEdit(toolTip="Steps of one stream run in order")
    panel.stream_edit.editingFinished.connect(lambda: panel.set_step(stream=panel.stream_edit.text().strip() or "0"))
    panel.launch_combo = QComboBox(toolTip="The launch this kernel step runs")
    panel.launch_combo.activated.connect(lambda _i: panel.set_step(launch=panel.launch_combo.currentData()))
    panel.gpu_combo = QComboBox(toolTip="The GPU it runs on (default: the launch's)")
    panel.gpu_combo.activated.connect(lambda _i: panel.set_step(gpu=panel.gpu_combo.currentData()))
    panel.fraction_edit = QLineEdit(toolTip="Share of the launch's data or grid, 0 < share <= 1")
    panel.fraction_edit.editingFinished.connect(panel.fraction_edited)
    panel.concurrent_check = QCheckBox("runs concurrently with other kernels of its GPU",
                                      toolTip="Checked: this kernel may overlap other kernels "
                                              "on the same GPU (separate streams)")
    panel.concurrent_check.toggled.connect(lambda on: panel.set_step(concurrent=on))
    panel.src_combo = QComboBox(toolTip="Copy from")
    panel.src_combo.activated.connect(lambda _i: panel.set_step(src=panel.src_combo.currentData()))
    panel.dst_combo = QComboBox(toolTip="Copy to")
    panel.dst_combo.activated.connect(lambda _i: panel.set_step(dst=panel.dst_combo.currentData()))
    panel.size_edit = QLineEdit(toolTip="Bytes, or an expression of the application's variables (4*N)")
    panel.size_edit.editingFinished.connect(panel.size_edited)
    panel.after_list = QListWidget(toolTip="Earlier steps this one waits for (besides its stream)")
    panel.after_list.setMaximumHeight(110)
    panel.after_list.itemChanged.connect(panel.after_changed)
    panel.variables_edit = QLineEdit(toolTip="The application's variables, e.g. N=16Mi, a=128 "
                                                     "(numbers: 1e6, 1,000,000, 16M, 16Mi, 2^20)")
    panel.variables_edit.editingFinished.connect(panel.variables_edited)
    panel.form.addRow("Variables", panel.variables_edit)
    panel.form.addRow("Name", panel.name_edit)
    panel.form.addRow("Stream", panel.stream_edit)
    panel.form.addRow("Launch", panel.launch_combo)
    panel.form.addRow("GPU", panel.gpu_combo)
    panel.form.addRow("Share", panel.fraction_edit)
    panel.form.addRow("", panel.concurrent_check)
    panel.form.addRow("From", panel.src_combo)
    panel.form.addRow("To", panel.dst_combo)
    panel.form.addRow("Size", panel.size_edit)
    panel.form.addRow("Waits for", panel.after_list)
    panel.message = QLabel(wordWrap=True)
    panel.message.setStyleSheet("color: #c62828")
    panel.form.addRow(panel.message)

    panel.chart = GanttChart()
    panel.summary = QLabel(wordWrap=True, textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse)
    export = QHBoxLayout()
    for text, tip, act in (("Zoom in", "Zoom the time axis in (or turn the wheel over the chart)",
                            lambda: panel.chart.zoom(2.0)),
                           ("Zoom out", "Zoom the time axis out", lambda: panel.chart.zoom(0.5)),
                           ("Whole timeline", "Show the whole timeline (drag the chart to pan)",
                            panel.chart.whole)):
        b = QPushButton(text, toolTip=tip)
        b.clicked.connect(act)
        export.addWidget(b)
    panel.link_lanes_check = QCheckBox("Link lanes", checked=True,
                                       toolTip="A lane per link direction besides the engines' lanes "
                                               "(unticked: fewer lanes; a copy still shows on its "
                                               "devices' copy engines)")
    panel.link_lanes_check.toggled.connect(panel.chart.set_show_links)
    export.addWidget(panel.link_lanes_check)
    export.addSpacing(16)
    for kind in ("PNG", "SVG", "CSV"):
        b = QPushButton(f"Export {kind}…", toolTip=f"Save the timeline as {kind}")
        b.clicked.connect(lambda _c=False, k=kind.lower(): panel.export_dialog(k))
        export.addWidget(b)
    export.addStretch(1)
    bottom = QWidget()
    bv = QVBoxLayout(bottom)
    bv.setContentsMargins(0, 0, 0, 0)
    # the chart and the per-kernel table share the height as tabs: at 720 p the chart needs
    # all of it for its lanes
    panel.groups = GroupsTable()
    panel.result_tabs = QTabWidget(documentMode=True)
    panel.result_tabs.addTab(panel.chart, "Timeline")
    panel.result_tabs.addTab(panel.groups, "Per kernel or stream (measured vs predicted)")
    bv.addWidget(panel.result_tabs, 1)
    bv.addWidget(panel.summary)
    bv.addLayout(export)

    # The step form scrolls rather than claim the height the chart needs at 720 p.
    form_scroll = QScrollArea(widgetResizable=True, frameShape=QFrame.Shape.NoFrame)
    form_scroll.setWidget(panel.form_widget)
    panel.steps.setMinimumHeight(60)
    upper = QSplitter(Qt.Orientation.Horizontal)
    upper.addWidget(left)
    upper.addWidget(form_scroll)
    upper.setStretchFactor(0, 1)
    upper.setStretchFactor(1, 1)
    split = QSplitter(Qt.Orientation.Vertical, childrenCollapsible=False)
    split.addWidget(upper)
    split.addWidget(bottom)
    split.setStretchFactor(0, 2)
    split.setStretchFactor(1, 3)
    split.setSizes([200, 300])   # in proportion: the chart gets three fifths of the height
    panel.splitter = split
    layout = QVBoxLayout(panel)
    layout.addLayout(top)
    layout.addWidget(split, 1)
