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
    keys = sorted((k for k, t in tables.items()
                   if family.lower() in str(getattr(t, "architecture", "")).lower()),
                  key=lambda k: (not k.endswith("-published"), k))
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
