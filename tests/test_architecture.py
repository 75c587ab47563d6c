"""The layout DESIGN.md promises, checked on the source (AST, no imports run): the library never reaches
into the app, backend modules form no import cycle, the runner names no method, and outside
``components/session`` the components take Streamlit as an argument instead of importing it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from backend.methods import ALL_METHODS
from tests.conftest import ROOT


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at top level or inside a function (lazy imports count: they cycle too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}  # "from pkg import module"
    return found


def _files(folder: str) -> list[Path]:
    return sorted(p for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts)


BACKEND = {_module(p): p for p in _files("backend")}


@pytest.mark.parametrize("path", _files("backend"), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_library_never_imports_the_app(path):
    bad = {m for m in _imports(path) if m.split(".")[0] in ("streamlit", "components", "pages", "app")}
    assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_backend_modules_form_no_import_cycle():
    graph = {m: {i for i in _imports(p) if i in BACKEND and i != m} for m, p in BACKEND.items()}
    # a package's __init__ re-exporting its own submodules is not a cycle of the code that uses them
    graph = {m: {i for i in deps if not (BACKEND[m].name == "__init__.py" and i.startswith(m + "."))}
             for m, deps in graph.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                cycle = stack[stack.index(n):] + [n]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_the_runner_names_no_method():
    source = (ROOT / "backend" / "runner.py").read_text(encoding="utf-8")
    named = [m for m in ALL_METHODS if f'"{m}"' in source or f"'{m}'" in source or f"methods.{m}" in source]
    assert not named, f"backend/runner.py names {named}: declare it through a Method hook instead"


@pytest.mark.parametrize("path", [p for p in _files("components") if "session" not in p.parts],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_components_outside_session_take_streamlit_as_an_argument(path):
    assert not {m for m in _imports(path) if m.split(".")[0] == "streamlit"}, (
        f"{path.relative_to(ROOT)} imports streamlit: pass `st` to its render_* functions instead")
