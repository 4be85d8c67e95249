"""`gpumodeler` command line entry point.

Each subcommand lives in a module ``gpumodeler.cli.cmd_<name>`` exposing
``register(subparsers)``; it sets ``func`` on its parser. Bad input ends with exit status 2
and one line on stderr, never a traceback.
"""
from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys

from gpumodeler.core.errors import ModelError
from gpumodeler.core.kernel.mma import TENSOR_CLASSES

EXIT_USAGE = 2
#: Core field names -> the CLI flag that sets them, to point messages at the right flag.
FLAG_FOR_FIELD = {
    "sms": "--sms", "sm_clock_hz": "--sm-clock-mhz", "cuda_cores_per_sm": "--cuda-cores",
    "schedulers_per_sm": "--schedulers", "warp_size": "--warp-size",
    "gmem_bytes_per_cycle_per_sm": "--gmem-bytes-per-cycle", "sfu_per_sm": "--sfu",
    "fp64_units_per_sm": "--fp64-units",
    "fp16_results_per_cycle_per_sm": "--fp16-results-per-cycle",
    "int32_fp32_shared_lanes_per_sm": "--int32-fp32-shared-lanes",
    "smem_accesses_per_cycle_per_sm": "--smem-accesses-per-cycle",
    "issue_per_scheduler_per_cycle": "--issue-per-cycle", "compute_capability": "--cc",
    **{f"tensor_{c}_macs_per_cycle_per_sm": f"--tensor-rate {c}=N" for c in TENSOR_CLASSES},
}


class CLIError(Exception):
    """A user error detected in the CLI layer (bad flag combination, unreadable file...)."""


#: The longest error line printed; longer messages (an echoed 3 KB expression, SQLite's
#: list of damaged pages) are cut, keeping their start, which says what is wrong.
MAX_MESSAGE = 400


def one_line(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` on one line (newlines and runs of blanks become one space), at most
    ``limit`` characters, cut with an ellipsis."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _input_error(exc: BaseException) -> str | None:
    """The message for an exception that bad input causes in the standard library, or None.

    RecursionError: a structure nested too deeply for a recursive reader (JSON nested
    100 000 deep); ValueError of Python's int-string limit: a number of thousands of digits."""
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply to read (at most a few hundred levels)"
    if isinstance(exc, UnicodeDecodeError):
        return (f"the input holds bytes that are not UTF-8 text ({exc.reason} at byte "
                f"{exc.start}); the file is damaged or not one gpumodeler reads")
    if isinstance(exc, OverflowError):
        return (f"an input is too large: a result overflowed ({exc}); numbers must stay "
                f"well below 1.8e308")
    if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
        return ("the input holds a number with more than 4300 digits; numbers must fit a "
                "64-bit float (about 1.8e308)")
    return None


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse prints usage too; keep it short)
        self.exit(EXIT_USAGE, one_line(f"{self.prog}: error: {message}") + "\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gpumodeler",
                     description="Model how fast a CUDA application runs on a GPU.")
    from gpumodeler import __version__
    parser.add_argument("--version", action="version", version=f"gpumodeler {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    import gpumodeler.cli as pkg
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if info.name.startswith("cmd_"):
            importlib.import_module(f"gpumodeler.cli.{info.name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        # Overflow to inf in numpy is caught where results are printed (common.require_finite):
        # a warning here would print a multi-line report to stderr. One occupancy answer
        # needs no numpy, and does not load it just for this.
        if args.command == "occupancy" and not getattr(args, "batch", None):
            return int(args.func(args) or 0)
        import numpy as np
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            return int(args.func(args) or 0)
    except (ModelError, CLIError) as exc:
        hint = FLAG_FOR_FIELD.get(getattr(exc, "item", None) or "")
        hint = f" (flag {hint})" if hint and hint not in str(exc) else ""
        print(one_line(f"gpumodeler {args.command}: {exc}{hint}"), file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("gpumodeler: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug, not bad input: one line, details on request
        if os.environ.get("GPUMODELER_DEBUG"):
            raise
        message = _input_error(exc)
        if message is not None:
            print(one_line(f"gpumodeler {args.command}: {message}"), file=sys.stderr)
            return EXIT_USAGE
        detail = one_line(f"{type(exc).__name__}: {exc}", 200)
        print(f"gpumodeler {args.command}: internal error ({detail}); rerun with "
              f"GPUMODELER_DEBUG=1 for details and please report it", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
