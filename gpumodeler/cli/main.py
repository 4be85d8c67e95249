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
}


class CLIError(Exception):
    """A user error detected in the CLI layer (bad flag combination, unreadable file...)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse prints usage too; keep it short)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


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
        return int(args.func(args) or 0)
    except (ModelError, CLIError) as exc:
        hint = FLAG_FOR_FIELD.get(getattr(exc, "item", None) or "")
        hint = f" (flag {hint})" if hint and hint not in str(exc) else ""
        print(f"gpumodeler {args.command}: {exc}{hint}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("gpumodeler: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug, not bad input: one line, details on request
        if os.environ.get("GPUMODELER_DEBUG"):
            raise
        print(f"gpumodeler {args.command}: internal error ({type(exc).__name__}: {exc}); "
              f"rerun with GPUMODELER_DEBUG=1 for details and please report it", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
