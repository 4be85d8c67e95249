"""Kernel files of format version 1 keep their stored values, but a 64- or 128-bit
shared-memory access's bank-conflict degree, which version 2 counts as wavefronts per
half-warp, is upgraded where the address the import followed shows the value was the
import's (core/kernel/format_upgrade.py); a value set by hand is kept, and one that cannot be
told is kept with a note."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpumodeler.core.kernel.format_upgrade import legacy_shared_degree
from gpumodeler.core.kernel.graph import FORMAT_VERSION, from_dict, to_dict
from gpumodeler.core.kernel.sass.addresses import warp_access
from gpumodeler.core.kernel.sass.importer import import_kernel
from gpumodeler.core.kernel.warp_counts import count

AMARIS = Path(__file__).resolve().parents[2] / "resources" / "validation" / "kernels" / "amaris"


def lanes(stride, offset=0):
    return [offset + lane * stride for lane in range(32)]


@pytest.mark.parametrize("stride, width, old, new", [
    (16, 16, 1, 4),   # LDS.128 of 32 consecutive float4s: 128 words, 4 per bank, 4 needed
    (8, 8, 1, 2),     # LDS.64 of consecutive doubles
    (16, 8, 2, 4),    # LDS.64 of every other double: banks 0,1,4,5,...: 4 words each over 2
    (64, 16, 4, 16),  # a column of float4s 64 bytes apart: banks 0-3 and 16-19, 16 words each
    (0, 16, 1, 2),    # one float4 for the warp: one word per bank
    (4, 4, 1, 1),     # 32-bit accesses: both rules agree
    (128, 4, 32, 32),
])
def test_the_version_1_rule_by_hand(stride, width, old, new):
    assert legacy_shared_degree(lanes(stride), width) == old
    assert warp_access(stride, width).bank_conflict_degree == new


def version_1(graph, **degrees) -> dict:
    """``graph`` as a version 1 file would hold it: wide shared accesses at ``degrees``."""
    data = to_dict(graph)
    data["version"] = 1
    for d in data["instructions"]:
        if d["id"] in degrees:
            d["bank_conflict_degree"] = degrees[d["id"]]
    return json.loads(json.dumps(data))


def wide(graph) -> list:
    return [nid for nid, i in graph.instructions.items()
            if i.space == "shared" and i.width_bytes == 16]


def test_an_imported_row_broadcast_of_a_version_1_file_is_upgraded():
    g = import_kernel(AMARIS / "mmsc.sm_52.sass")  # As[ty][k..k+3]: 2 wavefronts now
    ids = wide(g)
    assert len(ids) == 4 and all(g.instructions[n].bank_conflict_degree == 2 for n in ids)
    old = from_dict(version_1(g, **dict.fromkeys(ids, 1)))  # what version 1 imported
    assert [old.instructions[n].bank_conflict_degree for n in ids] == [2, 2, 2, 2]
    assert to_dict(old) == to_dict(g)
    assert count(old).forms == count(g).forms
    assert len(old.read_notes) == 4
    assert all("1 -> 2" in note and "the import's" in note for note in old.read_notes)
    again = from_dict(json.loads(json.dumps(to_dict(old))))  # written as version 2
    assert to_dict(old)["version"] == FORMAT_VERSION == 2 and again.read_notes == ()


def test_a_value_set_by_hand_is_kept():
    g = import_kernel(AMARIS / "mmsu.sm_52.sass")  # As[tx][k..k+3]: 4-way then, 16 now
    ids = wide(g)
    old = from_dict(version_1(g, **{ids[0]: 4, ids[1]: 7, ids[2]: 16, ids[3]: 4}))
    degrees = [old.instructions[n].bank_conflict_degree for n in ids]
    assert degrees == [16, 7, 16, 16]  # 7 was set by hand; 16 already the new rule's
    assert [n.split()[0] for n in old.read_notes] == [ids[0], ids[3]]


def test_a_wide_access_without_a_followed_address_is_kept_with_a_note():
    data = {"format": "gpumodeler-kernel", "version": 1, "latency_table": "maxwell-volkov",
            "instructions": [{"id": "a", "opcode": "LDS.128", "width_bytes": 16},
                             {"id": "b", "opcode": "LDS.64", "width_bytes": 8,
                              "bank_conflict_degree": 3, "address": "not affine (x): y"},
                             {"id": "c", "opcode": "LDS", "address": "4·tid.x"},
                             {"id": "d", "opcode": "LDG.E.128", "width_bytes": 16}],
            "edges": [{"from": "a", "to": "b", "kind": "dependency"}]}
    g = from_dict(data)
    assert [g.instructions[n].bank_conflict_degree for n in "abcd"] == [1, 3, 1, 1]
    assert len(g.read_notes) == 2
    assert g.read_notes[0].startswith("a (LDS.128): bank conflict degree 1 kept")
    assert "cannot be told whether it was set by hand" in g.read_notes[0]
    assert "takes 4" in g.read_notes[0] and "takes 2" in g.read_notes[1]
    data["version"] = 2  # a current file: its values are what they say
    assert from_dict(data).read_notes == ()


def test_a_current_file_is_never_upgraded():
    g = import_kernel(AMARIS / "mmsc.sm_52.sass")
    data = version_1(g, **dict.fromkeys(wide(g), 1))
    data["version"] = FORMAT_VERSION
    read = from_dict(data)
    assert all(read.instructions[n].bank_conflict_degree == 1 for n in wide(g))
    assert read.read_notes == ()


def test_many_notes_are_cut_with_a_count():
    data = {"format": "gpumodeler-kernel", "version": 1,
            "instructions": [{"id": f"i{k}", "opcode": "STS.128", "width_bytes": 16}
                             for k in range(25)]}
    notes = from_dict(data).read_notes
    assert len(notes) == 21 and notes[-1] == "... and 5 more such notes"
