"""The latency table an import names and the schedule fill, as both the CLI and the GUI
call them (core/kernel/sass/latencies.py): the caller hands in the tables it can read."""
from pathlib import Path

from gpumodeler.core.kernel.latency_bound import analyze
from gpumodeler.core.kernel.latency_tables import TABLES, LatencyTable
from gpumodeler.core.kernel.sass import import_kernel
from gpumodeler.core.kernel.sass.latencies import fill_latencies_from_schedule, table_for_architecture

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"


def table(key, arch, **kw):
    return LatencyTable(key, key, arch, "test", **kw)


def test_the_table_of_the_listings_family_is_chosen():
    tables = {**TABLES, "a": table("a", "Ampere (GA100)"), "h2": table("h2", "Hopper"),
              "h1": table("h1", "NVIDIA Hopper GH100")}
    key, note = table_for_architecture("sm_90a", tables)
    assert key == "h1" and note == "latency table h1 (Hopper) (also: h2; choose with --latency-table)"
    assert table_for_architecture("sm_86", tables) == ("a", "latency table a (Ampere)")


def test_no_table_says_why():
    key, note = table_for_architecture("sm_89", {"a": table("a", "Ampere")})
    assert key is None and "no Ada latency table" in note
    key, note = table_for_architecture(None, TABLES)
    assert key is None and "architecture unknown" in note
    assert table_for_architecture("sm_35", TABLES)[0] is None  # Kepler: no family here


def test_maxwell_and_pascal_take_the_compiled_table_of_their_family():
    """sm_50-53 are Maxwell, sm_60-62 Pascal; of several tables of a family the
    '<family>-published' compilation is chosen (the documents' own tables each lack rows)."""
    tables = {**TABLES, "maxwell-published": table("maxwell-published", "Maxwell"),
              "pascal-published": table("pascal-published", "Pascal")}
    key, note = table_for_architecture("sm_52", tables)
    assert key == "maxwell-published"
    assert note == ("latency table maxwell-published (Maxwell) (also: maxwell-gajger, "
                    "maxwell-volkov; choose with --latency-table)")
    assert table_for_architecture("sm_50", tables)[0] == "maxwell-published"
    assert table_for_architecture("sm_61", tables) == ("pascal-published",
                                                       "latency table pascal-published (Pascal)")
    # GP10x (sm_61/62: FP64 at 1/32 rate) takes its own table where there is one, GP100
    # (sm_60: half-rate FP64) the family's table without a chip marker
    tables["pascal-gp10x-published"] = table("pascal-gp10x-published", "Pascal")
    for arch in ("sm_61", "sm_62"):
        key, note = table_for_architecture(arch, tables)
        assert key == "pascal-gp10x-published" and "also: pascal-published" in note, arch
    key, note = table_for_architecture("sm_60", tables)
    assert key == "pascal-published" and "also: pascal-gp10x-published" in note
    # without the compilation, the documents' tables in key order
    assert table_for_architecture("sm_53", TABLES)[0] == "maxwell-gajger"
    key, note = table_for_architecture("sm_60", TABLES)
    assert key is None and "no Pascal latency table" in note


def test_the_fill_is_noted_in_the_description_and_makes_the_graph_evaluate():
    sparse = table("sparse", "Hopper", instruction_cycles={"fp32_mad": 4.0, "int_add": 4.0},
                   memory_cycles={"dram": 500.0})
    graph = import_kernel(SASS / "saxpy2.sm_90.sass")
    graph.latency_table = "sparse"
    before = graph.description
    unset = {e.id for e in graph.edges.values() if e.latency is None}
    note = fill_latencies_from_schedule(graph, sparse)
    filled = unset - {e.id for e in graph.edges.values() if e.latency is None}
    assert filled and note.startswith(f"{len(filled)} edge(s) take their latency from the "
                                      f"compiler's schedule (a lower bound) because table 'sparse'")
    assert "2× class fp32_add" in note  # FADD: the table knows only fp32_mad
    assert graph.description == before + "\n" + note + "."
    analyze(graph, sparse)
    assert fill_latencies_from_schedule(graph, sparse) == ""  # nothing left to fill
    assert fill_latencies_from_schedule(graph, None) == ""
