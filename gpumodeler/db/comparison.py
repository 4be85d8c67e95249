"""Comparing two sets of stored devices while reading as few records as possible.

The rules (what is identical, mine, theirs or a conflict) are merge.py's; this module only
decides what to read. Per device, from the devices rows alone:

- only theirs has it                          -> new (no records read)
- equal digests, citing no renamed source     -> identical (no records read)
- different kinds                             -> a kind conflict (no records read)
- both digests list their fields (digests.py) -> read the fields whose entries differ,
                                                 plus those citing a renamed source
- otherwise (no digest, or an older form)     -> read every field of both

A field whose entries are equal holds the same records on both sides, so merge.compare_device
given just the fields read reports exactly what it reports given whole devices.
"""
from __future__ import annotations

from collections import defaultdict
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping


from gpumodeler.core.kernel.collector import collector_paused

from .digests import differing_fields, parts
from .mapping import aliases_from_json
from .merge import MergeReport, compare, remap_sources
from .store import DeviceEntry, RawDevice, StoredFields, citing_fields, read_records

if TYPE_CHECKING:
    from .sqlite_read import Database


@dataclass
class Comparison:
    """A report, and what was read to make it (what a merge then writes from).

    ``mine``/``theirs``: the devices that differ, each holding only the fields read
    (every field for the keys in ``whole``); ``mine_stored``: where mine's fields are
    stored. ``mine_entries`` maps every key of mine to (its database, its devices row).
    """

    report: MergeReport
    mine: dict[str, RawDevice]
    theirs: dict[str, RawDevice]
    mine_stored: dict[str, StoredFields]
    whole: set[str]
    mine_entries: Mapping[str, tuple[Database, DeviceEntry]]
    theirs_entries: Mapping[str, DeviceEntry]
    renamed: Mapping[str, str] = field(default_factory=dict)


def raw_device(entry: DeviceEntry, values: dict[str, list[tuple]], aliases=None) -> RawDevice:
    return RawDevice(entry.kind, entry.name,
                     aliases if aliases is not None else aliases_from_json(entry.aliases),
                     entry.family, entry.origin, values, entry.created, entry.modified)


def _plan(mine, theirs, recheck):
    """(identical, new, {key: fields to read, or None for all of them}, keys of the
    devices with half their fields or more to read)."""
    identical, new, plan, dense = [], [], {}, set()
    for key, t in theirs.items():
        own = mine.get(key)
        if own is None:
            new.append((t.name, t.kind))
            continue
        m = own[1]
        cited = recheck.get(t.id)
        if cited is None and m.digest is not None and m.digest == t.digest:
            identical.append((m.name, m.kind))
        elif m.kind != t.kind:
            plan[key] = set()
        else:
            mp, tp = parts(m.digest), parts(t.digest)
            if mp is None or tp is None:
                plan[key] = None
            else:
                fields = plan[key] = differing_fields(mp, tp) | (cited or set())
                if 2 * len(fields) >= max(len(mp), len(tp)) - 1:
                    dense.add(key)
    return identical, new, plan, dense


def compare_stored(mine: Mapping[str, tuple[Database, DeviceEntry]],
                   theirs_db: Database, theirs: Mapping[str, DeviceEntry], *,
                   renamed: Mapping[str, str], mine_label: str, theirs_label: str,
                   with_missing: bool = False,
                   guard: Callable[[Database], object] | None = None,
                   for_merge: bool = False) -> Comparison:
    """Compare devices keyed by normalized name: ``mine`` may span several databases
    (user over shipped), ``theirs`` is one. ``renamed``: their source keys that get a new
    key here (merge.plan_sources). ``with_missing`` reports the devices only mine has.
    ``guard(db)`` is a context manager wrapping every read of ``db``. ``for_merge``: also
    read where mine's records are stored (Comparison.mine_stored)."""
    def reading(db):
        return guard(db) if guard is not None else nullcontext()

    with reading(theirs_db):
        recheck = citing_fields(theirs_db, renamed) if renamed else {}
    identical, new, plan, dense = _plan(mine, theirs, recheck)

    # Read per database: mine's devices may live in the user or the shipped database.
    databases: dict[int, Database] = {}
    wanted_mine: dict[int, dict] = defaultdict(dict)
    scan_mine: dict[int, list] = defaultdict(list)
    wanted_theirs, scan_theirs = {}, []
    for key, fields in plan.items():
        if fields is not None and not fields:
            continue
        db, m = mine[key]
        databases[id(db)] = db
        wanted_mine[id(db)][m.id] = fields
        wanted_theirs[theirs[key].id] = fields
        if key in dense:
            scan_mine[id(db)].append(m.id)
            scan_theirs.append(theirs[key].id)
    stored_mine: dict[int, dict[int, StoredFields]] = {}
    for db_key, wanted in wanted_mine.items():
        with reading(databases[db_key]):
            stored_mine[db_key] = read_records(databases[db_key], wanted,
                                               positions=for_merge, scan=scan_mine[db_key])
    with reading(theirs_db):
        stored_theirs = (read_records(theirs_db, wanted_theirs, scan=scan_theirs)
                         if wanted_theirs else {})

    mine_devices, theirs_devices, mine_stored = {}, {}, {}
    empty: dict = {}
    for key in plan:
        db, m = mine[key]
        t = theirs[key]
        stored = stored_mine.get(id(db), empty).get(m.id) or StoredFields()
        their_stored = stored_theirs.get(t.id)
        aliases = aliases_from_json(m.aliases)
        mine_devices[key] = RawDevice(m.kind, m.name, aliases, m.family, m.origin,
                                      stored.values, m.created, m.modified)
        mine_stored[key] = stored
        theirs_device = RawDevice(
            t.kind, t.name, aliases if t.aliases == m.aliases else aliases_from_json(t.aliases),
            t.family, t.origin, their_stored.values if their_stored is not None else {},
            t.created, t.modified)
        theirs_devices[key] = remap_sources(theirs_device, renamed) if renamed else theirs_device
    missing = ([(e.name, e.kind) for key, (_, e) in mine.items() if key not in theirs]
               if with_missing else ())
    report = compare(mine_devices, theirs_devices, mine_label=mine_label,
                     theirs_label=theirs_label, identical=identical, missing=missing,
                     new=new, renamed=renamed)
    return Comparison(report, mine_devices, theirs_devices, mine_stored,
                      {k for k, f in plan.items() if f is None}, mine, theirs, dict(renamed))


@contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while a comparison builds its report: some
    300 000 acyclic objects (rows, records, field changes) for 25 000 changed fields, and
    every collection on the way walks them all again (60% of the comparison's time).

    ``collector_paused`` moves the survivors straight to the oldest generation before the
    collector is on again (unless the program froze objects of its own), so the next
    allocation does not start a young collection over everything made while paused
    (0.08 s of a 28 000-field merge)."""
    with collector_paused():
        yield
