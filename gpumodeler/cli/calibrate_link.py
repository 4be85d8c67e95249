"""`gpumodeler calibrate link --measurements FILE`: the regime transfer model
(core/transfers/fit.py) fitted to imported copies, reported, and stored with --save."""
from __future__ import annotations

import hashlib

from gpumodeler.core.errors import ModelError

from . import common
from .main import CLIError


def file_digest(path) -> str:
    """sha256 of the measurement file's bytes (provenance of a stored calibration)."""
    try:
        return hashlib.sha256(common.read_input(path, "a measurement file")).hexdigest()
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror}") from None


def load_records(path):
    from gpumodeler.core.measurements.from_json import read_measurements
    from .cmd_measure import is_nsys_candidate
    try:
        if is_nsys_candidate(path):     # an Nsight Systems SQLite export
            from gpumodeler.db.nsys_export import read_export
            return read_export(path).records
        return read_measurements(path)
    except ModelError as exc:
        raise CLIError(str(exc)) from None


def residual_rows(fit) -> list[dict]:
    return [{"size_bytes": float(n), "measured_s": float(m), "predicted_s": float(p),
             "residual_s": float(r), "relative_residual": float(q), "loo_relative_error": float(e)}
            for n, m, p, r, q, e in zip(fit.sizes_bytes, fit.measured_s, fit.predicted_s,
                                        fit.residuals_s, fit.relative_residuals,
                                        fit.loo_relative_errors)]


def link_result(args):
    """(report dict, fit, selection) for the link calibration the flags ask for."""
    import numpy as np
    from gpumodeler.core.transfers.fit import fit_transfer_model
    from gpumodeler.core.transfers.selection import select_copies
    for flag in ("sizes", "times", "csv"):
        if getattr(args, flag) is not None:
            raise CLIError(f"give --measurements FILE or --sizes/--times (or --csv), not both "
                           f"(got --{flag} too)")
    if args.weighting != "relative":
        raise CLIError("--weighting applies to --sizes/--times; the regime model always fits "
                       "relative errors")
    records = load_records(args.measurements)
    sel = select_copies(records, direction=args.direction, memory_kind=args.memory_kind,
                        gpu=args.gpu)
    fit = fit_transfer_model(sel.sizes_bytes, sel.times_s, regimes=args.regimes)
    out = {"model": "regimes", "direction": sel.direction, "memory_kind": sel.memory_kind or None,
           "gpu": sel.gpu or None, "copies": int(fit.sizes_bytes.size),
           "parameters": fit.parameters(), "startup_s": fit.model.startup_s,
           "regimes": len(fit.model.regimes), "chosen": fit.chosen,
           "distinct_sizes": int(np.unique(fit.sizes_bytes).size), "loo_mape": fit.loo_mape,
           "loo_median_ape": fit.loo_median_ape, "mape_percent": fit.mape_percent,
           "candidates": {str(k): v for k, v in fit.candidates.items()},
           "residuals": residual_rows(fit), "notes": list(fit.notes)}
    if args.nominal_bandwidth is not None:
        if not args.nominal_bandwidth > 0:
            raise CLIError("--nominal-bandwidth must be > 0 B/s")
        out["lambda_by_regime"] = [r.bandwidth_bytes_per_s / args.nominal_bandwidth
                                   for r in fit.model.regimes]
    if args.predict is not None:
        times = fit.model.time_s(args.predict)
        out["predictions"] = [{"size_bytes": float(n), "time_s": float(t)}
                              for n, t in zip(args.predict, times)]
    return out, fit, sel


def print_link(out: dict) -> None:
    print(f"{'direction':24} {out['direction']}  memory kind: {out['memory_kind'] or 'not said'}"
          f"  copies: {out['copies']}")
    print(f"{'startup':24} {common.fmt_time(out['startup_s'])}")
    regimes = out["parameters"]["regimes"]
    if out.get("chosen") == "interpolation":
        print(f"{'bandwidth':24} log-log interpolation between the {len(regimes)} measured sizes "
              f"({regimes[0]['bandwidth_bytes_per_s'] / 1e9:.4g} GB/s at "
              f"{regimes[0]['first_size_bytes']:.6g} B .. "
              f"{regimes[-1]['bandwidth_bytes_per_s'] / 1e9:.4g} GB/s at "
              f"{regimes[-1]['last_size_bytes']:.6g} B)")
    else:
        for r in regimes:
            print(f"{'regime':24} {r['first_size_bytes']:>12.6g} B .. "
                  f"{r['last_size_bytes']:<12.6g} B  {r['bandwidth_bytes_per_s'] / 1e9:.4g} GB/s")
    print(f"{'leave-one-out error':24} mean {out['loo_mape']:.3g} %, median "
          f"{out['loo_median_ape']:.3g} % (nested; {out.get('distinct_sizes', 0)} sizes)"
          f"  (candidates: " + ", ".join(f"{k}: {v:.3g} %" for k, v in out["candidates"].items())
          + ")")
    for note in out["notes"]:
        print(f"{'note':24} {note}")
    print("size (B)        measured          predicted         residual")
    for r in out["residuals"]:
        print(f"{r['size_bytes']:<15.6g} {common.fmt_time(r['measured_s']):17} "
              f"{common.fmt_time(r['predicted_s']):17} {r['relative_residual'] * 100:+.3g} %")
    for p in out.get("predictions", []):
        print(f"{'prediction':24} {p['size_bytes']:.6g} B: {common.fmt_time(p['time_s'])}")
