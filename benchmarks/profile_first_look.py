"""Where a cold first Inspect spends its time, by component: the path the dashboard takes on its first question
(imports, dataset, every method's dataset-level preparation, the retrieval index, all methods on one question),
in one process with an empty cache folder, under cProfile.

    .venv/bin/python benchmarks/profile_first_look.py [--dataset sample_data/multisource] [--question @1]
        [--then @2] [--calibration N] [--top 25] [--out profile.pstats]

Prints each component's inclusive time (summed over threads: the offline model runs up to 4 calls at once) as a
share of the wall time (nested components overlap, e.g. the embedding model inside the offline model), and the top
functions by cumulative time. Shares are far less sensitive than seconds to other processes on the machine. ``--calibration``
shortens RA-RAG's stage 1 (default: the method's 200 questions, as the app runs it). ``--then`` profiles switching
to another question in the same (warm) process, page helpers included (table, charts, HTML report).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: component -> (file fragment, function name) pairs whose inclusive time is that component's.
COMPONENTS = {
    "imports (litellm, chromadb, onnxruntime/torch…)": [("<frozen importlib._bootstrap>", "_find_and_load")],
    "embedding model (load)": [("backend/embeddings.py", "get_model")],
    "embedding model (encode, all callers)": [("backend/embeddings.py", "encode"),
                                              ("backend/embeddings.py", "token_embeddings")],
    "retrieval index build": [("backend/retrieval.py", "build")],
    "chromadb (upsert/query/get)": [("chromadb/api/models/Collection.py", "upsert"),
                                    ("chromadb/api/models/Collection.py", "query"),
                                    ("chromadb/api/models/Collection.py", "get")],
    "litellm acompletion (wraps the offline model)": [("litellm/main.py", "acompletion")],
    "offline model (respond)": [("backend/llm/offline/__init__.py", "respond")],
    "reader: embedding (embed_all)": [("backend/llm/reader/rank.py", "embed_all")],
    "reader: lexical work (_prepare)": [("backend/llm/reader/reader.py", "_prepare")],
    "reply cache (disk)": [("backend/llm/cache.py", "get"), ("backend/llm/cache.py", "put")],
    "RA-RAG stage 1 (calibrate)": [("ra_rag/stage1.py", "calibrate")],
    "BRIDGE scorer (prepare)": [("bridge/scorer.py", "prepare")],
    "page: table, charts, HTML report": [("report/compare.py", "results_frame"), ("report/compare.py", "agreement_figure"),
                                         ("report/compare.py", "support_figure"), ("backend/report/html.py", "report_html")],
}


def component_times(stats: pstats.Stats) -> dict[str, float]:
    """Inclusive seconds per component (the largest entry of each listed function; recursion counted once)."""
    out = {}
    for name, targets in COMPONENTS.items():
        total = 0.0
        for (file, _line, func), (_cc, _nc, _tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
            if any(file.endswith(f) or f in file for f, fn in targets if fn == func):
                total += ct
        out[name] = total
    return out


def first_look(dataset: str, question: str, calibration: int | None):
    """Everything the app does for its first Inspect result, without the browser; returns the runner."""
    from backend.data import load_dataset
    from backend.runner import Runner

    ds = load_dataset(dataset)
    params = {"ra_rag": {"calibration_size": calibration}} if calibration else {}
    runner = Runner(ds, cache="default", method_params=params)
    show(runner, question)
    return runner


def show(runner, question: str) -> None:
    """One question as Inspect shows it: every method, then the page's table, charts and HTML report."""
    from backend.methods import METHODS
    from backend.report import compare, report_html

    q = runner.dataset.question(question)
    results = runner.run(q, list(METHODS))
    compare.results_frame(results, q, False)
    compare.agreement_figure(results)
    compare.support_figure(results, q, False)
    report_html(runner.dataset, q, results, include_truth=False)


def profiled(fn, *args):
    """(pstats over every thread, wall s, CPU s, fn's result): the offline model runs in worker threads
    (asyncio.to_thread), so each thread started meanwhile gets its own profiler."""
    profiles = [cProfile.Profile()]

    def in_new_thread(*_):
        thread_profile = cProfile.Profile()
        profiles.append(thread_profile)
        thread_profile.enable()

    wall, cpu = time.perf_counter(), time.process_time()
    threading.setprofile(in_new_thread)
    profiles[0].enable()
    try:
        result = fn(*args)
    finally:
        profiles[0].disable()
        threading.setprofile(None)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    stats = pstats.Stats(profiles[0])
    for extra in profiles[1:]:
        stats.add(extra)
    return stats, wall, cpu, result


def report(title: str, stats: pstats.Stats, wall: float, cpu: float, top: int) -> None:
    print(f"{title}: {wall:.1f} s wall, {cpu:.1f} s CPU (other processes on the machine inflate the seconds, much "
          "less the shares)")
    print("  component (inclusive, summed over threads)       seconds  % of wall")
    for name, seconds in sorted(component_times(stats).items(), key=lambda kv: -kv[1]):
        print(f"  {name:48s} {seconds:7.1f}  {100 * seconds / wall:6.1f}%")
    buf = io.StringIO()
    stats.stream = buf  # type: ignore[attr-defined]
    stats.sort_stats("cumulative").print_stats(top)
    print(buf.getvalue())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default=str(ROOT / "sample_data" / "multisource"))
    ap.add_argument("--question", default="@1")
    ap.add_argument("--then", default="@2", help="then switch to this question (warm process), profiled apart; "
                                                 "'' to skip")
    ap.add_argument("--calibration", type=int, default=None)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--out", default=None, help="also write the raw profile of the first look here (pstats)")
    args = ap.parse_args(argv)
    os.environ["CONFLICTLENS_CACHE_DIR"] = tempfile.mkdtemp(prefix="cl-profile-")  # cold: nothing cached
    stats, wall, cpu, runner = profiled(first_look, args.dataset, args.question, args.calibration)
    if args.out:
        stats.dump_stats(args.out)
    report(f"{Path(args.dataset).name} {args.question}: cold first look", stats, wall, cpu, args.top)
    if args.then:
        stats, wall, cpu, _ = profiled(show, runner, args.then)
        report(f"{Path(args.dataset).name}: switch to {args.then} (warm process)", stats, wall, cpu, args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
