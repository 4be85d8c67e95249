"""Write-after-read scoreboard edges and store->load ordering (core/kernel/sass/ordering.py),
on short listings checked by hand. The control words are written with encode_control:
rd = read barrier, wr = write barrier, wait = mask of scoreboards waited on, stall."""
from gpumodeler.core.kernel.sass.build import build_graph
from gpumodeler.core.kernel.sass.control import encode_control
from gpumodeler.core.kernel.sass.listing import parse_listing


def listing(*rows):
    """A cuobjdump-style sm_90 listing of one function from (text, control kwargs) rows."""
    lines = ["\tcode for sm_90", "\t\tFunction : k"]
    for k, (text, ctrl) in enumerate(rows):
        lines.append(f"        /*{16 * k:04x}*/                   {text} ;"
                     f"                 /* 0x{0:016x} */")
        lines.append(f"                                                                 "
                     f"/* 0x{encode_control(**ctrl):016x} */")
    return "\n".join(lines) + "\n"


def graph_of(*rows):
    (func,) = parse_listing(listing(*rows)).functions
    return build_graph(func)


def edges(graph):
    return {(e.src, e.dst, e.kind): e for e in graph.edges.values()}


def test_read_barrier_wait_in_a_loop_is_a_carried_war_edge():
    # the LDG reads its address R2 late (read barrier 1); the next iteration's IADD3
    # overwrites R2 and waits on scoreboard 1 first: WAR, LDG -> IADD3, loop-carried,
    # with the LDG's issue spacing (stall 2). Its result (write barrier 0) is the RAW
    # memory edge to the FADD, which waits on 0.
    g, r = graph_of(("MOV R2, 0x0", dict(stall=1)),
                    ("IADD3 R2, R2, 0x4, RZ", dict(stall=1, wait_mask=0b10)),
                    ("LDG.E R3, desc[UR4][R2.64]", dict(stall=2, read_barrier=1, write_barrier=0)),
                    ("FADD R4, R3, R4", dict(stall=4, wait_mask=0b01)),
                    ("FSETP.NE.AND P0, PT, R4, RZ, PT", dict(stall=5)),
                    ("@P0 BRA 0x10", dict(stall=5)),
                    ("EXIT", dict(stall=5)))
    e = edges(g)
    war = e[("i0020", "i0010", "dependency")]
    assert war.latency == 2.0
    assert set(g.loops["loop1"].members) >= {"i0010", "i0020"}
    assert e[("i0020", "i0030", "memory")].latency is None  # RAW through the write barrier
    assert ("i0020", "i0030", "dependency") not in e  # no WAR where the write barrier is waited on
    assert r.skipped_edges == 0


def test_store_read_barrier_war_edge_straight_line():
    # STG reads R5 late (read barrier 2); MOV R5 waits on 2: WAR STG -> MOV (stall 3);
    # the FADD in between waits on nothing and gets no edge from the STG.
    g, _ = graph_of(("STG.E desc[UR4][R2.64], R5", dict(stall=3, read_barrier=2)),
                    ("FADD R6, R6, R6", dict(stall=4)),
                    ("MOV R5, 0x1", dict(stall=1, wait_mask=0b100)),
                    ("EXIT", dict(stall=5)))
    e = edges(g)
    assert e[("i0000", "i0020", "dependency")].latency == 3.0
    assert not any(k[0] == "i0000" and k[1] == "i0010" and k[2] != "ilp" for k in e)


def test_store_then_first_load_of_the_same_space():
    g, r = graph_of(("STS [R0], R1", dict(stall=3)),
                    ("MOV R5, 0x1", dict(stall=1)),
                    ("LDS R2, [R0]", dict(stall=1, write_barrier=0)),
                    ("LDS R3, [R0+0x4]", dict(stall=1, write_barrier=1)),
                    ("LDG.E R4, desc[UR4][R6.64]", dict(stall=1, write_barrier=2)),
                    ("ST.E desc[UR4][R8.64], R7", dict(stall=2)),
                    ("MOV R10, 0x2", dict(stall=1)),
                    ("LDL R9, [R1]", dict(stall=1, write_barrier=3)),
                    ("EXIT", dict(stall=5, wait_mask=0b1111)))
    e = edges(g)
    order = {(s, d): x for (s, d, k), x in e.items() if k == "ilp"}
    # STS -> the first LDS, with the store's issue spacing (3), not a memory latency
    assert order[("i0000", "i0020")].latency == 3.0
    # the second LDS issues behind the first: no edge of its own; the global load is
    # another state space: no edge from the shared store
    assert ("i0000", "i0030") not in order and ("i0000", "i0040") not in order
    # a generic store may write local memory: the LDL after it keeps its order
    assert order[("i0050", "i0070")].latency == 2.0
    assert r.skipped_edges == 0


def test_store_at_the_end_of_a_loop_orders_the_next_iterations_load():
    g, _ = graph_of(("MOV R1, 0x0", dict(stall=1)),
                    ("LDS R2, [R0]", dict(stall=1, write_barrier=0)),
                    ("FADD R2, R2, 1", dict(stall=4, wait_mask=0b1)),
                    ("STS [R0], R2", dict(stall=5)),
                    ("ISETP.NE.AND P0, PT, R1, RZ, PT", dict(stall=5)),
                    ("@P0 BRA 0x10", dict(stall=5)),
                    ("EXIT", dict(stall=5)))
    e = edges(g)
    carried = e[("i0030", "i0010", "ilp")]
    assert carried.latency == 5.0
    assert {"i0010", "i0030"} <= set(g.loops["loop1"].members)


def test_without_control_words_the_order_edge_takes_the_table_ilp():
    text = ("\tcode for sm_50\n\t\tFunction : k\n"
            "        /*0008*/                   STS [R0], R1 ;\n"
            "        /*0010*/                   MOV R5, 0x1 ;\n"
            "        /*0018*/                   LDS R2, [R0] ;\n"
            "        /*0020*/                   EXIT ;\n")
    (func,) = parse_listing(text).functions
    g, r = build_graph(func)
    order = [x for x in g.edges.values() if x.kind == "ilp" and (x.src, x.dst) == ("i0008", "i0018")]
    assert len(order) == 1 and order[0].latency is None
