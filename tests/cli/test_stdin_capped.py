"""Standard input is read like an input file: at most MAX_INPUT_BYTES, so an endless input
(``< /dev/zero``) ends with exit status 2 and one line instead of filling the memory."""
import io
import sys

import pytest

from gpumodeler.cli import common
from gpumodeler.cli.main import main


@pytest.fixture
def small_cap(monkeypatch):
    monkeypatch.setattr(common, "MAX_INPUT_BYTES", 1000)


@pytest.mark.parametrize("argv", [["measure", "import", "-"],
                                  ["graph", "-"]])
def test_too_much_standard_input_is_one_line(small_cap, monkeypatch, capsys, argv):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\0" * 5000)))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "more than" in err and "Traceback" not in err


def test_standard_input_within_the_cap_is_read(small_cap, monkeypatch, capsys):
    text = "Start,Duration,Size,Name\nms,us,KB,\n1,2.5,4,[CUDA memcpy HtoD]\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    code = main(["measure", "import", "-", "--format", "nvprof"])
    out, err = capsys.readouterr()
    assert code in (0, 2) and "more than" not in err
