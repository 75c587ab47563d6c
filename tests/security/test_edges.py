"""Issue 36, the server's edges and the low findings: files the project writes were world-readable (label store, reply
cache, results, uploads, the local server's files, the command line's exports); ``.streamlit/secrets.toml`` was not
ignored by git; ``--max-cost nan`` or ``inf`` disabled the limit; ``serve-model --host 0.0.0.0`` only warned and its
``/health`` showed its knowledge paths; the HTML report had no Content-Security-Policy; the shipped config showed
tracebacks; pages showed the server's own paths to a team-server visitor; errors quoted the keys of a file a user
named (a secrets file's keys are content too).

Each is checked where a user meets it: files created with the umask a server usually has (022), the command line as a
subprocess against a real priced model server on loopback, the app through AppTest with a ``[deployment]`` table."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import httpx
import pytest
from streamlit.testing.v1 import AppTest

from backend import deployment
from backend.paths import SAMPLE_DATA
from tests.conftest import ROOT

APP = str(ROOT / "app.py")


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _cli(*args: str, timeout: float = 300, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "backend", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "OPENAI_API_KEY": "sk-edges-FAKE-0123456789", **env})


@pytest.fixture(autouse=True)
def _settings():
    """Settings from each test's own environment (an app test run earlier in this process configured its own)."""
    deployment.reset()
    yield
    deployment.reset()


@pytest.fixture
def server_umask():
    """The umask a server account usually runs with: what it creates is world-readable unless made otherwise."""
    before = os.umask(0o022)
    yield
    os.umask(before)


# --- files the project writes: owner-only --------------------------------------------------------------------

def test_what_the_project_creates_is_owner_only_and_existing_folders_keep_their_mode(tmp_path, monkeypatch,
                                                                                    server_umask):
    from backend import uploads
    from backend.evaluate import RESULTS, folder_lock, write_json
    from backend.labels import LabelStore
    from backend.llm.cache import CachedReply, CallCache
    from backend.llm.local import server as local_server
    from backend.llm.local import throughput
    from backend.paths import default_cache_dir, open_private

    home = tmp_path / "home"  # the user's own folder: exists, and stays as it is
    home.mkdir(mode=0o755)
    os.chmod(home, 0o755)
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(home / "new" / "cache"))
    monkeypatch.setenv("CONFLICTLENS_DATA_DIR", str(home / "new" / "data"))

    cache = CallCache(default_cache_dir() / "calls.db")  # the reply cache, WAL: its -wal and -shm too
    cache.put("k", "m", CachedReply("a reply someone paid for", 1, 1))
    store = LabelStore()  # the per-user label store
    store.engine.dispose()
    uploads.save(b'{"question": "q?", "documents": [{"text": "t"}]}\n')
    run = default_cache_dir() / "evaluations" / "ds-1"
    with folder_lock(run):  # a run folder, its lock, its rows and its summary
        write_json(run / "summary.json", {})
        with open_private(run / RESULTS, "a") as fh:
            fh.write("{}\n")
    throughput.record("d" * 16, {"prompt_n": 64, "prompt_per_second": 100.0, "predicted_n": 16,
                                 "predicted_per_second": 10.0})
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    local_server.announce("m", gguf=gguf, port=1, parallel=1, ctx=1, threads=1, pid=os.getpid())

    made = [p for p in (home / "new").rglob("*")]
    assert any(p.name == "calls.db-wal" for p in made) and any(p.name == "labels.db" for p in made)
    assert any(p.suffix == ".jsonl" and p.parent.name == "uploads" for p in made)
    assert any(p.name == "throughput.json" for p in made) and any(p.name == "m.json" for p in made)
    loose = {str(p.relative_to(home)): oct(_mode(p)) for p in [home / "new", *made]
             if _mode(p) & 0o077}
    assert not loose, loose  # folders 0700, files 0600
    assert _mode(home) == 0o755  # a folder that was there is not changed


def test_the_command_lines_exports_are_owner_only(tmp_path, server_umask):
    out = tmp_path / "labels.csv"
    done = _cli("labels", "export", "--labels", str(tmp_path / "store.db"), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert _mode(out) == 0o600 and _mode(tmp_path / "store.db") == 0o600
    kept = tmp_path / "kept.csv"  # a file the user made keeps its own mode
    kept.write_text("")
    os.chmod(kept, 0o644)
    assert _cli("labels", "export", "--labels", str(tmp_path / "store.db"), "--out", str(kept)).returncode == 0
    assert _mode(kept) == 0o644


# --- secrets.toml ---------------------------------------------------------------------------------------------

def test_the_secrets_file_is_ignored_by_git():
    done = subprocess.run(["git", "check-ignore", "-q", ".streamlit/secrets.toml"], cwd=ROOT, capture_output=True)
    assert done.returncode == 0, "not ignored: .streamlit/secrets.toml could be committed with the server's keys"


# --- --max-cost ------------------------------------------------------------------------------------------------

def test_a_max_cost_that_is_not_a_finite_number_is_refused_before_anything_is_sent(tmp_path):
    from backend.llm.server import running_server

    common = ["--dataset", str(SAMPLE_DATA / "ramdocs_dev"), "--question", "@1", "--methods", "no_rag",
              "--model", "openai/gpt-4o-mini", "--cache-dir", str(tmp_path / "cache"), "--cache-mode", "off"]
    with running_server(model_name="gpt-4o-mini") as srv:  # priced in litellm's map: the limit applies
        for value in ("nan", "inf", "-inf", "NaN"):
            done = _cli("inspect", *common, "--api-base", srv.base_url, f"--max-cost={value}")
            lines = done.stderr.strip().splitlines()
            assert done.returncode == 2 and len(lines) == 1 and "--max-cost" in lines[0], (value, done.stderr)
            assert srv.stats["requests"] == 0, value  # nothing was sent


# --- serve-model ----------------------------------------------------------------------------------------------

def test_serve_model_refuses_a_host_other_machines_reach_without_allow_remote():
    proc = subprocess.Popen([sys.executable, "-m", "backend", "serve-model", "--host", "0.0.0.0", "--port", "0",
                             "--no-warmup", "--knowledge", "none"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        _, err = proc.communicate(timeout=120)  # it must exit by itself; serving would never end
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("serve-model --host 0.0.0.0 served (with only a warning) instead of refusing")
    lines = err.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "--allow-remote" in lines[0], err


def test_serve_models_health_shows_no_path_of_the_machine():
    from backend.llm.server import running_server

    knowledge = str(SAMPLE_DATA / "ramdocs_dev")
    with running_server(knowledge=(knowledge,)) as srv:
        health = httpx.get(srv.base_url.removesuffix("/v1") + "/health", timeout=30)
    assert health.status_code == 200 and health.json()["status"] == "ok"
    text = health.text
    assert knowledge not in text and "ramdocs_dev" not in text and str(ROOT) not in text, text
    assert not re.search(r'"/[^"]*/', text), text  # no absolute path at all


# --- the HTML report's Content-Security-Policy ---------------------------------------------------------------

def test_the_report_forbids_scripts_and_remote_loads_and_names_its_one_stylesheet(ramdocs):
    from backend.report import report_html

    question = ramdocs.questions[0]
    html = report_html(ramdocs, question, {})
    head = html.split("</head>")[0]
    found = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', head)
    assert found, "no Content-Security-Policy in the report's head"
    policy = dict((d.split()[0], d.split()[1:]) for d in found.group(1).split(";") if d.strip())
    assert policy["default-src"] == ["'none'"] and "script-src" not in policy  # no script runs, nothing loads
    assert policy["base-uri"] == ["'none'"] and policy["form-action"] == ["'none'"]
    styles = re.findall(r"<style>(.*?)</style>", html, re.S)
    digest = base64.b64encode(hashlib.sha256(styles[0].encode("utf-8")).digest()).decode("ascii")
    assert len(styles) == 1 and policy["style-src"] == [f"'sha256-{digest}'"]  # its own stylesheet, nothing inline
    assert " style=" not in html  # an inline style attribute would be blocked: none is needed
    assert head.index("Content-Security-Policy") < head.index("<style>")


# --- the shipped config ------------------------------------------------------------------------------------------

def test_the_shipped_config_hides_error_details_from_the_browser():
    import streamlit.config

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    value = config.get("client", {}).get("showErrorDetails")
    assert value == "none", value  # no type, message or traceback in the browser: they go to the server's console
    assert '"none"' in streamlit.config._config_options_template["client.showErrorDetails"].description


# --- server paths on pages ------------------------------------------------------------------------------------

def test_a_team_server_shows_where_it_keeps_things_as_cache_not_its_path(tmp_path, monkeypatch):
    cache = tmp_path / "srv" / "cache"
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(cache))
    at = AppTest.from_file(APP, default_timeout=120)
    at.secrets["deployment"] = {"open_folders": [str(SAMPLE_DATA)]}
    at.query_params["methods"] = "no_rag"
    at.run()
    at.switch_page("pages/calls.py").run()
    assert not at.exception, at.exception
    shown = "\n".join(c.value.replace("\\", "") for c in at.caption)
    assert "cached repl" in shown and "<cache>/" in shown, shown
    assert str(tmp_path) not in shown, shown


def test_shown_paths_on_ones_own_machine_and_on_a_team_server(tmp_path, monkeypatch):
    from backend.deployment import shown_path
    from components.labels import shown_location

    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CONFLICTLENS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    run, store = tmp_path / "cache" / "evaluations" / "ds-1", tmp_path / "data" / "labels.db"
    dataset = tmp_path / "home" / "team" / "q.jsonl"
    assert shown_path(run) == str(run)  # one's own machine: as it is
    deployment.configure({"open_folders": [str(tmp_path)]})  # the [deployment] table
    assert shown_path(run) == "<cache>/evaluations/ds-1" and shown_location(str(store)) == "<data>/labels.db"
    assert shown_path(dataset) == "~/team/q.jsonl" and shown_path("/srv/open/q.jsonl") == "/srv/open/q.jsonl"


# --- keys of a file a user names ----------------------------------------------------------------------------

SECRET_KEYS = ["aws_secret_AKIAIOSFODNN7", "hunter2_password", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"]


def test_errors_never_quote_the_keys_of_a_file_given_as_a_dataset(tmp_path):
    from backend.data import DatasetError, load_dataset

    path = tmp_path / "secrets.jsonl"
    path.write_text(json.dumps({"question": "q?", SECRET_KEYS[0]: "v", SECRET_KEYS[2]: "v",
                                "documents": [{"text": "t", SECRET_KEYS[1]: "x"}]}) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        load_dataset(path)
    shown = "\n".join(str(p) for p in err.value.problems)
    assert not [k for k in SECRET_KEYS if k in shown], shown
    assert ":1: (line): 2 unknown fields (expected only id, question, documents" in shown, shown
    assert ":1: documents[0]: unknown field (expected only id, source, text, label)" in shown, shown
    done = _cli("validate", str(path), timeout=120)
    assert done.returncode == 2 and not [k for k in SECRET_KEYS if k in done.stdout + done.stderr], done.stderr


def test_errors_never_quote_the_keys_of_a_file_opened_as_results(tmp_path):
    from pydantic import ValidationError

    from backend.errors import describe
    from backend.schema import MethodResult

    with pytest.raises(ValidationError) as err:
        MethodResult.model_validate({SECRET_KEYS[1]: "x"})
    shown = "\n".join(describe(err.value))
    assert "unknown field" in shown and SECRET_KEYS[1] not in shown, shown
