"""`gpumodeler predict ... --learned MODEL`: a learned model's prediction of one launch, marked
with its training data and flagged outside the trained ranges (docs/learning.md).

The launch is described as for the analytical models: by flags or ``--graph`` (the learned
features come from the per-warp counts and the models' results; profiler metrics such as
Amarís' load and store transactions are absent there and count as 0, so a model trained on
them flags the prediction), or by ``--profile`` (the profiled kernel's metrics, the target
GPU's parameters, and the default model's prediction on the target as ``predict --profile``
makes it). With ``--model all`` the analytical models are printed beside it.
"""
from __future__ import annotations

import math
import sys

from . import common
from .main import CLIError

#: the largest model file read (a forest of 50 deep trees is a few MB)
MAX_MODEL_BYTES = 256 * 2 ** 20


def add_learned_flag(p) -> None:
    p.add_argument("--learned", metavar="MODEL",
                   help="predict with a learned model: a model file (gpumodeler learn fit -o) "
                        "or the name of a stored one (learn fit --save, learn list)")


def load_model(path: str):
    """The validated model of file ``path``, else the stored model of that name (learn fit
    --save); CLIError / FormatError when it is neither."""
    import os  # lazy: not needed to parse flags
    from gpumodeler.core.learn.model_file import model_from_text
    if path != "-" and not os.path.exists(path):
        from gpumodeler.db.learned_models import get_model, list_models
        catalog = common.open_catalog()
        if any(m.name == path for m in list_models(catalog)):
            return get_model(catalog, path).load()
        raise CLIError(f"--learned {path}: no such file and no stored learned model of that "
                       f"name (see gpumodeler learn list)")
    data = common.read_input(path, "a learned model file")
    if len(data) > MAX_MODEL_BYTES:
        raise CLIError(f"{path}: more than {MAX_MODEL_BYTES >> 20} MiB; not a learned model "
                       f"file this gpumodeler reads")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CLIError(f"{path} is not a text file (expected a JSON learned model)") from None
    return model_from_text(text)


def run_learned(args, gpu, inputs, grid, occupancy, model_inputs, kernel="") -> int:
    """Print the learned prediction (and with --model all the analytical models) of a launch
    given by flags or --graph: ``model_inputs`` is the registry's input of it."""
    from gpumodeler.core.models.registry import MODELS, evaluate_all  # lazy: numpy, the models
    model = load_model(args.learned)
    results = evaluate_all(model_inputs, list(MODELS))
    from gpumodeler.core.learn.launch import launch_row  # lazy: numpy
    row = launch_row(kernel, gpu, grid, args.block_size, inputs, occupancy, results)
    return _print(args, gpu, model, row, results)


def run_learned_profile(args) -> int:
    """--profile with --learned: the profiled kernel's metrics, the target GPU's parameters
    and the default model's prediction on the target (latency bound from the profiled run)."""
    from gpumodeler.core.learn.dataset import build_rows  # lazy: numpy, the models
    from gpumodeler.core.measurements.profiled import clean_gpu_name, derive, profile_kernel, select
    from gpumodeler.core.models.registry import MODELS, evaluate_all  # lazy: numpy, the models
    from gpumodeler.core.models.result import ModelInputs
    from gpumodeler.core.occupancy.calculator import occupancy as calculator
    from gpumodeler.service.learning import gpu_lookup
    from .cmd_measure import read_file
    if not args.kernel:
        raise CLIError("--profile needs --kernel NAME (the kernel to predict)")
    model = load_model(args.learned)
    records = [r for path in args.profile for r in read_file(path).records]
    chosen = select(records, args.kernel, args.profiled_device)
    pk = profile_kernel(chosen, chosen[0].name)
    catalog = common.open_catalog()
    profiled = gpu_lookup(catalog, args.profiled_device or pk.gpu)
    if profiled is None:
        raise CLIError(f"the profiled GPU {args.profiled_device or pk.gpu!r} is not in the device "
                       f"database; give --profiled-device NAME (see gpumodeler devices list)")
    target = common.resolve_gpu(args) if args.device else profiled
    rows, _ = build_rows(chosen, {clean_gpu_name(r.gpu): target for r in chosen})
    derived = derive(pk, profiled)
    block = pk.block[0] if len(pk.block) == 1 else pk.block
    grid = pk.grid[0] if len(pk.grid) == 1 else pk.grid
    if pk.registers_per_thread is not None and target.compute_capability:
        occ = calculator(target.compute_capability, math.prod(pk.block), pk.registers_per_thread,
                         int(pk.shared_mem_bytes or 0)).active_warps_per_sm
    else:
        occ = derived.occupancy_profiled
    results = evaluate_all(ModelInputs(gpu=target, kernel=derived.inputs, grid_size=grid,
                                       block_size=block, occupancy=float(occ)), list(MODELS))
    base = rows[0]
    from gpumodeler.core.learn.launch import launch_row  # lazy: numpy
    row = launch_row(base.kernel, target, pk.grid, pk.block, derived.inputs, occ, results, base.metrics)
    return _print(args, target, model, row, results)


def _print(args, gpu, model, row, results) -> int:
    from gpumodeler.core.learn.launch import learned_entry  # lazy: numpy
    from gpumodeler.core.models.result import ModelResult  # lazy: not needed to parse flags
    entry = learned_entry(model, row)
    out = {"device": gpu.name, "learned": entry}
    if getattr(args, "model", None) == "all":
        out["models"] = [{"model": n, "time_s": float(r.time_s)} if isinstance(r, ModelResult)
                         else {"model": n, "time_s": None, "error": str(r)} for n, r in results.items()]
        out["models"].append(entry)
    if args.json:
        common.print_json(out)
        return 0
    t = entry["training"]
    shown = common.fmt_time(entry["time_s"]) if entry["time_s"] is not None else "—"
    if getattr(args, "model", None) == "all":
        for m in out["models"][:-1]:
            print(f"{m['model']:<18} {common.fmt_time(m['time_s']) if m['time_s'] else '—':>12}")
    print(f"{'learned':<18} {shown:>12}  {model.method} on {model.features} features"
          + (f" ({entry['error']})" if entry["error"] else ""))
    print(f"{'':<18} trained on {t['rows']} row(s), {len(t['kernels'])} kernel(s), GPUs "
          f"{', '.join(t['gpus']) or '(none)'}; digest {t['digest'][:12]}")
    if entry["outside_trained_ranges"]:
        print(f"{'':<18} (!) outside the trained ranges: {', '.join(entry['outside_trained_ranges'])}"
              f" — an extrapolation", file=sys.stdout)
    return 0
