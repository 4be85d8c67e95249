"""The repository stands alone: no comment, docstring or page points outside it.

A maintainer who clones the repository must be able to check why a rule exists and where a
number comes from. So nothing in the tracked text files may cite a folder next to the
repository (a shared guide, notes, the seed documents), a line number of a text extraction,
or a tracker number; cite the paper itself (docs/sources.md), the page of docs/ that states
the rule, or the requirement by its name (docs/contributing.md).

The patterns are assembled from pieces below, so this file does not match them itself.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: What is checked: the package, the tests, the docs, the benchmarks, the tools, the README
#: and the build files; in resources/ the text the device database and fixtures are built from.
CHECKED = ("gpumodeler", "tests", "docs", "benchmarks", "tools", "packaging", "README.md",
           "Makefile", "pyproject.toml", "resources/devices", "resources/kernels/src",
           "resources/measurements", "resources/validation")
TEXT_SUFFIXES = {".py", ".md", ".json", ".csv", ".cu", ".toml", ".txt", ".cfg", ".sh", ".xml",
                 ".desktop", ""}

_HASH = "#"
_SHARED = "shar" + "ed"
_NOTES = "not" + "es"
_GUIDE = "GUI" + "DE"
_ISSUE = "iss" + "ue"

#: (pattern, what it finds) — each a reference a reader of this repository cannot follow.
FORBIDDEN = [
    (re.compile(r"\.\./" + _SHARED + r"\b"), "a folder next to the repository"),
    (re.compile(r"\b" + _SHARED + r"/(?:" + _GUIDE + "|" + _NOTES + r"|seeds)\b"),
     "the shared folder outside the repository"),
    # (a folder of that name inside another path, a cited repository's, is not it)
    (re.compile(r"(?<![\w./])" + _NOTES + r"/"), "a notes file outside the repository"),
    (re.compile(_GUIDE + r"\.md|\b" + _GUIDE + r"(?::|'s\b)|\(" + _GUIDE + r"\b|\bthe "
                + _GUIDE + r"\b"), "the house guide outside the repository"),
    (re.compile(r"(?i)\b" + _ISSUE + r"s?\s+" + _HASH + r"\d+"), "a tracker number"),
    (re.compile(r"(?i)\b" + _ISSUE + r"\s+\d+\s*[,:)]"), "a tracker number"),
    (re.compile(r"(?i)\bthe " + _ISSUE + r"'s\b"), "the tracker"),
    (re.compile(r"(?i)\bseeds?\s+00\d\b"), "a seed file outside the repository"),
    (re.compile(r"\b[TH]:L\d+\b"), "a line number of a text extraction"),
]


def _tracked_files() -> list[Path]:
    """The tracked files under CHECKED (git ls-files), or every file there without git."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", *CHECKED], cwd=ROOT,
                             capture_output=True, check=True)
        names = [n for n in out.stdout.decode("utf-8").split("\0") if n]
        if names:
            return [ROOT / n for n in names]
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for entry in CHECKED:
        path = ROOT / entry
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files.extend(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return files


def _text(path: Path) -> str | None:
    if path.suffix not in TEXT_SUFFIXES or not path.is_file():
        return None
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None


def references_outside(text: str) -> list[tuple[int, str, str]]:
    """(line number, what, line) for every reference outside the repository in ``text``."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for pattern, what in FORBIDDEN:
            if pattern.search(line):
                found.append((number, what, line.strip()))
                break
    return found


def test_the_patterns_find_what_they_must_and_leave_domain_words_alone():
    bad = ["See `../" + _SHARED + "/" + _GUIDE + ".md`.",
           "(" + _NOTES + "/latency-sources.md §8)",
           "(" + _GUIDE + ": layers)", "the " + _GUIDE + "'s rule",
           "speed (" + _ISSUE + " " + _HASH + "11)", "(" + _ISSUE.capitalize() + "s " + _HASH
           + "8 and " + _HASH + "10)", _ISSUE.capitalize() + " 12, the editors",
           "in words (" + _ISSUE + " 12)", "The " + _ISSUE + "'s row",
           "as restated in se" + "ed 002", "5 cycles (T:" + "L882)"]
    for line in bad:
        assert references_outside(line), line
    fine = ["the 48/16 shared/L1 split", "notes and warnings", "issue 4 IPC/SM",
            '"issue 102" in text', "issue 36.25 cycles", 'GUIDE = "nvidia-cuda-guide"',
            "r.source == GUIDE and", "pull request 4002", "seed 2026",
            "stroke=\"#888888\"", "github.com/pyqtgraph/pyqtgraph/issues/3495"]
    for line in fine:
        assert not references_outside(line), line


def test_no_reference_points_outside_the_repository():
    files = _tracked_files()
    assert any(f.name == "README.md" for f in files)
    problems = []
    for path in files:
        text = _text(path)
        if text is None:
            continue
        for number, what, line in references_outside(text):
            problems.append(f"{path.relative_to(ROOT)}:{number}: {what}: {line[:120]}")
    assert not problems, ("references a reader of this repository cannot follow (cite "
                          "docs/sources.md, a page of docs/ or the requirement's name, "
                          "docs/contributing.md):\n" + "\n".join(problems))


def test_the_docs_the_readme_and_the_code_point_to_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in ("docs/architecture.md", "docs/contributing.md", "docs/sources.md"):
        assert (ROOT / page).is_file(), page
        assert page in readme, page


def test_every_docs_page_cited_exists():
    cited = re.compile(r"\bdocs/([\w-]+\.md)")
    missing = []
    for path in _tracked_files():
        text = _text(path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for name in cited.findall(line):
                if not (ROOT / "docs" / name).is_file():
                    missing.append(f"{path.relative_to(ROOT)}:{number}: docs/{name}")
    assert not missing, "pages cited but not in docs/:\n" + "\n".join(missing)
