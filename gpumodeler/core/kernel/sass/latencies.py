"""The latency table an imported graph names and the latencies it lacks, shared by
``gpumodeler kernel import`` and the GUI's File › Import Kernel… (docs/sass-import.md).

* :func:`table_for_architecture` picks, among the latency tables the caller can read (the
  device database's, through the CLI's catalog or the GUI's document: core reads no
  database), the one whose architecture is the listing's family (sm_90 -> Hopper,
  sm_52 -> Maxwell, sm_60 -> Pascal); of several, the ``<family>-published`` compilation.
* :func:`fill_latencies_from_schedule` gives the edges whose latency that table lacks the
  compiler's scheduled spacing (:mod:`.schedule`, a lower bound) and notes it in the graph's
  description.
"""
from __future__ import annotations

from collections.abc import Mapping

from gpumodeler.core.kernel.graph import KernelGraph
from gpumodeler.core.kernel.sass.importer import architecture_family
from gpumodeler.core.kernel.sass.schedule import fill_from_schedule, summary


#: Compute capabilities whose chips differ from their family's first (datacenter) chip in
#: the latencies that were measured, and the marker their tables' keys carry: GP10x
#: (sm_61/62, FP64 at 1/32 of the FP32 rate) is not GP100 (sm_60, half rate), GA10x
#: (sm_86/87) is not GA100 (sm_80), GB20x (sm_120/121) is not GB100 (sm_100).
CHIP_MARKERS = {"sm_61": "gp10x", "sm_62": "gp10x", "sm_86": "ga10x", "sm_87": "ga10x",
                "sm_120": "gb20x", "sm_121": "gb20x"}


def chip_of(arch: str | None) -> str | None:
    """The chip marker of ``arch`` (``'sm_86'`` -> ``'ga10x'``), None for a family's first chip."""
    return CHIP_MARKERS.get(str(arch or "").lower().rstrip("af"))


def _chip_rank(key: str, chip: str | None) -> int:
    """0 for a table of the listing's chip, 1 otherwise: a chip's own table first, and for a
    family's first chip the tables without another chip's marker."""
    markers = set(CHIP_MARKERS.values())
    if chip is not None:
        return 0 if chip in key else 1
    return 1 if any(m in key for m in markers) else 0


def table_for_architecture(arch: str | None, tables: Mapping) -> tuple[str | None, str]:
    """The key of the table in ``tables`` ({key: LatencyTable}) whose architecture field
    names ``arch``'s family (e.g. 'Hopper' for sm_90), and a note saying which was chosen,
    or why none was (no family, no such table) and which others would fit."""
    family = architecture_family(arch)
    if family is None:
        return None, f"no latency table chosen (architecture {arch or 'unknown'})"
    # the compiled table of every published figure (``<family>-published``) first: for
    # Maxwell the documents' own tables (maxwell-gajger, maxwell-volkov) each lack rows an
    # imported listing needs (conversions, barriers, ...), which it fills
    chip = chip_of(arch)
    keys = sorted((k for k, t in tables.items()
                   if family.lower() in str(getattr(t, "architecture", "")).lower()),
                  key=lambda k: (_chip_rank(k, chip), not k.endswith("-published"), k))
    if not keys:
        return None, (f"no {family} latency table in the device database: name one with "
                      f"--latency-table, or give graph/sweep --table")
    more = f" (also: {', '.join(keys[1:])}; choose with --latency-table)" if len(keys) > 1 else ""
    return keys[0], f"latency table {keys[0]} ({family}){more}"


def fill_latencies_from_schedule(graph: KernelGraph, table) -> str:
    """Latencies the graph's ``table`` lacks, from the listing's stall counts (sm_5x+),
    noted in the graph's description; returns the note, '' when nothing was filled (no
    table, no control words, or the table has every value)."""
    if table is None or graph.latency_table is None:
        return ""
    text = summary(fill_from_schedule(graph, table), graph.latency_table)
    if text:
        graph.description = (graph.description + "\n" if graph.description else "") + text + "."
    return text
