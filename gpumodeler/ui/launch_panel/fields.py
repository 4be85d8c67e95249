"""Form fields that commit one edit when the user finishes it and show a refusal at the
field (red border, message under the form), shared by the launch panel and the kernel
editor's property panel.
"""
from __future__ import annotations

import math

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QLabel, QLineEdit, QWidget)

from ..units import QuantityError, number_text, parse_number

ERROR_STYLE = ("border: 1.5px solid #d00000; border-radius: 3px; background: #fff3f3;"
               " padding: 1px 2px;")
MESSAGE_STYLE = "color: #b00000; padding: 2px 0;"


class FieldError(ValueError):
    """A value the user typed that is not valid for the field."""


def _number(text: str, what: str, allow_empty: bool, wanted: str) -> tuple[float | None, str]:
    """(the number typed, the text); None for an allowed empty field; FieldError naming
    ``what`` otherwise. Numbers are read by :func:`gpumodeler.ui.units.parse_number`
    (``16M``, ``1,000,000``, ``2^20``, ``1e6``)."""
    text = text.strip()
    if not text:
        if allow_empty:
            return None, text
        raise FieldError(f"{what}: give {wanted}")
    try:
        return parse_number(text), text
    except QuantityError as exc:
        raise FieldError(f"{what}: {exc}") from None


def parse_int(text: str, what: str, minimum: int | None = None, maximum: int | None = None,
              allow_empty: bool = False):
    value, text = _number(text, what, allow_empty, "a whole number")
    if value is None:
        return None
    if not math.isfinite(value) or value != int(value):
        raise FieldError(f"{what} must be a whole number, got {text}")
    if maximum is not None and value > maximum:  # before int(): 1e30 is refused by its size
        raise FieldError(f"{what} must be <= {maximum}, got {text}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise FieldError(f"{what} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise FieldError(f"{what} must be <= {maximum}, got {value}")
    return value


def parse_float(text: str, what: str, minimum: float | None = None, maximum: float | None = None,
                allow_empty: bool = False, strict_minimum: bool = False):
    value, text = _number(text, what, allow_empty, "a number")
    if value is None:
        return None
    if not math.isfinite(value):
        raise FieldError(f"{what} must be a finite number, got {text}")
    if minimum is not None and (value < minimum or (strict_minimum and value == minimum)):
        raise FieldError(f"{what} must be {'>' if strict_minimum else '>='} {minimum:g}, got {value:g}")
    if maximum is not None and value > maximum:
        raise FieldError(f"{what} must be <= {maximum:g}, got {value:g}")
    return value


def fmt_number(value) -> str:
    """A field's value as text that reads back as the same value (every digit kept, so
    committing a field again never rounds it)."""
    return number_text(value) if isinstance(value, (int, float)) else ("" if value is None
                                                                       else str(value))


def mark_error(widget: QWidget, message: str) -> None:
    widget.setStyleSheet(f"{type(widget).__name__} {{ {ERROR_STYLE} }}")
    widget.setToolTip(message)
    widget.setProperty("error_message", message)


def clear_error(widget: QWidget) -> None:
    if widget.property("error_message"):
        widget.setStyleSheet("")
        widget.setToolTip(widget.property("help_text") or "")
        widget.setProperty("error_message", "")


class Form(QObject):
    """Named fields on a QFormLayout. ``committed(name, value)`` when the user finishes an
    edit whose parsed value differs from the shown one; a parse error is shown at the field
    and nothing is committed."""

    committed = Signal(str, object)

    def __init__(self, layout: QFormLayout, message: QLabel, parent=None):
        super().__init__(parent)
        self.layout, self.message = layout, message
        self.widgets: dict[str, QWidget] = {}
        self.parsers: dict = {}
        self.values: dict = {}
        self.formatters: dict = {}
        self.choices: dict[str, list] = {}

    def _row(self, name, label, widget, help_text):
        help_text = help_text or label  # every control says what it is when hovered
        widget.setProperty("help_text", help_text)
        widget.setToolTip(help_text)
        widget.setObjectName(f"field_{name}")
        self.widgets[name] = widget
        self.layout.addRow(label, widget)
        return widget

    def line(self, name: str, label: str, parse=lambda t: t, help_text: str = "",
             placeholder: str = "", fmt=fmt_number) -> QLineEdit:
        w = QLineEdit()
        w.setPlaceholderText(placeholder)
        self.parsers[name] = parse
        self.formatters[name] = fmt
        w.editingFinished.connect(lambda n=name: self._line_done(n))
        return self._row(name, label, w, help_text)

    def combo(self, name: str, label: str, choices, help_text: str = "") -> QComboBox:
        """choices: [(text, value)]."""
        w = QComboBox()
        self.set_choices(name, choices, w)
        w.activated.connect(lambda i, n=name: self._combo_done(n, i))
        return self._row(name, label, w, help_text)

    def check(self, name: str, label: str, help_text: str = "", text: str = "") -> QCheckBox:
        """A check box; ``text`` beside it (the row's ``label`` on its left)."""
        w = QCheckBox(text)
        w.clicked.connect(lambda on, n=name: self._commit(n, bool(on)))
        return self._row(name, label, w, help_text)

    def set_choices(self, name, choices, w=None):
        w = w or self.widgets[name]
        choices = list(choices)
        self.choices[name] = [value for _, value in choices]  # python values (None allowed)
        w.blockSignals(True)
        w.clear()
        for text, _ in choices:
            w.addItem(text)
        w.blockSignals(False)

    def set_values(self, values: dict) -> None:
        for name, value in values.items():
            self.values[name] = value
            w = self.widgets.get(name)
            if w is None:
                continue
            clear_error(w)
            w.blockSignals(True)
            if isinstance(w, QLineEdit):
                w.setText(self.formatters[name](value))
                w.setCursorPosition(0)
            elif isinstance(w, QComboBox):
                values = self.choices.get(name, [])
                w.setCurrentIndex(values.index(value) if value in values else -1)
            elif isinstance(w, QCheckBox):
                w.setChecked(bool(value))
            w.blockSignals(False)
        self.clear_message()

    def _line_done(self, name):
        w = self.widgets[name]
        try:
            value = self.parsers[name](w.text())
        except (FieldError, ValueError) as exc:
            self.show_error(name, str(exc))
            return
        self._commit(name, value)

    def _combo_done(self, name, index):
        if 0 <= index < len(self.choices[name]):
            self._commit(name, self.choices[name][index])

    def _commit(self, name, value):
        clear_error(self.widgets[name])
        if name in self.values and self.values[name] == value:
            return
        self.clear_message()
        self.committed.emit(name, value)

    def show_error(self, name: str | None, message: str) -> None:
        if name in self.widgets:
            mark_error(self.widgets[name], message)
        self.message.setText(message)
        self.message.setVisible(True)

    def clear_message(self) -> None:
        self.message.setText("")
        self.message.setVisible(False)

    def error_of(self, name: str) -> str:
        return self.widgets[name].property("error_message") or ""


def message_label() -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    label.setStyleSheet(MESSAGE_STYLE)
    label.setTextInteractionFlags(Qt.TextSelectableByMouse)
    label.setVisible(False)
    return label
