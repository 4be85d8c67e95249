"""Measurements: importers for nvprof, Nsight Compute and timing CSV files, normalised to
:class:`Measurement` records, and profiled kernels as model inputs (docs/measurements.md).

Public names are exported lazily (PEP 562), so importing one submodule does not load
the others with it.
"""
from __future__ import annotations

from gpumodeler.core.lazy import lazy_exports

_EXPORTS = {
    'DIRECTIONS': 'records',
    'KINDS': 'records',
    'Measurement': 'records',
    'FORMATS': 'importer',
    'ImportResult': 'importer',
    'detect_format': 'importer',
    'import_text': 'importer',
    'ProfiledKernel': 'profiled',
    'architecture_notes': 'profiled',
    'estimate_latency_bound': 'profiled',
    'model_counts': 'profiled',
    'profile_kernel': 'profiled',
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, globals(), _EXPORTS)
