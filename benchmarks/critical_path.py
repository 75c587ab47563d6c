"""How close a concurrent run of every registered method comes to its critical path.

    .venv/bin/python benchmarks/critical_path.py [--dataset sample_data/ramdocs_dev] [--question @1] [--latency-ms 300]

Starts ``serve-model`` with a fixed latency per call, runs all registered methods on one question through
the runner (P1, cache empty), and prints wall time / (critical-path calls x latency): 1.0 is the best any
schedule can do; target <= 1.15. A first, untimed run on a throwaway cache warms up imports and clients. Then the same calls run one after another (what the papers' released code
does) for comparison, and finally P1 again with its cache (P2): the uncached calls there should be 0.
The LAST line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.concurrency import start_server  # noqa: E402


def run(dataset, question, methods, port: int, cache_dir: str, concurrency: int, sequential: bool):
    from backend.callgraph import critical_path
    from backend.llm.client import LLMConfig, default_cache
    from backend.runner import Runner

    cfg = LLMConfig(model="openai/reader", api_base=f"http://127.0.0.1:{port}/v1", send_task_fields=True,
                    timeout_s=60, num_retries=0, concurrency=concurrency)
    runner = Runner(dataset, llm=cfg, cache=default_cache(cache_dir), api_key="sk-benchmark")
    start = time.perf_counter()
    results = runner.run(question, methods, sequential=sequential)
    wall = time.perf_counter() - start
    calls = [c for r in results.values() for c in r.calls]
    errors = {m: r.error for m, r in results.items() if r.error}
    if errors:
        raise SystemExit(f"methods failed: {errors}")
    return wall, calls, len(critical_path(calls))


def main() -> int:
    from backend.data import load_dataset
    from backend.methods import METHODS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default=str(ROOT / "sample_data" / "ramdocs_dev"))
    ap.add_argument("--question", default="@1")
    ap.add_argument("--latency-ms", type=float, default=300.0)
    args = ap.parse_args()
    dataset = load_dataset(args.dataset)
    question = dataset.question(args.question)
    methods = list(METHODS)
    latency = args.latency_ms / 1000
    proc, port = start_server(args.latency_ms)
    try:
        with tempfile.TemporaryDirectory() as warm:  # one-off set-up (imports, HTTP clients) is not timed
            run(dataset, question, methods, port, warm, concurrency=64, sequential=False)
        with tempfile.TemporaryDirectory() as p1_cache, tempfile.TemporaryDirectory() as seq_cache:
            wall, calls, cp = run(dataset, question, methods, port, p1_cache, concurrency=64, sequential=False)
            seq_wall, seq_calls, _ = run(dataset, question, methods, port, seq_cache, concurrency=1, sequential=True)
            _, p2_calls, _ = run(dataset, question, methods, port, p1_cache, concurrency=64, sequential=False)
    finally:
        proc.terminate()
        proc.wait(10)
    uncached = sum(not c.cache_hit for c in p2_calls)
    summary = {"p1_ratio": round(wall / (cp * latency), 3), "sequential_ratio": round(seq_wall / (cp * latency), 3),
               "p2_uncached_calls": uncached, "critical_path_calls": cp, "total_calls": len(calls)}
    print(f"methods: {', '.join(methods)} on {question.id}; latency {args.latency_ms:.0f} ms per call")
    print(f"P1 concurrent: {wall:.2f} s for {len(calls)} calls; critical path {cp} calls = {cp * latency:.2f} s")
    print(f"sequential:    {seq_wall:.2f} s for {len(seq_calls)} calls")
    print(f"P2 cached:     {uncached} uncached calls")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
