"""A new user's first look at the dashboard, measured in a real browser: per bundled dataset, cold start to the
first full Inspect result, switching question with a warm process, and the server's peak memory.

    .venv/bin/python benchmarks/dashboard.py [--datasets ramdocs_dev,multisource,multisource_beta,scenarios]
        [--switches 3] [--warm-disk]

Per dataset it starts ``streamlit run app.py`` on a free loopback port with a fresh, empty
``CONFLICTLENS_CACHE_DIR`` (a cold start: no model-call cache, no retrieval index, no RA-RAG stage 1), opens the
app in Debian's Chromium (Playwright), picks the dataset in the sidebar as a user does (on the Model calls page,
which runs nothing), opens Inspect, and waits for the full result: the download button that Inspect draws only
once every method's column is in, not stale, the app idle, and the page drawn (no element loading, every chart
rendered). Once the browser is quiet (no long task for 300 ms, untimed), it switches to the next questions in the sidebar
(process warm: model loaded, index built, stage 1 done; their replies not cached) and times each until that
question's full result shows. Beside each wall time it reports the server's CPU seconds, which other processes
on the machine hardly inflate. ``--warm-disk`` also restarts the server on the same cache folder (a returning user:
cold process, warm disk cache). Peak RSS is the server's VmHWM (plus any children's) from /proc.

Targets (issue 16): cold first result ≤ 10 s, switching ≤ 1.5 s, peak RSS ≤ 1.5 GB. Other processes on the
machine inflate the seconds; benchmarks/profile_first_look.py gives the shares per component, which they do not.
The LAST line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ("ramdocs_dev", "multisource", "multisource_beta", "scenarios")
TARGETS = {"cold_s": 10.0, "switch_s": 1.5, "peak_rss_gb": 1.5}
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DONE = "Download this inspection as HTML"  # Inspect draws it under the columns once every method is in
TIMEOUT_S = 900

#: True when the main area shows ``text`` and a download button that is not stale, the app is not running, and
#: everything is drawn: no element still loading its code (Streamlit's skeleton) and every plotly chart rendered.
#: The check runs on the page's main thread, so it cannot pass while the browser is still busy rendering.
_FULL_RESULT_JS = """(text) => {
    const main = document.querySelector('[data-testid="stMain"]') || document.body;
    if (text && !main.innerText.includes(text)) return false;
    const fresh = [...main.querySelectorAll('[data-testid="stDownloadButton"]')]
        .filter(b => !b.closest('[data-stale="true"]') && b.innerText.includes(%s));
    const running = document.querySelector('[data-testid="stStatusWidget"]');
    const loading = document.querySelector('[data-testid="stSkeleton"]');
    const charts = [...main.querySelectorAll('[data-testid="stPlotlyChart"]')];
    return fresh.length > 0 && !running && !loading && charts.every(c => c.querySelector('.main-svg'));
}""" % json.dumps(DONE)
#: Records when the browser's last long task (≥ 50 ms of main-thread work) ended, from the page's first script on.
_LONG_TASKS_JS = """(() => { window.__longTaskEnd = 0; new PerformanceObserver(list => { for (const e of list.getEntries())
    window.__longTaskEnd = Math.max(window.__longTaskEnd, e.startTime + e.duration); })
    .observe({type: 'longtask', buffered: true}); })()"""
QUIET_MS = 300


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _peak_rss_bytes(pid: int) -> int:
    """VmHWM (peak resident set) of the process plus its live children, from /proc."""
    total = 0
    pids = [pid]
    try:
        pids += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        pass
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) the server has used, its waited-for children included: unlike wall time, hardly
    inflated by other processes competing for the cores."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def wait_healthy(url: str, proc: subprocess.Popen, seconds: float = 120) -> None:
    """Until the Streamlit server at ``url`` answers its health check; ``RuntimeError`` if it exits or is late."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the app did not start (exit {proc.poll()})") from None
            time.sleep(0.1)


@contextmanager
def app_server(cache_dir: Path, data_dir: Path, root: Path = ROOT):
    """``streamlit run app.py`` (of the checkout at ``root``) on a free port; yields (url, Popen, start time)."""
    env = {**os.environ, "CONFLICTLENS_CACHE_DIR": str(cache_dir), "CONFLICTLENS_DATA_DIR": str(data_dir)}
    port = _free_port()
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(root / "app.py"), "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        yield url, proc, start
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait_full_result(page, question_text: str = "") -> None:
    page.wait_for_function(_FULL_RESULT_JS, arg=question_text, timeout=TIMEOUT_S * 1000, polling=100)


def _wait_quiet(page) -> None:
    """Until the browser has done no long task for QUIET_MS: a user's next click lands on a page that is done, and
    a switch is not charged for the previous result's last rendering (untimed)."""
    page.wait_for_function(f"() => performance.now() - window.__longTaskEnd > {QUIET_MS}", timeout=60_000,
                           polling=50)


def _open_on_dataset(page, url: str, dataset: str) -> None:
    """As a user: open the app on Model calls (runs nothing), choose the dataset, then Inspect."""
    page.goto(f"{url}/calls", timeout=TIMEOUT_S * 1000)
    page.get_by_text("cached replies in").first.wait_for(timeout=TIMEOUT_S * 1000)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_test_id("stSelectbox").first.click()
    page.get_by_role("option", name=dataset, exact=True).click()
    sidebar.get_by_text("Question (").first.wait_for(timeout=TIMEOUT_S * 1000)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Inspect").click()


def _questions(dataset: str, n: int) -> list[tuple[str, str]]:
    """(id, text) of the first ``n`` questions, read straight from the file (no backend import here)."""
    rows = []
    with (ROOT / "sample_data" / dataset / "questions.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                rows.append((row.get("id") or "", row["question"]))
            if len(rows) >= n:
                break
    return rows


def _pick_question(page, index: int) -> None:
    """Choose the question at 0-based ``index`` in the sidebar's question box (type-ahead list)."""
    box = page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").nth(1)
    box.click()
    page.get_by_role("option").nth(index).click()


def _first_result(browser, url: str, dataset: str, question_text: str):
    """A new browser context on the dataset, waited on until the first question's full result shows; the page."""
    context = browser.new_context(viewport={"width": 1600, "height": 1400})
    context.add_init_script(_LONG_TASKS_JS)
    page = context.new_page()
    _open_on_dataset(page, url, dataset)
    _wait_full_result(page, question_text)
    return page


def measure(browser, dataset: str, switches: int, warm_disk: bool, root: Path = ROOT) -> dict:
    cache_dir = Path(tempfile.mkdtemp(prefix=f"cl-bench-{dataset}-"))
    data_dir = Path(tempfile.mkdtemp(prefix="cl-bench-data-"))
    questions = _questions(dataset, switches + 1)
    out: dict = {"dataset": dataset}
    try:
        with app_server(cache_dir, data_dir, root) as (url, proc, start):
            out["server_up_s"] = round(time.perf_counter() - start, 2)
            page = _first_result(browser, url, dataset, questions[0][1])
            out["cold_s"] = round(time.perf_counter() - start, 2)
            out["cold_cpu_s"] = round(_cpu_s(proc.pid), 2)
            times, cpu = [], []
            for i in range(1, len(questions)):
                _wait_quiet(page)
                t0, c0 = time.perf_counter(), _cpu_s(proc.pid)
                _pick_question(page, i)
                _wait_full_result(page, questions[i][1])
                times.append(round(time.perf_counter() - t0, 2))
                cpu.append(round(_cpu_s(proc.pid) - c0, 2))
            out["switch_cpu_s"] = cpu
            _wait_quiet(page)
            t0 = time.perf_counter()  # back to the first question: this session already has its results
            _pick_question(page, 0)
            _wait_full_result(page, questions[0][1])
            out["switch_back_s"] = round(time.perf_counter() - t0, 2)
            out["switch_s"] = times
            out["switch_median_s"] = statistics.median(times) if times else None
            out["switch_max_s"] = max(times) if times else None
            out["peak_rss_gb"] = round(_peak_rss_bytes(proc.pid) / 1e9, 3)
            page.context.close()
        if warm_disk:
            with app_server(cache_dir, data_dir, root) as (url, proc, start):
                page = _first_result(browser, url, dataset, questions[0][1])
                out["warm_disk_s"] = round(time.perf_counter() - start, 2)
                out["warm_disk_cpu_s"] = round(_cpu_s(proc.pid), 2)
                out["warm_disk_peak_rss_gb"] = round(_peak_rss_bytes(proc.pid) / 1e9, 3)
                page.context.close()
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
        shutil.rmtree(data_dir, ignore_errors=True)
    return out


def _reference_s() -> float:
    """CPU seconds of a fixed pure-Python workload in this process: how fast the machine runs Python right now (on
    a shared host it varies by ±15% within an hour), printed before and after so runs can be compared."""
    start = time.process_time()
    sum(i * i for i in range(10_000_000))
    return round(time.process_time() - start, 3)


def _row(cells: list[str]) -> str:
    return " | ".join(f"{c:>14}" if i else f"{c:<17}" for i, c in enumerate(cells))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--switches", type=int, default=3, help="questions switched to after the first (default 3)")
    ap.add_argument("--warm-disk", action="store_true", help="also restart on the same cache folder")
    ap.add_argument("--app-root", type=Path, default=ROOT,
                    help="the checkout whose app to measure (e.g. an older commit, for before/after)")
    args = ap.parse_args(argv)
    chromium = shutil.which("chromium")
    if chromium is None:
        print("Debian's chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    results = []
    reference = [_reference_s()]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        for dataset in args.datasets.split(","):
            r = measure(browser, dataset.strip(), args.switches, args.warm_disk, args.app_root.resolve())
            results.append(r)
            print(f"{dataset}: {json.dumps(r)}", flush=True)
        browser.close()

    load = os.getloadavg()[0]
    reference.append(_reference_s())
    print(f"\nfirst look (cold: empty cache folder, new server); load average {load:.1f} on {os.cpu_count()} cores "
          f"(other processes inflate the seconds); reference workload {reference[0]:.2f} / {reference[1]:.2f} CPU-s "
          "before / after (a slower host shows here)")
    head = ["dataset", "cold first s", "× 10 s", "(server CPU s)", "switch med s", "switch max s", "× 1.5 s",
            "(CPU s, med)", "peak RSS GB", "× 1.5 GB"]
    if args.warm_disk:
        head += ["warm disk s", "(CPU s)"]
    print(_row(head))
    for r in results:
        cells = [r["dataset"], f"{r['cold_s']:.1f}", f"{r['cold_s'] / TARGETS['cold_s']:.2f}", f"{r['cold_cpu_s']:.1f}",
                 f"{r['switch_median_s']:.2f}", f"{r['switch_max_s']:.2f}",
                 f"{r['switch_max_s'] / TARGETS['switch_s']:.2f}", f"{statistics.median(r['switch_cpu_s']):.2f}",
                 f"{r['peak_rss_gb']:.2f}",
                 f"{r['peak_rss_gb'] / TARGETS['peak_rss_gb']:.2f}"]
        if args.warm_disk:
            cells += [f"{r.get('warm_disk_s', float('nan')):.1f}", f"{r.get('warm_disk_cpu_s', float('nan')):.1f}"]
        print(_row(cells))
    print(json.dumps({"targets": TARGETS, "load_average": round(load, 2), "reference_cpu_s": reference,
                      "results": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
