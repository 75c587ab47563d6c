"""Load MADAM-RAG debates recorded elsewhere into our trace model, so the Debate page can show them.

* The released code's output (HanNight/RAMDocs ``run_madam_rag.py``, one JSON line per RAMDocs question):
  ``{"round1": {"answers": [...], "explanations": [...], "aggregation": "..."}, "round2": {...},
  "final_aggregation": "..."}``. It keeps the answer and explanation sliced out of each reply (the answer
  keeps the text up to "Explanation", e.g. ``"3,559."``: ``madam.released_slice``, the one definition of that
  slicing, which the paper reading of a live run uses too), not the reply itself, and no question: the
  caller supplies the question whose documents the agents read, in order (agent k = document k).
  A round without ``aggregation`` is the early-stop case: [C] compared the answers, found them
  unchanged and reused the previous round's aggregation as ``final_aggregation``.
* Our own results: a ``MethodResult`` JSON object, or ``inspect --json`` output (``results.madam``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from backend import files
from backend.errors import describe
from backend.methods.madam import (HISTORY_MODES, attribute_answers, check_convergence, finalize,
                                   parse_aggregation, parse_turn, response_line)
from backend.schema import MadamAgent, MadamRound, MadamTrace, MethodResult, Question

RELEASED_NOTE = ("Loaded from the released code's output: it keeps each agent's answer and explanation, not "
                 "the reply, so replies are rebuilt as 'Answer: <answer> Explanation: <explanation>'; no call "
                 "records, no shuffle (the released code shows the aggregator the agents in order).")


#: what a file that is neither a released debate nor our own result is called in messages
NOT_A_TRACE = "not a MADAM-RAG debate trace"


class TraceFileError(ValueError):
    """A trace file that cannot be shown; the message names the file, the line and the problem."""


def _kind(value: Any) -> str:
    """A JSON value's type, for messages."""
    if value is None:
        return "null"
    for types, name in ((bool, "a boolean"), ((int, float), "a number"), (str, "a string"), (list, "a list"),
                        (dict, "an object")):
        if isinstance(value, types):
            return name
    return type(value).__name__


def _strings(value: Any, where: str) -> list[str]:
    """A list of strings (missing or null: empty); ValueError naming the field otherwise."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{where} is {_kind(value)}, expected a list of strings (one per agent)")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise ValueError(f"{where}[{i}] is {_kind(item)}, expected a string")
    return value


def _optional_string(value: Any, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{where} is {_kind(value)}, expected a string")
    return value


def _round_keys(row: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """The rounds in order, each checked to be an object (a hand-edited or foreign file fails here, named)."""
    rounds = sorted((int(m.group(1)), v) for k, v in row.items() if (m := re.fullmatch(r"round(\d+)", k)))
    if not rounds or [t for t, _ in rounds] != list(range(1, len(rounds) + 1)):
        have = ", ".join(f"round{t}" for t, _ in rounds) or "none"  # only round keys: the file's other keys are data
        raise ValueError(f"expected keys round1, round2, … in order (round keys found: {have})")
    for t, data in rounds:
        if not isinstance(data, dict):
            raise ValueError(f"round{t} is {_kind(data)}, expected an object with answers and explanations")
    return rounds


def trace_from_released(row: dict[str, Any], question: Question, max_rounds: int = 3) -> MadamTrace:
    """The released code's record of one debate as a ``MadamTrace`` (raises ValueError on a mismatch or a
    malformed row)."""
    n = len(question.documents)
    rounds = _round_keys(row)
    final = _optional_string(row.get("final_aggregation"), "final_aggregation")
    trace = MadamTrace(origin="released", origin_note=RELEASED_NOTE, max_rounds=max_rounds,
                       history_mode=HISTORY_MODES[0], shuffle=False, seed=42, early_stop=True,
                       agents=[MadamAgent(number=i, document_id=d.id) for i, d in enumerate(question.documents, 1)])
    previous = None
    for t, data in rounds:
        answers = _strings(data.get("answers"), f"round{t}.answers")
        explanations = _strings(data.get("explanations"), f"round{t}.explanations")
        aggregation = _optional_string(data.get("aggregation"), f"round{t}.aggregation")
        if len(answers) != n or len(explanations) != n:
            raise ValueError(f"round{t} has {len(answers)} answers and {len(explanations)} explanations, but "
                             f"question {question.id} has {n} documents (one agent per document)")
        raws = [f"Answer: {a} Explanation: {e}" for a, e in zip(answers, explanations)]
        turns = []
        for agent, raw in enumerate(raws, start=1):
            history = None if previous is None else "\n".join(
                response_line(p.agent, p.raw) for p in previous.turns if p.agent != agent)
            turns.append(parse_turn(agent, t, raw, history, None))
        rnd = MadamRound(round=t, turns=turns)
        if previous is not None:
            check_convergence(rnd, previous)
        if aggregation:
            rnd.aggregation = parse_aggregation(t, list(range(1, n + 1)), aggregation, None)
        trace.rounds.append(rnd)
        previous = rnd
    last = trace.rounds[-1]
    trace.stopped_at = last.round
    stopped_early = last.aggregation is None and last.round > 1
    trace.stop_reason = "converged" if stopped_early else "max_rounds"
    extra = []
    if stopped_early and not last.converged:
        extra.append(f"the released run stopped at round {last.round} by its own test, but by ours "
                     f"{last.n_changed} agent(s) changed their answer")
    finalize(trace)
    chosen = next((r.aggregation for r in trace.rounds if r.round == trace.final_round), None)
    if final and (chosen is None or final.strip() != chosen.raw.strip()):
        extra.append(f"the file's final_aggregation differs from round {trace.final_round}'s aggregation; "
                     "the file's final_aggregation is shown as final")
        parsed = parse_aggregation(last.round, [], final, None)
        trace.final_answers, trace.final_explanation = parsed.answers, parsed.explanation
        attribute_answers(trace)
    trace.notes = extra + trace.notes
    return trace


def result_from_released(row: dict[str, Any], question: Question, max_rounds: int = 3) -> MethodResult:
    trace = trace_from_released(row, question, max_rounds)
    return MethodResult(method="madam", question_id=question.id, answers=trace.final_answers,
                        abstained=not trace.final_answers, trace=trace,
                        params={"max_rounds": max_rounds, "history_mode": trace.history_mode, "shuffle": False,
                                "origin": "released"})


def load_trace_file(path: str | Path, question: Question, line: int = 1, *, confined: bool = False) -> MethodResult:
    """A MADAM-RAG result from a file: line ``line`` (1-based) of a JSONL file, or a whole JSON file.
    Released rows are read against ``question``; our own results must be for ``question``. ``confined``: a path
    from a page, read only inside the deployment's open folders (``backend.files``)."""
    path = Path(str(path).strip())
    where = f"{path}:{line}"
    try:  # a regular file under the size cap only: a pipe or device would block or never end
        data = files.read_bytes(path, confine_as="trace file" if confined else None)
    except files.FileRefused as err:
        raise TraceFileError(f"{path}: cannot read: {err.reason}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line_no, column = data.count(b"\n", 0, err.start) + 1, err.start - data.rfind(b"\n", 0, err.start)
        raise TraceFileError(f"{path}:{line_no}: not UTF-8 text (at column {column}); "
                             "save the file as UTF-8") from None
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, RecursionError):  # JSONL (or too deep as a whole: its lines say which)
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if not 1 <= line <= len(lines):
            raise TraceFileError(f"{path}: line {line} asked for, the file has {len(lines)} lines") from None
        try:
            obj = json.loads(lines[line - 1])
        except json.JSONDecodeError as err:
            raise TraceFileError(f"{where}: not JSON: {err.msg}") from None
        except RecursionError:
            raise TraceFileError(f"{where}: nested too deeply") from None
    else:
        if line != 1:
            raise TraceFileError(f"{path}: line {line} asked for, the file has 1 lines (one JSON object)")
        where = str(path)
    if not isinstance(obj, dict):
        raise TraceFileError(f"{where}: expected a JSON object")
    if not {"round1", "results", "method", "trace"} & obj.keys():  # neither format: what is missing, not what is there
        raise TraceFileError(f"{where}: {NOT_A_TRACE} (missing field: round1 of a released debate, or method and "
                             "trace of a ConflictLens result)")
    try:
        if "round1" in obj:
            return result_from_released(obj, question)
        if isinstance(obj.get("results"), dict):
            if "madam" not in obj["results"]:
                raise ValueError("this inspect output has no madam result")
            obj = obj["results"]["madam"]
        result = MethodResult.model_validate(obj)
    except ValidationError as err:  # its str() quotes the input: name the fields and the problems only
        problems = describe(err)
        more = f"; and {len(problems) - 3} more" if len(problems) > 3 else ""
        raise TraceFileError(f"{where}: {NOT_A_TRACE} ({'; '.join(problems[:3])}{more})") from None
    except ValueError as err:  # our own checks: they name fields and types, never values
        raise TraceFileError(f"{where}: {err}") from None
    if result.method != "madam" or not isinstance(result.trace, MadamTrace):
        raise TraceFileError(f"{where}: not a MADAM-RAG result (a result of another method)")
    if result.question_id != question.id:
        raise TraceFileError(f"{where}: the trace is for question {result.question_id}; select that question "
                             f"(now {question.id})")
    return result
