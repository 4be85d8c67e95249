"""architecture(): a text already looked up is found again without parsing (a batch names a
few compute capabilities many times); errors are raised every time, and the table of texts
stays bounded whatever the input."""
import pytest

import gpumodeler.core.occupancy.compute_capability as compute_capability
from gpumodeler.core.errors import UnsupportedArchitecture
from gpumodeler.core.occupancy.compute_capability import ARCHITECTURES, architecture


def test_the_same_limits_for_every_spelling(monkeypatch):
    monkeypatch.setattr(compute_capability, "_BY_TEXT", {})
    for text in ("8.6", "sm_86", " 8.6 ", "SM86", "8.6"):
        assert architecture(text) is ARCHITECTURES["8.6"]
    assert set(compute_capability._BY_TEXT) == {"8.6", "sm_86", " 8.6 ", "SM86"}
    assert architecture((8, 6)) is architecture(8.6) is ARCHITECTURES["8.6"]


def test_unknown_ones_raise_every_time(monkeypatch):
    monkeypatch.setattr(compute_capability, "_BY_TEXT", {})
    for _ in range(2):
        with pytest.raises(UnsupportedArchitecture, match="9.9 is not supported"):
            architecture("9.9")
        with pytest.raises(UnsupportedArchitecture, match="not of the form"):
            architecture("banana")
    assert compute_capability._BY_TEXT == {}


def test_the_table_is_bounded(monkeypatch):
    monkeypatch.setattr(compute_capability, "_BY_TEXT", {})
    monkeypatch.setattr(compute_capability, "_BY_TEXT_SIZE", 5)
    for k in range(20):
        assert architecture(" " * k + "8.0") is ARCHITECTURES["8.0"]
    assert len(compute_capability._BY_TEXT) == 5
