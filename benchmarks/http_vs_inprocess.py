"""The offline model in-process beside the same model over HTTP without task fields: identical final answers?

    .venv/bin/python benchmarks/http_vs_inprocess.py [--datasets ramdocs_dev,scenarios] [--methods all] [--limit N]

For each dataset, every method is evaluated twice with the library's batch evaluation (``backend.evaluate``):
in-process (``offline/reader``: the client sends the task fields beside the prompt, which only cross-check the
offline model's reading of it) and through ``python -m backend serve-model`` on loopback, reached as a hosted model is
(``openai/reader`` + ``api_base``, litellm's OpenAI provider, no task fields: the model has the prompt alone). The
server is started per dataset with ``--knowledge <dataset>``, so its memory is that dataset's ``internal_knowledge``,
as the in-process run's is. No reply cache; RA-RAG's stage 1 is computed by each run (the shipped artefacts are
left out, so both runs pay for and use their own). A pair is identical when both rows have the same final answers
(the same strings, in the same order), the same abstention and no error.

Prints one table per dataset (method, pairs, identical %, answered % over HTTP -- pairs with at least one final
answer --, errors) with the overall, then the total; the LAST line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")          # see reader_accuracy.py: shared 2-core machine
os.environ.setdefault("OPENAI_API_KEY", "sk-local")          # litellm's OpenAI provider wants a key (any text)
os.environ["CONFLICTLENS_SHIPPED_PREPARED"] = "0"            # each run computes its own RA-RAG stage 1

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TARGET = 99.0


@contextmanager
def serve_model(knowledge: Path):
    """``python -m backend serve-model`` on a free loopback port with ``--knowledge``; yields its api_base."""
    err = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen([sys.executable, "-m", "backend", "serve-model", "--port", "0", "--knowledge",
                             str(knowledge), "--log-level", "warning"], cwd=ROOT, stdout=subprocess.PIPE, stderr=err,
                            text=True)
    try:
        line = proc.stdout.readline()   # printed once the reader is warm
        found = re.search(r"api_base='(http://127\.0\.0\.1:\d+/v1)'", line)
        if found is None:
            err.seek(0)
            raise RuntimeError(f"serve-model did not start: {line}{err.read()[-2000:]}")
        yield found[1]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        err.close()


def run(dataset, questions, methods: list[str], llm, out: Path, concurrency: int) -> tuple[dict, float]:
    from backend.evaluate import evaluate, load_results
    from backend.runner import Runner

    start = time.perf_counter()
    evaluate(Runner(dataset, llm=llm), questions, methods, out, concurrency=concurrency)
    results, _ = load_results(out / "results.jsonl")
    return results, time.perf_counter() - start


def identical(a, b) -> bool:
    return a.error is None and b.error is None and a.answers == b.answers and a.abstained == b.abstained


def compare(dataset: str, questions, methods: list[str], local: dict, http: dict) -> dict:
    rows = {}
    for m in methods:
        pairs = [(local.get((q.id, m)), http.get((q.id, m))) for q in questions]
        same = sum(1 for a, b in pairs if a is not None and b is not None and identical(a, b))
        errors = sum(1 for a, b in pairs for r in (a, b) if r is None or r.error)
        differ = [q.id for q, (a, b) in zip(questions, pairs) if not (a and b and identical(a, b))]
        first_error = next((f"{where}: {r.error}" for a, b in pairs for where, r in (("in-process", a), ("http", b))
                            if r is not None and r.error), None)
        answered = sum(1 for _, b in pairs if b is not None and b.answers)
        rows[m] = {"pairs": len(pairs), "identical": same, "identical_pct": round(100 * same / len(pairs), 1),
                   "answered_http_pct": round(100 * answered / len(pairs), 1), "errors": errors, "differ": differ[:10],
                   "first_error": first_error}
    return rows


def print_table(dataset: str, rows: dict, walls: tuple[float, float]) -> None:
    print(f"\n{dataset}: in-process {walls[0]:.0f} s, over HTTP without task fields {walls[1]:.0f} s")
    print(f"{'method':<16}{'pairs':>7}{'identical':>11}{'answered':>10}{'errors':>8}  differing questions")
    for m, r in rows.items():
        print(f"{m:<16}{r['pairs']:>7}{r['identical_pct']:>10.1f}%{r['answered_http_pct']:>9.1f}%{r['errors']:>8}  "
              f"{', '.join(r['differ']) or '-'}")
    n, same = sum(r["pairs"] for r in rows.values()), sum(r["identical"] for r in rows.values())
    print(f"{'overall':<16}{n:>7}{100 * same / n:>10.1f}%")
    for m, r in rows.items():
        if r["first_error"]:
            print(f"  {m}, first error: {r['first_error'][:300]}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default="ramdocs_dev,scenarios", help="bundled dataset names or paths")
    ap.add_argument("--methods", default="all")
    ap.add_argument("--limit", type=int, default=None, help="first N questions of each dataset only")
    ap.add_argument("--concurrency", type=int, default=4, help="questions at once")
    args = ap.parse_args(argv)

    from backend.data import load_dataset
    from backend.llm.client import LLMConfig
    from backend.methods import resolve
    from backend.paths import SAMPLE_DATA

    methods = resolve(args.methods)
    tables, total, same = {}, 0, 0
    with tempfile.TemporaryDirectory(prefix="http-vs-inprocess-") as tmp:
        os.environ["CONFLICTLENS_CACHE_DIR"] = str(Path(tmp) / "cache")   # no reply, index or stage-1 reuse
        for name in [d.strip() for d in args.datasets.split(",") if d.strip()]:
            path = Path(name) if Path(name).exists() else SAMPLE_DATA / name
            ds = load_dataset(path)
            questions = ds.questions[: args.limit] if args.limit else ds.questions
            local, t_local = run(ds, questions, methods, LLMConfig(model="offline/reader", cache_mode="off"),
                                 Path(tmp) / f"{ds.name}-local", args.concurrency)
            with serve_model(path) as api_base:
                http, t_http = run(ds, questions, methods,
                                   LLMConfig(model="openai/reader", api_base=api_base, cache_mode="off"),
                                   Path(tmp) / f"{ds.name}-http", args.concurrency)
            rows = compare(ds.name, questions, methods, local, http)
            print_table(ds.name, rows, (t_local, t_http))
            tables[ds.name] = rows
            total += sum(r["pairs"] for r in rows.values())
            same += sum(r["identical"] for r in rows.values())
    worst = min(r["identical_pct"] for rows in tables.values() for r in rows.values())
    print(f"\ntotal: {total} (question, method) pairs, {100 * same / total:.1f}% identical; lowest method "
          f"{worst:.1f}% (target >= {TARGET:g}% for every method)")
    print(json.dumps({"datasets": tables, "pairs": total, "identical_pct": round(100 * same / total, 2),
                      "lowest_method_pct": worst, "target_pct": TARGET}))
    return 0 if worst >= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
