"""The sweep panel's two rows of controls: the variable, its range and GPUs with Run and
Cancel; the saved sweeps, Save, Import measured and the exports.

:func:`build_controls` makes the controls attributes of the panel (as a Designer
``setupUi`` would) and connects them to the panel's methods; the panel decides what they do.
"""
from __future__ import annotations

from PySide6.QtGui import QAction
from ..plots.figure import DEFAULT_PRESET, PRESETS
from PySide6.QtWidgets import (QCheckBox, QComboBox, QHBoxLayout, QLabel, QLineEdit, QMenu,
                               QProgressBar, QPushButton, QSpinBox)


def build_controls(sweep) -> tuple[QHBoxLayout, ...]:
    """The rows of controls of ``sweep``, which gets ``variable_combo``, ``from_edit``,
    ``to_edit``, ``points_spin``, ``log_check``, ``gpus_button``, ``gpus_menu``,
    ``gpu_actions`` (filled later from the catalog), ``run_button``, ``cancel_button``,
    ``progress``, ``saved_combo``, ``save_button``, ``import_button`` and the export buttons
    ``png_button``, ``svg_button`` and ``csv_button``."""
    sweep.variable_combo = QComboBox()
    sweep.variable_combo.setToolTip("The variable to sweep")
    sweep.variable_combo.activated.connect(lambda i: sweep._variable_chosen())
    sweep.from_edit, sweep.to_edit = QLineEdit(), QLineEdit()
    for w in (sweep.from_edit, sweep.to_edit):
        w.setMaximumWidth(90)
    sweep.points_spin = QSpinBox()
    sweep.points_spin.setRange(1, 100_000)
    sweep.points_spin.setValue(32)
    sweep.points_spin.setToolTip("number of points")
    sweep.log_check = QCheckBox("log x")
    sweep.log_check.setToolTip("logarithmic spacing of the values and a logarithmic x axis")
    sweep.log_y_check = QCheckBox("log y")
    sweep.log_y_check.setToolTip("logarithmic time axis (a data-size sweep spans decades of time)")
    sweep.log_y_check.toggled.connect(lambda on: sweep.replot())
    sweep.gpus_button = QPushButton("Compare GPUs")  # a push button leaves room for its arrow
    sweep.gpus_button.setToolTip("GPUs from the catalog, one curve each (none: the launch's GPU)")
    sweep.gpus_menu = QMenu(sweep)
    sweep.gpus_button.setMenu(sweep.gpus_menu)
    sweep.gpu_actions: dict[str, QAction] = {}
    sweep.run_button = QPushButton("Run sweep")
    sweep.run_button.clicked.connect(sweep.run)
    sweep.cancel_button = QPushButton("Cancel")
    sweep.cancel_button.clicked.connect(sweep.cancel)
    sweep.cancel_button.setEnabled(False)
    sweep.progress = QProgressBar()
    sweep.progress.setRange(0, 100)
    sweep.progress.setMaximumWidth(140)
    sweep.progress.setVisible(False)
    sweep.run_button.setToolTip("Predict the launch at every value of the range (in the background)")
    sweep.cancel_button.setToolTip("Stop the running sweep")
    sweep.from_edit.setToolTip("first value of the range (16M, 2^20 and 1e6 are accepted)")
    sweep.to_edit.setToolTip("last value of the range")
    row1 = QHBoxLayout()
    for w in (QLabel("Sweep"), sweep.variable_combo, QLabel("from"), sweep.from_edit, QLabel("to"),
              sweep.to_edit, QLabel("points"), sweep.points_spin):
        row1.addWidget(w)
    row1.addStretch(1)
    row1b = QHBoxLayout()  # a second row: every control stays reachable in a narrow window
    for w in (sweep.log_check, sweep.log_y_check, sweep.gpus_button, sweep.run_button,
              sweep.cancel_button, sweep.progress):
        row1b.addWidget(w)
    row1b.addStretch(1)

    sweep.saved_combo = QComboBox()
    sweep.saved_combo.setToolTip("Sweeps saved with this launch")
    sweep.saved_combo.activated.connect(lambda i: sweep.load_sweep(sweep.saved_combo.itemData(i)))
    sweep.save_button = QPushButton("Save sweep")
    sweep.save_button.clicked.connect(sweep.save_sweep)
    sweep.import_button = QPushButton("Import measured…")
    sweep.import_button.setToolTip("CSV with the swept variable and measured_s columns")
    sweep.import_button.clicked.connect(sweep._on_import)
    sweep.png_button = QPushButton("PNG…")
    sweep.svg_button = QPushButton("SVG…")
    sweep.csv_button = QPushButton("CSV…")
    sweep.png_button.setToolTip("Save the plot as a PNG image at the figure size and dpi chosen")
    sweep.svg_button.setToolTip("Save the plot as an SVG drawing (text stays text) at the figure size")
    sweep.csv_button.setToolTip("Save the plotted numbers as CSV (times in seconds)")
    sweep.save_button.setToolTip("Keep this sweep's definition with the launch (saved in the project)")
    sweep.figure_combo = QComboBox()
    sweep.figure_combo.setObjectName("figure_preset")
    for key, size in PRESETS.items():
        sweep.figure_combo.addItem(size.name, key)
    sweep.figure_combo.setCurrentIndex(sweep.figure_combo.findData(DEFAULT_PRESET))
    sweep.figure_combo.setToolTip("Printed size of an exported figure (fonts are sized for it)")
    sweep.dpi_spin = QSpinBox()
    sweep.dpi_spin.setRange(50, 1200)
    sweep.dpi_spin.setValue(300)
    sweep.dpi_spin.setSuffix(" dpi")
    sweep.dpi_spin.setToolTip("Resolution of an exported PNG")
    sweep.png_button.clicked.connect(lambda: sweep._on_export("png"))
    sweep.svg_button.clicked.connect(lambda: sweep._on_export("svg"))
    sweep.csv_button.clicked.connect(lambda: sweep._on_export("csv"))
    row2 = QHBoxLayout()
    for w in (QLabel("Saved"), sweep.saved_combo, sweep.save_button, sweep.import_button):
        row2.addWidget(w)
    row2.addStretch(1)
    row3 = QHBoxLayout()
    for w in (QLabel("Export"), sweep.figure_combo, sweep.dpi_spin, sweep.png_button,
              sweep.svg_button, sweep.csv_button):
        row3.addWidget(w)
    row3.addStretch(1)
    return row1, row1b, row2, row3
