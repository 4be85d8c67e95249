"""`gpumodeler timeline` prints the same bytes (text and ``--json``) with the fast simulation
and energy as with the plain algorithms kept in the tests (tests/core/test_timeline_fast_paths.py,
tests/core/test_energy_fast_paths.py): on an imported trace (host steps, three streams, copies
both ways) and on the four-H100 example (several GPUs, peer copies, a sync)."""
import sys
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.core.application import app as app_module

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from nsys_exports import streamed_trace  # noqa: E402
from test_energy_fast_paths import reference_energy  # noqa: E402
from test_timeline_fast_paths import reference_simulate  # noqa: E402

pytestmark = pytest.mark.usefixtures("gpumodeler_env")
ROOT = Path(__file__).resolve().parents[2]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def outputs(capsys, path):
    return run(capsys, "timeline", path), run(capsys, "timeline", path, "--json")


@pytest.mark.parametrize("source", ["imported", "four-h100"])
def test_the_output_is_the_plain_algorithms_byte_for_byte(capsys, tmp_path, monkeypatch, source):
    if source == "imported":
        path = tmp_path / "p.gpm"
        run(capsys, "application", "import", streamed_trace(tmp_path / "run.sqlite", 400, seed=3,
                                                            delays=(0, 0, 30_000)), "--project", path)
    else:
        path = ROOT / "resources" / "examples" / "four-h100-nvlink.gpm"
    fast = outputs(capsys, path)
    calls = []

    def spy(function):
        def called(*args, **kwargs):
            calls.append(function.__name__)
            return function(*args, **kwargs)
        return called

    monkeypatch.setattr(app_module, "simulate", spy(reference_simulate))
    monkeypatch.setattr(app_module, "energy", spy(reference_energy))
    plain = outputs(capsys, path)
    assert set(calls) == {"reference_simulate", "reference_energy"}  # (the plain path was taken)
    assert fast == plain
    assert '"energy_j"' in fast[1] and "host" in fast[0] + fast[1]
