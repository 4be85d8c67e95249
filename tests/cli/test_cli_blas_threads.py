"""The CLI runs numpy's OpenBLAS with one thread unless the user chose otherwise: its worker
threads spin for about 0.1 s of CPU after numpy is imported, in every command (speed targets)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = ("import sys, os; import gpumodeler.cli.main; assert 'numpy' not in sys.modules; "
         "import numpy; print(os.environ['OPENBLAS_NUM_THREADS'], "
         "len(os.listdir('/proc/self/task')))")


def _probe(env_value: str | None) -> tuple[str, int]:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if env_value is not None:
        env["OPENBLAS_NUM_THREADS"] = env_value
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    return out[0], int(out[1])


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_one_blas_thread_unless_the_user_sets_it():
    value, threads = _probe(None)
    assert value == "1" and threads == 1
    value, threads = _probe("2")  # the user's choice is kept (two threads with 2 cores)
    assert value == "2" and threads == min(2, os.cpu_count() or 1)
