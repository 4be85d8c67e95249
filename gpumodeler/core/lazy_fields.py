"""Result dataclasses whose reported-only fields are computed on first read.

A vectorised prediction spends most of its time on what nobody may read: the name of the
limiting resource at each of a million points is an object array, the mode a string array.
:class:`LazyFields` lets a frozen dataclass keep those as ordinary fields (same names, same
values and types, in ``repr``, ``==``, ``dataclasses.fields`` and ``asdict``) while
:func:`build` leaves some of them unset, each with a recipe ``(function, *arguments)`` that
:meth:`LazyFields.__getattr__` runs on first access and caches in the instance. Recipes are
module-level functions and their arguments, so a result still copies and pickles.
"""
from __future__ import annotations

_PENDING = "_lazy_recipes"


class LazyFields:
    """Mixin for a frozen dataclass built by :func:`build` (its normal constructor still
    works and computes nothing lazily)."""

    __slots__ = ()

    def __getattr__(self, name: str):
        # Only reached when normal lookup fails: a field left for later, or a real miss.
        pending = object.__getattribute__(self, "__dict__").get(_PENDING)
        if not pending or name not in pending:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        function, *arguments = pending[name]
        value = function(*arguments)
        object.__setattr__(self, name, value)
        del pending[name]  # the recipe's arguments may be big arrays
        return value

    def __getstate__(self):
        # Copies and pickles carry every field computed (recipes may hold big arrays).
        from dataclasses import fields
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __setstate__(self, state):
        for name, value in state.items():
            object.__setattr__(self, name, value)


def pending(obj, name: str):
    """The recipe of ``obj``'s field ``name`` while it is not computed yet, else None."""
    recipes = getattr(obj, "__dict__", {}).get(_PENDING)
    return recipes.get(name) if recipes else None


def build(cls, values: dict, lazy: dict):
    """An instance of the dataclass ``cls`` with ``values`` set now and each field of
    ``lazy`` (name -> ``(function, *arguments)``) computed when first read."""
    obj = object.__new__(cls)
    state = obj.__dict__
    state.update(values)
    if lazy:
        state[_PENDING] = lazy
    return obj
