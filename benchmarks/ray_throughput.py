"""Batch evaluation throughput, local engine vs Ray engine, on the offline model: questions/s and
(question, method) pairs/s, and the ratio Ray / local.

    .venv/bin/python benchmarks/ray_throughput.py [--limit 20] [--methods no_rag,vanilla_rag,madam]
                                                  [--ray-address HOST:PORT] [--workers N] [--concurrency 4]

Without ``--ray-address`` it starts its own one-machine cluster on loopback (``ray start --head``, one CPU per core)
and stops it afterwards. Both engines run the same questions with the call cache off (every model call runs), into
fresh output folders. "end to end" is the whole ``evaluate`` call (for Ray: connecting, starting the workers, each
loading its own model); "steady" is the rate between the first and the last question finished. The local runner is
warmed up first (model loaded), so "end to end" favours the local engine by the model's load time. The LAST line
printed is one JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see reader_accuracy.py: shared 2-core machine

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _timed(run) -> dict:
    """Run ``run(on_progress)`` and return the end-to-end and steady rates from its progress reports."""
    stamps: list[float] = []

    def on_progress(done: int, total: int) -> None:
        if done:
            stamps.append(time.perf_counter())

    start = time.perf_counter()
    summary = run(on_progress)
    total = time.perf_counter() - start
    n = len(stamps)
    steady = (n - 1) / (stamps[-1] - stamps[0]) if n > 1 and stamps[-1] > stamps[0] else None
    return {"seconds": round(total, 2), "questions_per_s": round(n / total, 3),
            "steady_questions_per_s": round(steady, 3) if steady else None, "complete": summary["complete"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default=str(ROOT / "sample_data" / "ramdocs_dev"))
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--methods", default="no_rag,vanilla_rag,madam")
    ap.add_argument("--ray-address", default=None, help="an existing cluster (default: start a local one)")
    ap.add_argument("--workers", type=int, default=None, help="Ray workers (default: one per CPU of the cluster)")
    ap.add_argument("--concurrency", type=int, default=4, help="questions at once (per Ray worker)")
    args = ap.parse_args(argv)

    from backend.data import load_dataset
    from backend.evaluate import evaluate
    from backend.evaluate_ray import local_cluster, ray_engine
    from backend.llm.client import LLMConfig
    from backend.runner import Runner

    ds = load_dataset(args.dataset)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    questions = ds.questions[: args.limit]
    runner = Runner(ds, llm=LLMConfig(cache_mode="off"))
    runner.run(ds.questions[-1], methods)  # warm-up: the model, stage 1 if any
    pairs = len(questions) * len(methods)
    cpus = os.cpu_count() or 1

    with tempfile.TemporaryDirectory(prefix="cl-bench-") as tmp:
        local = _timed(lambda p: evaluate(runner, questions, methods, Path(tmp) / "local",
                                          concurrency=args.concurrency, on_progress=p))
        cluster = (contextlib.nullcontext(args.ray_address) if args.ray_address else local_cluster(num_cpus=cpus))
        with cluster as address:
            ray = _timed(lambda p: evaluate(runner, questions, methods, Path(tmp) / "ray", concurrency=args.concurrency,
                                            on_progress=p, engine=ray_engine(address, args.workers)))
    for r in (local, ray):
        r["pairs_per_s"] = round(r["questions_per_s"] * len(methods), 3)
        if r["steady_questions_per_s"]:
            r["steady_pairs_per_s"] = round(r["steady_questions_per_s"] * len(methods), 3)
    ratio = round(ray["questions_per_s"] / local["questions_per_s"], 2)
    steady_ratio = (round(ray["steady_questions_per_s"] / local["steady_questions_per_s"], 2)
                    if ray["steady_questions_per_s"] and local["steady_questions_per_s"] else None)
    print(f"{ds.name}: {len(questions)} questions x {len(methods)} methods ({pairs} pairs), offline model, cache off, "
          f"{cpus} cores, concurrency {args.concurrency}")
    for name, r in (("local", local), ("ray", ray)):
        print(f"  {name:5}  {r['seconds']:7.1f} s  {r['questions_per_s']:6.3f} questions/s  {r['pairs_per_s']:6.3f} "
              f"pairs/s end to end;  steady {r['steady_questions_per_s']} questions/s")
    print(f"  ray / local: {ratio}x end to end, {steady_ratio}x steady")
    print(json.dumps({"dataset": ds.name, "questions": len(questions), "methods": methods, "cores": cpus,
                      "concurrency": args.concurrency, "local": local, "ray": ray, "ratio": ratio,
                      "steady_ratio": steady_ratio}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
