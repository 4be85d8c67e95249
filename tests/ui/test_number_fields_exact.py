"""Number fields take the one grammar the README documents (1000000, 1e6, 1,000,000, 16M,
16Mi, 2^20) and keep every digit: the Application tab's variables, copy sizes, host power
and share, the inspector's count, and the launch panel's fields; messages name the field,
never a command-line flag."""
import pytest

from gpumodeler.core.commands import AddItem
from gpumodeler.core.project import PlacedDevice, Project
from gpumodeler.ui.application.panel import ApplicationPanel
from gpumodeler.ui.document import Document
from gpumodeler.ui.inspector.inspector import PropertyInspector
from gpumodeler.ui.launch_panel.panel import LaunchPanel
from gpumodeler.ui.units import number_text, parse_exact_number

pytestmark = pytest.mark.usefixtures("private_settings")


@pytest.fixture
def panel(qtbot, catalog, example_project):
    p = ApplicationPanel(Document(example_project(), catalog))
    qtbot.addWidget(p)
    p.simulate()
    return p


def _type(field, text):
    field.setText(text)
    field.editingFinished.emit()


def _app(panel):
    return panel.document.project.applications["app1"]


@pytest.mark.parametrize("text, expected", [
    ("N=16777216", {"N": 16777216}),
    ("N=16Mi", {"N": 2 ** 24}),
    ("N=16M, a=2^7", {"N": 16_000_000, "a": 128}),
    ("N=1,000,000, a=1e6", {"N": 1_000_000, "a": 1_000_000}),
    ("N = 12345678901234567891", {"N": 12345678901234567891}),
    ("N=0.7037871234", {"N": 0.7037871234}),
])
def test_variables_take_the_grammar_and_keep_every_digit(panel, text, expected):
    doc = panel.document
    _type(panel.variables_edit, text)
    assert panel.message.text() == ""
    variables = _app(panel).variables
    assert variables == expected
    assert [type(v) for v in variables.values()] == [type(v) for v in expected.values()]
    shown = panel.variables_edit.text()
    assert shown == ", ".join(f"{k}={number_text(v)}" for k, v in expected.items())
    assert "e+" not in shown
    depth = doc.undo_stack.count()
    _type(panel.variables_edit, shown)              # finishing the field again changes nothing
    assert _app(panel).variables == expected and doc.undo_stack.count() == depth
    doc.undo_stack.undo()
    assert _app(panel).variables == {"N": 400_000_000}


def test_the_timeline_uses_the_exact_value(panel):
    _type(panel.variables_edit, "N=16Mi")
    panel.simulate()
    copy = next(s for s in panel.result["steps"] if s["id"] == "copy_x")   # size 4*N
    assert copy["prediction"]["bytes"] == 4 * 2 ** 24 and panel.error == ""


@pytest.mark.parametrize("text, words", [
    ("N=16Q", ["Variables", "N", "16Q"]),
    ("N", ["Variables", "name=value"]),
    ("N=1,5", ["Variables", "N", "comma"]),
    ("N=1, N=2", ["Variables", "N", "twice"]),
])
def test_bad_variables_are_refused_naming_the_field(panel, text, words):
    doc = panel.document
    before = dict(_app(panel).variables)
    _type(panel.variables_edit, text)
    message = panel.message.text()
    assert all(w in message for w in words), message
    assert "--" not in message
    assert _app(panel).variables == before and doc.undo_stack.count() == 0


def test_a_missing_variable_is_asked_for_in_the_variables_field(panel):
    _type(panel.variables_edit, "")
    assert _app(panel).variables == {}
    panel.simulate()
    assert "N" in panel.error and "Variables field" in panel.error
    assert "--set" not in panel.error and "--set" not in panel.summary.text()


def test_copy_size_host_power_and_share(panel):
    doc = panel.document
    assert panel.add_step("copy")
    _type(panel.size_edit, "16Mi")
    assert _app(panel).steps[-1].size == "16777216"
    _type(panel.size_edit, "1,000,000")
    assert _app(panel).steps[-1].size == "1000000"
    _type(panel.size_edit, "4*N")                     # an expression stays as typed
    assert _app(panel).steps[-1].size == "4*N"
    _type(panel.host_power, "1.5 kW")
    assert _app(panel).host_power_w == 1500
    _type(panel.host_power, "lots")
    assert "Host power" in panel.message.text() and _app(panel).host_power_w == 1500
    panel.step_id = "saxpy2"
    panel._fill()
    depth = doc.undo_stack.count()
    _type(panel.fraction_edit, "1/2")
    assert "Share" in panel.message.text() and doc.undo_stack.count() == depth


def test_the_inspector_count_takes_the_grammar(qtbot, catalog):
    doc = Document(Project("t"), catalog)
    doc.push(AddItem("devices", PlacedDevice("gpu1", "gpu", "GeForce GTX 970")))
    inspector = PropertyInspector(doc)
    qtbot.addWidget(inspector)
    doc.select("device", "gpu1")
    assert inspector.set_value("count", "2^3")
    assert doc.project.devices["gpu1"].count == 8
    assert not inspector.set_value("count", "2.5")
    assert "whole number" in inspector.message_text()
    assert doc.project.devices["gpu1"].count == 8


def test_the_launch_panels_fields_keep_every_digit(qtbot, catalog, example_project):
    doc = Document(example_project(), catalog)
    panel = LaunchPanel(doc)
    qtbot.addWidget(panel)
    lam = panel.form.widgets["lam"]
    _type(lam, "0.70378712345")
    assert panel.launch.lam == 0.70378712345
    panel.refresh()
    assert lam.text() == "0.70378712345"
    depth = doc.undo_stack.count()
    lam.editingFinished.emit()                       # committing the shown text again: no edit
    assert panel.launch.lam == 0.70378712345 and doc.undo_stack.count() == depth


@pytest.mark.parametrize("text, value", [
    ("16777216", 16777216), ("16Mi", 16777216), ("1,000,000", 10 ** 6), ("1e23", 10 ** 23),
    ("2^64", 2 ** 64), ("16M", 16 * 10 ** 6), ("0.1", 0.1), ("2^-1", 0.5),
])
def test_exact_numbers_read_back_as_shown(text, value):
    got = parse_exact_number(text)
    assert got == value and type(got) is type(value)
    assert parse_exact_number(number_text(got)) == got
