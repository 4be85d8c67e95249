"""Writing text outputs (reports, SVG charts, imported kernel graphs) atomically, with
:func:`gpumodeler.db.atomic_files.output_file` (which every output of the CLI uses): a
locked temporary file in the same folder, fsynced, then renamed over the target, so an
interrupted write never leaves half a file where a good one was, and the next write cleans
up what an interrupted one left."""
from __future__ import annotations

from pathlib import Path

from gpumodeler.db.atomic_files import write_output


def write_text_atomically(path, text: str, *, inputs=()) -> Path:
    """Write ``text`` (UTF-8) to ``path``, which must not be one of ``inputs``; an
    OutputError (an InvalidParameter) that names the file and the reason when it cannot be
    written.

    A file name that is not UTF-8 reaches Python as lone surrogates (``\udcff`` for byte
    0xff), which UTF-8 cannot encode: a report naming such a project or output shows "?"
    for them instead of failing."""
    return write_output(path, text.encode("utf-8", "replace").decode("utf-8"), inputs=inputs)
