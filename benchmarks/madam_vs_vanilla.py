"""MADAM-RAG beside vanilla RAG (and closed book) on a dataset: strict EM, accuracy, P/R/F1, cost.

    .venv/bin/python benchmarks/madam_vs_vanilla.py --dataset sample_data/ramdocs_dev [--limit N] [--model M]
        [--methods madam,astute,vanilla_rag] [--params '{"astute": {"answer_mode": "multi"}}']

Runs the methods through ``backend.runner.Runner`` (truth stripped before any method sees a question;
cache off by default, so every call really runs). Scoring uses the answer lists only
(``backend.answers``): strict EM = every gold answer present and no wrong answer (docs/methods/madam.md §3.6,
§8.7); accuracy = at least one gold answer present; P/R/F1 per §8.8, macro-averaged. Also reports
MADAM-RAG's stop reasons, rounds run and mind changes. The LAST line printed is one JSON object.
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

from backend.scoring import accuracy, precision_recall_f1, strict_em  # noqa: E402


def score(rows: list[dict]) -> dict:
    """rows: {"answers", "gold", "wrong", "abstained", "error", "calls", "wall_s"} -> the headline figures."""
    n = len(rows)
    if not n:
        return {"n": 0}
    prf = [precision_recall_f1(r["answers"], r["gold"]) for r in rows]
    mean = lambda xs: round(sum(xs) / n, 4)  # noqa: E731
    return {"n": n, "strict_em": mean([strict_em(r["answers"], r["gold"], r["wrong"]) for r in rows]),
            "accuracy": mean([accuracy(r["answers"], r["gold"]) for r in rows]),
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
                               "wall_s": r.wall_s})
            if name == "madam" and r.trace is not None:
                stops[r.trace.stop_reason] += 1
                rounds[r.trace.stopped_at] += 1
                changes += sum(bool(t.changed) for rnd in r.trace.rounds for t in rnd.turns)
        if i % 10 == 0:
            print(f"{i}/{len(questions)} questions, {time.perf_counter() - t0:.0f} s", file=sys.stderr)

    summary = {m: score(rows[m]) for m in methods}
    print(f"dataset {ds.name}: {len(questions)} questions, model {args.model}, "
          f"{time.perf_counter() - t0:.0f} s")
    print(f"{'method':12}{'strict EM':>10}{'accuracy':>10}{'P':>8}{'R':>8}{'F1':>8}{'refusal':>9}{'calls':>8}")
    for m, s in summary.items():
        print(f"{m:12}{s['strict_em']:>10}{s['accuracy']:>10}{s['precision']:>8}{s['recall']:>8}{s['f1']:>8}"
              f"{s['refusal_rate']:>9}{s['mean_calls']:>8}")
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
