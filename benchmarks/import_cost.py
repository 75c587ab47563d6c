"""What the app's background warm-up costs in CPU, as shipped and without its two savings.

    .venv/bin/python benchmarks/import_cost.py [--repeat 3]

Each variant runs in a fresh interpreter (``python -c``), after the imports every page already has (numpy, pydantic,
pandas, streamlit), and reports the CPU seconds of ``backend.warmup``'s loads (embedding model + chromadb, ROUGE-L's
rouge_score + nltk, litellm):

- ``shipped``: as the app runs them (``backend.warmup._load``: the collector paused, then ``gc.freeze``; nltk loaded
  without SciPy and scikit-learn, ``backend.imports``);
- ``gc on``: the same loads with Python's collector running as usual;
- ``nltk extras``: ROUGE-L's import alone, with and without nltk's eager SciPy / scikit-learn imports.

Prints medians of ``--repeat`` runs and their ratios. The LAST line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_PRELUDE = """
import backend, time, numpy, pydantic, pandas, streamlit
"""
_SNIPPETS = {
    "shipped": _PRELUDE + """
from backend import warmup
t = time.process_time(); warmup._load(); print(time.process_time() - t)
""",
    "gc on": _PRELUDE + """
from backend import warmup
t = time.process_time()
for step in (warmup._embedding_model, warmup._rouge, warmup._litellm):
    step()
print(time.process_time() - t)
""",
    "rouge, nltk without extras": _PRELUDE + """
import sys
t = time.process_time()
from backend.methods.counterfactual.parse import _rouge
_rouge()
assert "scipy" not in sys.modules and "sklearn" not in sys.modules
print(time.process_time() - t)
""",
    "rouge, nltk with extras": _PRELUDE + """
t = time.process_time()
from rouge_score import rouge_scorer
rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True); print(time.process_time() - t)
""",
}


def _cpu_s(code: str) -> float:
    env = {**os.environ, "CONFLICTLENS_CACHE_DIR": os.environ.get("CONFLICTLENS_CACHE_DIR", "/tmp/cl-import-cost")}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    med = {name: statistics.median(_cpu_s(code) for _ in range(args.repeat)) for name, code in _SNIPPETS.items()}
    for name, s in med.items():
        print(f"{name:<28} {s:6.2f} CPU-s")
    ratios = {"warm-up shipped / gc on": med["shipped"] / med["gc on"],
              "rouge without / with nltk extras": med["rouge, nltk without extras"] / med["rouge, nltk with extras"]}
    for name, r in ratios.items():
        print(f"{name:<34} {r:5.2f}")
    print(json.dumps({"cpu_s": {k: round(v, 3) for k, v in med.items()},
                      "ratios": {k: round(v, 3) for k, v in ratios.items()}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
