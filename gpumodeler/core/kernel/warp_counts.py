"""Per-warp characteristics of a kernel graph, as functions of the loop variables.

Implements the counting of Gajger §4.4.3 and §5.2.3 and Volkov §3.6 (Table 3.2):

* ``cuda_core_instructions`` (Gajger INS_CUDA): instructions executed by the CUDA cores.
  Branch and exit instructions are counted here too, as both documents do (Gajger: "in this
  kernel everything except memory accesses is processed by CUDA cores"; Volkov §3.8 counts
  EXIT as a CUDA-core instruction). ``control_on_cuda_cores=False`` leaves them out.
* ``issued_instructions`` (INS_issued): issue events. Every instruction issues once, the
  second of a dual-issued pair (a ``dual`` edge) is free, and each reissue adds one:
  a global/local access touching k 128-byte lines is reissued k − 1 times (stride 2 → 1,
  stride 4 → 3, Gajger §4.4.3; a coalesced 64-bit access touches 2 lines and a 128-bit
  one 4, the separate 128-byte requests of each half- or quarter-warp the NVIDIA CUDA C
  Programming Guide describes for words of 8 and 16 bytes, Compute Capability 2.x/3.x
  "Global Memory", which 5.x and later follow), a shared access with an n-way bank conflict
  n − 1 times (Volkov §3.6; n = the access's wavefronts over those its width needs anyway,
  :func:`shared_conflict_ways`). Dual issues inside a loop are counted per iteration.
* ``gmem_bytes`` (GMem_bytes): DRAM bytes per warp. A warp access of ``width`` bytes per
  thread at ``stride`` elements moves ``warp_size × min(stride × width, segment)`` bytes
  (128 B coalesced for 4-byte words; 256 B at stride 2, Gajger §4.4.3 and Volkov Table
  3.4; a stride below 1, lanes sharing elements: that share of it, at least one segment),
  ``warp_size × segment`` for a random pattern and one segment for a broadcast,
  times (1 − hit ratio). Loads and stores are not distinguished (Gajger §4.4.3).
* ``l2_bytes``: the bytes per warp served by the L2 instead (the hit ratio's share of the
  same bytes less the L1's: reuse between neighbouring loads and across blocks,
  core.kernel.sass.reuse), the throughput worksheet's ``l2`` row.
* ``l1_bytes``: the bytes per warp the SM's L1 serves (``l1_hit_ratio``'s share: reuse
  within a block on a GPU whose L1 caches the load, set at launch time by
  core.kernel.sass.reuse), the worksheet's ``l1`` row.
* ``l1_wavefronts``: the cycles per warp the L1's data stage takes for the global and local
  requests, hits and misses alike: one per 128-byte line a request touches (the lines of
  :func:`lines_touched`; the worksheet's ``l1`` row on GPUs with an L1 data rate, Volta and
  later, core.models.throughput).
* ``lsu_instructions``: the global, local and shared-memory warp instructions, which the
  SM's load/store units execute (the worksheet's ``lsu`` row on Volta and later,
  core.models.throughput); a constant-bank load is not one (the constant cache serves it).
* ``gmem_accesses``: global and local warp accesses (``memory_instructions`` also counts
  shared and constant-bank ones; a constant load is served by the constant cache and
  never reaches global memory, NVIDIA CUDA C++ Programming Guide, "Constant Memory").
* ``smem_bank_cycles``: shared-memory accesses weighted by their wavefronts (Volkov §3.6:
  a warp access with an n-way conflict holds the banks n cycles). An instruction's
  ``bank_conflict_degree`` is its wavefronts per request, the cycles of the 32 banks of 4
  bytes it takes (core.kernel.sass.warp_access.shared_wavefronts): for a 32-bit access the
  n of an n-way conflict, for a 64-bit access at least 2 and a 128-bit one at least 4
  (256 and 512 bytes at 128 bytes per clock), fewer when lanes share words (broadcast).
* ``sfu_instructions``, ``fp64_instructions``, ``memory_instructions``, ``dual_issues``,
  ``reissues``, ``instructions``.
* ``fp32_instructions``, ``int32_instructions``, ``fp16_instructions``,
  ``tensor_instructions``: the instructions of each issue pipe of Volta and later
  (:func:`gpumodeler.core.kernel.opcodes.pipe_of` of the opcode's classification; an
  instruction whose unit was set by hand to something its opcode is not classified as goes
  by its unit, a CUDA-core one to ``fp32``). Branch, barrier and exit instructions are in no
  pipe: on Volta and later they cost issue slots only (docs/pipes.md).

* ``tensor_macs_<class>`` (one per :data:`gpumodeler.core.kernel.mma.TENSOR_CLASSES`):
  tensor-core multiply-adds per warp of each data-type class, from the shape the SASS
  mnemonic gives (:func:`gpumodeler.core.kernel.mma.decode_mma`: M·N·K per warp for
  ``mma.sync``, a quarter of it for a warpgroup ``wgmma``). A tensor instruction whose
  shape SASS does not show (Blackwell ``UTC*MMA``) counts as an instruction only.

Each count is a linear form in the products of enclosing loops' iteration counts: an
instruction inside loop ``a`` counts ``a`` times (Gajger: INS_CUDA = 23 + 4a).
A guard (:mod:`gpumodeler.core.kernel.sass.guards`) is one more factor, its fraction: an
instruction under guard ``g`` inside loop ``a`` counts ``a·g`` times (a ``predicate``
guard only in the data counts, :data:`DATA_COUNTS`).
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from itertools import compress
import math
from operator import attrgetter

import numpy as np

from gpumodeler.core.errors import ExpressionError
from gpumodeler.core.kernel.graph import KernelGraph
from gpumodeler.core.kernel.graph_items import Instruction
from gpumodeler.core.kernel.item_table import columns, item_at, kind_codes, values_of
from gpumodeler.core.kernel.mma import TENSOR_CLASSES, decode_mma
from gpumodeler.core.kernel.opcodes import OpcodeInfo, classify, pipe_of
from gpumodeler.core.kernel.sass.addresses import ideal_wavefronts

COUNT_NAMES: tuple[str, ...] = (
    "instructions", "cuda_core_instructions", "issued_instructions", "dual_issues", "reissues",
    "memory_instructions", "gmem_accesses", "gmem_bytes", "l2_bytes", "l1_bytes", "l1_wavefronts",
    "smem_accesses", "smem_bank_cycles", "lsu_instructions",
    "sfu_instructions", "fp64_instructions",
    "fp32_instructions", "int32_instructions", "fp16_instructions", "tensor_instructions",
)
#: Tensor-core data-type class -> the count of its multiply-adds per warp (tensor-core row).
TENSOR_MAC_COUNT_NAMES = {cls: f"tensor_macs_{cls}" for cls in TENSOR_CLASSES}
COUNT_NAMES = COUNT_NAMES + tuple(TENSOR_MAC_COUNT_NAMES.values())
#: Pipe -> the count of its instructions (the pipes the throughput worksheet splits).
PIPE_COUNT_NAMES = {"fp32": "fp32_instructions", "int32": "int32_instructions",
                    "fp16": "fp16_instructions", "tensor": "tensor_instructions"}


def instruction_pipe(ins) -> str:
    """The issue pipe of a graph instruction (one of opcodes.PIPES)."""
    info = classify(ins.opcode)
    if info is None or info.unit != ins.unit:
        info = OpcodeInfo(ins.unit)
    return pipe_of(info)


def access_bytes_per_warp(width_bytes: int, stride: float, pattern: str, segment_bytes: int,
                          warp_size: int = 32) -> float:
    """Bytes moved between DRAM and the SM by one warp-wide access (before cache hits).

    A stride below 1 element is a warp whose lanes share elements (a block narrower than a
    warp whose address ignores ``tid.x``: each row of lanes on one word): it moves that share
    of a coalesced access's bytes, at least one transaction of ``segment_bytes`` (a warp's
    request is served in whole sectors, NVIDIA CUDA C++ Best Practices Guide, "Coalesced
    Access to Global Memory"), not one element per lane."""
    if pattern == "broadcast":
        return float(max(segment_bytes, width_bytes))
    if pattern == "random":
        return float(warp_size * max(segment_bytes, width_bytes))
    per_lane = min(stride * width_bytes, segment_bytes)
    if stride < 1:
        return float(max(segment_bytes, warp_size * per_lane))
    return float(warp_size * max(per_lane, width_bytes))


def request_lines(ins, warp_size: int = 32) -> float:
    """The 128-byte lines one warp-wide request of global/local access ``ins`` touches: the
    launch's count where the block's shape set one (``lines_per_request``, a block narrower
    than a warp), else :func:`lines_touched` of its stride and pattern (lanes along x)."""
    return ins.lines_per_request or lines_touched(ins.width_bytes, ins.stride, ins.pattern,
                                                  warp_size)


def lines_touched(width_bytes: int, stride: float, pattern: str, warp_size: int = 32) -> int:
    """128-byte lines a warp access touches (each one beyond the first is a reissue)."""
    if pattern == "broadcast":
        return 1
    if pattern == "random":
        return warp_size
    return int(max(1, min(warp_size, math.ceil(warp_size * stride * width_bytes / 128.0))))


def shared_conflict_ways(ins) -> int:
    """The n of a shared-memory access's n-way bank conflict: its wavefronts per request
    (``bank_conflict_degree``) over those a conflict-free access of its width takes, rounded
    up (1 for an ``LDS.128`` of consecutive float4s or a row broadcast, 2 for an ``LDS.64``
    of every other double). For a 32-bit access, its ``bank_conflict_degree``."""
    return max(1, math.ceil(ins.bank_conflict_degree / ideal_wavefronts(ins.width_bytes)))


def access_cost(ins, warp_size: int = 32) -> dict | None:
    """What one warp-wide request of a load/store costs (None for other instructions):
    ``sectors_per_request`` (DRAM transactions of ``segment_bytes``: 32-byte sectors by
    default; NVIDIA CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory"),
    ``lines_per_request`` (128-byte lines), ``bytes_per_warp`` (the bytes it moves from
    DRAM, after cache hits, as ``gmem_bytes`` counts them), ``l2_bytes_per_warp`` (the
    bytes the L2 serves instead, as ``l2_bytes`` counts them), ``l1_bytes_per_warp`` (the
    bytes the L1 serves, as ``l1_bytes`` counts them), ``bank_conflict_degree`` (shared
    memory: the request's wavefronts, the bank cycles the worksheet's shared-memory row
    counts) and ``bank_conflict_ways`` (shared memory: the n of its n-way conflict,
    :func:`shared_conflict_ways`). Shared and constant-bank accesses move no DRAM bytes."""
    if ins.unit != "ldst":
        return None
    out = {"sectors_per_request": 0.0, "lines_per_request": 0, "bytes_per_warp": 0.0,
           "l2_bytes_per_warp": 0.0, "l1_bytes_per_warp": 0.0, "bank_conflict_degree": None,
           "bank_conflict_ways": None}
    if ins.space in ("global", "local"):
        nbytes = access_bytes_per_warp(ins.width_bytes, ins.stride, ins.pattern,
                                       ins.segment_bytes, warp_size)
        out.update(sectors_per_request=nbytes / ins.segment_bytes,
                   lines_per_request=request_lines(ins, warp_size),
                   bytes_per_warp=nbytes * (1.0 - ins.hit_ratio),
                   l2_bytes_per_warp=nbytes * (ins.hit_ratio - ins.l1_hit_ratio),
                   l1_bytes_per_warp=nbytes * ins.l1_hit_ratio)
    elif ins.space == "shared":
        out["bank_conflict_degree"] = ins.bank_conflict_degree
        out["bank_conflict_ways"] = shared_conflict_ways(ins)
    return out


def access_costs(graph, warp_size: int = 32) -> list:
    """Each load/store of ``graph`` in program order, as ``{"id", "opcode", "space",
    "address"}`` followed by its :func:`access_cost`: what ``graph --json`` lists as
    ``memory_accesses``.

    The cost depends only on what an instruction shares with others of its kind (not its
    id, label, position or address), so it is worked out once per kind
    (:func:`~gpumodeler.core.kernel.item_table.kind_codes`), and the ids and addresses are
    read as columns: a graph read from a file makes no instruction object for it (10^5
    instructions: 0.15 s less)."""
    table = graph.instructions
    codes, firsts = kind_codes(table, _kind_of)
    instruction_at = item_at(table)
    per_kind = [access_cost(instruction_at(k), warp_size) for k in firsts]
    ids, opcodes, spaces, addresses = columns(table, ("id", "opcode", "space", "address"))
    return [{"id": ids[i], "opcode": opcodes[i], "space": spaces[i], "address": addresses[i],
             **cost}
            for i, cost in zip(range(len(ids)), map(per_kind.__getitem__, codes.tolist()))
            if cost is not None]


@dataclass(frozen=True)
class WarpCounts:
    """Per-warp counts as linear forms: ``forms[name]`` is ``{monomial: coefficient}`` with
    monomial a tuple of loop ids (``()`` is the constant term)."""

    forms: dict
    iterations: dict  # loop id -> Expression

    def evaluate(self, values: dict | None = None) -> dict:
        """Numbers (or broadcast arrays) for every count at the given variable values."""
        values = values or {}
        loops = {}
        for lid, expr in self.iterations.items():
            v = expr.evaluate(values)
            if np.any(np.asarray(v) < 0):
                raise ExpressionError(f"loop {lid}: iteration count {expr.text} is negative; it must be >= 0")
            loops[lid] = v
        out = {}
        for name, form in self.forms.items():
            total = 0.0
            for mono, coef in form.items():
                term = coef
                for lid in mono:
                    term = term * loops[lid]
                total = total + term
            out[name] = total
        return out

    def formula(self, name: str) -> str:
        """e.g. ``23 + 4·a``."""
        form = self.forms[name]
        parts = []
        for mono, coef in sorted(form.items(), key=lambda kv: (len(kv[0]), kv[0])):
            c = int(coef) if float(coef).is_integer() else coef
            if not mono:
                parts.append(f"{c}")
                continue
            factor = "·".join(self.iterations[l].text if self.iterations[l].text.isidentifier()
                              or self.iterations[l].is_constant else f"({self.iterations[l].text})"
                              for l in mono)
            parts.append(factor if c == 1 else f"{c}·{factor}")
        return " + ".join(parts) if parts else "0"


def tensor_macs(opcode: str):
    """(count name, multiply-adds per warp) of a tensor-core opcode, or None when its shape
    or class is not in the mnemonic (core.kernel.mma)."""
    work = decode_mma(opcode)
    if work is not None and work.macs_per_warp is not None and work.tensor_class is not None:
        return TENSOR_MAC_COUNT_NAMES[work.tensor_class], work.macs_per_warp
    return None


def count(graph: KernelGraph, warp_size: int = 32, control_on_cuda_cores: bool = True) -> WarpCounts:
    """Count the per-warp characteristics of ``graph`` (see the module docstring).

    What an instruction adds to each count depends only on its attributes other than its id,
    label and position, so it is worked out once per distinct kind of instruction
    (:func:`instruction_counts`); the sums per monomial are then one ``np.bincount`` per
    count over the instructions in program order, which adds in the same order as adding
    one instruction after the other would (the same floats, the same order of monomials)."""
    # an instruction's monomial: the loops containing it, outermost first; one tuple per
    # innermost loop, built from its parent's (linear in instructions + loops)
    nesting = graph.nesting()
    chain: dict[str | None, tuple[str, ...]] = {None: ()}
    for lid in sorted(nesting.depth, key=nesting.depth.__getitem__):
        chain[lid] = chain[nesting.parent[lid]] + (lid,)
    monos = list(chain.values())
    mono_index = {lid: k for k, lid in enumerate(chain)}
    innermost = nesting.innermost.get
    cuda_units = {"cuda_core"} | ({"branch", "exit"} if control_on_cuda_cores else set())

    # one number per kind of instruction (kind_codes: numbered by the reader for a graph read
    # from a file, else one signature per instruction, hashed once), what a kind adds worked
    # out on its first instruction
    instructions = graph.instructions
    codes, firsts = kind_codes(instructions, _kind_of)
    instruction_at = item_at(instructions)
    per_kind = [instruction_counts(instruction_at(k), warp_size, cuda_units) for k in firsts]
    region_of: dict = {}
    if graph.guards:
        monos, mono_of, mono_data, region_of = _guarded_monomials(graph, chain, innermost)
    else:
        mono_of = np.fromiter(map(mono_index.__getitem__, map(innermost, instructions)),
                              dtype=np.intp, count=len(instructions))
        mono_data = mono_of
    forms = {name: _sums(name, per_kind, codes, mono_data if name in DATA_COUNTS else mono_of,
                         monos) for name in COUNT_NAMES}

    def add(name, mono, amount):
        if amount:
            forms[name][mono] = forms[name].get(mono, 0.0) + amount

    kinds = columns(graph.edges, ("kind",))[0]
    if "dual" in set(kinds):
        weight = {nid: chain[innermost(nid)] + region_of.get(nid, ()) for nid in instructions}
        duals = list(compress(graph.edges, map("dual".__eq__, kinds)))  # their ids
        for src, dst in zip(values_of(graph.edges, "src", duals),
                            values_of(graph.edges, "dst", duals)):
            # the pair issues once: charge it where both instructions execute together
            mono = weight[dst] if len(weight[dst]) <= len(weight[src]) else weight[src]
            add("dual_issues", mono, 1)
            add("issued_instructions", mono, -1)
    iterations = {lid: lp.iterations for lid, lp in graph.loops.items()}
    iterations.update((gid, g.fraction) for gid, g in graph.guards.items())
    return WarpCounts(forms={k: {m: c for m, c in v.items() if c} for k, v in forms.items()},
                      iterations=iterations)


#: The counts of data moved: a predicated-off thread moves none, though its warp still
#: issues the instruction (a ``predicate`` guard scales these only).
DATA_COUNTS = frozenset({"gmem_bytes", "l2_bytes", "l1_bytes", "l1_wavefronts",
                         "smem_accesses", "smem_bank_cycles", "lsu_instructions"})


def _guarded_monomials(graph, chain, innermost):
    """Monomials with guards (:class:`~gpumodeler.core.kernel.graph_items.Guard`): an
    instruction's loops, outermost first, then the guards it is under, each a factor (its
    fraction) as a loop's iteration count is. ``region`` guards scale every count,
    ``predicate`` guards only :data:`DATA_COUNTS`. Returns (monomials, each instruction's
    index for all counts, its index for the data counts, instruction -> region guards)."""
    region_of: dict = {}
    pred_of: dict = {}
    for g in graph.guards.values():
        target = region_of if g.kind == "region" else pred_of
        for m in g.members:
            target[m] = target.get(m, ()) + (g.id,)
    monos: list = []
    index: dict = {}

    def at(key):
        k = index.get(key)
        if k is None:
            k = index[key] = len(monos)
            monos.append(chain[key[0]] + key[1])
        return k

    n = len(graph.instructions)
    mono_of = np.empty(n, dtype=np.intp)
    mono_data = np.empty(n, dtype=np.intp)
    for i, nid in enumerate(graph.instructions):
        loop, region = innermost(nid), region_of.get(nid, ())
        mono_of[i] = at((loop, region))
        mono_data[i] = at((loop, region + pred_of.get(nid, ()))) if nid in pred_of else mono_of[i]
    return monos, mono_of, mono_data, region_of


#: the attributes that decide what an instruction counts (all but id, label, position and
#: the address text)
_kind_of = attrgetter(*(f.name for f in fields(Instruction)
                        if f.name not in ("id", "label", "x", "y", "address")))


def instruction_counts(ins, warp_size: int, cuda_units) -> dict:
    """What one instruction adds to each count: ``{count name: amount}`` for the counts it
    adds to (an amount may sum to 0), in the order it adds to them."""
    out: dict = {}

    def add(name, amount):
        if amount:
            out[name] = out.get(name, 0.0) + amount

    if ins.unit == "virtual":
        return out
    add("instructions", 1)
    add("issued_instructions", 1)
    pipe_count = PIPE_COUNT_NAMES.get(instruction_pipe(ins))
    if pipe_count is not None:
        add(pipe_count, 1)
    if ins.unit == "tensor":
        macs = tensor_macs(ins.opcode)
        if macs is not None:
            add(*macs)
    if ins.unit in cuda_units:
        add("cuda_core_instructions", 1)
    elif ins.unit == "sfu":
        add("sfu_instructions", 1)
    elif ins.unit == "fp64":
        add("fp64_instructions", 1)
    elif ins.unit == "ldst":
        add("memory_instructions", 1)
        if ins.space in ("global", "local"):
            nbytes = access_bytes_per_warp(ins.width_bytes, ins.stride, ins.pattern,
                                           ins.segment_bytes, warp_size)
            add("gmem_accesses", 1)
            add("gmem_bytes", nbytes * (1.0 - ins.hit_ratio))
            add("l2_bytes", nbytes * (ins.hit_ratio - ins.l1_hit_ratio))
            add("l1_bytes", nbytes * ins.l1_hit_ratio)
            lines = request_lines(ins, warp_size)
            add("l1_wavefronts", lines)
            add("lsu_instructions", 1)
            extra = lines - 1
        elif ins.space == "shared":
            add("smem_accesses", 1)
            add("lsu_instructions", 1)
            add("smem_bank_cycles", ins.bank_conflict_degree)
            extra = shared_conflict_ways(ins) - 1
        else:
            extra = 0
        add("reissues", extra)
        add("issued_instructions", extra)
    return out


def _sums(name, per_kind, codes, mono_of, monos) -> dict:
    """``{monomial: sum}`` of one count over the instructions, monomials in the order of the
    first instruction adding to them.

    An instruction's amount is the sum of its adds; summing per instruction first and then in
    program order gives the floats of adding each amount in turn because only ``gmem_bytes``,
    ``l2_bytes`` and ``l1_bytes`` have non-integer amounts and each gets one add per
    instruction (integers below 2**53 add exactly in any grouping). A new count with several
    non-integer adds per instruction would need its own sequential sum."""
    if not any(name in amounts for amounts in per_kind):
        return {}
    touches = np.array([name in amounts for amounts in per_kind])[codes]
    amount = np.array([amounts.get(name, 0.0) for amounts in per_kind], dtype=float)[codes]
    which = np.flatnonzero(touches)
    where = mono_of[which]
    totals = np.bincount(where, weights=amount[which], minlength=len(monos))
    present, first = np.unique(where, return_index=True)
    in_order = present[np.argsort(first, kind="stable")]
    return {monos[k]: v for k, v in zip(in_order.tolist(), totals[in_order].tolist())}
