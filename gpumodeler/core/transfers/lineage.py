"""Which links a link derives from, by what its name records.

A project's connection records the catalog link it was made from (``Connection.link_name``;
its project overrides change values, not that origin). A catalog link that is one testbed's
instance of a generic link is named after it, the testbed in parentheses: ``PCIe 3.0 x16
(Gajger GTX 970 testbed)`` is a ``PCIe 3.0 x16`` (the canvas shows it so). What is measured
on the generic link (a calibration of its copies) therefore also describes the links named
after it, as long as they are links of the same type.
"""
from __future__ import annotations

import re

_QUALIFIED = re.compile(r"^(?P<base>.*\S)\s*\([^()]*\)\s*$")


def base_link_names(name: str) -> list[str]:
    """The names ``name`` says it derives from, nearest first: ``PCIe 3.0 x16 (Gajger GTX
    970 testbed)`` -> ``["PCIe 3.0 x16"]``; a name without a parenthesised qualifier
    derives from nothing."""
    out, current = [], " ".join(str(name or "").split())
    while (m := _QUALIFIED.match(current)) is not None:
        current = m.group("base")
        out.append(current)
    return out


__all__ = ["base_link_names"]
