"""Dataset loaders with validation that names the file, line and field of every problem.

Two input formats, auto-detected per file:

* **project**: JSONL, one question per line (see docs/architecture.md §3), optionally inside a folder with
  ``questions.jsonl`` and ``sources.json``;
* **ramdocs**: the RAMDocs JSONL release (``question``, ``documents[{text, type, answer}]``,
  ``gold_answers``, ``wrong_answers``, ``disambig_entity``); each document becomes its own source.

Problems are collected (not raised one at a time) so a user fixes a file in one pass. Long documents
are kept whole and reported as a note, never truncated.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from backend import files
from backend.errors import expected_fields, field_path, problem, where
from backend.paths import SAMPLE_DATA
from backend.schema import Dataset, DocLabel, Document, Question, Source

#: Documents longer than this load fine but are reported, since they slow every reader down.
LONG_DOCUMENT_CHARS = 100_000
MAX_REPORTED_PROBLEMS = 50
#: A line whose JSON nests deeper than the interpreter's recursion limit (about a thousand levels).
NESTED = "nested too deeply"
BUNDLED = ("ramdocs_dev", "multisource", "multisource_beta", "scenarios")


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.field}: {self.message}"


class DatasetError(ValueError):
    """A dataset could not be loaded; ``problems`` lists every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        shown = "\n".join(str(p) for p in problems[:5])
        more = f"\n... and {len(problems) - 5} more" if len(problems) > 5 else ""
        super().__init__(shown + more)


@dataclass
class _Collector:
    problems: list[Problem] = field(default_factory=list)
    notes: list[Problem] = field(default_factory=list)

    def add(self, file: str, line: int, fld: str, message: str) -> None:
        self.problems.append(Problem(file, line, fld, message))


def bundled_datasets() -> dict[str, Path]:
    """The datasets shipped in ``sample_data/`` that exist in this checkout, by name."""
    return {name: SAMPLE_DATA / name for name in BUNDLED if (SAMPLE_DATA / name / "questions.jsonl").is_file()}


def resolve_paths(path: str | Path) -> tuple[Path, Path | None]:
    """The questions file and the optional sources.json for a dataset path (file or folder). Only looks (stat):
    a pipe or device among them is refused when read (``backend.files``), never opened here."""
    p = Path(path)
    if p.is_dir():
        questions = p / "questions.jsonl"
        if not questions.exists():
            raise DatasetError([Problem(str(p), 0, "(folder)", "no questions.jsonl in this folder")])
        sources = p / "sources.json"
        return questions, sources if sources.exists() else None
    if not p.exists():
        raise DatasetError([Problem(str(p), 0, "(file)", "no such file or folder")])
    sibling = p.parent / "sources.json"
    return p, sibling if p.name == "questions.jsonl" and sibling.exists() else None


#: What a dataset path from a page is, in ``backend.files``' refusals.
DATASET = "dataset"


def confined_path(path: str | Path) -> Path:
    """A dataset path from a page or a link, resolved (``~``, symlinks) inside the deployment's open folders;
    ``DatasetError`` with one problem otherwise, before anything there is looked at."""
    try:
        return files.confine(path, DATASET)
    except files.FileRefused as err:
        raise DatasetError([Problem(str(path).strip(), 0, "(file)", err.reason)]) from None


def load_dataset(path: str | Path, format: str = "auto", name: str | None = None, *,
                 confined: bool = False) -> Dataset:
    """Load and validate a dataset; raise ``DatasetError`` listing every problem found. ``confined``: a path from
    a page or a link, read only inside the deployment's open folders (``backend.files.confine``), each of its files
    checked after symlinks; refused in one problem before anything is looked at."""
    given = Path(path)
    confine_as = DATASET if confined else None
    if confined:
        path = confined_path(path)
    questions_path, sources_path = resolve_paths(path)
    col = _Collector()
    sources = _load_sources(sources_path, col, confine_as) if sources_path else []
    questions, detected = _load_questions(questions_path, format, col, confine_as)
    _check_cross_references(questions, sources, sources_path is not None, str(questions_path), col)
    if col.problems:
        extra = len(col.problems) - MAX_REPORTED_PROBLEMS
        shown = col.problems[:MAX_REPORTED_PROBLEMS]
        if extra > 0:
            shown.append(Problem(str(questions_path), 0, "(file)", f"... and {extra} more problems"))
        raise DatasetError(shown)
    p = Path(path)
    return Dataset(name=name or (given.name if p.is_dir() else given.stem), path=str(p),
                   questions=[q for q, _ in questions], sources=sources, format=detected,
                   notes=[str(n) for n in col.notes])


# --- questions ------------------------------------------------------------------------------------

def _read_lines(path: Path, col: _Collector, confine_as: str | None = None) -> list[tuple[int, str]]:
    try:
        raw = files.read_bytes(path, confine_as=confine_as)
    except files.FileRefused as err:  # a pipe, device, folder, over the size cap, outside the open folders
        col.add(str(path), 0, "(file)", err.reason)
        return []
    lines: list[tuple[int, str]] = []
    for lineno, chunk in enumerate(raw.split(b"\n"), start=1):
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError as err:
            col.add(str(path), lineno, "(line)", f"not valid UTF-8 (at byte {err.start} of the line); "
                    "save the file as UTF-8")
            continue
        if text.strip():
            lines.append((lineno, text.lstrip("\ufeff") if lineno == 1 else text))
    if not lines and not col.problems:
        col.add(str(path), 1, "(file)", "empty file: no questions")
    return lines


def _is_ramdocs_row(row: dict[str, Any]) -> bool:
    docs = row.get("documents")
    return ("id" not in row and isinstance(docs, list) and bool(docs) and isinstance(docs[0], dict)
            and "type" in docs[0] and "label" not in docs[0])


def _load_questions(path: Path, format: str, col: _Collector,
                    confine_as: str | None = None) -> tuple[list[tuple[Question, int]], str]:
    fname = str(path)
    rows: list[tuple[int, dict[str, Any]]] = []
    for lineno, text in _read_lines(path, col, confine_as):
        try:
            row = json.loads(text)
        except json.JSONDecodeError as err:
            col.add(fname, lineno, "(line)", f"invalid JSON: {err.msg} at column {err.colno}")
            continue
        except RecursionError:  # json's C decoder stops at the interpreter's recursion limit
            col.add(fname, lineno, "(line)", NESTED)
            continue
        if not isinstance(row, dict):
            col.add(fname, lineno, "(line)", f"expected a JSON object, got {type(row).__name__}")
            continue
        rows.append((lineno, row))
    detected = format
    if format == "auto":
        detected = "ramdocs" if rows and all(_is_ramdocs_row(r) for _, r in rows[:5]) else "project"
    out: list[tuple[Question, int]] = []
    for lineno, row in rows:
        if detected == "ramdocs":
            row = _from_ramdocs(row, lineno, fname, col)
            if row is None:
                continue
        q = _validate_question(row, lineno, fname, col)
        if q is not None:
            out.append((q, lineno))
    return out, detected


def _from_ramdocs(row: dict[str, Any], lineno: int, fname: str, col: _Collector) -> dict[str, Any] | None:
    """RAMDocs row -> project-format row (labels from ``type``/``answer``; "unknown" means no answer)."""
    qid = f"q{lineno:04d}"
    docs = row.get("documents")
    if not isinstance(docs, list):
        col.add(fname, lineno, "documents", "missing or not a list")
        return None
    converted = []
    for i, d in enumerate(docs):
        if not isinstance(d, dict):
            col.add(fname, lineno, f"documents[{i}]", f"expected an object, got {type(d).__name__}")
            continue
        answer = d.get("answer")
        label = {"type": d.get("type"), "answer": None if answer in (None, "unknown") else answer}
        converted.append({"id": f"{qid}-d{i + 1}", "text": d.get("text"), "label": label})
    meta = {k: v for k, v in row.items() if k not in ("question", "documents", "gold_answers", "wrong_answers")}
    return {"id": qid, "question": row.get("question"), "documents": converted,
            "gold_answers": row.get("gold_answers", []), "wrong_answers": row.get("wrong_answers", []),
            "meta": meta}


def _validate_question(row: dict[str, Any], lineno: int, fname: str, col: _Collector) -> Question | None:
    row = dict(row)
    row.setdefault("id", f"q{lineno:04d}")  # stable id from the line number
    docs = row.get("documents")
    if isinstance(docs, list):
        row["documents"] = [
            {"id": f"{row['id']}-d{i + 1}", **d} if isinstance(d, dict) and "id" not in d else d
            for i, d in enumerate(docs)
        ]
    try:
        q = Question.model_validate(row)
    except ValidationError as err:
        _add_problems(col, fname, lineno, err, Question, _field_path)
        return None
    if not q.documents:
        col.add(fname, lineno, "documents", "empty list: a question needs at least one document")
    for i, d in enumerate(q.documents):
        if len(d.text) > LONG_DOCUMENT_CHARS:
            col.notes.append(Problem(fname, lineno, f"documents[{i}].text",
                                     f"{len(d.text):,} characters: kept whole (long documents slow the reader)"))
    return q


def _field_path(loc: tuple[Any, ...]) -> str:
    return field_path(loc) or "(line)"


def _add_problems(col: _Collector, fname: str, lineno: int, err: ValidationError, model: type,
                  path: Callable[[tuple[Any, ...]], str]) -> None:
    """Each problem of ``err`` at its field (``path(loc)``). Fields the format does not have are counted at the
    object holding them, with the names it has there, never named themselves: a file given as a dataset may be a
    secrets file, whose keys are content too."""
    unknown: dict[tuple[Any, ...], int] = {}
    for e in err.errors():
        if e["type"] == "extra_forbidden":
            unknown[where(e)] = unknown.get(where(e), 0) + 1
        else:
            col.add(fname, lineno, path(tuple(e["loc"])), _message(e))
    for loc, n in unknown.items():
        names = expected_fields(model, loc)
        hints = ([f"expected only {', '.join(names)}"] if names else []) + \
            (["put free-form data under 'meta'"] if "meta" in names else [])
        col.add(fname, lineno, path(loc), ("unknown field" if n == 1 else f"{n} unknown fields")
                + (f" ({'; '.join(hints)})" if hints else ""))


def _message(error: dict[str, Any]) -> str:
    """The problem in words, never the value (a dataset may be any file: ``backend.errors``); an unknown field is
    ``_add_problems``'s."""
    return problem(error)


def _check_cross_references(questions: list[tuple[Question, int]], sources: list[Source], have_sources: bool,
                            fname: str, col: _Collector) -> None:
    known = {s.name for s in sources}
    seen_q: dict[str, int] = {}
    seen_d: dict[str, int] = {}
    for q, lineno in questions:
        if q.id in seen_q:
            # the line it repeats, not the value: a problem never quotes the file (backend.errors)
            col.add(fname, lineno, "id", f"duplicate question id (first at line {seen_q[q.id]})")
        seen_q.setdefault(q.id, lineno)
        for i, d in enumerate(q.documents):
            if d.id in seen_d:
                col.add(fname, lineno, f"documents[{i}].id", f"duplicate document id (first at line {seen_d[d.id]})")
            seen_d.setdefault(d.id, lineno)
            if have_sources and d.source is not None and d.source not in known:
                col.add(fname, lineno, f"documents[{i}].source",
                        f"unknown source: not a name in sources.json ({len(known)} named there)")


# --- sources.json ---------------------------------------------------------------------------------

def _load_sources(path: Path, col: _Collector, confine_as: str | None = None) -> list[Source]:
    fname = str(path)
    try:
        text = files.read_bytes(path, confine_as=confine_as).decode("utf-8")
    except files.FileRefused as err:
        col.add(fname, 0, "(file)", err.reason)
        return []
    except UnicodeDecodeError as err:
        col.add(fname, 1, "(file)", f"not valid UTF-8 (byte {err.start}); save the file as UTF-8")
        return []
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as err:
        col.add(fname, err.lineno, "(file)", f"invalid JSON: {err.msg} at column {err.colno}")
        return []
    except RecursionError:
        col.add(fname, 1, "(file)", NESTED)
        return []
    if not isinstance(raw, list):
        col.add(fname, 1, "(file)", "expected a JSON list of sources: [{\"name\": ..., \"true_reliability\": ...}]")
        return []
    out: list[Source] = []
    names: set[str] = set()
    for i, entry in enumerate(raw):
        lineno = _line_of(text, entry.get("name") if isinstance(entry, dict) else None)
        try:
            src = Source.model_validate(entry)
        except ValidationError as err:
            _add_problems(col, fname, lineno, err, Source,
                          lambda loc, i=i: f"[{i}]" + (("." + field_path(loc)) if loc else ""))
            continue
        if src.name in names:
            col.add(fname, lineno, f"[{i}].name", f"duplicate source name (entry {i} repeats an earlier one)")
        names.add(src.name)
        out.append(src)
    return out


def _line_of(text: str, name: Any) -> int:
    """1-based line of a source entry (found by its name), for error messages."""
    if isinstance(name, str):
        pos = text.find(json.dumps(name, ensure_ascii=False))
        if pos >= 0:
            return text.count("\n", 0, pos) + 1
    return 1


def to_jsonl(questions: list[Question]) -> str:
    """Project-format JSONL for questions (used by the sample builder and exports)."""
    return "".join(q.model_dump_json(exclude_none=True) + "\n" for q in questions)


__all__ = ["DatasetError", "Problem", "bundled_datasets", "load_dataset", "to_jsonl",
           "Dataset", "Document", "DocLabel", "Question", "Source"]
