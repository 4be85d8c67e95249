"""Latency of one edge of a kernel execution graph, in cycles (Volkov §3.7; Gajger §4.4.2).

The latency bound weights each edge of the execution graph by the latency it stands for
(:mod:`gpumodeler.core.kernel.graph`): the edge's explicit latency, else the graph's latency
table (:mod:`gpumodeler.core.kernel.latency_tables`), chosen by the edge's kind and the instruction
that produces its value. :func:`gpumodeler.core.kernel.latency_bound.analyze` resolves every edge
this way; the kernel editor shows the resolved value.
"""
from __future__ import annotations

from operator import attrgetter

from gpumodeler.core.errors import GraphError
from gpumodeler.core.kernel.graph import KernelGraph
from gpumodeler.core.kernel.latency_tables import LatencyTable
from gpumodeler.core.kernel.warp_counts import shared_conflict_ways


def resolve_edge_latency(graph: KernelGraph, edge, table: LatencyTable | None, order=None) -> float:
    """Latency of one edge in cycles: explicit value, else from the latency table.

    :func:`latency_key` must name everything a table latency found here depends on (the
    analysis looks it up once per key)."""
    if edge.latency is not None:
        return float(edge.latency)
    if edge.kind == "dual":
        return 0.0
    if table is None:
        raise GraphError(f"edge {edge.id} ({edge.kind}) has no latency and the graph has no "
                         f"latency table; set one or give the edge a latency", item=edge.id)
    try:
        if edge.kind == "ilp":
            return float(table.ilp())
        if edge.kind == "replacement":
            return float(table.block_replacement())
        if edge.kind == "barrier":
            return float(table.barrier())
        if edge.kind == "branch":
            taken = edge.taken
            if taken is None:
                order = order or graph.order()
                taken = order[edge.src] >= order[edge.dst]
            return float(table.branch(taken))
        producer = graph.instructions[edge.src]
        if producer.unit == "ldst":
            if not producer.is_load:
                raise GraphError(f"edge {edge.id}: {producer.opcode} ({edge.src}) is a store and "
                                 f"produces no register; use an ilp edge or give a latency", item=edge.id)
            key = producer.latency_key()
            # Volkov's 2-way row: a 2-way conflict beyond the wavefronts the width needs
            if producer.space == "shared" and shared_conflict_ways(producer) == 2 \
                    and "shared_2way" in table.memory_cycles and producer.memory_level is None:
                key = "shared_2way"
            if producer.pattern == "random" and key == "dram" and "dram_random" in table.memory_cycles:
                key = "dram_random"
            return float(table.memory(key))
        if edge.kind == "memory":
            raise GraphError(f"edge {edge.id}: a memory edge must start at a load; "
                             f"{producer.opcode} ({edge.src}) is not one", item=edge.id)
        if producer.latency_class is None:
            raise GraphError(f"edge {edge.id}: {producer.opcode} ({edge.src}) has no latency class "
                             f"(unit {producer.unit}); give the edge an explicit latency", item=edge.id)
        n = wgmma_n(producer)
        if n is not None:
            value = table.wgmma(n)
            if value is not None:
                return value
        return float(table.instruction(producer.latency_class))
    except GraphError as exc:
        if exc.item is None:
            producer = graph.instructions.get(edge.src)
            what = (f"{edge.kind} edge {edge.id}, {producer.opcode} ({edge.src}) -> {edge.dst}"
                    if producer is not None else f"{edge.kind} edge {edge.id}")
            raise GraphError(f"{what}: {exc}", item=edge.id) from None
        raise


#: the attributes of a producing instruction its dependency edges' latency depends on
PRODUCER_LATENCY = attrgetter("unit", "is_load", "latency_class", "space", "memory_level",
                               "bank_conflict_degree", "pattern", "width_bytes")


def wgmma_n(producer) -> int | None:
    """The N of a warpgroup MMA (wgmma) producer whose latency depends on it, else None."""
    if producer.latency_class != "tensor":
        return None
    from gpumodeler.core.kernel.mma import decode_mma
    work = decode_mma(producer.opcode)
    return work.n if work is not None and work.warpgroup and work.n else None


def latency_key(edge, producer, order):
    """What an edge's table latency depends on (:func:`resolve_edge_latency`), so edges alike
    share one look-up; None when it is not known to depend on these only."""
    kind = edge.kind
    if kind == "dependency" or kind == "memory":
        if producer is None:
            return None  # resolve_edge_latency says what is wrong
        return kind, PRODUCER_LATENCY(producer), wgmma_n(producer)
    if kind == "branch":
        taken = edge.taken
        return (kind, order[edge.src] >= order[edge.dst] if taken is None else taken)
    return (kind,) if kind in ("ilp", "replacement", "barrier") else None
