"""Labels to and from files: CSV and JSONL, one label version per row, every field kept so an export imports back
exactly (``LabelStore.import_labels``) and can serve as gold answers (``backend.labels.gold``).

CSV cells holding lists (answers, wrong documents and sources) are JSON arrays. A text cell that a spreadsheet
would run as a formula (starting with ``= + - @``, a tab or a carriage return) is written with a leading ``'``,
which reading removes again, so the file is safe to open in a spreadsheet and still round-trips exactly.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from backend.labels.model import Label

FORMATS = ("csv", "jsonl")
FIELDS = ["uid", "dataset", "question_id", "version", "supersedes", "created_at", "analyst", "answers",
          "unanswerable", "conflict_type", "wrong_documents", "wrong_sources", "best_method", "note"]
LISTS = ("answers", "wrong_documents", "wrong_sources")
_FORMULA = re.compile(r"'*[=+\-@\t\r]")


class LabelFileError(ValueError):
    """A labels file that cannot be read; ``problems`` name the file, line and field."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


def _guard(text: str) -> str:
    return "'" + text if _FORMULA.match(text) else text


def _unguard(text: str) -> str:
    return text[1:] if text.startswith("'") and _FORMULA.match(text[1:]) else text


def to_jsonl(labels: Iterable[Label]) -> str:
    return "".join(json.dumps(lab.model_dump(mode="json"), ensure_ascii=False) + "\n" for lab in labels)


def to_csv(labels: Iterable[Label]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=FIELDS, lineterminator="\n")
    writer.writeheader()
    for lab in labels:
        row = lab.model_dump(mode="json")
        out = {}
        for name in FIELDS:
            value = row[name]
            if name in LISTS:
                out[name] = json.dumps(value, ensure_ascii=False)
            elif isinstance(value, bool):
                out[name] = "true" if value else "false"
            elif value is None:
                out[name] = ""
            else:
                out[name] = _guard(str(value))
        writer.writerow(out)
    return buf.getvalue()


def render(labels: Iterable[Label], fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r}: choose csv or jsonl")
    return to_csv(labels) if fmt == "csv" else to_jsonl(labels)


def _from_csv_row(row: dict[str, str]) -> dict:
    data: dict = {}
    for name, raw in row.items():
        if name is None:
            raise ValueError("more cells than the header has columns")
        raw = raw if raw is not None else ""
        if name in LISTS:
            value = json.loads(raw) if raw.strip() else []
            if not isinstance(value, list):
                raise ValueError(f"{name}: expected a JSON array")
            data[name] = value
        elif name == "unanswerable":
            if raw.strip().lower() not in ("true", "false", "1", "0", ""):
                raise ValueError(f"unanswerable: expected true or false, got {raw!r}")
            data[name] = raw.strip().lower() in ("true", "1")
        elif name in ("supersedes", "conflict_type", "best_method") and raw == "":
            data[name] = None
        else:
            data[name] = _unguard(raw)
    return data


def _problem(path: Path, line: int, err: Exception) -> str:
    if isinstance(err, ValidationError):
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "row"
        return f"{path}:{line}: {field}: {first['msg']}"
    return f"{path}:{line}: {err}"


def read_labels(path: str | Path) -> list[Label]:
    """Every label in a ``.csv`` or ``.jsonl`` export, in file order; ``LabelFileError`` lists each bad line."""
    path = Path(path)
    if not path.is_file():
        raise LabelFileError([f"{path}: no such file"])
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in ("csv", "jsonl", "json"):
        raise LabelFileError([f"{path}: expected a .csv or .jsonl labels file"])
    text = path.read_text(encoding="utf-8-sig")
    labels, problems = [], []
    if fmt == "csv":
        reader = csv.DictReader(io.StringIO(text))
        missing = [f for f in ("dataset", "question_id", "analyst") if f not in (reader.fieldnames or [])]
        if missing:
            raise LabelFileError([f"{path}:1: the header lacks {', '.join(missing)}"])
        for row in reader:
            try:
                labels.append(Label.model_validate(_from_csv_row(row)))
            except (ValueError, ValidationError) as err:
                problems.append(_problem(path, reader.line_num, err))
    else:
        for no, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                labels.append(Label.model_validate_json(line))
            except ValidationError as err:
                problems.append(_problem(path, no, err))
    if problems:
        raise LabelFileError(problems)
    return labels
