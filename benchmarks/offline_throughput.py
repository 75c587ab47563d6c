"""Every registered method on RAMDocs dev questions with the offline model, warm: seconds per question and
questions per second (target: at most 1 s per question on the 2-core machine).

    .venv/bin/python benchmarks/offline_throughput.py [--dataset sample_data/ramdocs_dev] [--limit 100]

"Warm": the embedding model is loaded, the retrieval index built and a different question answered before timing;
the call cache is off, so every model call really runs. Each question runs all methods concurrently (as the
Inspect page does); the per-method figures are each method's own wall time inside those runs. The LAST line
printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see reader_accuracy.py: shared 2-core machine

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default=str(ROOT / "sample_data" / "ramdocs_dev"))
    ap.add_argument("--limit", type=int, default=100)
    args = ap.parse_args(argv)

    from backend.data import load_dataset
    from backend.llm.client import LLMConfig
    from backend.methods import METHODS
    from backend.runner import Runner

    ds = load_dataset(args.dataset)
    methods = list(METHODS)
    runner = Runner(ds, llm=LLMConfig(cache_mode="off"))
    runner.run(ds.questions[-1], methods)                       # warm-up: model, index, stage 1 if any
    questions = ds.questions[: args.limit]
    per_question, per_method = [], {m: [] for m in methods}
    t_all = time.perf_counter()
    for q in questions:
        t0 = time.perf_counter()
        results = runner.run(q, methods)
        per_question.append(time.perf_counter() - t0)
        for m, r in results.items():
            per_method[m].append(r.wall_s)
    total = time.perf_counter() - t_all
    out = {"dataset": ds.name, "questions": len(questions), "methods": methods,
           "median_s_per_question": round(statistics.median(per_question), 3),
           "p90_s_per_question": round(sorted(per_question)[int(0.9 * (len(per_question) - 1))], 3),
           "questions_per_s": round(len(questions) / total, 3),
           "median_s_per_method": {m: round(statistics.median(v), 3) for m, v in per_method.items()}}
    print(f"{ds.name}: {len(questions)} questions × {len(methods)} methods, offline model, warm, cache off")
    print(f"median {out['median_s_per_question']} s per question (p90 {out['p90_s_per_question']} s), "
          f"{out['questions_per_s']} questions/s")
    for m, v in out["median_s_per_method"].items():
        print(f"  {m:15} median {v} s")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
