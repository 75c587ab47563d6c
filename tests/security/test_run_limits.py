"""Issue 36 §2, bounded work: a per-run ceiling on calls and documents that asks before it is passed, and jobs that
end when nobody can see them.

* A 300-document question opened on Inspect with the offline model (which used to start every method on open:
  MADAM-RAG alone made 601 calls, 52 CPU-s) starts nothing: the page says what the run would do and asks; the call
  log stays empty until the user says yes; then the run goes. On a team server (a ``[deployment]`` table) the same
  run is refused: nobody on the page confirms past the operator's ceiling.
* The command line refuses the run in one line naming the flags that let it through.
* A job whose session is gone stops between model calls, with a real ``streamlit run`` app and a Chromium tab that
  is closed: the model server stops receiving requests long before the run would have ended, and every reply it sent
  is in the reply cache (a new tab's run asks the server only for the rest).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from backend import deployment
from benchmarks.large_dataset import write_many_documents
from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")
DOCUMENTS = 300


@pytest.fixture(autouse=True)
def _navigation_mode(_st_navigation_app):
    """AppTest in ``st.navigation`` mode (tests/app's fixture), so a click is not dropped by a mode switch."""


from tests.app.conftest import _st_navigation_app  # noqa: E402,F401 - the fixture above asks for it


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    """A dataset whose first question has 300 documents (the probe's)."""
    return write_many_documents(tmp_path_factory.mktemp("limits") / "big", questions=2, per_question=DOCUMENTS)


@pytest.fixture(autouse=True)
def _fresh_deployment():
    deployment.reset()
    yield
    deployment.reset()


def _inspect(big: Path, methods: str, secrets: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    for name, value in (secrets or {}).items():
        at.secrets[name] = value
    at.query_params["dataset"] = f"file:{big}"
    at.query_params["methods"] = methods
    at.run()
    assert not at.exception, at.exception
    return at


def _ceiling_checks(at) -> list:
    return [c for c in at.checkbox if c.key.startswith("inspect.ceiling.")]


def _calls(at) -> list:
    log = at.session_state["app.call_log"] if "app.call_log" in at.session_state else None
    return log.all() if log is not None else []


def _in_flight(at) -> dict:
    from components.session.runs import JOBS_KEY

    store = at.session_state[f"{JOBS_KEY}.run"] if f"{JOBS_KEY}.run" in at.session_state else None
    return store.in_flight() if store is not None else {}


def test_a_300_document_question_asks_before_its_600_calls(big):
    at = _inspect(big, "madam,no_rag")
    warnings = " ".join(w.value for w in at.warning)
    assert "up to 904 model calls on a question of 300 documents" in warnings, warnings   # MADAM's 903 + no_rag's 1
    assert "above the ceiling of 400 calls and 100 documents per run" in warnings
    (check,) = _ceiling_checks(at)
    assert "Yes, run up to 904 model calls" in check.label
    assert at.button(key="inspect.run").disabled
    at.run()  # a rerun (a poll, a click elsewhere) starts nothing either
    assert not _in_flight(at) and _calls(at) == []


def test_confirming_runs_it(big):
    at = _inspect(big, "no_rag,vanilla_rag")  # two calls, but 300 documents: above the ceiling of documents
    (check,) = _ceiling_checks(at)
    assert "up to 2 model calls on a question of 300 documents" in check.label
    assert _calls(at) == [] and not _in_flight(at)
    check.check().run()
    wait_for_runs(at)
    assert not at.exception, at.exception
    assert sorted(c.method for c in _calls(at)) == ["no_rag", "vanilla_rag"]
    assert any("method" in f.value.columns for f in at.dataframe)  # the results are drawn


def test_a_team_server_refuses_past_its_ceiling(big):
    at = _inspect(big, "no_rag,vanilla_rag", secrets={"deployment": {"open_folders": [str(big.parent)]}})
    errors = " ".join(e.value for e in at.error).replace("\\", "")  # as drawn: Markdown's escapes removed
    assert "above the ceiling of 100 documents per run on this server: it does not start" in errors, errors
    assert not _ceiling_checks(at)  # nothing to confirm past it
    assert at.button(key="inspect.run").disabled and _calls(at) == [] and not _in_flight(at)


def test_the_deployment_sets_the_ceiling(big, monkeypatch):
    monkeypatch.setenv("CONFLICTLENS_MAX_QUESTION_DOCUMENTS", str(DOCUMENTS))
    at = _inspect(big, "no_rag,vanilla_rag")  # 300 documents allowed, 2 calls: runs on open, as before
    wait_for_runs(at)
    assert not _ceiling_checks(at) and len(_calls(at)) == 2


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "backend", "inspect", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def test_the_cli_refuses_past_the_ceiling_in_one_line(big):
    proc = _cli("--dataset", str(big), "--question", "@1", "--methods", "madam,no_rag", "--json")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "error: this run would make up to 904 model calls on a question of 300 documents, above the ceiling of 400 "
        "calls and 100 documents per run: pass --max-calls 904 --max-documents 300 to run it"]


def test_the_cli_runs_with_the_flag(big):
    proc = _cli("--dataset", str(big), "--question", "@1", "--methods", "no_rag", "--json", "--max-documents", "300")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["results"]["no_rag"]["error"] is None


# --- a job whose session is gone stops, in a real app and a real browser -----------------------------------------

AGENTS = 40  # MADAM-RAG on 40 documents: at least 2 × 40 + 1 = 81 calls (it stops at round 2 at the earliest)
LATENCY_MS = 1000  # every reply takes 1 s: 4 calls in flight, ~20 s for the whole debate


def _requests_settle(server, quiet_s: float = 4.0, within_s: float = 120.0) -> int:
    """The server's request count once no request has arrived for ``quiet_s`` seconds (several replies' time: the
    run has stopped sending); fails after ``within_s``."""
    deadline = time.monotonic() + within_s
    seen, since = server.stats["requests"], time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = server.stats["requests"]
        if now != seen:
            seen, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return seen
    pytest.fail(f"the model server was still receiving requests after {within_s:.0f} s ({seen} so far)")


def _cached_replies(cache: Path) -> int:
    with sqlite3.connect(cache / "llm_cache.sqlite") as db:
        return db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]


@pytest.mark.browser
@pytest.mark.slow
def test_a_run_whose_tab_is_closed_stops_and_keeps_its_replies(browser, tmp_path):
    from backend.llm.server import running_server
    from tests.browser.conftest import app_server
    from tests.browser.walk import accept_unknown_price, ms, use_model, wait_until

    data = write_many_documents(tmp_path / "open" / "debate", questions=1, per_question=AGENTS)
    cache = tmp_path / "cache"
    env = {**os.environ, "CONFLICTLENS_OPEN_FOLDERS": str(tmp_path / "open"), "CONFLICTLENS_CACHE_DIR": str(cache),
           "CONFLICTLENS_JOB_GRACE_S": "1"}  # the grace after the last tab: 1 s here, 120 s by default
    with running_server(latency_ms=LATENCY_MS) as model, app_server(env=env) as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        page.goto(f"{url}/debate?dataset={'file:' + str(data)}", timeout=ms(90))  # Debate runs nothing by itself
        wait_until(page, page.get_by_role("button", name="Run", exact=True))
        use_model(page, "hosted_vllm/reader", model.base_url)
        wait_until(page, "at an unknown price (asked once this session)")  # the page redrawn for that model
        accept_unknown_price(page)
        page.get_by_role("button", name="Run", exact=True).click()
        deadline = time.monotonic() + 60
        while model.stats["requests"] < 4 and time.monotonic() < deadline:  # the debate under way
            page.wait_for_timeout(100)
        assert model.stats["requests"] >= 4, "the debate never started"
        page.close()  # nobody can see the run any more

        sent = _requests_settle(model)
        assert sent < 2 * AGENTS + 1, f"the run went on after its tab closed: {sent} requests"
        # every reply received is kept: one cached reply per request the server answered
        assert _cached_replies(cache) == model.stats["ok"] == sent


def test_the_watchdog_stops_a_session_gone_or_without_a_tab_past_the_grace():
    """``components.session.owner.sweep`` against Streamlit's answers: a session with a tab open keeps its jobs, one
    kept for a reconnect keeps them for the grace, one the session manager no longer knows stops at once."""
    import threading

    from components.session import owner

    stops = {name: threading.Event() for name in ("open", "reconnecting", "closed", "no-runtime")}
    for name, stop in stops.items():
        owner.watch(f"t36-{name}", stop)
    status = {"t36-open": "active", "t36-reconnecting": "waiting", "t36-closed": "gone", "t36-no-runtime": "unknown"}
    now = time.monotonic()
    look = lambda session: status.get(session, "unknown")  # noqa: E731 - other tests' sessions: left alone
    assert owner.sweep(look, grace_s=60, now=now) == ["t36-closed"]
    assert [n for n, s in stops.items() if s.is_set()] == ["closed"]
    assert owner.sweep(look, grace_s=60, now=now + 61) == ["t36-reconnecting"]  # no tab for longer than the grace
    assert not stops["open"].is_set() and not stops["no-runtime"].is_set()


def test_an_evaluation_stopped_by_its_owner_keeps_its_rows_and_says_so(tmp_path):
    """A batch whose owner left: no row for a pair the stop cut short (resume runs it, from the cached replies),
    the summary says why it stopped; the pairs finished before stay."""
    import threading

    from backend.data import load_dataset
    from backend.evaluate import OWNER_GONE, evaluate, load_results
    from backend.llm.client import CallLog, default_cache
    from backend.paths import SAMPLE_DATA
    from backend.runner import Runner

    ds = load_dataset(SAMPLE_DATA / "ramdocs_dev")
    stop = threading.Event()

    class Leaving(CallLog):  # the owner leaves in the middle of a debate: after the 15th model call
        def add(self, call) -> None:
            super().add(call)
            if len(self.all()) >= 15:
                stop.set()
    log = Leaving()
    runner = Runner(ds, cache=default_cache(tmp_path / "cache"), stop=stop, log=log)
    questions = ds.questions[:6]
    summary = evaluate(runner, questions, ["no_rag", "madam"], tmp_path / "out", concurrency=1)
    rows, _ = load_results(tmp_path / "out" / "results.jsonl")
    assert summary["stopped"].startswith(OWNER_GONE) and not summary["complete"]
    assert len(rows) < 12 and not any(r.error for r in rows.values())  # no "Stopped" row: those pairs stay to run
    assert 15 <= len(log.all()) <= 15 + runner.llm.concurrency  # nothing sent after the stop but what was in flight
    again = Runner(ds, cache=default_cache(tmp_path / "cache"))
    resumed = evaluate(again, questions, ["no_rag", "madam"], tmp_path / "out", resume=True)
    assert resumed["complete"] and resumed["stopped"] is None
