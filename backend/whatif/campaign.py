"""An attack over a dataset: every question attacked with k = 1, 3, 5 ... passages (``backend.whatif.attack``),
every method run on every attacked question, resumably, through the evaluation's machinery
(``backend.evaluate.run_pairs``: one row per attacked question × method, appended and fsync'd as it finishes).

Output folder: ``results.jsonl`` (rows as ``evaluate``'s plus ``k``, ``attack_of``, ``target`` and
``clean_documents``; the attacked question's id is ``<question id>~attack-k<k>``, k = 0 the clean question itself),
``attack.json`` (the settings and every question's attack plan; a resume with other settings is refused) and
``summary.json``: ``{method: {k: {"attack_success_rate", "accuracy", "abstention", "n", "errors", "missing",
"by_clean_documents": {count: {...}}}}}``, rates in percent over the rows without error, ``n`` those rows;
``format_failures``: the percentage of replies the methods could not read (``evaluate.format_counts``).
Attack success: the method's answers include the target; accuracy: they include a gold answer; both by normalised
word-sequence containment (``answers.contains_match``), never token overlap: a target is built to look like the gold
answer ("10,000 people" for "3,559 people" has token F1 0.5), so an F1 rule would count it as correct. Abstention: the method abstained or answered nothing
(``attack.outcome``). ``backend.outputs.open_attack`` reads a folder back, typed (``backend.schema.summary``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from backend import files
from backend.evaluate import (WHOLE, EvaluationError, Progress, folder_lock, format_counts, refuse_existing, run_pairs,
                              spending_limit, write_json)
from backend.schema import MethodResult, Question
from backend.schema.summary import AttackSummary
from backend.whatif.attack import AttackPlan, Placement, outcome, plan_attack, poison

SETTINGS = "attack.json"
SUMMARY = "summary.json"
DEFAULT_KS = (1, 3, 5)


def attacked_questions(dataset, questions: list[Question], ks: list[int], placement: Placement = "spread",
                       source: str | None = None) -> tuple[list[Question], dict[str, dict[str, Any]],
                                                           dict[str, AttackPlan], list[str]]:
    """(attacked questions, their row fields by id, the plans by question id, questions with no target)."""
    plans: dict[str, AttackPlan] = {}
    skipped: list[str] = []
    for q in questions:
        plan = plan_attack(q, dataset)
        if plan is None:
            skipped.append(q.id)
        else:
            plans[q.id] = plan
    out, info = [], {}
    for k in ks:
        for q in questions:
            if q.id not in plans:
                continue
            aq = q if k == 0 else poison(q, plans[q.id], k, placement, source)
            out.append(aq)
            info[aq.id] = {"k": k, "attack_of": q.id, "target": plans[q.id].target,
                           "clean_documents": len(q.documents)}
    return out, info, plans, skipped


def _settings(runner, ks: list[int], placement: str, source: str | None, plans: dict[str, AttackPlan],
              skipped: list[str]) -> dict[str, Any]:
    return {"dataset": runner.dataset.name, "model": runner.llm.model, "ks": ks, "placement": placement,
            "source": source, "questions": len(plans) + len(skipped), "not_attacked": skipped,
            "plans": {qid: p.model_dump(mode="json") for qid, p in plans.items()}}


def attack_dataset(runner, questions: list[Question], methods: list[str], out_dir: str | Path,
                   ks: list[int] | tuple[int, ...] = DEFAULT_KS, placement: Placement = "spread",
                   source: str | None = None, resume: bool = False, retry_errors: bool = False,
                   concurrency: int = 4, on_progress: Progress | None = None,
                   max_cost: float | None = None) -> dict[str, Any]:
    """Attack ``questions`` with each k in ``ks``, run ``methods`` on every attacked question, write the folder
    (module docstring) and return the summary. ``max_cost``: stop cleanly once this run's calls cost that many US
    dollars (``backend.cost.Budget``, as ``evaluate``'s; the stop is in ``notes.json``). Raises ``EvaluationError`` for
    an unusable folder, a resume whose settings differ from the folder's, or a cost limit on a model without a price."""
    budget = spending_limit(runner, max_cost)
    ks = sorted(set(int(k) for k in ks))
    if not ks or ks[0] < 0:
        raise EvaluationError(f"k must be 0 or more, got {ks}")
    out = Path(out_dir)
    attacked, info, plans, skipped = attacked_questions(runner.dataset, questions, ks, placement, source)
    settings = _settings(runner, ks, placement, source, plans, skipped)
    with folder_lock(out):  # from the settings check on: a running attack's settings are never rewritten
        if resume and (out / SETTINGS).exists():
            try:  # a regular file only (a pipe there would block the resume)
                before = json.loads(files.read_text(out / SETTINGS, WHOLE))
            except files.FileRefused as err:
                raise EvaluationError(str(err)) from None
            except (ValueError, RecursionError):
                before = None
            if not isinstance(before, dict):
                raise EvaluationError(f"{out / SETTINGS}: not the settings of an attack (not a JSON object); resume "
                                      "another folder or remove it")
            if before != settings:
                changed = sorted(k for k in settings if before.get(k) != settings[k])
                raise EvaluationError(f"{out / SETTINGS}: this folder holds an attack with other settings "
                                      f"({', '.join(changed)}); resume with the same ones or choose another folder")
        refuse_existing(out, resume)  # before the settings are written over
        write_json(out / SETTINGS, settings)
        results, notes = run_pairs(runner, attacked, methods, out, resume=resume, retry_errors=retry_errors,
                                   concurrency=concurrency, on_progress=on_progress, extra=lambda qid: info[qid],
                                   budget=budget)
        summary = AttackSummary.model_validate(summarize_attack(results, attacked, info, methods, ks)).as_dict()
        write_json(out / SUMMARY, summary)  # through the model: the file is what backend.outputs reads
        if notes:
            write_json(out / "notes.json", notes)
    return summary


def _pct(k: int, n: int) -> float | None:
    return round(100 * k / n, 2) if n else None


def _rates(rows: list[tuple[Question, dict[str, Any], MethodResult]]) -> dict[str, Any]:
    ok = [(q, outcome(r, q, i["target"])) for q, i, r in rows if not r.error]
    gold = [o for q, o in ok if q.gold_answers]
    return {"attack_success_rate": _pct(sum(o.succeeded for _, o in ok), len(ok)),
            "accuracy": _pct(sum(o.correct for o in gold), len(gold)),
            "abstention": _pct(sum(o.abstained for _, o in ok), len(ok)),
            "n": len(ok), "errors": len(rows) - len(ok), **format_counts([c for _, _, r in rows for c in r.calls])}


def summarize_attack(results: dict[tuple[str, str], MethodResult], attacked: list[Question],
                     info: dict[str, dict[str, Any]], methods: list[str], ks: list[int]) -> dict[str, Any]:
    """``{method: {k: rates}}`` (module docstring), from the rows alone: it can be recomputed at any time."""
    out: dict[str, Any] = {}
    for m in methods:
        out[m] = {}
        for k in ks:
            asked = [q for q in attacked if info[q.id]["k"] == k]
            rows = [(q, info[q.id], results[(q.id, m)]) for q in asked if (q.id, m) in results]
            by_clean: dict[int, list] = {}
            for row in rows:
                by_clean.setdefault(row[1]["clean_documents"], []).append(row)
            out[m][str(k)] = {**_rates(rows), "missing": len(asked) - len(rows),
                              "by_clean_documents": {str(c): _rates(g) for c, g in sorted(by_clean.items())}}
    return out


__all__ = ["DEFAULT_KS", "attack_dataset", "attacked_questions", "summarize_attack"]
