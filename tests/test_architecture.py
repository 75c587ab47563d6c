"""The layout the README's "What is inside" describes (its rules: docs/architecture.md §2), checked on the source
(AST, no imports run): the library never reaches into the app, backend modules form no import cycle, generic code
(runner, evaluation, scoring, what-if, the session helpers, the pages that list methods) names no method, what-if
never imports the build-time sample builders, scoring never imports the model layer, and outside
``components/session`` the components take Streamlit as an argument instead of importing it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from backend.methods import SPECS
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


#: Generic code: it reads what it needs from ``MethodSpec`` and trace capabilities, never a method by name.
GENERIC = ["backend/runner.py", "backend/evaluate.py", "backend/evaluate_ray.py", "backend/scoring.py",
           "backend/warmup.py", "backend/cost.py", "backend/methods/estimate.py", "backend/whatif", "components/session", "pages/inspect.py", "pages/whatif.py", "pages/cases.py",
           "pages/evaluate.py", "pages/labels.py", "app.py"]


def _generic_files() -> list[Path]:
    return sorted(f for g in GENERIC for f in ([ROOT / g] if g.endswith(".py") else _files(g)))


@pytest.mark.parametrize("path", _generic_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_generic_modules_name_no_method(path):
    source = path.read_text(encoding="utf-8")
    named = [m for m in SPECS if f'"{m}"' in source or f"'{m}'" in source or f"methods.{m}" in source]
    assert not named, (f"{path.relative_to(ROOT)} names {named}: declare what it needs on the MethodSpec or the "
                       "trace instead")


def test_whatif_does_not_import_the_sample_builders():
    bad = {f"{p.relative_to(ROOT)}: {m}" for p in _files("backend/whatif") for m in _imports(p)
           if m.startswith("backend.sample")}
    assert not bad, f"backend/whatif imports the build-time backend.sample: {sorted(bad)}"


def test_scoring_does_not_import_the_model_layer():
    bad = {m for m in _imports(ROOT / "backend" / "scoring.py") if m.startswith("backend.llm")}
    assert not bad, f"backend/scoring.py imports {sorted(bad)}: answer text helpers belong in backend.answers"


@pytest.mark.parametrize("path", [p for p in _files("components") if "session" not in p.parts],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_components_outside_session_take_streamlit_as_an_argument(path):
    assert not {m for m in _imports(path) if m.split(".")[0] == "streamlit"}, (
        f"{path.relative_to(ROOT)} imports streamlit: pass `st` to its render_* functions instead")


#: Calls that touch the filesystem; a component's data comes from ``backend`` (``backend.outputs`` reads the folders).
_DISK = {"read_text", "read_bytes", "write_text", "write_bytes", "iterdir", "glob", "rglob", "stat", "load_results",
         "read_rows"}


@pytest.mark.parametrize("path", [p for p in _files("components") if "session" not in p.parts],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_components_outside_session_read_no_files(path):
    calls = [n.func for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.Call)]
    bad = sorted({f.id if isinstance(f, ast.Name) else f.attr for f in calls
                  if (isinstance(f, ast.Name) and f.id in {"open", *_DISK})
                  or (isinstance(f, ast.Attribute) and f.attr in _DISK)})
    assert not bad, (f"{path.relative_to(ROOT)} reads the disk ({', '.join(bad)}): read it in backend (e.g. "
                     "backend/outputs.py) and pass the typed result in")
