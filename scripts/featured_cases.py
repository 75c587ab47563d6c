"""Compute the question the app opens on for each bundled dataset (sample_data/featured.json): run every method
with the offline model on each question and take the most telling case (``backend.cases.featured``: only one
method right first, then methods split by source, ...). Deterministic; tests/test_cases.py checks it still holds.

    python scripts/featured_cases.py [DATASET ...]     (default: ramdocs_dev)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import backend  # noqa: E402, F401  (offline environment before any heavy import)
from backend.cases import FEATURED_FILE, featured, find_cases  # noqa: E402
from backend.data import bundled_datasets, load_dataset  # noqa: E402
from backend.llm.client import LLMConfig  # noqa: E402
from backend.methods import METHODS  # noqa: E402
from backend.runner import Runner  # noqa: E402

MODEL = "offline/reader"


def compute(name: str) -> dict | None:
    ds = load_dataset(bundled_datasets()[name])
    run = Runner(ds, llm=LLMConfig(model=MODEL), cache=None)
    results = {}
    for i, q in enumerate(ds.questions, 1):
        results[q.id] = run.run(q, list(METHODS))
        print(f"\r{name}: {i}/{len(ds.questions)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    case = featured(find_cases(ds.questions, results))
    return None if case is None else {"question": case.question_id, "kind": case.kind, "model": MODEL}


def main(names: list[str]) -> None:
    data = json.loads(FEATURED_FILE.read_text(encoding="utf-8")) if FEATURED_FILE.exists() else {}
    for name in names:
        if (entry := compute(name)) is not None:
            data[name] = entry
    FEATURED_FILE.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(json.dumps(data, indent=2, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:] or ["ramdocs_dev"])
