"""MADAM-RAG beside vanilla RAG (and closed book) on a dataset: the papers' metrics beside the lenient match,
P/R/F1, cost.

    .venv/bin/python benchmarks/madam_vs_vanilla.py --dataset sample_data/ramdocs_dev [--limit N] [--model M]
        [--methods madam,astute,vanilla_rag] [--params '{"astute": {"answer_mode": "multi"}}']

Runs the methods through ``backend.runner.Runner`` (truth stripped before any method sees a question;
cache off by default, so every call really runs). Scoring uses the answer lists only (``backend.scoring``):

* ``ramdocs_em`` — accuracy (RAMDocs exact match), MADAM-RAG's Table 1 metric: every gold answer and no wrong answer
  in the parsed answer list (docs/methods/madam.md §3.6, §8.7), for every method, as Table 1 scores its baselines;
* ``own`` — each method's own paper's metric (``MethodSpec.paper_metric``: EM (SQuAD) for vanilla RAG and closed book,
  accuracy (gold in response) for Astute RAG, ...); ``squad_em`` for every method;
* ``lenient_match`` (answer match, lenient: a gold answer named) and ``lenient_all_gold`` (every gold answer named,
  no wrong one), the project's rule (``answers.names``), none of the papers'; P/R/F1 per §8.8, macro-averaged.

Also reports MADAM-RAG's stop reasons, rounds run and mind changes. The LAST line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see reader_accuracy.py: shared 2-core machine

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from backend.evaluate import own_metric  # noqa: E402
from backend.scoring import (PAPER_METRICS, accuracy, paper_score, precision_recall_f1, refused,  # noqa: E402
                             strict_em)


def score(rows: list[dict], method: str | None = None) -> dict:
    """rows: {"answers", "gold", "wrong", "abstained", "error", "calls", "wall_s"} (and "question", "refused" for the
    papers' metrics) -> the headline figures. ``own``: the method's own paper's metric (None for RC-RAG, whose own is
    risk and coverage, and for a method no paper scores)."""
    n = len(rows)
    if not n:
        return {"n": 0}
    prf = [precision_recall_f1(r["answers"], r["gold"]) for r in rows]
    mean = lambda xs: round(sum(xs) / n, 4)  # noqa: E731
    paper = {}
    for k in PAPER_METRICS if all("question" in r for r in rows) else ():
        # None: a question without gold answers (and not labelled unanswerable) has nothing to score
        vals = [v for r in rows if (v := paper_score(k, r["answers"], r["question"], r["refused"])) is not None]
        paper[k] = round(sum(vals) / len(vals), 4) if vals else None
    key = own_metric(method) if method else None
    return {"n": n, **paper, "own_metric": key, "own": paper.get(key),
            "lenient_match": mean([accuracy(r["answers"], r["gold"]) for r in rows]),
            "lenient_all_gold": mean([strict_em(r["answers"], r["gold"], r["wrong"]) for r in rows]),
            "precision": mean([p for p, _, _ in prf]), "recall": mean([r for _, r, _ in prf]),
            "f1": mean([f for _, _, f in prf]), "refusal_rate": mean([r["abstained"] for r in rows]),
            "errors": sum(bool(r["error"]) for r in rows), "mean_calls": mean([r["calls"] for r in rows]),
            "mean_wall_s": mean([r["wall_s"] for r in rows])}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default=str(ROOT / "sample_data" / "ramdocs_dev"))
    ap.add_argument("--limit", type=int, default=None, help="first N questions only")
    ap.add_argument("--model", default="offline/reader")
    ap.add_argument("--methods", default="madam,vanilla_rag,no_rag")
    ap.add_argument("--params", default="{}", help='JSON: {"method": {"parameter": value}}')
    args = ap.parse_args(argv)

    from backend.data import load_dataset
    from backend.llm.client import LLMConfig
    from backend.runner import Runner

    ds = load_dataset(args.dataset)
    questions = ds.questions[: args.limit] if args.limit else ds.questions
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    runner = Runner(ds, llm=LLMConfig(model=args.model, cache_mode="off"), method_params=json.loads(args.params))
    rows: dict[str, list[dict]] = {m: [] for m in methods}
    stops, rounds, changes = Counter(), Counter(), 0
    t0 = time.perf_counter()
    for i, q in enumerate(questions, start=1):
        for name, r in runner.run(q, methods).items():
            rows[name].append({"answers": r.answers, "gold": q.gold_answers, "wrong": q.wrong_answers,
                               "abstained": r.abstained, "error": r.error, "calls": len(r.calls),
                               "wall_s": r.wall_s, "question": q, "refused": refused(r)})
            if name == "madam" and r.trace is not None:
                stops[r.trace.stop_reason] += 1
                rounds[r.trace.stopped_at] += 1
                changes += sum(bool(t.changed) for rnd in r.trace.rounds for t in rnd.turns)
        if i % 10 == 0:
            print(f"{i}/{len(questions)} questions, {time.perf_counter() - t0:.0f} s", file=sys.stderr)

    summary = {m: score(rows[m], m) for m in methods}
    print(f"dataset {ds.name}: {len(questions)} questions, model {args.model}, "
          f"{time.perf_counter() - t0:.0f} s")
    print(f"{'method':14}{'its paper':>30}{'own':>8}{'RAMDocs EM':>11}{'SQuAD EM':>9}{'match*':>8}{'all gold*':>10}"
          f"{'P':>8}{'R':>8}{'F1':>8}{'refusal':>9}{'calls':>8}")
    for m, s in summary.items():
        if not s["n"]:
            print(f"{m:14}{'no rows':>30}")
            continue
        key = s["own_metric"]
        name = PAPER_METRICS[key].name if key in PAPER_METRICS else "risk / coverage (see `risk`)" if key else "—"
        own, ramdocs, squad = ("—" if v is None else v for v in (s["own"], s["ramdocs_em"], s["squad_em"]))
        print(f"{m:14}{name:>30}{own:>8}{ramdocs:>11}{squad:>9}{s['lenient_match']:>8}"
              f"{s['lenient_all_gold']:>10}{s['precision']:>8}{s['recall']:>8}{s['f1']:>8}"
              f"{s['refusal_rate']:>9}{s['mean_calls']:>8}")
    print("own: the method's own paper's metric; RAMDocs EM: MADAM-RAG's Table 1 metric (every gold answer, no wrong "
          "one); SQuAD EM: the normalised answer equals a gold answer; * the project's lenient match (answer match, "
          "all gold and no wrong), none of the papers'.")
    if "madam" in summary:
        summary["madam"].update(stop_reasons=dict(stops), rounds_run=dict(sorted(rounds.items())),
                                mind_changes=changes)
        print(f"madam: stop reasons {dict(stops)}, rounds run {dict(sorted(rounds.items()))}, "
              f"{changes} mind changes")
    print(json.dumps({"dataset": ds.name, "questions": len(questions), "model": args.model,
                      "params": json.loads(args.params), **summary}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
