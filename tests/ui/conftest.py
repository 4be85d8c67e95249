"""Fixtures for the GUI tests."""
import pytest


@pytest.fixture
def private_settings(gpumodeler_env, tmp_path):
    """Never read or write the user's settings (gpumodeler_env points ours elsewhere). Test
    modules that open windows make it autouse with ``pytestmark``."""
    from PySide6.QtCore import QSettings
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope,
                      str(tmp_path / "settings-user"))
