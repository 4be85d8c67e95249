"""Compute capability -> architecture name, one table in core (core/architectures.py), read by
the SASS importer's choice of latency table and the GUI's latency-table check."""
from __future__ import annotations

import pytest

from gpumodeler.core.architectures import architecture_family, architecture_name
from gpumodeler.core.kernel.sass.importer import FAMILIES


@pytest.mark.parametrize("cc, name", [
    ("1.3", "Tesla"), ("2.1", "Fermi"), ("3.5", "Kepler"), ("5.2", "Maxwell"), ("6.1", "Pascal"),
    ("7.0", "Volta"), ("7.2", "Volta"), ("7.5", "Turing"), ("8.0", "Ampere"), ("8.7", "Ampere"),
    ("8.9", "Ada Lovelace"), ("9.0", "Hopper"), ("10.0", "Blackwell"), ("11.0", "Blackwell"),
    ("12.1", "Blackwell"), ("4.0", ""), ("13.0", ""), ("", ""), (None, ""), ("sm_90", ""),
    ("8", "")])
def test_names(cc, name):
    assert architecture_name(cc) == name
    assert architecture_family(cc) == (name.split()[0] if name else "")


def test_the_sass_importer_families_are_the_ones_it_had():
    before = {50: "Maxwell", 52: "Maxwell", 53: "Maxwell", 60: "Pascal", 61: "Pascal",
              62: "Pascal", 70: "Volta", 72: "Volta", 75: "Turing", 80: "Ampere", 86: "Ampere",
              87: "Ampere", 88: "Ampere", 89: "Ada", 90: "Hopper", 100: "Blackwell",
              101: "Blackwell", 103: "Blackwell", 110: "Blackwell", 120: "Blackwell",
              121: "Blackwell"}
    assert FAMILIES == before


def test_the_gui_check_names_a_compute_capability_11_gpu_blackwell():
    """Before the table moved to core, the GUI's copy did not know 11.x and said nothing when a
    Blackwell (11.0) GPU ran a kernel with another architecture's latencies."""
    from types import SimpleNamespace

    pytest.importorskip("PySide6")
    from gpumodeler.ui.launch_panel.checks import table_mismatch
    tables = {"hopper-published": SimpleNamespace(name="Hopper (published)", architecture="Hopper"),
              "blackwell-published": SimpleNamespace(name="Blackwell (published)",
                                                     architecture="Blackwell")}
    graph = SimpleNamespace(latency_table="hopper-published")
    gpu = SimpleNamespace(name="Thor", compute_capability="11.0")
    message, key = table_mismatch(graph, gpu, tables)
    assert "Thor is Blackwell" in message and key == "blackwell-published"
    assert table_mismatch(graph, SimpleNamespace(name="H100", compute_capability="9.0"), tables) is None
