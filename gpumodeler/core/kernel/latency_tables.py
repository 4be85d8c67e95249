"""Per-architecture latency tables for the kernel execution graph (latency bound).

Sources, reproduced value for value:

* Gajger 2017, Table 4.1 (instruction latencies, after Andersch et al. and Volkov) and
  Table 4.2 (memory access latencies) for Tesla GT200, Fermi GF106, Kepler GK104 and
  Maxwell GM107, in cycles. "N/A" in the thesis is ``None`` here (unknown). Gajger §4.4.2
  assumes ``mov`` and ``setp`` take the basic CUDA-core latency, derives the Maxwell branch
  latencies (12 taken / 10 not taken) and assumes a 3-cycle Maxwell ILP latency; those
  values are in his tables and kept with that note.
* Volkov 2016, Table 6.2 (register-dependency latencies measured on 8800GTX, GTX280,
  GTX480, GTX680, GTX980: add, SFU, smem, smem2, stream, random) plus the latencies in
  §3.7–3.8 (ILP latency: Fermi 6, Kepler 3, Maxwell trivial; branch on Fermi 32/28;
  barrier 34; block replacement 201 on Kepler). Volkov treats every non-memory instruction
  as a CUDA-core instruction with the ``add`` latency (§3.8), recorded here as
  ``cuda_core_default`` with that provenance; Gajger's tables have no such default.

These are core's reference copy of the documents' tables. The device database holds the
same tables (resources/devices/latency-documents.json, kind ``latency_table``, with each
value's table and row) plus published tables for newer GPUs and users' own; a test keeps
the two copies equal, and the CLI looks up a key that is not here in the database.

A value nobody measured stays ``None``; the graph analysis then asks for an explicit latency
on the edge instead of borrowing one from another architecture.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from gpumodeler.core.errors import GraphError

#: Instruction latency classes (Gajger Table 4.1 rows, plus Volkov's SFU and FP64, plus the
#: rows the Volta-and-later tables need: packed half precision, tensor-core MMA, type
#: conversions and warp shuffles).
INSTRUCTION_CLASSES = (
    "int_add", "int_mad", "int_mul", "int_div", "int_rem", "logic", "shift",
    "fp32_add", "fp32_mad", "fp32_mul", "fp32_div", "mov", "setp", "sfu", "fp64",
    "fp16", "tensor", "conversion", "shuffle",
    *(f"tensor_n{n}" for n in (8, 16, 32, 64, 128, 256)),
)
#: Warpgroup MMA (wgmma, SASS ``*GMMA.64xNxK``) latency by the shape's N: rows
#: ``tensor_n<N>``. Their latency grows with N (Luo et al. 2025, Table 9, H800: 18 cycles at
#: N = 8 to 128 at N = 256), so one figure cannot serve every shape.
TENSOR_N_ROWS = (8, 16, 32, 64, 128, 256)
#: Memory levels (Gajger Table 4.2 rows; Volkov's stream/random/smem/smem2).
MEMORY_LEVELS = ("dram", "dram_random", "l2", "l1", "shared", "shared_2way", "constant")


@dataclass(frozen=True)
class LatencyTable:
    """Latencies in cycles for one architecture. ``None`` = unknown."""

    key: str
    name: str
    architecture: str
    source: str
    instruction_cycles: dict = field(default_factory=dict)
    memory_cycles: dict = field(default_factory=dict)
    ilp_cycles: float | None = None
    branch_taken_cycles: float | None = None
    branch_not_taken_cycles: float | None = None
    barrier_cycles: float | None = None
    block_replacement_cycles: float | None = None
    cuda_core_default_cycles: float | None = None
    notes: tuple = ()

    def instruction(self, latency_class: str) -> float:
        """Latency of an instruction class; raises GraphError when the table has none."""
        value = self.instruction_cycles.get(latency_class)
        if value is None and latency_class not in ("sfu", "fp64") \
                and not latency_class.startswith("tensor_n"):
            value = self.cuda_core_default_cycles
        if value is None:
            known = ", ".join(k for k, v in self.instruction_cycles.items() if v is not None)
            raise GraphError(
                f"latency table '{self.key}' has no latency for instruction class "
                f"'{latency_class}' (it has: {known}); give the edge an explicit latency")
        return value

    def wgmma(self, n: int) -> float | None:
        """Latency of a warpgroup MMA of shape N (``tensor_n<N>`` rows), None when the table
        has no such rows. Between two rows the latency is interpolated linearly in N (the
        rows from N = 64 up are N / 2 exactly); below the first or above the last, the
        nearest row. A choice: the source measured powers of two only."""
        rows = sorted((m, self.instruction_cycles[f"tensor_n{m}"]) for m in TENSOR_N_ROWS
                      if self.instruction_cycles.get(f"tensor_n{m}") is not None)
        if not rows:
            return None
        if n <= rows[0][0]:
            return float(rows[0][1])
        for (n0, c0), (n1, c1) in zip(rows, rows[1:]):
            if n <= n1:
                return float(c0 + (c1 - c0) * (n - n0) / (n1 - n0))
        return float(rows[-1][1])

    def memory(self, level: str) -> float:
        value = self.memory_cycles.get(level)
        if value is None:
            known = ", ".join(k for k, v in self.memory_cycles.items() if v is not None)
            raise GraphError(
                f"latency table '{self.key}' has no latency for memory level '{level}' "
                f"(it has: {known}); give the edge an explicit latency")
        return value

    def _need(self, attr: str, what: str) -> float:
        value = getattr(self, attr)
        if value is None:
            raise GraphError(
                f"latency table '{self.key}' has no {what} latency; give the edge an explicit latency")
        return value

    def ilp(self) -> float:
        return self._need("ilp_cycles", "ILP (issue spacing)")

    def branch(self, taken: bool) -> float:
        if taken:
            return self._need("branch_taken_cycles", "taken-branch")
        return self._need("branch_not_taken_cycles", "not-taken-branch")

    def barrier(self) -> float:
        return self._need("barrier_cycles", "barrier")

    def block_replacement(self) -> float:
        return self._need("block_replacement_cycles", "block replacement")


_GAJGER = "Gajger 2017, Tables 4.1–4.2 (after Andersch et al. 2015 and Volkov 2016)"


def _gajger(key, name, arch, col, ilp, bt, bnt, repl, mem, notes=()):
    rows = {  # Table 4.1, columns GT200, GF106, GK104, GM107
        "int_add": (24, 16, 9, 6), "int_mad": (120, 22, 9, 13), "int_mul": (96, 20, 9, 13),
        "int_div": (684, 322, 168, 243), "int_rem": (784, 315, 163, 232),
        "logic": (24, 16, 9, 6), "shift": (24, 18, 9, 6), "fp32_add": (24, 16, 9, 6),
        "fp32_mad": (24, 18, 9, 6), "fp32_mul": (24, 16, 9, 6),
        "fp32_div": (137, 1038, 758, 374), "mov": (24, 16, 9, 6), "setp": (24, 16, 9, 6),
    }
    return LatencyTable(
        key=key, name=name, architecture=arch, source=_GAJGER,
        instruction_cycles={k: v[col] for k, v in rows.items()},
        memory_cycles=mem, ilp_cycles=ilp, branch_taken_cycles=bt,
        branch_not_taken_cycles=bnt, block_replacement_cycles=repl, notes=tuple(notes))


_VOLKOV = "Volkov 2016, Table 6.2 and §3.7–3.8"


def _volkov(key, name, arch, add, sfu, smem, smem2, stream, random, ilp=None, bt=None,
            bnt=None, barrier=None, repl=None, notes=()):
    return LatencyTable(
        key=key, name=name, architecture=arch, source=_VOLKOV,
        instruction_cycles={"fp32_add": add, "sfu": sfu},
        memory_cycles={"dram": stream, "dram_random": random, "shared": smem, "shared_2way": smem2},
        ilp_cycles=ilp, branch_taken_cycles=bt, branch_not_taken_cycles=bnt,
        barrier_cycles=barrier, block_replacement_cycles=repl, cuda_core_default_cycles=add,
        notes=("every non-memory instruction other than SFU takes the 'add' latency (Volkov §3.8)",
               *notes))


TABLES: dict[str, LatencyTable] = {t.key: t for t in (
    _gajger("gt200-gajger", "Tesla GT200 (Gajger)", "Tesla", 0, None, None, None, None,
            {"dram": 440, "shared": 38}),
    _gajger("fermi-gajger", "Fermi GF106 (Gajger)", "Fermi", 1, None, 32, 28, None,
            {"dram": 685, "l2": 310, "l1": 45, "shared": 50}),
    _gajger("kepler-gajger", "Kepler GK104 (Gajger)", "Kepler", 2, 3, 18, 15, 201,
            {"dram": 300, "l2": 175, "l1": 30, "shared": 33},
            notes=("ASSUMPTION: branch 18/15 by Gajger's own rule (§4.4.2: a taken branch takes "
                   "twice the CUDA-core latency, 2 x 9; not taken 28/32 of taken, rounded down, "
                   "as Volkov measured on Fermi, §3.7 — the rule that gives his Maxwell 12/10); "
                   "Table 4.1 has N/A",)),
    _gajger("maxwell-gajger", "Maxwell GM107 (Gajger)", "Maxwell", 3, 3, 12, 10, 150,
            {"dram": 350, "l2": 194, "shared": 28},
            notes=("branch 12/10 derived by Gajger as twice the CUDA-core latency (§4.4.2)",
                   "ILP latency 3 assumed equal to Kepler's (§4.4.2)")),
    _volkov("g80-volkov", "G80 / 8800GTX (Volkov)", "Tesla", 20, 32, 38, 54, 444, 644),
    _volkov("gt200-volkov", "GT200 / GTX280 (Volkov)", "Tesla", 24, 34, 40, 56, 434, 662),
    _volkov("fermi-volkov", "Fermi / GTX480 (Volkov)", "Fermi", 18, 22, 26, 58, 513, 1571,
            ilp=6, bt=32, bnt=28, barrier=34,
            notes=("Fermi ILP latency 6 (Listing 3.2); branch 32/28 and barrier 34 (§3.7)",)),
    _volkov("kepler-volkov", "Kepler / GTX680 (Volkov)", "Kepler", 9, 9, 24, 56, 301, 1213,
            ilp=3, repl=201, notes=("ILP 3 and block replacement 201 cycles (§3.8)",)),
    _volkov("maxwell-volkov", "Maxwell / GTX980 (Volkov)", "Maxwell", 6, 13, 24, 26, 368, 534,
            ilp=1, notes=("ILP latency is trivial on Maxwell (§3.7): one issue cycle",
                          "SFU->CUDA-core 9 and LDS->CUDA-core 22 cycles (§4.7); the table "
                          "keeps the same-type values 13 and 24")),
)}


def get_table(key: str) -> LatencyTable:
    """The built-in table ``key``; raises GraphError listing the valid keys."""
    try:
        return TABLES[key]
    except KeyError:
        raise GraphError(f"unknown latency table {key!r}; valid: {', '.join(TABLES)}") from None


def choose_table(pinned: str | None, gpu_table: str | None, graph_table: str | None,
                 architecture_of=None) -> tuple[str | None, str]:
    """The latency table a kernel graph is evaluated with on a GPU, and where the choice came
    from: the table the user pinned; else the target GPU's own (its latencies are the ones
    the prediction is about: a graph drawn for Maxwell, evaluated on a Kepler K40, takes
    Kepler's latencies, Gajger Table 4.1); else, on a GPU that names none, the graph's own.

    One exception, a choice: when ``architecture_of`` (key -> architecture name) says the
    graph's table is of the GPU's table's architecture, the graph's is kept: both describe
    the same hardware, and the graph's was chosen for its instruction set (an sm_52 listing
    names ``maxwell-published``, whose SFU and conversion latencies the GTX 970's
    ``maxwell-gajger`` lacks).

    Returns ``(key, origin)``, origin ``"pinned"``, ``"gpu"``, ``"graph-same-architecture"``,
    ``"graph"`` or ``"none"``."""
    if pinned:
        return pinned, "pinned"
    if gpu_table and graph_table and graph_table != gpu_table and architecture_of is not None:
        arch = architecture_of(gpu_table)
        if arch and architecture_of(graph_table) == arch:
            return graph_table, "graph-same-architecture"
    if gpu_table:
        return gpu_table, "gpu"
    if graph_table:
        return graph_table, "graph"
    return None, "none"
