"""Accuracy and speed of the offline extractive reader (backend.llm.reader) per document type.

    .venv/bin/python benchmarks/reader_accuracy.py --dataset sample_data/ramdocs_dev [--limit N] [--half fit|held-out]

The reader sees only (question, passage); labels are used here for scoring only:
  * correct docs: the answer matches the doc's labelled answer (``correct_doc_accuracy``: the lenient match below,
    none of the papers' rules; beside it ``correct_doc_squad_em``, SQuAD's exact match after normalisation, the
    papers' EM) or the reader abstained;
  * misinfo docs: the answer matches the misinfo doc's labelled answer ("faithful" to the passage);
  * noise docs: the reader abstained.
Matching: lowercase, strip punctuation and articles; equal if either contains the other as a word
sequence, or token F1 >= 0.5. Speed: documents per second of ``read_batch`` after a warm-up (model
loaded, caches cleared), one batch per question, median of ``--repeat`` timed passes (caches cleared
before each). The LAST line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

# On a shared 2-core machine, busy-waiting OpenMP threads in torch collapse throughput whenever another
# process also wants a core (measured: 12 vs 61 docs/s with one competing busy process). Yielding
# threads cost nothing when the machine is idle. Must be set before torch is imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from backend import answers  # noqa: E402  (after the sys.path fix above)
from backend.scoring import squad_em  # noqa: E402


def matches(pred: str | None, gold: str | None) -> bool:
    """Lenient match (backend.answers): word-sequence containment either way, or token F1 >= 0.5."""
    return bool(pred) and bool(gold) and answers.matches(pred, gold)


def half(questions: list, which: str) -> list:
    """The calibration split: "fit" = questions at odd 1-based positions (1, 3, 5...), "held-out" = even ones."""
    return [q for i, q in enumerate(questions, start=1) if (i % 2 == 1) == (which == "fit")]


def metrics(records: list[dict]) -> dict:
    """records: {"type": correct|misinfo|noise, "label": str|None, "answer": str|None, "qtype": str}.
    Returns the headline figures plus per-type and per-question-type breakdowns."""
    by_type: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        by_type[r["type"]].append(r)

    def rate(rows, pred) -> float | None:
        return round(sum(1 for r in rows if pred(r)) / len(rows), 4) if rows else None

    cor, mis, noi = by_type["correct"], by_type["misinfo"], by_type["noise"]
    out = {
        "correct_doc_accuracy": rate(cor, lambda r: matches(r["answer"], r["label"])),
        "correct_doc_squad_em": rate(cor, lambda r: bool(r["answer"] and r["label"])
                                     and squad_em([r["answer"]], [r["label"]])),
        "correct_doc_abstention": rate(cor, lambda r: r["answer"] is None),
        "misinfo_doc_faithfulness": rate(mis, lambda r: matches(r["answer"], r["label"])),
        "noise_doc_abstention": rate(noi, lambda r: r["answer"] is None),
    }
    per_qtype = {}
    for qt in sorted({r["qtype"] for r in cor}):
        rows = [r for r in cor if r["qtype"] == qt]
        per_qtype[qt] = {"n": len(rows), "accuracy": rate(rows, lambda r: matches(r["answer"], r["label"])),
                         "abstention": rate(rows, lambda r: r["answer"] is None)}
    noise_qt = {}
    for qt in sorted({r["qtype"] for r in noi}):
        rows = [r for r in noi if r["qtype"] == qt]
        noise_qt[qt] = {"n": len(rows), "abstention": rate(rows, lambda r: r["answer"] is None)}
    out["counts"] = {t: len(v) for t, v in sorted(by_type.items())}
    out["per_qtype_correct"] = per_qtype
    out["per_qtype_noise"] = noise_qt
    return out


def _table(m: dict) -> str:
    lines = ["", "Per document type", f"{'type':10}{'n':>6}  figure",
             f"{'correct':10}{m['counts'].get('correct', 0):>6}  match (lenient) {m['correct_doc_accuracy']}"
             f"   EM (SQuAD) {m['correct_doc_squad_em']}   abstained {m['correct_doc_abstention']}",
             f"{'misinfo':10}{m['counts'].get('misinfo', 0):>6}  faithful {m['misinfo_doc_faithfulness']}",
             f"{'noise':10}{m['counts'].get('noise', 0):>6}  abstained {m['noise_doc_abstention']}",
             "", "Correct docs by question type", f"{'qtype':10}{'n':>6}{'match*':>10}{'abstain':>9}"]
    for qt, v in m["per_qtype_correct"].items():
        lines.append(f"{qt:10}{v['n']:>6}{v['accuracy']:>10}{v['abstention']:>9}")
    lines += ["* match (lenient): containment either way or token F1 >= 0.5, the project's rule (not a paper's)",
              "", "Noise docs by question type", f"{'qtype':10}{'n':>6}{'abstain':>9}"]
    for qt, v in m["per_qtype_noise"].items():
        lines.append(f"{qt:10}{v['n']:>6}{v['abstention']:>9}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", required=True, help="project dataset folder/.jsonl or a raw RAMDocs .jsonl")
    ap.add_argument("--limit", type=int, default=None, help="first N questions only")
    ap.add_argument("--half", choices=["fit", "held-out"], default=None,
                    help="only the questions the reader's threshold is fitted on (odd positions: 1, 3, 5...) or "
                         "only the others (even positions), see benchmarks/reader_calibration.py")
    ap.add_argument("--batch", choices=["question", "all"], default="question",
                    help="one read_batch per question (default) or one for the whole dataset")
    ap.add_argument("--repeat", type=int, default=3, help="timed passes; the median speed is reported")
    ap.add_argument("--dump", type=Path, default=None, help="write per-document readings as JSONL")
    args = ap.parse_args(argv)

    from backend.data import load_dataset
    from backend.llm import reader

    ds = load_dataset(args.dataset)
    questions = ds.questions[: args.limit] if args.limit else ds.questions
    if args.half:
        questions = half(questions, args.half)

    # warm-up on text that is not in the dataset: loads the model, then forget every cache
    reader.read_batch([("When was the bridge opened?", "The bridge was opened on 3 May 1901. It is long.")])
    reader.clear_caches()

    items = [[(q.question, d.text) for d in q.documents] for q in questions]
    n_docs = sum(len(x) for x in items)
    speeds = []
    for _ in range(max(1, args.repeat)):
        reader.clear_caches()  # every pass reads from scratch: no cached readings or question vectors
        t0 = time.perf_counter()
        if args.batch == "all":
            flat = iter(reader.read_batch([it for group in items for it in group]))
            readings = [[next(flat) for _ in group] for group in items]
        else:
            readings = [reader.read_batch(group) for group in items]
        elapsed = time.perf_counter() - t0
        speeds.append(n_docs / elapsed if elapsed > 0 else float("inf"))
    dps = statistics.median(speeds)

    records = []
    for q, rs in zip(questions, readings):
        for d, r in zip(q.documents, rs):
            if d.label is None:
                continue
            records.append({"question": q.question, "doc": d.id, "type": d.label.type,
                            "label": d.label.answer, "answer": r.answer, "qtype": r.qtype,
                            "ok": matches(r.answer, d.label.answer), "sentence": r.sentence,
                            "relevance": r.relevance, "candidates": r.candidates, "signals": r.signals})
    m = metrics(records)
    if args.dump:
        with args.dump.open("w") as fh:
            for rec in records:
                fh.write(json.dumps(rec) + "\n")
    print(f"dataset {ds.name}: {len(questions)} questions, {n_docs} documents")
    print(_table(m))
    print(f"\nspeed: {dps:.1f} documents/second (median of {', '.join(f'{x:.1f}' for x in speeds)}; "
          f"read_batch per {args.batch}, after warm-up)")
    headline = {k: m[k] for k in ("correct_doc_accuracy", "correct_doc_abstention",
                                  "misinfo_doc_faithfulness", "noise_doc_abstention")}
    headline["docs_per_second"] = round(dps, 1)
    print(json.dumps(headline))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
