"""The folders a batch run writes, read back as typed results: what the dashboard's pages and a notebook share.

* ``open_evaluation(path, find_dataset)``: an evaluation folder (``results.jsonl`` + ``summary.json``, written by
  ``backend.evaluate``) as an ``Evaluation``: its ``Summary``, every pair's ``MethodResult`` and the dataset;
* ``read_results(path, dataset)``: only the rows of a results file of one dataset (``Results``: what a review queue
  is built from);
* ``find_runs(root, dataset)``: the evaluation runs of a dataset under ``root/evaluations``, newest first;
* ``open_attack(path)``: an attack folder (``backend.whatif.campaign``) as an ``AttackResult``; ``find_attacks``
  and ``rows_written`` for the folders under a root.

Everything here only reads: a half-written last line or an unreadable line is left out and reported in ``notes``,
never repaired on disk (``backend.evaluate`` repairs on resume). A folder that cannot be shown raises
``ResultsError`` / ``AttackError`` saying what is wrong. For example, in a notebook::

    from backend.data import load_dataset
    from backend.outputs import open_evaluation
    ev = open_evaluation("out/eval", lambda name: load_dataset("sample_data/ramdocs_dev"))
    ev.summary.methods["vanilla_rag"].lenient_match      # the project's lenient answer match (none of the papers')
    ev.summary.methods["madam"].paper("ramdocs_em")       # a paper's own metric, by its key (scoring.PAPER_METRICS)
    ev.summary.methods["madam"].own_metric                # the key of the method's own paper's metric
    ev.summary.methods["madam"].other_reading             # the same rows read the other way, when it was run

A summary written before the papers' metrics were kept (keys ``accuracy``, ``strict_em``) loads with them as
``lenient_match`` and ``lenient_all_gold``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from backend import errors, files
from backend.evaluate import (OTHER_READING, RESULTS, SUMMARY, add_other_reading, load_results, read_rows, results_of,
                              summarize)
from backend.methods import METHODS
from backend.report.text import plural
from backend.schema import Dataset, MethodResult, Question
from backend.schema.summary import (AttackCell, AttackRates, AttackSettings, AttackSummary, GoldSource, MethodSummary,
                                    RiskSummary, Scores, Summary)
from backend.whatif.campaign import SETTINGS

M = TypeVar("M", bound=BaseModel)

Pair = tuple[str, str]  # (question id, method)


class ResultsError(ValueError):
    """A results file that cannot be shown (missing, empty, not a results file)."""


class AttackError(ValueError):
    """An attack folder that cannot be shown (missing, not an attack folder, not finished)."""


def method_order(names: Iterable[str]) -> list[str]:
    """Known methods in the registry's display order, then any others in the order given."""
    names = list(dict.fromkeys(names))
    return [m for m in METHODS if m in names] + [m for m in names if m not in METHODS]


def _first_error(err: ValidationError) -> str:
    """The first problem, named by field, never by value (``backend.errors``)."""
    return errors.first(err, "")


# --- evaluations ---------------------------------------------------------------------------------------------

class Results(BaseModel):
    """The rows of one results file (the last row of a pair wins), and notes on the lines that could not be read."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: Path                                   # the results.jsonl
    results: dict[Pair, MethodResult]
    dataset: str | None = None                   # what the rows name (the first pair's, when they name several)
    model: str | None = None
    notes: list[str] = Field(default_factory=list)

    @property
    def methods(self) -> list[str]:
        return method_order(m for _, m in self.results)


class Evaluation(BaseModel):
    """One batch evaluation. ``dataset`` is None when the rows name a dataset that is not loaded: then only the
    summary as written (``summary.json``) can be shown, not the questions."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    summary: Summary
    results: dict[Pair, MethodResult]
    dataset: Dataset | None = None
    path: Path | None = None                     # the results.jsonl
    notes: list[str] = Field(default_factory=list)

    @property
    def methods(self) -> list[str]:
        return self.summary.method_names

    @property
    def questions(self) -> list[Question]:
        """The dataset's questions that have a row, in the dataset's order (none without the dataset)."""
        if self.dataset is None:
            return []
        asked = {q for q, _ in self.results}
        return [q for q in self.dataset.questions if q.id in asked]

    @classmethod
    def of_run(cls, summary: dict[str, Any] | Summary, out_dir: str | Path, dataset: Dataset) -> Evaluation:
        """The evaluation ``backend.evaluate.evaluate`` just wrote to ``out_dir`` and returned as ``summary``."""
        path = Path(out_dir) / RESULTS
        summary = summary if isinstance(summary, Summary) else Summary.model_validate(summary)
        results, _ = load_results(path)
        return cls(summary=summary, results=results, dataset=dataset, path=path, notes=list(summary.notes))


#: What a results path from a page is, in ``backend.files``' refusals.
RESULTS_FILE = "results file"
ATTACK_FOLDER = "attack folder"


def _confined(path: str | Path, what: str, error: type[Exception]) -> Path:
    try:
        return files.confine(path, what)
    except files.FileRefused as err:
        raise error(str(err)) from None


def results_path(path: str | Path, *, confined: bool = False) -> Path:
    """A results.jsonl, or the folder holding one; ``ResultsError`` when there is none. ``confined``: a path from a
    page, refused outside the deployment's open folders before anything is looked at."""
    if not str(path).strip():
        raise ResultsError("Enter the path of a results.jsonl file or of the folder holding it.")
    p = _confined(path, RESULTS_FILE, ResultsError) if confined else Path(str(path).strip()).expanduser()
    if p.is_dir():
        if not (p / RESULTS).exists():  # a pipe or device there is refused when read, with its reason
            raise ResultsError(f"{p}: no {RESULTS} in this folder")
        return p / RESULTS
    if not p.exists():
        raise ResultsError(f"{p}: no such file or folder")
    return p


def _read(path: str | Path, confined: bool = False) -> Results:
    """The rows of a results file; ``ResultsError`` when it has none (or none that is a row of ``evaluate``)."""
    p = results_path(path, confined=confined)
    try:  # under the size cap, a regular file only (inside the open folders after symlinks, from a page)
        rows, notes = read_rows(p, max_bytes=None, confine_as=RESULTS_FILE if confined else None)
        results, notes = results_of(rows, notes, p)
    except files.FileRefused as err:
        raise ResultsError(f"{p}: cannot be read ({err.reason})") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ResultsError(f"{p}: cannot be read ({err})") from err
    if not results:
        if notes:
            raise ResultsError(f"{p}: not a results file of `evaluate` (rows {{dataset, model, question_id, "
                               f"method, result}}): " + "; ".join(notes[:3]) + (" …" if len(notes) > 3 else ""))
        raise ResultsError(f"{p}: has no results yet")
    names = sorted({(r.get("dataset"), r.get("model")) for r in rows}, key=str)
    name, model = names[0] if names else (None, None)
    if len(names) > 1:
        notes.append(f"{p}: rows of {len(names)} dataset / model pairs; showing those of {name} with {model} "
                     "scored against one dataset")
    return Results(path=p, results=results, dataset=name, model=model, notes=notes)


def read_results(path: str | Path, dataset: str, *, confined: bool = False) -> Results:
    """The rows of a results file (or of the folder holding one) for ``dataset``; ``ResultsError`` when the file is
    not a results file, has no rows yet or is of another dataset. ``confined``: a path from a page."""
    read = _read(path, confined)
    if read.dataset not in (None, dataset):
        raise ResultsError(f"{read.path}: the rows are of the dataset {read.dataset!r}, not {dataset!r}: pick that "
                           "dataset in the sidebar")
    return read


def _model_file(path: Path, model: type[M], error: type[Exception], kind: str, confine_as: str | None = None) -> M:
    """The JSON file at ``path`` as ``model``; ``error`` saying which file and what is wrong when it cannot be read
    or is not ``kind``."""
    try:
        data = json.loads(files.read_text(path, confine_as=confine_as))
    except files.FileRefused as err:  # a pipe, device, over the size cap, outside the open folders
        raise error(f"{path}: cannot be read ({err.reason})") from None
    except RecursionError:
        raise error(f"{path}: cannot be read (nested too deeply)") from None
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise error(f"{path}: cannot be read ({err})") from err
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise error(f"{path}: not {kind} ({_first_error(err)})") from err


def read_summary(path: str | Path, *, confined: bool = False) -> Summary:
    """A ``summary.json``; ``ResultsError`` when it cannot be read or is not an evaluation's summary."""
    return _model_file(Path(path), Summary, ResultsError, "a summary of `evaluate`",
                       RESULTS_FILE if confined else None)


def _stopped(path: Path, confined: bool = False) -> str | None:
    """Why the run that wrote ``path`` (a summary.json) stopped early (a cost limit), if it did and can be read: the
    rows alone cannot say it."""
    try:
        return read_summary(path, confined=confined).stopped if path.is_file() else None
    except ResultsError:
        return None


def open_evaluation(path: str | Path, find_dataset: Callable[[str], Dataset | None], *,
                    confined: bool = False) -> Evaluation:
    """A results file (or the folder holding ``results.jsonl``) written by ``evaluate`` (CLI or page), read only.
    The summary is recomputed from the rows when ``find_dataset(name)`` gives the dataset they name (questions: those
    with a row), else taken from ``summary.json`` beside them. Raises ``ResultsError`` with what is wrong.
    ``confined``: a path from a page, read only inside the deployment's open folders."""
    read = _read(path, confined)
    p, name, notes = read.path, read.dataset, list(read.notes)
    dataset = find_dataset(name) if name else None
    if dataset is not None:
        known = {q.id for q in dataset.questions}
        unknown = sorted({q for q, _ in read.results if q not in known})
        if unknown:
            notes.append(f"{plural(len(unknown), 'question id')} not in the dataset {name} (e.g. {unknown[0]}): "
                         "left out; was the dataset changed since the run?")
        asked = {q for q, _ in read.results}
        questions = [q for q in dataset.questions if q.id in asked]
        summary = summarize(dataset, read.results, methods=read.methods, questions=questions, model=read.model,
                            notes=notes, stopped=_stopped(p.parent / SUMMARY, confined))
        _with_other_reading(summary, dataset, read, questions, notes, confined)
        return Evaluation(summary=Summary.model_validate(summary), results=read.results, dataset=dataset, path=p,
                          notes=notes)
    if not (p.parent / SUMMARY).exists():
        raise ResultsError(f"{p}: the rows are of the dataset {name!r}, which is not loaded here, and there is no "
                           f"{SUMMARY} beside them: pick that dataset in the sidebar to score them")
    summary = read_summary(p.parent / SUMMARY, confined=confined)
    notes += [f"The dataset {name!r} is not loaded here: showing {p.parent / SUMMARY} as written; pick the "
              "dataset in the sidebar to see the questions and verdicts."]
    return Evaluation(summary=summary, results=read.results, dataset=None, path=p, notes=notes)


def _with_other_reading(summary: dict[str, Any], dataset: Dataset, read: Results, questions: list[Question],
                        notes: list[str], confined: bool) -> None:
    """Each method's ``other_reading`` of a recomputed ``summary``, from the rows beside the evaluation's
    (``OTHER_READING/results.jsonl``, written by ``evaluate(..., other_reading=True)``), as ``evaluate`` computes it;
    nothing when there are none. Read only, like the rest: an unreadable file is a note."""
    path = read.path.parent / OTHER_READING / RESULTS
    if not path.is_file():
        return
    try:
        rows, other_notes = read_rows(path, max_bytes=None, confine_as=RESULTS_FILE if confined else None)
        others, other_notes = results_of(rows, other_notes, path)
    except (files.FileRefused, OSError, UnicodeDecodeError) as err:
        notes.append(f"{path}: cannot be read ({getattr(err, 'reason', err)}); the other reading is not shown")
        return
    notes += other_notes
    readings = sorted({r.reading for r in read.results.values() if not r.error})
    if not others or len(readings) != 1:  # no row, or main rows of both readings (resumed with another --reading)
        return
    known = {q.id for q in questions}
    others = {(q, m): r for (q, m), r in others.items() if q in known and m in summary["methods"]}
    add_other_reading(summary, SimpleNamespace(dataset=dataset, reading=readings[0]), others, questions)


class RunInfo(BaseModel):
    """A results file found under ``<root>/evaluations/``: what a run picker shows."""

    model_config = ConfigDict(frozen=True)

    path: Path            # the results.jsonl
    dataset: str
    model: str | None
    modified: datetime

    @property
    def label(self) -> str:
        return f"{self.path.parent.name} · {self.modified:%Y-%m-%d %H:%M} · {self.model or 'model ?'}"


def _first_row(path: Path) -> dict | None:
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    row = json.loads(line)
                    return row if isinstance(row, dict) else None
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return None


def find_runs(root: str | Path, dataset: str) -> list[RunInfo]:
    """The runs under ``root/evaluations`` whose rows are of ``dataset``, newest first. A run folder holds one dataset
    (``evaluate`` refuses to mix), so its first row says which."""
    found = []
    for path in (Path(root) / "evaluations").glob(f"*/{RESULTS}"):
        row = _first_row(path)
        if row is None or row.get("dataset") != dataset:
            continue
        found.append(RunInfo(path=path, dataset=dataset, model=row.get("model"),
                             modified=datetime.fromtimestamp(path.stat().st_mtime)))
    return sorted(found, key=lambda r: (r.modified, str(r.path)), reverse=True)


# --- attacks -------------------------------------------------------------------------------------------------

class AttackRow(BaseModel):
    """One row of an attack's ``results.jsonl``: a method's result on an attacked question (k = 0: the clean one)."""

    model_config = ConfigDict(extra="allow")

    question_id: str
    method: str
    result: MethodResult
    dataset: str | None = None
    model: str | None = None
    k: int | None = None
    attack_of: str = ""         # the question attacked
    target: str = ""            # the wrong answer the passages state
    clean_documents: int | None = None


class AttackResult(BaseModel):
    """One attack folder: its settings (``attack.json``), summary and rows."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: Path
    settings: AttackSettings
    summary: AttackSummary
    rows: list[AttackRow] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @property
    def methods(self) -> list[str]:
        return method_order(self.summary.method_names)


def open_attack(path: str | Path, *, confined: bool = False) -> AttackResult:
    """The attack folder at ``path`` (or the folder of a file in it), read only. Raises ``AttackError`` saying what
    is wrong; rows that cannot be read are left out and reported in ``notes``. ``confined``: a path from a page,
    read only inside the deployment's open folders."""
    text = str(path).strip()
    if not text:
        raise AttackError("Enter the path of an attack folder (it holds attack.json and summary.json).")
    p = _confined(text, ATTACK_FOLDER, AttackError) if confined else Path(text).expanduser()
    confine_as = ATTACK_FOLDER if confined else None
    if p.is_file():
        p = p.parent
    if not p.is_dir():
        raise AttackError(f"{p}: no such folder")
    if not (p / SETTINGS).exists():
        raise AttackError(f"{p}: not an attack folder (no {SETTINGS}; `python -m backend attack --out DIR` or the "
                          "page's Run writes one)")
    if not (p / SUMMARY).exists():
        raise AttackError(f"{p}: the attack has no {SUMMARY} yet (it was stopped before the end): resume it with "
                          "the same settings")
    settings = _model_file(p / SETTINGS, AttackSettings, AttackError, "the settings of an attack", confine_as)
    summary = _model_file(p / SUMMARY, AttackSummary, AttackError, "the summary of an attack", confine_as)
    try:
        raw, notes = read_rows(p / RESULTS, max_bytes=None, confine_as=confine_as)
    except files.FileRefused as err:
        raise AttackError(f"{p / RESULTS}: cannot be read ({err.reason})") from None
    except (OSError, UnicodeDecodeError) as err:
        raise AttackError(f"{p}: cannot be read ({err})") from err
    rows = []
    for row in raw:
        try:
            rows.append(AttackRow.model_validate({k: v for k, v in row.items() if k != "_line"}))
        except ValidationError as err:
            notes.append(f"{p / RESULTS}:{row['_line']}: {_first_error(err)}; left out")
    return AttackResult(path=p, settings=settings, summary=summary, rows=rows, notes=notes)


def find_attacks(root: str | Path, dataset: str | None = None) -> list[tuple[Path, AttackSettings]]:
    """The attack folders directly under ``root`` (those with a readable ``attack.json``; of ``dataset`` when
    given), newest first, each with its settings."""
    root = Path(root)
    if not root.is_dir():
        return []
    found = []
    for folder in root.iterdir():
        try:  # the server's own folders; still never a pipe, nor a file over the size cap
            settings = AttackSettings.model_validate_json(files.read_bytes(folder / SETTINGS))
        except (files.FileRefused, ValidationError):
            continue
        if dataset is None or settings.dataset == dataset:
            found.append((folder.stat().st_mtime, folder.name, folder, settings))
    return [(folder, settings) for *_, folder, settings in sorted(found, key=lambda f: f[:2], reverse=True)]


def rows_written(folder: str | Path) -> int:
    """The rows in a folder's results.jsonl (lines; a half-written last one included)."""
    try:
        with open(Path(folder) / RESULTS, "rb") as fh:
            return sum(1 for line in fh if line.strip())
    except OSError:
        return 0


__all__ = ["AttackCell", "AttackError", "AttackRates", "AttackResult", "AttackRow", "AttackSettings", "AttackSummary",
           "Evaluation", "GoldSource", "MethodSummary", "Results", "ResultsError", "RiskSummary", "RunInfo", "Scores",
           "Summary", "find_attacks", "find_runs", "method_order", "open_attack", "open_evaluation", "read_results",
           "read_summary", "results_path", "rows_written"]
