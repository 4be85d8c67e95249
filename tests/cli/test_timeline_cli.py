"""`gpumodeler timeline` on the bundled examples and on bad input."""
import json
from pathlib import Path
import xml.etree.ElementTree as ET

import pytest

from gpumodeler.cli.main import main
from gpumodeler.core.application.app import Application, Step
from gpumodeler.db.project_file import load_project, save_project

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm")

pytestmark = pytest.mark.usefixtures("gpumodeler_env")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_saxpy2_program_takes_the_launch_total(capsys, tmp_path):
    code, out, err = run(capsys, "project", "predict", EXAMPLE, "--json")
    assert code == 0, err
    (launch,) = json.loads(out)["launches"]
    svg = tmp_path / "t.svg"
    code, out, err = run(capsys, "timeline", EXAMPLE, "--json", "--svg", str(svg))
    assert code == 0, err
    doc = json.loads(out)
    # one stream, blocking copies: the makespan is eq. 5.5 + eq. 4.1 in sequence, each phase
    # rounded up to the timeline's picosecond grid (at most 1 ps per phase, 7 phases)
    assert 0 <= doc["makespan_s"] - launch["total_time_s"] <= 7e-12
    assert [s["name"] for s in doc["steps"]] == ["x to GPU", "y to GPU", "saxpy2", "y to host"]
    for s in doc["steps"]:
        assert {"name", "engine", "start_s", "end_s", "energy_j"} <= set(s)
    kernel = doc["steps"][2]
    assert kernel["end_s"] - kernel["start_s"] == pytest.approx(launch["kernel_time_s"], rel=1e-12)
    assert doc["critical_path"] == ["copy_x", "copy_y", "saxpy2", "copy_back"]
    assert set(doc["busy_fraction"]) >= {"gpu1/compute", "gpu1/copy"}
    assert doc["energy_j"] is None and doc["energy_unknown"]  # the GTX 970 has no idle power
    # busy power is the board's TDP: whatever energy is printed is an upper bound, said so
    assert "upper bound" in doc["energy_bound"] and "TDP" in doc["energy_bound"]
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    assert "saxpy2" in svg.read_text()


def test_text_output(capsys):
    code, out, err = run(capsys, "timeline", EXAMPLE)
    assert code == 0, err
    assert "makespan" in out and "critical" in out and "gpu1/compute" in out


@pytest.mark.parametrize("argv, message", [
    (["--application", "nope"], "no application 'nope'; applications: app1"),
    (["--svg", ""], "--svg needs a file name"),
    (["--svg", "/nonexistent-folder/x.svg"], "does not exist"),
])
def test_bad_arguments(capsys, argv, message):
    code, out, err = run(capsys, "timeline", EXAMPLE, *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_no_application_and_a_broken_step(capsys, tmp_path):
    project = load_project(EXAMPLE)
    project.applications.clear()
    path = save_project(project, tmp_path / "p.gpm")
    code, out, err = run(capsys, "timeline", str(path))
    assert code == 2 and "has no application" in err
    project.put("applications", Application("a", "bad", (Step("c", "copy", src="host1", dst="gpu9"),)))
    save_project(project, path)
    before = path.read_bytes()
    code, out, err = run(capsys, "timeline", str(path))
    assert code == 2 and "choose a destination device" in err and len(err.strip().splitlines()) == 1
    assert path.read_bytes() == before


MULTI = ROOT / "resources" / "examples" / "four-h100-nvlink.gpm"


def test_the_four_h100_example_is_a_fresh_build(catalog):
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_multi", ROOT / "tools" / "make_multi_gpu_example.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert load_project(MULTI) == tool.build_project(catalog)


def test_the_four_h100_example_scatters_computes_and_gathers(capsys):
    code, out, err = run(capsys, "timeline", str(MULTI), "--json")
    assert code == 0, err
    doc = json.loads(out)
    steps = {s["id"]: s for s in doc["steps"]}
    kernels = [steps[f"dp{i}-kernel"] for i in range(1, 5)]
    # even split on identical GPUs over identical links: the four run side by side
    assert len({(k["start_s"], k["end_s"]) for k in kernels}) == 1
    assert all(k["start_s"] == steps[f"dp{i}-scatter"]["end_s"] for i, k in enumerate(kernels, 1))
    assert {k["engine"] for k in kernels} == {f"gpu{i}/compute" for i in range(1, 5)}
    # the peer copy crosses NVLink, after GPU 2's kernel and its copy engine's gather
    assert steps["peer"]["links"] == ["nvlink1:gpu2>gpu1"]
    assert steps["peer"]["start_s"] == steps["dp2-gather"]["end_s"]
    assert doc["critical_path"][-1] == "peer"
    assert doc["makespan_s"] == steps["peer"]["end_s"]


def test_energy_of_a_shipped_h100_uses_its_idle_power_with_provenance(capsys, tmp_path):
    """The saxpy2 application moved to the shipped H100 SXM5: its energy is known (the GTX
    970's is not), board power (TDP, 700 W) while the kernel runs and the idle power a third
    party's nvidia-smi log gives (85 W, graded secondary) the rest of the makespan."""
    from dataclasses import replace
    code, out, err = run(capsys, "devices", "show", "H100 SXM5 80 GB", "--json")
    assert code == 0, err
    values = json.loads(out)["values"]
    (idle,) = values["idle_power_w"]
    assert (idle["value"], idle["unit"], idle["provenance"], idle["source"]) == \
        (85, "W", "secondary", "thamada-nvidia-smi")
    assert "Pwr:Usage" in idle["where"]
    (busy,) = values["board_power_w"]
    assert busy["value"] == 700
    (engines,) = values["copy_engines"]
    assert (engines["value"], engines["provenance"]) == (3, "secondary")
    project = load_project(EXAMPLE)
    gpu = project.gpus()[0]
    project.devices[gpu.id] = replace(gpu, device_name="H100 SXM5 80 GB", label="H100")
    path = tmp_path / "h100.gpm"
    save_project(project, path)
    code, out, err = run(capsys, "timeline", str(path), "--json")
    assert code == 0, err
    doc = json.loads(out)
    kernel = doc["steps"][2]
    busy_s = kernel["end_s"] - kernel["start_s"]
    assert doc["energy_j"] == pytest.approx(busy["value"] * busy_s
                                            + 85 * (doc["makespan_s"] - busy_s), rel=1e-9)
    assert not doc["energy_unknown"]


@pytest.mark.parametrize("encoding,errors", [("utf-8", "strict"), ("UTF8", "surrogateescape"),
                                             ("latin-1", "replace"), (None, None)])
def test_parts_are_written_as_the_stream_writes_them(encoding, errors):
    """cmd_timeline._write_parts: the bytes a text stream holds after the parts are the
    bytes its own write of each part gives (after what was written before, still in its
    text layer), whether they go to its bytes directly (UTF-8) or through it (another
    encoding; a stream of text only)."""
    import io

    from gpumodeler.cli.cmd_timeline import _write_parts

    parts = ["[\n  {", "\"é\": 1.5,\n ", "\udcff" if errors == "surrogateescape" else "x",
             "€\n}", "\n"]

    def stream():
        if encoding is None:
            return io.StringIO()
        return io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors=errors)

    def held(s):
        s.flush()
        return s.getvalue() if encoding is None else s.buffer.getvalue()

    expected, written = stream(), stream()
    for s in (expected, written):
        s.write("before\n")
    for part in parts:
        expected.write(part)
    _write_parts(written, parts)
    written.write("after\n")
    expected.write("after\n")
    assert held(written) == held(expected)
