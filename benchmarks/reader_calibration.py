"""Fit the offline reader's abstention threshold on one half of a dataset and report the other half.

    .venv/bin/python benchmarks/reader_calibration.py [--dataset sample_data/ramdocs_dev] [--max-abstention 0.06]

The reader abstains when no candidate of the expected type exists or its confidence is below
``reader.MIN_CONFIDENCE``. On the fit half (odd positions, ``reader_accuracy.half``) this sweeps the threshold and
picks the highest one whose correct-document abstention stays at or below ``--max-abstention`` (the most noise
abstention the budget allows), then reports both halves at that threshold and at the current one. The held-out
half's figures are the honest ones: nothing was chosen on it. The LAST line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.reader_accuracy import half, matches  # noqa: E402

GRID = [round(0.20 + 0.01 * k, 2) for k in range(31)]   # 0.20 .. 0.50


def readings(questions) -> list[dict]:
    """Per labelled document: its type, label and what the reader found (answer, confidence, candidates)."""
    from backend.llm import reader

    out = []
    for q in questions:
        for d, r in zip(q.documents, reader.read_batch([(q.question, d.text) for d in q.documents])):
            if d.label is not None:
                out.append({"type": d.label.type, "label": d.label.answer, "answer": r.answer,
                            "candidates": bool(r.candidates), "confidence": r.signals.get("confidence") or 0.0})
    return out


def at(records: list[dict], threshold: float) -> dict:
    """The reader's figures had its threshold been ``threshold`` (its answer otherwise unchanged)."""
    def abstains(r):
        return not r["candidates"] or r["confidence"] < threshold

    cor = [r for r in records if r["type"] == "correct"]
    noi = [r for r in records if r["type"] == "noise"]
    mis = [r for r in records if r["type"] == "misinfo"]
    rate = lambda rows, f: round(sum(map(f, rows)) / len(rows), 4) if rows else None  # noqa: E731
    return {"threshold": threshold,
            "correct_doc_accuracy": rate(cor, lambda r: not abstains(r) and matches(r["answer"], r["label"])),
            "correct_doc_abstention": rate(cor, abstains),
            "misinfo_doc_faithfulness": rate(mis, lambda r: not abstains(r) and matches(r["answer"], r["label"])),
            "noise_doc_abstention": rate(noi, abstains)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default=str(ROOT / "sample_data" / "ramdocs_dev"))
    ap.add_argument("--max-abstention", type=float, default=0.06,
                    help="budget of correct-document abstention on the fit half")
    args = ap.parse_args(argv)

    from backend.data import load_dataset
    from backend.llm.reader import reader

    ds = load_dataset(args.dataset)
    fit, held = readings(half(ds.questions, "fit")), readings(half(ds.questions, "held-out"))
    ok = [t for t in GRID if at(fit, t)["correct_doc_abstention"] <= args.max_abstention]
    chosen = max(ok) if ok else min(GRID)
    out = {"dataset": ds.name, "max_abstention": args.max_abstention, "chosen_threshold": chosen,
           "current_threshold": reader.MIN_CONFIDENCE,
           "fit": at(fit, chosen), "held_out": at(held, chosen),
           "held_out_at_current": at(held, reader.MIN_CONFIDENCE)}
    print(f"{ds.name}: threshold fitted on {len(half(ds.questions, 'fit'))} questions (odd positions), "
          f"reported on the other {len(half(ds.questions, 'held-out'))}")
    print(f"chosen {chosen} (highest with fit-half correct-document abstention ≤ {args.max_abstention}); "
          f"the reader uses {reader.MIN_CONFIDENCE}")
    for name in ("fit", "held_out"):
        print(f"  {name:9} " + "  ".join(f"{k} {v}" for k, v in out[name].items() if k != "threshold"))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
