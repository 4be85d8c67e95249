"""`gpumodeler gui [PROJECT] [--screenshot FILE.png]` and `gpumodeler install-desktop-entry`.

The CLI layer never loads Qt when it is imported (a test checks it): the GUI is imported
inside :func:`_gui`. ``install-desktop-entry`` copies the freedesktop entry, AppStream
metadata, MIME type and icon into ``$XDG_DATA_HOME`` (default ``~/.local/share``) so the app
appears in the desktop's menu when it was installed into a virtual environment, where the
copies pip puts in ``<venv>/share`` are not seen by the desktop.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from gpumodeler.cli.main import CLIError

APP_ID = "org.gpumodeler.gpumodeler"
# (file name, folder under share/) of the desktop integration files.
DESKTOP_FILES = (
    (f"{APP_ID}.desktop", "applications"),
    (f"{APP_ID}.metainfo.xml", "metainfo"),
    (f"{APP_ID}.mime.xml", "mime/packages"),
    ("gpumodeler.svg", "icons/hicolor/scalable/apps"),
)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "gui", help="open the desktop application",
        description="Open the gpumodeler desktop application, optionally with a project. "
                    "With --screenshot, render every tab into one PNG and exit (no display "
                    "needed).")
    parser.add_argument("project", nargs="?", help="a project file (.gpm) to open")
    parser.add_argument("--screenshot", metavar="FILE.png",
                        help="render the window with each tab into one PNG and exit")
    parser.add_argument("--size", default="1600x1000", metavar="WxH",
                        help="window size for --screenshot (default 1600x1000)")
    parser.set_defaults(func=_gui)

    parser = subparsers.add_parser(
        "install-desktop-entry", help="add gpumodeler to your desktop's application menu",
        description="Copy the desktop entry, metadata, MIME type and icon to "
                    "$XDG_DATA_HOME (~/.local/share) so gpumodeler appears in the application "
                    "menu and opens .gpm files.")
    parser.add_argument("--prefix", metavar="DIR",
                        help="share folder to install into (default $XDG_DATA_HOME or "
                             "~/.local/share)")
    parser.add_argument("--uninstall", action="store_true", help="remove the files again")
    parser.set_defaults(func=_install_desktop_entry)


def _gui(args: argparse.Namespace) -> int:
    if args.project and not os.path.exists(args.project):
        raise CLIError(f"{args.project}: no such file")
    if args.screenshot is not None and not args.screenshot.strip():
        raise CLIError("--screenshot needs a file name ending in .png, got an empty path")
    if args.screenshot and not args.screenshot.lower().endswith(".png"):
        raise CLIError(f"--screenshot needs a .png file name, got {args.screenshot!r}")
    if args.screenshot:  # before the window is built (the PNG is written atomically later)
        from gpumodeler.db.atomic_files import check_output

        from .common import inputs_and_catalog
        check_output(args.screenshot, inputs_and_catalog((args.project, "the project file")))
    from gpumodeler.ui.app import parse_size, run  # Qt only from here on
    try:
        size = parse_size(args.size)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    return run(args.project, args.screenshot, size)


# ---- desktop integration -------------------------------------------------------------------
def desktop_sources() -> dict[str, Path]:
    """Where the desktop files are: the checkout's packaging/linux (and resources/icons for
    the icon), else the copies a wheel installed under ``sys.prefix/share``."""
    root = Path(__file__).resolve().parents[2]
    found = {}
    for name, folder in DESKTOP_FILES:
        candidates = [root / "packaging" / "linux" / name, root / "resources" / "icons" / name,
                      Path(sys.prefix) / "share" / folder / name]
        for path in candidates:
            if path.is_file():
                found[name] = path
                break
    missing = [name for name, _ in DESKTOP_FILES if name not in found]
    if missing:
        raise CLIError(f"desktop files not found ({', '.join(missing)}); reinstall gpumodeler "
                       f"or run this from a checkout")
    return found


def gui_command() -> str:
    """How the desktop should start the app: the gpumodeler-gui script next to this Python,
    else this Python running the GUI module."""
    script = Path(sys.executable).with_name("gpumodeler-gui")
    if script.exists():
        return str(script)
    return f"{sys.executable} -m gpumodeler.ui.app"


def _install_desktop_entry(args: argparse.Namespace) -> int:
    share = Path(args.prefix or os.environ.get("XDG_DATA_HOME") or Path.home() / ".local/share")
    if args.uninstall:
        for name, folder in DESKTOP_FILES:
            (share / folder / name).unlink(missing_ok=True)
        _refresh_caches(share)
        print(f"removed the gpumodeler desktop entry from {share}")
        return 0
    from gpumodeler.db.atomic_files import write_output
    sources = desktop_sources()
    command = gui_command()
    try:
        for name, folder in DESKTOP_FILES:
            target = share / folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            data = sources[name].read_bytes()
            if name.endswith(".desktop"):
                lines = []
                for line in data.decode("utf-8").splitlines():
                    if line.startswith("Exec="):
                        line = f"Exec={command} %f"
                    elif line.startswith("TryExec="):
                        line = f"TryExec={command.split()[0]}"
                    lines.append(line)
                data = "\n".join(lines) + "\n"
            # atomically, and never over its source (a --prefix of the installation's share)
            write_output(target, data, inputs=[sources[name]])
            print(f"wrote {target}")
    except OSError as exc:
        raise CLIError(f"cannot write to {share}: {exc.strerror or exc}") from None
    _refresh_caches(share)
    print("gpumodeler is in your application menu (log out and in if it does not show yet)")
    return 0


def _refresh_caches(share: Path) -> None:
    """Rebuild the menu and MIME caches where the desktop's tools are installed."""
    for tool, folder in (("update-desktop-database", share / "applications"),
                         ("update-mime-database", share / "mime")):
        if shutil.which(tool) and folder.is_dir():
            subprocess.run([tool, str(folder)], check=False, capture_output=True)
