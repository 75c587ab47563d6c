"""Concurrency through the real HTTP path: ``serve-model --latency-ms 200`` plus ``LLMClient.acomplete``.

    .venv/bin/python benchmarks/concurrency.py [--n 16] [--latency-ms 200]

Starts ``python -m backend serve-model`` in a subprocess on a free loopback port, then runs N calls
(``openai/reader`` via litellm, cache off) with concurrency 1, 4 and 8 and prints the wall times and
the speed-up over the sequential run. With latency L the ideal wall time is about ceil(N/c) * L.
The LAST line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def start_server(latency_ms: float) -> tuple[subprocess.Popen, int]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "backend", "serve-model", "--port", "0", "--latency-ms",
                             str(latency_ms), "--log-level", "warning"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()  # printed after the warm-up, once the socket listens
    if "http://127.0.0.1:" not in line:
        proc.kill()
        raise SystemExit(f"serve-model did not start: {line!r}")
    return proc, int(line.split("http://127.0.0.1:")[1].split("/")[0])


def run(port: int, concurrency: int, n: int, tag: str) -> float:
    from backend.llm.client import LLMClient, LLMConfig

    client = LLMClient(LLMConfig(model="openai/reader", api_base=f"http://127.0.0.1:{port}/v1", cache_mode="off",
                                 timeout_s=30, num_retries=0, concurrency=concurrency), api_key="sk-benchmark")

    def messages(i: int) -> list[dict[str, str]]:
        return [{"role": "user", "content": f"Context: Depot {tag}{i} is managed by Rhea Voss{i}.\n"
                                            f"Question: Who manages Depot {tag}{i}?"}]

    async def main() -> float:
        await client.acomplete(messages(-1), task="keyword_answer", step="warm", question="warm-up")
        start = time.perf_counter()
        calls = await asyncio.gather(*[client.acomplete(messages(i), task="keyword_answer", step=f"q{i}",
                                                        question=f"Who manages Depot {tag}{i}?") for i in range(n)])
        elapsed = time.perf_counter() - start
        bad = [c for c in calls if c.error or not c.response]
        if bad:
            raise SystemExit(f"{len(bad)} calls failed: {bad[0].error}")
        return elapsed

    return asyncio.run(main())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--latency-ms", type=float, default=200.0)
    ap.add_argument("--levels", default="1,4,8", help="comma-separated concurrency levels (the first is the base)")
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    proc, port = start_server(args.latency_ms)
    try:
        wall = {c: run(port, c, args.n, f"c{c}x") for c in levels}
    finally:
        proc.terminate()
        proc.wait(10)
    base = wall[levels[0]]
    latency = args.latency_ms / 1000
    for c in levels:
        ideal = -(-args.n // c) * latency
        print(f"concurrency {c:>2}: {wall[c]:6.2f} s for {args.n} calls (ideal ~{ideal:.2f} s), "
              f"speed-up x{base / wall[c]:.2f}")
    print(json.dumps({"n": args.n, "latency_ms": args.latency_ms,
                      "wall_s": {str(c): round(wall[c], 3) for c in levels},
                      "speedup": {str(c): round(base / wall[c], 2) for c in levels}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
