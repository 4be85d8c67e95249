"""The steps' prediction details checked where the build makes them: the text, ``--by`` and
``--svg`` then leave them out of the document's check (a fifth of a million dicts and lists
at 10^5 steps), and still refuse a number that is not finite in them, naming it.

The build's answer (``plain_details``) is compared with the check it stands for
(``finite.plain_finite_values`` over the details) on an application of every kind of step and on
awkward variants of it: a number that is not finite in each kind of detail, a numpy float,
an integer where a float is usual."""
import dataclasses
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from gpumodeler.cli import common
from gpumodeler.cli.main import main
from gpumodeler.core.application.app import build
from gpumodeler.core.finite import plain_finite, plain_finite_values
from gpumodeler.db.project_file import load_project, save_project
from gpumodeler.service import application as service

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_timeline_reference import hand_built  # noqa: E402

pytestmark = pytest.mark.usefixtures("gpumodeler_env")


def _with_step(app, step_id, **changes):
    steps = tuple(dataclasses.replace(s, **changes) if s.id == step_id else s for s in app.steps)
    return dataclasses.replace(app, steps=steps)


class _Text(str):
    """Text of another type (equal to a step's id, not plain for the document's check)."""


#: (step, changes, whether its detail stays plain and finite)
VARIANTS = [
    (None, {}, True),
    ("within", {"size": "1e308*10"}, False),             # a copy within a GPU: inf bytes
    ("within", {"size": "(1e308*10)-(1e308*10)"}, False),  # NaN bytes
    ("m1", {"measured_s": math.inf}, False),             # a measured kernel: inf time
    ("m1", {"measured_s": np.float64(3.5e-4)}, False),   # not a plain float
    ("host", {"host_s": math.nan}, False),                # host time NaN
    ("host", {"host_s": 0}, None),                        # an integer: plain, not told
    ("wait", {"after": ("k2", "up3")}, True),
    ("wait", {"after": ("k2", _Text("up3"))}, False),    # a sync waiting for text of another type
    ("host", {"after": ("wait",)}, True),
]


@pytest.mark.parametrize("step, changes, plain", VARIANTS)
def test_the_build_says_plain_only_when_the_details_are(tmp_path, catalog, step, changes, plain):
    project = load_project(hand_built(tmp_path / "p.gpm"))
    app = project.applications["every"]
    if step is not None:
        app = _with_step(app, step, **changes)
    built = build(project, app, **common.catalog_lookups(catalog))
    details = [p.detail for p in built.predictions.values()]
    checked = plain_finite_values(details)
    if built.plain_details:
        assert checked   # (never passes what the check refuses)
    if plain is not None:
        assert built.plain_details is plain and checked is plain
    # without the details made: the same answer, the same predictions but for them
    bare = build(project, app, **common.catalog_lookups(catalog), details=False)
    assert bare.plain_details is built.plain_details
    assert [p._replace(detail=None) for p in built.predictions.values()] == \
        list(bare.predictions.values())
    assert bare.activities == built.activities


@pytest.mark.parametrize("step, changes", [(None, {}), ("within", {"size": "1e308*10"})])
def test_the_document_without_details_is_the_document_but_for_them(tmp_path, catalog, step,
                                                                   changes):
    """(not made when the build tells them plain and finite; made when it cannot)"""
    project = load_project(hand_built(tmp_path / "p.gpm"))
    app = project.applications["every"]
    if step is not None:
        project.put("applications", _with_step(app, step, **changes))
    lookups = common.catalog_lookups(catalog)
    doc, columns = service.application_columns(project, "every", lookups)
    bare_doc, bare = service.application_columns(project, "every", lookups, details=False)
    at = service.STEP_KEYS.index("prediction")
    assert bare_doc == doc and bare[:at] + bare[at + 1:] == columns[:at] + columns[at + 1:]
    if step is None:
        assert set(bare[at]) == {None} and service.checked_where_made(bare[at])
    else:
        assert bare[at] == columns[at] and not service.checked_where_made(bare[at])


def test_what_steps_share_is_checked_when_made(tmp_path, catalog, monkeypatch):
    """A copy's plan (its route's hops) and an imported step's scaling, each made once for
    the steps that share it: a number that is not finite there makes the build say so."""
    from gpumodeler.core import resolve
    from gpumodeler.core.application import app as app_module
    project = load_project(hand_built(tmp_path / "p.gpm"))
    app = project.applications["every"]
    # (without the copy within a GPU, whose detail is checked whole: the kernel's scaling)
    app = dataclasses.replace(app, steps=tuple(s for s in app.steps if s.id != "within"))
    lookups = common.catalog_lookups(catalog)
    real_link, real_scaling = resolve.resolve_link, app_module._scaling

    def nan_startup(*args, **kwargs):
        return dataclasses.replace(real_link(*args, **kwargs), startup_htod_s=math.nan)

    def nan_scale(*args, **kwargs):
        factor, name, how = real_scaling(*args, **kwargs)
        return factor, name, dict(how, scale=math.nan)
    for target, name, broken in ((resolve, "resolve_link", nan_startup),
                                 (app_module, "_scaling", nan_scale)):
        with monkeypatch.context() as m:
            m.setattr(target, name, broken)
            built = build(project, app, **lookups)
        assert not built.plain_details
        assert not plain_finite_values([p.detail for p in built.predictions.values()])
    assert build(project, app, **lookups).plain_details


def test_plain_finite_reads_every_level():
    assert plain_finite({"a": [1.0, ("x", None, True, 3)], "b": {"c": 2.5}})
    for bad in (math.inf, -math.inf, math.nan, np.float64(1.0), 1j, b"x", {1.0}):
        assert not plain_finite({"a": [1.0, {"b": bad}]})
    cycle: list = [1.0]
    cycle.append(cycle)
    assert not plain_finite(cycle)


def test_a_column_checked_where_made_is_so_only_with_the_objects_it_was_made_with():
    values = [{"a": 1.0}, {"b": 2.0}]
    column = service.CheckedWhereMade(values)
    column.made = tuple(values)
    assert service.checked_where_made(column)
    for change in (lambda c: c.__setitem__(0, {"a": math.inf}), lambda c: c.append({}),
                   lambda c: c.pop()):
        broken = service.CheckedWhereMade(values)
        broken.made = tuple(values)
        change(broken)
        assert not service.checked_where_made(broken)
    assert not service.checked_where_made(list(values))


@pytest.mark.parametrize("flags", [[], ["--by", "kernel"], ["--json"]])
def test_a_detail_that_is_not_finite_is_refused_naming_it(capsys, tmp_path, flags):
    """(a copy within a GPU whose size is infinite: its detail's bytes; the time of that copy
    is its measured time, so nothing else in the document says so)"""
    path = hand_built(tmp_path / "p.gpm")
    project = load_project(path)
    app = _with_step(project.applications["every"], "within", size="1e308*10")
    project.put("applications", app)
    save_project(project, path)
    code = main(["timeline", str(path), "--application", "every", *flags])
    out, err = capsys.readouterr()
    at = [s.id for s in app.steps].index("within")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert f"steps[{at}].prediction.bytes" in err


def test_an_imported_trace_has_its_details_checked_where_made(capsys, tmp_path, catalog):
    from nsys_exports import streamed_trace
    path = tmp_path / "p.gpm"
    assert main(["application", "import", str(streamed_trace(tmp_path / "t.sqlite", 300, seed=3)),
                 "--project", str(path)]) == 0
    capsys.readouterr()
    project = load_project(path)
    _doc, columns = service.application_columns(project, "app1", common.catalog_lookups(catalog))
    details = columns[service.STEP_KEYS.index("prediction")]
    assert service.checked_where_made(details) and plain_finite_values(list(details))
