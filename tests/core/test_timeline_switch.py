"""GPUs behind one PCIe switch (or root port) share it: the switch is a host-side link (a
PCIe link from the host to itself) that the GPUs' PCIe links name in their ``via``
override; host<->GPU copies cross it and share its bandwidth max-min fairly
(docs/timeline.md, "Routes and bandwidth sharing")."""
from dataclasses import replace
import json
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.core.application.app import Application, Step, build, run
from gpumodeler.core.device import GPUSpec, LinkSpec
from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.project import Connection, PlacedDevice, Project, connection_refusal
from gpumodeler.db.project_file import load_project, save_project

GPU = GPUSpec("g", "8.0", sms=100, sm_clock_hz=1e9, cuda_cores_per_sm=64, schedulers_per_sm=4,
              gmem_bytes_per_cycle_per_sm=16.0, copy_engines=2)
LINKS = {"pcie": LinkSpec("pcie", 10e9, 5e-6, 5e-6, 1.0, 1.0),
         "pcie-x4": LinkSpec("pcie-x4", 3e9, 5e-6, 5e-6, 1.0, 1.0),
         "uplink": LinkSpec("uplink", 10e9, 1e-6, 1e-6, 1.0, 1.0)}
LOOKUPS = {"gpu_lookup": lambda name: GPU, "link_lookup": LINKS.__getitem__}


def system(via=True, second_link="pcie"):
    p = Project("switch")
    p.put("devices", PlacedDevice("h", "host", "host"))
    for g in ("g1", "g2", "g3"):
        p.put("devices", PlacedDevice(g, "gpu", "g"))
    p.put("connections", Connection("sw", "uplink", "h", "h", "pcie"))
    behind = {"via": "sw"} if via else {}
    p.put("connections", Connection("c1", "pcie", "h", "g1", "pcie", overrides=behind))
    p.put("connections", Connection("c2", second_link, "h", "g2", "pcie", overrides=behind))
    p.put("connections", Connection("c3", "pcie", "h", "g3", "pcie"))  # not behind the switch
    return p


def two_uploads(size1="1e9", size2="1e9", dst2="g2"):
    return Application("a", steps=(Step("u1", "copy", src="h", dst="g1", size=size1, stream="1"),
                                   Step("u2", "copy", src="h", dst=dst2, size=size2, stream="2")))


def ends(timeline):
    return {a.id: a.end_s for a in timeline.activities}


def test_two_copies_behind_one_switch_share_its_bandwidth():
    alone = 5e-6 + 1e9 / 10e9
    _b, tl, _e = run(system(via=False), two_uploads(), **LOOKUPS)
    assert ends(tl) == pytest.approx({"u1": alone, "u2": alone}, abs=1e-11)  # each its own link
    built, tl, _e = run(system(), two_uploads(), **LOOKUPS)
    # both cross the switch's 10 GB/s uplink: 5 GB/s each, twice as long
    assert ends(tl) == pytest.approx({"u1": 5e-6 + 0.2, "u2": 5e-6 + 0.2}, abs=1e-11)
    acts = {a.id: a for a in built.activities}
    assert acts["u1"].links == ("c1:h>g1", "sw:htod") and built.capacities["sw:htod"] == 10e9
    assert tl.busy_s["sw:htod"] == pytest.approx(0.2, abs=1e-11)
    # alone through the switch a copy takes eq. 5.5 over its own link: the uplink is as fast
    # and adds no startup of its own
    _b, tl, _e = run(system(), Application("a", steps=two_uploads().steps[:1]), **LOOKUPS)
    assert tl.makespan_s == pytest.approx(alone, abs=1e-11)


def test_the_sharing_is_max_min_fair():
    # g2's own link is an x4 (3 GB/s): it keeps 3 GB/s of the uplink, g1 gets the other 7.
    # 1.4 GB to g1 at 7 GB/s and 0.6 GB to g2 at 3 GB/s both take 0.2 s.
    _b, tl, _e = run(system(second_link="pcie-x4"), two_uploads("1.4e9", "0.6e9"), **LOOKUPS)
    assert ends(tl) == pytest.approx({"u1": 5e-6 + 0.2, "u2": 5e-6 + 0.2}, abs=1e-11)


def test_a_gpu_not_behind_the_switch_does_not_share_it():
    _b, tl, _e = run(system(), two_uploads(dst2="g3"), **LOOKUPS)
    assert ends(tl) == pytest.approx({"u1": 5e-6 + 0.1, "u2": 5e-6 + 0.1}, abs=1e-11)


def test_opposite_directions_do_not_share_and_a_staged_peer_copy_crosses_both():
    app = Application("a", steps=(Step("up", "copy", src="h", dst="g1", size="1e9", stream="1"),
                                  Step("down", "copy", src="g2", dst="h", size="1e9", stream="2")))
    _b, tl, _e = run(system(), app, **LOOKUPS)
    assert ends(tl) == pytest.approx({"up": 5e-6 + 0.1, "down": 5e-6 + 0.1}, abs=1e-11)
    built = build(system(), Application("a", steps=(Step("p", "copy", src="g1", dst="g2", size="1"),)),
                  **LOOKUPS)
    assert built.activities[0].links == ("c1:g1>h", "sw:dtoh", "c2:h>g2", "sw:htod")


def test_a_via_that_is_not_a_host_side_link_is_refused_with_the_choices():
    p = system()
    p.put("connections", replace(p.connections["c1"], overrides={"via": "c3"}))
    with pytest.raises(InvalidParameter, match=r"passes through 'c3'.*host-side links: sw"):
        build(p, two_uploads(), **LOOKUPS)


def test_a_host_side_link_is_drawn_from_a_host_to_itself():
    p = system()
    assert connection_refusal(p, "h", "h", "pcie") is None
    assert "two different devices" in connection_refusal(p, "g1", "g1", "pcie")
    assert "two different devices" in connection_refusal(p, "h", "h", "network")


ROOT = Path(__file__).resolve().parents[2]
MULTI = ROOT / "resources" / "examples" / "four-h100-nvlink.gpm"


@pytest.mark.usefixtures("gpumodeler_env")
def test_a_user_built_project_shares_the_switch_in_the_cli(capsys, tmp_path):
    """The four-H100 example with a PCIe switch drawn on its host and GPUs 1 and 2 behind it:
    `gpumodeler timeline --json` shows two uploads sharing the switch's uplink."""
    project = load_project(MULTI)
    pcie = project.connections["pcie1"].link_name
    project.put("connections", Connection("switch", pcie, "host1", "host1", "pcie", label="PCIe switch"))
    steps = (Step("u1", "copy", src="host1", dst="gpu1", size="1e9", stream="1"),
             Step("u2", "copy", src="host1", dst="gpu2", size="1e9", stream="2"))
    project.applications.clear()
    project.put("applications", Application("a", "uploads", steps))

    def timeline():
        path = save_project(project, tmp_path / "p.gpm", force=True)
        code = main(["timeline", str(path), "--json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        doc = json.loads(out)
        return {s["id"]: s for s in doc["steps"]}, doc

    apart, _doc = timeline()
    for c in ("pcie1", "pcie2"):
        project.put("connections", replace(project.connections[c], overrides={"via": "switch"}))
    shared, doc = timeline()
    for k in ("u1", "u2"):
        # the same startup, then the data phase at half the rate: twice as long
        startup = apart[k]["prediction"]["startup_s"]
        data = apart[k]["end_s"] - apart[k]["start_s"] - startup
        assert shared[k]["end_s"] - shared[k]["start_s"] == pytest.approx(startup + 2 * data, rel=1e-9)
        assert shared[k]["links"][-1] == "switch:htod" and "switch:htod" not in apart[k]["links"]
    assert doc["busy_fraction"]["switch:htod"] > 0.99
