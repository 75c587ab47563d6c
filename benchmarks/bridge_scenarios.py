"""BRIDGE on the scenarios set: its leaf against the scenario kind (FA, FI, FE and RA, the last two split into
evolution and perpetuation), S1 (its scorer's K_int ↔ K_ext similarity) per kind, whose knowledge each method's
answer follows (``astute_scenarios.behaviour``), answers scored beside closed book and vanilla RAG, and BRIDGE's
mean calls per question.

    .venv/bin/python benchmarks/bridge_scenarios.py [--dataset sample_data/scenarios] [--params JSON]

Two scores, both with the paper's RA rule (docs/methods/bridge.md §6): an RA question (gold "I don't know") is
answered correctly only by abstaining (an unreadable reply is not an abstention, P17). Any other question: ``EM
(SQuAD)`` — the normalised answer equals a gold answer, BRIDGE's own metric for datasets without options
(``backend.scoring.squad_em``) — and ``answer match (lenient)`` — a gold answer named, the project's rule
(``backend.scoring.accuracy``), none of the papers'. Scenario labels and gold answers are
read after the run only. A memory that is a document's passage or its entity-swapped twin (``meta.memory_twin``) is
counted apart on the S1 line: the scorer barely tells such a pair apart (docs/methods/bridge.md §8.16). This prints
what happens, it asserts nothing. The LAST line printed is one JSON object.
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
from backend.scoring import accuracy, refused, squad_em  # noqa: E402
from benchmarks.astute_scenarios import KINDS, behaviour, behaviour_lines, kind  # noqa: E402

METHODS = ("bridge", "no_rag", "vanilla_rag")
LEAVES = ("FA", "FI", "FE", "RA")


#: The scores: BRIDGE's own (its paper's EM) and the project's lenient match.
RULES = {"squad_em": squad_em, "lenient_match": accuracy}


def correct(result: MethodResult, q: Question, rule: str = "lenient_match") -> bool:
    """Right by ``rule`` (a ``RULES`` key); on an RA question only a refusal is right, by either rule."""
    if all(is_idk(g) for g in q.gold_answers):   # RA: only a refusal is right; an unreadable reply is not one (P17)
        return not result.error and refused(result)
    return RULES[rule](result.answers, q.gold_answers)


def s1_stats(questions: list[Question], results: dict[str, dict[str, MethodResult]]) -> dict[str, dict]:
    """Per scenario kind with a memory: the mean S1 and how many items have S1 > α, over all items and over those
    whose memory is a document's passage or its twin (``twin``)."""
    out = {}
    for k in KINDS:
        rows = [(q.meta.get("memory_twin"), trace.cycles[0].s1.total, trace.alpha) for q in questions
                if kind(q) == k and (trace := results[q.id]["bridge"].trace) is not None and trace.cycles
                and not trace.k_int_idk]
        if rows:
            twins = [r for r in rows if r[0]]
            out[k] = {"n": len(rows), "mean_s1": round(sum(r[1] for r in rows) / len(rows), 3),
                      "above_alpha": sum(r[1] > r[2] for r in rows), "twins": len(twins),
                      "twins_above_alpha": sum(r[1] > r[2] for r in twins)}
    return out


def summary(questions: list[Question], results: dict[str, dict[str, MethodResult]]) -> dict:
    confusion = {k: dict.fromkeys(LEAVES, 0) for k in KINDS}
    for q in questions:
        trace = results[q.id]["bridge"].trace
        if trace is not None and kind(q) in confusion:
            confusion[kind(q)][trace.leaf] += 1
    def rate(qs: list[Question], m: str, rule: str) -> float:
        return round(sum(correct(results[q.id][m], q, rule) for q in qs) / len(qs), 4)

    scores = {rule: {m: rate(questions, m, rule) for m in METHODS} for rule in RULES}
    per = {rule: {s: {m: rate(qs, m, rule) for m in METHODS}
                  for s in LEAVES if (qs := [q for q in questions if q.meta.get("scenario") == s])} for rule in RULES}
    calls = [len(results[q.id]["bridge"].calls) for q in questions]
    cycles = Counter(len(results[q.id]["bridge"].trace.cycles) - 1 for q in questions
                     if results[q.id]["bridge"].trace is not None)
    return {"confusion": confusion, "s1": s1_stats(questions, results), "behaviour": behaviour(questions, results),
            "squad_em": scores["squad_em"], "squad_em_by_scenario": per["squad_em"],
            "lenient_match": scores["lenient_match"], "lenient_match_by_scenario": per["lenient_match"],
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
    print(f"{'scenario kind':<16} {'leaf →':>6}" + "".join(f"{leaf:>6}" for leaf in LEAVES)
          + "   mean S1  S1 > α  (memory twins: S1 > α)")
    for k, row in out["confusion"].items():
        s1 = out["s1"].get(k)
        tail = (f"   {s1['mean_s1']:>7.3f}  {s1['above_alpha']:>2}/{s1['n']:<3}  "
                f"({s1['twins_above_alpha']}/{s1['twins']})" if s1 else "   no memory")
        print(f"{k:<16} {'':>6}" + "".join(f"{row[leaf]:>6}" for leaf in LEAVES) + tail)
    print("\n".join(behaviour_lines(out["behaviour"])))
    print("EM (SQuAD), BRIDGE's metric:", "  ".join(f"{m} {v:.3f}" for m, v in out["squad_em"].items()))
    print("answer match (lenient, the project's):", "  ".join(f"{m} {v:.3f}" for m, v in out["lenient_match"].items()))
    print(f"BRIDGE mean calls {out['bridge_mean_calls']} ({out['bridge_mean_calls_without_k_int']} without K_int); "
          f"reflection cycles {out['reflection_cycles']}")
    print(json.dumps({"dataset": args.dataset, "params": json.loads(args.params), **out}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
