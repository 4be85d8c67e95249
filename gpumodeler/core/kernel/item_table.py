"""A graph's instructions or edges as read from a file: columns, items made when asked for
(for speed).

A kernel file of 10^5 instructions holds 3·10^5 items. The analysis (latency bound, counts,
critical path) reads a few fields of every item as whole columns and looks at a few dozen
items only (one per kind of instruction, one per kind of edge latency), so making the 3·10^5
objects first, and taking the columns back out of them, is most of what reading and
analysing a file costs beyond parsing it (0.16 s to make them, 0.04 s to free them, 0.05 s to
take the columns back, of 1.6 s). :class:`ItemTable` keeps what
:mod:`gpumodeler.core.kernel.bulk_read` read as columns and behaves as the ``dict`` of items
the graph otherwise holds: same keys in the same order, equal items, the same errors.

* Looking up one item (``table[key]``, ``get``) makes that item only, and keeps it.
* Asking for every item (``values()``, ``items()``, a mutation, a comparison) makes them all at
  once, column by column, keeping the ones already made (an item is always the same object),
  and from then on the table is that dict (:meth:`plain`); the columns but the ids are let go.
  Making items is done under a lock, so even a table two threads share gives each id one
  object.
* The analysis reads columns through :func:`columns`, :func:`values_of`, :func:`item_at`
  and :func:`kind_codes`, which work on a plain ``dict`` of items too (by reading the items).

:class:`~gpumodeler.core.kernel.graph.KernelGraph` trades a table for its plain dict before it
changes it, so an edited graph holds ordinary dicts; a table written to directly makes its
dict first and changes that.
"""
from __future__ import annotations

import threading
from collections import deque
from collections.abc import KeysView, Mapping
from itertools import count, repeat
from operator import attrgetter

import numpy as np

# Making an item, or all of them, is done under this lock: a table is normally used by one
# thread (workers get a copy of the graph), but a table shared anyway must still give each id
# one object and one dict. Reading made items takes no lock.
_MAKING = threading.Lock()


def make_instances(cls, n: int, lists: dict, consts: dict) -> list:
    """``n`` instances of the frozen, slotted dataclass ``cls``: each field from its list or,
    when all share one value, from ``consts``.

    They are made column by column: ``object.__new__`` for all, then each slot's own
    descriptor sets a whole column (a loop in C), instead of one generated ``__init__`` per
    instance, which sets each field with a Python-level ``object.__setattr__`` call (a frozen
    class's way). The result is the same objects; ``__init__`` does no more than set the
    fields (no ``__post_init__``), and the values were checked before."""
    assert set(lists) | set(consts) == set(cls.__slots__) and not hasattr(cls, "__post_init__"), cls
    objs = list(map(object.__new__, repeat(cls, n)))
    slots = cls.__dict__
    for name in cls.__slots__:  # field order, as __init__ sets them
        column = lists[name] if name in lists else repeat(consts[name])
        deque(map(slots[name].__set__, objs, column), 0)
    return objs


class ItemTable(Mapping):
    """``{id: item}`` of one item class, kept as columns until the items are asked for (see
    the module docstring). ``ids`` are the keys in order, ``lists`` the fields that differ
    between items (a list each, ``ids`` among them), ``consts`` the fields all items share;
    ``index`` maps each id to its position (built when first needed when not given);
    ``kinds`` optionally numbers the items, 0, 1, ... in the order of their first item, so
    that items of one number agree on every field but their own (an instruction's id, label
    and position; see :func:`kind_codes`)."""

    __slots__ = ("_cls", "_ids", "_lists", "_consts", "_index", "_kinds", "_kind_numbers",
                 "_ends", "_some", "_dict")

    def __init__(self, cls, ids: list, lists: dict, consts: dict, index: dict | None = None,
                 kinds: list | None = None, ends: tuple | None = None):
        self._cls, self._ids, self._lists, self._consts = cls, ids, lists, consts
        self._index, self._kinds, self._ends = index, kinds, ends
        self._kind_numbers: tuple | None = None  # kind_codes' answer, once worked out
        self._some: dict = {}  # items made one at a time, by position
        self._dict: dict | None = None      # every item, once made

    # -- the columns ---------------------------------------------------------------------------
    @property
    def is_made(self) -> bool:
        """Whether every item has been made (the table is then its dict)."""
        return self._dict is not None

    def _index_of(self) -> dict:
        index = self._index
        if index is None:
            index = self._index = dict(zip(self._ids, range(len(self._ids))))
        return index

    def _position(self, key) -> int:
        return self._index_of()[key]

    def _columns(self):
        """(ids, lists, consts) while the items are not all made, else None. Taken in one
        read, so a thread making the items meanwhile cannot leave a caller half of them."""
        state = self._ids, self._lists, self._consts
        if state[1] is None or self._dict is not None:
            return None
        return state

    def _at(self, position: int):
        """The item at ``position``, made now if it was not."""
        d = self._dict
        if d is not None:
            return list(d.values())[position]
        obj = self._some.get(position)
        if obj is None:
            with _MAKING:
                if self._dict is not None:
                    return list(self._dict.values())[position]
                obj = self._some.get(position)
                if obj is None:  # the columns are there: the dict was checked under the lock
                    lists = self._lists
                    obj = self._some[position] = make_instances(
                        self._cls, 1, {k: (v[position],) for k, v in lists.items()},
                        self._consts)[0]
        return obj

    def plain(self) -> dict:
        """The dict of every item (made now, keeping the items made before)."""
        d = self._dict
        if d is not None:
            return d
        with _MAKING:
            cols = self._columns()
            if cols is None:  # another thread made them meanwhile
                assert self._dict is not None
                return self._dict
            ids, lists, consts = cols
            some = self._some
            if len(some) == len(ids):  # every item already made, one at a time
                objs = list(map(some.__getitem__, range(len(ids))))
            else:
                objs = make_instances(self._cls, len(ids), lists, consts)
                for position, obj in some.items():
                    objs[position] = obj
            d = dict(zip(ids, objs))
            self._dict = d
            # the columns go (the ids stay: a list of the keys, which the dict holds anyway)
            self._lists = self._consts = None  # type: ignore[assignment]  # columns dropped
            self._kinds = self._kind_numbers = self._index = self._ends = None
            self._some = {}
        return d

    # -- Mapping -------------------------------------------------------------------------------
    def __getitem__(self, key):
        d = self._dict
        if d is not None:
            return d[key]
        return self._at(self._position(key))

    def get(self, key, default=None):
        d = self._dict
        if d is not None:
            return d.get(key, default)
        try:
            position = self._position(key)
        except KeyError:
            return default
        return self._at(position)

    def __contains__(self, key) -> bool:
        d = self._dict
        if d is not None:
            return key in d
        return key in self._index_of()

    def __iter__(self):
        d = self._dict
        return iter(d) if d is not None else iter(self._ids)

    def __len__(self) -> int:
        d = self._dict
        return len(d) if d is not None else len(self._ids)

    def keys(self):
        d = self._dict
        if d is not None:
            return d.keys()
        return _Keys(self)  # a live view, as a dict's: it follows the table once made

    def __reversed__(self):
        d = self._dict
        return reversed(d) if d is not None else reversed(self._ids)

    def values(self):
        return self.plain().values()

    def items(self):
        return self.plain().items()

    def copy(self) -> dict:
        return dict(self.plain())

    def __eq__(self, other):
        if isinstance(other, ItemTable):
            other = other.plain()
        return self.plain() == other if isinstance(other, Mapping) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a mutable mapping: unhashable, like dict

    def __repr__(self) -> str:
        return repr(self.plain())

    def __reduce__(self):
        return dict, (self.plain(),)

    # -- written to directly: the dict is made and changed ------------------------------------
    def __setitem__(self, key, value):
        self.plain()[key] = value

    def __delitem__(self, key):
        del self.plain()[key]

    def update(self, *args, **kw):
        self.plain().update(*args, **kw)

    def pop(self, key, *default):
        return self.plain().pop(key, *default)

    def setdefault(self, key, default=None):
        return self.plain().setdefault(key, default)

    def popitem(self):
        return self.plain().popitem()

    def clear(self):
        self.plain().clear()

    def __or__(self, other):
        return self.plain() | other

    def __ror__(self, other):
        return other | self.plain()


class _Keys(KeysView):
    """The keys of an :class:`ItemTable`: a dict's own keys view of its index while the items
    are not made, of its dict after (so a view kept across a change sees it); set operations
    are those of the dict view, in C."""

    __slots__ = ()

    def _now(self):
        table = self._mapping
        d = table._dict
        return d.keys() if d is not None else table._index_of().keys()

    def __contains__(self, key):
        return key in self._now()

    def __iter__(self):
        return iter(self._now())

    def __reversed__(self):
        return reversed(self._now())

    def __len__(self):
        return len(self._now())

    def isdisjoint(self, other):
        return self._now().isdisjoint(other)

    def __repr__(self):
        return f"{type(self).__name__}({list(self)!r})"


def _delegate(name):
    def op(self, other):
        return getattr(self._now(), name)(other._now() if isinstance(other, _Keys) else other)
    op.__name__ = name
    return op


for _name in ("__and__", "__rand__", "__or__", "__ror__", "__sub__", "__rsub__", "__xor__",
              "__rxor__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
    setattr(_Keys, _name, _delegate(_name))


def plain(table) -> dict:
    """The dict of ``table``'s items: ``table`` itself when it is a dict."""
    return table.plain() if table.__class__ is ItemTable else table


def _values(table) -> list:
    return list(table.values())


def columns(table, names) -> list:
    """A list per field name, each holding that field of every item in order. The lists may
    be the table's own: read them, do not change them."""
    cols = table._columns() if table.__class__ is ItemTable else None
    if cols is None:
        items = _values(table)
        return [list(map(attrgetter(name), items)) for name in names]
    ids, lists, consts = cols
    n = len(ids)
    return [lists[name] if name in lists else [consts[name]] * n for name in names]


def values_of(table, name: str, keys) -> list:
    """Field ``name`` of the items with ids ``keys`` (a list), in that order; a table read
    from a file makes no item for it."""
    if table.__class__ is ItemTable:
        cols = table._columns()
        if cols is not None:
            _, lists, consts = cols
            positions = list(map(table._index_of().__getitem__, keys))
            if name in lists:
                return list(map(lists[name].__getitem__, positions))
            return [consts[name]] * len(positions)
        table = table.plain()
    return list(map(attrgetter(name), map(table.__getitem__, keys)))


def id_positions(table) -> dict | None:
    """Each id's position, when a table read from a file already holds it (else None: the
    caller makes its own dict)."""
    if table.__class__ is ItemTable and not table.is_made:
        return table._index
    return None


def end_positions(edges, instructions):
    """``(sources, targets)``: the position in ``instructions`` of each edge's ends, lists in
    the edges' order, when the edges were read from a file with them and neither table has
    been made into its dict since (a change would have made it: the positions then still
    hold); else None, and the caller looks the ends up."""
    if edges.__class__ is ItemTable and edges._dict is None and edges._ends is not None:
        table, sources, targets = edges._ends
        if table is instructions and table._dict is None:
            return sources, targets
    return None


def item_at(table):
    """A function from a position to the item there (made alone when not made yet)."""
    if table.__class__ is ItemTable and not table.is_made:
        return table._at
    return _values(plain(table)).__getitem__


def kind_codes(table, signature):
    """``(codes, firsts)``: a number per item (an int array) such that items of one number
    have the same ``signature(item)``, numbered 0, 1, ... in the order of their first item,
    and the position of each number's first item.

    ``signature`` must depend only on what items of one kind of a file share (for the
    instructions, every field but id, label and position): a table read from a file numbers
    its items by kind without reading them, and kinds finer than ``signature``'s are as good
    for a caller that works out each number's result on its first item."""
    kept = table.__class__ is ItemTable and not table.is_made
    if kept and table._kind_numbers is not None:  # (the counts, the accesses and the
        codes, firsts = table._kind_numbers       # bound each ask: worked out once)
        return codes, list(firsts)
    codes = table._kinds if kept else None
    if codes is None:
        # each item's signature hashed once: ``setdefault`` gives it the position of the
        # first item of its kind, which np.unique turns into codes 0, 1, ... in that order
        items = _values(table)
        first_of = np.fromiter(map({}.setdefault, map(signature, items), count()), np.intp,
                               len(items))
        firsts, codes = np.unique(first_of, return_inverse=True)
        return codes.astype(np.intp, copy=False).reshape(-1), firsts.tolist()
    codes = np.array(codes, dtype=np.intp)
    codes.flags.writeable = False  # (shared by every caller)
    firsts = np.unique(codes, return_index=True)[1].tolist() if codes.size else []
    table._kind_numbers = codes, tuple(firsts)
    return codes, firsts
