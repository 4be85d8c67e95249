"""The items of a kernel execution graph: instructions (nodes), edges and loops, each a value
validated when made (:mod:`gpumodeler.core.kernel.graph` has the graph, the meaning of the edge
kinds and the loops; :mod:`gpumodeler.core.kernel.kernel_format` the file format).
"""
from __future__ import annotations

from dataclasses import dataclass
import math

from gpumodeler.core.errors import GraphError, shown
from gpumodeler.core.finite import is_finite_number
from gpumodeler.core.kernel.expressions import Expression, parse
from gpumodeler.core.kernel.latency_tables import MEMORY_LEVELS, INSTRUCTION_CLASSES
from gpumodeler.core.kernel.opcodes import SPACES, UNITS, classify

EDGE_KINDS = ("ilp", "dual", "dependency", "memory", "branch", "barrier", "replacement")
#: The longest latency an edge may carry, in cycles: 10^9 cycles is about a second of an SM's
#: clock, a million times the slowest memory access; a longer one is a typo, and one near
#: 1e308 would make the latency bound (a sum of latencies) infinite.
MAX_EDGE_LATENCY_CYCLES = 1e9
ACCESS_PATTERNS = ("strided", "random", "broadcast")
_TEXT = {str}


@dataclass(frozen=True, slots=True)
class Instruction:
    """One SASS instruction of a warp.

    ``unit``/``latency_class``/``space``/``is_load`` default from the opcode
    (:func:`gpumodeler.core.kernel.opcodes.classify`) and may be set explicitly for opcodes the
    classifier does not know. Memory attributes (``ldst`` unit only): ``memory_level`` picks
    the latency-table row (default ``dram`` for global/local, ``shared`` for shared);
    ``width_bytes`` per thread, ``stride`` in elements between consecutive threads (a
    stride below 1: lanes share elements, the warp moves ``stride`` of a coalesced access's
    bytes, e.g. two half-warps each on one word),
    ``pattern`` (strided, random, broadcast), ``hit_ratio`` of cache hits (these bytes do not
    reach DRAM), ``segment_bytes`` the DRAM transaction size, and for shared memory
    ``bank_conflict_degree`` (1 = no conflict); ``address`` the address as the SASS import
    followed it (text, :mod:`gpumodeler.core.kernel.sass.addresses`; empty when unknown).
    ``l1_hit_ratio``: the share of the access's bytes the SM's L1 serves (a part of
    ``hit_ratio``'s share, the rest of which the L2 serves); a launch-time value set by
    :func:`gpumodeler.core.kernel.sass.reuse.reuse_graph` for a GPU whose L1 caches the load,
    never read from or written to a file (0 in every stored graph). ``lines_per_request``:
    the 128-byte lines a warp's request touches where the block's shape decides them (a block
    narrower than a warp: its lanes in two or more rows), the mean over the block's warps; a
    launch-time value set by :func:`gpumodeler.core.kernel.sass.launch_shape.shaped_graph`,
    never in a file; 0 = from ``stride`` and ``pattern`` (lanes along x).
    """

    id: str
    opcode: str
    unit: str = ""
    latency_class: str | None = None
    space: str | None = None
    is_load: bool = False
    label: str = ""
    memory_level: str | None = None
    width_bytes: int = 4
    stride: float = 1.0
    pattern: str = "strided"
    hit_ratio: float = 0.0
    segment_bytes: int = 32
    bank_conflict_degree: int = 1
    x: float = 0.0
    y: float = 0.0
    # last, so that readers building an Instruction from positional columns written before
    # it existed (project files) still line up
    address: str = ""
    # launch-time only (see the docstring): after the address, so positional readers of
    # stored graphs, which end at the address, leave it at its default
    l1_hit_ratio: float = 0.0
    lines_per_request: float = 0.0

    @classmethod
    def make(cls, id: str, opcode: str, **kw) -> "Instruction":
        """An instruction with unit, latency class and space filled from the opcode."""
        info = classify(opcode)
        if not kw.get("unit"):
            if info is None:
                raise GraphError(
                    f"instruction {id}: unknown opcode {opcode!r}; give its unit explicitly "
                    f"(one of {', '.join(UNITS)})", item=id)
            kw["unit"] = info.unit
            kw.setdefault("latency_class", info.latency_class)
            kw.setdefault("space", info.space)
            kw.setdefault("is_load", info.is_load)
        return cls(id=id, opcode=opcode, **kw).checked()

    def checked(self) -> "Instruction":
        """Validate attribute values; returns self or raises GraphError."""
        def bad(msg):
            raise GraphError(f"instruction {self.id} ({self.opcode}): {msg}", item=self.id)
        if not self.id:
            bad("id must not be empty")
        for name in ("stride", "hit_ratio", "l1_hit_ratio", "lines_per_request", "x", "y"):
            value = getattr(self, name)
            if not is_finite_number(value):
                bad(f"{name} must be a finite number, got {shown(value)}")
        for name in ("label", "opcode", "address"):
            if not isinstance(getattr(self, name), str):
                bad(f"{name} must be text, got {shown(getattr(self, name))}")
        if not isinstance(self.is_load, bool):
            bad(f"is_load must be true or false, got {shown(self.is_load)}")
        if self.unit not in UNITS:
            bad(f"unit {shown(self.unit)} is not one of {', '.join(UNITS)}")
        if self.latency_class is not None and self.latency_class not in INSTRUCTION_CLASSES:
            bad(f"latency class {shown(self.latency_class)} is not one of {', '.join(INSTRUCTION_CLASSES)}")
        if self.unit == "ldst" and self.space not in SPACES:
            bad(f"a load/store needs a state space, one of {', '.join(SPACES)}; got {shown(self.space)}")
        if self.memory_level is not None and self.memory_level not in MEMORY_LEVELS:
            bad(f"memory level {shown(self.memory_level)} is not one of {', '.join(MEMORY_LEVELS)}")
        if self.pattern not in ACCESS_PATTERNS:
            bad(f"access pattern {shown(self.pattern)} is not one of {', '.join(ACCESS_PATTERNS)}")
        if not (isinstance(self.width_bytes, int) and self.width_bytes in (1, 2, 4, 8, 16)):
            bad(f"access width must be 1, 2, 4, 8 or 16 bytes, got {shown(self.width_bytes)}")
        if not (math.isfinite(self.stride) and self.stride > 0):
            bad(f"stride must be a number > 0 elements (1 = coalesced; below 1: lanes share "
                f"elements), got {shown(self.stride)}")
        if not (0.0 <= self.hit_ratio <= 1.0):
            bad(f"cache hit ratio must be within 0..1, got {shown(self.hit_ratio)}")
        if not (0.0 <= self.lines_per_request <= 32.0):
            bad(f"lines per request must be within 0..32 (0: from the stride), got "
                f"{shown(self.lines_per_request)}")
        if not (0.0 <= self.l1_hit_ratio <= self.hit_ratio):
            bad(f"L1 hit ratio must be within 0..hit ratio ({self.hit_ratio:g}), got "
                f"{shown(self.l1_hit_ratio)}")
        if not (isinstance(self.segment_bytes, int) and self.segment_bytes in (32, 64, 128)):
            bad(f"memory transaction size must be 32, 64 or 128 bytes, got {shown(self.segment_bytes)}")
        if not (isinstance(self.bank_conflict_degree, int) and 1 <= self.bank_conflict_degree <= 32):
            bad(f"bank conflict degree must be an integer 1..32, got {shown(self.bank_conflict_degree)}")
        return self

    def latency_key(self) -> str:
        """Latency-table memory row for a load, else ''."""
        if self.memory_level:
            return self.memory_level
        return {"shared": "shared", "constant": "constant"}.get(self.space or "", "dram")


@dataclass(frozen=True, slots=True)
class Edge:
    id: str
    src: str
    dst: str
    kind: str
    latency: float | None = None
    taken: bool | None = None  # branch edges: None = taken iff the edge goes backwards

    def checked(self) -> "Edge":
        if self.kind not in EDGE_KINDS:
            raise GraphError(f"edge {self.id}: kind {shown(self.kind)} is not one of {', '.join(EDGE_KINDS)}",
                             item=self.id)
        if self.latency is not None:
            if not is_finite_number(self.latency):
                raise GraphError(f"edge {self.id}: latency must be a number of cycles, got "
                                 f"{shown(self.latency)}", item=self.id)
            if self.latency < 0:
                raise GraphError(f"edge {self.id}: latency must be >= 0 cycles, got {self.latency}",
                                 item=self.id)
            if self.latency > MAX_EDGE_LATENCY_CYCLES:
                raise GraphError(f"edge {self.id}: a latency of {self.latency:g} cycles is beyond "
                                 f"any instruction's; give at most {MAX_EDGE_LATENCY_CYCLES:.0e} "
                                 f"cycles", item=self.id)
        if self.taken is not None and not isinstance(self.taken, bool):
            raise GraphError(f"edge {self.id}: taken must be true, false or absent, got "
                             f"{shown(self.taken)}", item=self.id)
        if self.src == self.dst:
            raise GraphError(f"edge {self.id}: an edge from {self.src} to itself is a cycle; "
                             f"loop-carried latencies go from a later to an earlier instruction",
                             item=self.id)
        return self


@dataclass(frozen=True)
class Loop:
    id: str
    members: frozenset
    iterations: Expression
    name: str = ""

    @classmethod
    def make(cls, id: str, members, iterations, name: str = "") -> "Loop":
        if not members:
            raise GraphError(f"loop {id}: a loop needs at least one instruction", item=id)
        if not isinstance(members, (list, tuple, set, frozenset)) or not (
                set(map(type, members)) <= _TEXT or all(isinstance(m, str) for m in members)):
            raise GraphError(f"loop {id}: members must be a list of instruction ids, got "
                             f"{shown(members)}", item=id)
        return cls(id=id, members=frozenset(members), iterations=parse(iterations), name=name)


#: How a guard holds its instructions back: ``region`` (a conditional branch or EXIT skips
#: them: they are neither issued nor executed) or ``predicate`` (``@P0 X``: the warp issues X
#: either way, its threads move data only where P0 holds).
GUARD_KINDS = ("region", "predicate")


#: The variable of a guard that runs once per block (``tid.x == 0``): its fraction is
#: 1/warps_per_block (core.kernel.sass.guards), set from each launch's block.
WARPS_PER_BLOCK = "warps_per_block"


def guard_variables(graph) -> set:
    """The variables of ``graph`` that are a guard's share of the warps (``guard1``: its
    fraction is the variable alone), whoever sets them."""
    return {g.fraction.text.strip() for g in graph.guards.values()} & set(graph.variables)


#: the names a loop's trip count from the block reads: the launch's block dimensions
BLOCK_DIMENSIONS = ("block_x", "block_y", "block_z")
#: ... and from the grid (a grid-stride loop: core.kernel.sass.grid_stride)
GRID_DIMENSIONS = ("grid_x", "grid_y", "grid_z")


def check_block_trip(name, text, variables=()) -> str:
    """The formula ``text`` a launch gives the loop variable ``name`` (``floor(block_x /
    4)``; a grid-stride loop's reads the grid, ``grid_x``, and a kernel parameter, one of
    the graph's ``variables``), normalised; GraphError when it reads anything else."""
    from gpumodeler.core.errors import ExpressionError
    if not isinstance(name, str) or not name.isidentifier():
        raise GraphError(f"block_trips: a loop variable's name must be a name such as loop2, "
                         f"got {shown(name)}")
    valid = (f"a formula of {', '.join(BLOCK_DIMENSIONS + GRID_DIMENSIONS)} and the graph's "
             f"other variables (e.g. floor(block_x / 4))")
    try:
        expr = parse(text)
    except ExpressionError as exc:
        raise GraphError(f"block_trips: {name} must be {valid}: {exc}", item=name) from None
    allowed = set(BLOCK_DIMENSIONS) | set(GRID_DIMENSIONS) | (set(variables) - {name})
    if expr.variables - allowed:
        raise GraphError(f"block_trips: {name} must be {valid}, got {shown(text)} (unknown: "
                         f"{', '.join(sorted(expr.variables - allowed))})", item=name)
    return expr.text


def block_set_variables(graph) -> set:
    """The variables of ``graph`` each launch sets from its block unless the user does:
    ``warps_per_block``, the variables of the guards with a thread test and the loop
    variables with a trip count from the block (``graph.block_trips``)."""
    out = {WARPS_PER_BLOCK} & set(graph.variables)
    out |= {g.fraction.text.strip() for g in graph.guards.values()
            if g.test and g.fraction.text.strip() in graph.variables}
    out |= set(getattr(graph, "block_trips", {})) & set(graph.variables)
    out |= set(getattr(graph, "trip_tests", {})) & set(graph.variables)
    return out


def _inputs(text) -> set:
    """The variables a loop count's formula (text or parsed) reads besides the launch's
    dimensions."""
    return set(parse(text).variables) - set(BLOCK_DIMENSIONS) - set(GRID_DIMENSIONS)


def formula_inputs(graph) -> set:
    """The graph's variables a launch-set loop count reads besides the launch's dimensions:
    kernel parameters (a grid-stride loop's ``n``, core.kernel.sass.grid_stride; a loop to
    ``n``, core.kernel.sass.parameter_trips)."""
    out: set = set()
    for text in getattr(graph, "block_trips", {}).values():
        out |= _inputs(text)
    return out & set(graph.variables)


def launch_set_text(graph, name: str) -> str:
    """What sets the variable ``name`` of :func:`block_set_variables` at each launch, for a
    field's placeholder: "from the launch's block", "… block and grid" (a grid-stride
    loop), "from n" (a kernel parameter), "from n and the launch's block and grid"."""
    text = getattr(graph, "block_trips", {}).get(name)
    if not text:
        return "from the launch's block"
    read = parse(text).variables
    launch = [what for what, dims in (("block", BLOCK_DIMENSIONS), ("grid", GRID_DIMENSIONS))
              if read & set(dims)]
    inputs = sorted(_inputs(text))
    parts = inputs + (["the launch's " + " and ".join(launch)] if launch else [])
    said = "from " + " and ".join(parts)
    if inputs:  # until the parameter is given, the loop keeps its own value
        default = graph.variables.get(name)
        said += (f"; {' or '.join(inputs)} not given: "
                 f"{default if default is None else f'{float(default):g}'}")
    return said


#: the keys of a trip test (KernelGraph.trip_tests)
TRIP_TEST_KEYS = ("value", "op", "first", "shift", "trips")


def check_trip_test(name, spec) -> dict:
    """The trip test ``spec`` of the guard variable ``name``, checked: ``value`` a value of
    the thread index (``tid.x``), ``op`` one of ``< <= > >= == !=``, ``first`` the bound on
    the first trip (a formula of ``block_x``, ``block_y``, ``block_z`` or a number),
    ``shift`` the bits the bound is shifted right by each trip (1 to 31; −1 to −31: shifted
    left, a stride doubled each trip), ``trips`` the loop variable counting the trips.
    GraphError saying what is wrong."""
    from gpumodeler.core.kernel.sass.thread_tests import thread_test
    from gpumodeler.core.kernel.sass.addresses import parse_address
    if not isinstance(name, str) or not name.isidentifier():
        raise GraphError(f"trip_tests: a guard variable's name must be a name such as guard2, "
                         f"got {shown(name)}")
    if not isinstance(spec, dict) or set(spec) != set(TRIP_TEST_KEYS):
        raise GraphError(f"trip_tests: {name} must be an object with the keys "
                         f"{', '.join(TRIP_TEST_KEYS)}, e.g. {{\"value\": \"tid.x\", "
                         f"\"op\": \"<\", \"first\": \"floor(block_x / 2)\", \"shift\": 1, "
                         f"\"trips\": \"loop2\"}}; got {shown(spec)}", item=name)
    value, op, shift, trips = spec["value"], spec["op"], spec["shift"], spec["trips"]
    poly = parse_address(value) if isinstance(value, str) else None
    if poly is None or not isinstance(op, str) or thread_test(poly, op, 0) is None:
        raise GraphError(f"trip_tests: {name}: value must be a value of the thread index such "
                         f"as tid.x and op one of < <= > >= == !=, got {shown(value)} "
                         f"{shown(op)}", item=name)
    if isinstance(shift, bool) or not isinstance(shift, int) or not 1 <= abs(shift) <= 31:
        raise GraphError(f"trip_tests: {name}: shift must be a whole number from 1 to 31 (a "
                         f"bound shifted right each trip) or from -31 to -1 (shifted left), "
                         f"got {shown(shift)}", item=name)
    if not isinstance(trips, str) or not trips.isidentifier():
        raise GraphError(f"trip_tests: {name}: trips must name a loop variable such as loop2, "
                         f"got {shown(trips)}", item=name)
    return {"value": poly.text(), "op": op, "first": check_block_trip(name, spec["first"]),
            "shift": shift, "trips": trips}


def trip_test_step(spec: dict) -> str:
    """How a trip test's bound changes each trip, as text: ``halved``, ``shifted right 2
    bits``, ``doubled``, ``shifted left 2 bits``."""
    shift = spec["shift"]
    if abs(shift) == 1:
        return "halved" if shift > 0 else "doubled"
    return f"shifted {'right' if shift > 0 else 'left'} {abs(shift)} bits"


def trip_test_share(spec: dict, dims: tuple, trips, warp_size: int = 32) -> float:
    """The mean over a loop's ``trips`` of the share of a block's warps (``dims``) with a
    thread passing the trip test ``spec`` (its bound ``first``, shifted right by ``shift``
    each trip, or left by ``-shift``); 0 for a loop that does not run."""
    from gpumodeler.core.kernel.sass.addresses import parse_address
    from gpumodeler.core.kernel.sass.thread_tests import thread_test, warp_share
    n = math.floor(float(trips))
    if n <= 0:
        return 0.0
    bound = max(0, int(block_trip_value(spec["first"], dims) or 0))
    poly = parse_address(spec["value"])
    assert poly is not None  # check_trip_test
    total = 0.0
    shift = spec["shift"]
    for j in range(n):
        text = thread_test(poly, spec["op"], bound)
        share = warp_share(text, dims, warp_size) if text is not None else 1.0
        # the bound stays 0 from here, or is past every thread of the block: the same share
        # every trip left
        if bound == 0 or (shift < 0 and bound >= 2 * math.prod(dims)):
            total += share * (n - j)
            break
        total += share
        bound = bound >> shift if shift > 0 else bound << -shift
    return total / n


def block_trip_value(text, dims: tuple, grid=None, values=None) -> float | None:
    """The trip count the formula ``text`` (or its parse) gives for a block ``dims`` (Dx,
    Dy, Dz), a grid (1-3 dimensions, or None) and the variable ``values`` it reads; None
    where it reads the grid and none is given."""
    expr = parse(text)
    env = dict(values or {})
    env.update(zip(BLOCK_DIMENSIONS, map(float, dims)))
    if grid is not None:
        g = tuple(int(d) for d in grid) if isinstance(grid, (tuple, list)) else (int(grid),)
        env.update(zip(GRID_DIMENSIONS, map(float, (g + (1, 1))[:3])))
    elif expr.variables & set(GRID_DIMENSIONS):
        return None
    return float(expr.evaluate(env))


def loops_at_default(graph, given) -> list:
    """The loops whose own variable (an imported loop's ``loop2``) keeps the value 1 at a
    launch: not among the launch's ``given`` values (the user's and those its block and
    the kernel parameters set: a formula that reads a parameter not given sets nothing),
    1 in the graph. Their count is not known, so a prediction takes one trip: the
    commands say so, where the user may have meant to set it."""
    return sorted(lp.id for lp in graph.loops.values()
                  if lp.id in graph.variables and lp.id not in given and
                  float(graph.variables[lp.id]) == 1.0)


#: the block an imported graph's variables that a launch's block sets take by default (no
#: launch yet: the kernel editor, ``graph`` without ``--block-size``): 256 threads, along x,
#: or 16×16 where a thread test, trip test or count reads y, 8×8×4 where one reads z (a
#: test of ``tid.y`` has no thread passing it in a 256×1×1 block)
DEFAULT_BLOCKS = {0: (256, 1, 1), 1: (16, 16, 1), 2: (8, 8, 4)}


def default_block(graph) -> tuple:
    """The block of :data:`DEFAULT_BLOCKS` for ``graph``: by the highest dimension its
    thread tests (``tid.y``, ``ntid.y``), trip tests and block-set counts (``block_y``) read."""
    texts = [g.test for g in graph.guards.values() if g.test]
    texts += [f"{spec.get('value', '')} {spec.get('first', '')}"
              for spec in getattr(graph, "trip_tests", {}).values()]
    texts += list(getattr(graph, "block_trips", {}).values())
    joined = " ".join(texts)
    axis = 2 if any(k in joined for k in (".z", "block_z")) else \
        1 if any(k in joined for k in (".y", "block_y")) else 0
    return DEFAULT_BLOCKS[axis]


def launch_guard_values(graph, given, block, warp_size: int, grid=None) -> dict:
    """The values a launch's ``block`` (a thread count or 1-3 dimensions) gives its kernel's
    guards, for the variables ``given`` (the user's values) does not set: the one rule by
    which a launch's block reaches them.

    * ``warps_per_block``, ``ceil(threads / warp_size)``, where the graph has that variable
      (the once-per-block guards);
    * the variable of each guard with a thread test (``tid.x < 3``): the share of the
      block's warps with a thread that passes it
      (:func:`gpumodeler.core.kernel.sass.thread_tests.warp_share`);
    * each loop variable of ``graph.block_trips``: its formula at the block
      (``floor(block_x / 4)``, core.kernel.sass.trip_counts), or at the block, the ``grid``
      and the variables it reads (a grid-stride loop, core.kernel.sass.grid_stride; left
      alone without a grid; a loop to a kernel parameter, core.kernel.sass.parameter_trips).
      A formula that reads a variable at 0 (a kernel parameter not given) is left alone:
      the loop keeps its value;
    * each guard variable of ``graph.trip_tests``: the mean over its loop's trips of the
      share of the block's warps passing the test on that trip (:func:`trip_test_share`)."""
    dims = tuple(int(d) for d in block) if isinstance(block, (tuple, list)) else (int(block),)
    dims = (dims + (1, 1))[:3]
    warp = int(warp_size) if warp_size else 32
    out: dict[str, float] = {}
    if WARPS_PER_BLOCK in graph.variables and WARPS_PER_BLOCK not in given:
        out[WARPS_PER_BLOCK] = -(-math.prod(dims) // warp)
    tested = [g for g in graph.guards.values() if g.test]
    if tested:
        from gpumodeler.core.kernel.sass.thread_tests import warp_share
        names = block_set_variables(graph)
        for g in tested:
            name = g.fraction.text.strip()
            if name in names and name not in given and name not in out:
                out[name] = warp_share(g.test, dims, warp)
    values = None
    for name, text in getattr(graph, "block_trips", {}).items():
        if name in graph.variables and name not in given:
            if values is None:
                values = dict(graph.variables, **given)
            formula = parse(text)
            if any(not values.get(v) for v in _inputs(formula) & set(graph.variables)):
                continue  # a kernel parameter not given (0): the loop keeps its value
            value = block_trip_value(formula, dims, grid, values)
            if value is not None:
                out[name] = value
    for name, spec in getattr(graph, "trip_tests", {}).items():
        if name in graph.variables and name not in given:
            trips = given.get(spec["trips"], out.get(spec["trips"],
                                                     graph.variables.get(spec["trips"], 1)))
            out[name] = trip_test_share(spec, dims, trips, warp)
    return out


@dataclass(frozen=True)
class Guard:
    """Instructions that run only a fraction of the time (``fraction``: 0..1, an expression
    of the graph's variables, e.g. ``guard1`` or ``1/warps_per_block``); see
    :mod:`gpumodeler.core.kernel.sass.guards`."""
    id: str
    members: frozenset
    fraction: Expression
    kind: str = "region"
    name: str = ""
    #: a thread test (``tid.x < 3``: :mod:`gpumodeler.core.kernel.sass.thread_tests`) whose
    #: share of a launch's warps sets ``fraction``, a variable, unless the user sets it; "" none
    test: str = ""

    @classmethod
    def make(cls, id: str, members, fraction, kind: str = "region", name: str = "",
             test: str = "") -> "Guard":
        if not members or not isinstance(members, (list, tuple, set, frozenset)) or not all(
                isinstance(m, str) for m in members):
            raise GraphError(f"guard {id}: members must be a non-empty list of instruction ids, "
                             f"got {shown(members)}", item=id)
        if kind not in GUARD_KINDS:
            raise GraphError(f"guard {id}: kind must be one of {', '.join(GUARD_KINDS)}, got "
                             f"{shown(kind)}", item=id)
        test = str(test or "").strip()
        parsed = parse(fraction)
        if test:
            from gpumodeler.core.kernel.sass.thread_tests import parse_test
            if parse_test(test) is None:
                raise GraphError(f"guard {id}: test must be a thread test such as 'tid.x < 3' "
                                 f"(a value of the thread index with no negative "
                                 f"coefficient, one of < <= > >= == != and a whole number "
                                 f"below 2^31), got {shown(test)}", item=id)
            if not parsed.text.strip().isidentifier():
                raise GraphError(f"guard {id}: a guard with a test takes its fraction from "
                                 f"one variable, got fraction {shown(parsed.text)}", item=id)
        return cls(id=id, members=frozenset(members), fraction=parsed, kind=kind,
                   name=str(name), test=test)
