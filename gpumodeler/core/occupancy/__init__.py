"""Occupancy by NVIDIA's rules: compute-capability tables, the scalar calculator,
its vectorised path and the shared checks.

Public names are exported lazily (PEP 562), so importing one submodule does not load
the others (and their dependencies, e.g. networkx) with it.
"""
from __future__ import annotations

from gpumodeler.core.lazy import lazy_exports

_EXPORTS = {
    'ARCHITECTURES': 'compute_capability',
    'ArchitectureLimits': 'compute_capability',
    'KIB': 'compute_capability',
    'LEGACY_ARCHITECTURES': 'compute_capability',
    'LIMIT_NAMES': 'checks',
    'OccupancyArrays': 'arrays',
    'OccupancyResult': 'checks',
    'SUPPORTED_COMPUTE_CAPABILITIES': 'compute_capability',
    'UNLIMITED': 'checks',
    'architecture': 'compute_capability',
    'normalize_compute_capability': 'compute_capability',
    'occupancy': 'calculator',
    'occupancy_array': 'arrays',
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, globals(), _EXPORTS)
