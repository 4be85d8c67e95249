"""Comparing device databases and merging one into another without losing anyone's work.

There is no common ancestor to compare against, so the value records themselves carry the
history: an edit adds a record (the old ones stay, as non-default) rather than overwriting.
For each field, with unknown placeholders set aside:

- the same records on both sides                         -> identical
- theirs are a subset of mine (mine added to them)       -> keep mine  (status "mine")
- mine are a subset of theirs, or mine are only unknown  -> take theirs (status "theirs")
- anything else, or the same records with another default -> a conflict

So when two people edit copies of one database, an edit made on one side only is taken
automatically and only a field both changed differently is a conflict. A default the user
chose is never changed silently: for a user copy of a shipped device, the shipped default
is the one mine started from; when mine's default is another (the user picked it) and
theirs adds records with yet another default, the field is a conflict, with a ``reason``
(sharing.py). A device with no shipped counterpart has no such ancestor: there a default
moved by theirs is taken as their edit. A conflict is resolved per field: ``mine``, ``theirs`` or ``both`` (the records of both sides kept, mine
stays the default). A merge with an unresolved conflict raises UnresolvedConflicts before
writing anything. Devices are never deleted by a merge; aliases are united.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from operator import itemgetter
from typing import Callable, Iterable, Mapping

from .errors import UnresolvedConflicts
from .mapping import IS_DEFAULT, VALUE_COLUMNS, content, normalize_name, record_from_raw
from .records import ValueRecord
from .store import RawDevice

MINE, THEIRS, BOTH = "mine", "theirs", "both"
#: A conflict the user answered "keep mine" in an earlier merge, theirs being the same
#: version then: reported, not asked again, and merged as mine.
DECLINED = "declined"
CHOICES = (MINE, THEIRS, BOTH)
# Device attributes compared like fields; they hold one value, so "both" is not possible.
KIND, FAMILY, ALIASES = "kind", "family", "aliases"
SINGLE_VALUED = (KIND, FAMILY)


class _computed_once:
    """functools.cached_property without the lock it takes on every first access before
    Python 3.12 (a merge asks 10 000 devices for their conflicts): the value is computed
    and kept in the instance's __dict__, which then answers every later access."""

    def __init__(self, compute):
        self.compute, self.name = compute, compute.__name__
        self.__doc__ = compute.__doc__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.compute(instance)
        return value


class Records(Sequence):
    """The ValueRecords of one side of a field change, made from the raw records when first
    used: a report of 25 000 changed fields holds some 70 000 records, and most callers
    look at a few (the conflicts shown) or none (counts). Equal to the tuple of them."""

    __slots__ = ("_raws", "_records")

    def __init__(self, raws: Iterable[tuple]):
        self._raws = tuple(raws)
        self._records: tuple[ValueRecord, ...] | None = None

    def _all(self) -> tuple[ValueRecord, ...]:
        if self._records is None:
            self._records = tuple(map(record_from_raw, self._raws))
        return self._records

    def __getitem__(self, index):
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._raws)

    @property
    def raws(self) -> tuple:
        """The raw records, as read (no ValueRecord made)."""
        return self._raws

    def __iter__(self):
        return iter(self._all())

    def __eq__(self, other) -> bool:
        if isinstance(other, Records):
            return self._all() == other._all()
        if isinstance(other, tuple):
            return self._all() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return repr(self._all())


@dataclass(frozen=True)
class FieldChange:
    """How one field (or the kind, family or aliases) of a device differs.

    ``status`` is "mine" (mine has all of theirs and more: kept), "theirs" (theirs has all
    of mine and more: taken) or "conflict". ``mine``/``theirs`` are the ValueRecords of
    each side (Records, which compare like tuples), or strings for kind, family and aliases.
    ``reason``: why a field is a conflict when the records alone would not make it one.
    """

    device: str
    field: str
    status: str
    mine: Sequence
    theirs: Sequence
    reason: str = ""

    def to_dict(self) -> dict:
        def side(items):
            return [record_to_dict(r) if isinstance(r, ValueRecord) else r for r in items]
        out = {"device": self.device, "field": self.field, "status": self.status,
               "mine": side(self.mine), "theirs": side(self.theirs)}
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class DeviceChange:
    """One device in a comparison: new, missing (only mine), identical, changed or
    conflicting, with the fields that differ."""

    name: str
    kind: str
    status: str
    fields: tuple[FieldChange, ...] = ()

    @_computed_once
    def conflicts(self) -> tuple[FieldChange, ...]:
        # Kept once made (fields is a tuple): a merge asks every device several times.
        return tuple(f for f in self.fields if f.status == "conflict")

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "status": self.status,
                "fields": [f.to_dict() for f in self.fields]}


@dataclass(frozen=True)
class MergeReport:
    """The comparison of "theirs" (a file being imported, or ``b`` of a diff) with "mine".

    ``renamed_sources`` maps a source key of theirs whose citation differs from mine to the
    key it gets here, so neither citation is lost. ``applied`` is True once merged.
    """

    mine: str
    theirs: str
    devices: tuple[DeviceChange, ...]
    renamed_sources: Mapping[str, str] = field(default_factory=dict)
    applied: bool = False
    #: Rows of theirs refused (damaged, or what `calibrate --save` would not store), one
    #: line each naming the file, table, row and what is valid; never merged.
    problems: tuple[str, ...] = ()

    def with_status(self, status: str) -> list[DeviceChange]:
        return [d for d in self.devices if d.status == status]

    @property
    def new(self):
        return self.with_status("new")

    @property
    def identical(self):
        return self.with_status("identical")

    @property
    def changed(self):
        return self.with_status("changed")

    @property
    def conflicting(self):
        return self.with_status("conflicting")

    @property
    def missing(self):
        return self.with_status("missing")

    @property
    def conflicts(self) -> list[FieldChange]:
        return [c for d in self.devices for c in d.conflicts]

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in ("new", "changed", "conflicting", "identical", "missing",
                              DECLINED)}
        for d in self.devices:
            out[d.status] += 1
        return out

    def to_dict(self) -> dict:
        return {"mine": self.mine, "theirs": self.theirs, "applied": self.applied,
                "counts": self.counts(), "renamed_sources": dict(self.renamed_sources),
                "problems": list(self.problems),
                "devices": [d.to_dict() for d in self.devices if d.status != "identical"],
                "identical": [d.name for d in self.identical]}


def record_to_dict(record: ValueRecord) -> dict:
    return {"value": record.value, "unit": record.unit, "source": record.source,
            "where": record.where, "provenance": record.provenance, "note": record.note,
            "is_default": record.is_default, "source_text": record.source_text}


def describe_records(records) -> str:
    """'1253000000 Hz (user, default) | 1178000000 Hz (vendor)' for messages."""
    parts = []
    for r in records:
        if not isinstance(r, ValueRecord):
            parts.append(str(r))
            continue
        value = "unknown" if r.value is None else f"{r.value} {r.unit}"
        tags = [t for t in (r.provenance, "default" if r.is_default else None) if t]
        parts.append(f"{value} ({', '.join(tags)})" if tags else value)
    return " | ".join(parts) or "absent"


# --- comparison -----------------------------------------------------------------------

def _known(raws):
    return [r for r in raws if r[0] is not None]


def default_content(raws):
    """The content of the default among raw records (the first when none is marked)."""
    return _default_content(raws)


def _default_content(raws):
    for r in raws:
        if r[IS_DEFAULT]:
            return content(r)
    return content(raws[0]) if raws else None


#: A raw record's content (all but the default flag) in one C call: the same tuple as
#: mapping.content, without its two slices and their concatenation (a merge of 27 000
#: changed fields makes some 120 000 of them).
_content = itemgetter(*(i for i in range(len(VALUE_COLUMNS)) if i != IS_DEFAULT))


def compare_field(mine: list[tuple], theirs: list[tuple]) -> str | None:
    """None (same), "mine", "theirs" or "conflict" for two lists of raw records."""
    if mine == theirs:
        return None
    if not theirs:
        return MINE
    if not mine:
        return THEIRS
    known_m = [r for r in mine if r[0] is not None]
    known_t = [r for r in theirs if r[0] is not None]
    if not known_t:
        return None if not known_m and set(map(content, mine)) == set(
            map(content, theirs)) else MINE
    if not known_m:
        return THEIRS
    set_m = set(map(_content, known_m))
    set_t = set(map(_content, known_t))
    if set_m == set_t:
        return None if _default_content(known_m) == _default_content(known_t) else "conflict"
    if set_t < set_m:
        return MINE
    if set_m < set_t:
        return THEIRS
    return "conflict"


_records = Records
_new_object = object.__new__


def _field_change(device: str, field_name: str, status: str, mine: Records,
                  theirs: Records) -> FieldChange:
    """FieldChange(device, field_name, status, mine, theirs), its attributes set in one
    step: the frozen dataclass's __init__ sets them one by one through object.__setattr__,
    twice the time, for each of some 27 000 changed fields of a large merge."""
    change = _new_object(FieldChange)
    change.__dict__.update(device=device, field=field_name, status=status, mine=mine,
                           theirs=theirs, reason="")
    return change


def _device_change(name: str, kind: str, status: str, fields: tuple = ()) -> DeviceChange:
    """DeviceChange(name, kind, status, fields), set in one step as _field_change does: a
    comparison of 10 000 devices makes one for each."""
    change = _new_object(DeviceChange)
    change.__dict__.update(name=name, kind=kind, status=status, fields=fields)
    return change


def compare_device(mine: RawDevice, theirs: RawDevice) -> DeviceChange:
    name = mine.name
    if mine.kind != theirs.kind:
        return DeviceChange(name, mine.kind, "conflicting", (
            FieldChange(name, KIND, "conflict", (mine.kind,), (theirs.kind,)),))
    changes = []
    if mine.family != theirs.family:
        status = (THEIRS if mine.family is None else MINE if theirs.family is None
                  else "conflict")
        changes.append(FieldChange(name, FAMILY, status, (mine.family,), (theirs.family,)))
    mine_aliases: set[str] = set()
    their_aliases: set[str] = set()
    if mine.aliases != theirs.aliases:
        mine_aliases = {normalize_name(a) for a in mine.aliases}
        their_aliases = {normalize_name(a) for a in theirs.aliases}
    if mine_aliases != their_aliases:
        changes.append(FieldChange(name, ALIASES, THEIRS if their_aliases - mine_aliases
                                   else MINE, mine.aliases, theirs.aliases))
    mine_values, their_values = mine.values, theirs.values
    if mine_values != their_values:
        empty: list = []
        mine_get, their_get = mine_values.get, their_values.get
        for field_name in list(mine_values) + [f for f in their_values
                                               if f not in mine_values]:
            m, t = mine_get(field_name, empty), their_get(field_name, empty)
            field_status = compare_field(m, t)
            if field_status is not None:
                changes.append(_field_change(name, field_name, field_status, _records(m),
                                             _records(t)))
    if not changes:
        return _device_change(name, mine.kind, "identical")
    status = "conflicting" if any(c.status == "conflict" for c in changes) else "changed"
    return _device_change(name, mine.kind, status, tuple(changes))


def plan_sources(mine: Mapping[str, str], theirs: Mapping[str, str]) -> dict[str, str]:
    """Their source keys whose citation differs from mine, mapped to a fresh key, or to
    the key ``KEY~N`` mine already holds their citation under (the same file merged
    before): a fresh key each time made every record citing it differ again, and merging
    the same file twice conflicted, or with "both" doubled the records."""
    renamed = {}
    taken = set(mine) | set(theirs)
    for key in sorted(theirs):
        if key in mine and mine[key] != theirs[key]:
            n = 2
            while f"{key}~{n}" in taken and mine.get(f"{key}~{n}") != theirs[key]:
                n += 1
            renamed[key] = f"{key}~{n}"
            taken.add(renamed[key])
    return renamed


def remap_sources(device: RawDevice, renamed: Mapping[str, str]) -> RawDevice:
    if not renamed:
        return device
    values = {f: [(r[:2] + (renamed.get(r[2], r[2]),) + r[3:]) for r in rs]
              for f, rs in device.values.items()}
    return RawDevice(device.kind, device.name, device.aliases, device.family, device.origin,
                     values, device.created, device.modified)


def _name_key(change: DeviceChange) -> str:
    return normalize_name(change.name)


def compare(mine: Mapping[str, RawDevice], theirs: Mapping[str, RawDevice], *,
            mine_label: str = "mine", theirs_label: str = "theirs",
            identical: Iterable[tuple[str, str]] = (), missing: Iterable[tuple[str, str]] = (),
            new: Iterable[tuple[str, str]] = (),
            renamed: Mapping[str, str] | None = None) -> MergeReport:
    """Compare devices keyed by normalized name; theirs' records must already use the
    source keys of ``renamed``. ``identical``, ``missing`` and ``new`` are (name, kind) of
    devices known to be identical (equal digests), only in mine or only in theirs, which
    need no records. The devices compared may hold only some fields, provided both sides
    hold the same ones and every field left out is the same on both sides."""
    made = _device_change
    changes = [made(name, kind, "identical") for name, kind in identical]
    changes += [made(name, kind, "missing") for name, kind in missing]
    changes += [made(name, kind, "new") for name, kind in new]
    for key, dev in theirs.items():
        own = mine.get(key)
        changes.append(made(dev.name, dev.kind, "new") if own is None
                       else compare_device(own, dev))
    changes.sort(key=_name_key)
    return MergeReport(mine_label, theirs_label, tuple(changes), dict(renamed or {}))


# --- resolutions ----------------------------------------------------------------------

Resolver = Callable[[str, str], "str | None"]


def make_resolver(report: MergeReport, resolutions: Mapping | None = None,
                  policy: str | None = None) -> Resolver:
    """A function (device, field) -> choice, from nested ``{device: {field: choice}}``
    resolutions ("*" matches any device or field; device names are case-insensitive) and
    a ``policy`` for every conflict they leave open. A resolution naming a device or field
    that has no conflict is an error, because it is almost always a typo."""
    table: dict[tuple[str, str], str] = {}
    for device, per_field in (resolutions or {}).items():
        if isinstance(per_field, str):
            per_field = {"*": per_field}
        if not isinstance(per_field, Mapping):
            raise UnresolvedConflicts(
                f"resolutions for '{device}' must map fields to one of {', '.join(CHOICES)}")
        for field_name, choice in per_field.items():
            if choice not in CHOICES:
                raise UnresolvedConflicts(
                    f"resolution for {device}.{field_name} is {choice!r}; choose one of "
                    f"{', '.join(CHOICES)}")
            dev_key = "*" if device == "*" else normalize_name(device)
            table[(dev_key, field_name)] = choice
    if policy is not None and policy not in CHOICES:
        raise UnresolvedConflicts(f"policy {policy!r}: choose one of {', '.join(CHOICES)}")
    conflicts = ({(normalize_name(c.device), c.field) for c in report.conflicts}
                 if table else set())
    stray = [f"{d}.{f}" for d, f in table
             if not any((d in ("*", cd)) and (f in ("*", cf)) for cd, cf in conflicts)]
    if stray:
        listed = ", ".join(f"{c.device}.{c.field}" for c in report.conflicts) or "none"
        raise UnresolvedConflicts(
            f"resolution(s) for {', '.join(stray)} match no conflict (conflicts: {listed})")

    if not table:
        def resolve_all(device: str, field_name: str) -> str | None:
            return policy
        return resolve_all

    def resolve(device: str, field_name: str) -> str | None:
        d = normalize_name(device)
        for key in ((d, field_name), (d, "*"), ("*", field_name), ("*", "*")):
            if key in table:
                return table[key]
        return policy
    return resolve


def changes_default(change: FieldChange) -> bool:
    """True when taking theirs for ``change`` (status "theirs") would make another of
    mine's known records, or a new one, the default instead of mine's known default."""
    mine = _known(change.mine._raws if isinstance(change.mine, Records) else ())
    theirs = _known(change.theirs._raws if isinstance(change.theirs, Records) else ())
    return bool(mine) and _default_content(mine) != _default_content(theirs)


def as_default_conflict(change: FieldChange, reason: str) -> FieldChange:
    return FieldChange(change.device, change.field, "conflict", change.mine, change.theirs,
                       reason)


def with_conflicts(report: MergeReport, made: Mapping[tuple[str, str], str]) -> MergeReport:
    """``report`` with the fields ``made`` names ((device name, field) -> reason) turned
    into conflicts, and their devices into conflicting ones."""
    if not made:
        return report
    devices = []
    for d in report.devices:
        if not any((d.name, c.field) in made for c in d.fields):
            devices.append(d)
            continue
        fields_ = tuple(as_default_conflict(c, made[(d.name, c.field)])
                        if (d.name, c.field) in made else c for c in d.fields)
        devices.append(DeviceChange(d.name, d.kind, "conflicting", fields_))
    return replace(report, devices=tuple(devices))


def declined_digest(change: FieldChange) -> str:
    """The digest of their side of a conflict, as "keep mine" declines it: the field and
    their records (or value, for kind, family and aliases), default flags included."""
    import hashlib
    theirs = change.theirs._raws if isinstance(change.theirs, Records) else tuple(change.theirs)
    return hashlib.sha256(repr((change.field, tuple(theirs))).encode("utf-8")).hexdigest()


def declined_key(change: FieldChange) -> tuple[str, str, str]:
    """(device name_lower, field, digest of theirs) of a conflict, as declined_conflicts
    keeps it."""
    return normalize_name(change.device), change.field, declined_digest(change)


def with_declined(report: MergeReport, declined) -> MergeReport:
    """``report`` with each conflict the user declined before (its :func:`declined_key` in
    ``declined``) marked DECLINED instead: no longer a conflict, merged as mine. A device
    left with nothing but declined fields is DECLINED; one with other differences is
    conflicting or changed as those make it."""
    if not declined:
        return report
    devices = []
    for d in report.devices:
        if not any(declined_key(c) in declined for c in d.conflicts):
            devices.append(d)
            continue
        fields_ = tuple(replace(c, status=DECLINED)
                        if c.status == "conflict" and declined_key(c) in declined else c
                        for c in d.fields)
        status = ("conflicting" if any(f.status == "conflict" for f in fields_) else
                  "changed" if any(f.status != DECLINED for f in fields_) else DECLINED)
        devices.append(DeviceChange(d.name, d.kind, status, fields_))
    return replace(report, devices=tuple(devices))


def conflict_message(conflicts, limit: int = 8) -> str:
    shown = [f"{c.device}.{c.field} (mine {describe_records(c.mine)}; theirs "
             f"{describe_records(c.theirs)}{'; ' + c.reason if c.reason else ''})"
             for c in conflicts[:limit]]
    more = f"; and {len(conflicts) - limit} more" if len(conflicts) > limit else ""
    return (f"{len(conflicts)} unresolved conflict(s): {'; '.join(shown)}{more}. "
            f"Choose per field: mine, theirs or both")


def resolved_choices(change: DeviceChange, resolve: Resolver) -> tuple[dict, list]:
    """({field: the choice ``resolve`` makes for its conflict}, the conflicts it leaves
    open: no choice, or ``both`` for a field that holds one value)."""
    choices, open_ = {}, []
    for c in change.conflicts:
        choice = resolve(change.name, c.field)
        if choice is None or (choice == BOTH and c.field in SINGLE_VALUED):
            open_.append(c)
        choices[c.field] = choice
    return choices, open_


def taken_fields(change: DeviceChange, choices: Mapping[str, str]):
    """(field, THEIRS or BOTH) for each field of ``change`` that takes something of
    theirs: a field only they changed, or a conflict not resolved as mine."""
    for c in change.fields:
        status = c.status
        if status == THEIRS:
            yield c.field, THEIRS
        elif status == "conflict":
            take = choices.get(c.field)
            if take != MINE:
                yield c.field, take


def merged_aliases(mine: tuple, theirs) -> tuple:
    """Mine, then theirs that mine does not hold (compared as normalised names)."""
    have = {normalize_name(a) for a in mine}
    return tuple(mine) + tuple(a for a in theirs if normalize_name(a) not in have)


def merged_records(kept: list | None, taken, take: str) -> list:
    """A field's records after taking ``taken`` (theirs): THEIRS replaces mine; BOTH keeps
    mine (and its default) and adds theirs' other records, none of them default."""
    if take == THEIRS:
        return list(taken)
    flag = IS_DEFAULT
    kept = kept or []
    have = set(map(_content, kept))
    return kept + [r[:flag] + (0,) + r[flag + 1:] for r in taken if _content(r) not in have]


def merged_device(mine: RawDevice, theirs: RawDevice, change: DeviceChange,
                  resolve: Resolver) -> RawDevice | None:
    """Mine with theirs merged in per ``change``; None when mine stays as it is.
    Raises UnresolvedConflicts for a conflict ``resolve`` leaves open."""
    choices, open_ = resolved_choices(change, resolve)
    if open_:
        raise UnresolvedConflicts(conflict_message(open_), open_)
    if choices.get(KIND) == THEIRS:
        return RawDevice(theirs.kind, mine.name, theirs.aliases, theirs.family, mine.origin,
                         {f: list(rs) for f, rs in theirs.values.items()})
    if KIND in choices:
        return None
    values = dict(mine.values)      # a field changed gets a new list; mine's stay as they are
    aliases, family = tuple(mine.aliases), mine.family
    touched = False
    for name, take in taken_fields(change, choices):
        touched = True
        if name == ALIASES:
            aliases = merged_aliases(aliases, theirs.aliases)
        elif name == FAMILY:
            family = theirs.family
        else:
            values[name] = merged_records(values.get(name), theirs.values[name], take)
    if not touched:
        return None
    return RawDevice(mine.kind, mine.name, aliases, family, mine.origin, values,
                     mine.created, mine.modified)


def plan_merge(mine: Mapping[str, RawDevice], theirs: Mapping[str, RawDevice],
               report: MergeReport, resolve: Resolver) -> list[tuple[str, RawDevice, bool]]:
    """(name_lower, device to write, is_new) for every device the merge writes; raises
    UnresolvedConflicts listing every open conflict before anything is written."""
    writes, open_ = [], []
    for change in report.devices:
        key = normalize_name(change.name)
        if change.status == "new":
            writes.append((key, theirs[key], True))
        elif change.status in ("changed", "conflicting"):
            try:
                merged = merged_device(mine[key], theirs[key], change, resolve)
            except UnresolvedConflicts as exc:
                open_.extend(exc.conflicts)
                continue
            if merged is not None:
                writes.append((key, merged, False))
    if open_:
        raise UnresolvedConflicts(conflict_message(open_), open_)
    return writes
