"""`timeline`'s text makes only the columns it prints (service.application_columns'
``shown``) when the sources of the others tell them plain and finite: the same columns and
document as the whole, the others None; and a number that is not finite in one of those
sources is still refused, naming it as the whole document's walk names it, in every output
(text, ``--by``, ``--svg``, ``--json``)."""
import dataclasses
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from gpumodeler.cli import common
from gpumodeler.cli.cmd_timeline import TEXT_KEYS
from gpumodeler.core.finite import plain_finite_values
from gpumodeler.cli.main import main
from gpumodeler.core import physical
from gpumodeler.core.application import app as app_module
from gpumodeler.db.project_file import load_project
from gpumodeler.service import application as service

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from nsys_exports import streamed_trace  # noqa: E402
from test_timeline_reference import hand_built  # noqa: E402

pytestmark = pytest.mark.usefixtures("gpumodeler_env")

SHOWN = [service.STEP_KEYS.index(k) for k in TEXT_KEYS]


@pytest.fixture
def traced(capsys, tmp_path):
    """A project of an imported trace (every step measured: the text's short route)."""
    path = tmp_path / "p.gpm"
    assert main(["application", "import", str(streamed_trace(tmp_path / "t.sqlite", 300, seed=3)),
                 "--project", str(path)]) == 0
    capsys.readouterr()
    return path


def _both(project, app_id, lookups):
    whole = service.application_columns(project, app_id, lookups, details=False)
    shown = service.application_columns(project, app_id, lookups, details=False, shown=TEXT_KEYS)
    return whole, shown


def test_the_shown_columns_are_the_documents(traced, catalog):
    project = load_project(traced)
    (doc, columns), (shown_doc, shown) = _both(project, "app1", common.catalog_lookups(catalog))
    assert shown_doc == doc
    for at, (whole, part) in enumerate(zip(columns, shown)):
        if at in SHOWN:
            assert part == whole
        else:
            assert part is None and plain_finite_values(whole)   # (not made: plain and finite)
    rows = service.step_rows(shown)
    assert [[r[k] for k in TEXT_KEYS] for r in rows] == \
        [[r[k] for k in TEXT_KEYS] for r in service.step_rows(columns)]


def test_no_column_shown_is_every_column_made(traced, catalog):
    project = load_project(traced)
    lookups = common.catalog_lookups(catalog)
    assert service.application_columns(project, "app1", lookups, shown=()) == \
        service.application_columns(project, "app1", lookups)


def test_steps_not_all_measured_have_every_column_made(tmp_path, catalog):
    project = load_project(hand_built(tmp_path / "p.gpm"))
    (doc, columns), (shown_doc, shown) = _both(project, "every", common.catalog_lookups(catalog))
    assert shown_doc == doc and shown == columns


def _measured_everywhere(project):
    """The hand-built application of every kind of step, each step measured."""
    app = project.applications["every"]
    steps = tuple(dataclasses.replace(s, measured_s=1e-4 * (i + 1), measured_start_s=2e-4 * i)
                  for i, s in enumerate(app.steps))
    return dataclasses.replace(app, steps=steps)


def _changed(project, monkeypatch, step, changes):
    """The application of :func:`_measured_everywhere` put in ``project``, with ``changes``
    to the step ``step`` (its fields) or to its prediction as the build makes it (the
    others): the application."""
    app = _measured_everywhere(project)
    in_step = {k: v for k, v in changes.items() if k in app_module.STEP_FIELDS}
    in_prediction = {k: v for k, v in changes.items() if k not in in_step}
    app = dataclasses.replace(app, steps=tuple(
        dataclasses.replace(s, **in_step) if s.id == step else s for s in app.steps))
    project.put("applications", app)
    real_build = app_module.build

    def build(*args, **kwargs):
        built = real_build(*args, **kwargs)
        if in_prediction:
            built.predictions[step] = built.predictions[step]._replace(**in_prediction)
        return built
    monkeypatch.setattr(app_module, "build", build)
    return app


class _Text(str):
    """Text of another type."""


#: (step, what changes in its step or its prediction, whether it stays plain)
SOURCES = [
    (None, {}, True),
    ("k2", {"measured_start_s": math.nan}, False),
    ("k2", {"measured_start_s": -math.inf}, False),
    ("wait", {"measured_s": math.inf}, False),
    ("wait", {"measured_s": np.float64(1e-4)}, False),
    ("host", {"measured_s": 3}, True),                    # whole numbers are plain
    ("host", {"measured_start_s": 1.7e308}, True),        # large, and finite
    ("k1", {"kind": _Text("kernel")}, False),
    ("up1", {"alone_s": math.nan}, False),
    ("up1", {"alone_s": 1e308}, False),                   # a stretch may overflow
    ("wait", {"alone_s": np.float64(0.0)}, False),
    ("up1", {"device": np.float64(math.nan)}, False),
    ("k1", {"device": _Text("gpu1")}, False),
]


@pytest.mark.parametrize("step, changes, plain", SOURCES)
def test_a_column_is_left_out_only_when_its_sources_are_plain(tmp_path, catalog, monkeypatch,
                                                             step, changes, plain):
    project = load_project(hand_built(tmp_path / "p.gpm"))
    _changed(project, monkeypatch, step, changes)
    (doc, columns), (shown_doc, shown) = _both(project, "every", common.catalog_lookups(catalog))
    assert shown_doc == doc or (doc["measured_makespan_s"] != doc["measured_makespan_s"])
    assert all(c is not None for c in shown) is not plain
    for at in SHOWN:
        assert shown[at] == columns[at]
    # the document's walk names the same number from the columns made as from all of them
    assert _named(dict(doc, steps=service.step_rows(shown))) == \
        _named(dict(doc, steps=service.step_rows(columns)))


def _named(document):
    """The first number of ``document`` that is not finite: its name and text (NaN is not
    NaN)."""
    found = physical.first_non_finite(document)
    return found and (found[0], repr(found[1]))


@pytest.mark.parametrize("step, changes", [
    ("k2", {"measured_start_s": math.nan}), ("wait", {"measured_s": math.inf}),
    ("up1", {"alone_s": math.nan}), ("up1", {"device": np.float64(math.inf)})])
def test_a_source_that_is_not_finite_is_refused_the_same_way_by_every_output(
        capsys, tmp_path, monkeypatch, step, changes):
    path = hand_built(tmp_path / "p.gpm")
    project = load_project(path)
    app = _changed(project, monkeypatch, step, changes)
    monkeypatch.setattr(common, "read_project", lambda _path: (project, None))
    at = [s.id for s in app.steps].index(step)
    errors = set()
    for flags in ([], ["--by", "kernel"], ["--svg", str(tmp_path / "g.svg")], ["--json"]):
        code = main(["timeline", str(path), "--application", "every", *flags])
        out, err = capsys.readouterr()
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
        errors.add(err.split(": ", 1)[1])
    assert len(errors) == 1 and f"steps[{at}]." in errors.pop()
