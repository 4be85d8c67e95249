"""`measure import` of an Nsight Compute file, now read as a stream, writes the bytes it
wrote when the whole file was read first (the reference reader of tests/core/ncu_whole_file
put in the streaming reader's place), text and --json, with the first records written
before the rest are read or not."""
import sys
from pathlib import Path

import pytest

from gpumodeler.cli import measure_stream
from gpumodeler.cli.main import main
from gpumodeler.core.measurements import ncu

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))

from ncu_whole_file import parse as whole_parse  # noqa: E402
from test_measurements_ncu_stream import CONTENTS, details_page  # noqa: E402


def _whole_stream(lines, source, result):
    """The records as the reader that read the whole file gave them."""
    whole = whole_parse("\n".join(lines) + "\n", source)
    result.noise_lines = whole.noise_lines
    yield from whole.records


def _run(capsys, path, extra):
    code = main(["measure", "import", str(path), *extra])
    out, err = capsys.readouterr()
    return code, out, err


#: a details page whose last row is cut: the records of the launches before the last
#: HELD_LAUNCHES are due before it is read
LATE = ncu.HELD_LAUNCHES + 20
CASES = dict(CONTENTS, **{"late error": "\n".join(details_page(LATE, 4).splitlines()[:-1])
                          + f'\n"{LATE}","5188"\n'})


@pytest.mark.parametrize("head", [2000, 3])
@pytest.mark.parametrize("name", list(CASES))
def test_the_output_is_the_whole_file_reader_s(capsys, monkeypatch, tmp_path, name, head):
    monkeypatch.setattr(measure_stream, "HEAD", head)
    monkeypatch.setattr(measure_stream, "WRITE_LINES", 2)
    path = tmp_path / "n.csv"
    path.write_text(CASES[name], encoding="utf-8")
    for extra in ([], ["--json"], ["--format", "ncu"]):
        streamed = _run(capsys, path, extra)
        with monkeypatch.context() as m:
            m.setattr(ncu, "stream", _whole_stream)
            whole = _run(capsys, path, extra)
        if name == "late error" and head < LATE - ncu.HELD_LAUNCHES:
            # records before the bad row were written before it was read, then the same
            # error line as the whole file's
            assert streamed[0] == whole[0] == 2 and streamed[2] == whole[2]
            assert whole[1] == "" and streamed[1].count("\n") >= head
        else:
            assert streamed == whole
            assert streamed[0] == (2 if name == "late error" else 0)
