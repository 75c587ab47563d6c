"""Batch evaluation: every (question, method) pair through the ``Runner``, one line per pair in ``OUT/results.jsonl``
(appended, flushed and fsync'd as each pair finishes, so a kill loses at most the pairs in flight), then
``OUT/summary.json``.

An engine runs the pending pairs; everything else (what to run, the results file, the summary) is this module's,
shared. ``local_engine`` (the default): ``concurrency`` questions at once on this process's event loop.
``backend.evaluate_ray.ray_engine``: questions fanned out to the workers of a Ray cluster, each with its own runner;
this process writes the rows as they come back.

``results.jsonl`` rows: ``{"dataset", "model", "question_id", "method", "result": MethodResult}``. The rows
hold method output only (the runner strips the truth); every metric is computed from them by ``summarize``
through ``backend.scoring``, so a summary can be recomputed at any time from the rows.

Resuming (``resume=True``) skips the pairs that already have a row; a pair whose row has an ``error`` is run again
only with ``retry_errors=True``, and its new row supersedes the old one (``load_results``: the last row of a pair
wins). A half-written last line (a kill mid-write) is cut off and reported in the summary's ``notes``, never
dropped silently; an unreadable line elsewhere is reported too and its pair run again. One run at a time writes a
folder: a second one (another process or app session) is refused with ``EvaluationError`` while the first runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from pydantic import ValidationError

from backend import files
from backend.cost import Budget, calls_cost
from backend.errors import first
from backend.methods import SPECS
from backend.methods.base import run_sync
from backend.paths import PRIVATE_FILE_MODE, open_private, private_dir, write_private
from backend.schema import Dataset, LLMCall, MethodResult, Question
from backend.schema.summary import Scores, Summary
from backend.scoring import (PAPER_METRICS, accuracy, count_folds, paper_score, precision_recall_f1, refused,
                             risk_fold, risk_metrics, strict_em)

RESULTS = "results.jsonl"
SUMMARY = "summary.json"
LOCK = ".lock"  # held while a run writes the folder (folder_lock)
#: A run reads its own results file whole, however large a long run made it (regular files only); a reader of results
#: named on a page gets the deployment's size cap instead (``backend.outputs``).
WHOLE = sys.maxsize

Pair = tuple[str, str]                        # (question id, method)
Progress = Callable[[int, int], None]         # (questions done, questions to run)
#: Runs the pending questions: ``(runner, work, todo, write, concurrency, on_progress) -> notes``; ``todo[question
#: id]`` lists the question's pending methods and ``write`` takes each result (once) as it finishes. A run with a cost
#: limit also passes ``stop=``: a function that turns true once no further question may start.
Engine = Callable[[Any, list[Question], dict[str, list[str]], Callable[[MethodResult], None], int, Progress | None],
                  list[str]]


class EvaluationError(ValueError):
    """The output folder cannot be used as asked (exists without resume, written for another dataset/model)."""


# --- the results file ----------------------------------------------------------------------------------------

def repair_tail(path: Path) -> str | None:
    """Cut a half-written last line (no trailing newline, or not valid JSON) back to the last complete line;
    return what was cut, as a note, or None when the file was whole."""
    if not path.exists():
        return None
    data = files.read_bytes(path, WHOLE)  # a pipe or device in the folder is refused, never read
    if not data:
        return None
    body, _, last = data.rstrip(b"\n").rpartition(b"\n")
    whole = data.endswith(b"\n")
    if whole:
        try:
            json.loads(last)
            return None
        except (ValueError, RecursionError):
            pass
    keep = len(body) + 1 if body else 0
    with open(path, "r+b") as fh:
        fh.truncate(keep)
        fh.flush()
        os.fsync(fh.fileno())
    line_no = body.count(b"\n") + (2 if body else 1)
    return (f"{path}:{line_no}: the last line was half-written ({len(data) - keep} bytes, "
            f"{'not valid JSON' if whole else 'no newline'}); removed, its pair is run again")


def read_rows(path: str | Path, *, max_bytes: int | None = WHOLE,
              confine_as: str | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows of a results file in order, and one note per line that could not be read. Only a regular file is
    read (``backend.files``: ``FileRefused`` otherwise); ``max_bytes`` None: the deployment's size cap;
    ``confine_as``: a path from a page, read only inside the open folders."""
    path = Path(path)
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    if not path.exists():
        return rows, notes
    text = files.read_text(path, max_bytes, confine_as=confine_as)
    lines = text.split("\n")
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        half = no == len(lines) and not text.endswith("\n")
        try:
            row = json.loads(line)
            if not isinstance(row, dict) or not {"question_id", "method", "result"} <= row.keys():
                raise ValueError("missing question_id, method or result")
        except RecursionError:
            notes.append(f"{path}:{no}: unreadable (nested too deeply); its pair counts as not run")
            continue
        except ValueError as err:
            what = "half-written (no newline)" if half else f"unreadable ({err})"
            notes.append(f"{path}:{no}: {what}; its pair counts as not run")
            continue
        row["_line"] = no
        rows.append(row)
    return rows, notes


def load_results(path: str | Path) -> tuple[dict[Pair, MethodResult], list[str]]:
    """``{(question id, method): MethodResult}`` from a results file (the last row of a pair wins: a re-run
    supersedes an error row) and notes on anything that could not be read."""
    return results_of(*read_rows(path), path)


def results_of(rows: list[dict[str, Any]], notes: list[str],
               path: str | Path) -> tuple[dict[Pair, MethodResult], list[str]]:
    """``load_results`` of rows already read (``read_rows``): each pair's newest ``MethodResult``; ``notes`` grows."""
    out: dict[Pair, MethodResult] = {}
    for row in rows:
        try:
            out[(row["question_id"], row["method"])] = MethodResult.model_validate(row["result"])
        except ValidationError as err:
            notes.append(f"{path}:{row['_line']}: {first(err, 'result')}; its pair counts as not run")
    return out, notes


def append_row(fh, dataset: str, model: str, result: MethodResult, **extra: Any) -> None:
    """One pair's row, written whole and on disk before returning (the only writer of results files)."""
    row = {"dataset": dataset, "model": model, "question_id": result.question_id, "method": result.method,
           **extra, "result": result.model_dump(mode="json")}
    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    fh.flush()
    os.fsync(fh.fileno())


# --- the run -------------------------------------------------------------------------------------------------

async def answer_question(runner, question: Question, methods: list[str],
                          on_result: Callable[[MethodResult], None]) -> None:
    """Each of ``methods`` on ``question`` as a run of its own, concurrently; ``on_result`` gets each result as it
    finishes. What both engines run per question, so their rows are the same."""
    async def one(name: str) -> None:
        on_result((await runner.arun(question, [name]))[name])

    await asyncio.gather(*(one(m) for m in methods))


async def _run_local(runner, work: list[Question], todo: dict[str, list[str]], write: Callable[[MethodResult], None],
                     concurrency: int, on_progress: Progress | None, stop: Callable[[], bool] | None = None) -> None:
    slots = asyncio.Semaphore(concurrency)
    finished = 0

    async def one_question(q: Question) -> None:
        nonlocal finished
        async with slots:
            if stop is not None and stop():  # a cost limit reached: no new question starts (those in flight finish)
                return
            await answer_question(runner, q, todo[q.id], write)  # the loop's one thread writes: no interleaving
        finished += 1
        if on_progress is not None:
            on_progress(finished, len(work))

    await asyncio.gather(*(one_question(q) for q in work))


def local_engine(runner, work: list[Question], todo: dict[str, list[str]], write: Callable[[MethodResult], None],
                 concurrency: int, on_progress: Progress | None, stop: Callable[[], bool] | None = None) -> list[str]:
    """``concurrency`` questions at once in this process; ``stop()`` true: start no further question."""
    run_sync(_run_local(runner, work, todo, write, concurrency, on_progress, stop))
    return []


def spending_limit(runner, max_cost: float | None) -> Budget | None:
    """The ``Budget`` a batch stops at (``max_cost`` US dollars), None without a limit; ``EvaluationError`` for a limit
    on a model whose price is unknown (it could never be reached)."""
    if max_cost is None:
        return None
    try:
        Budget.require_price(runner.llm.model, runner.llm.api_base)
    except ValueError as err:
        raise EvaluationError(str(err)) from None
    return Budget(max_cost)


def evaluate(runner, questions: list[Question], methods: list[str], out_dir: str | Path, resume: bool = False,
             retry_errors: bool = False, concurrency: int = 4, on_progress: Progress | None = None,
             gold: dict[str, Any] | None = None, engine: Engine = local_engine,
             max_cost: float | None = None, other_reading: bool = False) -> dict[str, Any]:
    """Run ``methods`` on ``questions``, append each pair's row to ``out_dir/results.jsonl``, write
    ``out_dir/summary.json`` and return the summary (``summarize``).

    ``max_cost``: a spending limit in US dollars for this run (``backend.cost.Budget``): once the calls written have
    cost that much, no further question starts; those in flight finish (their calls are being paid for) and their
    rows are kept, the summary says why it stopped, and ``resume`` continues (with a limit of its own). Needs a
    model whose price is known.

    ``engine``: ``local_engine`` runs ``concurrency`` questions at once in this process;
    ``backend.evaluate_ray.ray_engine(address, workers)`` fans them out to a Ray cluster, ``concurrency`` at once
    per worker.
    ``resume``: keep the existing rows and run only the pairs without one (and, with ``retry_errors``, those whose
    row is an error). Without ``resume`` an existing non-empty results file is an error (nothing is overwritten).
    ``gold``: where the questions' gold answers came from when not from the dataset (``backend.labels.gold``),
    recorded in the summary. Raises ``EvaluationError`` for an unusable ``out_dir`` or a Ray cluster whose workers
    cannot start.

    ``other_reading``: also run every pair with the other reading (``backend.methods.reading``: tolerant or paper)
    into ``out_dir/other_reading/`` (its own results file, resumable alike), from the reply cache: a reply the other
    reading needs and nobody asked for before (a prompt built from an answer read the other way) is not requested
    (replay mode: the row is counted ``not_replayed``), except from the offline models, whose replies cost nothing.
    Each method's summary entry then has ``other_reading``: that reading's metrics on the same questions."""
    out = Path(out_dir)
    budget = spending_limit(runner, max_cost)
    with folder_lock(out):
        results, notes = run_pairs(runner, questions, methods, out, resume=resume, retry_errors=retry_errors,
                                   concurrency=concurrency, on_progress=on_progress, engine=engine, budget=budget)
        summary = summarize(runner.dataset, results, methods=methods, questions=questions, model=runner.llm.model,
                            notes=notes, gold=gold, stopped=_stopped(budget, notes))
        if other_reading and (why := other_reading_refused(runner)):
            summary["notes"].append(why)
        elif other_reading and not _stopped(budget, notes):
            others, other_notes = run_pairs(other_reading_runner(runner), questions, methods, out / OTHER_READING,
                                            resume=True, retry_errors=retry_errors, concurrency=concurrency,
                                            engine=engine)
            add_other_reading(summary, runner, others, questions)
            summary["notes"] += [f"other reading: {n}" for n in other_notes]
        summary = Summary.model_validate(summary).as_dict()
        write_json(out / SUMMARY, summary)  # through the model: the file is what backend.outputs reads
    return summary


#: The folder, inside an evaluation's, of the same pairs run with the other reading (``evaluate``'s ``other_reading``).
OTHER_READING = "other_reading"


def other_reading_refused(runner) -> str | None:
    """Why the other reading cannot be run from the reply cache (a run without one, of a model whose replies are not
    computed here), else None."""
    if runner.llm.model.startswith("offline/") or runner.cache is not None:
        return None
    return ("other reading not run: this run has no reply cache to read the other way from (it would have to call "
            "the model again); run with the cache on, or with --no-other-reading")


def other_reading_runner(runner):
    """A copy of ``runner`` reading replies the other way, answering from the reply cache only (a miss is an error,
    never a request), except with the offline models, whose replies are computed here and cost nothing."""
    import dataclasses

    from backend.methods.reading import other

    llm = runner.llm if runner.llm.model.startswith("offline/") else runner.llm.model_copy(
        update={"cache_mode": "replay"})
    return dataclasses.replace(runner, reading=other(runner.reading), llm=llm, log=None)


def not_replayed(result: MethodResult) -> bool:
    """The other reading needed a reply the cache does not hold (``other_reading_runner``'s replay mode)."""
    return bool(result.error) and ": replay_miss: " in result.error


def add_other_reading(summary: dict[str, Any], runner, others: dict[Pair, MethodResult],
                      questions: list[Question]) -> None:
    """Each method's ``other_reading`` entry of ``summary``: the other reading's metrics over the rows it could run."""
    from backend.methods.reading import other

    theirs_reading = other(runner.reading)
    others = {k: r for k, r in others.items() if r.reading == theirs_reading}  # rows of that reading only
    other_summary = summarize(runner.dataset, {k: r for k, r in others.items() if not not_replayed(r)},
                              methods=list(summary["methods"]), questions=questions)
    for m, entry in summary["methods"].items():
        theirs = other_summary["methods"][m]
        entry["other_reading"] = {"reading": theirs_reading,
                                  "scores": {k: theirs[k] for k in Scores.model_fields if k in theirs},
                                  "risk": theirs.get("risk"),
                                  "not_replayed": sum(not_replayed(r) for (q, mm), r in others.items() if mm == m)}


def write_json(path: Path, data: Any) -> None:
    write_private(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def run_pairs(runner, questions: list[Question], methods: list[str], out: Path, resume: bool = False,
              retry_errors: bool = False, concurrency: int = 4, on_progress: Progress | None = None,
              engine: Engine = local_engine, extra: Callable[[str], dict[str, Any]] | None = None,
              budget: Budget | None = None) -> tuple[dict[Pair, MethodResult], list[str]]:
    """The resumable part of a run (``evaluate``'s, shared by ``backend.whatif.campaign``): every pending
    (question, method) pair through ``engine``, one row each appended to ``out/results.jsonl``; returns every row's
    result (old and new) and notes on anything read or repaired. ``extra(question id)``: more fields for each row.
    ``budget``: charged with each row written; once reached no further question starts (``budget.stopped``)."""
    if concurrency < 1:
        raise EvaluationError("concurrency must be at least 1")
    with folder_lock(out):
        return _run_pending(runner, questions, methods, out, resume, retry_errors, concurrency, on_progress, engine,
                            extra, budget)


def refuse_existing(out: Path, resume: bool) -> None:
    """Without ``resume``, a folder whose results file has rows is refused: nothing there is overwritten."""
    path = out / RESULTS
    if path.exists() and path.stat().st_size and not resume:
        raise EvaluationError(f"{path}: already has results; resume them (--resume) or choose another folder")


@contextmanager
def folder_lock(out: Path) -> Iterator[None]:
    """Create ``out`` if needed and hold its lock for the block: one run at a time writes a folder (another process,
    or another session of the app, would run the pending pairs too and append duplicate rows, or rewrite the settings
    of a running attack). Re-entrant in one thread (``run_pairs`` inside ``evaluate``). An OS lock (flock), so a
    killed run leaves no stale lock; on a filesystem without flock (some network mounts) filelock falls back to a
    lock file, which a killed run leaves behind (delete ``.lock`` then). Raises ``EvaluationError`` when another run
    holds it."""
    if out.exists() and not out.is_dir():
        raise EvaluationError(f"{out}: exists and is not a folder")
    private_dir(out)  # owner-only: a run's rows hold its questions, documents and replies
    # one object per path: re-entrant per thread
    lock = FileLock(out.resolve() / LOCK, mode=PRIVATE_FILE_MODE, is_singleton=True)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise EvaluationError(f"{out}: another run is writing to this folder; wait for it to end (its progress is in "
                              f"{RESULTS}) or choose another folder") from None
    try:
        yield
    finally:
        lock.release()


def _run_pending(runner, questions: list[Question], methods: list[str], out: Path, resume: bool, retry_errors: bool,
                 concurrency: int, on_progress: Progress | None, engine: Engine,
                 extra: Callable[[str], dict[str, Any]] | None,
                 budget: Budget | None = None) -> tuple[dict[Pair, MethodResult], list[str]]:
    path = out / RESULTS
    dataset, model = runner.dataset.name, runner.llm.model
    notes: list[str] = []
    refuse_existing(out, resume)
    try:
        if (note := repair_tail(path)) is not None:
            notes.append(note)
        rows, read_notes = read_rows(path)
    except files.FileRefused as err:  # e.g. a pipe named results.jsonl in the folder
        raise EvaluationError(str(err)) from None
    notes += read_notes
    other = {(r.get("dataset"), r.get("model")) for r in rows} - {(dataset, model)}
    if other:
        d, m = sorted(other, key=str)[0]
        raise EvaluationError(f"{path}: holds results of dataset {d!r} with model {m!r}, not {dataset!r} with "
                              f"{model!r}; choose another folder")
    reading = getattr(runner, "reading", "tolerant")
    read_otherwise = sorted({str(_row_reading(r)) for r in rows} - {reading})
    if read_otherwise:  # one reading per folder: a summary of mixed rows would say neither
        raise EvaluationError(f"{path}: holds results read {read_otherwise[0]!r}, not {reading!r}; resume with "
                              f"--reading {read_otherwise[0]} or choose another folder")
    done, _ = load_results(path)
    todo: dict[str, list[str]] = {}
    for q in questions:
        pending = [m for m in methods if (q.id, m) not in done or (retry_errors and done[(q.id, m)].error)]
        if pending:
            todo[q.id] = pending
    work = [q for q in questions if q.id in todo]
    if on_progress is not None:
        on_progress(0, len(work))

    owner_gone = getattr(runner, "stop", None)  # set when whoever started the run is gone (backend.limits)
    if work:
        with open_private(path, "a") as fh:
            def write(result: MethodResult) -> None:
                if _cut_by_stop(result, owner_gone):  # no row: the pair stays to run, its replies stay cached
                    return
                append_row(fh, dataset, model, result, **(extra(result.question_id) if extra else {}))
                if budget is not None:
                    budget.charge(result)

            stops = [s for s in ((lambda: budget.reached) if budget is not None else None,
                                 owner_gone.is_set if owner_gone is not None else None) if s is not None]
            limit = {"stop": lambda: any(s() for s in stops)} if stops else {}
            notes += engine(runner, work, todo, write, concurrency, on_progress, **limit)
    results, load_notes = load_results(path)
    notes += [n for n in load_notes if n not in notes]
    if budget is not None and budget.reached:
        left = [q for q in work if any((q.id, m) not in results for m in todo[q.id])]
        if left:
            notes.append(budget.stop(len(left)))
    if owner_gone is not None and owner_gone.is_set():
        left = [q for q in work if any((q.id, m) not in results for m in todo[q.id])]
        if left:
            notes.append(f"{OWNER_GONE}; {len(left)} question{'' if len(left) == 1 else 's'} not finished "
                         "(resume to continue: the replies received are cached)")
    return results, notes


def _row_reading(row: dict[str, Any]) -> Any:
    """How a results row's replies were read (a row written before readings: tolerant)."""
    result = row.get("result")
    return result.get("reading", "tolerant") if isinstance(result, dict) else "tolerant"


def _stopped(budget: Budget | None, notes: list[str]) -> str | None:
    """Why the run stopped before every pair had a row: its cost limit, or its owner gone; else None."""
    if budget is not None and budget.stopped:
        return budget.stopped
    return next((n for n in notes if n.startswith(OWNER_GONE)), None)


#: The note of a run stopped because its owner left (``backend.limits``).
OWNER_GONE = "stopped: the session that started this run ended (nobody could see it)"


def _cut_by_stop(result: MethodResult, stop) -> bool:
    """A result the owner's stop cut short (its error is ``backend.limits.Stopped``'s): not a row of its pair."""
    return stop is not None and stop.is_set() and bool(result.error) and result.error.startswith("Stopped: ")


# --- the summary ---------------------------------------------------------------------------------------------

def _mean(xs: list[float], digits: int = 4) -> float | None:
    return round(sum(xs) / len(xs), digits) if xs else None


def _pct(k: int, n: int) -> float | None:
    return round(100 * k / n, 2) if n else None


def format_counts(calls: list[LLMCall]) -> dict[str, Any]:
    """How the replies were read (``LLMCall.read_status``): ``format_failures``, the percentage of replies the reader
    could not read (the method then took its paper's default), over the calls with a reply whose read was recorded
    (None when there is none: rows written before reads were recorded); ``unreadable_calls`` and ``lenient_calls``
    count them."""
    read = [c.read_status for c in calls if c.read_status is not None]
    unreadable = read.count("unreadable")
    return {"format_failures": _pct(unreadable, len(read)), "unreadable_calls": unreadable,
            "lenient_calls": read.count("lenient")}


def _unanswerable(q: Question) -> bool:
    """Labelled unanswerable by an analyst (``backend.labels.gold``): abstaining is the right answer."""
    return bool(q.meta.get("unanswerable")) and not q.gold_answers


def _scores(pairs: list[tuple[Question, MethodResult]]) -> dict[str, Any]:
    """The answer metrics of a group of rows, in percent. Errors are counted apart and scored as nothing: the
    metrics are over the rows without error whose question has gold answers or is labelled unanswerable
    (``scored``); on an unanswerable question every match means abstaining, and P/R/F1 leave it out.

    ``lenient_match`` and ``lenient_all_gold`` are the project's lenient match (``scoring.accuracy`` and
    ``scoring.strict_em``: "answer match (lenient)", "all gold, no wrong (lenient)"); the papers' own metrics follow
    under their keys (``scoring.PAPER_METRICS``: squad_em, squad_f1, gold_in_response, ramdocs_em)."""
    ok = [(q, r) for q, r in pairs if not r.error]
    gold = [(q, r) for q, r in ok if q.gold_answers or _unanswerable(q)]
    prf = [precision_recall_f1(r.answers, q.gold_answers) for q, r in gold if q.gold_answers]
    paper = {key: _mean([100 * v for q, r in gold
                         if (v := paper_score(key, r.answers, q, refused(r))) is not None], 2)
             for key in PAPER_METRICS}
    return {"n": len(pairs), "errors": len(pairs) - len(ok), "scored": len(gold),
            "lenient_match": _pct(sum(accuracy(r.answers, q.gold_answers) if q.gold_answers else refused(r)
                                      for q, r in gold), len(gold)),
            "lenient_all_gold": _pct(sum(strict_em(r.answers, q.gold_answers, q.wrong_answers) if q.gold_answers
                                         else refused(r) for q, r in gold), len(gold)),
            "precision": _mean([100 * p for p, _, _ in prf], 2), "recall": _mean([100 * r for _, r, _ in prf], 2),
            "f1": _mean([100 * f for _, _, f in prf], 2),
            "refusal_rate": _pct(sum(refused(r) for _, r in ok), len(ok)), **paper}


def reading_counts(results: list[MethodResult]) -> dict[str, Any]:
    """How much a method's decisions lean on the reading (``backend.methods.reading``): the reading its rows were
    read with ("mixed" when they differ), the decisions read, those the other reading would have read differently
    (``reading_dependent``, and as a percentage of the decisions), and the rows with at least one such decision."""
    ok = [r for r in results if not r.error]
    readings = sorted({r.reading for r in ok})
    decisions = sum(r.decisions_read for r in ok)
    dependent = sum(len(r.reading_differences) for r in ok)
    return {"reading": readings[0] if len(readings) == 1 else ("mixed" if readings else None),
            "decisions_read": decisions, "reading_dependent": dependent,
            "reading_dependent_pct": _pct(dependent, decisions),
            "rows_reading_dependent": sum(bool(r.reading_differences) for r in ok)}


def own_metric(method: str) -> str | None:
    """The key of the method's own paper's metric (``MethodSpec.paper_metric``: a ``scoring.PAPER_METRICS`` key, or
    "risk" for RC-RAG's risk and coverage); None for a method no paper scores (a test's toy)."""
    return SPECS[method].paper_metric if method in SPECS else None


def _slices(q: Question) -> dict[str, list[str]]:
    """The slices a question belongs to, per family (a question can be in several slices of the mix)."""
    out: dict[str, list[str]] = {}
    types = {d.label.type for d in q.documents if d.label}
    if types or len(q.gold_answers) > 1:
        mix = [t for t in ("misinfo", "noise") if t in types] + (["ambiguity"] if len(q.gold_answers) > 1 else [])
        out["mix"] = mix or ["clean"]
    if q.meta.get("scenario") is not None:
        out["scenario"] = [str(q.meta["scenario"])]
    out["documents"] = [str(len(q.documents))]
    return out


def summarize(dataset: Dataset, results: dict[Pair, MethodResult], methods: list[str] | None = None,
              questions: list[Question] | None = None, model: str | None = None,
              notes: list[str] | None = None, gold: dict[str, Any] | None = None,
              stopped: str | None = None) -> dict[str, Any]:
    """Per method: ``n`` rows, ``missing`` pairs (no row), ``errors``, accuracy / strict EM / precision / recall /
    F1 / refusal rate (percent, over ``scored`` rows: no error, gold answers known), mean calls, tokens and wall
    time per row, ``format_failures`` (percent of its replies it could not read: ``format_counts``), and, for a
    method that abstained at least once or is ``selective``, RC-RAG's folds and risk
    metrics (an abstention without a candidate answer is labelled by the ``reference`` method's candidate answer,
    RC-RAG's RAG answer to the same question, when RC-RAG ran on it: the benchmark's label, as in ``risk --also``;
    without it the row is ``unlabelled``);
    ``slices``: the same answer metrics per RAMDocs mix (misinfo / noise / ambiguity / clean), ``meta["scenario"]``
    and number of documents, where the data has them.

    ``questions`` (default: the dataset's) and ``methods`` (default: those with rows) fix what was asked for:
    a pair without a row is counted as ``missing``, never left out silently. ``gold``: where the gold answers came
    from when the questions carry analysts' labels instead of the dataset's (kept as the summary's ``gold``).

    Cost (``backend.cost.calls_cost``): per method ``cost_usd`` (its calls' known costs: a cache hit costs $0),
    ``saved_usd`` (what its cache hits saved) and ``cost_unknown_calls``; ``cost_usd`` in total; ``stopped``: why
    the run stopped before every pair had a row (a cost limit), else None."""
    questions = dataset.questions if questions is None else questions
    if methods is None:
        methods = list(dict.fromkeys(m for _, m in results))
    # the reference (``MethodSpec.reference``: RC-RAG) whose RAG answer labels another method's abstentions
    reference = next((n for n, s in SPECS.items() if s.reference), None)
    per: dict[str, Any] = {}
    for m in methods:
        rows = [(q, results[(q.id, m)]) for q in questions if (q.id, m) in results]
        calls = [c for _, r in rows for c in r.calls]
        entry: dict[str, Any] = {**_scores(rows), "missing": len(questions) - len(rows),
                                 "mean_calls": _mean([len(r.calls) for _, r in rows], 3),
                                 "cache_hits": sum(c.cache_hit for c in calls),
                                 "mean_prompt_tokens": _mean([sum(c.prompt_tokens for c in r.calls) for _, r in rows],
                                                             1),
                                 "mean_completion_tokens": _mean([sum(c.completion_tokens for c in r.calls)
                                                                  for _, r in rows], 1),
                                 "mean_wall_s": _mean([r.wall_s for _, r in rows], 3),
                                 **format_counts(calls), **calls_cost(calls),
                                 **reading_counts([r for _, r in rows]),
                                 "own_metric": own_metric(m)}
        if any(r.abstained for _, r in rows if not r.error) or (m in SPECS and SPECS[m].selective):
            ref = None if m == reference else reference  # RC-RAG's RAG answer labels abstentions, as in risk --also
            folds = [risk_fold(r, q, results.get((q.id, ref)) if ref else None) for q, r in rows]
            counts = count_folds(folds)
            entry["risk"] = {**counts, **risk_metrics(counts), "unlabelled": sum(f is None for f in folds)}
        slices: dict[str, dict[str, list]] = {}
        for q, r in rows:
            for family, names in _slices(q).items():
                for name in names:
                    slices.setdefault(family, {}).setdefault(name, []).append((q, r))
        entry["slices"] = {family: {name: _scores(group) for name, group in sorted(groups.items())}
                           for family, groups in slices.items()
                           if family != "documents" or len(groups) > 1}
        per[m] = entry
    missing = {m: e["missing"] for m, e in per.items() if e["missing"]}
    errors = {m: e["errors"] for m, e in per.items() if e["errors"]}
    known = [e["cost_usd"] for e in per.values() if e["cost_usd"] is not None]
    return {"dataset": dataset.name, "model": model, "questions": len(questions), "methods": per,
            "missing": missing, "errors": errors, "complete": not missing, "notes": list(notes or []),
            "gold": gold or {"from": "dataset"}, "cost_usd": round(sum(known), 6) if known else None,
            "stopped": stopped}


__all__ = ["answer_question", "append_row", "evaluate", "folder_lock", "refuse_existing", "run_pairs", "write_json",
           "load_results", "read_rows", "results_of", "repair_tail", "summarize", "format_counts", "local_engine", "Engine", "EvaluationError", "RESULTS", "SUMMARY"]
