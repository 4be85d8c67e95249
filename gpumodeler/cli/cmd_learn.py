"""`gpumodeler learn fit|evaluate`: Amarís' learned predictors and a hybrid of the default
model with a learned correction, trained on imported measurements (docs/learning.md)."""
from __future__ import annotations

import sys

from . import common
from .main import CLIError

#: core.learn.model.METHODS, core.learn.features.FEATURE_SETS and core.learn.evaluate.LEAVE_OUT
#: (a test keeps them equal), here so that parsing flags loads no numpy
METHODS = ("lr", "svr", "rf", "hybrid")
FEATURE_SETS = ("amaris", "extracted", "analytical")
LEAVE_OUT = ("gpu", "kernel", "size")


def _methods(text: str) -> list[str]:
    import argparse  # lazy: not needed to parse flags
    names = [m.strip() for m in text.split(",") if m.strip()]
    bad = [m for m in names if m not in METHODS]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"unknown method {', '.join(bad) or repr(text)}; valid: "
                                         f"{', '.join(METHODS)} (comma-separated)")
    return list(dict.fromkeys(names))


def _data_flags(p) -> None:
    p.add_argument("--measurements", nargs="+", required=True, metavar="FILE",
                   help="measurement files measure import reads (nvprof traces and metrics, "
                        "Nsight Compute, Nsight Systems exports, timings CSV with metric columns)")
    p.add_argument("--features", choices=FEATURE_SETS, default=None,
                   help="amaris: Amarís 2018 Table 4.1; extracted: its feature extraction "
                        "(Algorithm 1); analytical: the models' own quantities (default: "
                        "amaris, analytical for hybrid)")
    p.add_argument("--extracted-count", type=int, choices=(5, 10), default=5,
                   help="features the extraction keeps besides the 2 GPU parameters (5 or 10)")
    p.add_argument("--seed", type=common.int_arg, default=0, help="random forest seed (default 0)")


def register(sub) -> None:
    p = sub.add_parser("learn", help="learned predictors trained on measurements",
                       description="Amarís 2018 ch. 4's linear regression, SVR and random "
                                   "forest, and a hybrid that corrects the default model "
                                   "(docs/learning.md).")
    s = p.add_subparsers(dest="what", metavar="WHAT", required=True)
    f = s.add_parser("fit", help="train a model and write it as JSON",
                     description="Train one learned model on measured kernel runs and write it "
                                 "as a JSON model file (data only, never code).")
    _data_flags(f)
    f.add_argument("--method", choices=METHODS, required=True)
    f.add_argument("-o", "--output", required=True, metavar="MODEL",
                   help="the model file to write (JSON)")
    f.add_argument("--save", metavar="NAME",
                   help="also store the model in the user database under NAME, with the "
                        "measurement files' names and SHA-256 (see learn list)")
    f.add_argument("--replace", action="store_true", help="with --save: replace a stored model "
                                                         "of that name")
    f.add_argument("--json", action="store_true", help="print the model's summary as JSON")
    f.set_defaults(func=run_fit)
    ls = s.add_parser("list", help="the learned models stored in the user database",
                      description="List the stored learned models with their training data.")
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    ls.set_defaults(func=run_list)
    ex = s.add_parser("export", help="write stored learned models to a file to share",
                      description="Write the stored learned models (all, or those named) to a "
                                  "JSON file that learn import merges.")
    ex.add_argument("names", nargs="*", metavar="NAME")
    ex.add_argument("-o", "--output", required=True, metavar="FILE")
    ex.set_defaults(func=run_export)
    im = s.add_parser("import", help="merge a shared file of learned models",
                      description="Merge learned models from a file learn export wrote: new "
                                  "names are added, identical ones skipped; a name with other "
                                  "content keeps mine, takes theirs or keeps both (--resolve).")
    im.add_argument("file", metavar="FILE")
    im.add_argument("--resolve", choices=("mine", "theirs", "both"), default="mine",
                    help="a conflict (same name, other model): keep mine (default), take "
                         "theirs, or keep both (theirs renamed NAME (imported N))")
    im.add_argument("--dry-run", action="store_true", help="report only, write nothing")
    im.set_defaults(func=run_import)
    e = s.add_parser("evaluate", help="leave-one-out errors of learned and analytical models",
                     description="Leave one GPU, kernel or problem size out, train on the rest, "
                                 "and print the MAPE and median APE of each method, of every "
                                 "analytical model and of the roofline.")
    _data_flags(e)
    e.add_argument("--method", type=_methods, required=True, metavar="M[,M...]",
                   help=f"learned methods: {', '.join(METHODS)}")
    e.add_argument("--leave-out", choices=LEAVE_OUT, required=True)
    e.add_argument("--json", action="store_true", help="machine-readable output")
    e.set_defaults(func=run_evaluate)


def load_rows(paths):
    """(rows with their analytical predictions, notes) from measurement files."""
    from gpumodeler.service.learning import rows_of_records  # lazy: not needed to parse flags
    from .cmd_measure import read_file
    records = [r for path in paths for r in read_file(path).records]
    return rows_of_records(common.open_catalog(), records)


def _file_digests(paths) -> list[dict]:
    import hashlib  # lazy: not needed to parse flags
    from pathlib import Path
    out = []
    for p in paths:
        data = common.read_input(p, "a measurement file")
        out.append({"name": "standard input" if p == "-" else Path(p).name,
                    "sha256": hashlib.sha256(data).hexdigest()})
    return out


def run_fit(args) -> int:
    from gpumodeler.core.learn.model import fit  # lazy: not needed to parse flags
    from gpumodeler.core.learn.model_file import model_to_text
    from gpumodeler.db.atomic_files import check_output, write_output
    inputs = [(m, "a measurement file") for m in args.measurements]
    check_output(args.output, inputs)  # a refused output is said before the rows are read
    rows, notes = load_rows(args.measurements)
    model = fit(rows, args.method, args.features, seed=args.seed, extracted=args.extracted_count)
    text = model_to_text(model)
    if args.save:  # checked and stored before the file is written: a refused name writes nothing
        from gpumodeler.db.learned_models import save_model, stored_from_text
        save_model(common.open_catalog(), stored_from_text(
            args.save, text, _file_digests(args.measurements)), replace=args.replace)
    write_output(args.output, text, inputs=inputs)
    summary = {"model": args.output, "method": model.method, "features": model.features,
               "feature_names": list(model.feature_names), "training": {
                   k: model.training[k] for k in ("gpus", "kernels", "rows", "digest")},
               "notes": notes + list(model.notes)}
    if args.json:
        common.print_json(summary)
        return 0
    print(f"wrote {args.output}: {model.describe()}")
    for n in summary["notes"]:
        print(f"note  {n}")
    return 0


def evaluation(args):
    """The evaluation of ``args`` (core.learn.evaluate's dict) and the notes of the data."""
    from gpumodeler.core.learn.evaluate import evaluate  # lazy: not needed to parse flags
    from gpumodeler.core.models.registry import MODELS
    rows, notes = load_rows(args.measurements)
    return evaluate(rows, args.method, args.leave_out, models=list(MODELS),
                    features=args.features, seed=args.seed, extracted=args.extracted_count), notes


def run_evaluate(args) -> int:
    result, notes = evaluation(args)
    out = {"summary": result["summary"], "groups": result["groups"]}
    if args.json:
        common.print_json(out)
        for n in notes:
            print(f"note: {n}", file=sys.stderr)
        return 0
    fmt = (lambda v: "n/a" if v is None else f"{v:.3g}")
    print(f"leave one {args.leave_out} out")
    rows = [("held out", "method", "MAPE %", "median APE %", "n")]
    rows += [(g["held_out"], g["method"], fmt(g["mape_percent"]), fmt(g["median_ape_percent"]),
              str(g["n"])) for g in out["groups"]]
    rows += [("all", s["method"], fmt(s["mape_percent"]), fmt(s["median_ape_percent"]), str(s["n"]))
             for s in out["summary"]]
    widths = [max(len(r[k]) for r in rows) for k in range(5)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    for n in notes:
        print(f"note  {n}")
    return 0


def run_list(args) -> int:
    from gpumodeler.db.learned_models import list_models  # lazy: not needed to parse flags
    models = list_models(common.open_catalog())
    if args.json:
        common.print_json([{k: v for k, v in m.to_json().items() if k != "model"} for m in models])
        return 0
    if not models:
        print("no learned models stored (gpumodeler learn fit ... --save NAME)")
    for m in models:
        print(f"{m.name}: {m.method} on {m.features} features, {m.rows} row(s), "
              f"{len(m.kernels)} kernel(s), GPUs {', '.join(m.gpus) or '(none)'}; digest "
              f"{m.training_digest[:12]}; {m.origin} {m.created}; from "
              f"{', '.join(x['name'] for x in m.measurements) or '(no files)'}")
    return 0


def run_export(args) -> int:
    from gpumodeler.db.atomic_files import write_output  # lazy: not needed to parse flags
    from gpumodeler.db.learned_models import export_models
    catalog = common.open_catalog()
    text = export_models(catalog, args.names)
    write_output(args.output, text, inputs=list(common.inputs_and_catalog(output=args.output)))
    print(f"wrote {args.output}")
    return 0


def run_import(args) -> int:
    from gpumodeler.db.learned_models import merge_models  # lazy: not needed to parse flags
    data = common.read_input(args.file, "a learned models file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CLIError(f"{args.file} is not a text file (expected a learned models file)") from None
    lines = merge_models(common.open_catalog(), text, args.resolve, args.dry_run)
    for line in lines:
        extra = (f" as {line.shown_as!r}" if line.action == "added-as" else
                 " (kept mine: this version was declined before)" if line.action == "declined" else "")
        print(f"{line.name}: {line.action}{extra}")
    if args.dry_run:
        print("dry run: nothing written")
    return 0
