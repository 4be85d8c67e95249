"""Import a kernel graph from a SASS listing, a cubin or a CUDA source: the one entry point
the CLI (``gpumodeler kernel import``) and the GUI (File › Import kernel…) share.

* :func:`read_listing` reads a file: a ``.cu`` is compiled with ``nvcc -cubin -arch=ARCH``
  and disassembled; a cubin/ELF is disassembled (:mod:`.toolchain` runs the tools on a
  private copy under a fixed name, so no file name reaches a tool's command line or nvcc's
  shell, and stops a tool that hangs with every process it started); anything else is read
  as a ``cuobjdump -sass`` or ``nvdisasm`` listing (:mod:`.listing`). Mangled names get
  their demangled form when a demangler (cu++filt, c++filt) is installed.
* :func:`select_function` picks one function (``--function`` matches the mangled name, the
  demangled signature or the demangled name without parameters) and architecture.
* :func:`import_kernel` does both and builds the graph (:mod:`.build`).
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gpumodeler.core.architectures import architecture_family as core_family
from gpumodeler.core.errors import ModelError
from gpumodeler.core.kernel.expressions import parse as parse_expression
from gpumodeler.core.kernel.graph import KernelGraph
from gpumodeler.core.kernel.graph_items import (DEFAULT_BLOCKS, Guard, default_block,
                                                 launch_guard_values, trip_test_step)
from gpumodeler.core.kernel.sass.build import ImportReport, build_graph
from gpumodeler.core.kernel.sass.listing import (ListingError, SassFunction, SassListing, arch_number,
                                                 parse_listing)
from gpumodeler.core.kernel.sass import parameters, toolchain
from gpumodeler.core.kernel.collector import collector_paused
from gpumodeler.core.kernel.sass.guards import add_guards

#: An architecture (``sm_90``, ``sm_90a``): checked before it reaches nvcc's command line.
ARCH_PATTERN = toolchain.ARCH_PATTERN
check_arch = toolchain.check_arch
#: Architecture family of each compute capability a listing may have (``sm_89`` -> "Ada"), by
#: :func:`gpumodeler.core.architectures.architecture_family`, to find the latency table of a
#: listing's architecture (Maxwell on: older listings are not read).
FAMILIES = {n: core_family(f"{n // 10}.{n % 10}")
            for n in (50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 88, 89, 90, 100, 101, 103,
                      110, 120, 121)}


def architecture_family(arch: str | None) -> str | None:
    """``'sm_90a'`` -> ``'Hopper'``; None when unknown."""
    return FAMILIES.get(arch_number(arch) or -1)
#: Bytes read at most from a listing file (a listing of 20 000 instructions is ~2 MB).
MAX_LISTING_BYTES = 200 * 1024 * 1024


class FunctionChoiceError(ModelError):
    """The listing has several functions (or architectures) and none was chosen; ``choices``
    lists the valid ones."""

    def __init__(self, message: str, choices: list[str]):
        super().__init__(message)
        self.choices = choices


def read_listing(path: str | Path, arch: str | None = None) -> SassListing:
    """The listing of ``path``: a text listing, a cubin (disassembled) or a ``.cu``
    (compiled for ``arch`` and disassembled)."""
    path = Path(path)
    if path.suffix.lower() == ".cu":
        if not arch:
            raise ModelError(f"{path.name} is CUDA source: give the architecture to compile "
                             f"for, e.g. --arch sm_90")
        if not path.is_file():
            raise ModelError(f"cannot read {path}: no such file")
        text = toolchain.compile_to_sass(path, check_arch(arch))
        listing = _with_names(parse_listing(text, path.name))
        try:
            listing.source = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            pass  # compiled, but not readable again: the parameters keep their offsets
        return listing
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_LISTING_BYTES + 1)
    except OSError as exc:
        raise ModelError(f"cannot read {path}: {exc.strerror}") from None
    if len(data) > MAX_LISTING_BYTES:
        raise ListingError(f"{path.name} is larger than {MAX_LISTING_BYTES // 2**20} MiB; "
                           f"import one function's listing (cuobjdump -sass -fun NAME)")
    if data.startswith(b"\x7fELF"):
        text = toolchain.disassemble_cubin(path)
        return _with_names(parse_listing(text, path.name))
    if not data.strip():
        raise ListingError(f"{path.name} is empty; give a cuobjdump -sass or nvdisasm listing")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ListingError(f"{path.name} is binary data, not a text listing; give a cuobjdump "
                           f"-sass or nvdisasm listing, a cubin or a .cu source") from None
    return _with_names(parse_listing(text, path.name))


def _with_names(listing: SassListing) -> SassListing:
    names = toolchain.demangle([f.name for f in listing.functions])
    for f in listing.functions:
        f.demangled = names.get(f.name)
    return listing


def _short(demangled: str) -> str:
    """``'void scale<float>(float*, float, int)'`` -> ``'scale<float>'``."""
    text = demangled.split("(")[0].strip()
    depth, cut = 0, 0
    for i, ch in enumerate(text):  # drop a return type before the name (templates only)
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == " " and depth == 0:
            cut = i + 1
    return text[cut:]


def function_names(func: SassFunction) -> list[str]:
    """Every name that selects ``func``: mangled, demangled, demangled without parameters
    and without template arguments."""
    names = [func.name]
    if func.demangled:
        short = _short(func.demangled)
        names += [func.demangled, short, short.split("<")[0]]
    return list(dict.fromkeys(names))


def describe(func: SassFunction) -> str:
    if func.demangled:
        return f"{func.demangled} [{func.name}]"
    return func.name


def select_function(listing: SassListing, function: str | None = None,
                    arch: str | None = None) -> SassFunction:
    """One function of the listing; raises FunctionChoiceError listing the choices."""
    funcs = listing.functions
    archs = listing.archs()
    if arch:
        check_arch(arch)
        if archs and arch not in archs:
            raise ModelError(f"the listing has code for {', '.join(archs)}, not {arch}")
        funcs = [f for f in funcs if f.arch in (arch, None)]
    elif len(archs) > 1:
        raise FunctionChoiceError(f"the listing has code for several architectures "
                                  f"({', '.join(archs)}); choose one with --arch", archs)
    if function:
        found = [f for f in funcs if function in function_names(f)]
        if not found:
            raise FunctionChoiceError(
                f"no function {function!r} in the listing; it has: "
                f"{'; '.join(describe(f) for f in funcs)}", [describe(f) for f in funcs])
        if len(found) > 1:
            raise FunctionChoiceError(
                f"{function!r} matches several functions: {'; '.join(describe(f) for f in found)}; "
                f"give the mangled name", [f.name for f in found])
        return _with_arch(found[0], arch)
    if len(funcs) > 1:
        raise FunctionChoiceError(
            f"the listing has {len(funcs)} functions; choose one with --function: "
            f"{'; '.join(describe(f) for f in funcs)}", [describe(f) for f in funcs])
    return _with_arch(funcs[0], arch)


def _with_arch(func: SassFunction, arch: str | None) -> SassFunction:
    """A listing without a ``code for sm_XX`` line takes the architecture the user gave."""
    if func.arch is None and arch:
        func.arch = arch
    return func


def import_kernel_with_report(path: str | Path, function: str | None = None,
                              arch: str | None = None, *, latency_table: str | None = None,
                              end_node: bool = False) -> tuple[KernelGraph, ImportReport]:
    """The kernel graph of one function of ``path`` and the import report."""
    listing = read_listing(path, arch)
    return import_from_listing(listing, function, arch, latency_table=latency_table,
                               end_node=end_node)


@collector_paused()  # many small objects, no cycles (core/kernel/collector.py)
def import_from_listing(listing: SassListing, function: str | None = None,
                        arch: str | None = None, *, latency_table: str | None = None,
                        end_node: bool = False) -> tuple[KernelGraph, ImportReport]:
    """The graph and report of one function of a listing already read (:func:`read_listing`:
    the GUI reads, and compiles, once, then lets the user choose the function)."""
    func = select_function(listing, function, arch)
    name = _short(func.demangled) if func.demangled else func.name
    names = parameters.parameter_names(
        listing.source, name.split("<")[0], func.demangled,
        parameters.parameter_base(arch_number(func.arch))) if listing.source else {}
    graph, report = build_graph(func, name=name, latency_table=latency_table, end_node=end_node,
                                parameter_names=names)
    # what the listing says the compiler allocated: the occupancy's inputs by default
    graph.registers_per_thread = func.registers if func.registers else None
    graph.static_shared_bytes = kernel_shared_bytes(func.shared_bytes, func.arch)
    add_guards(graph, func, report.compared, report.guards,  # how often guarded code runs
               trip_specs=report.trip_specs)
    _count_peeled_copies(graph, report)
    block = default_block(graph)
    if block != DEFAULT_BLOCKS[0]:  # a test or count of y or z: their defaults at such a block
        graph.variables.update(launch_guard_values(graph, {}, block, 32))
    report.guard_variables = {g.fraction.text: g.test or _trip_test_text(
        graph.trip_tests.get(g.fraction.text)) or (
        f"= {graph.block_trips[g.fraction.text]}" if g.fraction.text in graph.block_trips
        else "") for g in graph.guards.values() if g.fraction.text in graph.variables}
    return graph, report


def _trip_test_text(spec: dict | None) -> str:
    """A trip test as the import summary says it (``tid.x < s, s = floor(block_x / 2)
    halved each trip of loop2``); "" for none."""
    if not spec:
        return ""
    return (f"{spec['value']} {spec['op']} s, s = {spec['first']} {trip_test_step(spec)} each "
            f"trip of {spec['trips']}")


def _count_peeled_copies(graph: KernelGraph, report: ImportReport) -> None:
    """The copies of an unrolled loop's body left as straight code (peeled by ptxas before
    its remainder loop, or nvcc's last copies after the unrolled loop where the remainder
    loop comes first) run under a trip-count check, which :mod:`.guards` gives a variable
    (default 1: at every trip count) or, where the check compares a thread's value with a
    parameter, none (a bounds check: every thread). Where that check's guard holds just
    those copies, its fraction becomes how often they run; where no guard does, a guard of
    the copies is made with it. The loop's iterations become what is left to it (build.py),
    so that the counts at the source trip count are those of that many source iterations."""
    for first, last, runs, loop_id, trips in report.peeled:
        lo, hi = int(first[1:], 16), int(last[1:], 16)
        inside = [g for g in graph.guards.values() if g.kind == "region"
                  and all(m.startswith("i") and lo <= int(m[1:], 16) <= hi for m in g.members)]
        header = min(int(m[1:], 16) for m in graph.loops[loop_id].members)
        where = "peeled before its remainder loop" if lo < header else \
            "left as straight code after the unrolled loop (the remainder loop first:"
        name = (f"copies of the loop's body {where} {loop_id}{')' if lo > header else ''}: run "
                f"{runs} times")
        if not inside:
            members = [i for i in graph.instructions if i.startswith("i") and lo <= int(
                i[1:], 16) <= hi]
            gid = f"g{len(graph.guards) + 1}"
            while gid in graph.guards or gid in graph.loops or gid in graph.instructions:
                gid += "_"
            graph.guards[gid] = Guard.make(gid, members, runs, "region", name)
            graph.update_loop(loop_id, iterations=trips)
            continue
        if len(inside) != 1:
            continue  # not the one check seen on nvcc 12-13's listings: left as guarded
        (g,) = inside
        old = set(g.fraction.variables)
        graph.guards[g.id] = replace(g, fraction=parse_expression(runs), test="", name=name)
        graph.update_loop(loop_id, iterations=trips)
        report.loops = [(lid, h, la, trips if lid == loop_id else it)
                        for lid, h, la, it in report.loops]
        used = {v for x in graph.guards.values() for v in x.fraction.variables}
        used |= {v for lp in graph.loops.values() for v in lp.iterations.variables}
        for var in old - used:
            graph.variables.pop(var, None)


#: Shared memory per block the system reserves from compute capability 8.0 on (CUDA C++
#: Programming Guide, "Compute Capabilities", "Maximum amount of shared memory per thread
#: block"); the occupancy calculator adds it to each block itself.
RESERVED_SHARED_BYTES = 1024


def kernel_shared_bytes(reported: int | None, arch: str | None) -> int | None:
    """The kernel's own static shared memory from the SHARED that cuobjdump -res-usage
    reports. From sm_90 on the report includes the block's 1 KB system reservation
    (the same source reports SHARED:2048 for sm_80 and sm_89 and SHARED:3072 for sm_90,
    sm_100 and sm_120 with nvcc 13.0; a kernel without shared memory reports 0); the
    occupancy calculator adds that reservation itself, so it is taken off here (the
    choice: counted once, by the calculator)."""
    from gpumodeler.core.kernel.sass.listing import arch_number
    if reported is None:
        return None
    if (arch_number(arch) or 0) >= 90 and reported >= RESERVED_SHARED_BYTES:
        return reported - RESERVED_SHARED_BYTES
    return reported


def import_kernel(path: str | Path, function: str | None = None, arch: str | None = None,
                  **kw) -> KernelGraph:
    """The kernel graph of one function of a SASS listing, cubin or ``.cu`` (see module)."""
    return import_kernel_with_report(path, function, arch, **kw)[0]
