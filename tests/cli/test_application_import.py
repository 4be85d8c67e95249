"""`gpumodeler application import` (an application from an Nsight Systems export), its replay
on the project's system (`timeline`), and `timeline --by`."""
import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.db.project_file import load_project, save_project

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from nsys_exports import (A100, DEVICE, PINNED, SAXPY, copy, kernel, sqlite_file,  # noqa: E402
                          write_export)

pytestmark = pytest.mark.usefixtures("gpumodeler_env")

MiB = 2 ** 20
SCALE = "void scale<float>(float*, int)"
#: the link the test's copies follow (eq. 5.5): startup and bandwidth
TS, BW = 12e-6, 18e9


def ns(seconds: float) -> int:
    return int(round(seconds * 1e9))


def copy_time(n: int) -> float:
    return TS + n / BW


def two_streams(path: Path, layout="modern", gpu_name="NVIDIA A100-SXM4-40GB", gpu=A100,
                gap_s=2e-3) -> dict:
    """Two streams on one GPU, as a GPU with one copy engine per direction runs them: each
    stream copies in, computes and copies out; stream 8's upload waits for stream 7's on
    the host-to-device engine, its kernel for stream 7's on the compute engine, while copies
    overlap kernels; then the host works ``gap_s`` and launches one more kernel. Returns the
    intervals by name."""
    t = {}
    t["a_in"] = (0.0, copy_time(16 * MiB))
    t["b_in"] = (t["a_in"][1], t["a_in"][1] + copy_time(32 * MiB))
    t["a_k"] = (t["a_in"][1], t["a_in"][1] + 1.2e-3)
    start = max(t["b_in"][1], t["a_k"][1])
    t["b_k"] = (start, start + 0.5e-3)
    t["a_out"] = (t["a_k"][1], t["a_k"][1] + copy_time(8 * MiB))
    start = max(t["b_k"][1], t["a_out"][1])
    t["b_out"] = (start, start + copy_time(4 * MiB))
    t["last"] = (t["b_out"][1] + gap_s, t["b_out"][1] + gap_s + 0.3e-3)
    write_export(path, layout, kernels=[
        kernel(ns(t["a_k"][0]), ns(t["a_k"][1]), SAXPY, stream=7),
        kernel(ns(t["b_k"][0]), ns(t["b_k"][1]), SCALE, stream=8),
        kernel(ns(t["last"][0]), ns(t["last"][1]), SAXPY, stream=7)],
        copies=[copy(ns(t["a_in"][0]), ns(t["a_in"][1]), 16 * MiB, 1, src=PINNED, stream=7),
                copy(ns(t["b_in"][0]), ns(t["b_in"][1]), 32 * MiB, 1, src=PINNED, stream=8),
                copy(ns(t["a_out"][0]), ns(t["a_out"][1]), 8 * MiB, 2, src=DEVICE, dst=PINNED,
                     stream=7),
                copy(ns(t["b_out"][0]), ns(t["b_out"][1]), 4 * MiB, 2, src=DEVICE,
                     dst=PINNED, stream=8)],
        gpus=[(0, gpu_name, gpu)], memsets=1)
    return t


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def imported(capsys, tmp_path, layout="modern", **kw):
    trace = tmp_path / "run.sqlite"
    times = two_streams(trace, layout, **kw)
    project = tmp_path / "p.gpm"
    code, out, err = run(capsys, "application", "import", trace, "--project", project, "--json")
    assert code == 0, err
    return trace, project, times, json.loads(out)


def timeline(capsys, project, *argv):
    code, out, err = run(capsys, "timeline", project, "--json", *argv)
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("layout", ["modern", "mid", "old"])
def test_replay_on_the_traced_gpu_gives_the_measured_makespan(capsys, tmp_path, layout):
    trace, project, t, summary = imported(capsys, tmp_path, layout)
    assert (summary["kernels"], summary["copies"], summary["host_gaps"]) == (3, 4, 1)
    assert summary["created"] is True and summary["gpus"][0]["device"] == "A100 SXM4 40 GB"
    assert summary["added_devices"] == ["Host of an imported trace"]
    measured = t["last"][1]
    assert summary["measured_makespan_s"] == pytest.approx(measured, abs=1e-9)
    doc = timeline(capsys, project)
    assert doc["measured_makespan_s"] == pytest.approx(measured, abs=1e-9)
    assert doc["makespan_s"] == pytest.approx(measured, rel=0.05)
    # every kernel and copy is a step, in trace order, with its measured interval
    steps = [s for s in doc["steps"] if s["kind"] != "sync"]
    assert len(steps) == 7
    assert [s["measured_start_s"] for s in steps] == sorted(s["measured_start_s"] for s in steps)
    # the overlap is in the replay: a copy runs while a kernel does
    kernels = [(s["start_s"], s["end_s"]) for s in steps if s["kind"] == "kernel"]
    copies = [(s["start_s"], s["end_s"]) for s in steps if s["kind"] == "copy"]
    assert any(c0 < k1 and k0 < c1 for k0, k1 in kernels for c0, c1 in copies)
    # the host's gap is a step of its own, kept as measured
    (host,) = [s for s in doc["steps"] if s["kind"] == "sync"]
    assert host["end_s"] - host["start_s"] == pytest.approx(2e-3, abs=1e-8)


def test_the_export_is_only_read_and_the_project_written_atomically(capsys, tmp_path):
    trace = tmp_path / "run.sqlite"
    two_streams(trace)
    before = digest(trace)
    project = tmp_path / "p.gpm"
    code, out, err = run(capsys, "application", "import", trace, "--project", project,
                         "--name", "two streams")
    assert code == 0, err
    assert "created" in out and "7" not in err
    assert digest(trace) == before
    assert sorted(os.listdir(tmp_path)) == ["p.gpm", "run.sqlite", "user-home"]
    p = load_project(project)
    (app,) = p.applications.values()
    assert app.name == "two streams"
    assert {s.traced_gpu for s in app.steps if s.kind != "sync"} == {"A100 SXM4 40 GB"}
    # a second import adds a second application on the same GPU and link
    code, out, err = run(capsys, "application", "import", trace, "--project", project)
    assert code == 0 and "updated" in out
    p = load_project(project)
    assert len(p.applications) == 2 and len(p.gpus()) == 1 and len(p.connections) == 1
    code, out, err = run(capsys, "timeline", project, "--application", "run", "--json")
    assert code == 0, err


def test_the_host_link_is_fitted_to_the_copies(capsys, tmp_path):
    _trace, project, _t, summary = imported(capsys, tmp_path)
    fit = summary["link"]["fit"]
    for direction in ("htod", "dtoh"):
        assert fit[direction]["startup_s"] == pytest.approx(TS, rel=1e-3)
        assert fit[direction]["bandwidth_bytes_per_s"] == pytest.approx(BW, rel=1e-4)
    p = load_project(project)
    (conn,) = p.connections.values()
    assert conn.overrides["startup_htod_s"] == pytest.approx(TS, rel=1e-3)
    # the slowest PCIe x16 generation whose bandwidth carries 18 GB/s
    assert conn.link_name == "PCIe 4.0 x16"


def test_a_gpu_the_database_lacks_is_added_with_the_traces_facts(capsys, tmp_path,
                                                                  gpumodeler_env):
    name = "NVIDIA Imaginary X1"
    _trace, project, t, summary = imported(capsys, tmp_path, gpu_name=name)
    assert summary["gpus"][0] == {"trace": name, "device": name, "created": True,
                                  "placed": "gpu1"}
    code, out, err = run(capsys, "devices", "show", name, "--json")
    assert code == 0, err
    shown = out
    for value in ("108", "1410000000", "41943040"):
        assert value in shown
    doc = timeline(capsys, project)
    assert doc["makespan_s"] == pytest.approx(t["last"][1], rel=0.05)
    # imported again: found, not added twice
    code, out, err = run(capsys, "application", "import", tmp_path / "run.sqlite", "--project",
                         project, "--json")
    assert code == 0 and json.loads(out)["gpus"][0]["created"] is False


def test_on_another_gpu_kernels_scale_and_copies_follow_the_link(capsys, tmp_path):
    from gpumodeler.db.catalog import Catalog
    _trace, project, t, _summary = imported(capsys, tmp_path)
    p = load_project(project)
    gpu = p.devices["gpu1"]
    p.devices["gpu1"] = type(gpu)(**{**gpu.__dict__, "device_name": "H100 SXM5 80 GB"})
    save_project(p, project)
    doc = timeline(capsys, project)
    with Catalog() as cat:
        a100 = cat.get("A100 SXM4 40 GB").to_gpu_spec()
        h100 = cat.get("H100 SXM5 80 GB").to_gpu_spec()

    def bw(g):
        return g.gmem_bandwidth_bytes_per_cycle_per_sm() * g.sms * g.sm_clock_hz
    scale = max(a100.sms * a100.sm_clock_hz / (h100.sms * h100.sm_clock_hz), bw(a100) / bw(h100))
    assert scale < 1
    (k,) = [s for s in doc["steps"] if s["name"] == SCALE]
    assert k["end_s"] - k["start_s"] == pytest.approx(0.5e-3 * scale, rel=1e-9)
    assert k["prediction"]["mode"] == "measured"
    assert k["prediction"]["scale"] == pytest.approx(scale, rel=1e-12)
    copies = [s for s in doc["steps"] if s["kind"] == "copy"]
    assert copies[0]["alone_s"] == pytest.approx(copy_time(16 * MiB), rel=1e-3)
    assert doc["makespan_s"] < doc["measured_makespan_s"]


def test_a_kernel_graph_of_the_same_name_predicts_the_kernel(capsys, tmp_path):
    from gpumodeler.core.kernel.graph import from_dict
    _trace, project, _t, _summary = imported(capsys, tmp_path)
    p = load_project(project)
    root = Path(__file__).resolve().parents[2]
    graph = from_dict(json.loads((root / "resources" / "kernels" / "saxpy2-maxwell.json")
                                 .read_text()))
    graph.name = "saxpy"
    p.put_kernel("k_saxpy", graph)
    save_project(p, project)
    doc = timeline(capsys, project)
    by_name = {}
    for s in doc["steps"]:
        by_name.setdefault(s["name"], []).append(s)
    assert all(s["prediction"]["mode"] != "measured" for s in by_name[SAXPY])
    assert all(s["prediction"]["mode"] == "measured" for s in by_name[SCALE])


def test_by_kernel_and_by_stream(capsys, tmp_path):
    _trace, project, t, _summary = imported(capsys, tmp_path)
    code, out, err = run(capsys, "timeline", project, "--by", "kernel", "--json")
    assert code == 0, err
    doc = json.loads(out)
    rows = {g["kernel"]: g for g in doc["groups"]}
    saxpy = rows[SAXPY]
    assert saxpy["count"] == 2
    measured = (t["a_k"][1] - t["a_k"][0]) + (t["last"][1] - t["last"][0])
    assert saxpy["measured_total_s"] == pytest.approx(measured, abs=2e-9)
    assert saxpy["measured_mean_s"] == pytest.approx(measured / 2, abs=1e-9)
    assert saxpy["predicted_total_s"] == pytest.approx(measured, rel=1e-6)
    assert rows["[CUDA memcpy HtoD]"]["count"] == 2
    assert doc["measured_makespan_s"] == pytest.approx(t["last"][1], abs=1e-9)
    code, out, err = run(capsys, "timeline", project, "--by", "stream", "--json")
    rows = {g["stream"]: g for g in json.loads(out)["groups"]}
    assert set(rows) == {"7", "8"} and rows["7"]["count"] == 4 and rows["8"]["count"] == 3
    code, out, err = run(capsys, "timeline", project, "--by", "kernel")
    assert code == 0 and SAXPY in out and "pred/meas" in out and "measured" in out
    with pytest.raises(SystemExit) as exc:
        main(["timeline", str(project), "--by", "nothing"])
    assert exc.value.code == 2 and "--by" in capsys.readouterr().err


def test_a_hand_built_application_has_no_measured_makespan(capsys):
    root = Path(__file__).resolve().parents[2]
    doc = timeline(capsys, root / "resources" / "examples" / "saxpy2-gtx970.gpm")
    assert doc["measured_makespan_s"] is None
    assert all(s["measured_s"] is None for s in doc["steps"])
    code, out, err = run(capsys, "timeline", root / "resources" / "examples" /
                         "saxpy2-gtx970.gpm", "--by", "kernel", "--json")
    assert code == 0 and all(g["measured_total_s"] is None for g in json.loads(out)["groups"])


def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path):
    project = tmp_path / "p.gpm"
    text = tmp_path / "notes.sqlite"
    text.write_text("not a database\n")
    no_kernels = sqlite_file(tmp_path / "nokernels.sqlite",
                             "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER)")
    empty = write_export(tmp_path / "empty.sqlite",
                         gpus=[(0, "NVIDIA A100-SXM4-40GB", A100)])
    good = tmp_path / "run.sqlite"
    two_streams(good)
    not_a_project = tmp_path / "x.gpm"
    not_a_project.write_text("hello\n")
    cases = [
        ([text, "--project", project], "not a SQLite file"),
        ([no_kernels, "--project", project], "without a kernel table"),
        ([empty, "--project", project], "an empty trace"),
        ([tmp_path / "missing.sqlite", "--project", project], "no such file"),
        ([good, "--project", not_a_project], "x.gpm"),
        ([good, "--project", tmp_path / "nofolder" / "p.gpm"], "does not exist"),
        ([good, "--project", project, "--name", " "], "--name needs"),
    ]
    for argv, message in cases:
        before = sorted(os.listdir(tmp_path))
        code, out, err = run(capsys, "application", "import", *argv)
        assert code == 2, (argv, out, err)
        assert message in err and len(err.strip().splitlines()) == 1, (argv, err)
        assert "Traceback" not in err
        assert sorted(os.listdir(tmp_path)) == before
    assert not_a_project.read_text() == "hello\n"


def test_the_report_has_the_measured_vs_predicted_table(capsys, tmp_path):
    _trace, project, t, _summary = imported(capsys, tmp_path)
    out = tmp_path / "r.html"
    code, _out, err = run(capsys, "report", project, "-o", out)
    assert code == 0, err
    html = out.read_text()
    assert "predicted / measured" in html and "(measured " in html
    assert "saxpy(int, float, float const*, float*)" in html


def test_two_gpus_each_with_its_link_and_a_copy_within_a_gpu(capsys, tmp_path):
    trace = tmp_path / "two.sqlite"
    us = 1000   # ns
    write_export(trace, kernels=[kernel(0, 400 * us, SAXPY, stream=7, device=0),
                                 kernel(50 * us, 300 * us, SAXPY, stream=7, device=1)],
                 copies=[copy(400 * us, 400 * us + ns(copy_time(8 * MiB)), 8 * MiB, 2,
                              src=DEVICE, dst=PINNED, stream=7, device=0),
                         copy(300 * us, 350 * us, 4 * MiB, 8, src=DEVICE, dst=DEVICE, stream=7,
                              device=1),
                         copy(350 * us, 350 * us + ns(copy_time(2 * MiB)), 2 * MiB, 1,
                              src=PINNED, stream=7, device=1)],
                 gpus=[(0, "NVIDIA A100-SXM4-40GB", A100), (1, "NVIDIA Imaginary X1", A100)])
    project = tmp_path / "p.gpm"
    code, out, err = run(capsys, "application", "import", trace, "--project", project, "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert [g["placed"] for g in summary["gpus"]] == ["gpu1", "gpu2"]
    p = load_project(project)
    assert len(p.connections) == 2 and len(p.launches) == 2
    doc = timeline(capsys, project)
    streams = {s["stream"] for s in doc["steps"] if s["kind"] != "sync"}
    assert streams == {"0/7", "1/7"}
    (dtod,) = [s for s in doc["steps"] if s["name"] == "[CUDA memcpy DtoD]"]
    assert dtod["engines"] == ["gpu2/copy-dtoh"] and dtod["prediction"]["mode"] == "measured"
    assert dtod["end_s"] - dtod["start_s"] == pytest.approx(50e-6, rel=1e-9)
    assert doc["makespan_s"] == pytest.approx(doc["measured_makespan_s"], rel=0.05)


def test_the_traces_copy_engines_override_the_databases(capsys, tmp_path):
    _trace, project, _t, _summary = imported(capsys, tmp_path)
    p = load_project(project)
    assert p.devices["gpu1"].overrides == {"copy_engines": 3}   # A100's asyncEngines


def test_by_kernel_text_cuts_long_names(capsys, tmp_path):
    from gpumodeler.cli.cmd_timeline import NAME_WIDTH
    trace = tmp_path / "long.sqlite"
    name = "void " + "very_long_template_name<" * 6 + "float>(float*)"
    write_export(trace, kernels=[kernel(0, 1000, name)], gpus=[(0, "NVIDIA A100-SXM4-40GB", A100)])
    project = tmp_path / "p.gpm"
    code, out, err = run(capsys, "application", "import", trace, "--project", project)
    assert code == 0, err
    code, out, err = run(capsys, "timeline", project, "--by", "kernel")
    assert code == 0 and name[:NAME_WIDTH - 1] + "…" in out and name not in out
    doc = timeline(capsys, project, "--by", "kernel")
    assert doc["groups"][0]["kernel"] == name


def test_a_gpu_the_trace_does_not_describe(capsys, tmp_path):
    """No GPU table row: the GPU is added by its id with no facts (a note says so), and the
    copy engines are read from the copies (opposite directions overlapped: two)."""
    trace = tmp_path / "bare.sqlite"
    t = two_streams(trace)
    bare = tmp_path / "bare2.sqlite"
    write_export(bare, kernels=[kernel(ns(t["a_k"][0]), ns(t["a_k"][1]), SAXPY)],
                 copies=[copy(0, ns(copy_time(16 * MiB)), 16 * MiB, 1, src=PINNED),
                         copy(ns(10e-6), ns(10e-6 + copy_time(4 * MiB)), 4 * MiB, 2,
                              src=DEVICE, dst=PINNED, stream=8)])
    project = tmp_path / "p.gpm"
    code, out, err = run(capsys, "application", "import", bare, "--project", project, "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["gpus"][0]["device"] == "GPU 0"
    assert any("gives none of its facts" in n for n in summary["notes"])
    p = load_project(project)
    assert p.devices["gpu1"].overrides == {"copy_engines": 2}
    doc = timeline(capsys, project)
    assert doc["makespan_s"] == pytest.approx(doc["measured_makespan_s"], rel=0.05)


def test_a_traced_gpu_missing_from_the_database_is_one_line(capsys, tmp_path, gpumodeler_env):
    _trace, project, _t, _summary = imported(capsys, tmp_path, gpu_name="NVIDIA Imaginary X1")
    p = load_project(project)
    gpu = p.devices["gpu1"]
    p.devices["gpu1"] = type(gpu)(**{**gpu.__dict__, "device_name": "A100 SXM4 40 GB"})
    save_project(p, project)
    gpumodeler_env.unlink()     # another machine: the user database without that GPU
    code, out, err = run(capsys, "timeline", project)
    assert code == 2 and "the GPU it was traced on, NVIDIA Imaginary X1" in err
    assert len(err.strip().splitlines()) == 1


def test_aggregate_counts_a_streams_lanes_as_the_stream_and_skips_host_time():
    from gpumodeler.service.application import aggregate

    def step(name, stream, kind="kernel", start=0.0, end=1.0, measured=1.0):
        return {"name": name, "stream": stream, "kind": kind, "start_s": start, "end_s": end,
                "measured_s": measured}
    result = {"steps": [step("a", "7"), step("a", "7~1", end=3.0), step("host", "host", "sync"),
                        step("b", "8", measured=None)]}
    rows = {g["stream"]: g for g in aggregate(result, "stream")}
    assert set(rows) == {"7", "8"} and rows["7"]["count"] == 2
    assert rows["7"]["predicted_total_s"] == 4.0 and rows["7"]["measured_total_s"] == 2.0
    assert rows["7"]["ratio"] == 2.0 and rows["8"]["measured_total_s"] is None
    assert [g["kernel"] for g in aggregate(result, "kernel")] == ["a", "b"]


def test_a_gpu_placed_in_the_project_is_reused_with_its_own_link(capsys, tmp_path):
    import shutil
    root = Path(__file__).resolve().parents[2]
    project = tmp_path / "p.gpm"
    shutil.copy(root / "resources" / "examples" / "saxpy2-gtx970.gpm", project)
    before = load_project(project)
    trace = tmp_path / "run.sqlite"
    two_streams(trace, gpu_name="NVIDIA GeForce GTX 970")
    code, out, err = run(capsys, "application", "import", trace, "--project", project, "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["gpus"][0]["placed"] == "gpu1" and summary["link"] is None
    p = load_project(project)
    assert p.devices == before.devices and p.connections == before.connections
    doc = timeline(capsys, project, "--application", summary["application"])
    copies = [s for s in doc["steps"] if s["kind"] == "copy"]
    assert copies and all(s["links"][0].startswith("link1:") for s in copies)


def test_two_gpus_of_one_name_stay_two_gpus(capsys, tmp_path):
    trace = tmp_path / "twins.sqlite"
    write_export(trace, kernels=[kernel(0, 1000, SAXPY, device=0), kernel(0, 1000, SAXPY, device=1)],
                 gpus=[(0, "NVIDIA A100-SXM4-40GB", A100), (1, "NVIDIA A100-SXM4-40GB", A100)])
    project = tmp_path / "p.gpm"
    for expected in (["gpu1", "gpu2"], ["gpu1", "gpu2"]):   # a second import reuses both
        code, out, err = run(capsys, "application", "import", trace, "--project", project,
                             "--json")
        assert code == 0, err
        assert [g["placed"] for g in json.loads(out)["gpus"]] == expected
    assert len(load_project(project).gpus()) == 2


def test_copies_of_several_memory_kinds_at_different_rates_are_noted(capsys, tmp_path):
    trace = tmp_path / "mixed.sqlite"
    write_export(trace, kernels=[kernel(0, 1000, SAXPY)],
                 copies=[copy(1000, 1000 + ns(copy_time(8 * MiB)), 8 * MiB, 1, src=PINNED),
                         copy(10 ** 7, 10 ** 7 + ns(3 * copy_time(8 * MiB)), 8 * MiB, 1,
                              src=0)],   # pageable, three times slower
                 gpus=[(0, "NVIDIA A100-SXM4-40GB", A100)])
    code, out, err = run(capsys, "application", "import", trace, "--project", tmp_path / "p.gpm",
                         "--json")
    assert code == 0, err
    (note,) = [n for n in json.loads(out)["notes"] if "memory kinds" in n]
    assert "pageable" in note and "pinned" in note and "htod" in note
    (tmp_path / "one").mkdir()
    _trace, _project, _t, summary = imported(capsys, tmp_path / "one")   # pinned only
    assert not any("memory kinds" in n for n in summary["notes"])
