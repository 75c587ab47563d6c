"""API keys are never written: the command line (inspect with an HTML report and JSON, evaluate, labels export) with a
fake key in ``OPENAI_API_KEY``, and the app (a real ``streamlit run``, driven by Chromium) with another fake key in
``~/.streamlit/secrets.toml`` only, all against serve-model over HTTP (``openai/reader`` + ``api_base``), so litellm
really sends each key. A second server answers 401 and echoes the key it got in its error message, as hosted APIs
do. Every file the runs wrote (reply cache, retrieval index, results, summary, report, exports, label store,
the processes' logs, anything under the temporary HOME) is then searched: neither key appears, in clear or in
base64. The servers count the requests that carried each key, so the test fails if a key was never in play: both are
listed in the settings' ``key_endpoints`` (tests/security/test_keys*.py: a server not listed never gets a key)."""

from __future__ import annotations

import base64
import json
import os
import secrets
import subprocess
import sys
from collections import Counter

import pytest
from starlette.responses import JSONResponse

from backend import deployment
from backend.data import load_dataset
from backend.labels import LabelStore
from backend.labels.model import LabelDraft
from backend.llm.server import RunningServer, ServerSettings
from backend.paths import SAMPLE_DATA
from tests.browser.conftest import app_server
from tests.browser.walk import accept_unknown_price, ms, use_model, wait_until
from tests.conftest import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ENV_KEY = f"sk-conflictlens-FAKE-{secrets.token_hex(16)}"       # the command line's, from the environment
SECRETS_KEY = f"sk-conflictlens-FAKE-{secrets.token_hex(16)}"   # the app's, from .streamlit/secrets.toml only
KEYS = {"env": ENV_KEY, "secrets": SECRETS_KEY}
DATASET = SAMPLE_DATA / "ramdocs_dev"


class KeyWatch:
    """ASGI middleware in front of serve-model: counts chat requests by the key they carried (in memory only);
    ``echo``: answer 401 with the key in the message, as a hosted API rejecting it would."""

    def __init__(self, app, seen: Counter, echo: bool = False):
        self.app, self.seen, self.echo = app, seen, echo

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["path"].endswith("/chat/completions"):
            auth = dict(scope["headers"]).get(b"authorization", b"").decode()
            for name, key in KEYS.items():
                self.seen[name] += auth == f"Bearer {key}"
            if self.echo:
                token = auth.removeprefix("Bearer ")
                await JSONResponse({"error": {"message": f"Incorrect API key provided: {token}.", "param": None,
                                              "type": "invalid_request_error", "code": "invalid_api_key"}},
                                   status_code=401)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def watched_server(seen: Counter, echo: bool = False) -> RunningServer:
    srv = RunningServer(ServerSettings(port=0))
    srv.app.add_middleware(KeyWatch, seen=seen, echo=echo)
    return srv.start()


def cli(args: list[str], env: dict, logs, name: str) -> subprocess.CompletedProcess:
    """``python -m backend ARGS``; its stdout and stderr are also kept as files under ``logs`` (searched later)."""
    proc = subprocess.run([sys.executable, "-m", "backend", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=900)
    (logs / f"{name}.out").write_text(proc.stdout)
    (logs / f"{name}.err").write_text(proc.stderr)
    return proc


def leaks(data: bytes) -> list[str]:
    found = []
    for name, key in KEYS.items():
        for form in (key, key.rsplit("-", 1)[1], base64.b64encode(key.encode()).decode(),
                     base64.urlsafe_b64encode(key.encode()).decode()):
            if form.encode() in data:
                found.append(f"{name} key ({form[:12]}…)")
    return found


def drive_app(browser, url: str, question: str, good: str, leaky: str) -> str:
    """Inspect ``question`` with two methods on ``openai/reader`` at ``good`` (Run), test the connection to it and
    to ``leaky``; returns the page's text at the end."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{url}/?dataset=ramdocs_dev&question={question}&methods=no_rag,vanilla_rag", timeout=ms(90))
        sidebar = page.get_by_test_id("stSidebar")
        wait_until(page, sidebar.get_by_text("Question (100)"))
        use_model(page, "openai/reader", good)
        wait_until(page, "Press Run")
        accept_unknown_price(page)
        page.get_by_role("button", name="Run", exact=True).click()
        wait_until(page, lambda p: p.evaluate("() => { const t = document.body.innerText; "
                                              "return t.includes('Vanilla RAG') && !t.includes('Press Run') "
                                              "&& !t.includes('running…'); }"),
                   "both methods' results")
        sidebar.get_by_role("button", name="Test connection").click()
        wait_until(page, sidebar.get_by_text("Connected in"))
        # the rejecting provider, through the app: the page says so without the key
        field = sidebar.get_by_role("textbox", name="api_base (optional)")
        field.fill(leaky)
        field.press("Enter")
        sidebar.get_by_role("button", name="Test connection").click()
        wait_until(page, sidebar.get_by_text("Failed in"))
        return page.inner_text("body")
    finally:
        page.close()


def test_no_file_written_by_the_cli_or_the_app_holds_an_api_key(tmp_path, browser):
    home, cache, data, out, logs = (tmp_path / d for d in ("home", "cache", "data", "out", "logs"))
    for d in (home, cache, data, out, logs):
        d.mkdir()
    (home / ".streamlit").mkdir()
    base = {k: v for k, v in os.environ.items()
            if not k.upper().endswith(("_API_KEY", "_TOKEN")) and k != deployment.ENV_KEY_ENDPOINTS}
    base |= {"HOME": str(home), "CONFLICTLENS_CACHE_DIR": str(cache), "CONFLICTLENS_DATA_DIR": str(data),
             "PYTHONPATH": str(ROOT)}
    questions = load_dataset(DATASET).questions
    seen, seen_leaky = Counter(), Counter()
    good, leaky = watched_server(seen), watched_server(seen_leaky, echo=True)
    # both servers may receive the server's keys (issue 26: the keys go only where the settings allow): the command
    # line's through the environment, the app's in the [deployment] table beside its key
    endpoints = [good.base_url, leaky.base_url]
    cli_env = base | {"OPENAI_API_KEY": ENV_KEY, deployment.ENV_KEY_ENDPOINTS: ",".join(endpoints)}
    (home / ".streamlit" / "secrets.toml").write_text(f'OPENAI_API_KEY = "{SECRETS_KEY}"\n\n[deployment]\n'
                                                      f"key_endpoints = {json.dumps(endpoints)}\n")
    try:
        model = ["--model", "openai/reader", "--api-base", good.base_url]
        # the command line: a report, JSON (every method once, so BRIDGE's corpus index is built too), an evaluation
        proc = cli(["inspect", "--dataset", str(DATASET), "--question", "@1", "--methods", "all", *model,
                    "--html", str(out / "report.html"), "--json"], cli_env, logs, "inspect")
        assert proc.returncode == 0, proc.stderr[-2000:]
        (out / "inspect.json").write_text(proc.stdout)
        assert not any(r["error"] for r in json.loads(proc.stdout)["results"].values())
        # retrieve mode: every method searches the dense (chromadb) index, so that index is written too
        proc = cli(["evaluate", "--dataset", str(DATASET), "--limit", "3", "--methods",
                    "no_rag,vanilla_rag,astute,counterfactual", "--evidence", "retrieve", *model,
                    "--out", str(out / "eval")], cli_env, logs, "evaluate")
        assert proc.returncode == 0, proc.stderr[-2000:]
        # a provider that echoes the key in its error: the failed rows and messages must not carry it (no reply
        # cache: its key names the model, not the endpoint, so the replies above would answer)
        proc = cli(["evaluate", "--dataset", str(DATASET), "--limit", "2", "--methods", "no_rag,vanilla_rag",
                    "--model", "openai/reader", "--api-base", leaky.base_url, "--retries", "0", "--cache-mode", "off",
                    "--out", str(out / "eval-rejected")], cli_env, logs, "evaluate-rejected")
        assert proc.returncode == 0, proc.stderr[-2000:]
        rows = [json.loads(line) for line in (out / "eval-rejected" / "results.jsonl").read_text().splitlines()]
        assert rows and all("Incorrect API key provided" in r["result"]["error"] for r in rows)
        # labels: a store with a label, exported both ways
        store = LabelStore(data / "labels.db")
        store.save(LabelDraft(dataset="ramdocs_dev", question_id=questions[0].id, answers=["x"], analyst="ann"),
                   dataset=load_dataset(DATASET))  # kept under the dataset's identity (backend.labels.identity)
        store.close()
        for fmt in ("csv", "jsonl"):
            proc = cli(["labels", "export", "--dataset", "ramdocs_dev", "--format", fmt,
                        "--out", str(out / f"labels.{fmt}")], cli_env, logs, f"labels-{fmt}")
            assert proc.returncode == 0, proc.stderr[-2000:]
        assert cli(["labels", "info"], cli_env, logs, "labels-info").returncode == 0

        # the app: the key only in ~/.streamlit/secrets.toml; a question the command line did not cache
        question = questions[4].id
        with app_server(base, log=logs / "app.log") as url:
            shown = drive_app(browser, url, question, good.base_url, leaky.base_url)
    finally:
        good.stop()
        leaky.stop()

    # every key was really sent: the command line's from the environment, the app's from secrets.toml
    assert seen["env"] > 0 and seen["secrets"] > 0, seen
    assert seen_leaky["env"] > 0 and seen_leaky["secrets"] > 0, seen_leaky
    assert not leaks(shown.encode())

    secrets_file = home / ".streamlit" / "secrets.toml"   # where the key was put: the one file allowed to hold it
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p != secrets_file]
    names = {p.name for p in files}
    assert {"llm_cache.sqlite", "results.jsonl", "summary.json", "report.html", "inspect.json", "labels.db",
            "labels.csv", "labels.jsonl", "app.log"} <= names, names
    assert any("corpus" in p.parts for p in files)   # BRIDGE's corpus index (BM25 and document vectors)
    assert any("index" in p.parts for p in files)    # the dense retrieval index (chromadb)
    found = {str(p.relative_to(tmp_path)): hits for p in files if (hits := leaks(p.read_bytes()))}
    assert found == {}
    print(f"\nSECRETS: {len(files)} files written ({sum(p.stat().st_size for p in files) / 1e6:.1f} MB) by the "
          f"command line and the app searched; no key found. Requests carrying the environment's key: "
          f"{seen['env'] + seen_leaky['env']}, the secrets.toml key: {seen['secrets'] + seen_leaky['secrets']}")
