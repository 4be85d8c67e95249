"""Host<->device transfers: the link model (Gajger eq. 5.5), the regime model that holds on
real copies (models.py, fit.py), and calibration (link fits, kernel λ with leave-one-out).

Public names are exported lazily (PEP 562), so importing one submodule does not load
the others (and their dependencies, e.g. networkx) with it.
"""
from __future__ import annotations

from gpumodeler.core.lazy import lazy_exports

_EXPORTS = {
    'CopySelection': 'selection',
    'KernelLambdaFit': 'lambda_fit',
    'LambdaFit': 'calibration',
    'LinkFit': 'calibration',
    'PCIE_LANES': 'link',
    'PLAUSIBLE_LAMBDA': 'lambda_fit',
    'Regime': 'models',
    'TransferFit': 'fit',
    'TransferModel': 'models',
    'fit_kernel_lambda': 'calibration',
    'fit_kernel_lambda_loo': 'lambda_fit',
    'fit_link': 'calibration',
    'fit_transfer_model': 'fit',
    'lambda_warning': 'lambda_fit',
    'link_transfer_time_s': 'link',
    'pcie_bandwidth_bytes_per_s': 'link',
    'select_copies': 'selection',
    'transfer_time_s': 'link',
    'transfers_time_s': 'link',
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, globals(), _EXPORTS)
