"""The report is built by the service layer, never by the CLI: writing a report (as the GUI's
File › Export report… does) loads no gpumodeler.cli module and no Qt."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CODE = """
import sys
from gpumodeler.db.catalog import Catalog
from gpumodeler.db.project_file import load_project
from gpumodeler.report.html import build_report
project = load_project(sys.argv[1])
with Catalog() as catalog:
    html = build_report(project, catalog, project_path=sys.argv[1], command="report")
assert "cannot predict" not in html and "id='launches'>Launches" in html, html[:200]
print(" ".join(sorted(m for m in sys.modules if m.startswith(("gpumodeler.cli", "gpumodeler.ui",
                                                              "PySide6")))))
print("gpumodeler.service.report" in sys.modules)
"""


@pytest.mark.usefixtures("gpumodeler_env")
@pytest.mark.parametrize("example", sorted((ROOT / "resources" / "examples").glob("*.gpm")),
                         ids=lambda p: p.stem)
def test_building_a_report_imports_no_cli_module(example):
    out = subprocess.run([sys.executable, "-c", CODE, str(example)], capture_output=True,
                         text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    loaded, service = out.stdout.splitlines()
    assert loaded == ""
    assert service == "True"
