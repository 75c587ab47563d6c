"""Risk control over a dataset: RC-RAG under each fusion strategy beside the keep-everything reference (RC-RAG's
own RAG answer, always kept: no risk control, risk = U/N at coverage 100%, docs/methods/counterfactual.md §5.3),
every question folded into AK / AD / UK / UD and scored with ``backend.scoring.risk_metrics``
(docs/methods/counterfactual.md §5, §7 "many questions"). Every point shares one A/U labelling: the RAG answer of
the first strategy's run (the same first call in each strategy) by the released code's rule
(``backend.scoring.answerable``). A method in ``also`` is labelled by its own answer when it answers and by that RAG
answer when it abstains, so it is measured on the same questions' labels, as the paper's baselines are.

The methods run through the ``Runner`` (truth stripped; the call cache shared, so the strategies pay only for
their own fusion calls when the cache is on). Truth meets the results only in ``backend.scoring``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from dataclasses import dataclass, field

from backend.methods.base import Progress, run_sync
from backend.methods.counterfactual import FUSIONS, SCENARIOS
from backend.runner import Runner
from backend.schema import CounterfactualTrace, MethodResult, Question
from backend.scoring import count_folds, risk_fold, risk_metrics

#: The keep-everything point: RC-RAG's RAG answer kept on every question (no run of its own).
REFERENCE = "keep everything"
REFERENCE_LABEL = "keep everything (the RAG answer)"
#: Questions run at once (each question's own calls are concurrent too; the client caps calls in flight).
QUESTIONS_AT_ONCE = 4


@dataclass
class RiskPoint:
    """One operating point: a fusion strategy, or keeping everything."""

    label: str
    method: str
    folds: dict[str, int]
    metrics: dict[str, float | None]
    unlabelled: int = 0                 # errors and questions without gold answers
    errors: int = 0
    calls: int = 0
    paths: dict[str, int] = field(default_factory=dict)          # RC-RAG decision paths
    change_rates: dict[str, dict[str, float | None]] = field(default_factory=dict)  # branch -> {A, U}: changed


@dataclass
class RiskSweep:
    dataset: str
    questions: int
    points: list[RiskPoint]
    results: dict[str, dict[str, MethodResult]]   # label -> question id -> result


def decision_path(trace: CounterfactualTrace) -> str:
    """both keep / both discard / disagree → keep / disagree → discard, and "override" when it fired."""
    if trace.override:
        return "override (refusal kept → discard)"
    if trace.agree:
        return f"both {trace.fused}"
    return f"disagree → {trace.fused}"


def _change_rates(pairs: list[tuple[CounterfactualTrace, str]]) -> dict[str, dict[str, float | None]]:
    """Per branch, the share of answerable (A) and unanswerable (U) questions whose answer it changed."""
    out: dict[str, dict[str, float | None]] = {}
    for scenario in SCENARIOS:
        out[scenario] = {}
        for label in ("A", "U"):
            branches = [b for t, f in pairs if f[0] == label for b in t.branches if b.scenario == scenario]
            changed = sum(b.decision == "discard" for b in branches)
            out[scenario][label] = round(100 * changed / len(branches), 2) if branches else None
    return out


def point(label: str, method: str, results: dict[str, MethodResult], questions: list[Question],
          reference: dict[str, MethodResult] | None = None) -> RiskPoint:
    folds = [risk_fold(results[q.id], q, (reference or {}).get(q.id)) for q in questions]
    traces = [(results[q.id].trace, f) for q, f in zip(questions, folds)
              if f and isinstance(results[q.id].trace, CounterfactualTrace)]
    return RiskPoint(label=label, method=method, folds=count_folds(folds), metrics=risk_metrics(count_folds(folds)),
                     unlabelled=sum(f is None for f in folds), errors=sum(bool(r.error) for r in results.values()),
                     calls=sum(len(r.calls) for r in results.values()),
                     paths=dict(Counter(decision_path(t) for t, _ in traces)), change_rates=_change_rates(traces))


def keep_everything(rc_rag: dict[str, MethodResult], questions: list[Question]) -> RiskPoint:
    """The reference: RC-RAG's RAG answer (``Trace.candidate_answers``) kept on every question, labelled as in the
    strategies' points; a refusal kept counts as kept (no risk control keeps it). It makes no calls of its own."""
    folds = [f[0] + "K" if (f := risk_fold(rc_rag[q.id], q)) else None for q in questions]
    return RiskPoint(label=REFERENCE_LABEL, method=REFERENCE, folds=count_folds(folds),
                     metrics=risk_metrics(count_folds(folds)), unlabelled=sum(f is None for f in folds),
                     errors=sum(bool(r.error) for r in rc_rag.values()))


async def arisk_sweep(runner: Runner, questions: list[Question], strategies: tuple[str, ...] = FUSIONS,
                      on_progress: Progress | None = None, also: tuple[str, ...] = ()) -> RiskSweep:
    """Run RC-RAG once per fusion strategy and the methods in ``also`` (any method that can abstain: RA-RAG,
    Astute RAG...) on every question, then add the keep-everything reference; ``on_progress(done, total)``."""
    unknown = [s for s in strategies if s not in FUSIONS]
    if unknown or not strategies:
        raise ValueError(f"unknown fusion strateg{'ies' if len(unknown) > 1 else 'y'} "
                         f"{', '.join(unknown) or '(none given)'}; choose from {', '.join(FUSIONS)}")
    params = runner.method_params.get("counterfactual", {})
    runs = {s: dataclasses.replace(runner, method_params={**runner.method_params,
                                                          "counterfactual": {**params, "fusion": s}})
            for s in strategies}
    jobs = [*((s, "counterfactual") for s in strategies), *((m, m) for m in also if m != "counterfactual")]
    results: dict[str, dict[str, MethodResult]] = {label: {} for label, _ in jobs}
    total, done = len(questions) * len(jobs), 0
    slots = asyncio.Semaphore(QUESTIONS_AT_ONCE)

    async def one(q: Question) -> None:
        nonlocal done
        async with slots:
            for label, name in jobs:   # one question's strategies in turn: later ones reuse earlier cached calls
                result = (await (runs.get(label) or runner).arun(q, [name]))[name]
                results[label][q.id] = result
                done += 1
                if on_progress is not None:
                    on_progress(done, total)

    await asyncio.gather(*(one(q) for q in questions))
    reference = results[strategies[0]]   # RC-RAG's RAG answers label every point (module docstring)
    points = [point(s, "counterfactual", results[s], questions, reference) for s in strategies]
    points += [point(m, m, results[m], questions, reference) for _, m in jobs[len(strategies):]]
    points.append(keep_everything(reference, questions))
    return RiskSweep(dataset=runner.dataset.name, questions=len(questions), points=points, results=results)


def risk_sweep(runner: Runner, questions: list[Question], strategies: tuple[str, ...] = FUSIONS,
               on_progress: Progress | None = None, also: tuple[str, ...] = ()) -> RiskSweep:
    return run_sync(arisk_sweep(runner, questions, strategies, on_progress, also))
