"""Ordering edges of an imported SASS graph that are not read-after-write register
dependencies: write-after-read scoreboard waits and store→load memory order.

**Write-after-read (WAR) scoreboards** (sm_70 and later). An instruction whose source
registers are read late (a load's address, a store's data: they go through the memory
pipeline's queue) sets a *read barrier*, a scoreboard released once its sources have been
read (Jia et al., arXiv:1804.06826 §2.1–2.2). A later instruction that overwrites one of
those registers waits on that scoreboard. The importer pairs each such wait with the
instructions that may have set the scoreboard last (reaching definitions over scoreboards,
as for write barriers) and draws a ``dependency`` edge producer → waiter. Its latency is the
producer's **operand-read latency**, which no source measures (no latency source of
docs/sources.md has it): the edge carries the producer's issue spacing (its stall count, at least 1), a
lower bound that keeps the order and that the user may raise on the edge.

**Store → load order** (all architectures). A thread's own accesses to one location are
ordered by program order (PTX ISA, "Memory Consistency Model": the coherence axiom, a read
observes the latest write to the location in program order of the same thread; formalised in
Lustig, Sahasrabuddhe and Giroux, "A Formal Analysis of the NVIDIA PTX Memory Consistency
Model", ASPLOS 2019). The listing does not show whether two addresses are equal, so a load
after a store that may reach the same state space keeps its order: an ``ilp`` edge from the
last store(s) reaching the load (reaching definitions of one pseudo-register per state space).
The memory pipeline keeps a warp's accesses to a state space in order, so the load waits
for the store's issue, not for its completion: the edge carries the store's issue spacing
(its stall count, at least 1; without control words the table's ILP latency), not a memory
latency. Only the first load after a store gets the edge (later ones issue behind it).
Spaces: global (``STG RED ATOMG …``), shared (``STS ATOMS``), local (``STL``); the
generic ``LD``/``ST``/``ATOM``/``RED`` may address any of them; ``LDGSTS`` and the bulk/TMA
copies read global and write shared (``UTMASTG``/``UBLKRED``: the reverse). Constant memory
is never written by a kernel.

Edges that go backwards outside any loop are not representable and are counted in the
import report (``skipped_edges``), as for register dependencies.
"""
from __future__ import annotations

_ALL = ("global", "shared", "local")
#: Mnemonics whose address is generic (any of global, shared, local).
GENERIC = {"LD", "ST", "ATOM", "RED"}
#: Copies between global and shared memory: (spaces read, spaces written).
_COPIES = {
    "LDGSTS": (("global",), ("shared",)), "UTMALDG": (("global",), ("shared",)),
    "UBLKCP": (("global",), ("shared",)), "UTMASTG": (("shared",), ("global",)),
    "UBLKRED": (("shared",), ("global",)), "UTMAREDG": (("shared",), ("global",)),
}


def _mem(spaces) -> tuple:
    return tuple(f"MEM:{s}" for s in spaces)


def memory_access(ins_list, infos, is_load) -> tuple[list, list]:
    """Per instruction, (pseudo-registers written, read) over ``MEM:<space>`` for
    :func:`build._reaching_dependencies`, and which instructions store.

    A store (or atomic) writes the spaces it may touch, a load reads them; a load also
    writes them, so that only the *first* load after a store pairs with it (the loads after
    it are in issue order behind that one: their edges would say nothing more). Pairs whose
    first element is not a store are dropped by the caller. ``is_load[i]`` is the graph
    node's flag (an atomic returning a value reads too)."""
    access, stores = [], []
    for i, (ins, info) in enumerate(zip(ins_list, infos)):
        if info is None or info.unit != "ldst" or info.space == "constant":
            access.append(((), ()))
            stores.append(False)
            continue
        if ins.mnemonic in _COPIES:
            reads, writes = _COPIES[ins.mnemonic]
            access.append((_mem(reads + writes), _mem(reads)))
            stores.append(True)
            continue
        spaces = _mem(_ALL if ins.mnemonic in GENERIC else (info.space,))
        access.append((spaces, spaces if is_load[i] else ()))
        stores.append(not info.is_load)
    return access, stores


def read_barrier_waits(controls, pairs) -> list:
    """The (setter, waiter) pairs of ``pairs`` (reaching scoreboard definitions) where the
    waiter waits on the setter's read barrier and not on its write barrier: the WAR waits."""
    return [(d, u) for d, u in pairs
            if controls[d].read_barrier is not None and controls[d].read_barrier in controls[u].waits
            and controls[d].write_barrier not in controls[u].waits]
