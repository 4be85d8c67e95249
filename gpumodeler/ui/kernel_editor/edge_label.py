"""The latency label of an edge in the kernel graph editor, edited in place.

A kernel imported from SASS has tens of thousands of edges, each with a label. A
``QGraphicsTextItem`` per label carries a whole text document (layout, undo stack, cursor):
about 50 KB and a text layout per label, so an imported kernel of 20 000 instructions took
minutes and gigabytes to show. A label here is a short text it paints itself; the text editor
is made only for the label being edited (double-click), and kept hidden for the next edit.
"""
from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter
from PySide6.QtWidgets import QGraphicsItem, QGraphicsTextItem

from .detail import zoomed_out

#: Edge labels (latencies): point size and the backing that keeps them legible over lines.
LABEL_PT = 10.0
LABEL_BACKING = QColor(255, 255, 255, 215)
_MARGIN = 1.0  # around the text, inside the backing
_FONTS: dict = {}  # font key -> the one QFont object of that font the labels share
_METRICS: dict = {}  # id of a shared font -> its QFontMetricsF (kept, as the fonts are)
_STYLES: dict = {}  # (bold, italic), or "base" -> the shared label font
_DEFAULT_COLOUR = QColor("#202124")
_EMPTY = QRectF()


def _ignore(edge_id: str, text: str) -> None:
    """No one listens for a committed edit yet."""


def _shared(font: QFont) -> QFont:
    """The labels' one object of ``font`` (a QFont is copied when stored)."""
    key = font.key()
    have = _FONTS.get(key)
    if have is None:
        have = _FONTS[key] = QFont(font)
    return have


def _metrics(font: QFont) -> QFontMetricsF:
    """The metrics of one of the shared fonts."""
    fm = _METRICS.get(id(font))
    if fm is None:
        fm = _METRICS[id(font)] = QFontMetricsF(font)
    return fm


def _styled(bold: bool, italic: bool) -> QFont:
    """The shared label font, bold and italic or not."""
    font = _STYLES.get((bold, italic))
    if font is None:
        f = QFont(_base_font())
        f.setBold(bold)
        f.setItalic(italic)
        font = _STYLES[(bold, italic)] = _shared(f)
    return font


def _base_font() -> QFont:
    """The application's font at :data:`LABEL_PT` at least (readable at 100 % and 75 %)."""
    font = _STYLES.get("base")
    if font is None:
        f = QFont()
        f.setPointSizeF(max(f.pointSizeF(), LABEL_PT))
        font = _STYLES["base"] = _shared(f)
    return font


class EdgeLabel(QGraphicsItem):
    """The latency of an edge; double-click edits it in place (Enter commits, Esc cancels,
    leaving the field commits, an empty text returns to the latency table's value).
    ``on_commit(edge id, text)`` is called with the text committed (the scene sets it).

    A plain graphics item, not a QObject (which costs twice as much to make), sharing its
    font objects with the other labels of the same style."""

    def __init__(self, edge_id: str, parent):
        super().__init__(parent)
        self.edge_id = edge_id
        self.on_commit = _ignore
        self._text = ""
        self._colour = _DEFAULT_COLOUR
        self._font = _base_font()
        self._rect = _EMPTY
        self._editor = None
        self._editing = False

    # -- what QGraphicsTextItem offered and the editor uses ---------------------------------
    def font(self) -> QFont:
        return QFont(self._font)

    def setFont(self, font: QFont) -> None:
        if font != self._font:
            self._font = _shared(font)
            self._measure()

    def restyle(self, text: str | None, colour: QColor, bold: bool, italic: bool) -> None:
        """The text (None: keep it), its colour, and the label font made bold or italic (or
        not), measured once for all of them."""
        font = _styled(bold, italic)
        if font is not self._font or (text is not None and text != self._text):
            self._font = font
            if text is not None:
                self._text = text
            self._measure()
        self.setDefaultTextColor(colour)

    def defaultTextColor(self) -> QColor:
        return QColor(self._colour)

    def setDefaultTextColor(self, colour: QColor) -> None:
        if colour != self._colour:
            self._colour = colour  # a value the caller made for it
            self.update()

    def toPlainText(self) -> str:
        """The text shown: while editing, the text being typed."""
        return self._editor.toPlainText() if self._editing else self._text

    def setPlainText(self, text: str) -> None:
        if text != self._text:
            self._text = text
            self._measure()

    def _measure(self) -> None:
        fm = _metrics(self._font)
        rect = QRectF(0, 0, fm.horizontalAdvance(self._text) + 2 * _MARGIN + 2,
                      fm.height() + 2 * _MARGIN)
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = rect
        self.update()

    def boundingRect(self) -> QRectF:
        if self._editing:
            return self._rect.united(self._editor.boundingRect())
        return self._rect

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if self._editing or zoomed_out(option, painter):
            return  # the editor shows the text; or too small to read
        # a light backing, so that a label stays legible where edges cross under it
        painter.setPen(Qt.NoPen)
        painter.setBrush(LABEL_BACKING)
        painter.drawRoundedRect(self._rect, 3, 3)
        painter.setFont(self._font)
        painter.setPen(self._colour)
        painter.drawText(self._rect.adjusted(_MARGIN + 1, _MARGIN, -_MARGIN, -_MARGIN),
                         Qt.AlignLeft | Qt.AlignVCenter, self._text)

    # -- editing in place -------------------------------------------------------------------
    def begin_edit(self, explicit_text: str) -> None:
        """Edit the label, starting from ``explicit_text`` (the edge's own latency, or empty
        for the table's), all of it selected."""
        if self._editor is None:
            self._editor = _LabelEditor(self)
        editor = self._editor
        self.prepareGeometryChange()
        self._editing = True
        editor.setFont(self._font)
        editor.setDefaultTextColor(self._colour)
        editor.setPlainText(explicit_text)
        editor.show()
        editor.setTextInteractionFlags(Qt.TextEditorInteraction)
        editor.setFocus(Qt.MouseFocusReason)
        cursor = editor.textCursor()
        cursor.select(cursor.SelectionType.Document)
        editor.setTextCursor(cursor)
        self.update()

    def editing(self) -> bool:
        return self._editing

    def _finish(self, commit: bool) -> None:
        if not self._editing:
            return
        editor = self._editor
        text = editor.toPlainText().strip()
        self.prepareGeometryChange()
        self._editing = False  # before the focus goes, whose event finishes again
        editor.setTextInteractionFlags(Qt.NoTextInteraction)
        editor.clearFocus()
        editor.hide()
        self.update()
        if commit:
            self.on_commit(self.edge_id, text)


class _LabelEditor(QGraphicsTextItem):
    """The text field of the label being edited (made at its first edit)."""

    def __init__(self, label: EdgeLabel):
        super().__init__(label)
        self.label = label
        self.document().setDocumentMargin(_MARGIN)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setPen(Qt.NoPen)
        painter.setBrush(QColor("white"))
        painter.drawRoundedRect(self.boundingRect(), 3, 3)
        super().paint(painter, option, widget)

    def keyPressEvent(self, event):
        if event.key() in (Qt.Key_Return, Qt.Key_Enter):
            self.label._finish(True)
            return
        if event.key() == Qt.Key_Escape:
            self.label._finish(False)
            return
        super().keyPressEvent(event)

    def focusOutEvent(self, event):
        super().focusOutEvent(event)
        self.label._finish(True)
