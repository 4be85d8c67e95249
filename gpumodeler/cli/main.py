"""`gpumodeler` command line entry point.

Each subcommand lives in a module ``gpumodeler.cli.cmd_<name>`` exposing
``register(subparsers)``; it sets ``func`` on its parser. A new command is also added to
:data:`COMMANDS` (its name, module and help), so that a command line imports only its own
module (tests/cli/test_cli_startup.py checks the table). Bad input ends with exit status 2
and one line on stderr, never a traceback.
"""
from __future__ import annotations

import argparse
import copy
import errno
import functools
import importlib
import os
import sys

from gpumodeler.core.errors import ModelError

# OpenBLAS (numpy's BLAS) starts a worker thread per core when numpy is imported, and the
# workers spin for about 0.1 s of CPU on the other cores before they sleep, in every command
# that loads numpy, measured on `occupancy --batch` (0.42 -> 0.31 s CPU for 10^5 lines) and
# `python -c "import numpy; time.sleep(.5)"` (0.19 -> 0.10 s). The CLI's arrays are
# elementwise and its least squares 2 columns wide: one thread, unless the user set it.
# Set before any numpy import (this module imports none).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

EXIT_USAGE = 2
#: Core field names -> the CLI flag that sets them, to point messages at the right flag.
FLAG_FOR_FIELD = {
    "sms": "--sms", "sm_clock_hz": "--sm-clock-mhz", "cuda_cores_per_sm": "--cuda-cores",
    "schedulers_per_sm": "--schedulers", "warp_size": "--warp-size",
    "gmem_bytes_per_cycle_per_sm": "--gmem-bytes-per-cycle", "sfu_per_sm": "--sfu",
    "fp64_units_per_sm": "--fp64-units",
    "fp16_results_per_cycle_per_sm": "--fp16-results-per-cycle",
    "int32_units_per_sm": "--int32-units",
    "int32_fp32_shared_lanes_per_sm": "--int32-fp32-shared-lanes",
    "smem_accesses_per_cycle_per_sm": "--smem-accesses-per-cycle",
    "ldst_units_per_sm": "--ldst-units",
    "issue_per_scheduler_per_cycle": "--issue-per-cycle", "compute_capability": "--cc",
}
_TENSOR_RATE = ("tensor_", "_macs_per_cycle_per_sm")


def flag_for_field(name: str | None) -> str | None:
    """The CLI flag that sets core field ``name`` (a tensor rate field
    ``tensor_<class>_macs_per_cycle_per_sm`` -> ``--tensor-rate <class>=N``), or None.
    Works without importing the tensor module, so ``--help`` stays light."""
    name = name or ""
    if name in FLAG_FOR_FIELD:
        return FLAG_FOR_FIELD[name]
    head, tail = _TENSOR_RATE
    if name.startswith(head) and name.endswith(tail) and len(name) > len(head) + len(tail):
        return f"--tensor-rate {name[len(head):-len(tail)]}=N"
    return None


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
    if isinstance(exc, OSError) and exc.errno in _FILE_ERRORS:
        # a file or folder the system refused (full disk, no permission, name too long...)
        name = exc.filename
        name = "" if name is None else f"{os.fsdecode(name) if isinstance(name, bytes) else name}: "
        return f"{name}{exc.strerror or exc}"
    return None


#: OSError numbers of files the system refused to read or write: the user's to fix.
_FILE_ERRORS = frozenset(getattr(errno, name) for name in (
    "ENOSPC", "EDQUOT", "EFBIG", "ENAMETOOLONG", "EACCES", "EPERM", "EROFS", "EISDIR",
    "ENOTDIR", "ENOENT", "EEXIST", "ELOOP", "EIO", "EMFILE", "ENFILE", "EBUSY", "ETXTBSY",
    "EXDEV") if hasattr(errno, name))


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse prints usage too; keep it short)
        self.exit(EXIT_USAGE, one_line(f"{self.prog}: error: {message}") + "\n")

    def _get_values(self, action, arg_strings):
        # Python 3.11's argparse drops a "--" given as an option's value (`--user-db=--`)
        # and hands the command an empty list for a single value: keep it as the value
        # ("--"), which the command then refuses like any other bad value.
        if action.option_strings and action.nargs is None and arg_strings == ["--"]:
            value = self._get_value(action, "--")
            self._check_value(action, value)
            return value
        return super()._get_values(action, arg_strings)


#: Every command: the module ``gpumodeler.cli.<module>`` that registers it and its one-line
#: help, in the order ``--help`` lists them (by module name). Parsing a command line imports
#: only the module of the command it names, so a command does not pay for the imports of
#: all the others; ``--help`` imports none. A test checks this table against the modules.
COMMANDS: dict[str, tuple[str, str]] = {
    "application": ("cmd_application", "applications from traces (Nsight Systems import)"),
    "calibrate": ("cmd_calibrate", "fit λ or link parameters to measurements"),
    "devices": ("cmd_devices", "browse, share and merge the device database"),
    "graph": ("cmd_graph", "analyse a kernel execution graph"),
    "gui": ("cmd_gui", "open the desktop application"),
    "install-desktop-entry": ("cmd_gui", "add gpumodeler to your desktop's application menu"),
    "kernel": ("cmd_kernel", "kernel graphs from real kernels (SASS import)"),
    "learn": ("cmd_learn", "learned predictors trained on measurements"),
    "measure": ("cmd_measure", "import measured kernel and copy times"),
    "occupancy": ("cmd_occupancy", "active blocks and warps per SM for a launch"),
    "predict": ("cmd_predict", "kernel and transfer times for one launch"),
    "project": ("cmd_project", "show a project file or predict its launches"),
    "report": ("cmd_report", "write a self-contained HTML report of a project"),
    "sweep": ("cmd_sweep", "predictions over a grid of values (CSV or JSON)"),
    "timeline": ("cmd_timeline", "simulate a project's application: steps, makespan, energy"),
    "validate": ("cmd_validate", "every model against measured runs of real kernels"),
}


def command_in(argv: list[str]) -> str | None:
    """The command an argument list names: its first word that is not an option (the
    top-level options, ``--help`` and ``--version``, take no value); ``""`` when there is
    none; None when it cannot tell (a ``--`` first)."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word
    return ""


def _command_modules() -> list[str]:
    """Every ``cmd_*`` module of the package (found on disk, so a new one is never missed)."""
    import pkgutil

    import gpumodeler.cli as pkg
    return sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if m.name.startswith("cmd_"))


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser.

    Without ``command``, every command module is imported and registers its parser. With the
    command a command line names (:func:`command_in`; ``""`` for none, as in ``--help``),
    only that command's module is imported and the others are listed by name and help, which
    is all ``--help`` and an unknown-command message show. A name not in :data:`COMMANDS`
    builds everything, so a command module missing from the table still works."""
    parser = _Parser(prog="gpumodeler",
                     description="Model how fast a CUDA application runs on a GPU.")
    from gpumodeler import __version__
    parser.add_argument("--version", action="version", version=f"gpumodeler {__version__}")
    parser.add_argument("--verbose", action="store_true",
                        help="log to stderr at DEBUG; an unexpected error shows its traceback "
                             "(before the command: gpumodeler --verbose predict ...)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    if command is None or (command and command not in COMMANDS):
        for name in _command_modules():
            importlib.import_module(f"gpumodeler.cli.{name}").register(sub)
        return parser
    wanted = COMMANDS[command][0] if command else None
    for name, (module, text) in COMMANDS.items():
        if module != wanted:  # listed only: takes any words (it has no options, so "--x"
            # is a word too), and main() never runs it
            stub = sub.add_parser(name, help=text, add_help=False, prefix_chars="\0")
            stub.add_argument("words", nargs="*")
            stub.set_defaults(func=None)
        elif name not in sub.choices:  # the module registers all of its commands at once
            importlib.import_module(f"gpumodeler.cli.{module}").register(sub)
    return parser


@functools.lru_cache(maxsize=None)
def _parser_for(command: str | None) -> argparse.ArgumentParser:
    """The parser :func:`build_parser` gives for ``command``, built once per process: a
    script or a test calling :func:`main` many times in one process pays for the
    parser once (about 3-5 ms of CPU per command line, 14 ms with every command registered),
    not on every call. Parsing leaves a parser as it was (argparse keeps a command line's
    values in the namespace it returns), and :func:`parse` gives every command line mutable
    values of its own. The commands' functions are the ones registered when the parser was
    built: a test replacing one clears this cache (``_parser_for.cache_clear()``)."""
    return build_parser(command)


def parse(argv: list[str]) -> argparse.Namespace:
    """``argv`` parsed by the per-process parser of the command it names.

    A word that names no command builds the whole parser (its error lists every command):
    it shares the one cache entry of "every command", so random words never grow the cache.
    A default that is a list, a dict or a set (``action="append", default=[]``) is copied
    into the namespace, so a command that adds to it changes nothing the next command line
    sees."""
    command = command_in(argv)
    if command and command not in COMMANDS:
        command = None
    args = _parser_for(command).parse_args(argv)
    if getattr(args, "func", None) is None and command is not None:
        # a command only listed: parse with them all
        args = _parser_for(None).parse_args(argv)
    for name, value in vars(args).items():
        if isinstance(value, (list, dict, set)):
            setattr(args, name, copy.copy(value))
    return args


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
        _names_pass_through()
        if command_in(argv) in LEFT_TO_EXIT:
            return _leaving_memory_to_exit(argv)
    return _main_verbose_or_not(argv)


#: Commands whose big results, run as the process's own command line, are left to the
#: system at the end of the process (:func:`leave_to_exit`) instead of being freed one object
#: at a time: their objects are plain data (no open file or connection among them).
LEFT_TO_EXIT = frozenset({"timeline", "graph"})

#: What :func:`leave_to_exit` keeps to the end of the process; None when nothing is kept
#: (main called as a function, by a test or a script: everything is freed as usual).
_left: list | None = None


def leave_to_exit(*objects) -> None:
    """Keep ``objects`` to the end of the process, never freed, when this process runs a
    command of :data:`LEFT_TO_EXIT` as its command line; otherwise do nothing.

    Freeing a big result object by object is work the system does at once when the process
    ends: at 10^5 steps of ``timeline --json``, 0.04 s for the project and 0.08 s for the
    document, then 0.04 s for the interpreter's last collections over every object still
    alive; at 10^5 instructions of ``graph --json``, 0.045 s for the graph, its bound and
    critical path, and the last collections (0.015 s even for a small graph: numpy's
    objects). Only for plain data: an object kept is never finalized (a file kept would never be
    flushed)."""
    if _left is not None:
        _left.extend(objects)


def _leaving_memory_to_exit(argv: list[str]) -> int:
    """:func:`main` for a command of :data:`LEFT_TO_EXIT`: what it leaves is kept in a list
    that holds itself, and once it has returned every object alive goes to the collector's
    permanent generation (``gc.freeze``). The interpreter's teardown then frees neither: the
    modules' names are cleared, which leaves the list held by itself, and its last collections
    pass over frozen objects. Standard output and error are flushed by the interpreter as
    ever (before the teardown)."""
    import gc

    global _left
    _left = []
    _left.append(_left)
    try:
        return _main_verbose_or_not(argv)
    finally:
        gc.freeze()


def _main_verbose_or_not(argv: list[str]) -> int:
    if "--verbose" in argv:
        from gpumodeler.cli import verbose
        if verbose.requested(argv):
            with verbose.logging_to_stderr(argv):
                return _main(argv)
    return _main(argv)


def _names_pass_through() -> None:
    """A file name that is not UTF-8 reaches Python as lone surrogates (PEP 383), and
    printing it ("wrote NAME") to a standard output whose errors are strict (the usual
    ``en_US.UTF-8`` locale; C.UTF-8 is lenient) raised UnicodeEncodeError: standard output
    writes such a name back as the bytes it was, as ``ls`` does."""
    stream = sys.stdout
    if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
        try:
            stream.reconfigure(errors="surrogateescape")
        except (ValueError, OSError, AttributeError):  # not a text file of ours to change
            pass


def _main(argv: list[str]) -> int:
    args = parse(argv)
    try:
        # Overflow to inf in numpy is caught where results are printed (common.require_finite):
        # a warning here would print a multi-line report to stderr. One occupancy answer
        # and a measurement import need no numpy, and do not load it just for this.
        if (args.command == "occupancy" and not getattr(args, "batch", None)) or \
                args.command == "measure":
            return int(args.func(args) or 0)
        import numpy as np
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            return int(args.func(args) or 0)
    except (ModelError, CLIError) as exc:
        _traceback(args, expected=True)
        hint = flag_for_field(getattr(exc, "item", None))
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
        _traceback(args, expected=message is not None)
        if message is not None:
            print(one_line(f"gpumodeler {args.command}: {message}"), file=sys.stderr)
            return EXIT_USAGE
        detail = one_line(f"{type(exc).__name__}: {exc}", 200)
        print(f"gpumodeler {args.command}: internal error ({detail}); rerun with "
              f"gpumodeler --verbose {args.command} ... for details and please report it",
              file=sys.stderr)
        return 1


def _traceback(args, expected: bool) -> None:
    """With --verbose, the exception being handled with its traceback on stderr."""
    if getattr(args, "verbose", False):
        from gpumodeler.cli.verbose import traceback_of
        traceback_of(args.command, expected)


if __name__ == "__main__":
    raise SystemExit(main())
