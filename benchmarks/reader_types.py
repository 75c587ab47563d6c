"""Does the offline reader answer the question's type? Per question kind (who / when / where / how many / what /
other), on every question of a dataset.

    .venv/bin/python benchmarks/reader_types.py [--dataset sample_data/ramdocs_dev] [--compare] [--list]

Per question, the reader's answer is the offline model's ``keyword_answer`` (the answer most passages support, as
vanilla RAG gets it); per document, its reading of that one passage. Figures:
  * answer match (lenient) — the question's answer names a gold answer (``backend.scoring.accuracy``: the project's
    rule, none of the papers'); per document, the correct documents' answers naming their labelled answer;
  * EM (SQuAD) — beside it, the answer equals a gold answer after SQuAD normalisation (``backend.scoring.squad_em``,
    the metric of RA-RAG's and BRIDGE's papers and of vanilla RAG, whose answer this is); per document, against the
    labelled answer;
  * type mismatch — answers given whose text is not of the type the question asks for (``reader.atype.fits``:
    who -> a person or organisation, when -> a date, how many -> a number, where -> a place), over all answers given
    (questions) or over all labelled documents (documents); what / other questions are not checked. The check
    is the reader's own, so with it on this figure is 0 by construction: it measures how often the check fired
    (the "off" column), not whether the check is right (``--list`` shows the answers it refuses, to read by eye);
  * abstained — "I don't know"; per document, the noise documents' abstentions next to the correct ones'.
``--compare`` reads everything twice, without and with the reader's answer-type check (``reader.TYPE_CHECK``), and
prints both tables; ``--list`` prints every answer of the wrong type (question, document type, answer). The reader
sees only (question, passage); labels and gold answers are used here for scoring only. The LAST line printed is one
JSON object.
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

BUCKETS = ("who", "when", "where", "how many", "what", "other")


def run(questions) -> dict:
    """Per-question and per-document records of one pass of the reader over ``questions``."""
    from backend import scoring
    from backend.llm.offline.common import best_answer
    from backend.llm.reader import atype, read_batch

    qrows, drows = [], []
    for q in questions:
        readings = read_batch([(q.question, d.text) for d in q.documents])
        answer, _ = best_answer(readings)
        qtype = readings[0].qtype if readings else "WHAT"
        bucket = atype.wh_bucket(q.question)
        qrows.append({"id": q.id, "question": q.question, "bucket": bucket, "qtype": qtype, "answer": answer,
                      "correct": bool(answer) and scoring.accuracy([answer], list(q.gold_answers)),
                      "em": bool(answer) and scoring.squad_em([answer], list(q.gold_answers)),
                      "mismatch": bool(answer) and not atype.fits(qtype, answer, q.question)})
        for d, r in zip(q.documents, readings):
            if d.label is None:
                continue
            label = d.label.answer
            drows.append({"id": d.id, "question": q.question, "bucket": bucket, "type": d.label.type,
                          "answer": r.answer, "reason": r.signals.get("reason"),
                          "correct": bool(r.answer and label) and scoring.accuracy([r.answer], [label]),
                          "em": bool(r.answer and label) and scoring.squad_em([r.answer], [label]),
                          "mismatch": bool(r.answer) and not atype.fits(qtype, r.answer, q.question)})
    return {"questions": qrows, "documents": drows}


def _rate(rows, pred) -> float | None:
    return round(100 * sum(1 for r in rows if pred(r)) / len(rows), 1) if rows else None


def table(rec: dict) -> dict:
    """bucket -> figures (percent); "all" for every question."""
    out = {}
    for b in BUCKETS + ("all",):
        qs = [r for r in rec["questions"] if b in ("all", r["bucket"])]
        ds = [r for r in rec["documents"] if b in ("all", r["bucket"])]
        cor = [r for r in ds if r["type"] == "correct"]
        noise = [r for r in ds if r["type"] == "noise"]
        answered = [r for r in qs if r["answer"]]
        out[b] = {"n": len(qs), "lenient_match": _rate(qs, lambda r: r["correct"]),
                  "squad_em": _rate(qs, lambda r: r["em"]),
                  "mismatch": _rate(answered, lambda r: r["mismatch"]),
                  "abstained": _rate(qs, lambda r: not r["answer"]),
                  "docs": len(ds), "doc_lenient_match": _rate(cor, lambda r: r["correct"]),
                  "doc_squad_em": _rate(cor, lambda r: r["em"]),
                  "doc_mismatch": _rate(ds, lambda r: r["mismatch"]),
                  "correct_doc_abstained": _rate(cor, lambda r: not r["answer"]),
                  "noise_doc_abstained": _rate(noise, lambda r: not r["answer"])}
    return out


def render(t: dict, title: str) -> str:
    def f(v):
        return "—" if v is None else f"{v:.1f}"
    head = (f"{'kind':10}{'n':>4}{'EM %':>7}{'match* %':>10}{'mismatch %':>12}{'abstain %':>11} |{'docs':>6}"
            f"{'EM %':>7}{'match* %':>10}{'mismatch %':>12}{'abst. correct':>15}{'abst. noise':>13}")
    lines = ["", title, "questions (keyword_answer over all passages)".ljust(54) + "| documents (one passage each)",
             head]
    for b, v in t.items():
        lines.append(f"{b:10}{v['n']:>4}{f(v['squad_em']):>7}{f(v['lenient_match']):>10}{f(v['mismatch']):>12}"
                     f"{f(v['abstained']):>11} |{v['docs']:>6}{f(v['doc_squad_em']):>7}"
                     f"{f(v['doc_lenient_match']):>10}{f(v['doc_mismatch']):>12}"
                     f"{f(v['correct_doc_abstained']):>15}{f(v['noise_doc_abstained']):>13}")
    lines.append("EM: SQuAD exact match (the papers' EM); match*: answer match (lenient), the project's rule.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default=str(ROOT / "sample_data" / "ramdocs_dev"),
                    help="project dataset folder/.jsonl or a raw RAMDocs .jsonl")
    ap.add_argument("--limit", type=int, default=None, help="first N questions only")
    ap.add_argument("--compare", action="store_true", help="also read without the answer-type check")
    ap.add_argument("--list", action="store_true", help="print every answer of the wrong type")
    args = ap.parse_args(argv)

    from backend.data import load_dataset
    from backend.llm import reader
    from backend.llm.reader import reader as pipeline

    ds = load_dataset(args.dataset)
    questions = ds.questions[: args.limit] if args.limit else ds.questions
    print(f"dataset {ds.name}: {len(questions)} questions, {sum(len(q.documents) for q in questions)} documents")
    passes = [False, True] if args.compare else [pipeline.TYPE_CHECK]
    results = {}
    try:
        for checked in passes:
            pipeline.TYPE_CHECK = checked
            reader.clear_caches()   # a cached reading was made with the other setting
            rec = run(questions)
            results["checked" if checked else "unchecked"] = table(rec)
            print(render(results["checked" if checked else "unchecked"],
                         f"answer-type check {'on' if checked else 'off'} (percent)"))
            if args.list:
                print("wrong-type answers:")
                for r in rec["questions"]:
                    if r["mismatch"]:
                        print(f"  question  {r['id']}  {r['bucket']:8} {r['answer']!r}  <- {r['question']}")
                for r in rec["documents"]:
                    if r["mismatch"]:
                        print(f"  {r['type']:9} {r['id']}  {r['bucket']:8} {r['answer']!r}")
    finally:
        pipeline.TYPE_CHECK = True
        reader.clear_caches()
    print(json.dumps({k: v["all"] for k, v in results.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
