"""Exceptions raised by gpumodeler.core.

Every message says what is wrong and what would be valid, so the CLI can print it as one
line and the GUI can show it next to the field it concerns.
"""


class ModelError(ValueError):
    """Base class for invalid input to the model.

    ``item`` optionally names the element the message concerns (an instruction, edge or
    loop id, a device field) so an editor can show the message next to it.
    """

    def __init__(self, message: str, item: str | None = None):
        super().__init__(message)
        self.item = item


class InvalidParameter(ModelError):
    """A parameter is out of its valid range or of the wrong kind."""


class LaunchError(ModelError):
    """A kernel launch that cannot run on the device (block too large, too many registers...)."""


class UnsupportedArchitecture(ModelError):
    """A compute capability the rules are not documented for."""


class ExpressionError(ModelError):
    """An iteration-count or parameter expression that cannot be parsed or evaluated."""


class GraphError(ModelError):
    """A kernel execution graph that is malformed (cycle outside a loop, negative latency...)."""


class FormatError(ModelError):
    """A file in a gpumodeler format that cannot be read (wrong version, missing keys...)."""


class UnphysicalResult(ModelError):
    """A result that is not a finite number or that no hardware can give (a negative
    energy, an infinite bandwidth): never printed as a result; the message names the
    quantity and the input that led to it (:mod:`gpumodeler.core.physical`)."""


class QuantityError(ModelError):
    """Text that is not a valid number or quantity (core/quantities.py); the message says
    what would be valid."""


def shown(value, limit: int = 80) -> str:
    """``repr(value)`` for a message, cut to ``limit`` characters with an ellipsis, so an
    error never echoes a 3 KB expression or a 5 000-digit number back at the user."""
    try:
        text = repr(value)
    except ValueError:  # an int beyond Python's int-string limit
        return f"<a number of more than {limit} digits>"
    if len(text) <= limit:
        return text
    quote = text[0] if text[0] in "'\"" else ""   # a cut string still reads as quoted
    return text[:limit - 1 - len(quote)] + "…" + quote
