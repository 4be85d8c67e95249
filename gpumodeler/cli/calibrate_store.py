"""`calibrate link|kernel --save [--label L]` and `calibrate list`: the calibration store
(db/calibrations.py) from the command line."""
from __future__ import annotations

from pathlib import Path

from . import common
from .calibrate_link import file_digest
from .main import CLIError


def add_save_flags(p, device_flag: str) -> None:
    g = p.add_argument_group("store the result in your device database")
    g.add_argument("--save", action="store_true",
                   help=f"store the fit as the current calibration of {device_flag} NAME")
    g.add_argument("--label", metavar="L",
                   help="what the calibration is for: a memory kind (pageable, pinned) or an "
                        "application (default: the memory kind, or 'default')")


def check_save_flags(args, device_attr: str, device_flag: str) -> None:
    """Refuse --label without --save, and --save without the device, before any fit."""
    if args.label is not None and not args.save:
        raise CLIError("--label only applies with --save")
    if args.label is not None and not args.label.strip():
        raise CLIError("--label must not be empty (e.g. pageable, pinned, or an application name)")
    if args.save and not getattr(args, device_attr, None):
        raise CLIError(f"--save needs {device_flag} NAME: the device in your database the "
                       "calibration belongs to")


def _store(cal) -> dict:
    from gpumodeler.db.calibrations import save_calibration
    with common.open_catalog() as catalog:
        saved = save_calibration(catalog, cal)
        where = str(catalog.user_path)
    return {"device": saved.device, "kind": saved.kind, "subject": saved.subject,
            "label": saved.label, "database": where}


def save_link(args, out: dict, fit) -> dict:
    from gpumodeler.db.calibrations import Calibration  # lazy: the database only to save
    from gpumodeler.db.schema import utc_timestamp
    label = (args.label or out["memory_kind"] or "default").strip()
    residuals = [{k: r[k] for k in ("size_bytes", "measured_s", "predicted_s",
                                    "relative_residual", "loo_relative_error")}
                 for r in out["residuals"]]
    cal = Calibration(args.link, "link", out["direction"], label, out["parameters"],
                      tuple(residuals), out["mape_percent"], out["loo_mape"],
                      out["loo_median_ape"], Path(args.measurements).name,
                      file_digest(args.measurements), utc_timestamp(),
                      note="; ".join(out["notes"]) or None)
    return _store(cal)


def save_kernel(args, out: dict) -> dict:
    from gpumodeler.db.calibrations import Calibration  # lazy: the database only to save
    from gpumodeler.db.schema import utc_timestamp
    # the GPU's catalog name: --device resolved, or the project launch's GPU
    cal = Calibration(out["gpu"], "kernel", args.kernel, (args.label or "default").strip(),
                      out["parameters"], tuple(out["residuals"]), out["mape_percent"],
                      out["loo_mape"], out["loo_median_ape"], Path(args.measurements).name,
                      file_digest(args.measurements), utc_timestamp(), note=out["warning"])
    return _store(cal)


CONTENTION_FIELDS = (("a", "contention_a_cycles"), ("b", "contention_b_cycles"),
                     ("c", "contention_c_bytes_per_s"))


def contention_fits(catalog, device: str | None = None) -> list[dict]:
    """The memory-contention fits `calibrate contention --save` stored as GPU values (Volkov
    §6.4's a, b, c), one dict per GPU, in the shape of a calibration's ``to_dict`` (kind
    ``contention``), with the values' provenance, source key and citation."""
    names = [catalog.resolve(device).name] if device else \
        [s.name for s in catalog.list("gpu") if s.origin != "shipped" or s.shadows_shipped]
    out = []
    for name in names:
        record = catalog.get(name)
        if record.kind != "gpu":
            continue
        chosen = {k: record.default_record(f) for k, f in CONTENTION_FIELDS}
        b = chosen["b"]
        if b is None or not b.known or b.provenance != "calibration":
            continue
        out.append({"device": record.name, "kind": "contention", "subject": "memory latency",
                    "label": b.source or "", "parameters": {
                        k: (r.value if r is not None and r.known else None) for k, r in chosen.items()},
                    "provenance": b.provenance, "source": b.source,
                    "citation": record.sources.get(b.source) if b.source else b.source_text,
                    "where": b.where, "residuals": [], "mape_percent": None, "loo_mape": None,
                    "loo_median_ape": None, "measurements_name": None,
                    "measurements_sha256": None, "created": None, "note": b.note,
                    "is_current": True})
    return out


def run_list(args) -> int:
    from gpumodeler.db.calibrations import list_calibrations
    with common.open_catalog() as catalog:
        cals = [] if args.kind == "contention" else list_calibrations(catalog, args.device, args.kind)
        fits = contention_fits(catalog, args.device) if args.kind in (None, "contention") else []
    if not args.all:
        cals = [c for c in cals if c.is_current]
    if args.json:
        common.print_json([c.to_dict() for c in cals] + fits)
        return 0
    if not cals and not fits:
        print("no calibrations stored" + (f" for {args.device}" if args.device else ""))
        return 0
    for c in cals:
        print(f"{c.device:24} {c.kind:6} {c.subject:16} [{c.label}]  {c.describe()}")
    for f in fits:
        p = f["parameters"]
        a = "?" if p["a"] is None else f"{p['a']:.4g}"
        print(f"{f['device']:24} contention {f['subject']} [{f['label']}]  {a} + "
              f"{p['b']:.4g}·λ/({p['c'] / 1e9:.4g} GB/s − λ) cycles (Volkov §6.4), "
              f"{f['provenance']}: {f['citation']}; {f['where']}")
    return 0
