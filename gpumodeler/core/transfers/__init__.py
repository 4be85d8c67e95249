"""Host<->device transfers: the link model (Gajger eq. 5.5) and its calibration.

Public names are exported lazily (PEP 562), so importing one submodule does not load
the others (and their dependencies, e.g. networkx) with it.
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    'LambdaFit': 'calibration',
    'LinkFit': 'calibration',
    'PCIE_LANES': 'link',
    'fit_kernel_lambda': 'calibration',
    'fit_link': 'calibration',
    'link_transfer_time_s': 'link',
    'pcie_bandwidth_bytes_per_s': 'link',
    'transfer_time_s': 'link',
    'transfers_time_s': 'link',
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
