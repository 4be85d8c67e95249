"""``timeline`` (text and ``--json``) byte for byte as stored in
tests/fixtures/timeline_reference/: the outputs of a small imported trace and of a hand-built
application with every kind of step (kernels on four GPUs with shares, a concurrent kernel,
measured kernels predicted and scaled, copies host<->GPU, between GPUs over NVLink and
through a PCIe switch, within a GPU, a concurrent copy, size expressions, syncs waiting for
everything or for some steps, host time), as the code before the project reader and
``build`` were made faster wrote them. Written by ``python tests/cli/test_timeline_reference.py
FOLDER`` run with that code (its own device database built from resources/devices)."""
import dataclasses
import os
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from nsys_exports import streamed_trace  # noqa: E402

EXPECTED = ROOT / "tests" / "fixtures" / "timeline_reference"
OUTPUTS = ("imported.txt", "imported.json", "hand-built.txt", "hand-built.json")


def hand_built(path: Path) -> Path:
    """The four-H100 example with an application of every kind of step, saved at ``path``."""
    from gpumodeler.core.application.app import Application, Step
    from gpumodeler.core.project import Connection, LaunchConfig
    from gpumodeler.db.project_file import load_project, save_project
    p = load_project(ROOT / "resources" / "examples" / "four-h100-nvlink.gpm")
    traced = p.devices["gpu1"].device_name
    p.put("connections", Connection("sw", "PCIe 5.0 x16", "host1", "host1", "pcie", label="switch"))
    for c in ("pcie3", "pcie4"):
        p.put("connections", dataclasses.replace(p.connections[c], overrides={"via": "sw"}))
    p.put("launches", LaunchConfig("imp", name="imported", gpu="gpu2", kernel="not_a_graph",
                                   block_size=256, grid_size=1000))
    steps = (
        Step("up1", "copy", "upload", "s1", src="host1", dst="gpu1", size="4*N"),
        Step("k1", "kernel", "half on gpu1", "s1", launch="launch1", gpu="gpu1", fraction=0.5),
        Step("k2", "kernel", "", "s2", launch="launch1", gpu="gpu2", fraction=0.5, after=("up1",)),
        Step("kc", "kernel", "alongside", "s3", launch="launch1", gpu="gpu1", fraction=0.125,
             concurrent=True),
        Step("peer", "copy", "gpu1 to gpu2", "s1", src="gpu1", dst="gpu2", size="1e8"),
        Step("up3", "copy", "through the switch", "s4", src="host1", dst="gpu3", size="3000000"),
        Step("up4", "copy", "", "s5", src="host1", dst="gpu4", size="2*N"),
        Step("down3", "copy", "back", "s4", src="gpu3", dst="host1", size="(N)/2", concurrent=True),
        Step("within", "copy", "in gpu2", "s2", src="gpu2", dst="gpu2", size="65536",
             measured_s=2e-5, measured_start_s=1e-3, traced_gpu=traced),
        Step("m1", "kernel", "imported kernel", "s2", launch="imp", gpu="gpu2",
             measured_s=3.5e-4, measured_start_s=2e-3, traced_gpu=traced),
        Step("m2", "kernel", "saxpy2", "s3", launch="imp", gpu="gpu3", measured_s=1e-4,
             measured_start_s=3e-3, traced_gpu=traced, concurrent=True),
        Step("wait", "sync", "event", "s6", after=("k2", "up3")),
        Step("host", "sync", "host work", "s6", host_s=2.5e-4),
        Step("down1", "copy", "download", "s1", src="gpu1", dst="host1", size="4*N"),
        Step("all", "sync", "device synchronize", "s7"),
        Step("k4", "kernel", "after all", "s5", launch="launch1", gpu="gpu4", fraction=0.25),
    )
    p.put("applications", Application("every", "every kind of step", steps,
                                      {"N": 1_000_000}, "greedy", 150.0))
    return save_project(p, path)


def outputs(folder: Path) -> dict:
    """The four outputs, from projects made in ``folder``."""
    from gpumodeler.cli.main import main

    def run(*argv) -> str:
        out, err = StringIO(), StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main([str(a) for a in argv])
        assert code == 0, err.getvalue()
        return out.getvalue()
    imported = folder / "imported.gpm"
    run("application", "import", streamed_trace(folder / "run.sqlite", 120, seed=11,
                                                 delays=(0, 0, 30_000)), "--project", imported)
    built = hand_built(folder / "hand-built.gpm")
    return {"imported.txt": run("timeline", imported),
            "imported.json": run("timeline", imported, "--json"),
            "hand-built.txt": run("timeline", built, "--application", "every"),
            "hand-built.json": run("timeline", built, "--application", "every", "--json")}


@pytest.mark.usefixtures("gpumodeler_env")
def test_timeline_output_is_the_reference_byte_for_byte(tmp_path):
    got = outputs(tmp_path)
    for name in OUTPUTS:
        assert got[name] == (EXPECTED / name).read_text(encoding="utf-8"), name
    assert '"kind": "sync"' in got["hand-built.json"] and "shared_upstream" in got["hand-built.json"]


if __name__ == "__main__":   # writing the reference (see the module docstring)
    out_folder = Path(sys.argv[1])
    with tempfile.TemporaryDirectory() as work:
        from gpumodeler.db.build_devices import build
        build(ROOT / "resources" / "devices", Path(work) / "devices.db")
        os.environ.update(GPUMODELER_DEVICES_DB=str(Path(work) / "devices.db"),
                          GPUMODELER_USER_DB=str(Path(work) / "user.db"),
                          GPUMODELER_SETTINGS_DIR=str(Path(work) / "settings"),
                          GPUMODELER_LOG_DIR=str(Path(work) / "logs"))
        for name, text in outputs(Path(work)).items():
            (out_folder / name).write_text(text, encoding="utf-8")
