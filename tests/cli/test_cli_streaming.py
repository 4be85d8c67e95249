"""Streaming tables and lazy imports in the CLI (speed targets): sweeps written in chunks give
the same bytes as the one-shot writer, JSON Lines, ``-o -``, and commands that need neither
the graph analysis nor the database load neither networkx nor sqlite-utils."""
from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gpumodeler.cli.cmd_sweep as cmd_sweep
import gpumodeler.cli.tables as tables
from gpumodeler.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SAXPY2 = str(ROOT / "resources/kernels/saxpy2-maxwell.json")
GTX970 = ["--sms", "13", "--sm-clock-mhz", "1253", "--cuda-cores", "128", "--schedulers", "4",
          "--warp-size", "32", "--gmem-bytes-per-cycle", "13.78"]


def one_shot_write_table(table: dict, fh, fmt: str) -> None:
    """The writer the CLI had before tables were streamed (the bytes to keep)."""
    def cell(v):
        if isinstance(v, (float, np.floating)):
            return "" if math.isnan(v) else repr(float(v))
        if isinstance(v, np.integer):
            return str(int(v))
        return str(v)

    names = list(table)
    if fmt == "json":
        rows = [{n: (None if isinstance(table[n][i], float) and math.isnan(table[n][i])
                     else table[n][i].item() if hasattr(table[n][i], "item") else table[n][i])
                 for n in names} for i in range(len(table[names[0]]))]
        json.dump(rows, fh, indent=1)
        fh.write("\n")
    else:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(names)
        w.writerows([cell(v) for v in row] for row in zip(*[table[n] for n in names]))


def random_table(seed: int, n: int) -> dict:
    rng = np.random.default_rng(seed)
    floats = rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)
    floats[rng.random(n) < 0.1] = np.nan
    floats[rng.random(n) < 0.02] = np.inf
    floats[rng.random(n) < 0.02] = -np.inf
    words = np.array(["", "plain", "a,b", 'say "hi"', "two\nlines", "cr\rhere", "µs ∞", "100%",
                      "tab\tx"], dtype=object)
    return {
        "device": np.full(n, "GeForce GTX 970", dtype=object),
        "name, with comma": rng.integers(-10**12, 10**12, n),
        "x": floats,
        "whole": rng.integers(0, 1000, n).astype(float),
        "text": words[rng.integers(0, len(words), n)],
        "flag": rng.random(n) < 0.5,
        "small": rng.random(n).astype(np.float32),
        "unicode": np.array(["ünï", "ascii"])[rng.integers(0, 2, n)],
    }


@pytest.mark.parametrize("fmt", ["csv", "json"])
@pytest.mark.parametrize("seed, n", [(0, 0), (1, 1), (2, 7), (3, 500)])
def test_chunked_writer_gives_the_one_shot_bytes(tmp_path, monkeypatch, fmt, seed, n):
    table = random_table(seed, n)
    ref = io.StringIO()
    one_shot_write_table(table, ref, fmt)
    monkeypatch.setattr(tables, "CHUNK_ROWS", 3)
    target = tmp_path / f"out.{fmt}"
    with tables.TableWriter(str(target), fmt) as w:
        for lo in range(0, max(n, 1), 11):  # several write() calls, each in several chunks
            w.write({k: v[lo:lo + 11] for k, v in table.items()})
    assert target.read_bytes() == ref.getvalue().encode("utf-8")


def test_json_lines_hold_the_json_rows(tmp_path):
    table = random_table(4, 200)
    with tables.TableWriter(str(tmp_path / "t.json"), "json") as w:
        w.write(table)
    with tables.TableWriter(str(tmp_path / "t.jsonl"), "jsonl") as w:
        w.write(table)
    lines = (tmp_path / "t.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == json.loads((tmp_path / "t.json").read_text())
    assert lines[0].startswith('{"device": "GeForce GTX 970", "name, with comma": ')


def test_a_failed_table_leaves_the_previous_file(tmp_path):
    target = tmp_path / "keep.csv"
    target.write_text("previous\n")
    with pytest.raises(RuntimeError):
        with tables.TableWriter(str(target), "csv") as w:
            w.write({"a": np.arange(3)})
            raise RuntimeError("stop")
    assert target.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.csv"]


SWEEP = ["sweep", *GTX970, "--graph", SAXPY2, "--set", "a=1,32,128", "--cc", "5.2",
         "--block-size", "128,256,1024", "--data-size", "1e6:3e6:1e6", "--registers", "32,128"]


def _sweep(capsys, *extra):
    assert main([*SWEEP, *extra]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("fmt", ["csv", "json", "jsonl"])
def test_sweep_chunks_do_not_change_a_byte(capsys, monkeypatch, fmt):
    whole = _sweep(capsys, "--format", fmt)
    monkeypatch.setattr(cmd_sweep, "CHUNK_POINTS", 5)
    monkeypatch.setattr(tables, "CHUNK_ROWS", 2)
    assert _sweep(capsys, "--format", fmt) == whole
    assert len(whole.splitlines()) > 50


def test_sweep_jsonl_and_stdout_dash(capsys, tmp_path):
    rows = json.loads(_sweep(capsys, "--format", "json"))
    lines = _sweep(capsys, "--format", "jsonl", "-o", "-").splitlines()
    assert [json.loads(line) for line in lines] == rows and len(rows) == 3 * 3 * 3 * 2
    assert sum(1 for r in rows if r["error"]) == 9  # 1024 threads x 128 registers: too many
    target = tmp_path / "s.jsonl"
    assert main([*SWEEP, "--format", "jsonl", "-o", str(target)]) == 0
    assert target.read_text().splitlines() == lines


def _modules_after(argv: list[str]) -> dict:
    code = ("import sys, json\n"
            "from gpumodeler.cli.main import main\n"
            "try:\n"
            f"    main({argv!r})\n"
            "except SystemExit:\n"
            "    pass\n"
            "print(json.dumps({m: m in sys.modules for m in "
            "('networkx', 'sqlite_utils', 'numpy', 'PySide6')}))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("argv", [
    ["--help"],
    ["occupancy", "--cc", "5.2", "--block-size", "256", "--registers", "32"],
    ["predict", "--help"],
    ["sweep", "--help"],
])
def test_commands_that_need_no_graph_and_no_database_do_not_load_them(argv):
    loaded = _modules_after(argv)
    assert not loaded["networkx"] and not loaded["sqlite_utils"] and not loaded["PySide6"]
    if argv == ["--help"]:
        assert not loaded["numpy"]


def test_a_graph_command_does_not_need_networkx():
    """The analysis is plain Python now; networkx is only loaded to name a cycle."""
    assert not _modules_after(["graph", SAXPY2, "--json"])["networkx"]


def _batch_lines(seed: int, n: int) -> list[str]:
    """JSON lines of every kind: good launches on several architectures and options, launches
    that cannot run, wrong types, unknown keys, missing keys, garbage, blank lines."""
    import random
    rng = random.Random(seed)
    ccs = ["5.2", "6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0", 5.2] * 4 + ["1.0"]
    lines = []
    for _ in range(n):
        obj = {"cc": rng.choice(ccs), "block_size": rng.choice([32, 64, 96, 256, 1000, 1024] * 4 + [2048, 0]),
               "registers": rng.choice([0, 8, 16, 32, 63, 64, 128] * 4 + [255, 256])}
        if rng.random() < 0.7:
            obj["shared_mem"] = rng.choice([0, 1024, 12345, 40 * 1024] * 3 + [99 * 1024, 200 * 1024])
        if rng.random() < 0.2:
            obj["static_shared_mem"] = rng.choice([0, 4096, 60000])
        if rng.random() < 0.15:
            obj["opt_in"] = rng.choice([True, False, 1])
        if rng.random() < 0.1:
            obj["carveout_percent"] = rng.choice([0, 50, 100, 101])
        elif rng.random() < 0.1:
            obj["shared_mem_config"] = rng.choice([16384, 65536, 102400, 12])
        roll = rng.random()
        if roll < 0.03:
            obj["block_size"] = 128.0
        elif roll < 0.05:
            obj["registers"] = -1
        elif roll < 0.06:
            obj["bogus"] = 1
        elif roll < 0.07:
            del obj["registers"]
        text = json.dumps(obj)
        if roll > 0.97:
            text = rng.choice(["garbage", "[1, 2]", "{\"cc\": ", "   ", "", "null"])
        lines.append(text)
    return lines


@pytest.mark.parametrize("seed", range(4))
def test_occupancy_batch_answers_as_the_scalar_calculator(capsys, monkeypatch, tmp_path, seed):
    import gpumodeler.cli.cmd_occupancy as cmd_occupancy
    import gpumodeler.cli.occupancy_line as occupancy_line
    lines = _batch_lines(seed, 400)
    path = tmp_path / "batch.jsonl"
    path.write_text("\n".join(lines) + "\n")
    expected = "".join(occupancy_line.line_output(i, occupancy_line.parsed_line(line + "\n")) + "\n"
                       for i, line in enumerate(lines, 1) if line.strip())
    monkeypatch.setattr(cmd_occupancy, "BATCH_CHUNK", 37)
    assert main(["occupancy", "--batch", str(path)]) == 0
    out = capsys.readouterr().out
    assert out == expected
    answered = sum('"error"' not in line for line in out.splitlines())
    assert 150 < answered < len(lines) - 20


def test_occupancy_of_one_launch_needs_no_numpy():
    assert not _modules_after(["occupancy", "--cc", "5.2", "--block-size", "256",
                               "--registers", "32"])["numpy"]


def test_the_lazy_name_lists_equal_the_cores():
    """Parsing flags loads no model or importer: the CLI's copies of their names must agree."""
    from gpumodeler.cli import cmd_measure, model_flags
    from gpumodeler.core.measurements.importer import FORMATS
    from gpumodeler.core.models.registry import MODELS
    assert model_flags.MODELS == tuple(MODELS)
    assert cmd_measure.FORMATS == tuple(FORMATS)
