"""What building a dataset's retrieval index costs, and what storing the document texts in it would add.

    .venv/bin/python benchmarks/index_build.py [--dataset sample_data/multisource] [--repeat 3]

Builds the index of the dataset into an empty folder with ``Retriever.build`` (vectors from the shipped file, as
the app does on a bundled dataset), then the same rows once more with chromadb's ``upsert`` also given each
document's text, which chromadb puts in its full-text index. Prints CPU seconds (this process, all threads; far less
inflated than wall time by other processes) for both, median of ``--repeat`` runs, and their ratio.
The LAST line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _cpu_s(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default=str(ROOT / "sample_data" / "multisource"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    from backend.data import load_dataset
    from backend.retrieval import Retriever, UPSERT_ROWS

    ds = load_dataset(args.dataset)
    with tempfile.TemporaryDirectory() as warm:  # loads chromadb, the vectors and the model key once, untimed
        with Retriever(ds, warm) as r:
            r.build()
    ours, with_text = [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as folder:
            with Retriever(ds, folder) as r:
                ours.append(_cpu_s(r.build))
                rows = r._collection.get(include=["embeddings", "metadatas"])
        with tempfile.TemporaryDirectory() as folder:
            with Retriever(ds, folder) as r:
                texts = {doc_id: r.document(doc_id).text for doc_id in rows["ids"]}

                def upsert_with_text() -> None:
                    for start in range(0, len(rows["ids"]), UPSERT_ROWS):
                        ids = rows["ids"][start:start + UPSERT_ROWS]
                        r._collection.upsert(ids=ids, embeddings=rows["embeddings"][start:start + UPSERT_ROWS],
                                             metadatas=rows["metadatas"][start:start + UPSERT_ROWS],
                                             documents=[texts[i] for i in ids])

                with_text.append(_cpu_s(upsert_with_text))
    a, b = statistics.median(ours), statistics.median(with_text)
    n = len(rows["ids"])
    print(f"{ds.name}: {n} documents; index build {a:.2f} CPU-s; the same rows with their texts stored "
          f"{b:.2f} CPU-s; ratio {a / b:.2f}")
    print(json.dumps({"dataset": ds.name, "documents": n, "build_cpu_s": round(a, 3),
                      "with_texts_cpu_s": round(b, 3), "ratio": round(a / b, 3)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
