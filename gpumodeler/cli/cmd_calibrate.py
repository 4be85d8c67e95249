"""`gpumodeler calibrate`: λ of a kernel and link parameters from measurements."""
from __future__ import annotations


from . import common
from .main import CLIError


def register(sub) -> None:
    p = sub.add_parser("calibrate", help="fit λ or link parameters to measurements",
                       description="Kernel λ (Gajger eq. 4.4, least squares for several "
                                   "measurements) or a link's startup time, effective bandwidth "
                                   "and λ (eq. 5.5) from measured transfers.")
    s = p.add_subparsers(dest="what", metavar="WHAT", required=True)
    k = s.add_parser("lambda", help="kernel λ from predictions at λ = 1 and measured times")
    k.add_argument("--estimated", type=common.list_of(common.seconds_arg), metavar="LIST",
                   help="predicted kernel times at λ = 1 (s; comma list)")
    k.add_argument("--measured", type=common.list_of(common.seconds_arg), metavar="LIST",
                   help="measured kernel times (s; comma list, same order)")
    k.add_argument("--csv", metavar="FILE", help="CSV with columns estimated_s, measured_s")
    k.add_argument("--weighting", choices=("relative", "absolute"), default="relative")
    k.add_argument("--json", action="store_true")
    k.set_defaults(func=run_lambda)
    ln = s.add_parser("link", help="startup, bandwidth and λ of one direction from (size, time) pairs")
    ln.add_argument("--sizes", type=common.list_of(common.bytes_arg), metavar="LIST")
    ln.add_argument("--times", type=common.list_of(common.seconds_arg), metavar="LIST")
    ln.add_argument("--csv", metavar="FILE", help="CSV with columns bytes, seconds")
    ln.add_argument("--nominal-bandwidth", type=common.bandwidth_arg, metavar="B/S",
                    help="nominal bandwidth of the link, to report λ (e.g. 15.8GB/s)")
    ln.add_argument("--weighting", choices=("relative", "absolute"), default="relative")
    m = ln.add_argument_group("from imported measurements (regime model, leave-one-out)")
    m.add_argument("--measurements", metavar="FILE",
                   help="measured copies: JSON records (measure import --json) or a profiler CSV")
    m.add_argument("--direction", choices=("htod", "dtoh"), help="which copies to fit")
    m.add_argument("--memory-kind", metavar="KIND",
                   help="pageable, pinned, or an application label (one calibration each)")
    m.add_argument("--gpu", metavar="NAME", help="the GPU's copies, when the file has several")
    m.add_argument("--regimes", type=common.int_arg, metavar="N",
                   help="force N bandwidth regimes (default: chosen by leave-one-out)")
    m.add_argument("--predict", type=common.list_of(common.bytes_arg), metavar="SIZE[,SIZE...]",
                   help="sizes to predict with the fitted model")
    m.add_argument("--link", metavar="NAME", help="the link in your database (with --save)")
    from .calibrate_store import add_save_flags
    add_save_flags(ln, "--link")
    ln.add_argument("--json", action="store_true")
    ln.set_defaults(func=run_link)

    from . import calibrate_kernel
    kc = s.add_parser("kernel", help="λ of a kernel on a GPU from measured launches",
                      description="λ of one kernel on one GPU (eq. 4.4, least squares) from "
                                  "measured launches, each predicted at λ = 1 with its own "
                                  "launch; leave-one-out over launch sizes; a warning when λ "
                                  "is outside 0.3-1.5.")
    calibrate_kernel.add_flags(kc)
    add_save_flags(kc, "--device")
    kc.add_argument("--json", action="store_true")
    kc.set_defaults(func=run_kernel)

    from . import calibrate_contention
    calibrate_contention.add_parser(s)

    ls = s.add_parser("list", help="calibrations stored in your device database")
    ls.add_argument("--device", metavar="NAME", help="only this GPU's or link's")
    ls.add_argument("--kind", choices=("link", "kernel", "contention"),
                    help="contention: Volkov §6.4 fits stored by calibrate contention --save")
    ls.add_argument("--all", action="store_true", help="earlier fits too, not only the current ones")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=run_list)


def _pairs(args, a, b, cols):
    if args.csv:
        if getattr(args, a) is not None or getattr(args, b) is not None:
            raise CLIError(f"give --csv or --{a} with --{b}, not both")
        return common.read_csv_columns(args.csv, cols)
    if getattr(args, a) is None or getattr(args, b) is None:
        raise CLIError(f"give --{a} and --{b} (comma lists), or --csv FILE")
    return getattr(args, a), getattr(args, b)


def _report(fit, extra: dict, args) -> int:
    out = dict(extra)
    out.update(predicted_s=fit.predicted_s, measured_s=fit.measured_s, residuals_s=fit.residuals_s,
               relative_residuals=fit.relative_residuals, mape_percent=fit.mape_percent)
    common.require_finite(out)
    if args.json:
        common.print_json(out, checked=True)
        return 0
    for k, v in extra.items():
        print(f"{k:32} {v if not isinstance(v, float) else f'{v:.6g}'}")
    print(f"{'mean absolute percentage error':32} {fit.mape_percent:.4g} %")
    print("measured          predicted         residual")
    for m, p_, r in zip(fit.measured_s, fit.predicted_s, fit.residuals_s):
        print(f"{common.fmt_time(m):17} {common.fmt_time(p_):17} {r:+.4g} s")
    return 0


def run_lambda(args) -> int:
    est, meas = _pairs(args, "estimated", "measured", ["estimated_s", "measured_s"])
    from gpumodeler.core.transfers.calibration import fit_kernel_lambda
    fit = fit_kernel_lambda(est, meas, args.weighting)
    return _report(fit, {"lambda": fit.lam, "weighting": args.weighting}, args)


def run_list(args) -> int:
    from .calibrate_store import run_list as list_
    return list_(args)


def run_kernel(args) -> int:
    from .calibrate_kernel import kernel_result, print_kernel
    from .calibrate_store import check_save_flags, save_kernel
    if args.project is None:
        check_save_flags(args, "device", "--device")
    else:
        check_save_flags(args, "project", "--project")
    out, _, _ = kernel_result(args)
    common.require_finite(out)   # one rule for text and JSON, and nothing saved that fails it
    if args.save:
        out["saved"] = save_kernel(args, out)
    if args.json:
        common.print_json(out, checked=True)
    else:
        print_kernel(out)
        if args.save:
            print(f"saved as the {out['saved']['label']} calibration of {out['saved']['device']}")
    return 0


def run_link(args) -> int:
    if args.measurements is not None:
        from .calibrate_link import link_result, print_link
        from .calibrate_store import check_save_flags, save_link
        check_save_flags(args, "link", "--link")
        out, fit, _ = link_result(args)
        common.require_finite(out)   # one rule for text and JSON; nothing saved that fails it
        if args.save:
            out["saved"] = save_link(args, out, fit)
        if args.json:
            common.print_json(out, checked=True)
        else:
            print_link(out)
            if args.save:
                print(f"saved as the {out['saved']['label']} {out['direction']} calibration "
                      f"of {out['saved']['device']}")
        return 0
    for flag in ("direction", "memory_kind", "gpu", "regimes", "predict", "save", "label", "link"):
        if getattr(args, flag) not in (None, False):
            raise CLIError(f"--{flag.replace('_', '-')} needs --measurements FILE")
    sizes, times = _pairs(args, "sizes", "times", ["bytes", "seconds"])
    from gpumodeler.core.transfers.calibration import fit_link
    fit = fit_link(sizes, times, args.nominal_bandwidth, args.weighting)
    extra = {"startup_s": fit.startup_s, "effective_bandwidth_bytes_per_s": fit.effective_bandwidth_bytes_per_s}
    if fit.lam is not None:
        extra["lambda"] = fit.lam
    extra["weighting"] = args.weighting
    for note in fit.notes:
        extra.setdefault("notes", []).append(note)
    return _report(fit, extra, args)
