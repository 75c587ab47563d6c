"""Labels to and from files: CSV and JSONL, one label version per row, every field kept so an export imports back
exactly (``LabelStore.import_labels``) and can serve as gold answers (``backend.labels.gold``).

CSV cells holding lists (answers, wrong documents and sources, the labels an adjudicated one settles) are JSON
arrays. A text cell that a spreadsheet
would run as a formula (starting with ``= + - @``, a tab or a carriage return) is written with a leading ``'``,
which reading removes again, so the file is safe to open in a spreadsheet and still round-trips exactly.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from backend import errors, exports, files
from backend.labels.model import Label

FORMATS = ("csv", "jsonl")
#: ``analyst_source``: ``signed-in`` (the analyst is who signed in) or ``self-declared`` (a typed name; exports
#: written before it existed read as self-declared); ``question_fingerprint`` / ``carried_from``: see
#: ``backend.labels.identity``; ``kind`` / ``settles``: ``backend.labels.team`` (exports written before team
#: labelling read as analysts' labels settling nothing); ``seen_others``: saved after seeing the other analysts'
#: labels, not counted (exports written before it existed read as false).
FIELDS = ["uid", "dataset", "question_id", "version", "supersedes", "created_at", "analyst", "analyst_source",
          "answers", "unanswerable", "conflict_type", "wrong_documents", "wrong_sources", "best_method", "note",
          "question_fingerprint", "carried_from", "seen_others", "kind", "settles"]
#: Cells holding true or false.
BOOLEANS = ("unanswerable", "seen_others")
#: Cells read as None when empty (older exports lack the last three columns altogether).
OPTIONAL = ("supersedes", "conflict_type", "best_method", "question_fingerprint", "carried_from")
LISTS = ("answers", "wrong_documents", "wrong_sources", "settles")


class LabelFileError(ValueError):
    """A labels file that cannot be read; ``problems`` name the file, line and field."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


def to_jsonl(labels: Iterable[Label]) -> str:
    return "".join(json.dumps(lab.model_dump(mode="json"), ensure_ascii=False) + "\n" for lab in labels)


def to_csv(labels: Iterable[Label]) -> str:
    """Every text cell formula-safe (``backend.exports``: the one CSV writer); ``read_labels`` restores them."""
    rows = []
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
                out[name] = str(value)
        rows.append(out)
    return exports.csv_text(FIELDS, rows)


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
            try:
                value = json.loads(raw) if raw.strip() else []
            except json.JSONDecodeError:
                value = None
            if not isinstance(value, list):
                raise ValueError(f"{name}: expected a JSON array")
            data[name] = value
        elif name in BOOLEANS:
            if raw.strip().lower() not in ("true", "false", "1", "0", ""):
                raise ValueError(f"{name}: expected true or false")  # never the cell: a file may be any file
            data[name] = raw.strip().lower() in ("true", "1")
        elif name in OPTIONAL and raw == "":
            data[name] = None
        elif name in ("analyst_source", "kind") and raw == "":
            continue  # the default: self-declared, analyst
        else:
            data[name] = exports.restore(raw)
    return data


def _problem(path: Path, line: int, err: Exception) -> str:
    if isinstance(err, ValidationError):  # its str() quotes the input: the field and the problem only
        return f"{path}:{line}: {errors.first(err) if err.errors() else 'not a label'}"
    return f"{path}:{line}: {err}"


def read_labels(path: str | Path) -> list[Label]:
    """Every label in a ``.csv`` or ``.jsonl`` export, in file order; ``LabelFileError`` lists each bad line."""
    path = Path(path)
    if not path.exists():
        raise LabelFileError([f"{path}: no such file"])
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in ("csv", "jsonl", "json"):
        raise LabelFileError([f"{path}: expected a .csv or .jsonl labels file"])
    try:  # a regular file under the size cap only: a pipe or device is refused, never read
        text = files.read_text(path, encoding="utf-8-sig")
    except files.FileRefused as err:
        raise LabelFileError([str(err)]) from None
    labels, problems = [], []
    if fmt == "csv":
        reader = csv.DictReader(io.StringIO(text))
        try:
            missing = [f for f in ("dataset", "question_id", "analyst") if f not in (reader.fieldnames or [])]
        except csv.Error as err:
            raise LabelFileError([f"{path}:1: not CSV ({err})"]) from None
        if missing:
            raise LabelFileError([f"{path}:1: the header lacks {', '.join(missing)}"])
        while True:
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as err:  # e.g. a cell over the csv module's field size limit: the rest is unreadable
                problems.append(f"{path}:{reader.line_num + 1}: not CSV ({err})")  # the line it stopped in
                break
            try:
                labels.append(Label.model_validate(_from_csv_row(row)))
            except RecursionError:  # a list cell nested deeper than json reads
                problems.append(f"{path}:{reader.line_num}: nested too deeply")
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
