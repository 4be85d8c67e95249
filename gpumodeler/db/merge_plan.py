"""What a merge writes, decided before anything is written (sharing.merge_file writes it).

New devices are copied by SQL from their file; devices that change kind, shipped devices
copied to the user database and devices compared whole are merged in memory
(merge.merged_device) and written whole; every other device (the common case) is merged
field by field straight into the writes it needs: the fields that take records, each
rewritten in place (store.rewrite_fields), and the device digest patched (digests.py).
Both ways follow the rules of merge.py and write the same rows and digests
(tests/db/test_sharing_at_scale.py checks a merge against rewriting every device whole).
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from .comparison import Comparison, raw_device
from .digests import entry_in, field_entry, head_part, parts, patched
from .errors import UnresolvedConflicts
from .mapping import aliases_to_json, normalize_name
from .merge import ALIASES, FAMILY, KIND, THEIRS, merged_aliases, merged_records, \
    conflict_message, merged_device, remap_sources, resolved_choices, taken_fields
from .schema import backing_file, reading
from .store import RawDevice, read_records


def _whole(db, entries, renamed=None) -> dict[int, RawDevice]:
    """devices row id -> the whole device, for the given DeviceEntry rows of ``db``."""
    stored = read_records(db, {e.id: None for e in entries})
    return {e.id: remap_sources(raw_device(e, stored[e.id].values), renamed or {})
            for e in entries}


class MergePlan:
    """What a merge writes: whole devices (new ones, kind changes, shipped devices copied to
    the user database, devices compared whole) and field rewrites of user devices."""

    def __init__(self):
        self.whole: list[tuple[str, RawDevice, bool, bool, str | None]] = []
        self.rewrites: list[tuple] = []
        self.heads: list[tuple] = []
        self.digests: dict[int, str] = {}
        self.expected: dict[int, str] = {}     # user device id -> digest when compared
        self.absent: list[str] = []            # names that must still be free
        self.copied: list[str] = []            # new devices copied file to file, in SQL
        self.copy_from: Path | None = None     # ... from this file (their database,
        self.copy_named: Path | None = None    # ... or its private copy: named so)
        self.renamed: Mapping[str, str] = {}   # ... with these source keys renamed

    def __bool__(self):
        return bool(self.whole or self.digests or self.copied)


def plan_writes(cmp: Comparison, resolve, theirs_db, catalog, path) -> MergePlan:
    """Decide every write; raises UnresolvedConflicts listing every open conflict first."""
    plan = MergePlan()
    merged, open_ = {}, []
    new_keys, kind_swaps, from_shipped = [], [], []
    mine, theirs, mine_entries, user = cmp.mine, cmp.theirs, cmp.mine_entries, catalog.user_db
    whole, renamed, theirs_entries = cmp.whole, cmp.renamed, cmp.theirs_entries
    for change in cmp.report.devices:
        status = change.status
        if status == "new":
            new_keys.append(normalize_name(change.name))
        elif status == "changed" or status == "conflicting":
            key = normalize_name(change.name)
            db, entry = mine_entries[key]
            if db is user and key not in whole and not (
                    status == "conflicting" and any(c.field == KIND for c in change.conflicts)):
                # The common case, field by field: planned in one pass. (Every other device
                # is written whole, so it must hold every field: only those in ``whole``,
                # or read whole below, do.)
                open_ += _plan_fields(plan, entry, mine[key], cmp.mine_stored[key],
                                      theirs[key], change, resolve,
                                      None if renamed else theirs_entries[key].digest)
                continue
            try:
                device = merged_device(mine[key], theirs[key], change, resolve)
            except UnresolvedConflicts as exc:
                open_.extend(exc.conflicts)
                continue
            if device is not None:
                merged[key] = (change, device)
                # Devices written whole need all their records (read below): kind changes
                # (a kind field is always a conflict) and shipped devices copied here.
                if status == "conflicting" and any(c.field == KIND for c in change.conflicts):
                    kind_swaps.append(key)
                if mine_entries[key][0] is not user:
                    from_shipped.append(key)
    if open_:
        raise UnresolvedConflicts(conflict_message(open_), open_)

    swapped, shipped_keys = set(kind_swaps), set(from_shipped)     # asked once per device
    # New devices are copied by SQL from their file when theirs_db reads it (not an upgraded
    # in-memory copy of an older file, whose schema the file does not have).
    plan.copy_from, plan.copy_named = backing_file(theirs_db), path
    if plan.copy_from is not None:
        plan.copied, plan.renamed, read_new = new_keys, cmp.renamed, []
        plan.absent.extend(new_keys)
    else:
        read_new = new_keys
    with reading(path):
        theirs_whole = _whole(theirs_db, [cmp.theirs_entries[k] for k in read_new + kind_swaps],
                              cmp.renamed)
    shipped_whole = (_whole(catalog.shipped_db, [cmp.mine_entries[k][1] for k in from_shipped
                                               if k not in swapped])
                     if from_shipped and catalog.shipped_db is not None else {})

    for key in read_new:
        t = cmp.theirs_entries[key]
        device = theirs_whole[t.id]
        reuse = not cmp.renamed and parts(t.digest) is not None   # copied unchanged
        plan.whole.append((key, device, True, False, t.digest if reuse else None))
        plan.absent.append(key)
    expected = plan.expected
    for key, (change, device) in merged.items():
        # Written whole: kind changes, shipped devices copied here, devices compared whole.
        db, entry = mine_entries[key]
        shipped = key in shipped_keys
        if not shipped and entry.digest is not None:
            expected[entry.id] = entry.digest
        if key in swapped:
            their_entry = theirs_entries[key]
            device = merged_device(mine[key], theirs_whole[their_entry.id], change, resolve)
        elif shipped:
            device = merged_device(shipped_whole[entry.id], theirs[key], change, resolve)
        if device is not None:  # None: mine stays as it is
            plan.whole.append((key, device, False, shipped, None))
    return plan


def _plan_fields(plan: MergePlan, entry, mine: RawDevice, stored, theirs: RawDevice,
                 change, resolve, their_digest: str | None) -> list:
    """Plan the field rewrites of one user device merged field by field (no kind change,
    both digests list their fields); returns the conflicts ``resolve`` leaves open (then
    nothing is planned for it).

    The same rules as merge.merged_device, applied straight to the writes: each field
    that takes records gets them rewritten (rewrite_fields) unless they come out as they
    were, and the device digest is patched. A field taken as theirs, records for records,
    takes their digest entry with it (``their_digest``: None when their records were given
    other source keys); other fields' entries are computed. A device none of whose fields
    takes anything is left alone (no digest, no timestamp)."""
    choices, open_ = resolved_choices(change, resolve)
    if open_:
        return open_
    mine_values, theirs_values = mine.values, theirs.values
    aliases, family = mine.aliases, mine.family
    entries, rewrites, device_id = {}, plan.rewrites, entry.id
    touched = False
    for name, take in taken_fields(change, choices):
        touched = True
        if name == ALIASES:
            aliases = merged_aliases(aliases, theirs.aliases)
            continue
        if name == FAMILY:
            family = theirs.family
            continue
        before = mine_values.get(name)
        records = merged_records(before, theirs_values[name], take)
        if records == before:
            continue
        rewrites.append((device_id, name, records, stored))
        if take == THEIRS and their_digest is not None:
            entries[name] = entry_in(their_digest, name) or field_entry(name, records)
        else:
            entries[name] = field_entry(name, records)
    if not touched:
        return open_
    plan.expected[device_id] = entry.digest
    head = None
    if aliases != tuple(mine.aliases) or family != mine.family:
        plan.heads.append((aliases_to_json(aliases), family, device_id))
        head = head_part(mine.kind, family, aliases)
    plan.digests[device_id] = patched(entry.digest, head, entries)
    return open_
