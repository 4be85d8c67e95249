"""One line per test file when the tests run in several processes (``make test JOBS=2``,
pytest-xdist), as the file's last test ends: its outcomes and how long it took. Without it, a
distributed run prints only a line of dots (the files' tests interleaved, so a letter per test
says nothing of where the run is). A run in one process prints its files by itself."""
from __future__ import annotations

import time
from collections import Counter

import pytest

ORDER = ("failed", "error", "passed", "skipped", "xfailed", "xpassed")


def wanted(config) -> bool:
    """On the controller of a distributed run at the default verbosity."""
    return (not hasattr(config, "workerinput") and config.getoption("dist", "no") != "no"
            and config.getoption("verbose") == 0)


class FileProgress:
    def __init__(self, config):
        self.config = config
        self.left: Counter | None = None  # file -> its tests not finished yet
        self.outcomes: dict[str, Counter] = {}
        self.outcome: dict[str, str] = {}  # test -> its outcome so far
        self.started: dict[str, float] = {}

    def pytest_xdist_node_collection_finished(self, node, ids):
        if self.left is None:  # every worker collects the same tests
            self.left = Counter(nodeid.split("::")[0] for nodeid in ids)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_report_teststatus(self, report, config):
        outcome = yield
        result = outcome.get_result()
        if result and result[1]:  # no letter per test: the file's line says it
            outcome.force_result((result[0], "", result[2]))

    def pytest_runtest_logstart(self, nodeid, location):
        self.started.setdefault(nodeid.split("::")[0], time.monotonic())

    def pytest_runtest_logreport(self, report):
        nodeid = report.nodeid
        if report.when == "call" or report.outcome != "passed":
            outcome = report.outcome
            if report.when != "call" and outcome == "failed":
                outcome = "error"
            elif hasattr(report, "wasxfail"):
                outcome = "xfailed" if report.skipped else "xpassed"
            if self.outcome.get(nodeid) not in ("failed", "error"):
                self.outcome[nodeid] = outcome
        if report.when != "teardown" or self.left is None:
            return
        path = nodeid.split("::")[0]
        counts = self.outcomes.setdefault(path, Counter())
        counts[self.outcome.pop(nodeid, "passed")] += 1
        self.left[path] -= 1
        if self.left[path] == 0:
            seconds = time.monotonic() - self.started.get(path, time.monotonic())
            text = ", ".join(f"{counts[o]} {o}" for o in ORDER if counts[o])
            reporter = self.config.pluginmanager.get_plugin("terminalreporter")
            if reporter is not None:
                reporter.write_line(f"{path}: {text} ({seconds:.1f} s)",
                                    red=bool(counts["failed"] or counts["error"]))
