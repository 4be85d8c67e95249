"""Fixtures for the device database tests: built fixture databases, an isolated user
folder (no test touches the real one)."""
import pytest

from device_fixtures import write_source_dir
from gpumodeler.db.build_devices import build


@pytest.fixture(autouse=True)
def _isolated_device_env(monkeypatch, tmp_path):
    """No test reads or writes the real user-data folder or the real shipped database."""
    monkeypatch.setenv("GPUMODELER_USER_DB", str(tmp_path / "user-home" / "user-devices.db"))
    monkeypatch.delenv("GPUMODELER_DEVICES_DB", raising=False)


@pytest.fixture(scope="session")
def shipped_db_master(tmp_path_factory):
    root = tmp_path_factory.mktemp("shipped")
    src = write_source_dir(root / "src")
    out = root / "devices.db"
    build(src, out)
    return out


@pytest.fixture
def shipped_db(shipped_db_master, tmp_path):
    """A private copy of the fixture database built from SOURCE_FILES."""
    copy_path = tmp_path / "devices.db"
    copy_path.write_bytes(shipped_db_master.read_bytes())
    return copy_path


@pytest.fixture
def catalog(shipped_db, tmp_path):
    from gpumodeler.db.catalog import Catalog
    with Catalog(user_db=tmp_path / "user.db", shipped_db=shipped_db) as cat:
        yield cat
