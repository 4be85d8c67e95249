"""Kernel execution graphs: the graph, expressions, loops, latency tables, the latency
bound (critical path) and per-warp instruction counts.

Public names are exported lazily (PEP 562), so importing one submodule does not load
the others (and their dependencies, e.g. networkx) with it.
"""
from __future__ import annotations

from gpumodeler.core.lazy import lazy_exports

_EXPORTS = {
    'ACCESS_PATTERNS': 'graph',
    'COUNT_NAMES': 'warp_counts',
    'CriticalPath': 'latency_bound',
    'EDGE_KINDS': 'graph',
    'Edge': 'graph',
    'Expression': 'expressions',
    'FORMAT_NAME': 'graph',
    'FORMAT_VERSION': 'graph',
    'INSTRUCTION_CLASSES': 'latency_tables',
    'Instruction': 'graph',
    'KernelGraph': 'graph',
    'LatencyBound': 'latency_bound',
    'LatencyTable': 'latency_tables',
    'Loop': 'graph',
    'MAX_DEPTH': 'expressions',
    'MAX_FORMS': 'latency_bound',
    'MAX_LENGTH': 'expressions',
    'MEMORY_LEVELS': 'latency_tables',
    'OpcodeInfo': 'opcodes',
    'SPACES': 'opcodes',
    'TABLES': 'latency_tables',
    'UNITS': 'opcodes',
    'WORK_PER_NODE': 'latency_bound',
    'WarpCounts': 'warp_counts',
    'access_bytes_per_warp': 'warp_counts',
    'analyze': 'latency_bound',
    'classify': 'opcodes',
    'count': 'warp_counts',
    'from_dict': 'graph',
    'get_table': 'latency_tables',
    'lines_touched': 'warp_counts',
    'parse': 'expressions',
    'resolve_edge_latency': 'edge_latency',
    'to_dict': 'graph',
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, globals(), _EXPORTS)
