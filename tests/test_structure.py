"""The package's shape (issue 11): module sizes, no import cycles, and imports that only go
down the layers (spec → config → codegen → build; the runtime on spec, artifact and fsutil
only). Reads the sources as text; imports nothing from the package."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Dict, Set

import pytest

from cks_testutil import ROOT

PACKAGE = ROOT / "cutlass_splitk"
MAX_LINES = 400
MAX_RUNTIME_LINES = 300
# What the runtime may import from the package's top level (everything else is the build side).
RUNTIME_MAY_IMPORT = {"cutlass_splitk.spec", "cutlass_splitk.artifact", "cutlass_splitk.fsutil"}


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _imports(path: Path) -> Set[str]:
    """Package modules ``path`` imports at run time (module level or inside functions; imports
    under ``if TYPE_CHECKING:`` are annotations only and left out)."""
    module = _module(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: Set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names if a.name.startswith("cutlass_splitk"))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[:len(base) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if target.startswith("cutlass_splitk"):
                    submodules = {f"{target}.{a.name}" for a in child.names} & set(MODULES)
                    found.update(submodules or {target})  # "from . import x": x, not the package
            visit(child)

    visit(ast.parse(path.read_text()))
    return found


MODULES: Dict[str, Path] = {_module(p): p for p in sorted(PACKAGE.rglob("*.py"))}
GRAPH: Dict[str, Set[str]] = {m: {i for i in _imports(p) if i in MODULES and i != m} for m, p in MODULES.items()}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_size(module):
    lines = len(MODULES[module].read_text().splitlines())
    limit = MAX_RUNTIME_LINES if module.startswith("cutlass_splitk.runtime.") else MAX_LINES
    assert lines <= limit, f"{module}: {lines} lines (at most ~{limit})"


def test_no_import_cycles():
    state: Dict[str, int] = {}  # 1: on the current path, 2: done
    path = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for n in sorted(GRAPH[m]):
            if state.get(n) == 1:
                cycle = path[path.index(n):] + [n]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if n not in state:
                visit(n)
        path.pop()
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            visit(m)


def test_runtime_does_not_import_the_build_side():
    for module, imports in GRAPH.items():
        if module.startswith("cutlass_splitk.runtime"):
            upward = {i for i in imports if not i.startswith("cutlass_splitk.runtime")} - RUNTIME_MAY_IMPORT
            assert not upward, f"{module} imports {sorted(upward)}"


@pytest.mark.parametrize("module, forbidden", [
    ("cutlass_splitk.spec", "cutlass_splitk."),  # the model imports nothing from the package
    ("cutlass_splitk.fsutil", "cutlass_splitk."),
    ("cutlass_splitk.yaml_doc", "cutlass_splitk."),
    ("cutlass_splitk.artifact", "cutlass_splitk.runtime"),
    ("cutlass_splitk.config", "cutlass_splitk.codegen"),
    ("cutlass_splitk.codegen", "cutlass_splitk.build"),
])
def test_no_upward_imports(module, forbidden):
    allowed = {"cutlass_splitk.spec", "cutlass_splitk.fsutil"} if module == "cutlass_splitk.artifact" else set()
    bad = {i for i in GRAPH[module] if i.startswith(forbidden) and i not in allowed}
    assert not bad, f"{module} imports {sorted(bad)}"


def test_backends_do_not_import_the_stages_that_use_them():
    for module, imports in GRAPH.items():
        if module.startswith("cutlass_splitk.backends"):
            bad = {i for i in imports if i in ("cutlass_splitk.config", "cutlass_splitk.codegen",
                                                "cutlass_splitk.toolchain", "cutlass_splitk.build")}
            assert not bad, f"{module} imports {sorted(bad)}"


def test_dispatch_imports_without_torch():
    code = ("import sys; sys.modules['torch'] = None\n"
            "import cutlass_splitk.runtime.dispatch, cutlass_splitk.runtime.errors, cutlass_splitk.config, "
            "cutlass_splitk.build\n"
            "from cutlass_splitk.runtime import LibraryError\n"
            "assert LibraryError is __import__('cutlass_splitk.artifact').artifact.LibraryError")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT)})
