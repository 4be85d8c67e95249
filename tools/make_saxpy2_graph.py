"""Rebuild resources/kernels/saxpy2-maxwell.json: Gajger's saxpy2 execution graph.

Gajger's drawing of the graph (Fig. 5.6) was lost from the thesis text. This script
reconstructs it from the SASS of Fig. 5.2 and the rules of §5.2.2, and the reconstruction
reproduces his eq. 5.1 exactly (latency bound = 92 + 700 + 150 + 24a = 942 + 24a):

* one node per instruction of Fig. 5.2 lines 1–30 (the tail after the final EXIT is
  skipped, as in the thesis) plus a virtual END node;
* an ILP edge (3 cycles, Maxwell, Table 4.1) between consecutive instructions, and a dual
  edge (0) for the three bracketed pairs 15–16, 17–18, 22–23;
* a dependency edge from the last writer of every register an instruction reads, labelled
  with the writer's latency (Table 4.1, Maxwell column); predicate registers (P0) count as
  registers, the carry flag (.CC -> .X) does not (Gajger: "input registers");
* loads (LDG) give memory edges with the global-memory latency (350, Table 4.2; cache hit
  ratio 0%, §5.2.2);
* branches: the not-taken fall-through of lines 16 and 23 (10 cycles) and the taken back
  edge of the loop, line 23 -> line 20 (12 cycles);
* the loop (lines 20–23) has `a` iterations; its per-iteration critical path is
  IADD32I -6-> ISETP -6-> BRA -12-> IADD32I = 24 cycles;
* the END node is reached from the final EXIT by the block replacement edge (150).

Opcode latencies not in Table 4.1: S2R takes the mov latency (6); XMAD, Maxwell's native
16-bit multiply-add (three of them, lines 4–6, emulate one 32-bit mad), takes the basic
integer latency 6 rather than the 13 cycles Table 4.1 gives the emulated 32-bit mad.
Self-dependencies carried by the loop (R4 in IADD32I, R5 in FADD; 6 cycles each) are
shorter than the 24-cycle recurrence and are not drawn.

Run: python tools/make_saxpy2_graph.py
"""
import json
from pathlib import Path

SASS = [  # (line, opcode, label, written registers, read registers)
    (1, "MOV", "MOV R1, c[0x0][0x20]", ["R1"], []),
    (2, "S2R", "S2R R0, SR_CTAID.X", ["R0"], []),
    (3, "S2R", "S2R R2, SR_TID.X", ["R2"], []),
    (4, "XMAD", "XMAD.MRG R3, R0.reuse, c[0x0][0x8].H1, RZ", ["R3"], ["R0"]),
    (5, "XMAD", "XMAD R2, R0.reuse, c[0x0][0x8], R2", ["R2"], ["R0", "R2"]),
    (6, "XMAD", "XMAD.PSL.CBCC R0, R0.H1, R3.H1, R2", ["R0"], ["R0", "R3", "R2"]),
    (7, "ISETP", "ISETP.GE.AND P0, PT, R0, c[0x0][0x140], PT", ["P0"], ["R0"]),
    (8, "EXIT", "@P0 EXIT", [], ["P0"]),
    (9, "MOV", "MOV R3, c[0x0][0x144]", ["R3"], []),
    (10, "SHL", "SHL R6, R0.reuse, 0x2", ["R6"], ["R0"]),
    (11, "ISETP", "ISETP.LT.AND P0, PT, R3, 0x1, PT", ["P0"], ["R3"]),
    (12, "SHR", "SHR R7, R0, 0x1e", ["R7"], ["R0"]),
    (13, "IADD", "IADD R2.CC, R6, c[0x0][0x148]", ["R2"], ["R6"]),
    (14, "MOV", "MOV R0, RZ", ["R0"], []),
    (15, "IADD", "IADD.X R3, R7, c[0x0][0x14c]", ["R3"], ["R7"]),
    (16, "BRA", "@P0 BRA 0x100", [], ["P0"]),
    (17, "MOV", "MOV R5, RZ", ["R5"], []),
    (18, "LDG", "LDG.E R0, [R2]", ["R0"], ["R2", "R3"]),
    (19, "MOV", "MOV R4, RZ", ["R4"], []),
    (20, "IADD32I", "IADD32I R4, R4, 0x1", ["R4"], ["R4"]),
    (21, "ISETP", "ISETP.LT.AND P0, PT, R4, c[0x0][0x144], PT", ["P0"], ["R4"]),
    (22, "FADD", "FADD R5, R0, R5", ["R5"], ["R0", "R5"]),
    (23, "BRA", "@P0 BRA 0xd0", [], ["P0"]),
    (24, "MOV", "MOV R0, R5", ["R0"], ["R5"]),
    (25, "IADD", "IADD R2.CC, R6, c[0x0][0x150]", ["R2"], ["R6"]),
    (26, "IADD", "IADD.X R3, R7, c[0x0][0x154]", ["R3"], ["R7"]),
    (27, "LDG", "LDG.E R5, [R2]", ["R5"], ["R2", "R3"]),
    (28, "FADD", "FADD R0, R0, R5", ["R0"], ["R0", "R5"]),
    (29, "STG", "STG.E [R2], R0", [], ["R2", "R3", "R0"]),
    (30, "EXIT", "EXIT", [], []),
]
DUAL = {(15, 16), (17, 18), (22, 23)}
LOOP = [20, 21, 22, 23]
FALL_THROUGH = {16: 17, 23: 24}


def build() -> dict:
    nid = lambda line: f"i{line}"
    instructions = []
    for line, op, label, _, _ in SASS:
        x = 260 if line in LOOP else 0
        instructions.append({"id": nid(line), "opcode": op, "label": f"{line}. {label}",
                             "x": float(x), "y": float(line * 56)})
    instructions.append({"id": "end", "opcode": "END", "label": "end", "x": 0.0, "y": 31 * 56.0})
    edges = []

    def edge(src, dst, kind, **kw):
        edges.append({"id": f"e{len(edges) + 1}", "from": src, "to": dst, "kind": kind, **kw})

    for (l1, *_), (l2, *_) in zip(SASS, SASS[1:]):
        if l1 in FALL_THROUGH:
            edge(nid(l1), nid(l2), "branch", taken=False)
        else:
            edge(nid(l1), nid(l2), "dual" if (l1, l2) in DUAL else "ilp")
    last_writer = {}
    for line, op, _, writes, reads in SASS:
        for reg in dict.fromkeys(reads):
            if reg in last_writer:
                src = last_writer[reg]
                kind = "memory" if SASS[src - 1][1] == "LDG" else "dependency"
                edge(nid(src), nid(line), kind)
        for reg in writes:
            last_writer[reg] = line
    edge(nid(23), nid(20), "branch", taken=True)
    edge(nid(30), "end", "replacement")
    return {
        "format": "gpumodeler-kernel", "version": 1, "name": "saxpy2",
        "description": "Gajger 2017 saxpy2 kernel on Maxwell (SASS of Fig. 5.2; graph of "
                       "Fig. 5.6 reconstructed by tools/make_saxpy2_graph.py); latency bound 942 + 24a",
        "latency_table": "maxwell-gajger",
        "variables": {"a": 128},
        "instructions": instructions,
        "edges": edges,
        "loops": [{"id": "loop1", "name": "compute loop", "iterations": "a",
                   "members": [nid(l) for l in LOOP]}],
    }


if __name__ == "__main__":
    out = Path(__file__).resolve().parent.parent / "resources" / "kernels" / "saxpy2-maxwell.json"
    out.write_text(json.dumps(build(), indent=2) + "\n")
    print(out)
