"""core, db and cli must not load Qt (docs/architecture.md: layers)."""
import subprocess
import sys


def test_core_db_cli_do_not_import_qt():
    code = (
        "import sys, pkgutil, importlib, gpumodeler\n"
        "import gpumodeler.core, gpumodeler.db, gpumodeler.cli\n"
        "for pkg in (gpumodeler.core, gpumodeler.db, gpumodeler.cli):\n"
        "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "        importlib.import_module(m.name)\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6')]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
