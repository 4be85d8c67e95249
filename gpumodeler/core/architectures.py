"""Compute capability -> NVIDIA architecture name: the one table the GUI's latency-table check
and the SASS importer's choice of latency table read (NVIDIA, *CUDA C++ Programming Guide*,
"Compute Capabilities": 1.x Tesla, 2.x Fermi, 3.x Kepler, 5.x Maxwell, 6.x Pascal, 7.0/7.2
Volta, 7.5 Turing, 8.0-8.7 Ampere, 8.9 Ada Lovelace, 9.x Hopper, 10.x-12.x Blackwell).

Compute capability 11.0 is Blackwell (the Jetson Thor GPU, numbered 10.1 before CUDA 13).
"""
from __future__ import annotations

#: the architecture of each major version whose minors all share it
_BY_MAJOR = {1: "Tesla", 2: "Fermi", 3: "Kepler", 5: "Maxwell", 6: "Pascal", 9: "Hopper",
             10: "Blackwell", 11: "Blackwell", 12: "Blackwell"}


def architecture_name(compute_capability) -> str:
    """``"5.2"`` -> ``"Maxwell"``, ``"8.9"`` -> ``"Ada Lovelace"``; ``""`` when unknown or not
    a compute capability."""
    try:
        major, minor = (int(x) for x in str(compute_capability).split(".")[:2])
    except (TypeError, ValueError):
        return ""
    if major == 7:
        return "Turing" if minor >= 5 else "Volta"
    if major == 8:
        return "Ada Lovelace" if minor >= 9 else "Ampere"
    return _BY_MAJOR.get(major, "")


def architecture_family(compute_capability) -> str:
    """The first word of :func:`architecture_name` (``"Ada"`` for 8.9), the part latency tables'
    ``architecture`` fields are compared by; ``""`` when unknown."""
    name = architecture_name(compute_capability)
    return name.split()[0] if name else ""
