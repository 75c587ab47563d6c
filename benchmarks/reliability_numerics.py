"""RA-RAG stage 1 numerics (Algorithm 1 lines 4–9) on a simulated answer matrix.

    .venv/bin/python benchmarks/reliability_numerics.py [--questions 1600] [--sources 9] [--repeat 20]

Simulates the paper's benchmark (p_i ~ Beta(3, 2), coverage r_i = 0.6, 9 wrong answers per question,
seed 0), then times ``estimate_reliability`` on the M × N matrix of answer strings: encoding included,
LLM calls excluded (they are what stage 1 costs; these numerics are not). Budget: 50 ms for
1,600 × 9. The LAST line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from backend.methods.ra_rag import estimate_reliability  # noqa: E402

BUDGET_MS = 50.0


def simulate(m: int, n: int, seed: int = 0, n_wrong: int = 9,
             rng: np.random.Generator | None = None) -> tuple[list[list[str | None]], np.ndarray]:
    """The paper's benchmark: p_i ~ Beta(3, 2), coverage 0.6, ``n_wrong`` wrong answers to pick from."""
    rng = rng or np.random.default_rng(seed)
    p = rng.beta(3, 2, size=n)
    relevant = rng.random((m, n)) < 0.6
    factual = rng.random((m, n)) < p
    wrong = rng.integers(n_wrong, size=(m, n))
    rows = [[None if not relevant[j, i] else f"gold {j}" if factual[j, i] else f"wrong {j} {wrong[j, i]}"
             for i in range(n)] for j in range(m)]
    return rows, p


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=1600)
    ap.add_argument("--sources", type=int, default=9)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    rows, p = simulate(args.questions, args.sources)
    estimate_reliability(rows)  # warm-up (imports, allocator)
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        est = estimate_reliability(rows)
        times.append((time.perf_counter() - start) * 1000)
    mae = float(np.mean(np.abs(est.estimated - p)))
    median = statistics.median(times)
    print(f"{args.questions} questions x {args.sources} sources: median {median:.1f} ms, "
          f"min {min(times):.1f} ms, max {max(times):.1f} ms over {args.repeat} runs "
          f"({est.iterations} iterations, converged={est.converged}); budget {BUDGET_MS:.0f} ms")
    print(f"estimated vs planted reliability: MAE {mae:.3f}")
    print(json.dumps({"questions": args.questions, "sources": args.sources, "median_ms": round(median, 2),
                      "min_ms": round(min(times), 2), "max_ms": round(max(times), 2),
                      "iterations": est.iterations, "converged": est.converged, "mae": round(mae, 4),
                      "budget_ms": BUDGET_MS, "within_budget": median <= BUDGET_MS}))


if __name__ == "__main__":
    main()
