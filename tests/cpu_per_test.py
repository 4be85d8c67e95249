"""A pytest plugin measuring the CPU time of each test, child processes included.

Registered by tests/conftest.py when CPU_PER_TEST_OUT names a file
(``CPU_PER_TEST_OUT=/tmp/cpu.txt make test``). Each test's user + sys time (this process
and the children it waited for) from the start of its setup to the end of its teardown; at the end
of the session, one "seconds nodeid" line per test, largest first, to the file
CPU_PER_TEST_OUT names (in a run over several processes, that name and the worker's:
``.gw0``, ``.gw1``). The sum of the lines is the tests' share of the run; the rest is
start-up and collection.
"""
import os
import resource

_started: dict[str, float] = {}
_spent: dict[str, float] = {}


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def pytest_runtest_protocol(item, nextitem):
    _started[item.nodeid] = _cpu_seconds()


def pytest_runtest_logfinish(nodeid, location):
    start = _started.pop(nodeid, None)
    if start is not None:
        _spent[nodeid] = _spent.get(nodeid, 0.0) + _cpu_seconds() - start


def pytest_sessionfinish(session, exitstatus):
    if not _spent:
        return
    path = os.environ["CPU_PER_TEST_OUT"]
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:  # make test JOBS=2: a file per process (CPU_PER_TEST_OUT.gw0, .gw1, ...)
        path = f"{path}.{worker}"
    with open(path, "w", encoding="utf-8") as out:
        for nodeid, seconds in sorted(_spent.items(), key=lambda kv: -kv[1]):
            out.write(f"{seconds:.3f} {nodeid}\n")
