"""Learned models in the user's device database (migration m007): store, list, read,
export and merge — the one module that knows the ``learned_models`` table.

A stored model is the model file's JSON (gpumodeler.core.learn.model_file) kept as data,
with its SHA-256, its training data (GPUs, kernels, rows, digest), the measurement files it
was fitted on (name and SHA-256 of each) and its origin (``user``: fitted here;
``imported``: merged from a shared file). Every read goes through the validating loader, so
a damaged or hostile row is refused like a hostile file.

Sharing, as calibrations are shared (calibration_sharing.py): :func:`export_models` writes a
JSON file of the models; :func:`merge_models` compares it with the user's models by name —
the same content is nothing, a new name is added, and the same name with other content is
a conflict resolved with ``mine`` (keep mine, the default), ``theirs`` (replace mine) or
``both`` (keep mine, add theirs under ``NAME (imported N)``). Nothing is overwritten unless
the resolution says so, and the merge is one transaction.

A conflict answered ``mine`` is remembered as device merges remember theirs (migration m006,
table ``declined_conflicts``, field :data:`DECLINED_FIELD`, keyed by the model's name and the
SHA-256 of the version of theirs declined), in the merge's transaction: importing the same
content again reports it as ``declined`` (kept mine, declined before) instead of a new
conflict; other content under that name is a conflict again. An explicit ``theirs`` or
``both`` still applies to a declined one (the flag is the user's answer now; the record
only stops the question), and a dry run records nothing.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from datetime import datetime, timezone

from gpumodeler.core.errors import FormatError

from .errors import DeviceEditError

EXPORT_FORMAT = "gpumodeler-learned-models"
RESOLUTIONS = ("mine", "theirs", "both")
#: the ``field`` of a declined learned model in ``declined_conflicts`` (device fields are
#: device field names, so the two never meet)
DECLINED_FIELD = "learned model"
MAX_NAME = 200
_COLUMNS = ("name", "method", "features", "model", "model_sha256", "training_digest", "gpus",
            "kernels", "rows", "measurements", "origin", "created", "note")


@dataclass(frozen=True)
class StoredModel:
    """One stored learned model and its provenance (``model``: the model file's JSON text)."""

    name: str
    method: str
    features: str
    model: str
    model_sha256: str
    training_digest: str
    gpus: tuple
    kernels: tuple
    rows: int
    measurements: tuple  # ({"name", "sha256"}, ...)
    origin: str
    created: str
    note: str = ""

    def load(self):
        """The validated LearnedModel (FormatError when the stored JSON is not one)."""
        from gpumodeler.core.learn.model_file import model_from_text  # lazy: numpy
        model = model_from_text(self.model)
        if hashlib.sha256(self.model.encode()).hexdigest() != self.model_sha256:
            raise FormatError(f"learned model {self.name!r}: its stored digest does not match "
                              f"its content (damaged); fit or import it again")
        return model

    def to_json(self) -> dict:
        return {"name": self.name, "method": self.method, "features": self.features,
                "model": json.loads(self.model), "model_sha256": self.model_sha256,
                "training_digest": self.training_digest, "gpus": list(self.gpus),
                "kernels": list(self.kernels), "rows": self.rows,
                "measurements": [dict(m) for m in self.measurements], "origin": self.origin,
                "created": self.created, "note": self.note}


def stored_from_text(name: str | None, text: str, measurements=(), origin: str = "user",
                     created: str | None = None, note: str = "") -> StoredModel:
    """A StoredModel of a model file's text, validated first (FormatError otherwise)."""
    from gpumodeler.core.learn.model_file import model_from_text, model_to_text  # lazy: numpy
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
        raise DeviceEditError(f"a learned model's name must be 1 to {MAX_NAME} characters")
    model = model_from_text(text)
    canonical = model_to_text(model)
    t = model.training
    return StoredModel(name.strip(), model.method, model.features, canonical,
                       hashlib.sha256(canonical.encode()).hexdigest(), t["digest"],
                       tuple(t["gpus"]), tuple(t["kernels"]), int(t["rows"]),
                       tuple({"name": str(m["name"]), "sha256": str(m["sha256"])} for m in measurements),
                       origin, created or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                       note or "")


def has_table(db) -> bool:
    return db is not None and db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                                         "name = 'learned_models'").fetchone() is not None


def _row(s: StoredModel) -> tuple:
    return (s.name, s.method, s.features, s.model, s.model_sha256, s.training_digest,
            json.dumps(list(s.gpus)), json.dumps(list(s.kernels)), s.rows,
            json.dumps([dict(m) for m in s.measurements]), s.origin, s.created, s.note)


def _from_row(r) -> StoredModel:
    return StoredModel(r[0], r[1], r[2], r[3], r[4], r[5], tuple(json.loads(r[6])),
                       tuple(json.loads(r[7])), int(r[8]), tuple(json.loads(r[9])), r[10], r[11],
                       r[12] or "")


def _read(db) -> dict[str, StoredModel]:
    if not has_table(db):
        return {}
    rows = db.execute(f"SELECT {', '.join(_COLUMNS)} FROM learned_models ORDER BY name").fetchall()
    return {r[0]: _from_row(r) for r in rows}


def _write(db, stored: StoredModel) -> None:
    db.execute("DELETE FROM learned_models WHERE name = ?", [stored.name])
    db.execute(f"INSERT INTO learned_models ({', '.join(_COLUMNS)}) VALUES "
               f"({', '.join('?' * len(_COLUMNS))})", _row(stored))


def list_models(catalog) -> list[StoredModel]:
    """The user's stored models, by name."""
    return list(_read(catalog.user_db).values())


def get_model(catalog, name: str) -> StoredModel:
    found = _read(catalog.user_db)
    if name not in found:
        raise DeviceEditError(f"no learned model named {name!r} (stored: "
                              f"{', '.join(found) or 'none'}); see gpumodeler learn list")
    return found[name]


def save_model(catalog, stored: StoredModel, replace: bool = False) -> StoredModel:
    """Store ``stored`` in the user database (one transaction); a name already used is
    refused unless ``replace``."""
    with catalog.writing():
        db = catalog.user_for_write()
        with db.atomic():
            if stored.name in _read(db) and not replace:
                raise DeviceEditError(f"a learned model named {stored.name!r} is stored already; "
                                      f"give another name or --replace")
            _write(db, stored)
    return stored


def export_models(catalog, names=None) -> str:
    """The JSON text of a file with the user's models (all, or those named)."""
    found = _read(catalog.user_db)
    if names:
        missing = [n for n in names if n not in found]
        if missing:
            raise DeviceEditError(f"no learned model named {missing[0]!r} (stored: "
                                  f"{', '.join(found) or 'none'})")
        found = {n: found[n] for n in names}
    return json.dumps({"format": EXPORT_FORMAT, "version": 1,
                       "models": [s.to_json() for s in found.values()]}, indent=1) + "\n"


def read_export(text: str) -> list[StoredModel]:
    """The models of an exported file, each validated (FormatError otherwise)."""
    try:
        doc = json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(
            FormatError(f"learned models file: {c} is not a number JSON allows")))
    except FormatError:
        raise
    except (ValueError, RecursionError) as exc:
        raise FormatError(f"learned models file: not valid JSON ({str(exc)[:80]})") from None
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT or doc.get("version") != 1:
        raise FormatError(f"not a gpumodeler learned models file (\"format\" must be "
                          f"{EXPORT_FORMAT!r}, version 1)")
    models = doc.get("models")
    if not isinstance(models, list) or len(models) > 10_000:
        raise FormatError("learned models file: \"models\" must be a list of at most 10000 models")
    out = []
    for k, m in enumerate(models):
        if not isinstance(m, dict) or not isinstance(m.get("model"), dict):
            raise FormatError(f"learned models file: model {k} must be an object with a \"model\"")
        meas = m.get("measurements", [])
        if not isinstance(meas, list) or not all(isinstance(x, dict) and isinstance(x.get("name"), str)
                                                 and isinstance(x.get("sha256"), str) for x in meas):
            raise FormatError(f"learned models file: model {k}'s measurements must be "
                              f"[{{\"name\", \"sha256\"}}, ...]")
        created, note = m.get("created"), m.get("note", "")
        out.append(stored_from_text(m.get("name"), json.dumps(m["model"]), meas, "imported",
                                    created if isinstance(created, str) else None,
                                    note if isinstance(note, str) else ""))
    return out


@dataclass(frozen=True)
class MergeLine:
    name: str
    action: str  # same, added, kept-mine, declined (kept mine before), replaced, added-as
    shown_as: str


def merge_models(catalog, text: str, resolution: str = "mine", dry_run: bool = False) -> list[MergeLine]:
    """Merge an exported file's models into the user's (module docstring); one transaction."""
    if resolution not in RESOLUTIONS:
        raise DeviceEditError(f"resolution must be one of {', '.join(RESOLUTIONS)}, got {resolution!r}")
    theirs = read_export(text)
    mine = _read(catalog.user_db)
    declined = _declined(catalog.user_db)
    plan, writes, declining = [], [], []
    taken = set(mine)
    for s in theirs:
        have = mine.get(s.name)
        if have is None:
            plan.append(MergeLine(s.name, "added", s.name))
            writes.append(s)
            taken.add(s.name)
        elif have.model_sha256 == s.model_sha256:
            plan.append(MergeLine(s.name, "same", s.name))
        elif resolution == "mine" and (s.name, s.model_sha256) in declined:
            plan.append(MergeLine(s.name, "declined", s.name))
        elif resolution == "mine":
            plan.append(MergeLine(s.name, "kept-mine", s.name))
            declining.append((s.name, DECLINED_FIELD, s.model_sha256))
        elif resolution == "theirs":
            plan.append(MergeLine(s.name, "replaced", s.name))
            writes.append(s)
        else:
            k = 1
            while f"{s.name} (imported {k})" in taken:
                k += 1
            new = f"{s.name} (imported {k})"
            taken.add(new)
            plan.append(MergeLine(s.name, "added-as", new))
            writes.append(replace(s, name=new))
    if (writes or declining) and not dry_run:
        now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        with catalog.writing():
            db = catalog.user_for_write()
            with db.atomic():
                for s in writes:
                    _write(db, s)
                db.conn.executemany("INSERT OR IGNORE INTO declined_conflicts (device, field, "
                                    "theirs_digest, declined) VALUES (?, ?, ?, ?)",
                                    [(*key, now) for key in declining])
    return plan


def _declined(db) -> set[tuple[str, str]]:
    """(name, SHA-256 of theirs) of the learned models whose conflict was answered "keep
    mine" (none in a file older than the table)."""
    if db is None or db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                                "name = 'declined_conflicts'").fetchone() is None:
        return set()
    return {(r[0], r[1]) for r in db.execute(
        "SELECT device, theirs_digest FROM declined_conflicts WHERE field = ?", [DECLINED_FIELD])}
