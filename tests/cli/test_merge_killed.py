"""`gpumodeler devices merge` and `calibrate --save` killed (SIGKILL) at random moments:
the user database is never damaged nor half-written, and the next `devices list` and
merge (or save) succeed.

No CLI command saves a project (only the GUI does; tests/db covers project saves killed
mid-write), so the merge is the one CLI write to kill here.
"""
import copy
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.db.build_devices import build

from repetitions import repetitions
from test_hardening import DEVICES

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = repetitions(5, 20)


def _theirs(folder: Path) -> Path:
    """A shared database: GTX 970 with other records (a change to merge) and 300 new GPUs."""
    data = copy.deepcopy(DEVICES)
    data["devices"][0]["values"]["sms"]["value"] = 14
    for i in range(300):
        data["devices"].append({"kind": "gpu", "name": f"Shared GPU {i}", "aliases": [],
                                "values": {"sms": {"value": i + 1, "unit": "count",
                                                   "source": "gajger2017", "where": "p. 9"},
                                           "warp_size": {"value": 32, "unit": "count",
                                                         "source": "gajger2017",
                                                         "where": "p. 9"}}})
    (folder / "src").mkdir()
    (folder / "src" / "shared.json").write_text(json.dumps(data), encoding="utf-8")
    build(folder / "src", folder / "theirs.db")
    return folder / "theirs.db"


def _content(path: Path):
    """What the user database says (devices and their values, without timestamps), after
    checking it is sound."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        return (conn.execute("SELECT kind, name, aliases, family FROM devices ORDER BY 2")
                .fetchall(),
                conn.execute("SELECT d.name, v.field, v.value, v.unit, v.source_key, "
                             "v.is_default FROM device_values v JOIN devices d "
                             "ON d.id = v.device_id ORDER BY 1, 2, 3").fetchall())
    finally:
        conn.close()


def _cli(*argv) -> int:
    try:
        return main([str(a) for a in argv])
    except SystemExit as exc:
        return exc.code


def test_a_merge_killed_at_any_moment_leaves_the_user_database_whole(
        gpumodeler_env, tmp_path, capsys):
    user = gpumodeler_env
    theirs = _theirs(tmp_path)
    # The user's database: a device of their own, so there is something to lose.
    assert _cli("devices", "merge", _mine(tmp_path), "--keep-both") == 0
    pristine = user.read_bytes()
    before = _content(user)
    assert _cli("devices", "merge", theirs, "--keep-both") == 0
    merged = _content(user)
    assert merged != before
    capsys.readouterr()

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "gpumodeler", "devices", "merge", str(theirs), "--keep-both"]
    rng = random.Random(20)
    user.write_bytes(pristine)
    start = time.monotonic()
    subprocess.run(argv, env=env, check=True, capture_output=True, timeout=60)
    whole = time.monotonic() - start     # start-up and merge: kill anywhere in them
    seen = set()
    for _ in range(ROUNDS):
        for side in user.parent.iterdir():
            side.unlink()
        user.write_bytes(pristine)
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, max(whole, 0.3)))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        assert _cli("devices", "list", "--json") == 0
        now = _content(user)
        assert now in (before, merged)       # all of the merge or none of it
        seen.add(now == merged)
        assert _cli("devices", "merge", theirs, "--keep-both") == 0
        assert _content(user) == merged
        capsys.readouterr()
        left = [p.name for p in user.parent.iterdir() if p != user]
        assert left == [], left
    assert False in seen    # some kills came before the commit (a test that can fail)


def test_a_calibration_save_killed_at_any_moment_stores_it_whole_or_not_at_all(
        gpumodeler_env, tmp_path, capsys):
    """`calibrate link --save` writes the user database too: killed anywhere, the fit is
    stored whole or not at all, and listing and saving again succeed."""
    user = gpumodeler_env
    argv = ["calibrate", "link", "--measurements",
            str(ROOT / "resources" / "measurements" / "synthetic-pageable-copies.csv"),
            "--direction", "htod", "--save", "--link", "PCIe 3.0 x16 (Gajger GTX 970 testbed)"]
    assert _cli(*argv) == 0
    capsys.readouterr()
    conn = sqlite3.connect(user)
    saved = conn.execute("SELECT count(*) FROM calibrations").fetchone()[0]
    with conn:
        conn.execute("DELETE FROM calibrations")     # the user database before the save
    conn.close()
    pristine = user.read_bytes()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "gpumodeler", *argv]
    rng = random.Random(8)
    for _ in range(repetitions(3, 8)):
        for side in user.parent.iterdir():
            side.unlink()
        user.write_bytes(pristine)
        proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, 0.8))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        assert _cli("calibrate", "list", "--json") == 0
        conn = sqlite3.connect(f"file:{user}?mode=ro", uri=True)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            assert conn.execute("SELECT count(*) FROM calibrations").fetchone()[0] in (0, saved)
        finally:
            conn.close()
        assert _cli(*argv) == 0
        capsys.readouterr()
        assert [p.name for p in user.parent.iterdir() if p != user] == []


def _mine(folder: Path) -> Path:
    data = {**DEVICES, "devices": [{"kind": "gpu", "name": "My Own GPU", "aliases": [],
                                    "values": {"sms": {"value": 7, "unit": "count",
                                                       "source": "gajger2017",
                                                       "where": "p. 1"}}}]}
    (folder / "mine-src").mkdir()
    (folder / "mine-src" / "mine.json").write_text(json.dumps(data), encoding="utf-8")
    build(folder / "mine-src", folder / "mine.db")
    return folder / "mine.db"


pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX kill")
