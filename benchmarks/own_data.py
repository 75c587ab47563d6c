"""Your own data, first look: a 400-question RAMDocs-format file and the multi-source sample copied to a folder of
the user's, with a cold cache, from the command line and in the browser.

    .venv/bin/python benchmarks/own_data.py [--files ram400,multisource] [--no-browser] [--agreement]

The 400-question file is built deterministically from the shipped RAMDocs dev file (sample_data/raw/ramdocs/
RAMDocs_dev100.jsonl): four copies, copies 2-4 with " (set k)" in the question and " [Archive copy k.]" after each
document (2,212 documents); the multi-source sample (sample_data/multisource, 3,326 documents) is copied as is. Both
go into a temporary folder, as a user's own files (the copy named own-multisource): no shipped stage-1 result applies
to them (the copied multi-source texts still match the shipped vectors, as a user's copy of the sample would; the
400-question file's copies 2-4 do not).

Per file:

- **CLI cold**: ``python -m backend inspect --methods all`` on the first question with an empty ``--cache-dir``:
  the time from the command's start to the first method's line on stderr (each method prints one as it finishes),
  to the last one, and the process's wall time; each method's own wall time (from ``--json``).
- **CLI re-open**: the same command on the now warm cache folder (a second look in a new process).
- **Browser, cold server** (unless ``--no-browser``): a fresh ``streamlit run app.py`` with an empty
  ``CONFLICTLENS_CACHE_DIR`` and ``CONFLICTLENS_OPEN_FOLDERS`` set to the temporary folder, Chromium (Playwright)
  opening ``/?dataset=file:<path>`` (Inspect) as soon as the server answers its health check: the time from the
  page's opening to the first method's column holding a result, to every method's result (the full-result check of
  benchmarks/dashboard.py), and a re-open in a new browser context on the same server (all results). The first
  page of a server also pays its start-up work (the app's imports, the first element, litellm, the embedding model),
  which any first page would pay.
- **Browser, app open**: another fresh server and empty cache folder, where a user already has the app open: first
  ``/`` (Inspect on the app's bundled opening question) until its full result (untimed; ``bundled_s``), then the
  same own-file link in a new browser context, timed as above: the own file's first look alone (its disk caches
  still cold: index, stage 1 and replies are per dataset), on a warm process.

``--agreement`` also measures, on the 400-question file and on RAMDocs dev, how often BRIDGE's corpus retriever (BM25
candidates re-ranked by MiniLM, backend.corpus) returns the dense top 1 over every document for BRIDGE's offline
sub-queries, at several candidate counts (the dense top 1 computed exactly: a few minutes of embedding).

Targets (issue 27, item 1; cold cache, idle machine): first method result ≤ 5 s, every method ≤ 20 s, re-open
≤ 3 s. Other processes on the machine inflate the seconds (two cores shared: see the load average printed). The LAST
line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.dashboard import (CHROMIUM_ARGS, TIMEOUT_S, _FULL_RESULT_JS, _free_port, wait_healthy,  # noqa: E402
                                  _reference_s)

RAW = ROOT / "sample_data" / "raw" / "ramdocs" / "RAMDocs_dev100.jsonl"
MULTISOURCE = ROOT / "sample_data" / "multisource"
TARGETS = {"first_s": 5.0, "all_s": 20.0, "reopen_s": 3.0}
FILES = ("ram400", "multisource")
#: A finished method's column (components.inspect.render_column): its caption "N calls · N tokens · T".
_FIRST_RESULT_JS = r"""() => {
    const main = document.querySelector('[data-testid="stMain"]') || document.body;
    return [...main.querySelectorAll('[data-testid="stCaptionContainer"]')]
        .filter(c => !c.closest('[data-stale="true"]'))
        .some(c => /^\d+ calls? · [\d,]+ tokens? · /.test(c.innerText.trim()));
}"""
_LINE = re.compile(r"^\[\s*[\d.]+ s\] ")


def build_ram400(dest: Path) -> Path:
    """Four copies of the RAMDocs dev file; copies 2-4 marked in the question and in every document."""
    rows = [json.loads(line) for line in RAW.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = []
    for k in range(1, 5):
        for row in rows:
            row = json.loads(json.dumps(row))
            if k > 1:
                q = row["question"]
                row["question"] = f"{q[:-1]} (set {k})?" if q.endswith("?") else f"{q} (set {k})"
                for doc in row["documents"]:
                    doc["text"] = f"{doc['text']} [Archive copy {k}.]"
            out.append(json.dumps(row, ensure_ascii=False))
    path = dest / "ram400.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def copy_multisource(dest: Path) -> Path:
    target = dest / "own-multisource"  # another name: the shipped stage 1 of "multisource" does not apply
    shutil.copytree(MULTISOURCE, target)
    return target


def cli(dataset: Path, cache_dir: Path) -> dict:
    """``inspect --methods all --json`` on question 1: seconds from the start to each method's stderr line."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "backend", "inspect", "--dataset", str(dataset), "--question", "@1",
                             "--methods", "all", "--json", "--cache-dir", str(cache_dir)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen: list[float] = []
    stages: set[str] = set()

    def read_stderr() -> None:
        buf = b""
        while chunk := proc.stderr.read1(4096):
            buf += chunk
            *lines, buf = re.split(rb"[\r\n]", buf)
            for raw in lines:
                line = raw.decode("utf-8", "replace")
                if _LINE.match(line):
                    seen.append(time.perf_counter() - start)
                elif ":" in line and "%|" in line:
                    stages.add(line.split(":", 1)[0].strip())

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    stdout = proc.stdout.read()
    proc.wait(timeout=TIMEOUT_S)
    wall = time.perf_counter() - start
    reader.join(10)
    results = json.loads(stdout)["results"] if proc.returncode == 0 else {}
    return {"exit": proc.returncode, "first_s": round(min(seen), 2) if seen else None,
            "all_s": round(max(seen), 2) if seen else None, "wall_s": round(wall, 2), "methods_done": len(seen),
            "stages": sorted(stages),
            "method_wall_s": {m: round(r["wall_s"], 2) for m, r in results.items()},
            "errors": {m: r["error"] for m, r in results.items() if r.get("error")}}


def browser_times(browser, dataset: Path, open_folder: Path, app_open: bool = False) -> dict:
    """A fresh server with an empty cache folder; ``app_open``: first the app's own opening page (Inspect on a
    bundled question) to its full result, untimed (``bundled_s`` records it), then the own file's link in a new
    browser context."""
    from urllib.parse import quote

    cache_dir = Path(tempfile.mkdtemp(prefix="cl-own-app-cache-"))
    env = {**os.environ, "CONFLICTLENS_CACHE_DIR": str(cache_dir), "CONFLICTLENS_OPEN_FOLDERS": str(open_folder)}
    port = _free_port()
    server_start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    out: dict = {}
    try:
        wait_healthy(url, proc)
        out["server_up_s"] = round(time.perf_counter() - server_start, 2)
        if app_open:  # the app open on its own opening page before the user points it at their file
            context = browser.new_context(viewport={"width": 1600, "height": 1400})
            page = context.new_page()
            t0 = time.perf_counter()
            page.goto(f"{url}/", timeout=TIMEOUT_S * 1000)
            page.wait_for_function(_FULL_RESULT_JS, arg="", timeout=TIMEOUT_S * 1000, polling=100)
            out["bundled_s"] = round(time.perf_counter() - t0, 2)
            context.close()
        link = f"{url}/?dataset={quote('file:' + str(dataset), safe='/:')}"
        for what in ("cold", "reopen"):
            context = browser.new_context(viewport={"width": 1600, "height": 1400})
            page = context.new_page()
            t0 = time.perf_counter()
            page.goto(link, timeout=TIMEOUT_S * 1000)
            if what == "cold":
                page.wait_for_function(_FIRST_RESULT_JS, timeout=TIMEOUT_S * 1000, polling=100)
                out["first_s"] = round(time.perf_counter() - t0, 2)
            page.wait_for_function(_FULL_RESULT_JS, arg="", timeout=TIMEOUT_S * 1000, polling=100)
            out["all_s" if what == "cold" else "reopen_s"] = round(time.perf_counter() - t0, 2)
            context.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(cache_dir, ignore_errors=True)
    return out


_COPY = re.compile(r" \[Archive copy \d+\.\]$")


def agreement(path: Path, cache_dir: Path) -> dict:
    """How often the corpus retriever's top 1 is the dense top 1 over every document, for BRIDGE's sub-queries as the
    offline model writes them (8 per question, one call per question as BRIDGE sends a cycle's): the same text, the
    same passage (equal once the " [Archive copy k.]" marks are dropped: the four copies differ in that mark only),
    the median cosine similarity lost when it differs, and the dense stage's cost: the distinct candidates of one
    question's sub-queries (texts to embed the first time); and BM25's own top 1 for comparison."""
    os.environ["CONFLICTLENS_CACHE_DIR"] = str(cache_dir)
    import numpy as np

    from backend import embeddings
    from backend.corpus import CANDIDATES, CorpusRetriever
    from backend.data import load_dataset
    from backend.llm.offline.bridge import _SUB_TEMPLATES, _questions
    from backend.schema import strip_truth

    ds = strip_truth(load_dataset(path))
    docs = [d for _, d in ds.documents()]
    vectors = embeddings.encode([d.text for d in docs])
    batches = [_questions(q.question, 10, _SUB_TEMPLATES)[:8] for q in ds.questions]
    qv = embeddings.encode([s for batch in batches for s in batch])
    best = [int(np.argmax(vectors @ q)) for q in qv]
    out: dict = {"sub_queries": len(qv), "documents": len(docs)}
    own = CorpusRetriever(ds, cache_dir).candidates_of([s for batch in batches for s in batch], pool=1)
    out["bm25_top1_same_passage"] = round(sum(bool(c) and _COPY.sub("", docs[c[0]].text) == _COPY.sub("", docs[b].text)
                                              for c, b in zip(own, best)) / len(best), 4)
    for m in sorted({10, CANDIDATES, 50}):
        retriever, n = CorpusRetriever(ds, cache_dir, candidates=m), 0
        same = passage = 0
        gaps, pools = [], []
        for batch in batches:
            pools.append(len({i for cands in retriever.candidates_of(batch) for i in cands}))
            for found in retriever.search_many(batch, k=1, query_vectors=qv[n:n + len(batch)]):
                b, got = best[n], found[0].text if found else ""
                same += got == docs[b].text
                passage += _COPY.sub("", got) == _COPY.sub("", docs[b].text)
                if got != docs[b].text:
                    gaps.append(float(vectors[b] @ qv[n]) - (found[0].score if found else 0.0))
                n += 1
        out[f"m{m}"] = {"same_text": round(same / n, 4), "same_passage": round(passage / n, 4),
                        "median_cosine_gap": round(float(np.median(gaps)), 4) if gaps else 0.0,
                        "candidates_per_question": round(float(np.mean(pools)), 1)}
    return out


def _row(cells: list[str]) -> str:
    return " | ".join(f"{c:>12}" if i else f"{c:<34}" for i, c in enumerate(cells))


def _ratio(value: float | None, target: float) -> str:
    return "—" if value is None else f"{value:.2f} s ({value / target:.2f}×)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--files", default=",".join(FILES), help=f"comma-separated, of {', '.join(FILES)}")
    ap.add_argument("--no-browser", action="store_true", help="the command line only")
    ap.add_argument("--agreement", action="store_true", help="also measure top-1 agreement with the dense ranking")
    args = ap.parse_args(argv)
    files = [f.strip() for f in args.files.split(",") if f.strip()]
    if unknown := [f for f in files if f not in FILES]:
        ap.error(f"--files: unknown {', '.join(unknown)}; choose from {', '.join(FILES)}")
    work = Path(tempfile.mkdtemp(prefix="cl-own-data-"))
    report: dict = {"load_before": os.getloadavg()[0], "reference_s_before": _reference_s(), "files": {}}
    playwright = browser = None
    try:
        if not args.no_browser:
            from playwright.sync_api import sync_playwright

            playwright = sync_playwright().start()
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for name in files:
            path = build_ram400(work) if name == "ram400" else copy_multisource(work)
            cache = work / f"cache-{name}"
            entry = {"path": str(path), "cli_cold": cli(path, cache)}
            entry["cli_reopen"] = cli(path, cache)
            if browser is not None:
                entry["browser"] = browser_times(browser, path, work)
                entry["browser_open"] = browser_times(browser, path, work, app_open=True)
            if args.agreement and name == "ram400":
                entry["agreement"] = agreement(path, work / "cache-agreement")
                report["agreement_ramdocs_dev"] = agreement(RAW, work / "cache-agreement-dev")
            report["files"][name] = entry
            print(f"{name}: {json.dumps(entry)}", flush=True)
    finally:
        if browser is not None:
            browser.close()
        if playwright is not None:
            playwright.stop()
        shutil.rmtree(work, ignore_errors=True)
    report["load_after"], report["reference_s_after"] = os.getloadavg()[0], _reference_s()

    print()
    print(_row(["", "first result", "all methods", "re-open"]))
    print(_row(["target", f"{TARGETS['first_s']:.1f} s", f"{TARGETS['all_s']:.1f} s", f"{TARGETS['reopen_s']:.1f} s"]))
    ok = True
    for name, e in report["files"].items():
        rows = [("CLI", e["cli_cold"]["first_s"], e["cli_cold"]["all_s"], e["cli_reopen"]["all_s"])]
        for kind, which in (("browser, cold server", "browser"), ("browser, app open", "browser_open")):
            if which in e:
                b = e[which]
                rows.append((kind, b.get("first_s"), b.get("all_s"), b.get("reopen_s")))
        for kind, first, every, reopen in rows:
            print(_row([f"{name} {kind}", _ratio(first, TARGETS["first_s"]), _ratio(every, TARGETS["all_s"]),
                        _ratio(reopen, TARGETS["reopen_s"])]))
            ok &= all(v is not None and v <= TARGETS[k] for v, k in ((first, "first_s"), (every, "all_s"),
                                                                     (reopen, "reopen_s")))
        print(_row([f"{name} CLI per method", *[""] * 3]))
        for m, s in e["cli_cold"]["method_wall_s"].items():
            print(_row([f"  {m}", f"{s:.2f} s", "", ""]))
        if "agreement" in e:
            print(f"{name}: corpus retriever top 1 = dense top 1: {e['agreement']}")
    if "agreement_ramdocs_dev" in report:
        print(f"RAMDocs dev: corpus retriever top 1 = dense top 1: {report['agreement_ramdocs_dev']}")
    report["targets"], report["within_targets"] = TARGETS, ok
    print(f"load average {report['load_before']:.2f} → {report['load_after']:.2f} (2 cores; idle ≈ 0); reference "
          f"workload {report['reference_s_before']} → {report['reference_s_after']} CPU-s")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
