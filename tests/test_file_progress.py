"""make test JOBS=2: a distributed run prints one line per test file as it ends (its
outcomes), not a line of dots (tests/file_progress.py)."""
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_a_distributed_run_prints_a_line_per_file(tmp_path):
    (tmp_path / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(HERE)!r})\nimport file_progress\n\n"
        "def pytest_configure(config):\n"
        "    if file_progress.wanted(config):\n"
        "        config.pluginmanager.register(file_progress.FileProgress(config), 'fp')\n")
    (tmp_path / "test_one.py").write_text(
        "import pytest\n\ndef test_a():\n    pass\n\ndef test_b():\n    assert 1 == 2\n\n"
        "@pytest.mark.skip(reason='r')\ndef test_c():\n    pass\n")
    (tmp_path / "test_two.py").write_text("def test_a():\n    pass\n\ndef test_b():\n    pass\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    # only the plugins the run needs: loading every installed one (Qt, hypothesis) in each
    # of the three processes cost more than the tests
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "xdist.plugin", "-n", "2",
                        "--dist", "loadfile", "-p", "no:cacheprovider", str(tmp_path)], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert any(l.startswith("test_one.py: 1 failed, 1 passed, 1 skipped (") for l in lines), r.stdout
    assert any(l.startswith("test_two.py: 2 passed (") for l in lines), r.stdout
    assert not any(re.match(r"[.FEsxX]+ *(\[ *\d+%\])?$", l) for l in lines), r.stdout  # no letters
    # one process: pytest's own lines, the plugin not loaded
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(tmp_path)],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert "test_two.py .." in r.stdout and "test_two.py: 2 passed" not in r.stdout, r.stdout
