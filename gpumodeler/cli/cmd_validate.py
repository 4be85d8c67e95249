"""`gpumodeler validate FILE`: every model and a roofline against measured runs (docs/validation.md).

Per row of the validation CSV: each registered model's prediction at λ = 1 (a model that
cannot run on the row says why, the others go on), the one-line roofline's
(core.models.roofline_peak: the baseline the validation goal names, beside the ``roofline``
model), the measured time and the absolute percentage error; then the median and mean error per kernel family and per GPU. A file
that cannot be read, a bad cell, an unknown device or a kernel file that is missing is
exit 2 naming the file, line and column.
"""
from __future__ import annotations

import os

from . import common, model_flags
from .main import CLIError

BASELINE = "roofline"
#: The second baseline: the one-line roofline at the vendor's peaks (core.models.roofline_peak).
PEAK_BASELINE = "roofline-peak"


def register(sub) -> None:
    p = sub.add_parser("validate", help="every model against measured runs of real kernels",
                       description="Predict every measured run of a validation CSV "
                                   "(docs/validation.md) with every model and two roofline "
                                   "baselines (the roofline model and the one-line "
                                   "roofline-peak); print each error and the median and mean "
                                   "absolute percentage error per kernel family and per GPU.")
    p.add_argument("file", metavar="FILE.csv", help="the validation set")
    p.add_argument("--model", type=model_flags.models_arg, default=None, metavar="NAME[,NAME]|all",
                   help=f"the models to run ({', '.join(model_flags.MODELS)}; default all)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise CLIError(f"{path} is not a UTF-8 text file; valid: a validation CSV "
                       f"(docs/validation.md)") from None


#: What the ``kernel`` column takes: a kernel graph, or code the SASS importer reads.
IMPORTED = (".sass", ".txt", ".cubin", ".cu")


def load_kernel(run, csv_path: str, cache: dict):
    """The kernel graph of a row: a ``.json`` graph, or a listing, cubin or ``.cu`` imported
    as ``gpumodeler kernel import`` does (its architecture's latency table, latencies the
    table lacks from the compiler's schedule; docs/sass-import.md). Each file is read once."""
    where = f"{csv_path}:{run.line}: column kernel"
    path = os.path.join(os.path.dirname(csv_path), run.kernel)
    suffix = os.path.splitext(run.kernel)[1].lower()
    if suffix != ".json" and suffix not in IMPORTED:
        raise CLIError(f"{where}: {run.kernel!r}; valid: a kernel graph (.json, "
                       f"docs/kernel-format.md) or a SASS listing, cubin or .cu "
                       f"({', '.join(IMPORTED)}), relative to the CSV")
    if not os.path.isfile(path):
        raise CLIError(f"{where}: no file {path}")
    key = (path, run.function, run.arch)
    if key not in cache:
        if suffix == ".json":
            cache[key] = common.load_graph(path)
        else:
            from gpumodeler.core.errors import ModelError
            from gpumodeler.core.kernel.sass.importer import import_kernel_with_report
            from .cmd_kernel import fill_from_schedule, table_for_architecture
            try:
                graph, report = import_kernel_with_report(path, run.function, run.arch)
            except ModelError as exc:
                raise CLIError(f"{where}: {exc}") from None
            if graph.latency_table is None:
                graph.latency_table = table_for_architecture(report.arch)[0]
            fill_from_schedule(graph)
            cache[key] = graph
    return cache[key]


def evaluate_run(run, csv_path: str, catalog, names, cache=None) -> dict:
    """One row: the measured time and {model: time or the reason it could not run}."""
    from gpumodeler.core.errors import ModelError
    from gpumodeler.core.kernel.graph_items import loops_at_default
    from gpumodeler.core.kernel.sass.launch_memory import graph_for_launch
    from gpumodeler.core.launch_limits import check_launch
    from gpumodeler.core.models.gajger import kernel_inputs_from_graph
    from gpumodeler.core.models.graph_inputs import graph_counts
    from gpumodeler.core.models.kernel_time import grid_for, warps_launched
    from gpumodeler.core.models.registry import evaluate_all
    from gpumodeler.core.models.result import ModelInputs, ModelResult
    from gpumodeler.core.occupancy.calculator import occupancy
    from gpumodeler.core.validation import ape_percent, measured_time_s, threads
    where = f"{csv_path}:{run.line}"
    try:
        gpu = catalog.get(run.device).to_gpu_spec()
    except (KeyError, LookupError, ModelError) as exc:
        raise CLIError(f"{where}: column device: {exc}") from None
    if run.sm_clock_mhz is not None:
        gpu = gpu.with_overrides(sm_clock_hz=run.sm_clock_mhz * 1e6)
    graph = load_kernel(run, csv_path, {} if cache is None else cache)
    unknown = sorted(set(run.values) - set(graph.variables))
    if unknown:
        valid = ", ".join(graph.variables) or "none (the kernel has no loops)"
        raise CLIError(f"{where}: column set: the kernel has no variable {unknown[0]!r}; "
                       f"its variables: {valid}")
    # the table predict takes: the GPU's own, else the graph's (common.choose_table)
    table = common.latency_table_for(common.choose_table(None, gpu, graph)[0])
    try:
        block_threads = threads(run.block)
        grid = run.grid if run.grid is not None else grid_for(run.data_size, block_threads)
        check_launch(grid, run.block, gpu.compute_capability)
        if run.occupancy is not None:
            occ = run.occupancy
        else:
            occ = occupancy(gpu.require("compute_capability"), block_threads, run.registers,
                            run.shared_bytes).active_warps_per_sm
        ws = gpu.require("warp_size")
        # the launch's guards, block shape, reuse across blocks and L2 fit, as predict does
        launch = graph_for_launch(graph, run.values, block_size=run.block, warp_size=ws,
                                  gpu=gpu, grid_size=grid, occupancy=float(occ),
                                  shared_bytes_per_block=run.shared_bytes or None)
        # the one-line roofline's compulsory bytes: the same launch with a cache of any size
        unique = graph_for_launch(graph, run.values, block_size=run.block, warp_size=ws,
                                  gpu=gpu, grid_size=grid, occupancy=float(occ),
                                  shared_bytes_per_block=run.shared_bytes or None,
                                  compulsory=True)
        graph = launch.graph
        at_default = loops_at_default(graph, launch.values)
        values = dict(graph.variables, **launch.values)
        kernel = kernel_inputs_from_graph(graph, values, table=table)
        unique_bytes = (kernel.gmem_bytes if unique.graph is graph else kernel_inputs_from_graph(
            unique.graph, dict(unique.graph.variables, **unique.values), table=table).gmem_bytes)
        counts = graph_counts(graph, values, table)
        warps = float(warps_launched(grid, run.block, ws))
        measured = measured_time_s(
            run, warps=warps, gmem_bytes_per_warp=float(kernel.gmem_bytes),
            instructions_per_warp=float(counts.get("instructions", kernel.issued_instructions)), warp_size=ws,
            schedulers=(float(gpu.require("schedulers_per_sm"))
                        if run.unit == "ops/cycle/scheduler" else 1.0),
            sms=float(gpu.require("sms")), clock_hz=float(gpu.require("sm_clock_hz")))
    except ModelError as exc:
        raise CLIError(f"{where}: {exc}") from None
    inputs = ModelInputs(gpu=gpu, kernel=kernel, grid_size=grid, block_size=run.block,
                         occupancy=float(occ), lam=1.0, counts=counts)
    try:   # a launch the GPU cannot hold is a bad row, not a model's limit
        results = evaluate_all(inputs, names)
    except ModelError as exc:
        raise CLIError(f"{where}: {exc}") from None
    from gpumodeler.core.models import roofline_peak
    try:
        peak = roofline_peak.evaluate(inputs, float(unique_bytes))
        baselines = {PEAK_BASELINE: {
            "time_s": peak.time_s, "bound": peak.bound, "binding": peak.binding,
            "dram_bytes": peak.dram_bytes,
            "peak_bandwidth_bytes_per_s": peak.peak_bandwidth_bytes_per_s,
            "ape_percent": ape_percent(peak.time_s, measured)}}
    except ModelError as exc:
        baselines = {PEAK_BASELINE: {"error": str(exc)}}
    models, errors = {}, {}
    for name, r in results.items():
        if isinstance(r, ModelResult):
            models[name] = {"time_s": r.time_s, "bound": r.bound,
                            "ape_percent": ape_percent(r.time_s, measured)}
            errors[name] = models[name]["ape_percent"]
        else:
            models[name] = {"error": model_flags.error_text(r)}
            errors[name] = None
    return {"line": run.line, "kernel": run.kernel, "gpu": gpu.name, "family": run.family,
            "grid": grid, "block": run.block, "occupancy_warps_per_sm": float(occ),
            "set": run.values, "measured": run.measured, "unit": run.unit,
            "measured_s": measured, "source": run.source, "models": models,
            "baselines": baselines, "errors": errors, "loops_at_default": at_default}


def validate(path: str, names=None) -> dict:
    """{'rows': [...], 'summary': [...]} of the validation set at ``path``."""
    from gpumodeler.core.errors import ModelError
    from gpumodeler.core.models.registry import DEFAULT_MODEL
    from gpumodeler.core.validation import compare, parse_csv, summarise
    names = list(names or model_flags.MODELS)
    try:
        runs = parse_csv(_read(path), path)
    except ModelError as exc:
        raise CLIError(str(exc)) from None
    with common.open_catalog() as catalog:
        cache: dict = {}
        rows = [evaluate_run(r, path, catalog, names, cache) for r in runs]
    summary = summarise(rows, "family") + summarise(rows, "gpu")
    versus = (compare(rows, DEFAULT_MODEL, BASELINE)
              if DEFAULT_MODEL in names and BASELINE in names else [])
    # the one-line roofline, kept out of ``models`` and ``summary`` (it is no registered model)
    peak_rows = [dict(r, errors={PEAK_BASELINE: r["baselines"][PEAK_BASELINE].get("ape_percent"),
                                 DEFAULT_MODEL: r["errors"].get(DEFAULT_MODEL)}) for r in rows]
    peak_summary = [s for s in summarise(peak_rows, "family") + summarise(peak_rows, "gpu")
                    if s["model"] == PEAK_BASELINE]
    versus_peak = compare(peak_rows, DEFAULT_MODEL, PEAK_BASELINE) if DEFAULT_MODEL in names else []
    for row in rows:
        del row["errors"]
    return {"models": names, "baseline": BASELINE, "peak_baseline": PEAK_BASELINE,
            "default_model": DEFAULT_MODEL, "rows": rows, "summary": summary,
            "baseline_summary": peak_summary, "default_vs_baseline": versus,
            "default_vs_peak_roofline": versus_peak}


def _pct(v) -> str:
    return "—" if v is None else f"{v:.1f}%"


def run(args) -> int:
    from gpumodeler.core.validation import below
    out = validate(args.file, args.model)
    common.require_finite(out)
    if args.json:
        common.print_json(out)
        return 0
    names = out["models"]
    peak = out["peak_baseline"]
    head = f"{'line':>4}  {'kernel':<26} {'gpu':<18} {'occ':>5} {'measured':>11}  " + \
        "  ".join(f"{n[:13]:>13}" for n in names + [peak])
    print("absolute percentage error of each model (λ = 1) and of the one-line roofline "
          f"({peak}) against the measured time")
    print(head)
    for r in out["rows"]:
        cells = []
        for m in [r["models"][n] for n in names] + [r["baselines"][peak]]:
            cells.append(f"{_pct(m.get('ape_percent')):>13}" if "error" not in m else f"{'n/a':>13}")
        print(f"{r['line']:>4}  {os.path.basename(r['kernel'])[:26]:<26} {r['gpu'][:18]:<18} "
              f"{r['occupancy_warps_per_sm']:>5g} {common.fmt_time(r['measured_s']):>11}  "
              + "  ".join(cells))
    for r in out["rows"]:
        for n, m in [(n, r["models"][n]) for n in names] + [(peak, r["baselines"][peak])]:
            if "error" in m:
                print(f"line {r['line']}: {n} cannot run: {m['error']}")
        if r["loops_at_default"]:
            print(f"line {r['line']}: {common.loops_note(r['loops_at_default'], in_csv=True)}")
    for by in ("family", "gpu"):
        print()
        print(f"median APE (mean APE, n) per {by}; '<' marks a median below the {BASELINE}'s")
        groups: dict = {}
        for s in out["summary"] + out["baseline_summary"]:
            if s[by] is not None:
                groups.setdefault(s[by], {})[s["model"]] = s
        print(f"{by:<24} " + "  ".join(f"{n[:18]:>18}" for n in names + [peak]))
        for key, per in groups.items():
            base = per.get(BASELINE)
            cells = []
            for n in names + [peak]:
                s = per.get(n)
                if s is None:
                    cells.append(f"{'n/a':>18}")
                    continue
                mark = "<" if base and n != BASELINE and below(
                    s["median_ape_percent"], base["median_ape_percent"]) else " "
                cells.append(f"{mark}{_pct(s['median_ape_percent'])} ({_pct(s['mape_percent'])}, "
                             f"{s['n']})".rjust(18))
            print(f"{str(key)[:24]:<24} " + "  ".join(cells))
    for key, against in (("default_vs_baseline", f"the {BASELINE} model (sustained bandwidth, "
                                                  f"L2/L1/shared levels)"),
                         ("default_vs_peak_roofline", f"the one-line roofline ({peak}: "
                                                      f"peak pipes, pin DRAM bandwidth)")):
        if not out[key]:
            continue
        print()
        print(f"the default model ({out['default_model']}) against {against} per family, "
              f"median APE on the rows both ran")
        for v in out[key]:
            verdict = "below" if v["below"] else "equal" if v["equal"] else "ABOVE"
            print(f"  {v['family']:<22} {_pct(v['median_ape_percent']):>7} vs "
                  f"{_pct(v['baseline_median_ape_percent']):>7} (n = {v['n']}): {verdict}")
    return 0
