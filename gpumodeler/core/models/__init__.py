"""Performance models: Gajger's adaptation of Volkov (kernel time, throughput bound,
the whole application in one call), and the registry of the models side by side
(gajger, volkov-contention, mwp-cwp, bsp, roofline: :mod:`registry`).

Public names are exported lazily (PEP 562), so importing one submodule does not load
the others (and their dependencies, e.g. networkx) with it.
"""
from __future__ import annotations

from gpumodeler.core.lazy import lazy_exports

_EXPORTS = {
    'ApplicationPrediction': 'gajger',
    'KernelInputs': 'gajger',
    'KernelPrediction': 'kernel_time',
    'RESOURCES': 'throughput',
    'ThroughputBound': 'throughput',
    'cartesian': 'gajger',
    'grid_for': 'kernel_time',
    'kernel_inputs_from_graph': 'gajger',
    'lambda_from_measurement': 'kernel_time',
    'predict': 'gajger',
    'predict_kernel': 'kernel_time',
    'throughput_bound': 'throughput',
    'warps_launched': 'kernel_time',
    'DEFAULT_MODEL': 'registry',
    'ImplausiblePrediction': 'result',
    'KernelTerms': 'result',
    'MODELS': 'registry',
    'MissingModelInput': 'result',
    'ModelInputs': 'result',
    'ModelResult': 'result',
    'Spread': 'registry',
    'TermEffect': 'result',
    'evaluate': 'registry',
    'evaluate_all': 'registry',
    'compare_launch': 'graph_inputs',
    'graph_counts': 'graph_inputs',
    'spread': 'registry',
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, globals(), _EXPORTS)
