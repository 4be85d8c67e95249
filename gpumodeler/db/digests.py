"""Device digests (``devices.content_hash``) that say which fields differ, not only whether.

A digest is ``f1/<head>,<field>:<digest>,<field>:<digest>...``: ``head`` digests the kind,
family and aliases; each field entry digests that field's records in row order (default
flag included), and entries are sorted so the text depends only on the content. So:

- equal digests: identical devices (what comparisons always relied on);
- differing digests: the entries that are not on both sides name the only fields that can
  differ, so a comparison loads those fields' records and nothing else;
- a merge that rewrites some fields patches their entries instead of re-reading the device.

Each part is 64 bits of BLAKE2b: a false "same field" needs a 2^-64 collision. Field names
other than ``[A-Za-z0-9_.-]`` are percent-encoded, so "," and ":" only ever separate.
Digests of any other form (NULL, or the plain device digest gpumodeler 0.1 wrote) still
mean "identical" when equal; devices that have one are compared record by record.
"""
from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from typing import Iterable, Mapping
from urllib.parse import quote, unquote

PREFIX = "f1/"
_HEX = 16                       # 64-bit digests, as hex
_HEAD_END = len(PREFIX) + _HEX  # the head part is PREFIX + 16 hex characters
_PLAIN = re.compile(r"[A-Za-z0-9_.\-]+\Z")
IS_DEFAULT = 6                  # position of the default flag in a raw record


def _hex(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


@lru_cache(maxsize=4096)
def field_key(name: str) -> str:
    """A field name as written in a digest (percent-encoded unless plain)."""
    return name if _PLAIN.match(name) else quote(name, safe="")


def field_name(key: str) -> str:
    return unquote(key) if "%" in key else key


def field_entry(name: str, records: Iterable[tuple]) -> str:
    """``field:digest`` for one field's raw records, in order."""
    flag = IS_DEFAULT
    records = records if type(records) is list else list(records)
    for r in records:
        if type(r[flag]) is not int or not (r[flag] == 0 or r[flag] == 1):
            # A bool (or other truthy) flag is written as the 0 or 1 stored.
            records = [r[:flag] + ((1 if r[flag] else 0),) + r[flag + 1:] for r in records]
            break
    text = repr(records)
    return f"{field_key(name)}:{_hex(text)}"


def head_part(kind: str, family: str | None, aliases) -> str:
    return PREFIX + _hex(repr((kind, family, json.dumps(list(aliases), ensure_ascii=False))))


def device_digest(kind: str, family: str | None, aliases,
                  values: Mapping[str, list[tuple]]) -> str:
    """The digest of a device: everything it says except name, origin and timestamps.
    A field without records is not stored, so it does not count."""
    entries = sorted(field_entry(f, rs) for f, rs in values.items() if rs)
    return ",".join([head_part(kind, family, aliases), *entries])


def parts(digest: str | None) -> list[str] | None:
    """The head and field entries of a digest of this form; None for any other."""
    if digest is None or not digest.startswith(PREFIX):
        return None
    return digest.split(",")


def differing_fields(mine: list[str], theirs: list[str]) -> set[str]:
    """Names of the fields whose entries differ between two parsed digests (a field on one
    side only differs too). Heads are compared separately."""
    cut = -_HEX - 1
    if len(mine) == len(theirs):
        # Usually both have the same fields: entries then pair up in order.
        odd = [(a, b) for a, b in zip(mine[1:], theirs[1:]) if a != b]
        if all(a[:cut] == b[:cut] for a, b in odd):
            return {field_name(a[:cut]) for a, _ in odd}
    differing = set(mine).symmetric_difference(theirs)
    differing.discard(mine[0])
    differing.discard(theirs[0])
    return {field_name(e[:cut]) for e in differing}


def entry_in(digest: str, name: str) -> str | None:
    """The entry of field ``name`` in a digest of this form, or None."""
    marker = "," + field_key(name) + ":"
    at = digest.find(marker)
    return None if at < 0 else digest[at + 1:at + len(marker) + _HEX]


#: From how many entries patched finds them by one split of the digest rather than a
#: search of its text each (a device most of whose 30 fields a merge rewrote).
_MANY_ENTRIES = 8


def patched(digest: str, head: str | None, entries: Mapping[str, str]) -> str:
    """``digest`` (of this form) with its head and the entries of some fields replaced or
    added: the digest of the device after a merge rewrote those fields."""
    if head is not None:
        digest = head + digest[_HEAD_END:]
    if len(entries) >= _MANY_ENTRIES:
        split = _patched_split(digest, entries)
        if split is not None:
            return split
    added, spans = [], []
    for name, entry in entries.items():
        at = digest.find("," + field_key(name) + ":")
        if at < 0:
            added.append(entry)
        else:     # an entry of the same field has the same length: replaced in place
            spans.append((at + 1, entry))
    if spans:
        spans.sort()
        pieces: list[str] = []
        last = 0
        for start, entry in spans:
            pieces += (digest[last:start], entry)
            last = start + len(entry)
        pieces.append(digest[last:])
        digest = "".join(pieces)
    if added:
        head_text, *rest = digest.split(",")
        digest = ",".join([head_text, *sorted(rest + added)])
    return digest


def _patched_split(digest: str, entries: Mapping[str, str]) -> str | None:
    """patched's answer for many entries, the digest split once: each entry replaces the
    first part that starts with its field's key and a colon (where the search for
    ",key:" finds it), and the entries of fields it lacks are added in sorted order.
    None when an entry would not replace a part of its own length (a digest another
    program wrote), which the search then handles as it always has."""
    pieces = digest.split(",")
    first: dict[str, int] = {}
    for i in range(len(pieces) - 1, 0, -1):         # the first of a key wins
        piece = pieces[i]
        colon = piece.find(":")
        if colon >= 0:
            first[piece[:colon]] = i
    added = []
    for name, entry in entries.items():
        at = first.get(field_key(name))
        if at is None:
            added.append(entry)
        elif len(pieces[at]) == len(entry):
            pieces[at] = entry
        else:
            return None
    if added:
        pieces[1:] = sorted(pieces[1:] + added)
    return ",".join(pieces)
