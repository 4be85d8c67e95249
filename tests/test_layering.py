"""The layers of docs/architecture.md: which package may import which, and that core, db,
service and cli never load Qt."""
import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "gpumodeler"

#: package -> the gpumodeler packages it must never import (also not inside a function)
FORBIDDEN = {
    "core": {"service", "db", "cli", "ui", "report"},
    "db": {"service", "cli", "ui", "report"},
    "service": {"cli", "ui", "report"},
    "report": {"cli", "ui"},
    "cli": {"ui"},
}
#: (module, package) pairs allowed against FORBIDDEN: the ``gui`` command starts the GUI,
#: importing it when the command runs
ALLOWED = {("gpumodeler.cli.cmd_gui", "ui")}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in the file (functions, TYPE_CHECKING
    blocks), relative imports resolved."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{a.name}" for a in node.names)
    return found


def layer_violations() -> list[str]:
    bad = []
    for layer, forbidden in FORBIDDEN.items():
        for path in sorted((PACKAGE / layer).rglob("*.py")):
            module = _module_name(path)
            for imported in sorted(imported_modules(path)):
                parts = imported.split(".")
                if parts[0] == "gpumodeler" and len(parts) > 1 and parts[1] in forbidden \
                        and (module, parts[1]) not in ALLOWED:
                    bad.append(f"{module} imports {imported}")
    return bad


def test_each_layer_imports_only_the_layers_below_it():
    bad = layer_violations()
    assert not bad, "imports across the layers (docs/architecture.md):\n" + "\n".join(bad)


def test_the_layer_check_sees_an_import_inside_a_function(tmp_path, monkeypatch):
    """The check above can fail: a report module importing the CLI in a function is found."""
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "late.py").write_text(
        "def f():\n    from gpumodeler.cli.cmd_project import predict_launch\n"
        "    from ..cli import common\n", encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path / "gpumodeler")
    (tmp_path / "gpumodeler").mkdir()
    (tmp_path / "report").rename(tmp_path / "gpumodeler" / "report")
    assert layer_violations() == [
        "gpumodeler.report.late imports gpumodeler.cli",
        "gpumodeler.report.late imports gpumodeler.cli.cmd_project",
        "gpumodeler.report.late imports gpumodeler.cli.cmd_project.predict_launch",
        "gpumodeler.report.late imports gpumodeler.cli.common",
    ]


def test_core_db_service_cli_do_not_import_qt():
    code = (
        "import sys, pkgutil, importlib, gpumodeler\n"
        "import gpumodeler.core, gpumodeler.db, gpumodeler.service, gpumodeler.cli\n"
        "for pkg in (gpumodeler.core, gpumodeler.db, gpumodeler.service, gpumodeler.cli):\n"
        "    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "        importlib.import_module(m.name)\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6')]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
