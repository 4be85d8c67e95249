"""`gpumodeler kernel import FILE`: a kernel graph from a SASS listing, a cubin or a `.cu`.

Without ``-o`` the graph (``docs/kernel-format.md`` JSON) goes to stdout, so it can be piped
into ``gpumodeler graph -``; with ``-o`` it is written atomically (a temporary file in the
same folder, then renamed: an error never leaves a partial file) and a one-line summary is
printed. The rules are in docs/sass-import.md.
"""
from __future__ import annotations

from dataclasses import replace
import json
import sqlite3
import sys

from gpumodeler.core.errors import ModelError, shown

from . import common
from .main import CLIError


def register(sub) -> None:
    p = sub.add_parser("kernel", help="kernel graphs from real kernels (SASS import)",
                       description="Build kernel execution graphs from compiled CUDA code.")
    actions = p.add_subparsers(dest="kernel_command", metavar="ACTION", parser_class=type(p))
    actions.required = True
    imp = actions.add_parser(
        "import", help="kernel graph from a cuobjdump/nvdisasm listing, a cubin or a .cu",
        description="Import one function of a cuobjdump -sass or nvdisasm listing (or a cubin, "
                    "or a .cu compiled with nvcc -cubin -arch=ARCH) as a gpumodeler-kernel graph. "
                    "An architecture the installed nvcc no longer targets (Maxwell to Volta "
                    "with CUDA 13) is compiled through PTX and a CUDA 11 or 12 ptxas "
                    "(GPUMODELER_LEGACY_CUDA_BIN, /usr/local/cuda-12.*, or the triton wheel). "
                    "Each loop gets an iteration variable loop1, loop2, ... (default 1; change "
                    "it with --set here or in graph/predict/sweep); a loop a kernel parameter "
                    "decides reads it (give it with --set).")
    imp.add_argument("file", metavar="FILE", help="SASS listing, cubin, or CUDA source (.cu)")
    imp.add_argument("-o", "--output", metavar="OUT.json",
                     help="write the graph here (default: print it to stdout)")
    imp.add_argument("--function", metavar="NAME",
                     help="function to import when the listing has several (mangled or "
                          "demangled name)")
    imp.add_argument("--arch", metavar="sm_XX",
                     help="architecture: compile a .cu for it, or pick it from a listing with "
                          "several (e.g. sm_90)")
    imp.add_argument("--latency-table", metavar="KEY",
                     help="latency table the graph names (default: the device database's "
                          "table for the listing's architecture, e.g. Hopper for sm_90, if "
                          "there is one)")
    imp.add_argument("--set", type=common.set_arg, action="append", default=[],
                     metavar="NAME=VALUE",
                     help="default of a loop or guard variable, e.g. --set loop1=128; a guard "
                          "on the thread index or a loop whose count the block decides, set "
                          "here, keeps the value at every launch instead of the block's")
    imp.add_argument("--end-node", action="store_true",
                     help="add an END node reached from each EXIT by the block replacement "
                          "edge (needs the table's block replacement latency)")
    imp.add_argument("--table-only", action="store_true",
                     help="do not fill latencies the table lacks from the compiler's schedule "
                          "(such edges then need an explicit latency)")
    imp.set_defaults(func=run_import)


def run_import(args) -> int:
    from gpumodeler.core.kernel.sass.importer import import_kernel_with_report
    from gpumodeler.core.kernel.graph import to_dict
    if args.latency_table is not None:
        _check_table_key(args.latency_table)
    graph, report = import_kernel_with_report(args.file, args.function, args.arch,
                                              latency_table=args.latency_table,
                                              end_node=args.end_node)
    note = ""
    if not args.latency_table:
        graph.latency_table, note = table_for_architecture(report.arch)
    for name, value in args.set:
        if name not in graph.variables:
            valid = ", ".join(graph.variables) or "none (the kernel has no loops)"
            raise CLIError(f"--set {name}: the imported graph has no variable {name!r}; "
                           f"its variables: {valid}")
        graph.variables[name] = value
    fixed = {name for name, _ in args.set}
    for g in list(graph.guards.values()):
        if g.test and g.fraction.text.strip() in fixed:  # the user's value at every launch
            graph.guards[g.id] = replace(g, test="")
    for name in fixed & set(graph.block_trips):  # a loop's count too, not the block's
        del graph.block_trips[name]
    for name in fixed & set(graph.trip_tests):  # and a guard averaged over a loop's trips
        del graph.trip_tests[name]
    scheduled = "" if args.table_only else fill_from_schedule(graph)
    _lay_out(graph)
    text = json.dumps(to_dict(graph), indent=1) + "\n"
    if not args.output:
        sys.stdout.write(text)
        if report.unknown_opcodes:  # the summary is not printed: the warning still is
            print(f"gpumodeler kernel import: {_unknown_warning(report)}", file=sys.stderr)
        if scheduled:
            print(f"gpumodeler kernel import: note: {scheduled}", file=sys.stderr)
        return 0
    from gpumodeler.report.files import write_text_atomically
    write_text_atomically(args.output, text,
                          inputs=common.inputs_and_catalog((args.file, "the imported file")))
    print(f"{args.output}: {report.summary()}; {note or 'latency table ' + str(graph.latency_table)}"
          f"; {_resources(graph)}" + (f"\nnote: {scheduled}" if scheduled else ""))
    return 0


def _check_table_key(key: str) -> None:
    """CLIError when no latency table has the key ``key`` (a typo made a graph that every
    later command refused); a key the device database cannot be asked about is kept, and
    checked when the graph is used."""
    from gpumodeler.core.kernel.latency_tables import TABLES
    if key in TABLES:
        return
    try:
        with common.open_catalog() as catalog:
            keys = set(catalog.latency_table_keys())
    except (ModelError, OSError, sqlite3.Error):
        return
    if key not in keys:
        raise CLIError(f"--latency-table {shown(key)}: no latency table has that key; tables: "
                       f"{', '.join(sorted(keys | set(TABLES)))}")


def _resources(graph) -> str:
    """What the listing said the compiler allocated, or that it said nothing."""
    if not graph.registers_per_thread:
        return ("registers per thread not in the listing (give predict --registers, or "
                "import the cubin or .cu, or a cuobjdump -sass -res-usage listing)")
    shared = graph.static_shared_bytes
    return (f"{graph.registers_per_thread} registers per thread"
            + (f", {shared} B static shared memory per block" if shared is not None else ""))


def _unknown_warning(report) -> str:
    """The summary's warning about unknown opcodes and their placeholder edges."""
    parts = [p for p in report.summary().split("; ")
             if p.startswith("warning: unknown opcodes") or p.startswith("their result edges")]
    return "; ".join(parts)


def _lay_out(graph) -> None:
    """Positions for the kernel editor: program order wrapped into 16:9 columns with loops
    as regions (core.kernel.layout, the layout the GUI's import gives), not one tall column."""
    from gpumodeler.core.kernel.layout import wrapped_layout
    for nid, (x, y) in wrapped_layout(graph).items():
        graph.update_instruction(nid, x=x, y=y)


def fill_from_schedule(graph) -> str:
    """Latencies the graph's table lacks, from the listing's stall counts (sm_70+), noted in
    the graph's description; '' when nothing was filled (docs/sass-import.md)."""
    from gpumodeler.core.kernel.sass.latencies import fill_latencies_from_schedule
    from gpumodeler.core.kernel.latency_tables import TABLES
    key = graph.latency_table
    if key is None:
        return ""
    try:
        table = TABLES.get(key) or common.latency_table_for(key)
    except (ModelError, OSError, sqlite3.Error):
        return ""  # the table cannot be read: the graph keeps asking for it, named
    return fill_latencies_from_schedule(graph, table)


def table_for_architecture(arch: str | None) -> tuple[str | None, str]:
    """The key of the device database's latency table for ``arch`` (its architecture field
    names the family, e.g. 'Hopper'), and a note when there is none or several."""
    from gpumodeler.core.kernel.sass.importer import architecture_family
    from gpumodeler.core.kernel.sass.latencies import table_for_architecture as choose_table
    if architecture_family(arch) is None:
        return choose_table(arch, {})
    try:
        with common.open_catalog() as catalog:
            tables = {k: catalog.latency_table(k) for k in catalog.latency_table_keys()}
    except (ModelError, OSError, sqlite3.Error) as exc:  # the import stands without a table
        return None, f"no latency table chosen (device database: {exc})"
    return choose_table(arch, tables)
