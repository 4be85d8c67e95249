"""Lazy exports for the subject packages of core (PEP 562): a package names its public
objects and the submodule each lives in; importing the package loads none of them, so one
submodule (and its dependencies, e.g. numpy or networkx) loads only when it is used."""
from __future__ import annotations

import importlib


def lazy_exports(package: str, namespace: dict, exports: dict):
    """A module ``__getattr__`` for ``package`` that imports ``exports[name]`` on first use
    and caches the object in ``namespace`` (the package's globals)."""
    def __getattr__(name: str):
        try:
            module = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value
    return __getattr__
