"""Whose knowledge wins a conflict: Astute RAG beside vanilla RAG and closed book on the scenarios set.

    .venv/bin/python benchmarks/astute_scenarios.py [--dataset sample_data/scenarios] [--params JSON]

On FI questions (memory right, documents wrong) it counts how often each method's answer is the memory's
answer; on FE questions (memory outdated or absent, documents right) how often it is the documents' answer
(``meta.internal_answer`` / ``meta.external_answer``, read only after the run: methods never see them). The
Astute RAG paper's claim (§5, Figure 6) is that consolidation keeps the right side of a conflict: Astute should
follow memory on FI more often than vanilla RAG does, and the documents on FE at least as often as closed book
does. The LAST line printed is one JSON object.
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

from backend.answers import matches_any  # noqa: E402
from backend.schema import MethodResult, Question  # noqa: E402

METHODS = ("astute", "vanilla_rag", "no_rag")
#: scenario -> the meta field holding the answer a method should follow there
FOLLOW = {"FI": "internal_answer", "FE": "external_answer"}


def follow_rates(questions: list[Question], results: dict[str, dict[str, MethodResult]]) -> dict[str, dict[str, float]]:
    """{scenario: {method: share of its questions whose answer matches the side it should follow}}."""
    out: dict[str, dict[str, float]] = {}
    for scenario, side in FOLLOW.items():
        qs = [q for q in questions if q.meta.get("scenario") == scenario and q.meta.get(side)]
        out[scenario] = {m: round(sum(any(matches_any(a, [q.meta[side]]) for a in results[q.id][m].answers)
                                      for q in qs) / len(qs), 4) if qs else 0.0
                         for m in next(iter(results.values()), {})}
    return out


def run(dataset: str, params: dict | None = None) -> tuple[list[Question], dict[str, dict[str, MethodResult]]]:
    from backend.data import load_dataset
    from backend.llm.client import LLMConfig
    from backend.runner import Runner

    ds = load_dataset(dataset)
    runner = Runner(ds, llm=LLMConfig(cache_mode="off"), method_params=params or {})
    return ds.questions, {q.id: runner.run(q, list(METHODS)) for q in ds.questions}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default=str(ROOT / "sample_data" / "scenarios"))
    ap.add_argument("--params", default="{}", help='JSON: {"astute": {"iterations": 2}}')
    args = ap.parse_args(argv)
    questions, results = run(args.dataset, json.loads(args.params))
    rates = follow_rates(questions, results)
    for scenario, side in FOLLOW.items():
        row = "  ".join(f"{m} {v:.3f}" for m, v in rates[scenario].items())
        print(f"{scenario}: answer = {side.replace('_', ' ')}: {row}")
    print(json.dumps({"dataset": args.dataset, "params": json.loads(args.params), "rates": rates}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
