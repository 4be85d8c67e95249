"""Every GPU in the device database: occupancy from --registers works, and `predict` of a
kernel that uses every per-SM resource either works or names, for each missing value in
turn, a flag that exists (docs/models.md: a missing input names its flag)."""
import csv
import io
import json
import re

import pytest

from gpumodeler.cli.main import build_parser, main

pytestmark = pytest.mark.usefixtures("gpumodeler_env")  # the built devices.db, a private user db

# One instruction per unit (global and shared memory, SFU, FP64, FP32) with explicit
# latencies, so that no latency table is needed and every throughput resource is used.
EVERY_UNIT = {
    "format": "gpumodeler-kernel", "version": 1, "name": "every-unit",
    "instructions": [{"id": f"i{k}", "opcode": op} for k, op in enumerate(
        ["LDG", "LDS", "MUFU", "DFMA", "FFMA", "STG", "EXIT"], start=1)],
    "edges": [
        {"from": "i1", "to": "i2", "kind": "ilp", "latency": 1},
        {"from": "i2", "to": "i3", "kind": "ilp", "latency": 1},
        {"from": "i3", "to": "i4", "kind": "ilp", "latency": 1},
        {"from": "i1", "to": "i5", "kind": "dependency", "latency": 400},
        {"from": "i4", "to": "i5", "kind": "dependency", "latency": 20},
        {"from": "i5", "to": "i6", "kind": "dependency", "latency": 10},
        {"from": "i6", "to": "i7", "kind": "ilp", "latency": 1}],
}

# A value to give for each flag a message may ask for (any positive value will do here).
FILL = {"--sms": "10", "--sm-clock-mhz": "1000", "--cuda-cores": "64", "--schedulers": "4",
        "--gmem-bytes-per-cycle": "16", "--sfu": "16", "--fp64-units": "2",
        "--smem-accesses-per-cycle": "1", "--issue-per-cycle": "1", "--cc": "8.0"}

# The documents' old GPUs, whose model values are filled: they need no flag at all
# (except the 8800 GTX, which has no FP64 units and must say so).
DOCUMENT_GPUS = ["GeForce GTX 280", "GeForce GTX 480", "GeForce GT 630", "GeForce GTX 660",
                 "GeForce GTX 680", "GeForce GTX TITAN", "Tesla K20", "Tesla K40",
                 "Quadro K5200", "GeForce GTX 970", "GeForce GTX 980",
                 "GeForce GTX TITAN X (Maxwell)", "Tesla P100 SXM2", "GeForce GTX 1080",
                 "GeForce GTX 1080 Ti"]


def _gpus():
    from gpumodeler.db.catalog import Catalog
    with Catalog() as catalog:
        return [(d.name, catalog.get(d.name).to_gpu_spec().compute_capability)
                for d in catalog.list("gpu")]


def _flags_of(command: str) -> set[str]:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    parser = sub.choices[command]
    return {s for action in parser._actions for s in action.option_strings}


def _run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_the_documents_gpus_are_in_the_database():
    names = {name for name, _ in _gpus()}
    assert set(DOCUMENT_GPUS) | {"GeForce 8800 GTX"} <= names
    assert len(names) > 30


def test_occupancy_from_registers_works_for_every_gpu(capsys):
    for name, cc in _gpus():
        assert cc, f"{name} has no compute capability"
        code, out, err = _run(capsys, ["occupancy", "--device", name, "--block-size", "256",
                                       "--registers", "32", "--json"])
        assert code == 0, (name, err)
        r = json.loads(out)
        assert r["compute_capability"] == cc
        assert 0 < r["occupancy"] <= 1


def _walk(capsys, command: str, argv_of, ok) -> dict[str, list[str]]:
    """Run ``command`` for every GPU; on each failure the message must name only flags that
    exist, one of them new: give it and run again until the command works."""
    flags = _flags_of(command)
    asked: dict[str, list[str]] = {}
    for name, _cc in _gpus():
        argv = argv_of(name)
        for _ in range(len(FILL) + 1):
            code, out, err = _run(capsys, argv)
            if code == 0:
                ok(out)
                break
            assert code == 2 and err.count("\n") == 1, (name, err)
            named = set(re.findall(r"--[a-z][a-z0-9-]*", err))
            assert named and named <= flags, (name, err)      # every flag named exists
            todo = [f for f in sorted(named) if f in FILL and f not in argv]
            assert todo, (name, err)                           # ... and one of them is new
            asked.setdefault(name, []).append(todo[0])
            argv = argv + [todo[0], FILL[todo[0]]]
        else:
            pytest.fail(f"{name}: still failing after giving {asked[name]}")
    return asked


def test_predict_names_an_existing_flag_for_each_missing_value(capsys, tmp_path):
    graph = tmp_path / "every-unit.json"
    graph.write_text(json.dumps(EVERY_UNIT))
    asked = _walk(capsys, "predict", lambda name: [
        "predict", "--device", name, "--graph", str(graph), "--data-size", "1000000",
        "--block-size", "256", "--registers", "16", "--json"],
        lambda out: json.loads(out)["kernel_time_s"] > 0 or pytest.fail(out))
    for name in DOCUMENT_GPUS:
        assert name not in asked, (name, asked.get(name))
    assert asked["GeForce 8800 GTX"] == ["--fp64-units"]


def test_sweep_names_an_existing_flag_for_each_missing_value(capsys, tmp_path):
    graph = tmp_path / "every-unit.json"
    graph.write_text(json.dumps(EVERY_UNIT))

    def ok(out):
        rows = list(csv.DictReader(io.StringIO(out)))
        assert len(rows) == 2 and all(float(r["kernel_time_s"]) > 0 for r in rows)

    asked = _walk(capsys, "sweep", lambda name: [
        "sweep", "--device", name, "--graph", str(graph), "--data-size", "1000000",
        "--block-size", "128,256", "--registers", "16"], ok)
    assert asked["GeForce 8800 GTX"] == ["--fp64-units"]
    assert not set(DOCUMENT_GPUS) & set(asked)


def test_a_known_zero_is_not_reported_as_unknown(capsys, tmp_path):
    graph = tmp_path / "every-unit.json"
    graph.write_text(json.dumps(EVERY_UNIT))
    code, _, err = _run(capsys, ["predict", "--device", "8800 GTX", "--graph", str(graph),
                                 "--data-size", "1e6", "--block-size", "256", "--registers", "16"])
    assert code == 2
    assert "fp64_units_per_sm is 0 (this GPU has none)" in err and "--fp64-units" in err
    assert "unknown" not in err


def test_smem_accesses_flag_overrides_the_database(capsys, tmp_path):
    graph = tmp_path / "every-unit.json"
    graph.write_text(json.dumps(EVERY_UNIT))
    base = ["predict", "--device", "Tesla P100 SXM2", "--graph", str(graph), "--grid-size",
            "1000", "--block-size", "256", "--occupancy", "64", "--json"]
    _, out, _ = _run(capsys, base)
    db = json.loads(out)["cycles_per_warp"]["shared_memory"]
    code, out, _ = _run(capsys, base + ["--smem-accesses-per-cycle", "0.25"])
    assert code == 0
    assert json.loads(out)["cycles_per_warp"]["shared_memory"] == pytest.approx(4 * db)


def test_occupancy_cli_on_compute_capability_1_3(capsys):
    code, out, _ = _run(capsys, ["occupancy", "--cc", "1.3", "--block-size", "128",
                                 "--registers", "16", "--json"])
    assert code == 0
    r = json.loads(out)
    assert (r["active_blocks_per_sm"], r["active_warps_per_sm"]) == (8, 32)
    assert r["allocated_registers_per_block"] == 2048
    code, _, err = _run(capsys, ["occupancy", "--cc", "1.3", "--block-size", "1024",
                                 "--registers", "16"])
    assert code == 2 and "block size 1024 exceeds the 512-thread limit" in err
