import json

import networkx as nx
import pytest
from hypothesis import given, settings, strategies as st

from gpumodeler.core.errors import ExpressionError, FormatError, GraphError
from gpumodeler.core.kernel.graph import (FORMAT_VERSION, Edge, Instruction, KernelGraph, Loop,
                                         from_dict, to_dict)
from gpumodeler.core.kernel.latency_bound import analyze

from repetitions import repetitions


def chain(n, table="maxwell-gajger"):
    g = KernelGraph(latency_table=table)
    for i in range(n):
        g.add_instruction(Instruction.make(f"n{i}", "FADD"))
    return g


def test_cycle_outside_a_loop_is_an_error_naming_the_edge():
    g = chain(3)
    g.add_edge(Edge("e1", "n0", "n1", "dependency"))
    g.add_edge(Edge("back", "n2", "n0", "dependency"))
    with pytest.raises(GraphError, match="edge back from n2 back to n0 makes a cycle outside any loop") as err:
        analyze(g)
    assert err.value.item == "back"


def test_negative_latency_is_an_error():
    g = chain(2)
    with pytest.raises(GraphError, match=">= 0 cycles"):
        g.add_edge(Edge("e1", "n0", "n1", "ilp", latency=-3))


def test_unknown_variable_in_a_loop_is_an_error():
    g = chain(2)
    g.add_edge(Edge("e1", "n0", "n1", "dependency"))
    g.add_loop(Loop.make("L", ["n0", "n1"], "N/256"))
    bound = analyze(g)
    with pytest.raises(ExpressionError, match="unknown variable"):
        bound.evaluate({"a": 3})
    with pytest.raises(ExpressionError, match="negative"):
        analyze(g).evaluate({"N": -512})


def test_missing_table_latency_asks_for_an_explicit_one():
    g = KernelGraph(latency_table="gt200-gajger")
    g.add_instruction(Instruction.make("a", "FADD"))
    g.add_instruction(Instruction.make("b", "FADD"))
    g.add_edge(Edge("e", "a", "b", "ilp"))
    with pytest.raises(GraphError, match="no ILP .* give the edge an explicit latency") as err:
        analyze(g)
    assert err.value.item == "e"
    g.update_edge("e", latency=4)
    assert analyze(g).evaluate() == 4


def test_nested_loops_multiply():
    """outer (b iterations) holds x -> inner (a iterations: y -> z, back edge 5) -> w."""
    g = KernelGraph()
    for nid in "xyzw":
        g.add_instruction(Instruction.make(nid, "FADD"))
    g.add_edge(Edge("e1", "x", "y", "ilp", latency=1))
    g.add_edge(Edge("e2", "y", "z", "ilp", latency=2))
    g.add_edge(Edge("e3", "z", "y", "branch", latency=5))
    g.add_edge(Edge("e4", "z", "w", "ilp", latency=3))
    g.add_edge(Edge("e5", "w", "x", "branch", latency=7))
    g.add_loop(Loop.make("inner", ["y", "z"], "a"))
    g.add_loop(Loop.make("outer", ["x", "y", "z", "w"], "b"))
    bound = analyze(g)
    # per outer iteration: 1 + 7·a + 3 + 7 (w -> x back edge)
    assert bound.formula() == "11·b + 7·a·b"
    assert bound.evaluate({"a": 2, "b": 3}) == 3 * (11 + 14)


def test_overlapping_loops_are_refused():
    g = chain(3)
    g.add_loop(Loop.make("L1", ["n0", "n1"], 2))
    with pytest.raises(GraphError, match="partly overlaps"):
        g.add_loop(Loop.make("L2", ["n1", "n2"], 2))


def test_two_candidate_paths_give_a_max_formula():
    g = chain(4)
    g.add_edge(Edge("e1", "n0", "n1", "ilp", latency=100))
    g.add_edge(Edge("e2", "n0", "n2", "ilp", latency=1))
    g.add_edge(Edge("e3", "n2", "n3", "ilp", latency=1))
    g.add_edge(Edge("e4", "n3", "n2", "branch", latency=1))
    g.add_loop(Loop.make("L", ["n2", "n3"], "a"))
    bound = analyze(g)
    assert bound.formula() == "max(100, 1 + 2·a)"
    assert bound.evaluate({"a": [0, 100]}).tolist() == [100, 201]


def test_json_round_trip(tmp_path):
    from pathlib import Path
    data = json.loads((Path(__file__).parents[2] / "resources/kernels/saxpy2-maxwell.json").read_text())
    g = from_dict(data)
    again = from_dict(json.loads(json.dumps(to_dict(g))))
    assert again == g
    assert to_dict(again) == to_dict(g)


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(version=FORMAT_VERSION + 1), "newer gpumodeler"),
    (lambda d: d.update(format="other"), "not a gpumodeler kernel file"),
    (lambda d: d.update(colour="red"), "unknown key"),
    (lambda d: d["instructions"].append({"id": "x", "opcode": "WHAT"}), "unknown opcode"),
    (lambda d: d["edges"].append({"from": "i1", "to": "nope", "kind": "ilp"}), "no instruction 'nope'"),
    (lambda d: d["loops"][0].update(iterations="import os"), "unexpected"),
])
def test_bad_files_are_clear_errors(mutate, message):
    from pathlib import Path
    data = json.loads((Path(__file__).parents[2] / "resources/kernels/saxpy2-maxwell.json").read_text())
    mutate(data)
    with pytest.raises((FormatError, GraphError, ExpressionError), match=message):
        from_dict(data)


@settings(max_examples=repetitions(25, 60), deadline=None)
@given(st.integers(2, 25), st.data())
def test_loop_free_bound_equals_networkx_longest_path(n, data):
    g = chain(n)
    nxg = nx.DiGraph()
    nxg.add_nodes_from(g.instructions)
    for k in range(data.draw(st.integers(0, 3 * n))):
        i = data.draw(st.integers(0, n - 2))
        j = data.draw(st.integers(i + 1, n - 1))
        w = data.draw(st.integers(0, 400))
        g.add_edge(Edge(f"e{k}", f"n{i}", f"n{j}", "ilp", latency=w))
        if not nxg.has_edge(f"n{i}", f"n{j}") or nxg[f"n{i}"][f"n{j}"]["weight"] < w:
            nxg.add_edge(f"n{i}", f"n{j}", weight=w)
    assert analyze(g).evaluate() == nx.dag_longest_path_length(nxg, weight="weight")


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 1000), st.integers(0, 1000))
def test_bound_is_affine_in_iterations(a1, a2):
    import json as _json
    from pathlib import Path
    g = from_dict(_json.loads((Path(__file__).parents[2] / "resources/kernels/saxpy2-maxwell.json").read_text()))
    b = analyze(g)
    assert b.evaluate({"a": a1}) - b.evaluate({"a": a2}) == 24 * (a1 - a2)


def test_remove_instruction_drops_its_edges_and_loop_membership():
    g = chain(3)
    g.add_edge(Edge("e1", "n0", "n1", "ilp"))
    g.add_loop(Loop.make("L", ["n1", "n2"], 4))
    ins, index, edges, loops = g.remove_instruction("n1")
    assert index == 1 and [e.id for e in edges] == ["e1"] and g.loops["L"].members == {"n2"}


def test_remove_instruction_of_nested_loops():
    """An instruction of nested loops leaves each of them (the inner one first, else the outer
    one would partly overlap it), and the command's undo puts it back in all of them."""
    from gpumodeler.core.commands import RemoveInstruction
    from gpumodeler.core.project import Project

    g = chain(6)
    for i in range(1, 6):
        g.add_edge(Edge(f"c{i}", f"n{i - 1}", f"n{i}", "ilp"))
    g.add_loop(Loop.make("outer", ["n0", "n1", "n2", "n3", "n4"], "a"))
    g.add_loop(Loop.make("inner", ["n1", "n2", "n3"], 4))
    g.add_loop(Loop.make("one", ["n2"], 2))
    before = to_dict(g)
    project = Project("p")
    project.put_kernel("k", g)
    cmd = RemoveInstruction("k", "n2")
    cmd.do(project)
    assert g.loops["outer"].members == {"n0", "n1", "n3", "n4"} and "one" not in g.loops
    assert g.loops["inner"].members == {"n1", "n3"} and "n2" not in g.instructions
    assert not [e for e in g.edges.values() if "n2" in (e.src, e.dst)]
    cmd.undo(project)
    restored = to_dict(g)
    assert restored["instructions"] == before["instructions"]
    assert sorted(map(str, restored["edges"])) == sorted(map(str, before["edges"]))
    assert {lp["id"]: sorted(lp["members"]) for lp in restored["loops"]} == \
        {lp["id"]: sorted(lp["members"]) for lp in before["loops"]}


def test_a_refused_removal_changes_nothing():
    """Removing the one instruction that tells two nested loops apart would leave them with
    the same instructions: refused, and the graph is as it was (edges, loops, their order)."""
    g = chain(4)
    for i in range(1, 4):
        g.add_edge(Edge(f"c{i}", f"n{i - 1}", f"n{i}", "ilp"))
    g.add_loop(Loop.make("outer", ["n0", "n1", "n2"], "a"))
    g.add_loop(Loop.make("inner", ["n1", "n2"], 4))
    g.add_loop(Loop.make("innermost", ["n2"], 2))
    before = to_dict(g)
    with pytest.raises(GraphError, match="same instructions"):
        g.remove_instruction("n0")
    assert to_dict(g) == before


def random_looped_graph(data, n):
    """A random program with ILP chain, forward dependencies and 0-3 loops (with back edges)."""
    g = chain(n)
    for i in range(1, n):
        g.add_edge(Edge(f"c{i}", f"n{i-1}", f"n{i}", "ilp", latency=data.draw(st.integers(0, 5))))
    for k in range(data.draw(st.integers(0, 2 * n))):
        i = data.draw(st.integers(0, n - 2))
        j = data.draw(st.integers(i + 1, min(n - 1, i + 6)))
        g.add_edge(Edge(f"d{k}", f"n{i}", f"n{j}", "dependency", latency=data.draw(st.integers(0, 400))))
    start = 0
    for k in range(data.draw(st.integers(0, 3))):
        if start >= n - 1:
            break
        a = data.draw(st.integers(start, n - 1))
        b = data.draw(st.integers(a, min(n - 1, a + 5)))
        members = [f"n{x}" for x in range(a, b + 1)]
        if b > a and data.draw(st.booleans()):
            g.add_edge(Edge(f"back{k}", f"n{b}", f"n{a}", "branch", latency=data.draw(st.integers(0, 20))))
        g.add_loop(Loop.make(f"L{k}", members, data.draw(st.sampled_from(["a", "b", "2*a", "3"]))))
        start = b + 1
    return g


@settings(max_examples=repetitions(30, 80), deadline=None)
@given(st.integers(2, 18), st.data())
def test_symbolic_and_numeric_bounds_agree(n, data):
    import numpy as np
    g = random_looped_graph(data, n)
    bound = analyze(g)
    values = {"a": np.array([0, 1, 3, 17]), "b": np.array([5, 0, 2, 9])}
    assert bound.symbolic
    numeric = bound._numeric(bound._loop_values(values))
    assert np.array_equal(np.broadcast_to(bound.evaluate(values), (4,)), np.broadcast_to(numeric, (4,)))
    # the critical path's latencies add up to the bound
    for i in range(4):
        scalar = {"a": int(values["a"][i]), "b": int(values["b"][i])}
        cp = bound.critical_path(scalar)
        loops = bound._loop_values(scalar)
        total = sum(bound.edge_latency[s] for s in cp.steps if not isinstance(s, tuple))
        for s in cp.steps:
            if isinstance(s, tuple):
                per = sum(bound.edge_latency[e] for e in cp.loop_paths[s[1]])
                total += loops[s[1]] * per
        assert total == bound.evaluate(scalar)


def test_too_many_forms_falls_back_to_exact_numeric(monkeypatch):
    import gpumodeler.core.kernel.latency_bound as lb
    g = chain(6)
    for i in range(1, 6):
        g.add_edge(Edge(f"c{i}", f"n{i-1}", f"n{i}", "ilp", latency=1))
    g.add_edge(Edge("skip1", "n0", "n2", "dependency", latency=50))
    g.add_edge(Edge("skip2", "n2", "n5", "dependency", latency=50))
    g.add_loop(Loop.make("L1", ["n1"], "a"))
    g.add_loop(Loop.make("L2", ["n3", "n4"], "b"))
    exact = analyze(g)
    assert exact.symbolic and exact.formula().startswith("max(")
    monkeypatch.setattr(lb, "MAX_FORMS", 1)
    fallback = analyze(g)
    assert not fallback.symbolic and "numerically" in fallback.formula()
    for a, b in [(0, 0), (1, 100), (100, 1), (7, 7)]:
        assert fallback.evaluate({"a": a, "b": b}) == exact.evaluate({"a": a, "b": b})
