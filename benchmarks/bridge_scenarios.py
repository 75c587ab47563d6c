"""BRIDGE on the scenarios set: its leaf against the scenario label (FA / FI / FE / RA), its answer accuracy beside
closed book and vanilla RAG, and its mean calls per question.

    .venv/bin/python benchmarks/bridge_scenarios.py [--dataset sample_data/scenarios] [--params JSON]

Accuracy as in the paper (docs/methods/bridge.md §6): an RA question (gold "I don't know") is answered correctly
only by abstaining; any other by a gold answer (``backend.scoring.accuracy``). Scenario labels and gold answers are read
after the run only. The LAST line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see reader_accuracy.py: shared 2-core machine

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from backend.llm.formats import is_idk  # noqa: E402
from backend.schema import MethodResult, Question  # noqa: E402
from backend.scoring import accuracy  # noqa: E402

METHODS = ("bridge", "no_rag", "vanilla_rag")
LEAVES = ("FA", "FI", "FE", "RA")


def correct(result: MethodResult, q: Question) -> bool:
    if all(is_idk(g) for g in q.gold_answers):
        return not result.error and (result.abstained or not result.answers)
    return accuracy(result.answers, q.gold_answers)


def summary(questions: list[Question], results: dict[str, dict[str, MethodResult]]) -> dict:
    confusion = {s: dict.fromkeys(LEAVES, 0) for s in LEAVES}
    for q in questions:
        trace = results[q.id]["bridge"].trace
        if trace is not None and q.meta.get("scenario") in confusion:
            confusion[q.meta["scenario"]][trace.leaf] += 1
    acc = {m: round(sum(correct(results[q.id][m], q) for q in questions) / len(questions), 4) for m in METHODS}
    per = {s: {m: round(sum(correct(results[q.id][m], q) for q in qs) / len(qs), 4) for m in METHODS}
           for s in LEAVES if (qs := [q for q in questions if q.meta.get("scenario") == s])}
    calls = [len(results[q.id]["bridge"].calls) for q in questions]
    cycles = Counter(len(results[q.id]["bridge"].trace.cycles) - 1 for q in questions
                     if results[q.id]["bridge"].trace is not None)
    return {"confusion": confusion, "accuracy": acc, "accuracy_by_scenario": per,
            "bridge_mean_calls": round(sum(calls) / len(calls), 3),
            "bridge_mean_calls_without_k_int": round(sum(calls) / len(calls) - 1, 3),
            "reflection_cycles": dict(sorted(cycles.items())),
            "errors": sum(bool(results[q.id][m].error) for q in questions for m in METHODS)}


def run(dataset: str, params: dict | None = None):
    from backend.data import load_dataset
    from backend.llm.client import LLMConfig
    from backend.runner import Runner

    ds = load_dataset(dataset)
    runner = Runner(ds, llm=LLMConfig(cache_mode="off"), method_params=params or {})
    return ds.questions, {q.id: runner.run(q, list(METHODS)) for q in ds.questions}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default=str(ROOT / "sample_data" / "scenarios"))
    ap.add_argument("--params", default="{}", help='JSON: {"bridge": {"allocator": "fixed"}}')
    args = ap.parse_args(argv)
    questions, results = run(args.dataset, json.loads(args.params))
    out = summary(questions, results)
    print("leaf →      " + "".join(f"{leaf:>6}" for leaf in LEAVES))
    for s, row in out["confusion"].items():
        print(f"scenario {s}" + "".join(f"{row[leaf]:>6}" for leaf in LEAVES))
    print("accuracy:", "  ".join(f"{m} {v:.3f}" for m, v in out["accuracy"].items()))
    print(f"BRIDGE mean calls {out['bridge_mean_calls']} ({out['bridge_mean_calls_without_k_int']} without K_int); "
          f"reflection cycles {out['reflection_cycles']}")
    print(json.dumps({"dataset": args.dataset, "params": json.loads(args.params), **out}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
