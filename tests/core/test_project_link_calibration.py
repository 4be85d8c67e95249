"""A project connection names the stored link calibration its transfers use
(``overrides["transfer_calibration"]``); evaluate_launch, make_snapshot and the application
timeline take a ``calibration_lookup(link_name, label) -> LinkSpec`` (core stays db-free)."""
from dataclasses import replace

import pytest

from gpumodeler.core.application.app import Application, Step, build
from gpumodeler.core.commands import SetOverride, UndoStack
from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.launch_sweep import make_snapshot
from gpumodeler.core.pipeline import evaluate_launch
from gpumodeler.core.project import TRANSFER_CALIBRATION
from gpumodeler.core.transfers.models import TransferModel

HTOD = TransferModel.from_dict({"model": "regimes", "startup_s": 7e-6, "regimes": [
    {"first_size_bytes": 4.0, "last_size_bytes": 2.0 ** 20, "bandwidth_bytes_per_s": 1.0e10},
    {"first_size_bytes": 2.0 ** 22, "last_size_bytes": 2.0 ** 31, "bandwidth_bytes_per_s": 6.0e9}]})
DTOH = TransferModel.from_dict({"model": "regimes", "startup_s": 5e-6, "regimes": [
    {"first_size_bytes": 4.0, "last_size_bytes": 2.0 ** 31, "bandwidth_bytes_per_s": 2.5e9}]})


@pytest.fixture
def lookups(catalog):
    link_lookup = lambda n: catalog.get(n).to_link_spec()  # noqa: E731
    asked = []

    def calibration_lookup(name, label):
        asked.append((name, label))
        if label != "pinned":
            raise InvalidParameter(f"no calibration labelled {label!r} for link {name!r} "
                                   "(stored: pinned)")
        return replace(link_lookup(name), transfer_models=(("htod", HTOD), ("dtoh", DTOH)))
    return {"gpu_lookup": lambda n: catalog.get(n).to_gpu_spec(), "link_lookup": link_lookup,
            "table_lookup": catalog.latency_table, "calibration_lookup": calibration_lookup,
            "asked": asked}


def _labelled(project, label):
    UndoStack(project).push(SetOverride("connections", "link1", TRANSFER_CALIBRATION, label))
    return project


def _evaluate(project, lookups, **kw):
    return evaluate_launch(project, "launch1", lookups["gpu_lookup"], lookups["link_lookup"],
                           table_lookup=lookups["table_lookup"], **kw)


def test_the_label_makes_transfers_use_the_fitted_models(example_project, lookups):
    nominal = _evaluate(example_project(), lookups, calibration_lookup=lookups["calibration_lookup"])
    assert lookups["asked"] == []                  # no label: the lookup is not asked
    project = _labelled(example_project(), "pinned")
    r = _evaluate(project, lookups, calibration_lookup=lookups["calibration_lookup"])
    assert set(lookups["asked"]) == {("PCIe 3.0 x16 (Gajger GTX 970 testbed)", "pinned")}
    n = 4 * 400_000_000
    assert list(r.prediction.transfer_times_s) == [HTOD.time_s(n), HTOD.time_s(n), DTOH.time_s(n)]
    assert r.prediction.transfer_times_s != nominal.prediction.transfer_times_s
    assert r.prediction.kernel.time_s == nominal.prediction.kernel.time_s
    # the label is no LinkSpec field: other overrides still apply next to it
    assert r.link.name == nominal.link.name and r.link.transfer_models
    snap = make_snapshot(project, "launch1", lookups["gpu_lookup"], lookups["link_lookup"], "a",
                         [128.0], table_lookup=lookups["table_lookup"],
                         calibration_lookup=lookups["calibration_lookup"])
    assert snap.link == r.link


def test_a_label_without_lookup_or_unknown_label_is_a_clear_error(example_project, lookups):
    project = _labelled(example_project(), "pinned")
    with pytest.raises(InvalidParameter, match=r"link 'PCIe 3.0 x16 \(Gajger GTX 970 testbed\)' "
                                               r"uses the transfer calibration 'pinned'"):
        _evaluate(project, lookups)
    project = _labelled(example_project(), "pageable")
    with pytest.raises(InvalidParameter, match=r"no calibration labelled 'pageable'.*stored: pinned"):
        _evaluate(project, lookups, calibration_lookup=lookups["calibration_lookup"])
    for bad in (3, "", " "):
        project = _labelled(example_project(), bad)
        with pytest.raises(InvalidParameter, match="transfer_calibration must be the label"):
            _evaluate(project, lookups, calibration_lookup=lookups["calibration_lookup"])


def test_the_label_round_trips_through_the_project_file_and_undo(example_project, tmp_path):
    from gpumodeler.db.project_file import load_project, save_project
    project = example_project()
    stack = UndoStack(project)
    stack.push(SetOverride("connections", "link1", TRANSFER_CALIBRATION, "pinned"))
    assert project.connections["link1"].overrides == {TRANSFER_CALIBRATION: "pinned"}
    save_project(project, tmp_path / "p.gpm")
    assert load_project(tmp_path / "p.gpm").connections["link1"].overrides == {
        TRANSFER_CALIBRATION: "pinned"}
    stack.undo()
    assert project.connections["link1"].overrides == {}


def test_timeline_copies_take_the_calibrated_model(example_project, lookups):
    project = _labelled(example_project(), "pinned")
    app = Application("app1", "copies", steps=(
        Step("c1", "copy", "to GPU", stream="s1", src="host1", dst="gpu1", size="3000000"),
        Step("c2", "copy", "from GPU", stream="s1", src="gpu1", dst="host1", size="5e8")))
    kw = {k: lookups[k] for k in ("gpu_lookup", "link_lookup", "table_lookup")}
    built = build(project, app, calibration_lookup=lookups["calibration_lookup"], **kw)
    assert built.predictions["c1"].alone_s == pytest.approx(HTOD.time_s(3e6), rel=1e-12)
    assert built.predictions["c2"].alone_s == pytest.approx(DTOH.time_s(5e8), rel=1e-12)
    with pytest.raises(InvalidParameter, match="uses the transfer calibration 'pinned'"):
        build(project, app, **kw)


def test_copies_of_one_route_each_take_the_model_at_their_size(example_project, lookups):
    """(a route's plan is made once when the size changes none of it; a calibrated model's
    bandwidth depends on the size, so every copy over it is planned at its own size)"""
    project = _labelled(example_project(), "pinned")
    sizes = ["3000000", str(2 ** 30), "4096", str(2 ** 30)]
    app = Application("app1", "copies", steps=tuple(
        Step(f"c{i}", "copy", "to GPU", stream="s1", src="host1", dst="gpu1", size=size)
        for i, size in enumerate(sizes)))
    kw = {k: lookups[k] for k in ("gpu_lookup", "link_lookup", "table_lookup")}
    built = build(project, app, calibration_lookup=lookups["calibration_lookup"], **kw)
    for i, size in enumerate(sizes):
        p = built.predictions[f"c{i}"]
        assert p.alone_s == pytest.approx(HTOD.time_s(float(size)), rel=1e-12)
        assert p.detail["route"][0]["bandwidth_bytes_per_s"] == \
            HTOD.bandwidth_bytes_per_s(float(size))
