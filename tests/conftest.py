"""Shared fixtures: the device database built from resources/, an environment that keeps
tests away from the user's own databases and settings, the bundled example project.

Nothing here imports Qt (or the package) when the file is imported: the fixtures import
what they need when they run.
"""
import json
import os
from pathlib import Path

import pytest

# Before anything imports Qt: the suite runs without a display (CI, servers).
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# Property and fuzz tests explore the same examples on every run in CI (a failure there is
# reproducible, not luck); locally they draw new examples each time (HYPOTHESIS_PROFILE=dev).
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("dev", print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm"
SAXPY2 = ROOT / "resources" / "kernels" / "saxpy2-maxwell.json"
EXAMPLE_LINK = "PCIe 3.0 x16 (Gajger GTX 970 testbed)"


def pytest_configure(config):
    """In a run over several processes (make test JOBS=2), a line per test file as it ends
    (file_progress.py); the count of randomised tests' repetitions (repetitions.py); with
    CPU_PER_TEST_OUT set, each test's CPU time (cpu_per_test.py)."""
    import file_progress
    import repetitions
    # a -m naming slow (make test-slow) runs every randomised test at its full count
    os.environ[repetitions.FULL] = "1" if "slow" in (config.getoption("markexpr") or "") else "0"
    if os.environ.get("CPU_PER_TEST_OUT"):  # the CPU time of each test (cpu_per_test.py)
        import cpu_per_test
        config.pluginmanager.register(cpu_per_test, "cpu-per-test")
    if file_progress.wanted(config):
        config.pluginmanager.register(file_progress.FileProgress(config), "file-progress")


def pytest_collection_finish(session):
    """The modules, fixtures and test items collected live as long as the run: moved out of
    the garbage collector's reach (gc.freeze), so that its full passes during the tests do
    not walk them again each time."""
    import gc
    gc.collect()
    gc.freeze()


def pytest_collection_modifyitems(config, items):
    """Tests marked ``slow`` (benchmarks, inputs of benchmark size) are skipped unless the
    run selects them: ``-m slow`` (make test-slow) or any -m expression naming them."""
    if "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow (make test-slow)")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def devices_db(tmp_path_factory) -> Path:
    """The device database built from resources/devices, once a session (whatever
    devices.db is committed)."""
    from gpumodeler.db.build_devices import build
    out = tmp_path_factory.mktemp("devices") / "devices.db"
    build(ROOT / "resources" / "devices", out)
    return out


@pytest.fixture
def gpumodeler_env(devices_db, tmp_path, monkeypatch) -> Path:
    """The application reads the built device database, and a user database, GUI
    settings and log folder of this test's own (never the user's real ones). Returns the user database."""
    user_db = tmp_path / "user-home" / "user-devices.db"
    monkeypatch.setenv("GPUMODELER_DEVICES_DB", str(devices_db))
    monkeypatch.setenv("GPUMODELER_USER_DB", str(user_db))
    monkeypatch.setenv("GPUMODELER_SETTINGS_DIR", str(tmp_path / "settings"))
    monkeypatch.setenv("GPUMODELER_LOG_DIR", str(tmp_path / "logs"))
    return user_db


@pytest.fixture
def catalog(gpumodeler_env, devices_db):
    """The device catalog over the built database and this test's user database."""
    from gpumodeler.db.catalog import Catalog
    cat = Catalog(user_db=gpumodeler_env, shipped_db=devices_db)
    yield cat
    cat.close()


def _example_project():
    """The bundled example (Gajger's GTX 970 testbed, saxpy2, Fig. 5.24), or the same built
    in code where the file is not there."""
    if EXAMPLE.exists():
        from gpumodeler.db.project_file import load_project
        return load_project(EXAMPLE)
    from gpumodeler.core.commands import AddConnection, AddItem, AddKernel, UndoStack
    from gpumodeler.core.kernel.graph import from_dict
    from gpumodeler.core.project import Connection, LaunchConfig, PlacedDevice, Project, Transfer
    p = Project("saxpy2 on GTX 970")
    s = UndoStack(p)
    s.push(AddItem("devices", PlacedDevice("gpu1", "gpu", "GeForce GTX 970", x=360)))
    s.push(AddItem("devices", PlacedDevice("host1", "host", "Gajger GTX 970 testbed host")))
    s.push(AddConnection(Connection("link1", EXAMPLE_LINK, "host1", "gpu1", "pcie")))
    s.push(AddKernel("saxpy2", from_dict(json.loads(SAXPY2.read_text()))))
    s.push(AddItem("launches", LaunchConfig(
        "launch1", name="Fig. 5.24", gpu="gpu1", kernel="saxpy2", block_size=256, data_size=400_000_000,
        registers=8, lam=0.703787, variables={"a": 128},
        transfers=(Transfer("htod", "4*N"), Transfer("htod", "4*N"), Transfer("dtoh", "4*N")))))
    return p


@pytest.fixture
def example_project():
    """A factory: each call gives a fresh copy of the example project."""
    return _example_project


#: nvcc's listings compiled this session, by (source text, the folder's headers, arch).
_COMPILED: dict = {}


@pytest.fixture
def compiled_once(monkeypatch):
    """``.cu`` files compiled by nvcc once a session: the same source (and the headers beside
    it) for the same architecture gives the listing of its first compile, for tests that are
    not about compiling (each compile is about 0.7 CPU-s). A failed compile is not kept."""
    from gpumodeler.core.kernel.sass import toolchain
    real = toolchain.compile_to_sass

    def compile_to_sass(source, arch):
        source = Path(source)
        headers = tuple(sorted((p.name, p.read_bytes()) for p in source.parent.iterdir()
                               if p.suffix in (".h", ".cuh", ".hpp", ".inc")))
        key = (source.read_bytes(), headers, arch)
        if key not in _COMPILED:
            _COMPILED[key] = real(source, arch)
        return _COMPILED[key]

    monkeypatch.setattr(toolchain, "compile_to_sass", compile_to_sass)
