"""Calibrations in the device database: the ``calibrations`` table (migration m005) and its
mapping to :class:`Calibration` values — the one module that knows its columns.

A calibration belongs to a device: a link model to a link (``kind`` "link", ``subject`` the
direction htod/dtoh), a λ to a GPU (``kind`` "kernel", ``subject`` the kernel's name). The
``label`` is the user's: the memory kind (pageable, pinned) or an application. Several
calibrations with one (kind, subject, label) are kept, like a field's value records: a new
fit is added and becomes the current one, the earlier ones stay (nothing is overwritten),
so merging two databases can tell "theirs adds to mine" from a conflict.

Provenance travels with each row: the measurement file's name and sha256, the date, the
parameters, the residuals and the errors (in-sample MAPE, leave-one-out mean and median).
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterable, Mapping


from gpumodeler.core.errors import InvalidParameter, shown

from .errors import DeviceEditError
from .mapping import normalize_name
from .store import device_row

if TYPE_CHECKING:
    from .sqlite_read import Database


CALIBRATION_KINDS = ("link", "kernel")
#: The device kind each calibration kind belongs to.
DEVICE_KIND = {"link": "link", "kernel": "gpu"}
# Row columns in raw-tuple order (everything but id and device_id).
CAL_COLUMNS = ("kind", "subject", "label", "parameters", "residuals", "mape_percent",
               "loo_mape", "loo_median_ape", "measurements_name", "measurements_sha256",
               "created", "note", "is_current")
IS_CURRENT = CAL_COLUMNS.index("is_current")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Calibration:
    """One fitted link model or kernel λ with its provenance (see the module docstring).

    ``parameters``: the model (TransferModel.to_dict() for links, {"lambda": λ} for kernels);
    ``residuals``: one object per measurement (size or launch, measured, predicted,
    relative residual). Errors in percent."""

    device: str
    kind: str
    subject: str
    label: str
    parameters: Mapping
    residuals: tuple = ()
    mape_percent: float | None = None
    loo_mape: float | None = None
    loo_median_ape: float | None = None
    measurements_name: str = ""
    measurements_sha256: str = ""
    created: str = ""
    note: str | None = None
    is_current: bool = True

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.subject, self.label)

    def describe(self) -> str:
        """One line for lists and conflict messages."""
        what = (f"λ = {self.parameters.get('lambda'):.4g}" if self.kind == "kernel"
                else f"{len(self.parameters.get('regimes', []))} regime(s), startup "
                     f"{self.parameters.get('startup_s', 0) * 1e6:.3g} µs")
        err = f", LOO {self.loo_mape:.3g} %" if self.loo_mape is not None else ""
        return (f"{what}{err} from {self.measurements_name} "
                f"(sha256 {self.measurements_sha256[:12]}, {self.created})"
                + (" [current]" if self.is_current else ""))

    def to_dict(self) -> dict:
        return {"device": self.device, "kind": self.kind, "subject": self.subject,
                "label": self.label, "parameters": dict(self.parameters),
                "residuals": list(self.residuals), "mape_percent": self.mape_percent,
                "loo_mape": self.loo_mape, "loo_median_ape": self.loo_median_ape,
                "measurements_name": self.measurements_name,
                "measurements_sha256": self.measurements_sha256, "created": self.created,
                "note": self.note, "is_current": self.is_current}


def check_calibration(cal: Calibration, device_kind: str | None = None) -> None:
    """DeviceEditError naming what is wrong with a calibration about to be stored: the rule
    `calibrate --save` and every merge apply (check_raw_calibration). ``device_kind``: the
    kind of the device it belongs to, when known (a λ belongs to a GPU, a link model to a
    link)."""
    if cal.kind not in CALIBRATION_KINDS:
        raise DeviceEditError(f"calibration kind must be one of {', '.join(CALIBRATION_KINDS)}, "
                              f"got {shown(cal.kind)}")
    for name in ("subject", "label", "measurements_name", "created"):
        if not isinstance(getattr(cal, name), str) or not getattr(cal, name).strip():
            raise DeviceEditError(f"a calibration needs a non-empty {name} (text)")
    if device_kind is not None and device_kind != DEVICE_KIND[cal.kind]:
        raise DeviceEditError(f"'{cal.device}' is a {device_kind}; a {cal.kind} calibration "
                              f"belongs to a {DEVICE_KIND[cal.kind]}")
    if cal.kind == "link" and cal.subject not in ("htod", "dtoh"):
        raise DeviceEditError(f"a link calibration's direction must be htod or dtoh, got "
                              f"{shown(cal.subject)}")
    if not isinstance(cal.measurements_sha256, str) or not _SHA256.match(cal.measurements_sha256):
        raise DeviceEditError("measurements_sha256 must be 64 lowercase hex digits (sha256 of "
                              "the file)")
    if not isinstance(cal.parameters, Mapping) or not cal.parameters:
        raise DeviceEditError("a calibration needs its parameters (a non-empty object)")
    _check_parameters(cal.kind, cal.parameters)
    for name in ("mape_percent", "loo_mape", "loo_median_ape"):
        v = getattr(cal, name)
        if v is not None and not (isinstance(v, (int, float)) and not isinstance(v, bool)
                                  and math.isfinite(v) and v >= 0):
            raise DeviceEditError(f"{name} must be a percentage >= 0 (or empty), got {shown(v)}")
    if cal.note is not None and not isinstance(cal.note, str):
        raise DeviceEditError(f"a calibration's note must be text (or empty), got "
                              f"{shown(cal.note)}")
    if cal.is_current not in (True, False):
        raise DeviceEditError(f"is_current must be 0 or 1, got {shown(cal.is_current)}")


def _check_parameters(kind: str, parameters: Mapping) -> None:
    """A link's parameters must be a transfer model predict can use, a kernel's a λ > 0."""
    if kind == "link":
        from gpumodeler.core.transfers.models import TransferModel
        try:
            TransferModel.from_dict(parameters)
        except InvalidParameter as exc:
            raise DeviceEditError(f"a link calibration's parameters must be a transfer "
                                  f"model: {exc}") from None
        return
    lam = parameters.get("lambda")
    if not (isinstance(lam, (int, float)) and not isinstance(lam, bool) and math.isfinite(lam)
            and lam > 0):
        raise DeviceEditError(f"a kernel calibration's parameters need \"lambda\", a number "
                              f"> 0, got {shown(lam)}")


def check_raw_calibration(raw: tuple, device: str, device_kind: str | None = None
                          ) -> Calibration:
    """The Calibration a stored row (CAL_COLUMNS order) holds, checked by the same rule as
    check_calibration; DeviceEditError naming the column for a row that breaks it (JSON
    that does not parse, text where a number belongs, a list for an object...)."""
    if len(raw) != len(CAL_COLUMNS):
        raise DeviceEditError(f"a calibration row has {len(raw)} columns, not {len(CAL_COLUMNS)}")
    d = dict(zip(CAL_COLUMNS, raw))
    for name, what in (("parameters", dict), ("residuals", list)):
        text = d[name]
        try:
            value = json.loads(text) if isinstance(text, str) else None
        except (ValueError, RecursionError):
            value = None
        if not isinstance(value, what):
            kind = "an object" if what is dict else "a list"
            raise DeviceEditError(f"column {name} must be {kind} in JSON, got {shown(text, 60)}")
        d[name] = value
    if d["is_current"] not in (0, 1) or isinstance(d["is_current"], float):
        raise DeviceEditError(f"column is_current must be 0 or 1, got {shown(d['is_current'])}")
    d["is_current"] = bool(d["is_current"])
    d["residuals"] = tuple(d["residuals"])
    cal = Calibration(device=device, **d)
    check_calibration(cal, device_kind)
    raw_from_calibration(cal)       # what saving writes: finite JSON values only (no NaN)
    return cal


def _json(value) -> str:
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise DeviceEditError(f"a calibration's parameters and residuals must be finite JSON "
                              f"values ({exc})") from None


def raw_from_calibration(cal: Calibration) -> tuple:
    return (cal.kind, cal.subject, cal.label, _json(dict(cal.parameters)),
            _json(list(cal.residuals)), cal.mape_percent, cal.loo_mape, cal.loo_median_ape,
            cal.measurements_name, cal.measurements_sha256, cal.created, cal.note,
            1 if cal.is_current else 0)


def calibration_from_raw(device: str, raw: tuple) -> Calibration:
    d = dict(zip(CAL_COLUMNS, raw))
    d["parameters"] = json.loads(d["parameters"])
    d["residuals"] = tuple(json.loads(d["residuals"]))
    d["is_current"] = bool(d["is_current"])
    return Calibration(device=device, **d)


def content(raw: tuple) -> tuple:
    """Everything but the current flag: two rows with equal content are one calibration."""
    return raw[:IS_CURRENT] + raw[IS_CURRENT + 1:]


def has_table(db: Database) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                      "name = 'calibrations'").fetchone() is not None


_SELECT = ", ".join(f"c.{c}" for c in CAL_COLUMNS)


def read_calibrations(db: Database, names_lower: Iterable[str] | None = None
                      ) -> dict[str, tuple[str, list[tuple]]]:
    """name_lower -> (device name, raw rows in stored order), for the devices named (all by
    default) that have calibrations."""
    if db is None or not has_table(db):
        return {}
    where, params = "", []
    if names_lower is not None:
        where, params = (" WHERE d.name_lower IN (SELECT value FROM json_each(?))",
                         [json.dumps(sorted(set(names_lower)))])
    out: dict[str, tuple[str, list[tuple]]] = {}
    for row in db.execute(f"SELECT d.name_lower, d.name, {_SELECT} FROM calibrations c "
                          f"JOIN devices d ON d.id = c.device_id{where} "
                          f"ORDER BY d.name_lower, c.id", params).fetchall():
        out.setdefault(row[0], (row[1], []))[1].append(tuple(row[2:]))
    return out


def replace_calibrations(db: Database, device_id: int, key: tuple | None,
                         raws: Iterable[tuple]) -> None:
    """Give a device's calibrations of ``key`` (kind, subject, label; None: all of them)
    the rows ``raws``. Inside the caller's transaction."""
    if key is None:
        db.execute("DELETE FROM calibrations WHERE device_id = ?", [device_id])
    else:
        db.execute("DELETE FROM calibrations WHERE device_id = ? AND kind = ? AND subject = ? "
                   "AND label = ?", [device_id, *key])
    db.conn.executemany(
        f"INSERT INTO calibrations (device_id, {', '.join(CAL_COLUMNS)}) VALUES "
        f"(?, {', '.join('?' * len(CAL_COLUMNS))})", [(device_id, *r) for r in raws])


# --- through the catalog --------------------------------------------------------------

def save_calibration(catalog, cal: Calibration) -> Calibration:
    """Store ``cal`` for its device (a shipped device is first copied to the user
    database, as any edit) as the current calibration of its (kind, subject, label); the
    earlier ones stay as non-current. One transaction. Returns it as stored."""
    check_calibration(cal)
    with catalog.writing():
        return _save(catalog, cal)


def _save(catalog, cal: Calibration) -> Calibration:
    summary = catalog.resolve(cal.device)
    cal = replace(cal, device=summary.name, is_current=True)
    check_calibration(cal, summary.kind)
    new = raw_from_calibration(cal)          # every check before the first write
    # The user copy of a shipped device and the calibration: one transaction.
    with catalog.user_for_write().atomic():
        _, db = catalog.editable(summary.name)
        device_id = device_row(db, normalize_name(summary.name))["id"]
        have = read_calibrations(db, [normalize_name(summary.name)])
        rows = [r for r in have.get(normalize_name(summary.name), ("", []))[1]
                if tuple(r[:3]) == cal.key]
        kept = [r[:IS_CURRENT] + (0,) + r[IS_CURRENT + 1:] for r in rows
                if content(r) != content(new)]
        replace_calibrations(db, device_id, cal.key, kept + [new])
    return cal


def list_calibrations(catalog, device: str | None = None,
                      kind: str | None = None) -> list[Calibration]:
    """Stored calibrations (of one device, one kind), user database over shipped."""
    if kind is not None and kind not in CALIBRATION_KINDS:
        raise DeviceEditError(f"calibration kind must be one of {', '.join(CALIBRATION_KINDS)}, "
                              f"got {kind!r}")
    names = None
    if device is not None:
        names = [normalize_name(catalog.resolve(device).name)]
    found: dict[str, tuple[str, list[tuple]]] = {}
    for _, db in reversed(catalog.layers()):       # shipped first, the user's shadow it
        found.update(read_calibrations(db, names))
    return [calibration_from_raw(name, r) for _, (name, rows) in sorted(found.items())
            for r in rows if kind is None or r[0] == kind]


def current_calibration(catalog, device: str, kind: str, subject: str,
                        label: str) -> Calibration | None:
    """The current calibration of (device, kind, subject, label), or None."""
    for cal in list_calibrations(catalog, device, kind):
        if cal.key == (kind, subject, label) and cal.is_current:
            return cal
    return None


def calibrated_link_spec(catalog, link: str, label: str, base=None,
                         directions=("htod", "dtoh")):
    """The core LinkSpec of ``link`` (or ``base``, e.g. with overrides applied) carrying
    the current calibrations labelled ``label`` of the given directions as transfer models:
    what predict uses for those directions instead of eq. 5.5. DeviceEditError when the
    link has no calibration of that label."""
    from dataclasses import replace as replace_spec

    from gpumodeler.core.transfers.models import TransferModel
    cals = [c for c in list_calibrations(catalog, link, "link")
            if c.is_current and c.label == label]
    if not cals:
        labels = sorted({c.label for c in list_calibrations(catalog, link, "link")})
        raise DeviceEditError(f"no calibration labelled {label!r} for link {link!r} "
                              f"(stored: {', '.join(labels) or 'none'}); see "
                              "gpumodeler calibrate list")
    spec = base if base is not None else catalog.get(link).to_link_spec()
    models = tuple((c.subject, TransferModel.from_dict(c.parameters)) for c in cals
                   if c.subject in directions)
    return replace_spec(spec, transfer_models=models)
