"""A kernel file of format version 1 read by the CLI: the 64/128-bit shared accesses whose
degree was the import's are read upgraded, and each note of the read is one stderr line, the
--json output staying the document alone."""
import json
from pathlib import Path

from gpumodeler.cli.main import main
from gpumodeler.core.kernel.graph import to_dict
from gpumodeler.core.kernel.sass.importer import import_kernel

AMARIS = Path(__file__).resolve().parents[2] / "resources" / "validation" / "kernels" / "amaris"


def test_a_version_1_file_is_read_upgraded_with_its_notes_on_stderr(tmp_path, capsys):
    g = import_kernel(AMARIS / "mmsc.sm_52.sass")
    data = to_dict(g)
    current = tmp_path / "current.json"
    current.write_text(json.dumps(data))
    data["version"] = 1
    for d in data["instructions"]:
        if d.get("width_bytes") == 16 and d.get("space") == "shared":
            d["bank_conflict_degree"] = 1  # what the version 1 import wrote
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data))
    assert main(["graph", str(old), "--json", "--table", "maxwell-gajger", "--set", "loop1=4",
                 "--set", "guard1=1"]) == 0
    out, err = capsys.readouterr()
    notes = err.splitlines()
    assert len(notes) == 4 and all(n.startswith(f"note: {old}: ") and "1 -> 2" in n for n in notes)
    upgraded = json.loads(out)
    assert main(["graph", str(current), "--json", "--table", "maxwell-gajger", "--set", "loop1=4",
                 "--set", "guard1=1"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out) == upgraded
    wide = [a for a in upgraded["memory_accesses"] if a["opcode"].startswith("LDS.U.128")]
    assert len(wide) == 4 and {a["bank_conflict_degree"] for a in wide} == {2}
