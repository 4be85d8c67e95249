"""The import graph of the ``gpumodeler`` package is visible and one-way (docs/architecture.md,
"Import rules").

Every ``import`` and ``from ... import`` in the package's source is read with :mod:`ast`,
wherever it stands: at module level, inside a function, or under ``if TYPE_CHECKING:``
(an import placed in a function still makes the two modules depend on each other; it only
hides the dependency). Two rules follow:

* no import cycle between modules (a strongly connected component of more than one module);
* no module uses another module's private name (``from other import _name``, or
  ``other._name`` where ``other`` is an imported module): what another module needs is public
  and named so. :data:`PRIVATE_ALLOWED` (empty) would list modules exempt.
"""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "gpumodeler"

#: modules that may use each other's private names (both the importer and the module imported
#: from must be listed): none. A name another module needs is public.
PRIVATE_ALLOWED: frozenset[str] = frozenset()
#: packages whose modules are all in :data:`PRIVATE_ALLOWED`: none
PRIVATE_ALLOWED_PACKAGES: tuple[str, ...] = ()


def private_allowed(module: str) -> bool:
    return module in PRIVATE_ALLOWED or any(
        module == p or module.startswith(p + ".") for p in PRIVATE_ALLOWED_PACKAGES)


def module_files(root: Path, package: str = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> its file, for every ``.py`` file of ``package`` under ``root``."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _base(module: str, files: dict[str, Path], node: ast.ImportFrom) -> str | None:
    """The absolute module a ``from ... import`` names (relative levels resolved)."""
    if not node.level:
        return node.module
    package = module if files[module].name == "__init__.py" else module.rpartition(".")[0]
    parts = package.split(".")
    if node.level - 1 > len(parts):
        return None
    parts = parts[:len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def read_imports(files: dict[str, Path]):
    """``(edges, private)``: the import edges between the package's modules, and each use of
    another module's private name as ``(importer, module, name, line)``."""
    edges: set[tuple[str, str]] = set()
    private: list[tuple[str, str, str, int]] = []
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        aliases: dict[str, str] = {}  # local name -> the package module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in files:
                        edges.add((module, a.name))
                        if a.asname:
                            aliases[a.asname] = a.name
            elif isinstance(node, ast.ImportFrom):
                base = _base(module, files, node)
                if base is None or not (base == PACKAGE or base.startswith(PACKAGE + ".")):
                    continue
                for a in node.names:
                    full = f"{base}.{a.name}"
                    target = full if full in files else base
                    if target in files:
                        edges.add((module, target))
                    if full in files:  # a module: remember the name it is bound to
                        aliases[a.asname or a.name] = full
                    elif _is_private(a.name) and base != module:
                        private.append((module, base, a.name, node.lineno))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and _is_private(node.attr)
                    and isinstance(node.value, ast.Name) and node.value.id in aliases
                    and aliases[node.value.id] != module
                    and f"{aliases[node.value.id]}.{node.attr}" not in files):
                private.append((module, aliases[node.value.id], node.attr, node.lineno))
    edges = {(a, b) for a, b in edges if a != b}
    return edges, private


def cycles(edges) -> list[list[str]]:
    """The groups of modules that import each other (directly or around a ring)."""
    graph = nx.DiGraph(edges)
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


def forbidden_private(private) -> list[tuple[str, str, str, int]]:
    return [p for p in private if not (private_allowed(p[0]) and private_allowed(p[1]))]


@pytest.fixture(scope="module")
def package_imports():
    """``(files, edges, private)`` of the package, read once for the module's two checks
    (reading 50 k lines with ast is about a second)."""
    files = module_files(ROOT)
    return (files, *read_imports(files))


def test_the_package_has_no_import_cycle(package_imports):
    _, edges, _ = package_imports
    found = cycles(edges)
    assert not found, "modules that import each other (move what both need into a module " \
        "both import):\n" + "\n".join("  " + " <-> ".join(c) for c in found)


def test_no_module_uses_another_modules_private_names(package_imports):
    files, _, private = package_imports
    found = forbidden_private(private)
    assert not found, "private names used across modules (make them public: no underscore, " \
        "a docstring):\n" + "\n".join(
            f"  {files[m].relative_to(ROOT)}:{line}: {name} of {target}"
            for m, target, name, line in found)


def test_the_allow_list_names_only_modules_that_exist():
    files = module_files(ROOT)
    assert PRIVATE_ALLOWED <= set(files)
    assert all(p in files for p in PRIVATE_ALLOWED_PACKAGES)


# --- the checks themselves find what they look for --------------------------------------

def _package(tmp_path: Path, sources: dict[str, str]) -> dict[str, Path]:
    for name, text in sources.items():
        path = tmp_path / PACKAGE / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return module_files(tmp_path)


def test_a_cycle_through_a_function_level_import_is_found(tmp_path):
    files = _package(tmp_path, {
        "__init__.py": "",
        "cli/__init__.py": "",
        "cli/a.py": "from .b import run\n",
        "cli/b.py": "def run():\n    from . import c\n",
        "cli/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                    "    import gpumodeler.cli.a\n",
        "cli/d.py": "from gpumodeler.cli import a\n",
    })
    edges, _ = read_imports(files)
    assert cycles(edges) == [["gpumodeler.cli.a", "gpumodeler.cli.b", "gpumodeler.cli.c"]]


def test_private_names_across_modules_are_found(tmp_path):
    files = _package(tmp_path, {
        "__init__.py": "",
        "db/__init__.py": "",
        "db/store.py": "_KEYS = ()\ndef _now():\n    pass\n",
        "db/own.py": "_x = 1\ndef f():\n    return _x\n",
        "db/user.py": "from .store import _KEYS\nfrom . import own as o\nimport gpumodeler.db.store\n"
                      "def f():\n    return o._x + o.public\n",
        "db/public_only.py": "from .store import _private_module_is_not_here\n",
        "core/__init__.py": "",
        "core/occupancy/__init__.py": "",
        "core/occupancy/a.py": "_A = 1\n",
        "core/occupancy/b.py": "from .a import _A\n",
        "core/device.py": "from .occupancy.a import _A\n",
    })
    _, private = read_imports(files)
    found = sorted((m, t, n) for m, t, n, _ in forbidden_private(private))
    assert found == [("gpumodeler.core.device", "gpumodeler.core.occupancy.a", "_A"),
                     ("gpumodeler.core.occupancy.b", "gpumodeler.core.occupancy.a", "_A"),
                     ("gpumodeler.db.public_only", "gpumodeler.db.store",
                      "_private_module_is_not_here"),
                     ("gpumodeler.db.user", "gpumodeler.db.own", "_x"),
                     ("gpumodeler.db.user", "gpumodeler.db.store", "_KEYS")]
    assert ("gpumodeler.core.occupancy.b", "gpumodeler.core.occupancy.a", "_A") in \
        {(m, t, n) for m, t, n, _ in private}
