"""Every method with a real local language model (``--model local/smollm2``: llama.cpp's server with SmolLM2-135M,
``backend.llm.local``): how well it answers, how readable its replies are, and what it costs in calls, tokens and
seconds; plain replies (the papers' formats) beside structured ones (the task's JSON schema as a grammar).

    .venv/bin/python benchmarks/real_model.py [--dataset sample_data/ramdocs_dev] [--limit 20] [--methods all]
        [--model local/smollm2] [--modes plain,structured] [--concurrency 4] [--parallel 2] [--threads 1]
        [--ctx 8192] [--speed] [--question @1] [--speed-mode plain] [--no-evaluate] [--out DIR]

The first line printed is the command; then the machine's load average (``os.getloadavg``), at the start and again at
the end, so the reader knows how busy the machine was. Tables are Markdown, to paste into the README.

**Evaluation** (per mode, per method): each method alone over the first ``--limit`` questions through
``backend.evaluate.evaluate`` (what ``python -m backend evaluate`` runs: ``--concurrency`` questions at once, the
local server's ``--parallel`` slots shared by them), so its seconds are its own, not a wait behind another method's
calls; the folder's ``summary.json`` is then written for all methods (``OUT/<mode>/results.jsonl`` and
``summary.json``, kept). Every call is a real one: no reply cache (``cache_mode="off"``) and a new cache folder
(``CONFLICTLENS_CACHE_DIR=OUT``: this run's own server, corpus index and vectors), seeded with the local model's
measured throughput from the usual cache folder (the client scales its timeouts by it) and merged back at the end.
Each mode (and ``--speed``) starts a new server, so llama.cpp's prompt cache (a slot reusing the prefix its last
prompt shares with the next) starts empty; within a section it stays on: it is part of the server's speed. Before
each section, untimed: the server answers one request, and the embedding model, litellm and the corpus index load.

* answers (``backend.scoring`` through ``evaluate.summarize``, as in summary.json): ``n`` rows; ``its paper's
  metric`` and its value (the method's own paper's rule, ``MethodSpec.paper_metric``: EM (SQuAD) for RA-RAG, BRIDGE
  and the baselines, accuracy (gold in response) for Astute RAG, accuracy (RAMDocs exact match) for MADAM-RAG, risk /
  coverage for RC-RAG); ``answer match (lenient) %`` (a gold answer named: the project's rule, none of the papers'),
  ``all gold (lenient) %`` (every gold answer named and no wrong one, by the same rule), ``EM (SQuAD) %`` for every
  method, ``abstained %`` (refusal rate: no answer that counts), ``errors`` (rows whose run failed; their questions
  are not scored);
* calls: ``calls`` in all, ``calls/q``; ``unreadable %`` and ``lenient %`` of the calls whose read was recorded
  (``LLMCall.read_status``: the reader found nothing it could read, so the method used its default / read it only by
  assuming something); ``cut off`` (runaway replies: ran into max_tokens repeating itself, read as no reply);
  ``length`` (finish_reason "length": ran into max_tokens, runaway or not); ``prompt cut`` (the prompt was cut to fit
  the context); ``failed`` (calls that got no reply);
* cost: ``prompt tok/q``, ``gen tok/q`` (summary.json's mean tokens per row), ``s/q`` (the method's evaluation wall
  time / questions: throughput, with ``--concurrency`` questions in flight), ``latency s`` (mean wall time of one
  question's run, waits for a server slot included: summary.json's ``mean_wall_s``), ``server s/q`` (llama.cpp's
  own prompt + generation time, ``server_s``, summed over the calls, per question: above ``s/q`` when the slots
  decode together), ``cached %`` (prompt tokens the server's prompt cache answered / prompt tokens).
  A last table puts the modes side by side.

**Speed** (``--speed``): each of the seven methods alone, one after another, on ONE question (``--question``), in
``--speed-mode`` (default plain). Per method: ``calls``, ``wall s`` (its ``Runner.run``), ``server Σ s`` (sum of ``server_s``), ``server busy s`` (the length of the union of the
intervals [ended_at - server_s, ended_at] over its calls: when the server was working for it, with concurrent calls
counted once), ``overhead`` = wall / server busy (1.00: not a moment when the server was idle for it; goal <= 1.10),
``slot wait s`` (sum of ``queued_s``: waits for a free server slot), ``cached %`` (as above).

The LAST line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see reader_accuracy.py: shared 2-core machine

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MODES = ("plain", "structured")
GOAL_OVERHEAD = 1.10


# --------------------------------------------------------------------------------------------------- printing

def md_table(headers: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table: the first column left-aligned, the others right-aligned (numbers)."""
    cells = [[_cell(x) for x in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(values: list[str]) -> str:
        return "| " + " | ".join(v.ljust(w) if i == 0 else v.rjust(w)
                                 for i, (v, w) in enumerate(zip(values, widths))) + " |"

    rule = "|" + "|".join(("-" * (w + 1) + ":") if i else (":" + "-" * (w + 1)) for i, w in enumerate(widths)) + "|"
    return "\n".join([line(headers), rule] + [line(r) for r in cells])


def _cell(x: Any) -> str:
    if x is None:
        return "–"
    if isinstance(x, float):
        return f"{x:.2f}" if abs(x) < 10 else f"{x:.1f}"
    return str(x)


def p1(x: float | None) -> str | None:
    """A percentage as printed: one decimal."""
    return None if x is None else f"{x:.1f}"


def pct(k: float, n: float) -> float | None:
    return round(100.0 * k / n, 1) if n else None


def loadavg() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "unknown"
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f} (1, 5, 15 min; {os.cpu_count()} CPUs)"


def command_line(argv: list[str]) -> str:
    def rel(p: str) -> str:
        try:
            r = os.path.relpath(p)
            return p if r.startswith("..") else r
        except ValueError:
            return p
    return shlex.join([rel(sys.executable), rel(sys.argv[0]), *argv])


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------------ the calls

def union_length(intervals: list[tuple[float, float]]) -> float:
    """Total length covered by the intervals (overlaps counted once)."""
    total, end = 0.0, None
    start = None
    for a, b in sorted(intervals):
        if end is None or a > end:
            if end is not None:
                total += end - start
            start, end = a, b
        else:
            end = max(end, b)
    if end is not None:
        total += end - start
    return total


def call_stats(calls: list) -> dict[str, Any]:
    """What the calls of a method's rows say about the model's replies and the server's work."""
    read = [c.read_status for c in calls if c.read_status is not None]
    prompt = sum(c.prompt_tokens for c in calls)
    cached = sum(c.cached_tokens or 0 for c in calls)
    return {"calls": len(calls), "read": len(read), "unreadable": read.count("unreadable"),
            "lenient": read.count("lenient"), "unreadable_pct": pct(read.count("unreadable"), len(read)),
            "lenient_pct": pct(read.count("lenient"), len(read)),
            "cut_off": sum(c.cut_off is not None for c in calls),
            "length": sum(c.finish_reason == "length" for c in calls),
            "prompt_cut": sum(c.prompt_cut is not None for c in calls),
            "failed": sum(c.error is not None for c in calls),
            "cache_hits": sum(c.cache_hit for c in calls),
            "server_s": round(sum(c.server_s or 0.0 for c in calls), 3),
            "no_server_s": sum(c.server_s is None and c.error is None for c in calls),
            "prompt_tokens": prompt, "cached_tokens": cached, "cached_pct": pct(cached, prompt),
            "queued_s": round(sum(c.queued_s or 0.0 for c in calls), 3)}


# ---------------------------------------------------------------------------------------------------- set-up

def fresh_cache_dir(out: Path, user_cache: Path) -> None:
    """Point the library's cache folder at ``out`` (this run's own server state, index and vectors; no reply
    cache is opened), with the local model's measured throughput copied from the usual folder."""
    os.environ["CONFLICTLENS_CACHE_DIR"] = str(out)
    src, dst = user_cache / "local" / "throughput.json", out / "local" / "throughput.json"
    if src.is_file() and not dst.exists():
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)


def keep_throughput(out: Path, user_cache: Path) -> str | None:
    """Merge this run's throughput samples back into the usual cache folder (its other models' figures kept)."""
    src, dst = out / "local" / "throughput.json", user_cache / "local" / "throughput.json"
    if not src.is_file() or src.resolve() == dst.resolve():
        return None
    try:
        ours = json.loads(src.read_text())
        theirs = json.loads(dst.read_text()) if dst.is_file() else {}
        theirs.update(ours)  # ours started as a copy of theirs: every digest we touched has its old samples too
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = dst.with_suffix(".bench.tmp")
        tmp.write_text(json.dumps(theirs))
        tmp.replace(dst)
    except (OSError, ValueError) as err:
        return f"throughput figures not kept: {err}"
    return str(dst)


def make_runner(dataset, args, structured: bool):
    from backend.llm.client import LLMConfig
    from backend.runner import Runner

    cfg = LLMConfig(model=args.model, structured_output=structured, cache_mode="off", timeout_s=args.timeout,
                    concurrency=args.concurrency, local_parallel=args.parallel, local_ctx=args.ctx,
                    local_threads=args.threads)
    if structured and not cfg.structured:
        log(f"warning: {args.model} cannot be asked for JSON schemas: the structured mode runs the papers' formats")
    return Runner(dataset, llm=cfg, cache=None)


def fresh_server(cfg) -> None:
    """Stop the local server this process started for ``cfg`` (if any), so the next call starts a new one: each
    section begins with an empty prompt cache, not the slots the previous one left warm."""
    if not cfg.local:
        return
    from backend.llm.local import local_name
    from backend.llm.local import server as srv

    key = (local_name(cfg.model), cfg.local_parallel, cfg.local_ctx, cfg.local_threads)
    with srv._lock:   # noqa: SLF001 - the registry of this process's servers: a benchmark may reset it
        known = srv._servers.pop(key, None)   # noqa: SLF001
    if known is not None and known.owned:
        known.stop()


def warm_up(runner) -> dict[str, Any]:
    """Untimed: start the local server and have it answer once, load the embedding model, the methods' own
    libraries, litellm and the corpus index."""
    from backend import warmup
    from backend.llm.client import LLMClient

    t0 = time.perf_counter()
    warmup.start()
    if warmup._thread is not None:   # noqa: SLF001 - wait for the background loads: nothing of them is timed
        warmup._thread.join()
    ok, said, seconds = LLMClient(runner.llm).test_connection()
    if not ok:
        raise SystemExit(f"the local model does not answer: {said}")
    runner.retriever()  # BRIDGE's corpus index in given mode (built once per cache folder)
    info: dict[str, Any] = {"warm_up_s": round(time.perf_counter() - t0, 1), "first_reply_s": round(seconds, 2)}
    if runner.llm.local:
        from backend.llm.local import local_name, throughput
        from backend.llm.local.server import ensure

        cfg = runner.llm
        server = ensure(local_name(cfg.model), parallel=cfg.local_parallel, ctx=cfg.local_ctx,
                        threads=cfg.local_threads)
        measured = throughput.measured(server.digest)
        info.update(server_pid=server.pid, owned=server.owned, load_s=server.load_s, parallel=server.parallel,
                    ctx=server.ctx, threads=server.threads,
                    throughput=measured.describe() if measured else None)
    return info


# ------------------------------------------------------------------------------------------------ evaluation

def evaluate_mode(dataset, questions, methods: list[str], args, mode: str, out: Path) -> dict[str, Any]:
    """Each method alone through ``backend.evaluate.evaluate``; then the folder's summary for all of them."""
    from backend.evaluate import RESULTS, evaluate, load_results
    from backend.report.console import own_metric_cells

    runner = make_runner(dataset, args, structured=(mode == "structured"))
    fresh_server(runner.llm)
    server = warm_up(runner)
    runner.prepare_all(methods)   # none on ramdocs_dev (no named sources); a multi-source dataset's stage 1 here
    walls: dict[str, float] = {}
    t_mode = time.perf_counter()
    for m in methods:
        t0 = time.perf_counter()

        def progress(done: int, total: int, m=m, t0=t0) -> None:
            if done:
                log(f"  [{mode}] {m}: {done}/{total} questions, {time.perf_counter() - t0:.0f} s")

        evaluate(runner, questions, [m], out, resume=True, concurrency=args.concurrency, on_progress=progress)
        walls[m] = time.perf_counter() - t0
    summary = evaluate(runner, questions, methods, out, resume=True, concurrency=args.concurrency)  # nothing left
    results, _ = load_results(out / RESULTS)
    rows = {}
    for m in methods:
        s = summary["methods"][m]
        calls = [c for q in questions if (q.id, m) in results for c in results[(q.id, m)].calls]
        stats = call_stats(calls)
        n = s["n"] or 1
        own_name, own_value = own_metric_cells(s)
        rows[m] = {"n": s["n"], "scored": s["scored"], "own_metric": s.get("own_metric"), "own_metric_name": own_name,
                   "own_metric_value": own_value, "lenient_match": s["lenient_match"],
                   "lenient_all_gold": s["lenient_all_gold"],
                   **{k: s.get(k) for k in ("squad_em", "squad_f1", "gold_in_response", "ramdocs_em")},
                   "reading_dependent": s.get("reading_dependent"), "decisions_read": s.get("decisions_read"),
                   "refusal_rate": s["refusal_rate"], "errors": s["errors"], "missing": s["missing"],
                   "mean_calls": s["mean_calls"], "mean_prompt_tokens": s["mean_prompt_tokens"],
                   "mean_completion_tokens": s["mean_completion_tokens"], "mean_wall_s": s["mean_wall_s"],
                   "format_failures": s["format_failures"], "wall_s": round(walls[m], 1),
                   "s_per_q": round(walls[m] / n, 2), "server_s_per_q": round(stats["server_s"] / n, 2),
                   **{k: v for k, v in stats.items() if k not in ("server_s",)}, "server_s": stats["server_s"]}
        first_error = next((results[(q.id, m)].error for q in questions
                            if (q.id, m) in results and results[(q.id, m)].error), None)
        if first_error:
            rows[m]["first_error"] = first_error[:300]
    return {"mode": mode, "out": str(out), "wall_s": round(time.perf_counter() - t_mode, 1), "methods": rows,
            "notes": summary["notes"], "server": server, "load_after": loadavg()}


def server_line(info: dict[str, Any]) -> str:
    return (f"a new server (pid {info.get('server_pid')}): {info.get('parallel')} slots x {info.get('ctx')} tokens, "
            f"{info.get('threads')} generation thread(s), loaded in {info.get('load_s')} s; "
            f"{info.get('throughput') or 'throughput not measured yet'}; untimed warm-up {info.get('warm_up_s')} s")


def print_mode(res: dict[str, Any], n_questions: int) -> None:
    rows = res["methods"]
    print(f"\n### {res['mode']} replies: {n_questions} questions, {res['wall_s']:.0f} s "
          f"(load average after: {res['load_after']})\n")
    print(server_line(res["server"]) + "\n")
    print(md_table(["method", "n", "its paper's metric", "value %", "answer match (lenient) %",
                    "all gold (lenient) %", "EM (SQuAD) %", "abstained %", "errors"],
                   [[m, r["n"], r["own_metric_name"], r["own_metric_value"], p1(r["lenient_match"]),
                     p1(r["lenient_all_gold"]), p1(r["squad_em"]), p1(r["refusal_rate"]), r["errors"]]
                    for m, r in rows.items()]))
    print()
    print(md_table(["method", "calls", "calls/q", "unreadable %", "lenient %", "cut off", "length", "prompt cut",
                    "failed"],
                   [[m, r["calls"], r["mean_calls"], p1(r["unreadable_pct"]), p1(r["lenient_pct"]), r["cut_off"], r["length"],
                     r["prompt_cut"], r["failed"]] for m, r in rows.items()]))
    print()
    print(md_table(["method", "prompt tok/q", "gen tok/q", "s/q", "latency s", "server s/q", "cached %"],
                   [[m, r["mean_prompt_tokens"], r["mean_completion_tokens"], r["s_per_q"], r["mean_wall_s"],
                     r["server_s_per_q"], p1(r["cached_pct"])] for m, r in rows.items()]))
    for m, r in rows.items():
        if r.get("first_error"):
            print(f"\n{m}: {r['errors']} error(s), the first: {r['first_error']}")
    for note in res["notes"]:
        print(f"note: {note}")


def print_comparison(by_mode: dict[str, dict[str, Any]], methods: list[str]) -> None:
    modes = list(by_mode)
    headers = ["method"]
    for what in ("its paper's metric %", "answer match (lenient) %", "abstained %", "unreadable %", "s/q"):
        headers += [f"{what} {mode}" for mode in modes]
    keys = ("own_metric_value", "lenient_match", "refusal_rate", "unreadable_pct", "s_per_q")
    rows = [[m] + [(by_mode[mode]["methods"][m][k] if k in ("s_per_q", "own_metric_value")
                    else p1(by_mode[mode]["methods"][m][k])) for k in keys for mode in modes] for m in methods]
    print(f"\n### {' vs '.join(modes)}\n")
    print(md_table(headers, rows))


# ----------------------------------------------------------------------------------------------------- speed

def speed(dataset, args) -> dict[str, Any]:
    from backend.methods import METHODS

    runner = make_runner(dataset, args, structured=(args.speed_mode == "structured"))
    question = dataset.question(args.question)
    names = list(METHODS)   # always all seven: the section compares them
    fresh_server(runner.llm)
    info = warm_up(runner)
    runner.prepare_all(names)
    rows, every = {}, []
    for m in names:
        t0 = time.perf_counter()
        result = runner.run(question, [m])[m]
        wall = time.perf_counter() - t0
        calls = result.calls
        every += calls
        busy = union_length([(c.ended_at - c.server_s, c.ended_at) for c in calls if c.server_s is not None])
        stats = call_stats(calls)
        rows[m] = {"calls": len(calls), "wall_s": round(wall, 2), "method_wall_s": result.wall_s,
                   "server_sum_s": stats["server_s"], "server_busy_s": round(busy, 2),
                   "overhead": round(wall / busy, 3) if busy else None, "queued_s": stats["queued_s"],
                   "cached_pct": stats["cached_pct"], "no_server_s": stats["no_server_s"],
                   "error": result.error}
        log(f"  [speed] {m}: {wall:.1f} s, {len(calls)} calls, overhead {rows[m]['overhead']}")
    total_wall = sum(r["wall_s"] for r in rows.values())
    total_busy = sum(r["server_busy_s"] for r in rows.values())
    overall = {"wall_s": round(total_wall, 2), "server_busy_s": round(total_busy, 2),
               "overhead": round(total_wall / total_busy, 3) if total_busy else None,
               "cached_pct": call_stats(every)["cached_pct"]}
    return {"question": question.id, "mode": args.speed_mode, "server": info, "methods": rows, "overall": overall}


def print_speed(res: dict[str, Any]) -> None:
    print(f"\n### speed: every method alone on {res['question']} ({res['mode']} replies)\n")
    print(server_line(res["server"]) + "\n")

    def goal(x: float | None) -> str:
        return "–" if x is None else "met" if x <= GOAL_OVERHEAD else "NOT met"

    rows = [[m, r["calls"], r["wall_s"], r["server_sum_s"], r["server_busy_s"], r["overhead"], goal(r["overhead"]),
             r["queued_s"], p1(r["cached_pct"])] for m, r in res["methods"].items()]
    o = res["overall"]
    rows.append(["all (sum)", sum(r["calls"] for r in res["methods"].values()), o["wall_s"],
                 round(sum(r["server_sum_s"] for r in res["methods"].values()), 2), o["server_busy_s"],
                 o["overhead"], goal(o["overhead"]), round(sum(r["queued_s"] for r in res["methods"].values()), 2),
                 p1(o["cached_pct"])])
    print(md_table(["method", "calls", "wall s", "server Σ s", "server busy s", "overhead",
                    f"goal ≤ {GOAL_OVERHEAD:.2f}", "slot wait s", "cached %"], rows))
    for m, r in res["methods"].items():
        if r["error"]:
            print(f"\n{m}: error: {r['error'][:300]}")
        if r["no_server_s"]:
            print(f"\n{m}: {r['no_server_s']} call(s) with a reply but no server time (not in 'server busy')")


# ------------------------------------------------------------------------------------------------------ main

def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default=str(ROOT / "sample_data" / "ramdocs_dev"))
    ap.add_argument("--limit", type=int, default=20, help="first N questions (default 20)")
    ap.add_argument("--methods", default="all", help="comma-separated method names, or all")
    ap.add_argument("--model", default="local/smollm2")
    ap.add_argument("--modes", default=",".join(MODES), help="plain, structured or both (default)")
    ap.add_argument("--concurrency", type=int, default=4, help="questions in flight per method (evaluate's)")
    ap.add_argument("--parallel", type=int, default=None, help="local server slots (default: LLMConfig's)")
    ap.add_argument("--threads", type=int, default=None, help="local server generation threads (default: LLMConfig's)")
    ap.add_argument("--ctx", type=int, default=None, help="local server context per slot (default: LLMConfig's)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per call (the local client scales it up "
                                                                "by the measured throughput)")
    ap.add_argument("--speed", action="store_true", help="also the overhead of each method on one question")
    ap.add_argument("--question", default="@1", help="the --speed question (id or @N)")
    ap.add_argument("--speed-mode", choices=MODES, default="plain")
    ap.add_argument("--no-evaluate", action="store_true", help="only the --speed section")
    ap.add_argument("--out", default=None, help="folder for the results and this run's cache (default: a new "
                                                "temporary folder, kept)")
    args = ap.parse_args(argv)

    print(f"command: {command_line(argv)}", flush=True)
    load_start = loadavg()
    print(f"load average at start: {load_start}", flush=True)

    from backend.data import load_dataset
    from backend.llm.client import LLMConfig
    from backend.methods import resolve
    from backend.paths import default_cache_dir

    defaults = LLMConfig()
    args.parallel = args.parallel or defaults.local_parallel
    args.threads = args.threads or defaults.local_threads
    args.ctx = args.ctx or defaults.local_ctx
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if bad := [m for m in modes if m not in MODES]:
        ap.error(f"--modes: unknown {', '.join(bad)}; choose from {', '.join(MODES)}")
    if args.no_evaluate and not args.speed:
        ap.error("--no-evaluate needs --speed")
    if args.limit < 1 or args.concurrency < 1:
        ap.error("--limit and --concurrency must be at least 1")
    methods = resolve(args.methods)
    user_cache = default_cache_dir()
    out = Path(args.out or tempfile.mkdtemp(prefix="conflictlens-real-model-"))
    out.mkdir(parents=True, exist_ok=True)
    fresh_cache_dir(out, user_cache)   # before anything imports a cache path: this run's own server and folders

    dataset = load_dataset(args.dataset)
    questions = dataset.questions[: args.limit]
    print(f"dataset {dataset.name}: {len(questions)} questions; model {args.model}; methods {', '.join(methods)}; "
          f"{args.concurrency} questions in flight; server {args.parallel} slots x {args.ctx} tokens, "
          f"{args.threads} generation thread(s); no reply cache; folder {out}")

    t0 = time.perf_counter()
    report: dict[str, Any] = {"command": command_line(argv), "dataset": dataset.name, "model": args.model,
                              "questions": len(questions), "load_start": load_start, "modes": {}}
    if not args.no_evaluate:
        for mode in modes:
            log(f"{mode}: {len(methods)} methods x {len(questions)} questions")
            res = evaluate_mode(dataset, questions, methods, args, mode, out / mode)
            report["modes"][mode] = res
            print_mode(res, len(questions))
            sys.stdout.flush()
        if len(modes) > 1:
            print_comparison(report["modes"], methods)
    if args.speed:
        log(f"speed: every method alone on {args.question}")
        report["speed"] = speed(dataset, args)
        print_speed(report["speed"])

    kept = keep_throughput(out, user_cache)
    report["load_end"] = loadavg()
    report["wall_s"] = round(time.perf_counter() - t0, 1)
    print(f"\nload average at end: {report['load_end']}; {report['wall_s']:.0f} s in all; results in {out}"
          + (f"; throughput figures kept in {kept}" if kept else ""))
    print(json.dumps(report, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
