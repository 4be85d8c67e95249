"""One parser for device fields with units (hardening): the inspector's fields and the CLI's
flags accept and refuse the same texts, with the same values (core/quantities.py)."""
import argparse

import pytest
from hypothesis import given, settings, strategies as st

from gpumodeler.cli import common
from gpumodeler.core.commands import AddConnection, AddItem
from gpumodeler.core.project import Connection, PlacedDevice, Project
from gpumodeler.ui.document import Document
from gpumodeler.ui.inspector import PropertyInspector
from gpumodeler.ui.units import QuantityError, parse_quantity

from repetitions import repetitions

GPU, HOST = "GeForce GTX 970", "Gajger GTX 970 testbed host"
PCIE = "PCIe 3.0 x16 (Gajger GTX 970 testbed)"

# GUI unit -> (the CLI flag's parser, its value in the GUI's base unit)
CLI = {"B": (common.bytes_arg, 1.0), "B/s": (common.bandwidth_arg, 1.0),
       "s": (common.seconds_arg, 1.0), "count": (common.int_arg, 1.0)}


def _cli(unit, text):
    parse, scale = CLI[unit]
    try:
        return parse(text) * scale
    except argparse.ArgumentTypeError:
        return None


def _gui(unit, text):
    try:
        return parse_quantity(text, unit)
    except QuantityError:
        return None


TEXTS = ["1.6GB", "1.6 gb", "2GiB", "512KiB", "16M", "16Mi", "2^20", "1,000,000", "1,5 GB",
         "15.8GB/s", "15.8e9", "3.97us", "3.97µs", "0.00396868ms", "4 ns", "16MMB", "1e400",
         "-1", "abc", "1.5", "12 kB", "3 TiB/s", "1_000", "5 mW", "10^-3"]


@pytest.mark.parametrize("unit", sorted(CLI))
@pytest.mark.parametrize("text", TEXTS)
def test_gui_and_cli_agree(unit, text):
    gui, cli = _gui(unit, text), _cli(unit, text)
    assert (gui is None) == (cli is None), (unit, text, gui, cli)
    if gui is not None:
        assert gui == pytest.approx(cli, rel=1e-12)


def test_clock_fields_read_units_as_the_mhz_flag_does():
    """The CLI's clock flags are in MHz, the GUI's clock fields in Hz: with a unit written
    they agree; a bare number is the field's own unit (Hz here, MHz there)."""
    for text in ("1253 MHz", "1.253GHz", "1253mhz", "1253000 kHz"):
        assert parse_quantity(text, "Hz") == pytest.approx(common.mhz_arg(text) * 1e6, rel=1e-12)
    for text in ("1253 MMHz", "7 kg", "1,5 GHz"):
        with pytest.raises(QuantityError):
            parse_quantity(text, "Hz")
        with pytest.raises(argparse.ArgumentTypeError):
            common.mhz_arg(text)


@settings(max_examples=repetitions(100, 300), deadline=None)
@given(st.text(alphabet="0123456789.,eE+-^ kKMGTPibBs/µun_", max_size=10),
       st.sampled_from(sorted(CLI)))
def test_gui_and_cli_agree_on_any_text(text, unit):
    gui, cli = _gui(unit, text), _cli(unit, text)
    if unit == "count" and cli is None and gui is not None:
        assert abs(gui) > common.MAX_WHOLE  # the CLI's only extra rule: whole numbers ≤ 2^53
        return
    assert (gui is None) == (cli is None), (unit, text, gui, cli)
    if gui is not None:
        assert gui == pytest.approx(cli, rel=1e-12)


@pytest.fixture
def inspector(qtbot, catalog):
    document = Document(Project("test"), catalog)
    document.push(AddItem("devices", PlacedDevice("gpu1", "gpu", GPU)))
    document.push(AddItem("devices", PlacedDevice("host1", "host", HOST, x=-300)))
    document.push(AddConnection(Connection("link1", PCIE, "host1", "gpu1", "pcie")))
    document.undo_stack.clear()
    widget = PropertyInspector(document)
    qtbot.addWidget(widget)
    widget.resize(600, 900)
    return widget


def _edit(inspector, field, text):
    return inspector.model.setData(inspector.value_index(field), text)


def test_inspector_reads_units_like_the_cli_and_refuses_without_change(inspector):
    doc = inspector.document
    doc.select("device", "gpu1")
    _edit(inspector, "sm_clock_hz", "1.4 GHz")
    assert doc.project.devices["gpu1"].overrides["sm_clock_hz"] == pytest.approx(1.4e9)
    doc.select("connection", "link1")
    _edit(inspector, "bandwidth_bytes_per_s", "12.5 GB/s")
    assert doc.project.connections["link1"].overrides["bandwidth_bytes_per_s"] == \
        pytest.approx(common.bandwidth_arg("12.5 GB/s"))
    count = doc.undo_stack.count()
    for text in ("12.5 GB/ss", "1,5 GB/s", "1e400 GB/s", "fast"):
        _edit(inspector, "bandwidth_bytes_per_s", text)
        assert "B/s" in inspector.message_text() or "comma" in inspector.message_text() \
            or "finite" in inspector.message_text(), text
        assert doc.project.connections["link1"].overrides["bandwidth_bytes_per_s"] == \
            pytest.approx(12.5e9)
    assert doc.undo_stack.count() == count
    _edit(inspector, "startup_htod_s", "4 µs")
    assert doc.project.connections["link1"].overrides["startup_htod_s"] == pytest.approx(4e-6)


def test_a_bare_number_in_a_clock_field_is_refused_with_the_unit_to_write():
    """"1300" typed over "1253 MHz" would be 1300 Hz: refused, naming "1300 MHz"; a written
    unit (even Hz) or a bare number in Hz that is a plausible clock is taken as it is."""
    with pytest.raises(QuantityError, match="1300.? MHz"):
        parse_quantity("1300", "Hz")
    with pytest.raises(QuantityError, match="MHz"):
        parse_quantity("99999", "Hz")
    assert parse_quantity("1300 MHz", "Hz") == 1.3e9
    assert parse_quantity("1300 Hz", "Hz") == 1300
    assert parse_quantity("1.253e9", "Hz") == 1.253e9
    assert parse_quantity("100000", "Hz") == 1e5
