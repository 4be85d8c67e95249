"""``gpumodeler --verbose COMMAND ...``: the package's log on stderr at DEBUG for one
command, and the traceback of an unexpected error (without it, an unexpected error is one
line). Loaded only when the flag is given, so a plain command line does not import logging."""
from __future__ import annotations

import contextlib
import logging
import platform
import shlex
import sys
import time

#: the package's logger: every module's ``logging.getLogger(__name__)`` is under it
LOGGER = "gpumodeler"
log = logging.getLogger("gpumodeler.cli")


def requested(argv: list[str]) -> bool:
    """Whether ``--verbose`` comes before the command (a top-level option)."""
    for word in argv:
        if word == "--verbose":
            return True
        if word == "--" or not word.startswith("-"):
            return False
    return False


@contextlib.contextmanager
def logging_to_stderr(argv: list[str]):
    """The ``gpumodeler`` logger at DEBUG on the stderr of the moment while the command
    runs; the handler and level as they were afterwards."""
    from gpumodeler import __version__
    logger = logging.getLogger(LOGGER)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("gpumodeler: %(levelname)s %(name)s: %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    start = time.perf_counter()
    log.debug("gpumodeler %s, Python %s, %s", __version__, platform.python_version(),
              platform.platform())
    log.debug("command line: gpumodeler %s", shlex.join(argv))
    try:
        yield logger
    finally:
        log.debug("finished in %.3f s", time.perf_counter() - start)
        logger.removeHandler(handler)
        logger.setLevel(level)


def traceback_of(command: str, expected: bool) -> None:
    """In an ``except`` block of a verbose run: the exception being handled on stderr with
    its traceback (at DEBUG for bad input, whose one line says enough; at ERROR for a bug)."""
    level = logging.DEBUG if expected else logging.ERROR
    what = "refused the input" if expected else "failed unexpectedly"
    log.log(level, "gpumodeler %s %s", command, what, exc_info=True)
