"""Writing report outputs: atomically (a temporary file in the same folder, then replace),
so an interrupted write never leaves half a file where a good one was."""
from __future__ import annotations

import os
from pathlib import Path
import tempfile

from gpumodeler.core.errors import InvalidParameter


def write_text_atomically(path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path``; a clear error when the folder is missing or not writable."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise InvalidParameter(f"cannot write {str(path)[:120]}: the folder {str(folder)[:120]} does not exist")
    if target.is_dir():
        raise InvalidParameter(f"cannot write {str(path)[:120]}: it is a folder")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:40]}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise InvalidParameter(f"cannot write {str(path)[:120]}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, target)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise InvalidParameter(f"cannot write {str(path)[:120]}: {exc.strerror}") from None
    return target
