"""Type names for the models' broadcastable values.

Every numeric input of the models is either a Python number or a numpy array that
broadcasts with the others, so that a sweep is one call (Gajger ch. 4's equations applied
element-wise). numpy's type stubs cannot say "a float or an array" and still allow the
scalar path's ``float()``, ``min()`` and comparisons, so these names are documented aliases
of :data:`typing.Any`: they tell a reader what a value is, and mypy checks the code around
them.
"""
from __future__ import annotations

from typing import Any, TypeAlias

Real: TypeAlias = Any
"""A number (int or float) or a numpy array of numbers that broadcasts with the others."""

Label: TypeAlias = Any
"""A ``str`` or a numpy object array of ``str`` (a resource or mode name per sweep point)."""
