"""Finding 6 (exports): Evaluate's "Questions (CSV)" passed ``=HYPERLINK(…)`` cells through to a spreadsheet. Every
CSV export now goes through ``backend.exports``, which writes a cell that would start a formula (``= + - @``, tab, CR:
OWASP's list) as text with a leading ``'``.

Two kinds of test: each CSV export, fed hostile cells, comes out neutralised; and the source is held to the rule, so
a new export cannot slip past it — no module but ``backend/exports.py`` writes CSV itself (``to_csv``,
``csv.writer``), and every download button's data comes from a producer this file knows (a CSV one is tested
here)."""

from __future__ import annotations

import ast
import csv
import io
from datetime import datetime, timezone
from pathlib import Path

import pytest

from backend.evaluate import summarize
from backend.exports import csv_text, frame_csv, neutralise, restore
from backend.labels.files import read_labels, render
from backend.labels.model import Label
from backend.outputs import Evaluation
from backend.schema import Dataset, MethodResult, Question
from backend.schema.summary import Summary
from tests.conftest import ROOT

LINK = '=HYPERLINK("http://x","y")'
HOSTILE = [LINK, "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A2)", "\t=tab", "\r=cr", "'=already quoted"]
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def _number(cell: str) -> bool:
    try:
        float(cell)
        return True
    except ValueError:
        return False


def _assert_safe(text: str) -> None:
    running = [c for c in _cells(text) if c.startswith(FORMULA_START) and not _number(c)]  # -3 is a number
    assert not running, f"cells a spreadsheet would run: {running}"
    assert "'" + LINK in _cells(text), "the link cell is kept, as text"


@pytest.mark.parametrize("cell", HOSTILE + ["plain", "", "''+x", "3.5"])
def test_neutralise_makes_a_formula_text_and_restore_gives_it_back(cell):
    safe = neutralise(cell)
    assert not safe.startswith(FORMULA_START)
    assert restore(safe) == cell


def test_csv_text_and_frame_csv_neutralise_every_text_cell_and_keep_numbers():
    import pandas as pd

    rows = [{"a": c, "n": -3} for c in HOSTILE]
    _assert_safe(csv_text(["a", "n"], rows))
    assert "-3" in _cells(csv_text(["a", "n"], rows))  # a number is a number, not a formula
    _assert_safe(frame_csv(pd.DataFrame({"a": HOSTILE, LINK: range(len(HOSTILE))})))


# --- the exports themselves ----------------------------------------------------------------------------------

def _evaluation() -> Evaluation:
    qs = [Question(id=f"q{i}", question=text, documents=[], gold_answers=["Paris"]) for i, text in enumerate(HOSTILE)]
    results = {(q.id, m): MethodResult(method=m, question_id=q.id, answers=[q.question])
               for q in qs for m in ("vanilla_rag", "@m")}
    ds = Dataset(name="hostile", path="/nowhere/hostile.jsonl", questions=qs)
    summary = summarize(ds, results, methods=["vanilla_rag", "@m"], model="m")
    return Evaluation(summary=Summary.model_validate(summary), results=results, dataset=ds)


def _evaluate_questions_csv() -> str:
    """Evaluate → "Questions (CSV)": the question table of an evaluation whose questions, answers and a method name
    are hostile."""
    from components import evaluate as view

    ev = _evaluation()
    return view.csv_bytes(view.question_frame(ev, link_dataset="hostile")).decode("utf-8")


def _labels() -> list[Label]:
    when = datetime(2026, 1, 1, tzinfo=timezone.utc)
    return [Label(uid=f"u{i}", dataset="hostile", question_id=cell, version=1, created_at=when, analyst=cell,
                  note=cell, answers=[cell], best_method=None) for i, cell in enumerate(HOSTILE)]


def _labels_csv() -> str:
    """Label → "Labels (CSV)", and ``python -m backend labels export`` (both ``backend.labels.files.render``)."""
    from components import labels as view

    return view.export_bytes(_labels(), "csv").decode("utf-8")


#: every CSV export: the function producing it (as the source names it) → how this test produces it
CSV_EXPORTS = {"csv_bytes": _evaluate_questions_csv, "export_bytes": _labels_csv}
#: producers of the other downloads (not CSV: nothing for a spreadsheet to run)
OTHER_EXPORTS = {"jsonl_bytes", "dumps", "report_html", "to_jsonl"}


@pytest.mark.parametrize("name", sorted(CSV_EXPORTS))
def test_every_csv_export_neutralises_formula_cells(name):
    _assert_safe(CSV_EXPORTS[name]())


def test_the_labels_export_still_reads_back_exactly(tmp_path):
    path = tmp_path / "labels.csv"
    path.write_bytes(render(_labels(), "csv").encode("utf-8"))
    assert read_labels(path) == _labels()


# --- the rule, on the source ---------------------------------------------------------------------------------

def _sources() -> list[Path]:
    files = [ROOT / "app.py"]
    for folder in ("backend", "components", "pages"):
        files += [p for p in (ROOT / folder).rglob("*.py") if "__pycache__" not in p.parts]
    return sorted(files)


def _called(node: ast.AST) -> set[str]:
    """The names of what ``node`` calls or hands on (``partial(f, …)``, ``lambda: f(…)``)."""
    names = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            func = sub.func
            names.add(func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else "")
            if names & {"partial"} and sub.args and isinstance(sub.args[0], ast.Name):
                names.add(sub.args[0].id)
    return names - {""}


def test_only_backend_exports_writes_csv():
    """A module writing CSV itself would bypass the neutraliser: it must call ``backend.exports`` instead."""
    offenders = []
    for path in _sources():
        if path == ROOT / "backend" / "exports.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("to_csv", "writer", "DictWriter"):
                if node.attr == "to_csv" or (isinstance(node.value, ast.Name) and node.value.id == "csv"):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.attr}")
    assert not offenders, "write CSV through backend.exports (csv_text / frame_csv): " + ", ".join(offenders)


def test_every_download_comes_from_a_known_producer():
    """A new download button fails here until its producer is listed: in CSV_EXPORTS (and so tested above) if it
    writes CSV, in OTHER_EXPORTS if not."""
    unknown, found = [], set()
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "download_button"):
                continue
            data = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "data"),
                                                                None)
            producers = _called(data) if data is not None else set()
            known = producers & (set(CSV_EXPORTS) | OTHER_EXPORTS)
            found |= known
            if not known:
                unknown.append(f"{path.relative_to(ROOT)}:{node.lineno} ({', '.join(sorted(producers)) or '?'})")
    assert not unknown, "downloads from producers this test does not know: " + "; ".join(unknown)
    assert set(CSV_EXPORTS) <= found, "a CSV export listed here is no longer offered: update CSV_EXPORTS"
