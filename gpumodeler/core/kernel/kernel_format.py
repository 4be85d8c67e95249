"""The kernel file format ``gpumodeler-kernel`` version 2 (``docs/kernel-format.md``):
:func:`to_dict` writes a :class:`~gpumodeler.core.kernel.graph.KernelGraph` as a JSON-ready dict,
:func:`read_graph` reads one back (as :func:`gpumodeler.core.kernel.graph.from_dict`), validating every item.

Reading is linear in the file. It first tries the column-wise readers of
:mod:`gpumodeler.core.kernel.bulk_read`, which take a valid file in bulk; otherwise (and to say
what is wrong with an invalid file) it reads item by item, doing the per-item work once per
distinct kind of item: an
instruction's attributes other than its id, label and position are validated once per distinct
combination in the file (a kernel has a few dozen opcodes, not 10^5), and edges are checked
inline; anything unusual goes the way :meth:`KernelGraph.add_instruction` and
:meth:`KernelGraph.add_edge` go, so errors and their order are those of adding the items one by
one.
"""
from __future__ import annotations

from dataclasses import fields
from operator import itemgetter

from gpumodeler.core.errors import FormatError, GraphError, shown
from gpumodeler.core.finite import finite_number, is_finite_number
from gpumodeler.core.kernel.bulk_read import read_edges, read_instructions
from gpumodeler.core.kernel.collector import collector_paused
from gpumodeler.core.kernel.format_upgrade import WAVEFRONT_VERSION, upgrade_shared_degrees
from gpumodeler.core.kernel.item_table import id_positions
from gpumodeler.core.kernel.graph_items import (EDGE_KINDS, MAX_EDGE_LATENCY_CYCLES, Edge, Guard,
                                               Instruction, Loop)

FORMAT_NAME = "gpumodeler-kernel"
#: 2: a shared-memory access's ``bank_conflict_degree`` is its wavefronts, 64- and 128-bit
#: accesses served per half-warp (version 1: the n of its n-way conflict over the whole warp)
FORMAT_VERSION = 2

#: an instruction's optional keys and their defaults (omitted from a file when default)
#: launch-time instruction fields: never read from or written to a file
LAUNCH_ONLY_FIELDS = frozenset({"l1_hit_ratio", "lines_per_request"})
INSTRUCTION_DEFAULTS = {f.name: f.default for f in fields(Instruction)
                        if f.name not in ("id", "opcode") and f.name not in LAUNCH_ONLY_FIELDS}
#: the keys an instruction object may hold
INSTRUCTION_KEYS = frozenset({"id", "opcode"} | set(INSTRUCTION_DEFAULTS))
#: the keys an edge object may hold
EDGE_KEYS = frozenset({"id", "from", "to", "kind", "latency", "taken"})
#: What the compiler allocated per thread and per block (optional, from an imported listing).
RESOURCE_KEYS = ("registers_per_thread", "static_shared_bytes")


def to_dict(graph) -> dict:
    """The graph as a JSON-ready dict (format ``gpumodeler-kernel`` v2), defaults omitted
    except the classifier-derived unit fields, which are always written so a file stays
    readable by a version whose opcode table differs."""
    out = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "name": graph.name}
    if graph.description:
        out["description"] = graph.description
    if graph.latency_table:
        out["latency_table"] = graph.latency_table
    if graph.variables:
        out["variables"] = dict(graph.variables)
    extras = graph_extras(graph)
    out.update((k, extras[k]) for k in RESOURCE_KEYS if k in extras)
    ins_out = []
    for ins in graph.instructions.values():
        d = {"id": ins.id, "opcode": ins.opcode, "unit": ins.unit}
        for key, default in INSTRUCTION_DEFAULTS.items():
            if key == "unit":
                continue
            value = getattr(ins, key)
            if value != default:
                d[key] = value
        ins_out.append(d)
    out["instructions"] = ins_out
    out["edges"] = []
    for e in graph.edges.values():
        d = {"id": e.id, "from": e.src, "to": e.dst, "kind": e.kind}
        if e.latency is not None:
            d["latency"] = e.latency
        if e.taken is not None:
            d["taken"] = e.taken
        out["edges"].append(d)
    order = graph.order()
    out["loops"] = [{"id": lp.id, "name": lp.name, "iterations": lp.iterations.text,
                     "members": sorted(lp.members, key=order.__getitem__)}
                    for lp in graph.loops.values()]
    if "guards" in extras:
        out["guards"] = extras["guards"]
    for key in ("block_trips", "trip_tests"):
        if key in extras:
            out[key] = extras[key]
    return out


def _resources(data: dict) -> dict:
    """The optional ``registers_per_thread`` (1-255) and ``static_shared_bytes`` (>= 0,
    whole bytes) of a kernel file; absent (older files) = unknown."""
    out = {}
    for key, low, high in (("registers_per_thread", 1, 255), ("static_shared_bytes", 0, 1 << 30)):
        value = data.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise FormatError(f"{key} must be a whole number from {low} to {high}, "
                              f"got {shown(value)}")
        out[key] = value
    return out


def check_keys(obj, allowed, what):
    """Raise FormatError unless ``obj`` is a JSON object whose keys are all in ``allowed``."""
    if not isinstance(obj, dict):
        raise FormatError(f"{what} must be a JSON object, got {type(obj).__name__}")
    unknown = sorted(set(obj) - set(allowed))
    if unknown:
        raise FormatError(f"{what}: unknown key(s) {', '.join(unknown)}; valid: {', '.join(sorted(allowed))}")


def list_of(data: dict, key: str) -> list:
    """``data[key]``, a JSON list (an absent key is an empty one)."""
    value = data.get(key, [])
    if not isinstance(value, list):
        raise FormatError(f"{key!r} must be a list of objects, got {shown(value)}")
    return value


@collector_paused()
def read_graph(data: dict, new_graph):
    """Read a graph from a dict (parsed JSON) into ``new_graph(name=, latency_table=,
    description=, variables=)`` (the :class:`~gpumodeler.core.kernel.graph.KernelGraph` class:
    :func:`gpumodeler.core.kernel.graph.from_dict` passes it, so this module needs no import
    of the graph module); raises FormatError/GraphError with the item."""
    check_keys(data, {"format", "version", "name", "description", "latency_table", "variables",
                       "instructions", "edges", "loops", "guards", "block_trips", "trip_tests",
                       *RESOURCE_KEYS},
               "kernel file")
    if data.get("format") != FORMAT_NAME:
        raise FormatError(f"not a gpumodeler kernel file (format is {data.get('format')!r}, "
                          f"expected {FORMAT_NAME!r})")
    version = data.get("version")
    if not isinstance(version, int) or version < 1:
        raise FormatError(f"kernel file version must be a positive integer, got {version!r}")
    if version > FORMAT_VERSION:
        raise FormatError(f"kernel file is version {version}, written by a newer gpumodeler; "
                          f"this one reads up to version {FORMAT_VERSION}")
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(
            isinstance(k, str) and is_finite_number(v) for k, v in variables.items()):
        raise FormatError("variables must map names to finite numbers, e.g. {\"a\": 128}")
    if data.get("latency_table") is not None and not isinstance(data["latency_table"], str):
        raise FormatError(f"latency_table must be a table name, got {shown(data['latency_table'])}")
    graph = new_graph(name=str(data.get("name", "kernel")), latency_table=data.get("latency_table"),
                        description=str(data.get("description", "")), variables=dict(variables),
                        **_resources(data))
    instructions = list_of(data, "instructions")
    if not read_instructions(instructions, graph, INSTRUCTION_KEYS, _OWN, _prototype):
        _read_instructions(instructions, graph)
    # edge ends and loop members as the instructions' own id objects: equal strings, and
    # every later look-up of one finds it by identity, without comparing text (and the
    # graph holds no second copy of them)
    # (edges read as columns look their ends up in the instructions' positions, which a
    # table read as columns already has: the dict of the ids is made when something else
    # needs it)
    instructions = graph.instructions
    positions = id_positions(instructions) or dict(zip(instructions, range(len(instructions))))
    canonical = None
    edges = list_of(data, "edges")
    if not read_edges(edges, graph, EDGE_KEYS, positions):
        canonical = _canonical(graph)
        _read_edges(edges, graph, canonical)
    loops = list_of(data, "loops")
    if loops and canonical is None:
        canonical = _canonical(graph)
    graph.add_loops(_loops_from(loops, graph, canonical))
    _read_guards(list_of(data, "guards"), graph)
    _read_block_trips(data.get("block_trips", {}), graph)
    _read_trip_tests(data.get("trip_tests", {}), graph)
    if version < WAVEFRONT_VERSION:
        notes = upgrade_shared_degrees(graph)
        if notes:
            graph.read_notes = tuple(notes)
    return graph


def graph_extras(graph) -> dict:
    """The graph's optional items (registers, static shared memory, guards) as the kernel
    format writes them: what a project file keeps beside its own kernel tables."""
    full = {"registers_per_thread": graph.registers_per_thread,
            "static_shared_bytes": graph.static_shared_bytes}
    out = {k: v for k, v in full.items() if v is not None}
    if graph.guards:
        order = graph.order()
        out["guards"] = [{"id": g.id, "name": g.name, "kind": g.kind, "fraction": g.fraction.text,
                          **({"test": g.test} if g.test else {}),
                          "members": sorted(g.members, key=order.__getitem__)}
                         for g in graph.guards.values()]
    if graph.block_trips:
        out["block_trips"] = dict(graph.block_trips)
    if graph.trip_tests:
        out["trip_tests"] = {k: dict(v) for k, v in graph.trip_tests.items()}
    return out


def read_graph_extras(graph, data) -> None:
    """Set what :func:`graph_extras` wrote on ``graph`` (checked as a kernel file's)."""
    if not isinstance(data, dict):
        raise FormatError(f"kernel extras must be an object, got {shown(data)}")
    check_keys(data, {"guards", "block_trips", "trip_tests", *RESOURCE_KEYS}, "kernel extras")
    for key, value in _resources(data).items():
        setattr(graph, key, value)
    _read_guards(list_of(data, "guards"), graph)
    _read_block_trips(data.get("block_trips", {}), graph)
    _read_trip_tests(data.get("trip_tests", {}), graph)


def _read_block_trips(items, graph) -> None:
    """The optional ``block_trips`` (absent in older files): loop variable -> the formula of
    the block's dimensions ``block_x``, ``block_y``, ``block_z`` each launch sets it to
    (core.kernel.sass.trip_counts), or of those, the grid's ``grid_x``, ``grid_y``,
    ``grid_z`` and the graph's other variables (a grid-stride loop's kernel parameter:
    core.kernel.sass.grid_stride)."""
    from gpumodeler.core.kernel.graph_items import check_block_trip
    if not isinstance(items, dict):
        raise FormatError(f"block_trips must map loop variables to formulas of block_x, "
                          f"block_y, block_z (grid_x, grid_y, grid_z and the graph's other "
                          f"variables), e.g. {{\"loop2\": \"floor(block_x / 4)\"}}, got "
                          f"{shown(items)}")
    for name, text in items.items():
        graph.block_trips[name] = check_block_trip(name, text, graph.variables)


def _read_trip_tests(items, graph) -> None:
    """The optional ``trip_tests`` (absent in older files): guard variable -> a thread test
    whose bound halves each trip of a loop (core.kernel.sass.trip_counts)."""
    from gpumodeler.core.kernel.graph_items import check_trip_test
    if not isinstance(items, dict):
        raise FormatError(f"trip_tests must map guard variables to objects with value, op, "
                          f"first, shift and trips, got {shown(items)}")
    for name, spec in items.items():
        graph.trip_tests[name] = check_trip_test(name, spec)


def _read_guards(items: list, graph) -> None:
    """The optional ``guards`` (absent in older files): id, name, kind, fraction, members and
    an optional thread ``test`` (``tid.x < 3``) that sets the fraction's variable per launch."""
    for item in items:
        check_keys(item, {"id", "name", "kind", "fraction", "members", "test"}, "guard")
        gid = item.get("id")
        if not isinstance(gid, str) or not gid or gid in graph.guards:
            raise FormatError(f"guard id must be a new non-empty text, got {shown(gid)}")
        members = item.get("members")
        test = item.get("test", "")
        if not isinstance(test, str):
            raise FormatError(f"guard {gid}: test must be text such as 'tid.x < 3', got "
                              f"{shown(test)}")
        guard = Guard.make(gid, members, str(item.get("fraction", "1")),
                           item.get("kind", "region"), item.get("name", ""), test)
        unknown = sorted(m for m in guard.members if m not in graph.instructions)
        if unknown:
            raise GraphError(f"guard {gid}: no instruction {unknown[0]!r} in this graph", item=gid)
        graph.guards[gid] = guard


def _canonical(graph):
    """A look-up (``dict.get``) from an instruction id to the table's own id object."""
    return dict(zip(graph.instructions, graph.instructions)).get


def _loops_from(items, graph, canonical=None):
    """Loops of a kernel file in order (a generator: a new id counts the loops added). An
    iteration count is parsed once per distinct text (expressions are immutable values)."""
    parsed: dict = {}
    for i, d in enumerate(items):
        check_keys(d, {"id", "name", "iterations", "members"}, f"loop #{i + 1}")
        if "iterations" not in d or "members" not in d:
            raise FormatError(f"loop #{i + 1} needs 'iterations' and 'members'")
        text = d["iterations"]
        try:
            key = (text.__class__, text)
            iterations = parsed.get(key, text)
        except TypeError:  # unhashable: Loop.make says why it is wrong
            key, iterations = None, text
        members = d["members"]
        if canonical is not None and type(members) is list:
            try:
                members = list(map(canonical, members, members))
            except TypeError:  # an unhashable member: Loop.make says what is wrong
                members = d["members"]
        loop = Loop.make(str(d.get("id") or graph.new_id("loop")), members,
                         iterations, str(d.get("name", "")))
        if key is not None:
            parsed[key] = loop.iterations
        yield loop


# -- instructions and edges, validated once per distinct kind --------------------------------
#: what each instruction has of its own (its address text, like its label, is seldom
#: shared: it is no part of what kinds of instruction are told apart by)
_OWN = frozenset({"id", "label", "x", "y", "address"})


_FIELDS = [f.name for f in fields(Instruction)]
_LABEL, _X, _ADDRESS = _FIELDS.index("label"), _FIELDS.index("x"), _FIELDS.index("address")
assert _FIELDS[0] == "id" and 0 < _LABEL < _X and _FIELDS[_X + 1] == "y", _FIELDS
assert set(_FIELDS[_ADDRESS + 1:]) == LAUNCH_ONLY_FIELDS, _FIELDS  # left at their defaults


def _prototype(d: dict):
    """The attribute values an instruction of this kind has besides its own (id, label,
    position), in field order as three runs: between id and label, between label and x,
    after y (up to the address, the last field); or None when they are not valid (the
    instruction then goes through Instruction.make, which says why with its id)."""
    kw = {k: v for k, v in d.items() if k not in _OWN and k != "opcode"}
    if "stride" in kw and is_finite_number(kw["stride"]):
        kw["stride"] = float(kw["stride"])
    try:
        p = Instruction.make("prototype", str(d["opcode"]), **kw)
    except GraphError:
        return None
    values = [getattr(p, name) for name in _FIELDS]
    return tuple(values[1:_LABEL]), tuple(values[_LABEL + 1:_X]), tuple(values[_X + 2:_ADDRESS])


def _read_instructions(items: list, graph) -> None:
    """Add the file's instructions to a new graph, as add_instruction(Instruction.make(...))
    for each would (same values, same first error), validating each distinct combination of
    attributes once."""
    table = graph.instructions
    kinds: dict = {}
    shared_of: dict = {}  # key order of an instruction object -> getter of its shared values
    for i, d in enumerate(items):
        if type(d) is not dict or not d.keys() <= INSTRUCTION_KEYS:  # the label only when needed
            check_keys(d, INSTRUCTION_KEYS, f"instruction #{i + 1}")
        if "id" not in d or "opcode" not in d:
            raise FormatError(f"instruction #{i + 1} needs 'id' and 'opcode'")
        names = tuple(d)
        shared = shared_of.get(names)
        if shared is None:
            shared = shared_of[names] = itemgetter(*[k for k in names if k not in _OWN])
        values = shared(d)  # "opcode" at least: a value, or a tuple of them
        try:  # the types too: 1, 1.0 and True are equal keys but different values
            key = (names, values, tuple(map(type, values)) if type(values) is tuple else type(values))
            proto = kinds.get(key, False)
        except TypeError:  # an unhashable value (a list, ...): invalid, said below
            key, proto = None, None
        if proto is False:
            proto = kinds[key] = _prototype(d)
        if proto is not None:
            nid = str(d["id"])
            label = d.get("label", "")
            x = d.get("x", 0.0)
            y = d.get("y", 0.0)
            address = d.get("address", "")
            if nid and label.__class__ is str and finite_number(x) and finite_number(y) \
                    and address.__class__ is str and nid not in table:
                table[nid] = Instruction(  # type: ignore[call-arg]  # every field, in order
                    nid, *proto[0], label, *proto[1], x, y, *proto[2], address)
                continue
        kw = {k: v for k, v in d.items() if k not in ("id", "opcode")}
        if "stride" in kw and is_finite_number(kw["stride"]):  # else checked() says why
            kw["stride"] = float(kw["stride"])
        graph.add_instruction(Instruction.make(str(d["id"]), str(d["opcode"]), **kw))


def _read_edges(items: list, graph, canonical) -> None:
    """Add the file's edges, as add_edge for each would (same ids, same first error), with
    the checks of Edge.checked and add_edge done inline for the usual values."""
    nodes, table = graph.instructions, graph.edges
    kinds = frozenset(EDGE_KINDS)
    for i, d in enumerate(items):
        if type(d) is not dict or not d.keys() <= EDGE_KEYS:
            check_keys(d, EDGE_KEYS, f"edge #{i + 1}")
        if "from" not in d or "to" not in d or "kind" not in d:
            missing = [k for k in ("from", "to", "kind") if k not in d]
            raise FormatError(f"edge #{i + 1} needs {', '.join(missing)}")
        eid = str(d.get("id") or graph.new_id("e"))
        src, dst, kind = str(d["from"]), str(d["to"]), d["kind"]
        latency, taken = d.get("latency"), d.get("taken")
        s, t = canonical(src), canonical(dst)
        if (s is not None and t is not None and kind.__class__ is str and kind in kinds
                and (latency is None or (finite_number(latency)
                                         and 0 <= latency <= MAX_EDGE_LATENCY_CYCLES))
                and (taken is None or taken is True or taken is False)
                and s != t and eid not in table and eid not in nodes and eid not in graph.loops):
            table[eid] = Edge(eid, s, t, kind, latency, taken)
        else:
            graph.add_edge(Edge(eid, src, dst, kind, latency, taken))  # raises what is wrong
