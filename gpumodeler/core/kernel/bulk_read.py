"""Reading the instructions and edges of a kernel file column by column (for speed).

:func:`gpumodeler.core.kernel.kernel_format.from_dict` reads items one by one, checking each
as :meth:`KernelGraph.add_instruction` / :meth:`KernelGraph.add_edge` would. A file of 10^5
instructions and 2·10^5 edges is almost always entirely valid, so it first tries these
readers: they take each field of all items as one column (``map`` over ``dict.get`` and
``itemgetter``, which loop in C) and check whole columns at once — the set of types in a
column, the distinct values of a column, the ids' uniqueness as the size of their set, the
edge ends as look-ups in the instruction table. When every check passes, the table holds
exactly the items the item-by-item reader makes (same values, same types, same order), kept
as the columns read (:class:`~gpumodeler.core.kernel.item_table.ItemTable`: the items are made
when asked for), and instructions are numbered by kind on the way. When a
check fails, a reader returns False having added nothing, and the item-by-item reader runs:
it finds the first bad item and says what is wrong with it, as before. The checks therefore
only need to be sufficient, never complete: a column they cannot vouch for is left to it.
"""
from __future__ import annotations

from dataclasses import fields
from itertools import chain, count, repeat
from operator import eq, itemgetter

from gpumodeler.core.finite import finite_numbers
from gpumodeler.core.kernel.graph_items import EDGE_KINDS, MAX_EDGE_LATENCY_CYCLES, Edge, Instruction
from gpumodeler.core.kernel.item_table import ItemTable

_ABSENT = object()  # a key the item does not have (not the same as a null value)
_EDGE_KINDS = frozenset(EDGE_KINDS)
_EDGE_KIND_TEXT = {k: k for k in EDGE_KINDS}
#: an instruction's fields other than its own (id, label, position, address), in field order
_SHARED_FIELDS = tuple(f.name for f in fields(Instruction)
                       if f.name not in ("id", "label", "x", "y", "address", "l1_hit_ratio",
                                         "lines_per_request"))


def _column(items, key, default):
    """``[d.get(key, default) for d in items]``, looped in C."""
    return list(map(dict.get, items, repeat(key), repeat(default)))


def _fresh(texts: list) -> list:
    """Copies of ``texts`` (strings), made one after another; or ``texts`` itself when one
    holds the separator (never in practice).

    What a table keeps of the parsed file should not be the parser's own strings: they lie
    scattered among the parsed items, so once the parse is let go they pin the memory it
    took, and the next file read (a second kernel in the same session) is parsed into the
    gaps between them, where every pass over its items misses the cache (from_dict took
    twice as long). Copies made in one go lie together, and the parse's memory is freed
    whole. Two C passes (join and split): ~20 ms for 3·10^5 ids."""
    if len(texts) < 2:
        return texts
    joined = "\x00".join(texts)
    if joined.count("\x00") != len(texts) - 1:
        return texts
    return joined.split("\x00")


def _keys_of_dicts(items, allowed):
    """The keys the items use, when every item is a dict and they are among ``allowed``;
    else None."""
    if set(map(type, items)) != {dict}:
        return None
    keys = set(chain.from_iterable(items))
    return keys if keys <= allowed else None


def _first_items(kinds: list):
    """``(firsts, first_of)``: for each item the position of the first item of its kind, and
    each kind's first position (a dict in order of first item). Each kind is hashed once
    (a tuple does not keep its hash). TypeError for an unhashable kind."""
    first_of: dict = {}
    return list(map(first_of.setdefault, kinds, count())), first_of


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
    if set(map(type, ids)) != {str} or not all(ids) or set(map(type, opcodes)) != {str}:
        return False
    ids = _fresh(ids)
    index = dict(zip(ids, range(n)))
    if len(index) != n:
        return False
    # an instruction's own fields, each a column only when some instruction has it
    lists, consts = {"id": ids}, {}
    for name, default in (("label", ""), ("x", 0.0), ("y", 0.0), ("address", "")):
        if name in keys:
            lists[name] = _column(items, name, default)
        else:
            consts[name] = default
    if ("address" in lists and set(map(type, lists["address"])) != {str}):
        return False
    if "address" in lists:
        lists["address"] = _fresh(lists["address"])
    if ("label" in lists and set(map(type, lists["label"])) != {str}) \
            or ("x" in lists and not finite_numbers(lists["x"])) \
            or ("y" in lists and not finite_numbers(lists["y"])):
        return False
    if "label" in lists:
        lists["label"] = _fresh(lists["label"])
    # what an instruction shares with others of its kind: every key but its own
    names = ["opcode"] + sorted(keys - own - {"opcode"})
    columns = [opcodes] + [_column(items, k, _ABSENT) for k in names[1:]]
    try:
        firsts, first_of = _first_items(list(zip(*columns)))
    except TypeError:  # an unhashable value (a list, ...): invalid
        return False
    # 1, 1.0 and True are equal keys but different values: when a column mixes them, the
    # kind also holds each value's type (as the item-by-item reader's key does). Only a
    # column where some kind holds something other than text (or nothing) can (text,
    # None and the absent mark equal nothing else), so only those are looked at in full.
    suspect = [c for j, c in enumerate(columns) if any(
        k[j].__class__ is not str and k[j] is not _ABSENT and k[j] is not None for k in first_of)]
    if any(len(set(map(type, c)) & {bool, int, float}) > 1 for c in suspect):
        columns += [list(map(type, c)) for c in columns]
        firsts, first_of = _first_items(list(zip(*columns)))
    shared = []  # each kind's shared field values, kinds numbered in order of first item
    for kind in first_of:
        d = {k: v for k, v in zip(names, kind) if v is not _ABSENT}
        proto = prototype(d)
        if proto is None:
            return False
        shared.append(proto[0] + proto[1] + proto[2])
    number_of = dict(zip(first_of.values(), range(len(first_of))))
    codes: list[int] = list(map(number_of.__getitem__, firsts))
    per_item = None
    for j, name in enumerate(_SHARED_FIELDS):
        values = [p[j] for p in shared]
        if all(v is values[0] for v in values):
            consts[name] = values[0]
        else:
            if per_item is None:
                per_item = list(map(shared.__getitem__, codes))
            lists[name] = list(map(itemgetter(j), per_item))
    consts["l1_hit_ratio"] = 0.0  # launch-time only: never in a file
    consts["lines_per_request"] = 0.0
    graph.instructions = ItemTable(Instruction, ids, lists, consts, index, codes)
    return True


def read_edges(items: list, graph, allowed: frozenset, positions: dict) -> bool:
    """Add every edge of ``items`` to the (empty) edge table of ``graph`` and return True; or
    add none and return False when a column is not plainly valid. ``positions`` maps each
    instruction id to its position in the instruction table: the ends are looked up there
    and become the table's own id objects, and when the instructions are a table read by
    :func:`read_instructions` the table of edges keeps the positions
    (:func:`~gpumodeler.core.kernel.item_table.end_positions`)."""
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
    try:
        # kinds equal to the kinds' names are those names (text; nothing else read from a
        # file equals text); an end that is not an instruction's id (another type included)
        # is not found
        if not set(kinds) <= _EDGE_KINDS or set(map(type, kinds)) != {str}:
            return False  # (text of a subclass: left to the item-by-item reader)
        ends = list(map(positions.__getitem__, srcs)), list(map(positions.__getitem__, dsts))
    except (TypeError, KeyError):  # an unhashable value, an end that is not an instruction
        return False
    if any(map(eq, *ends)):
        return False
    names = list(graph.instructions).__getitem__  # the ids' own objects, by position
    srcs, dsts = list(map(names, ends[0])), list(map(names, ends[1]))
    # the optional fields, each a column only when some edge has it; each kind the one text
    # object of its name, not the parser's copy per edge (see _fresh)
    lists = {"src": srcs, "dst": dsts, "kind": list(map(_EDGE_KIND_TEXT.__getitem__, kinds))}
    consts: dict = {}
    latencies = _column(items, "latency", None) if "latency" in keys else None
    if latencies is not None:
        if not set(map(type, latencies)) <= {type(None), int, float}:
            return False
        values = list(set(latencies) - {None})  # numbers now, so hashable
        if not finite_numbers(values) or (values and (
                min(values) < 0 or max(values) > MAX_EDGE_LATENCY_CYCLES)):
            return False
    taken = _column(items, "taken", None) if "taken" in keys else None
    if taken is not None and not set(map(type, taken)) <= {type(None), bool}:
        return False
    ids = _edge_ids(_column(items, "id", None) if "id" in keys else [None] * n, graph)
    if ids is None:
        return False
    ids = _fresh(ids)
    index = dict(zip(ids, range(n)))
    # (a view of the index: the look-ups go over the smaller of the two, the instructions)
    if len(index) != n or not graph.instructions.keys().isdisjoint(index.keys()):
        return False
    lists["id"] = ids
    for name, column in (("latency", latencies), ("taken", taken)):
        if column is None:
            consts[name] = None
        else:
            lists[name] = column
    kept = graph.instructions.__class__ is ItemTable  # (a dict may change under them)
    graph.edges = ItemTable(Edge, ids, lists, consts, index,
                            ends=(graph.instructions, *ends) if kept else None)
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
