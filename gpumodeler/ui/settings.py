"""What the GUI remembers between runs: recent files, window geometry and dock state.

QSettings under organization "gpumodeler". ``GPUMODELER_SETTINGS_DIR`` points it at a
folder of its own (tests, benchmarks, screenshots: never the user's real settings); tests
may also use ``QSettings.setPath``.
"""
from __future__ import annotations

import os

from PySide6.QtCore import QSettings

ORGANIZATION = "gpumodeler"
APPLICATION = "gpumodeler"
ENV_SETTINGS_DIR = "GPUMODELER_SETTINGS_DIR"
MAX_RECENT = 8


def app_settings() -> QSettings:
    """The settings store (an ini file in ``$GPUMODELER_SETTINGS_DIR`` when that is set)."""
    folder = os.environ.get(ENV_SETTINGS_DIR)
    if folder:
        return QSettings(os.path.join(folder, "gpumodeler.ini"), QSettings.Format.IniFormat)
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION,
                     APPLICATION)


def recent_files() -> list[str]:
    """Recently opened or saved project paths, newest first."""
    value = app_settings().value("recent_files", [])
    if isinstance(value, str):  # QSettings returns a lone entry as a string
        value = [value]
    return [str(v) for v in (value or []) if v]


def add_recent_file(path: str) -> list[str]:
    path = os.path.abspath(path)
    files = [path] + [p for p in recent_files() if p != path]
    app_settings().setValue("recent_files", files[:MAX_RECENT])
    return files[:MAX_RECENT]


def remove_recent_file(path: str) -> list[str]:
    files = [p for p in recent_files() if p != path]
    app_settings().setValue("recent_files", files)
    return files


def clear_recent_files() -> None:
    app_settings().setValue("recent_files", [])
