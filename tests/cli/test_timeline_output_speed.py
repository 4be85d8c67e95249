"""`timeline --json` of a trace-scale application, written fast: the same bytes as the
standard library's indented encoder writes, the same refusal of a number that is not finite
(now found while the document is written), and the cyclic collector back on afterwards."""
import gc
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from gpumodeler.cli import common
from gpumodeler.cli.main import main
from gpumodeler.core.errors import UnphysicalResult
from gpumodeler.db.catalog import Catalog
from gpumodeler.db.project_file import load_project
from gpumodeler.service import application as service

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from nsys_exports import streamed_trace  # noqa: E402
from repetitions import repetitions  # noqa: E402

pytestmark = pytest.mark.usefixtures("gpumodeler_env")


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def mid_size_trace(path: Path, n: int = 600, seed: int = 5) -> Path:
    """``n`` kernels and copies on three streams of one GPU, some after a host delay; kernel
    names with quotes, commas and brackets (the characters the writer must tell apart
    inside and outside strings)."""
    names = ['k"quoted"<float>(float*, int)', "void f<{1, 2}>(int[4])", "g\\h(é)", "plain"]
    return streamed_trace(path, n, seed=seed, delays=(0, 0, 30_000),
                          kernel_name=lambda rng: rng.choice(names))


@pytest.fixture
def project(capsys, tmp_path):
    path = tmp_path / "p.gpm"
    code, _out, err = run(capsys, "application", "import",
                          mid_size_trace(tmp_path / "run.sqlite"), "--project", path)
    assert code == 0, err
    return path


def stdlib_document(path: Path) -> dict:
    """The ``timeline --json`` document computed directly from the service."""
    project = load_project(path)
    with Catalog() as catalog:
        return service.run_application(project, service.pick_application(project, None),
                                       common.catalog_lookups(catalog))


def test_the_json_is_the_standard_librarys_text_byte_for_byte(capsys, project):
    code, out, err = run(capsys, "timeline", project, "--json")
    assert code == 0, err
    want = json.dumps(stdlib_document(project), indent=2, ensure_ascii=False,
                      default=common._json_default) + "\n"
    assert out == want
    assert len(json.loads(out)["steps"]) >= 600
    code, out, err = run(capsys, "timeline", project, "--json", "--by", "kernel")
    assert code == 0, err
    groups = json.loads(out)["groups"]
    assert {g["kernel"] for g in groups} >= {'k"quoted"<float>(float*, int)', "g\\h(é)"}
    assert out == json.dumps(json.loads(out), indent=2, ensure_ascii=False) + "\n"


def test_the_collector_is_back_on_after_the_command(capsys, project):
    assert gc.isenabled()
    assert run(capsys, "timeline", project, "--json")[0] == 0
    assert gc.isenabled()
    gc.disable()
    try:   # (and stays off for a caller that had turned it off)
        assert run(capsys, "timeline", project)[0] == 0
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("bad", [math.inf, math.nan])
@pytest.mark.parametrize("flags", [["--json"], [], ["--json", "--by", "stream"]])
def test_a_number_that_is_not_finite_is_refused_naming_it(capsys, monkeypatch, project, bad,
                                                          flags):
    real = service.application_columns

    def broken(*args, **kwargs):   # (what the command computes its document from)
        # (every column made, as when the text's sources are not plain: a number put in a
        # column the text does not print is found; test_timeline_text_shown breaks the
        # sources of the columns the text leaves out)
        kwargs.pop("shown", None)
        doc, columns = real(*args, **kwargs)
        columns[service.STEP_KEYS.index("alone_s")][3] = bad
        return doc, columns
    monkeypatch.setattr(service, "application_columns", broken)
    code, out, err = run(capsys, "timeline", project, *flags)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "steps[3].alone_s is not a finite number" in err
    assert ("undefined" if bad != bad else "overflowed") in err


def test_print_json_refuses_as_require_finite_does(capsys):
    doc = {"a": [1.0, {"b": float("-inf")}], "c": "x"}
    with pytest.raises(UnphysicalResult) as got:
        common.print_json(doc)
    with pytest.raises(UnphysicalResult) as want:
        common.require_finite(doc)
    assert str(got.value) == str(want.value) and "a[1].b" in str(got.value)
    assert capsys.readouterr().out == ""
    common.print_json({"a": 1.5, "b": [float("nan")]}, checked=True)   # the caller's word
    assert capsys.readouterr().out == json.dumps({"a": 1.5, "b": [math.nan]}, indent=2) + "\n"


def test_the_document_is_built_with_the_collector_paused(monkeypatch, project):
    """(its full passes over a big document held the GIL for tenths of a second: the GUI
    thread waited while a worker built it)"""
    from gpumodeler.core.application import app as core_app
    seen = []
    real = core_app.run

    def watched(*args, **kwargs):
        out = real(*args, **kwargs)
        seen.append(gc.isenabled())   # after core's own pause has ended
        return out
    monkeypatch.setattr(core_app, "run", watched)
    assert gc.isenabled()
    stdlib_document(project)
    assert seen == [False] and gc.isenabled()


def core_refusal(doc):
    from gpumodeler.core import physical
    try:
        physical.require_finite(doc, "r")
    except UnphysicalResult as exc:
        return str(exc)
    return None


def cli_refusal(doc):
    try:
        common.require_finite(doc, "r")
    except UnphysicalResult as exc:
        return str(exc)
    return None


values = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3),
                   st.floats(allow_nan=True, allow_infinity=True),
                   st.floats(-1e308, 1e308).map(lambda v: v * 10),   # sums that overflow
                   st.floats(-9, 9).map(np.float64), st.complex_numbers(max_magnitude=5))
documents = st.recursive(values, lambda children: st.one_of(
    st.lists(children, max_size=4), st.lists(children, max_size=3).map(tuple),
    st.dictionaries(st.text(max_size=3), children, max_size=4),
    st.lists(st.floats(allow_nan=True), max_size=3).map(np.array)), max_leaves=20)


@settings(max_examples=repetitions(100, 400), deadline=None)
@given(documents)
def test_require_finite_refuses_as_core_does(doc):
    assert cli_refusal(doc) == core_refusal(doc)


def test_require_finite_with_shared_values_a_cycle_and_overflowing_sums():
    shared = {"x": 1.0}
    assert cli_refusal({"a": shared, "b": [shared, math.inf]}) == \
        core_refusal({"a": shared, "b": [shared, math.inf]})
    assert cli_refusal([1e308, 1e308, 2.0]) is None            # finite values, an infinite sum
    assert "r[2]" in cli_refusal([1e308, 1e308, math.nan])
    assert cli_refusal({"k": [1.0, (2.0, "x", None, True, 3)]}) is None


@settings(max_examples=repetitions(100, 400), deadline=None)
@given(documents)
def test_the_column_check_passes_only_what_require_finite_passes(doc):
    """(timeline's text, --by and --svg check the document's columns before walking it:
    whatever that check passes, require_finite passes too; whatever it refuses is refused
    by it or passed, once walked, by require_finite)"""
    from gpumodeler.core.finite import plain_finite_values
    if plain_finite_values([doc]):
        assert cli_refusal(doc) is None


def test_the_column_check_on_nested_columns_and_a_cycle():
    from gpumodeler.core.finite import plain_finite_values
    column = [{"a": 1.0, "r": [{"x": 2.0}]}, {"b": "t"}, {"a": 3.0, "r": []}] * 100
    assert plain_finite_values(column)
    column[150] = {"a": 3.0, "r": [{"x": math.inf}]}
    assert not plain_finite_values(column)
    assert not plain_finite_values([None, 1, (math.nan,)])
    assert not plain_finite_values([np.float64(1.0)])   # (not plain: the walk decides)
    cycle: list = [1.0]
    cycle.append(cycle)
    assert not plain_finite_values([cycle])


def _break_a_route(doc, columns, bad):
    """(a copy's route, nested two levels inside its step's prediction)"""
    kinds = columns[service.STEP_KEYS.index("kind")]
    i = kinds.index("copy")
    prediction = columns[service.STEP_KEYS.index("prediction")][i]
    columns[service.STEP_KEYS.index("prediction")][i] = dict(
        prediction, route=[dict(prediction["route"][0], **{"lambda": bad})])
    return f"steps[{i}].prediction.route[0].lambda is not a finite number"


def _break_a_top_level_value(doc, columns, bad):
    key = next(iter(doc["busy_fraction"]))
    doc["busy_fraction"] = dict(doc["busy_fraction"], **{key: bad})
    return f"busy_fraction.{key} is not a finite number"


def _break_a_step_column(doc, columns, bad):
    columns[service.STEP_KEYS.index("measured_end_s")][-1] = bad
    return f"steps[{len(columns[0]) - 1}].measured_end_s is not a finite number"


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
@pytest.mark.parametrize("where", [_break_a_route, _break_a_top_level_value,
                                   _break_a_step_column])
@pytest.mark.parametrize("flags", [[], ["--svg"], ["--by", "kernel"], ["--json"]])
def test_a_number_that_is_not_finite_anywhere_is_refused_naming_it(
        capsys, monkeypatch, tmp_path, project, bad, where, flags):
    """(the text, the chart and --by check the columns at once before anything is written;
    --json while writing: the same one-line refusal naming the same number)"""
    real = service.application_columns
    said = []

    def broken(*args, **kwargs):
        if where is _break_a_route:
            # (the details made for every output, as they are when the build cannot tell
            # them plain and finite: a number put there is still found)
            kwargs["details"] = True
        kwargs.pop("shown", None)   # (every column made: see above)
        doc, columns = real(*args, **kwargs)
        said.append(where(doc, columns, bad))
        return doc, columns
    monkeypatch.setattr(service, "application_columns", broken)
    svg = tmp_path / "t.svg"
    code, out, err = run(capsys, "timeline", project, *flags, *([svg] if "--svg" in flags else []))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert said[0] in err
    assert ("undefined" if bad != bad else "overflowed") in err
    assert not svg.exists()


def test_the_column_check_reads_dicts_of_any_keys():
    from gpumodeler.core.finite import plain_finite_values
    column = [{"a": 1.0, "b": "x"}, {"c": [1.0, {"d": 2.0}]}, {"a": 1, "e": None}, {}] * 50
    assert plain_finite_values(column)
    for bad in (math.inf, -math.inf, math.nan):
        for broken in ({"a": bad, "b": "x"}, {"c": [1.0, {"d": bad}]}, {"e": (bad,)}):
            assert not plain_finite_values(column[:77] + [broken] + column[77:])
    cycle: dict = {"a": 1.0}
    cycle["b"] = [cycle]
    assert not plain_finite_values([cycle])
    assert not plain_finite_values([{"a": np.float64(1.0)}])
    assert plain_finite_values([1e308, 1e308]) is False   # (a sum that overflows: the walk decides)


@pytest.mark.parametrize("flags", [[], ["--by", "stream"]])
def test_a_finite_document_is_passed_without_the_walk(capsys, monkeypatch, project, flags):
    """(the walk is only there to name a number that is not finite: a document of finite
    numbers is passed by the column check alone)"""
    from gpumodeler.cli import cmd_timeline
    from gpumodeler.core import finite
    walked = []
    monkeypatch.setattr(common, "require_finite", lambda *a, **k: walked.append(a))
    checked = []
    real = finite.plain_finite_values
    monkeypatch.setattr(finite, "plain_finite_values", lambda v: checked.append(v) or real(v))
    assert run(capsys, "timeline", project, *flags)[0] == 0
    # (every column but the predictions' details, which the build checked as it made them;
    # the text: the columns it prints, the others not made, their sources plain)
    shown = cmd_timeline.TEXT_KEYS if not flags else service.STEP_KEYS[1:]
    assert walked == [] and len(checked) == 1 + len(shown)


def test_the_column_check_reads_every_block():
    from gpumodeler.core import finite
    n = 3 * finite.BLOCK + 5
    column = [{"p": {"route": [{"x": 1.0}]}, "t": float(i)} for i in range(n)]
    assert finite.plain_finite_values(column) and finite.plain_finite_values([]) and \
        finite.plain_finite_values(column[:1])
    for i in (0, finite.BLOCK - 1, finite.BLOCK, 2 * finite.BLOCK + 7, n - 1):
        for bad in ({"p": {"route": [{"x": math.nan}]}}, {"t": -math.inf}):
            assert not finite.plain_finite_values(column[:i] + [bad] + column[i + 1:])
