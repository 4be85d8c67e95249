"""`gpumodeler calibrate contention`: Volkov's memory-contention fit (§6.4) of a GPU from
throughput-versus-occupancy measurements, stored as the GPU's calibrated values."""
from __future__ import annotations

from pathlib import Path

from . import common
from .main import CLIError

COLUMNS = ("occupancy", "throughput_bytes_per_s")


def add_parser(s) -> None:
    p = s.add_parser(
        "contention", help="Volkov's memory-contention fit b, c of a GPU from measurements",
        description="Fit Volkov's memory latency = a + b·λ/(c − λ) (§6.4) to a memory-bound "
                    "kernel's measured throughput at several occupancies: each latency by "
                    "Little's law (warps per SM × bytes per warp access × SMs × clock / "
                    "throughput). --save stores a, b, c as the GPU's calibrated values, which "
                    "predict --model volkov-contention then uses.")
    p.add_argument("--measurements", metavar="FILE", required=True,
                   help="CSV with columns occupancy (warps per SM) and throughput_bytes_per_s")
    p.add_argument("--device", metavar="NAME", required=True, help="the GPU measured")
    p.add_argument("--bytes-per-warp", type=common.bytes_arg, default=128, metavar="BYTES",
                   help="bytes each warp has in flight per access (default 128: 32 × 4 B, Volkov §6.4)")
    p.add_argument("--save", action="store_true", help="store a, b, c in your device database")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def run(args) -> int:
    from gpumodeler.core.errors import ModelError
    from gpumodeler.core.models.volkov_contention import fit_contention
    from .calibrate_link import file_digest
    occupancy, throughput = common.read_csv_columns(args.measurements, COLUMNS)
    with common.open_catalog() as catalog:
        device = catalog.get(args.device)
        gpu = device.to_gpu_spec()
    try:
        fit = fit_contention(occupancy, throughput, bytes_per_warp=float(args.bytes_per_warp),
                             sms=gpu.require("sms"), clock_hz=gpu.require("sm_clock_hz"))
    except ModelError as exc:
        raise CLIError(f"{args.measurements}: {exc}") from None
    out = {"gpu": device.name, "a_cycles": fit.a_cycles, "b_cycles": fit.b_cycles,
           "c_bytes_per_s": fit.c_bytes_per_s, "mape_percent": fit.mape_percent,
           "residuals": [{"occupancy": float(n), "throughput_bytes_per_s": float(t),
                          "latency_cycles": m, "fitted_cycles": f}
                         for n, t, m, f in zip(occupancy, throughput, fit.latencies_cycles,
                                               fit.predicted_cycles)],
           "equation": "Volkov 2016 §6.4: memory latency = a + b·λ/(c − λ)"}
    if args.save:
        digest = file_digest(args.measurements)
        source = f"calibrated-contention-{digest[:12]}"
        citation = (f"calibrate contention of {Path(args.measurements).name} "
                    f"(sha256 {digest}), Volkov 2016 §6.4 fit")
        with common.open_catalog() as catalog:
            for field, value, unit in (("contention_a_cycles", fit.a_cycles, "cycle"),
                                       ("contention_b_cycles", fit.b_cycles, "cycle"),
                                       ("contention_c_bytes_per_s", fit.c_bytes_per_s, "B/s")):
                catalog.set_value(device.name, field, value, unit, provenance="calibration",
                                  source=source, citation=citation,
                                  where=f"{len(occupancy)} measurements, MAPE {fit.mape_percent:.3g} %")
            out["saved"] = str(catalog.user_path)
    if args.json:
        common.print_json(out)
        return 0
    print(f"{device.name}: memory latency = {fit.a_cycles:.4g} + {fit.b_cycles:.4g}·λ/"
          f"({fit.c_bytes_per_s / 1e9:.4g} GB/s − λ) cycles (Volkov §6.4); MAPE {fit.mape_percent:.3g} %")
    if args.save:
        print(f"saved to {out['saved']}: predict --model volkov-contention uses it on {device.name}")
    return 0
