"""Issue 26, finding 1: the server's API keys leave it only for their provider's own endpoint or an api_base the
deployment allows (``key_endpoints``); any other api_base gets a key typed for it, or a placeholder.

A loopback listener (``tests.security.listener``) stands in for the address a user typed and records every header.
With fake keys in the environment it must never see them, from Test connection, a Runner run, ``python -m backend
evaluate``, an attack campaign (in-process and the CLI's ``attack``); it must see them once ``key_endpoints`` allows
it (the tests would fail if the rule were a no-op) and see a typed key when one is given. The rule's provider list
is checked against litellm itself, with every credential variable litellm reads set to a sentinel."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from backend import deployment
from backend.data import load_dataset
from backend.llm.client import LLMClient, LLMConfig, LLMError
from backend.llm.failures import classify_failure
from backend.llm.keys import ENV_API_KEY, KEY_ONLY_PROVIDERS, PLACEHOLDER_KEY, SUBSTITUTED, KeyRefused, api_key_for
from backend.paths import SAMPLE_DATA
from backend.runner import Runner
from tests.app.conftest import _st_navigation_app  # noqa: F401  (a fixture: AppTest in st.navigation mode)
from tests.conftest import ROOT
from tests.security.listener import Listener

OPENAI_KEY = f"sk-server-FAKE-{secrets.token_hex(12)}"
ANTHROPIC_KEY = f"sk-ant-server-FAKE-{secrets.token_hex(12)}"
SERVER_KEYS = (OPENAI_KEY, ANTHROPIC_KEY)
TYPED = f"sk-typed-FAKE-{secrets.token_hex(12)}"
DATASET = SAMPLE_DATA / "ramdocs_dev"
METHODS = ["no_rag", "vanilla_rag"]


@pytest.fixture
def server_keys(monkeypatch):
    """The server's keys in its environment; no setting allows any api_base (the default)."""
    deployment.reset()
    for name in (deployment.ENV_KEY_ENDPOINTS, ENV_API_KEY, "OPENAI_API_BASE", "OPENAI_BASE_URL",
                 "ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    yield
    deployment.reset()


@pytest.fixture
def listener():
    with Listener() as srv:
        yield srv


def allow(monkeypatch, base: str) -> None:
    monkeypatch.setenv(deployment.ENV_KEY_ENDPOINTS, base)
    deployment.reset()


def no_server_key(srv: Listener) -> None:
    """The listener was called, and no request carried a server key."""
    assert srv.received(), "the listener got no request: the test proves nothing"
    for key in SERVER_KEYS:
        assert srv.carried(key) == 0, "a server key reached an api_base the deployment does not allow"


def probe(model: str, base: str, api_key: str | None = None) -> tuple[bool, str, float]:
    return LLMClient(LLMConfig(model=model, api_base=base, cache_mode="off", timeout_s=20, num_retries=0),
                     api_key=api_key).test_connection()


# -- the rule itself -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("provider, typed, allowed, in_process, expected", [
    ("openai", None, True, False, None),                     # own endpoint / allowed base: litellm's env key
    ("openai", TYPED, True, False, TYPED),
    ("openai", None, False, False, PLACEHOLDER_KEY),         # any other base: never None (litellm's env fallback)
    ("anthropic", "  ", False, False, PLACEHOLDER_KEY),      # a blank key is none
    ("anthropic", TYPED, False, False, TYPED),
    (None, None, False, False, PLACEHOLDER_KEY),             # litellm cannot tell: it fails before sending
    ("offline", None, False, True, None),                    # in-process: sends nothing anywhere
])
def test_the_rule(provider, typed, allowed, in_process, expected):
    assert api_key_for(provider, typed, keys_allowed=allowed, in_process=in_process) == expected


@pytest.mark.parametrize("provider", ["bedrock", "sagemaker", "vertex_ai", "watsonx", "gigachat"])
def test_the_rule_refuses_providers_with_other_credentials(provider):
    for typed in (None, TYPED):  # a typed key does not replace the server's cloud credentials
        with pytest.raises(KeyRefused, match="the deployment setting key_endpoints"):
            api_key_for(provider, typed, keys_allowed=False)
    assert api_key_for(provider, None, keys_allowed=True) is None


# -- Test connection, a run, the command line, an attack -----------------------------------------------------------

@pytest.mark.parametrize("model, header", [("openai/gpt-4o-mini", "authorization"),
                                           ("anthropic/claude-3-haiku-20240307", "x-api-key")])
def test_test_connection_sends_no_server_key_to_a_typed_api_base(server_keys, listener, model, header):
    probe(model, listener.base)
    no_server_key(listener)
    assert all(PLACEHOLDER_KEY in r.headers[header] for r in listener.received())  # litellm got a key: not the env's


@pytest.mark.parametrize("model, header, key", [("openai/gpt-4o-mini", "authorization", OPENAI_KEY),
                                                ("anthropic/claude-3-haiku-20240307", "x-api-key", ANTHROPIC_KEY)])
def test_an_allowed_api_base_gets_the_servers_key(server_keys, listener, monkeypatch, model, header, key):
    allow(monkeypatch, listener.base)
    probe(model, listener.base)
    assert listener.carried(key) and key in listener.received()[0].headers[header]
    listener.clear()
    deployment.configure({"key_endpoints": [listener.base.removesuffix("/v1")]})  # the secrets table, as the app
    probe(model, listener.base + "/")
    assert listener.carried(key)


def test_the_servers_own_base_from_its_environment_is_allowed(server_keys, listener, monkeypatch):
    """OPENAI_API_BASE is the admin's setting (no api_base typed): the key goes there, as before."""
    monkeypatch.setenv("OPENAI_API_BASE", listener.base)
    ok, _, _ = LLMClient(LLMConfig(model="openai/gpt-4o-mini", cache_mode="off", num_retries=0)).test_connection()
    assert ok and listener.carried(OPENAI_KEY)


@pytest.mark.parametrize("model, header", [("openai/gpt-4o-mini", "authorization"),
                                           ("anthropic/claude-3-haiku-20240307", "x-api-key")])
def test_a_typed_key_is_what_a_typed_api_base_gets(server_keys, listener, model, header):
    probe(model, listener.base, api_key=TYPED)
    no_server_key(listener)
    assert all(TYPED in r.headers[header] for r in listener.received())


def test_test_connection_reports_a_bounded_reply():
    with Listener(reply="<script>" + "x" * 5000) as srv:
        ok, message, _ = probe("openai/m", srv.base)
    assert ok and len(message) < 400 and message.endswith("…'")


def test_a_runner_run_sends_no_server_key(server_keys, listener):
    ds = load_dataset(DATASET)
    runner = Runner(ds, llm=LLMConfig(model="openai/m", api_base=listener.base, num_retries=0))
    runner.run(ds.questions[0], METHODS)
    no_server_key(listener)
    listener.clear()
    typed = Runner(ds, llm=LLMConfig(model="openai/m", api_base=listener.base, num_retries=0), api_key=TYPED)
    assert TYPED not in repr(typed)
    typed.run(ds.questions[1], METHODS)
    no_server_key(listener)
    assert listener.carried(TYPED) == len(listener.received())


def test_an_attack_campaign_sends_no_server_key(server_keys, listener, tmp_path):
    from backend.whatif.campaign import attack_dataset

    ds = load_dataset(DATASET)
    runner = Runner(ds, llm=LLMConfig(model="openai/m", api_base=listener.base, num_retries=0))
    attack_dataset(runner, ds.questions[:1], ["vanilla_rag"], tmp_path / "attack", ks=[1])
    no_server_key(listener)


def cli(args: list[str], **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in (deployment.ENV_KEY_ENDPOINTS, ENV_API_KEY)}
    return subprocess.run([sys.executable, "-m", "backend", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, env=base | {"PYTHONPATH": str(ROOT), "OPENAI_API_KEY": OPENAI_KEY,
                                                   "ANTHROPIC_API_KEY": ANTHROPIC_KEY} | env)


@pytest.mark.slow
def test_the_command_line_sends_the_servers_key_only_where_allowed(listener, tmp_path):
    model = ["--model", "openai/m", "--api-base", listener.base, "--cache-mode", "off", "--retries", "0", "--yes",
             "--methods", ",".join(METHODS), "--limit", "2"]
    # evaluate, 2 questions, a key in $CONFLICTLENS_API_KEY: that key goes, the server's does not
    done = cli(["evaluate", "--dataset", str(DATASET), *model, "--out", str(tmp_path / "eval")], **{ENV_API_KEY: TYPED})
    assert done.returncode == 0, done.stderr[-2000:]
    no_server_key(listener)
    assert listener.carried(TYPED) == len(listener.received())
    for key in (*SERVER_KEYS, TYPED):
        assert key not in done.stdout + done.stderr
    # evaluate without a key: a placeholder, still none of the server's
    listener.clear()
    done = cli(["evaluate", "--dataset", str(DATASET), *model, "--out", str(tmp_path / "eval2")])
    assert done.returncode == 0, done.stderr[-2000:]
    no_server_key(listener)
    # attack, with the listener in $CONFLICTLENS_KEY_ENDPOINTS: now the server's key goes there
    listener.clear()
    done = cli(["attack", "--dataset", str(DATASET), "--k", "1", *model, "--out", str(tmp_path / "attack")],
               **{deployment.ENV_KEY_ENDPOINTS: listener.base})
    assert done.returncode == 0, done.stderr[-2000:]
    assert listener.received() and listener.carried(OPENAI_KEY) == len(listener.received())


def test_the_api_base_help_states_the_rule():
    from backend.cli import build_parser

    text = build_parser()._subparsers._group_actions[0].choices["evaluate"].format_help()
    assert "CONFLICTLENS_KEY_ENDPOINTS" in text and "CONFLICTLENS_API_KEY" in text


# -- the providers the rule lets through, checked against litellm ---------------------------------------------------

def _credential_variables() -> set[str]:
    """Every environment variable litellm's provider code reads that holds a credential."""
    import litellm

    root = Path(litellm.__file__).parent
    read = re.compile(r"(?:get_secret(?:_str)?|os\.environ\.get|os\.getenv)\(\s*[\"']([A-Z][A-Z0-9_]+)[\"']")
    names: set[str] = set()
    for path in [root / "main.py", *(root / "llms").rglob("*.py"), *(root / "litellm_core_utils").rglob("*.py")]:
        names |= set(read.findall(path.read_text(errors="ignore")))
    credential = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|JWT")
    config = re.compile(r"TOKENS|MAX_|COST|COUNT|_FILE$|_DIR$|_URL$|_URI$|BUDGET|VERSION|DISABLE|DEFAULT|SECONDS|"
                        r"INTERVAL|SIZE|ENABLED|TTL|PERIOD|HOURS|^LITELLM_|^MCP_|^REDIS_|^MINIMUM_|^LENGTH_")
    return {n for n in names if credential.search(n) and not config.search(n)}


@pytest.fixture(scope="module")
def sentinels():
    import backend.llm.client as client

    client._litellm()  # imported before the variables are set: litellm reads some numbers at import
    return {name: f"SENTINEL-{name}-{secrets.token_hex(6)}" for name in _credential_variables()}


@pytest.mark.parametrize("provider", sorted(KEY_ONLY_PROVIDERS))
def test_each_provider_let_through_carries_only_the_given_key(provider, sentinels, monkeypatch, listener):
    assert len(sentinels) > 100 and "AZURE_AD_TOKEN" in sentinels and "ANTHROPIC_AUTH_TOKEN" in sentinels
    deployment.reset()
    monkeypatch.delenv(deployment.ENV_KEY_ENDPOINTS, raising=False)
    for name, value in sentinels.items():
        monkeypatch.setenv(name, value)
    for typed in (None, TYPED):
        listener.clear()
        try:
            probe(f"{provider}/m", listener.base, api_key=typed)
        except LLMError:
            pass
        assert listener.received(), f"{provider}: nothing reached the listener"
        leaked = sorted(name for name, value in sentinels.items() if listener.carried(value))
        assert leaked == [], f"{provider} sent {leaked} to an api_base the deployment does not allow"
        sent = typed or PLACEHOLDER_KEY
        assert any(sent in r.raw() for r in listener.received()), f"{provider}: the given key was not what went"


@pytest.mark.parametrize("model", ["bedrock/anthropic.claude-3-haiku-20240307-v1:0", "sagemaker/endpoint",
                                   "vertex_ai/gemini-1.5-flash", "watsonx/ibm/granite", "gigachat/GigaChat"])
def test_other_providers_are_refused_before_sending(server_keys, listener, model):
    for typed in (None, TYPED):
        ok, message, _ = probe(model, listener.base, api_key=typed)
        assert not ok and "the deployment setting key_endpoints" in message
    assert listener.received() == []
    failure = classify_failure(message, model=model)  # what the sidebar shows: one line, said once
    assert failure.message.startswith(f"{model.split('/')[0]} models may not use an api_base")
    assert "\n" not in failure.message


def test_litellm_swapping_in_a_key_of_its_own_is_refused(server_keys, monkeypatch):
    """A bare model name at a known provider's address: litellm would take that provider's key from the environment
    whatever key it is given; refused before anything is sent."""
    monkeypatch.setenv("GROQ_API_KEY", "gsk-server-FAKE-0123456789")
    client = LLMClient(LLMConfig(model="llama3", api_base="http://api.groq.com/openai/v1", cache_mode="off"))
    with pytest.raises(LLMError) as info:
        client.complete([{"role": "user", "content": "hi"}], task="ping", step="t", question="q")
    assert info.value.kind == "auth" and SUBSTITUTED in info.value.message and info.value.call.attempts == 0


def test_a_rejected_key_at_a_typed_api_base_says_what_to_do():
    failure = classify_failure("openai/m: auth: Incorrect API key provided [api_base http://127.0.0.1:9/v1]")
    assert failure.message == (
        "http://127.0.0.1:9/v1 did not accept the key: this server sends its own keys to no such api_base (the "
        "deployment setting key_endpoints); type a key for it in the sidebar's Model box (command line: "
        "$CONFLICTLENS_API_KEY), or leave api_base empty")


# -- chroma servers a page may name -------------------------------------------------------------------------------

@pytest.mark.parametrize("url, allowed", [
    (None, True), ("", True), ("  ", True),
    ("http://127.0.0.1:8000", True), ("127.0.0.1:8000", True), ("127.0.0.1", True), ("http://127.0.0.1:8000/", True),
    ("http://chroma.internal:8000", True), ("https://chroma.internal", False), ("http://127.0.0.1:8001", False),
    ("http://169.254.169.254", False), ("http://evil.net/127.0.0.1:8000", False), ("http://:80", False),
])
def test_chroma_servers_a_page_may_name(url, allowed):
    d = deployment.from_sources({"chroma_urls": ["chroma.internal"]}, {})
    assert d.allows_chroma(url, configured="http://127.0.0.1:8000") is allowed
    assert d.allows_chroma("http://127.0.0.1:8000") is False  # no configured one: listed servers only


# -- the app's sidebar (AppTest: the real script, in-process) ---------------------------------------------------------

APP = str(ROOT / "app.py")


@pytest.fixture
def app(server_keys, monkeypatch, _st_navigation_app):
    from streamlit.testing.v1 import AppTest

    monkeypatch.delenv("CONFLICTLENS_CHROMA_URL", raising=False)
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["methods"] = "no_rag"
    return at.run()


def test_the_sidebar_asks_for_a_key_for_a_typed_api_base_and_sends_only_it(app, listener, monkeypatch):
    from components.session import apikey

    at = app
    assert not at.exception, at.exception
    at.text_input(key="app.model").set_value("openai/gpt-4o-mini").run()
    assert not [t for t in at.text_input if t.key == apikey.KEY]  # no api_base: the provider's own endpoint
    at.text_input(key="app.api_base").set_value(listener.base).run()
    field = at.text_input(key=apikey.KEY)
    assert field.label == "API key for this api_base"
    assert any("This server's API keys are not sent to this api_base" in c.value for c in at.caption)
    at.button(key="app.test_connection").click().run()          # no key typed: a placeholder, none of the server's
    no_server_key(listener)
    listener.clear()
    field.set_value(TYPED).run()
    at.button(key="app.test_connection").click().run()
    assert not at.exception, at.exception
    no_server_key(listener)
    assert listener.carried(TYPED) == len(listener.received())
    selection = at.session_state["app.selection"]
    from components.session.runs import run_key

    for text in (repr(selection), repr(run_key(selection, ["no_rag"])), str(dict(at.query_params))):
        assert TYPED not in text
    # another api_base: the key typed for the first one is forgotten
    at.text_input(key="app.api_base").set_value(listener.base + "/other").run()
    assert at.text_input(key=apikey.KEY).value == ""
    # an api_base the settings allow: no field, the server's key goes
    allow(monkeypatch, listener.base)
    at.run()
    assert not [t for t in at.text_input if t.key == apikey.KEY]
    listener.clear()
    at.button(key="app.test_connection").click().run()
    assert listener.received() and listener.carried(OPENAI_KEY) == len(listener.received())


def test_the_sidebar_connects_to_no_chroma_server_the_settings_do_not_name(app, listener):
    from components.session.sidebar import CHROMA_REFUSED

    at = app
    url = listener.base.removesuffix("/v1")
    at.text_input(key="app.chroma_url").set_value(url).run()
    at.switch_page("pages/dataset.py").run()  # a page that opens the index
    assert not at.exception, at.exception
    assert CHROMA_REFUSED in [e.value for e in at.error]
    assert at.session_state["app.selection"].chroma_url is None and listener.received() == []
    assert url not in CHROMA_REFUSED
