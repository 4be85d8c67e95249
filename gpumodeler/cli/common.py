"""Shared CLI pieces: quantity parsing, device/link/kernel flags, output helpers.

Quantities accept plain numbers in the flag's base unit or a unit suffix:
bytes ``1.6e9``, ``1.6GB``, ``2GiB``, ``512KiB``; bandwidth ``15.8e9``, ``15.8GB/s``;
time ``3.97e-6``, ``3.97us``, ``0.00396868ms``; clock ``1253`` (MHz flags) or ``1.253GHz``.
Every number, with or without a unit, follows the one grammar the GUI's fields use
(:mod:`gpumodeler.core.quantities`): ``1e6``, ``16M`` (16e6), ``16Mi`` (2^24), ``2^20``,
``1,000,000``. Thousands commas are for single-value flags only: in a value list
(:func:`list_of`, the sweeps) a comma separates values, so ``1,024`` there is 1 and 24.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import TYPE_CHECKING

from gpumodeler.core import physical
from gpumodeler.core.errors import ModelError, QuantityError, shown
from gpumodeler.core.finite import plain_finite_document
from gpumodeler.core.quantities import NUMBER_FORMS, parse_number, parse_quantity
from gpumodeler.service.lookups import catalog_lookups  # noqa: F401  (the commands' name for it)
from gpumodeler.core.units_format import format_time

from .main import CLIError

if TYPE_CHECKING:  # imported where used: every command parses its flags with this module
    from gpumodeler.core.device import GPUSpec, LinkSpec
    from gpumodeler.core.kernel.graph import KernelGraph

_BYTES = {"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
          "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4}
_TIME = {"": 1, "s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def _typed(parse, *args, **kwargs):
    """``parse(*args)`` with a grammar error as argparse's (exit 2, one line)."""
    try:
        return parse(*args, **kwargs)
    except QuantityError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _quantity(text: str, units: dict, what: str, example: str, **kwargs) -> float:
    return _typed(parse_quantity, text, units, what, example, **kwargs)


def bytes_arg(text: str) -> float:
    return _quantity(text, _BYTES, "size in bytes", "1.6e9, 1.6GB or 16M")


def bandwidth_arg(text: str) -> float:
    return _quantity(text, {k + "/s" if k else "": v for k, v in _BYTES.items()} | {"b/s": 1},
                     "bandwidth in bytes/s", "15.8e9 or 15.8GB/s")


def seconds_arg(text: str) -> float:
    return _quantity(text, _TIME, "time in seconds", "3.97e-6 or 3.97us")


def mhz_arg(text: str) -> float:
    # A bare number is MHz, so "1.253G" (a prefix without a unit) is refused, not read as
    # 1.253e9 MHz: the unit carries the prefix (1.253GHz).
    value = _quantity(text, {"": 1, "mhz": 1, "ghz": 1e3, "khz": 1e-3, "hz": 1e-6},
                      "clock in MHz", "1253 or 1.253GHz", bare_prefixes=False)
    if not math.isfinite(value * 1e6):    # the model takes the clock in Hz
        raise argparse.ArgumentTypeError(f"{shown(text)} is too large a clock (e.g. 1253 or "
                                         f"1.253GHz)")
    return value


def float_arg(text: str) -> float:
    return _typed(parse_number, text)


#: Whole-number flags go up to 2^53: every such value is exact in a float, and sweeps hold
#: them in int64 arrays (1e308 would not fit).
MAX_WHOLE = 2**53

#: The most bytes of an input file read whole (a kernel graph, measurements, resolutions):
#: more is no such file (a device such as /dev/zero, a disk image given by mistake), and
#: reading it would fill the memory or never end.
MAX_INPUT_BYTES = 512 * 2**20


def read_input(path: str, what: str, kind: str = "") -> bytes:
    """The bytes of input file ``path`` (``-``: standard input; ``what`` it should be, for
    messages); CLIError when it cannot be read or holds more than :data:`MAX_INPUT_BYTES`
    (an endless input such as ``< /dev/zero`` ends there). ``kind`` names the file in the
    message of a file that cannot be read (``cannot read kernel file PATH``)."""
    try:
        if path == "-":
            stream = getattr(sys.stdin, "buffer", None)
            data = (stream.read(MAX_INPUT_BYTES + 1) if stream is not None
                    else sys.stdin.read(MAX_INPUT_BYTES + 1).encode("utf-8"))
        else:
            with open(path, "rb") as fh:
                data = fh.read(MAX_INPUT_BYTES + 1)
    except OSError as exc:
        raise CLIError(f"cannot read {kind + ' ' if kind else ''}{path}: {exc.strerror}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise CLIError(f"{path} holds more than {MAX_INPUT_BYTES >> 20} MiB: not {what}")
    return data


def int_arg(text: str) -> int:
    try:
        value = parse_number(text)
    except QuantityError as exc:
        if "is not a number" not in str(exc):    # a comma misplaced, or beyond a float
            raise argparse.ArgumentTypeError(str(exc)) from None
        raise argparse.ArgumentTypeError(f"{shown(str(text).strip())} is not a whole number "
                                         f"({NUMBER_FORMS})") from None
    if not value.is_integer():
        raise argparse.ArgumentTypeError(f"{shown(str(text).strip())} is not a whole number "
                                         f"({NUMBER_FORMS})")
    if abs(value) > MAX_WHOLE:
        raise argparse.ArgumentTypeError(
            f"{shown(text)} is too large; whole numbers go up to 2^53 = {MAX_WHOLE}")
    return int(value)


def tensor_rate_arg(text: str) -> tuple[str, float]:
    """``fp16_fp32acc=1024`` -> (class, rate > 0) for --tensor-rate."""
    from gpumodeler.core.kernel.mma import TENSOR_CLASSES
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or name not in TENSOR_CLASSES:
        raise argparse.ArgumentTypeError(
            f"--tensor-rate takes CLASS=N with CLASS one of {', '.join(TENSOR_CLASSES)} "
            f"(e.g. fp16_fp32acc=1024), got {shown(text)}")
    rate = float_arg(value)
    if not rate > 0:
        raise argparse.ArgumentTypeError(f"--tensor-rate {name}: the rate must be > 0, got {shown(value)}")
    return name, rate


def set_arg(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip().isidentifier():
        raise argparse.ArgumentTypeError(f"--set takes NAME=VALUE (e.g. a=128), got {shown(text)}")
    return name.strip(), float_arg(value)


# -- devices ---------------------------------------------------------------------------------

def add_device_flags(p: argparse.ArgumentParser, *, lists: bool = False) -> None:
    """GPU flags of the MERPSYS expert mode (Gajger Fig. 5.20 attributes). With ``lists``
    the numeric flags take value lists and ``--device`` may be repeated (sweeps)."""
    t = (lambda f: f) if not lists else list_of
    g = p.add_argument_group("device (explicit flags override --device)")
    if lists:
        g.add_argument("--device", metavar="NAME", action="append",
                       help="GPU from the device database; repeat for one curve per GPU")
    else:
        g.add_argument("--device", metavar="NAME",
                       help="GPU from the device database (name, alias or unique prefix)")
    g.add_argument("--sms", type=t(int_arg), help="streaming multiprocessors")
    g.add_argument("--sm-clock-mhz", type=t(mhz_arg), help="SM clock the model uses, MHz")
    g.add_argument("--cuda-cores", type=t(int_arg), help="CUDA cores per SM")
    g.add_argument("--schedulers", type=t(int_arg), help="warp schedulers per SM")
    g.add_argument("--warp-size", type=int_arg, help="threads per warp (32)")
    g.add_argument("--gmem-bytes-per-cycle", type=t(float_arg),
                   help="global-memory bytes per SM clock per SM (Gajger eq. 4.7)")
    g.add_argument("--sfu", type=int_arg, help="SFUs per SM (kernels with SFU instructions)")
    g.add_argument("--fp64-units", type=int_arg, help="FP64 units per SM")
    g.add_argument("--fp16-results-per-cycle", type=float_arg, metavar="N",
                   help="FP16 add/mul/FMA results per clock per SM, two per packed HFMA2 "
                        "(kernels with FP16 instructions; docs/pipes.md)")
    g.add_argument("--int32-units", type=int_arg, metavar="N",
                   help="INT32 lanes per SM (kernels with integer instructions, compute "
                        "capability 7.0 and later; docs/pipes.md)")
    g.add_argument("--int32-fp32-shared-lanes", type=int_arg, metavar="N",
                   help="INT32 lanes per SM that are FP32 lanes too (0 on Volta, Turing, "
                        "GA100, Hopper; 64 on GA10x and Ada; docs/pipes.md)")
    g.add_argument("--smem-accesses-per-cycle", type=float_arg, metavar="N",
                   help="conflict-free warp-wide shared-memory accesses per cycle per SM "
                        "(kernels with shared-memory instructions; Volkov Table 6.1)")
    g.add_argument("--ldst-units", type=int_arg, metavar="N",
                   help="load/store units per SM, each taking one thread's global, local or "
                        "shared access a cycle (compute capability 7.0 and later: 16 on Turing "
                        "and GA10x, 32 on Volta; docs/models.md)")
    g.add_argument("--issue-per-cycle", type=float_arg, metavar="N",
                   help="instructions one warp scheduler issues per cycle (Volkov Table 2.8)")
    g.add_argument("--tensor-rate", type=tensor_rate_arg, action="append", default=[],
                   metavar="CLASS=N",
                   help="dense tensor-core multiply-adds per clock per SM of a data-type class "
                        "(fp16, fp16_fp32acc, bf16, tf32, fp8, fp8_fp32acc, int8, int4, int1, "
                        "fp64), e.g. fp16_fp32acc=1024 (repeatable; docs/pipes.md)")
    g.add_argument("--cc", help="compute capability, e.g. 5.2 (for occupancy)")


def add_link_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("transfers (eq. 5.5; explicit flags override --link)")
    g.add_argument("--htod", type=bytes_arg, action="append", default=[], metavar="BYTES",
                   help="a host-to-device copy (repeatable, in order before the kernel)")
    g.add_argument("--dtoh", type=bytes_arg, action="append", default=[], metavar="BYTES",
                   help="a device-to-host copy (repeatable, after the kernel)")
    g.add_argument("--link", metavar="NAME", help="link from the device database")
    g.add_argument("--link-bandwidth", type=bandwidth_arg, metavar="B/S",
                   help="nominal per-direction bandwidth, e.g. 15.8GB/s")
    g.add_argument("--startup-htod", type=seconds_arg, metavar="S")
    g.add_argument("--startup-dtoh", type=seconds_arg, metavar="S")
    g.add_argument("--lambda-htod", type=float_arg)
    g.add_argument("--lambda-dtoh", type=float_arg)
    g.add_argument("--link-calibration", metavar="LABEL",
                   help="use the stored calibration LABEL of --link (calibrate link --save) "
                        "for the directions it covers")


def latency_table_for(key: str | None):
    """What core's analyze takes for the table ``key``: the key itself when it is one of
    core's built-in tables (or None), else the table of that name from the device database
    (a user's own table, or a published one shipped in devices.db)."""
    from gpumodeler.core.kernel.latency_tables import TABLES
    if key is None or key in TABLES:
        return key
    with open_catalog() as catalog:
        return catalog.latency_table(key)


def table_architecture(key: str) -> str | None:
    """The architecture a latency table ``key`` describes (None when unknown)."""
    from gpumodeler.core.kernel.latency_tables import TABLES
    try:
        table = TABLES.get(key) or latency_table_for(key)
    except Exception:  # an unknown key: refused where the table is used, not here
        return None
    return getattr(table, "architecture", None) or None


def choose_table(pinned, gpu, graph) -> tuple[str | None, str]:
    """(key, origin) of the latency table ``graph`` is evaluated with on ``gpu`` (None: no
    GPU): core.kernel.latency_tables.choose_table with the tables' architectures."""
    from gpumodeler.core.kernel.latency_tables import choose_table as choose
    return choose(pinned, getattr(gpu, "latency_table", None), graph.latency_table,
                  table_architecture)


#: how each prediction names the origin of its latency table
TABLE_ORIGIN_TEXT = {"pinned": "--table", "gpu": "the GPU's",
                     "graph-same-architecture": "the graph's own, of the GPU's architecture",
                     "graph": "the graph's own", "none": "none"}


def read_project(path):
    """(project, file info) of the project file ``path``, its values' types checked
    (core.project.check_project): a bad override or launch value is refused at load,
    naming the file, the element, the key, the type found and the type expected."""
    from gpumodeler.core.project import check_project
    from gpumodeler.db.project_file import read_project_file

    from .main import leave_to_exit
    project, info = read_project_file(path)
    try:
        check_project(project)
    except ModelError as exc:
        raise CLIError(f"{path}: {exc}") from None
    leave_to_exit(project)  # (plain data: a command that leaves its results to the system)
    return project, info


def open_catalog():
    from gpumodeler.db.catalog import Catalog
    return Catalog()


def inputs_and_catalog(*inputs, output=None):
    """``inputs`` (``(path, what)`` pairs), then the device databases open_catalog reads:
    the files an output must never be (db.atomic_files.check_not_input). A generator: the
    database layer is imported only when an output file is checked, not for stdout; and
    given the ``output``, not for a new file (no database there to lose) when the command
    did not load the database layer itself (a sweep from flags: 0.2 s saved)."""
    yield from inputs
    if output is not None and "gpumodeler.db.catalog" not in sys.modules \
            and not os.path.lexists(output):
        return
    from gpumodeler.db.catalog import default_shipped_db_path, default_user_db_path
    yield default_user_db_path(), "your device database"
    yield default_shipped_db_path(), "the device database"


def resolve_gpu(args, *, allow_lists: bool = False) -> GPUSpec:
    """GPUSpec from --device (database) overridden by explicit flags."""
    import numpy as np
    from gpumodeler.core.device import GPUSpec
    base = GPUSpec(name="(flags)")
    if getattr(args, "device", None):
        base = open_catalog().get(args.device).to_gpu_spec()
    overrides = {
        "sms": args.sms,
        "sm_clock_hz": None if args.sm_clock_mhz is None else np.asarray(args.sm_clock_mhz) * 1e6,
        "cuda_cores_per_sm": args.cuda_cores, "schedulers_per_sm": args.schedulers,
        "warp_size": args.warp_size, "gmem_bytes_per_cycle_per_sm": args.gmem_bytes_per_cycle,
        "sfu_per_sm": args.sfu, "fp64_units_per_sm": args.fp64_units,
        "fp16_results_per_cycle_per_sm": getattr(args, "fp16_results_per_cycle", None),
        "int32_units_per_sm": getattr(args, "int32_units", None),
        "int32_fp32_shared_lanes_per_sm": getattr(args, "int32_fp32_shared_lanes", None),
        "smem_accesses_per_cycle_per_sm": args.smem_accesses_per_cycle,
        "ldst_units_per_sm": getattr(args, "ldst_units", None),
        "issue_per_scheduler_per_cycle": args.issue_per_cycle,
        "compute_capability": args.cc,
    }
    for cls, rate in getattr(args, "tensor_rate", None) or ():
        overrides[f"tensor_{cls}_macs_per_cycle_per_sm"] = rate
    if not allow_lists:
        overrides = {k: (v.item() if isinstance(v, np.ndarray) else v) for k, v in overrides.items()}
    return base.with_overrides(**overrides)


def resolve_link(args) -> LinkSpec | None:
    """LinkSpec from --link overridden by explicit flags; None when there are no transfers."""
    from gpumodeler.core.device import LinkSpec
    if not (args.htod or args.dtoh):
        if args.link or args.link_bandwidth:
            raise CLIError("a link was given but no transfers; add --htod BYTES and/or --dtoh BYTES")
        return None
    if args.link:
        link = open_catalog().get(args.link).to_link_spec()
    else:
        link = LinkSpec(name="(flags)")
    changes = {k: v for k, v in {
        "bandwidth_bytes_per_s": args.link_bandwidth, "startup_htod_s": args.startup_htod,
        "startup_dtoh_s": args.startup_dtoh, "lambda_htod": args.lambda_htod,
        "lambda_dtoh": args.lambda_dtoh}.items() if v is not None}
    from dataclasses import replace
    link = replace(link, **changes)
    if getattr(args, "link_calibration", None):
        link = calibrated_link(link, args)
    calibrated = {d for d, _ in link.transfer_models}
    missing = []
    if link.bandwidth_bytes_per_s is None and not {
            d for d, n in (("htod", args.htod), ("dtoh", args.dtoh)) if n} <= calibrated:
        missing.append("--link-bandwidth")
    if args.htod and link.startup_htod_s is None and "htod" not in calibrated:
        missing.append("--startup-htod")
    if args.dtoh and link.startup_dtoh_s is None and "dtoh" not in calibrated:
        missing.append("--startup-dtoh")
    if missing:
        raise CLIError(f"transfers need {', '.join(missing)} (or --link NAME with those values known)")
    return link


def calibrated_link(link: LinkSpec, args) -> LinkSpec:
    """``link`` with the stored calibrations labelled --link-calibration of --link: each
    direction with transfers uses its calibrated model (core/transfers/models.py)."""
    if not args.link:
        raise CLIError("--link-calibration needs --link NAME (the link the calibration belongs to)")
    from gpumodeler.db.calibrations import calibrated_link_spec
    needed = tuple(d for d, n in (("htod", args.htod), ("dtoh", args.dtoh)) if n)
    with open_catalog() as catalog:
        return calibrated_link_spec(catalog, args.link, args.link_calibration, base=link,
                                    directions=needed)


def transfer_list(args) -> list[tuple[str, float]]:
    """Copies in program order: host-to-device ones first, device-to-host after the kernel."""
    return [("htod", n) for n in args.htod] + [("dtoh", n) for n in args.dtoh]


# -- kernels ---------------------------------------------------------------------------------

def _refuse_constant(name: str):
    raise ValueError("the file holds a constant that is not a finite number (not a number, "
                     "or an infinity); give a finite number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {shown(text, 40)} is too large (beyond about 1.8e308)")
    return value


def parse_json_text(text: str, path: str, what: str):
    """JSON from ``text`` (the file ``path``), refusing what the model cannot use: NaN and
    Infinity, numbers beyond a float, integers of thousands of digits and nesting too deep
    for the reader, each as a CLIError naming the file and what is valid."""
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise CLIError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}") from None
    except RecursionError:
        raise CLIError(f"{path}: JSON nested too deeply to read; {what} is nested at most a "
                       f"few levels") from None
    except ValueError as exc:
        if "integer string conversion" in str(exc):
            raise CLIError(f"{path}: a whole number of thousands of digits; numbers must fit "
                           f"a 64-bit float (about 1.8e308)") from None
        raise CLIError(f"{path}: {exc}") from None


def launch_defaults_from_graph(args, graph, as_list: bool = False) -> None:
    """``--registers`` and ``--shared-mem`` from what the graph's listing says the compiler
    allocated (``registers_per_thread``, ``static_shared_bytes``: docs/kernel-format.md),
    when the command line gives neither ``--occupancy`` nor ``--registers``; the flags win.
    ``as_list``: the values as one-element lists (sweep's list flags)."""
    if getattr(args, "occupancy", None) is not None or getattr(args, "registers", None) is not None:
        return
    if not graph.registers_per_thread:
        return
    wrap = (lambda v: [v]) if as_list else (lambda v: v)
    args.registers = wrap(graph.registers_per_thread)
    if getattr(args, "shared_mem", None) is None and graph.static_shared_bytes:
        args.shared_mem = wrap(graph.static_shared_bytes)


def load_graph(path: str) -> KernelGraph:
    from gpumodeler.core.kernel.graph import from_dict
    try:
        text = read_input(path, "a gpumodeler-kernel file", "kernel file").decode("utf-8")
    except UnicodeDecodeError:
        raise CLIError(f"{path} is not a text file (expected gpumodeler-kernel JSON)") from None
    data = parse_json_text(text, path, "a gpumodeler-kernel file")
    try:
        graph = from_dict(data)
    except ModelError as exc:
        raise CLIError(f"{path}: {exc}") from None
    except RecursionError:
        raise CLIError(f"{path}: an expression nested too deeply to read") from None
    # what reading a file of an older format version changed or left undecided
    # (core.kernel.format_upgrade): on stderr, so a --json output stays the document alone
    for note in graph.read_notes:
        print(f"note: {path}: {note}", file=sys.stderr)
    return graph


def list_of(convert):
    """argparse type: a comma list or a range START:STOP[:STEP] (inclusive), converted.

    A comma always separates values here (so no thousands separators inside a list:
    ``1000,2000`` or ``1e3,2e3``, not ``1,000,2,000``); each value otherwise takes the
    whole number grammar (``16M``, ``2^20``, ``1.6GB``)."""
    def parse(text: str):
        import numpy as np
        text = str(text).strip()
        if ":" in text and "," not in text:
            parts = text.split(":")
            if len(parts) not in (2, 3):
                raise argparse.ArgumentTypeError(f"a range is START:STOP[:STEP], got {shown(text)}")
            start, stop = convert(parts[0]), convert(parts[1])
            step = convert(parts[2]) if len(parts) == 3 else 1
            if step <= 0 or stop < start:
                raise argparse.ArgumentTypeError(f"range {shown(text)} needs STOP >= START and STEP > 0")
            count = int(math.floor((stop - start) / step + 1e-9)) + 1
            if count > 10_000_000:
                raise argparse.ArgumentTypeError(f"range {shown(text)} has {count} values; at most 10 million")
            return np.asarray([start + i * step for i in range(count)])
        items = [convert(x) for x in text.split(",") if x.strip()]
        if not items:
            raise argparse.ArgumentTypeError("give at least one value")
        return np.asarray(items)
    parse.__name__ = getattr(convert, "__name__", "value")
    return parse


def require_finite(obj, what: str = "", *, cause: str = physical.DEFAULT_CAUSE) -> None:
    """The one rule for results that are not finite numbers (core's
    :func:`gpumodeler.core.physical.require_finite`): inf or NaN anywhere in a result is
    refused naming the quantity, in text and JSON output alike. A document of plain values
    is first read without naming anything
    (:func:`~gpumodeler.core.finite.plain_finite_document`: a 10^5-step timeline in a tenth
    of the 1.6 s of the naming walk), and walked by core only when that cannot tell."""
    if not plain_finite_document(obj):
        physical.require_finite(obj, what, cause=cause)


def print_json(obj, checked: bool = False) -> None:
    """``obj`` as indented JSON on stdout; a number that is not finite anywhere in it is
    refused as :func:`require_finite` refuses it (``checked``: the caller has just checked
    this very object). The check is the writing itself: the encoder refuses such a number,
    and only then is the document walked to name it (a walk of a 10^5-step timeline took
    1.6 s)."""
    if checked:
        parts = indented_json_parts(obj, _json_default)
    else:
        try:
            parts = indented_json_parts(obj, _json_default, allow_nan=False)
        except ValueError as exc:
            if "Out of range float" not in str(exc):
                raise
            require_finite(obj)   # raises, naming the quantity
            raise
    write = sys.stdout.write  # (as print(text) writes: the text, then the line end)
    for part in parts:
        write(part)
    write("\n")


def _json_default(o):
    np = sys.modules.get("numpy")
    if np is not None:
        if isinstance(o, np.ndarray):
            return o.tolist()
        if isinstance(o, np.generic):
            return o.item()
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def indented_json(obj, default=None, indent: int = 2, allow_nan: bool = True) -> str:
    """``json.dumps(obj, indent=indent, default=default, ensure_ascii=False,
    allow_nan=allow_nan)``: :func:`indented_json_parts` joined."""
    return "".join(indented_json_parts(obj, default, indent, allow_nan))


def indented_json_parts(obj, default=None, indent: int = 2,
                        allow_nan: bool = True) -> list[str]:
    """``json.dumps(obj, indent=indent, default=default, ensure_ascii=False,
    allow_nan=allow_nan)``, the same text in pieces (raising before any is given), faster
    for big documents.

    With an indent, the standard library encodes in Python, one call per value (a 10^5-step
    timeline: 7.8 s); without one, in C. So the document is written compactly in C, with
    ``": "`` between keys and values as the indented text has, and the line breaks and
    indentation are then inserted with numpy: after each ``[``, ``{`` and ``,`` and before
    each ``]`` and ``}`` outside strings, except inside an empty ``[]`` or ``{}`` — exactly
    where the standard library writes them.

    First, though, the document is written column by column (:mod:`.columnar_json`: each
    kind of value at each depth at once, in C; a 10^5-step timeline in a third of the
    time); the route above is taken when that writer leaves the document to the standard
    library (keys that are not strings, a cycle, deep nesting, a value that cannot be
    written: the error is then the standard library's own)."""
    from . import columnar_json
    try:
        return columnar_json.dump_parts(obj, default, indent, allow_nan)
    except (columnar_json.Unsupported, TypeError, ValueError, RecursionError):
        pass
    try:
        compact = json.dumps(obj, default=default, ensure_ascii=False, allow_nan=allow_nan,
                             separators=(",", ": "))
    except RecursionError:   # the standard library's own answer
        return [json.dumps(obj, indent=indent, default=default, ensure_ascii=False,
                           allow_nan=allow_nan)]
    if len(compact) < _SMALL_JSON and "numpy" not in sys.modules:
        # (a small document: written at once by the standard library, numpy not imported
        # for it: the start-up time of a command answering a few lines)
        return [json.dumps(obj, indent=indent, default=default, ensure_ascii=False,
                           allow_nan=allow_nan)]
    return [_reindented(compact, indent)]


#: the size (characters of compact JSON) from which a document is indented with numpy even
#: when nothing has imported numpy yet
_SMALL_JSON = 64 * 1024


def _structure_table():
    import numpy as np
    table = np.zeros(256, bool)
    table[[ord(c) for c in ",[]{}"]] = True
    return table


_STRUCTURE = None   # the bytes , [ ] { } (a numpy table by byte: numpy is imported when used)


def _reindented(compact: str, indent: int) -> str:
    """The compact JSON text ``compact`` indented by ``indent`` spaces per level (see
    :func:`indented_json`)."""
    import numpy as np

    global _STRUCTURE
    if _STRUCTURE is None:
        _STRUCTURE = _structure_table()
    data = compact.encode("utf-8")
    if not data or data[:1] not in b"[{":
        return compact   # a single value: nothing to indent
    text = np.frombuffer(data, np.uint8)
    # A quote ends a string unless escaped. Inside a string a backslash always starts a
    # two-character escape, so with every escaped backslash blanked, a quote is escaped
    # exactly when a backslash precedes it (no raw NUL is ever written: it is escaped).
    probe = text if b"\\" not in data else np.frombuffer(data.replace(b"\\\\", b"\0\0"), np.uint8)
    quote = probe == ord('"')
    if probe is not text:
        quote[1:] &= probe[:-1] != ord("\\")
    quotes = np.flatnonzero(quote)
    del quote, probe
    marks = np.flatnonzero(_STRUCTURE[text])
    marks = marks[np.searchsorted(quotes, marks) % 2 == 0]   # outside strings
    del quotes
    chars = text[marks]
    step = ((chars == ord("[")) | (chars == ord("{"))).astype(np.int64)
    step -= (chars == ord("]")) | (chars == ord("}"))
    level = np.cumsum(step)   # the nesting level after each mark
    opens, closes = step == 1, step == -1
    # an empty [] or {}: an opening mark with its closing mark just after it
    empty = np.zeros(len(marks), bool)
    empty[:-1] = opens[:-1] & closes[1:] & (marks[1:] == marks[:-1] + 1)
    empty[1:] |= empty[:-1] & opens[:-1]
    keep = ~empty
    at = np.where(closes, marks, marks + 1)[keep]   # before a close, after anything else
    size = 1 + indent * level[keep]   # a line break and the indentation of its level
    del marks, chars, step, level, opens, closes, empty, keep
    starts = np.cumsum(size)
    starts -= size
    starts += at   # where each insertion starts in the output
    del at
    total = len(text) + int(size.sum())
    # (arrays the size of the text made in place: a 10^5-step timeline is 120 MB of text)
    kept = np.zeros(total + 1, np.int8)   # +1 at each insertion's start, -1 past its end
    kept[starts] = 1
    kept[starts + size] -= 1
    np.cumsum(kept, dtype=np.int8, out=kept)
    kept = kept[:-1].view(bool)
    np.logical_not(kept, out=kept)   # the text's own bytes
    out = np.full(total, ord(" "), np.uint8)
    out[kept] = text
    out[starts] = ord("\n")
    return str(out, "utf-8")


def fmt_time(seconds: float) -> str:
    """A time as the CLI prints it: 6 significant digits in s, ms or µs (never ns), by
    :func:`gpumodeler.core.units_format.format_time`."""
    return format_time(seconds, 6, smallest="µs")


def write_table(table: dict, output: str | None, fmt: str = "csv", inputs=()) -> int:
    """Columns (name -> equal-length arrays) as CSV, JSON or JSON Lines rows, to ``output``
    (never one of ``inputs``) or stdout (:mod:`gpumodeler.cli.tables`). NaN is a point
    without a result (printed empty); an infinity is never printed."""
    import numpy as np

    from .tables import write_table as write
    for name, column in table.items():
        column = np.asarray(column)
        if column.dtype.kind in "fc" and np.isinf(column).any():
            require_finite(column[np.isinf(column)], name)
    write(table, output, fmt, inputs)
    return 0


def read_csv_columns(path, columns) -> list:
    """The named numeric columns of a CSV file (``-``: standard input), as numpy arrays;
    CLIError naming the file when it cannot be read, lacks a column or holds text."""
    import csv  # here, not at the top: most commands never read a CSV (start-up time)
    import io
    try:
        with io.StringIO(read_input(path, "a CSV of measurements").decode("utf-8"),
                         newline="") as fh:
            reader = csv.DictReader(fh)
            missing = [c for c in columns if c not in (reader.fieldnames or [])]
            if missing:
                raise CLIError(f"{path}: missing column(s) {', '.join(missing)}; "
                               f"expected a header with {', '.join(columns)}")
            rows = list(reader)
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror}") from None
    out = []
    for c in columns:
        try:
            import numpy as np
            out.append(np.array([float(r[c]) for r in rows]))
        except (TypeError, ValueError):
            raise CLIError(f"{path}: column {c} must hold numbers") from None
    return out


def loops_note(loops: list, in_csv: bool = False) -> str:
    """What a prediction with ``loops`` at their default of one trip says (``in_csv``: of
    a validation row, set in its set column; else with predict's --set)."""
    names = ", ".join(loops)
    one = len(loops) == 1
    how = f"in the row's set column ({loops[0]}=N)" if in_csv else f"with --set {loops[0]}=N"
    return (f"{names} run{'s' if one else ''} 1 trip, {'its' if one else 'their'} default: "
            f"the listing does not give {'its' if one else 'their'} count; set "
            f"{'it' if one else 'them'} {how} if the loop runs more")
