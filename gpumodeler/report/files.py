"""Writing text outputs (reports, SVG charts, imported kernel graphs) atomically: a locked
temporary file in the same folder, fsynced, then renamed over the target
(:mod:`gpumodeler.db.atomic_files`, which project saves and CLI tables use too), so an
interrupted write never leaves half a file where a good one was, and the next write cleans
up what an interrupted one left."""
from __future__ import annotations

import os
from pathlib import Path

from gpumodeler.core.errors import InvalidParameter
from gpumodeler.db.atomic_files import create_temp, release, remove_stale_temps


def write_text_atomically(path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path``; a clear error when the folder is missing or not writable."""
    target = Path(path)
    shown = str(path)[:120]
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise InvalidParameter(f"cannot write {shown}: the folder {str(folder)[:120]} does not exist")
    if target.is_dir():
        raise InvalidParameter(f"cannot write {shown}: it is a folder")
    remove_stale_temps(target)
    try:
        tmp, lock = create_temp(target)
    except OSError as exc:
        raise InvalidParameter(f"cannot write {shown}: {exc.strerror or exc}") from None
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise InvalidParameter(f"cannot write {shown}: {exc.strerror or exc}") from None
    finally:
        release(lock)
    return target
