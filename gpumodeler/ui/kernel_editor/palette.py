"""The instruction palette: common SASS opcodes grouped by functional unit.

Each entry shows the register-dependency latency the kernel's latency table gives it (or
"explicit" where the table has none, so an edge from it needs a latency). Drag an entry
onto the canvas, or double-click it to append it to the program.
"""
from __future__ import annotations

from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QDrag
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from gpumodeler.core.errors import GraphError
from gpumodeler.core.kernel.latency_tables import LatencyTable
from gpumodeler.core.kernel.opcodes import classify

from .items import UNIT_COLOURS

MIME_OPCODE = "application/x-gpumodeler-opcode"

GROUPS = (
    ("CUDA core · FP32", "cuda_core", ("FADD", "FMUL", "FFMA", "FMNMX", "FSETP")),
    ("CUDA core · INT", "cuda_core", ("IADD", "IADD3", "XMAD", "IMAD", "IMUL", "ISCADD", "LEA",
                                      "ISETP", "LOP", "LOP3", "SHL", "SHR", "SEL")),
    ("CUDA core · move", "cuda_core", ("MOV", "S2R", "SHFL", "I2F", "F2I")),
    ("SFU", "sfu", ("MUFU", "RRO")),
    ("FP64", "fp64", ("DADD", "DMUL", "DFMA", "DSETP")),
    ("Load/store · global", "ldst", ("LDG", "STG", "ATOM", "RED")),
    ("Load/store · shared", "ldst", ("LDS", "STS", "ATOMS")),
    ("Load/store · local", "ldst", ("LDL", "STL")),
    ("Load/store · constant", "ldst", ("LDC",)),
    ("Branch", "branch", ("BRA", "SSY", "SYNC")),
    ("Barrier", "barrier", ("BAR",)),
    ("Exit", "exit", ("EXIT",)),
    ("Virtual", "virtual", ("END",)),
)


def opcode_latency_text(opcode: str, table: LatencyTable | None) -> str:
    """'6 cy' (the table's latency for a consumer of this instruction), or a hint."""
    info = classify(opcode)
    if info is None or table is None:
        return ""
    try:
        if info.unit == "ldst":
            if not info.is_load:
                return "store"
            level = {"shared": "shared", "constant": "constant"}.get(info.space or "", "dram")
            return f"{table.memory(level):g} cy"
        if info.latency_class is None:
            return ""
        return f"{table.instruction(info.latency_class):g} cy"
    except GraphError:
        return "explicit"


class Palette(QTreeWidget):
    """Opcodes by unit. ``activated(opcode)`` on double-click or Enter."""

    activated = Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setHeaderLabels(["Instruction", "latency"])
        self.setRootIsDecorated(True)
        self.setDragEnabled(True)
        self.setDragDropMode(QTreeWidget.DragOnly)
        self.setUniformRowHeights(True)
        self.setIndentation(12)
        self.itemActivated.connect(self._on_activated)
        self._items: dict[str, QTreeWidgetItem] = {}
        for title, unit, opcodes in GROUPS:
            group = QTreeWidgetItem(self, [title])
            group.setFlags(Qt.ItemIsEnabled)
            group.setForeground(0, QBrush(UNIT_COLOURS[unit].darker(120)))
            f = group.font(0)
            f.setBold(True)
            group.setFont(0, f)
            for op in opcodes:
                item = QTreeWidgetItem(group, [op, ""])
                item.setData(0, Qt.UserRole, op)
                item.setFlags(Qt.ItemIsEnabled | Qt.ItemIsSelectable | Qt.ItemIsDragEnabled)
                self._items[op] = item
            group.setFirstColumnSpanned(True)
            group.setExpanded(unit in ("cuda_core", "ldst", "branch", "exit"))
        self.header().setStretchLastSection(False)
        self.header().setSectionResizeMode(0, self.header().ResizeMode.Stretch)
        self.header().setSectionResizeMode(1, self.header().ResizeMode.ResizeToContents)
        self.set_table(None)

    def opcodes(self) -> list[str]:
        return list(self._items)

    def set_table(self, table: LatencyTable | None) -> None:
        """Show the latencies of ``table`` (the kernel's architecture)."""
        for op, item in self._items.items():
            text = opcode_latency_text(op, table)
            item.setText(1, text)
            item.setForeground(1, QBrush(QColor("#b00020") if text == "explicit" else QColor("#5f6368")))
            tip = f"{op}: {classify(op).unit}" if classify(op) else op
            if text == "explicit":
                tip += f"\nThe latency table {table.key} has no latency for it: give its edges one."
            elif text and text != "store":
                tip += f"\nLatency {text} in {table.name}"
            item.setToolTip(0, tip + "\nDrag onto the canvas or double-click to append")

    def _on_activated(self, item: QTreeWidgetItem, column: int) -> None:
        op = item.data(0, Qt.UserRole)
        if op:
            self.activated.emit(op)

    def activate(self, opcode: str) -> None:
        """What a double-click on ``opcode`` does (used by keyboard users and tests)."""
        self._on_activated(self._items[opcode], 0)

    def startDrag(self, supported_actions) -> None:
        item = self.currentItem()
        op = item.data(0, Qt.UserRole) if item else None
        if not op:
            return
        mime = QMimeData()
        mime.setData(MIME_OPCODE, op.encode())
        mime.setText(op)
        drag = QDrag(self)
        drag.setMimeData(mime)
        drag.exec(Qt.CopyAction)
