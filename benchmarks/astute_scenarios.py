"""Whose knowledge wins a conflict: Astute RAG beside vanilla RAG and closed book (or any methods) on the scenarios set.

    .venv/bin/python benchmarks/astute_scenarios.py [--dataset sample_data/scenarios] [--params JSON]
                                                    [--methods astute,vanilla_rag,no_rag | all]

Per scenario kind (FA, FI, FE and RA, the last two split into evolution and perpetuation) and method, how many
answers follow the memory, the documents, both (FA: they agree), abstain, or name something else (``behaviour``:
the project's answer rule, ``backend.scoring``, against ``meta.internal_answer`` / ``meta.external_answer``).
Then, on FI questions (memory right, documents wrong), the share of answers that are the memory's; on FE
questions (memory outdated or absent, documents right), the share that are the documents'. Scenario labels and
answers are read after the run only: methods never see them. The Astute RAG paper's claim (§5, Figure 6) is that
consolidation keeps the right side of a conflict; this prints what happens, it asserts nothing. The LAST line
printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see reader_accuracy.py: shared 2-core machine

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from backend.schema import MethodResult, Question  # noqa: E402
from backend.scoring import accuracy, refused  # noqa: E402

METHODS = ("astute", "vanilla_rag", "no_rag")
#: scenario -> the meta field holding the answer a method should follow there
FOLLOW = {"FI": "internal_answer", "FE": "external_answer"}
KINDS = ("FA", "FI", "FE/evolution", "FE/perpetuation", "RA/evolution", "RA/perpetuation")
SIDES = ("memory", "documents", "both", "abstains", "other", "error")


def kind(q: Question) -> str:
    """The scenario, with the temporal kind where it has one (FE/RA: evolution or perpetuation)."""
    temporal = q.meta.get("temporal")
    return q.meta["scenario"] + (f"/{temporal}" if temporal not in (None, "none") else "")


def side(result: MethodResult, q: Question) -> str:
    """Which side the answer follows: ``memory`` (it names the memory's answer), ``documents``, ``both`` (it names
    both: FA, where they agree, or several answers), ``abstains``, ``other`` or ``error``."""
    if result.error:
        return "error"
    if refused(result):
        return "abstains"
    memory, documents = q.meta.get("internal_answer"), q.meta.get("external_answer")
    follows = (bool(memory) and accuracy(result.answers, [memory]),
               bool(documents) and accuracy(result.answers, [documents]))
    return {(True, True): "both", (True, False): "memory", (False, True): "documents"}.get(follows, "other")


def behaviour(questions: list[Question], results: dict[str, dict[str, MethodResult]]
              ) -> dict[str, dict[str, dict[str, int]]]:
    """{scenario kind: {method: {side: questions}}}."""
    methods = list(next(iter(results.values()), {}))
    out = {k: {m: dict.fromkeys(SIDES, 0) for m in methods} for k in KINDS}
    for q in questions:
        if kind(q) in out:
            for m in methods:
                out[kind(q)][m][side(results[q.id][m], q)] += 1
    return out


def behaviour_lines(table: dict[str, dict[str, dict[str, int]]]) -> list[str]:
    """The table as text: one row per (scenario kind, method), one column per side (``error`` only when any)."""
    sides = [s for s in SIDES if s != "error" or any(r["error"] for row in table.values() for r in row.values())]
    width = max((len(m) for row in table.values() for m in row), default=6)
    lines = [f"{'scenario kind':<16} {'n':>3}  {'method':<{width}}" + "".join(f"{s:>10}" for s in sides)]
    for k, row in table.items():
        for i, (m, counts) in enumerate(row.items()):
            n = sum(counts.values())
            lines.append(f"{k if i == 0 else '':<16} {n if i == 0 else '':>3}  {m:<{width}}"
                         + "".join(f"{counts[s]:>10}" for s in sides))
    return lines


def follow_rates(questions: list[Question], results: dict[str, dict[str, MethodResult]]) -> dict[str, dict[str, float]]:
    """{scenario: {method: share of its questions whose answer names the side it should follow}}."""
    out: dict[str, dict[str, float]] = {}
    for scenario, field in FOLLOW.items():
        qs = [q for q in questions if q.meta.get("scenario") == scenario and q.meta.get(field)]
        out[scenario] = {m: round(sum(accuracy(results[q.id][m].answers, [q.meta[field]]) for q in qs) / len(qs), 4)
                         if qs else 0.0 for m in next(iter(results.values()), {})}
    return out


def run(dataset: str, params: dict | None = None, methods: tuple[str, ...] = METHODS
        ) -> tuple[list[Question], dict[str, dict[str, MethodResult]]]:
    from backend.data import load_dataset
    from backend.llm.client import LLMConfig
    from backend.runner import Runner

    ds = load_dataset(dataset)
    runner = Runner(ds, llm=LLMConfig(cache_mode="off"), method_params=params or {})
    return ds.questions, {q.id: runner.run(q, list(methods)) for q in ds.questions}


def method_names(arg: str) -> tuple[str, ...]:
    """``--methods``: comma-separated names, or ``all`` (every registered method)."""
    from backend.methods import METHODS as REGISTERED

    return tuple(REGISTERED) if arg == "all" else tuple(m.strip() for m in arg.split(",") if m.strip())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default=str(ROOT / "sample_data" / "scenarios"))
    ap.add_argument("--params", default="{}", help='JSON: {"astute": {"iterations": 2}}')
    ap.add_argument("--methods", default=",".join(METHODS), help="comma-separated, or all")
    args = ap.parse_args(argv)
    questions, results = run(args.dataset, json.loads(args.params), method_names(args.methods))
    table = behaviour(questions, results)
    print("\n".join(behaviour_lines(table)))
    rates = follow_rates(questions, results)
    for scenario, field in FOLLOW.items():
        row = "  ".join(f"{m} {v:.3f}" for m, v in rates[scenario].items())
        print(f"{scenario}: answer = {field.replace('_', ' ')}: {row}")
    print(json.dumps({"dataset": args.dataset, "params": json.loads(args.params), "behaviour": table,
                      "rates": rates}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
