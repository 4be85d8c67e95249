"""Reading the instructions and edges of a kernel file column by column (issue #11).

:func:`gpumodeler.core.kernel.kernel_format.from_dict` reads items one by one, checking each
as :meth:`KernelGraph.add_instruction` / :meth:`KernelGraph.add_edge` would. A file of 10^5
instructions and 2·10^5 edges is almost always entirely valid, so it first tries these
readers: they take each field of all items as one column (``map`` over ``dict.get`` and
``itemgetter``, which loop in C) and check whole columns at once — the set of types in a
column, the distinct values of a column, the ids' uniqueness as the size of their set, the
edge ends as look-ups in the instruction table. When every check passes, the items made are
exactly those the item-by-item reader makes (same values, same types, same order). When a
check fails, a reader returns False having added nothing, and the item-by-item reader runs:
it finds the first bad item and says what is wrong with it, as before. The checks therefore
only need to be sufficient, never complete: a column they cannot vouch for is left to it.
"""
from __future__ import annotations

from collections import deque
from dataclasses import fields
from itertools import chain, repeat
from operator import eq, itemgetter

from gpumodeler.core.kernel.graph_items import EDGE_KINDS, Edge, Instruction

_ABSENT = object()  # a key the item does not have (not the same as a null value)
_EDGE_KINDS = frozenset(EDGE_KINDS)
#: an instruction's fields other than its own (id, label, position), in field order
_SHARED_FIELDS = tuple(f.name for f in fields(Instruction) if f.name not in ("id", "label", "x", "y"))


def _instances(cls, n: int, columns: dict) -> list:
    """``n`` instances of the frozen, slotted dataclass ``cls``, each field set from its
    column (a list, or ``repeat(value)`` when all share one value).

    They are made column by column: ``object.__new__`` for all, then each slot's own
    descriptor sets a whole column (a loop in C), instead of one generated ``__init__`` per
    instance, which sets each field with a Python-level ``object.__setattr__`` call (a frozen
    class's way). The result is the same objects; ``__init__`` does no more than set the
    fields (no ``__post_init__``), and the values were checked before."""
    assert set(columns) == set(cls.__slots__) and not hasattr(cls, "__post_init__"), cls
    objs = list(map(object.__new__, repeat(cls, n)))
    for name, column in columns.items():
        deque(map(cls.__dict__[name].__set__, objs, column), 0)
    return objs


def _column(items, key, default):
    """``[d.get(key, default) for d in items]``, looped in C."""
    return list(map(dict.get, items, repeat(key), repeat(default)))


def _finite_numbers(values) -> bool:
    """Every value is an int or a float (not a bool) that the item-by-item reader accepts as
    finite (``kernel_format._finite``: floats finite, ints within ±1e308). May say False for
    valid values (a sum that overflows); the caller then reads item by item."""
    if not values:
        return True
    if not set(map(type, values)) <= {int, float}:
        return False
    try:
        if not (-1e308 < min(values) and max(values) < 1e308):
            return False
        total = sum(values)
    except OverflowError:  # an int beyond a float, added to a float
        return False
    return total - total == 0  # NaN or inf anywhere makes the sum NaN or inf


def _keys_of_dicts(items, allowed):
    """The keys the items use, when every item is a dict and they are among ``allowed``;
    else None."""
    if set(map(type, items)) != {dict}:
        return None
    keys = set(chain.from_iterable(items))
    return keys if keys <= allowed else None


def read_instructions(items: list, graph, allowed: frozenset, own: frozenset, prototype) -> bool:
    """Add every instruction of ``items`` to the (empty) instruction table of ``graph`` and
    return True; or add none and return False when a column is not plainly valid.

    ``allowed`` are the instruction keys, ``own`` those every instruction has of its own
    (id, label, position), ``prototype(d)`` the field values shared by instructions like
    ``d`` (``kernel_format._prototype``: three runs around label and position, or None)."""
    n = len(items)
    if not n:
        return True
    keys = None if graph.instructions else _keys_of_dicts(items, allowed)
    if keys is None:
        return False
    try:
        ids = list(map(itemgetter("id"), items))
        opcodes = list(map(itemgetter("opcode"), items))
    except KeyError:
        return False
    if set(map(type, ids)) != {str} or not all(ids) or len(set(ids)) != n \
            or set(map(type, opcodes)) != {str}:
        return False
    # an instruction's own fields, each a column only when some instruction has it
    labels = _column(items, "label", "") if "label" in keys else repeat("")
    xs = _column(items, "x", 0.0) if "x" in keys else repeat(0.0)
    ys = _column(items, "y", 0.0) if "y" in keys else repeat(0.0)
    if (type(labels) is list and set(map(type, labels)) != {str}) \
            or (type(xs) is list and not _finite_numbers(xs)) \
            or (type(ys) is list and not _finite_numbers(ys)):
        return False
    # what an instruction shares with others of its kind: every key but its own
    names = ["opcode"] + sorted(keys - own - {"opcode"})
    columns = [opcodes] + [_column(items, k, _ABSENT) for k in names[1:]]
    # 1, 1.0 and True are equal keys but different values: when a column mixes them, the
    # kind also holds each value's type (as the item-by-item reader's key does)
    mixed = any(len(set(map(type, c)) & {bool, int, float}) > 1 for c in columns)
    if mixed:
        columns += [list(map(type, c)) for c in columns]
    kinds = list(zip(*columns))
    try:
        distinct = dict.fromkeys(kinds)
    except TypeError:  # an unhashable value (a list, ...): invalid
        return False
    protos = {}
    for kind in distinct:
        d = {k: v for k, v in zip(names, kind) if v is not _ABSENT}
        proto = prototype(d)
        if proto is None:
            return False
        protos[kind] = proto
    shared = {kind: before + between + after for kind, (before, between, after) in protos.items()}
    columns = {"id": ids, "label": labels, "x": xs, "y": ys}
    per_item = None
    for j, name in enumerate(_SHARED_FIELDS):
        values = [p[j] for p in shared.values()]
        if all(v is values[0] for v in values):
            columns[name] = repeat(values[0])
        else:
            if per_item is None:
                per_item = list(map(shared.__getitem__, kinds))
            columns[name] = list(map(itemgetter(j), per_item))
    graph.instructions.update(zip(ids, _instances(Instruction, n, columns)))
    return True


def read_edges(items: list, graph, allowed: frozenset, canonical) -> bool:
    """Add every edge of ``items`` to the (empty) edge table of ``graph`` and return True; or
    add none and return False when a column is not plainly valid. ``canonical`` maps an
    instruction id to the table's own id object (None for an unknown id)."""
    n = len(items)
    if not n:
        return True
    keys = None if graph.edges or graph.loops else _keys_of_dicts(items, allowed)
    if keys is None:
        return False
    try:
        srcs = list(map(itemgetter("from"), items))
        dsts = list(map(itemgetter("to"), items))
        kinds = list(map(itemgetter("kind"), items))
    except KeyError:
        return False
    if set(map(type, srcs)) != {str} or set(map(type, dsts)) != {str} \
            or set(map(type, kinds)) != {str} or not set(kinds) <= _EDGE_KINDS:
        return False
    srcs, dsts = list(map(canonical, srcs)), list(map(canonical, dsts))
    if None in srcs or None in dsts or any(map(eq, srcs, dsts)):
        return False
    # the optional fields, each a column only when some edge has it
    latencies = _column(items, "latency", None) if "latency" in keys else repeat(None)
    if type(latencies) is list:
        if not set(map(type, latencies)) <= {type(None), int, float}:
            return False
        values = list(set(latencies) - {None})  # numbers now, so hashable
        if not _finite_numbers(values) or (values and min(values) < 0):
            return False
    taken = _column(items, "taken", None) if "taken" in keys else repeat(None)
    if type(taken) is list and not set(map(type, taken)) <= {type(None), bool}:
        return False
    ids = _edge_ids(_column(items, "id", None) if "id" in keys else [None] * n, graph)
    if ids is None or len(set(ids)) != n or not graph.instructions.keys().isdisjoint(ids):
        return False
    columns = {"id": ids, "src": srcs, "dst": dsts, "kind": kinds, "latency": latencies,
               "taken": taken}
    graph.edges.update(zip(ids, _instances(Edge, n, columns)))
    return True


def _edge_ids(given: list, graph):
    """The edges' ids: each given one (text), or for an edge without one (a missing, null
    or empty id) the id :meth:`KernelGraph.new_id` would give it when it is added after the
    edges before it. None when a given id is not text."""
    if all(given):
        return given if set(map(type, given)) == {str} else None
    nodes = graph.instructions
    base = len(nodes) + len(graph.loops) + 1
    if not any(given):  # no edge has an id: e{base}, e{base + 1}, ... unless one is taken
        candidates = list(map("e{}".format, range(base, base + len(given))))
        if nodes.keys().isdisjoint(candidates):
            return candidates
    missing = [i for i, eid in enumerate(given) if not eid]
    explicit = [eid for eid in given if eid]
    if set(map(type, explicit)) <= {str}:
        # Edge i without an id is given e{base + i} unless that id is taken when it is
        # added; when none of these candidates is an instruction's id or a given one, none
        # is taken (the other candidates are distinct)
        candidates = list(map("e{}".format, [base + i for i in missing]))
        if nodes.keys().isdisjoint(candidates) and set(explicit).isdisjoint(candidates):
            ids = list(given)
            for i, eid in zip(missing, candidates):
                ids[i] = eid
            return ids
    ids, seen = [], set()
    for i, eid in enumerate(given):
        if eid:
            if eid.__class__ is not str:
                return None
        else:
            k = base + i
            while f"e{k}" in nodes or f"e{k}" in seen:
                k += 1
            eid = f"e{k}"
        ids.append(eid)
        seen.add(eid)
    return ids
