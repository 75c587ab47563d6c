"""Issue 36, part 1: one URL, parsed once. An api_base (and a chroma or label-store URL) is read by the parser that
sends the request (httpx), refused when it holds whitespace, control characters, a user name, a backslash, a query, or
when urllib and httpx read it differently; the reply cache and the ``key_endpoints`` check use the canonical URL the
request goes to. Replies fetched with a typed key are kept for that key's holder; on a team server no page empties
the shared reply cache.

Two loopback listeners (``tests.security.listener``) stand in for an honest endpoint and one an analyst controls; each
records what it received, so every test says which server a request reached and what a later caller was served."""

from __future__ import annotations

import os
import secrets
import stat
import subprocess
import sys

import pytest

from backend import deployment
from backend.llm import urls
from backend.llm.client import LLMClient, LLMConfig, LLMError, default_cache
from backend.llm.failures import classify_failure
from backend.llm.holder import SECRET_FILE
from backend.llm.keys import ENV_API_KEY, PLACEHOLDER_KEY
from backend.paths import SAMPLE_DATA
from tests.app.conftest import _st_navigation_app  # noqa: F401  (a fixture: AppTest in st.navigation mode)
from tests.conftest import ROOT
from tests.security.listener import Listener

SERVER_KEY = f"sk-server-FAKE-{secrets.token_hex(12)}"
TYPED = f"sk-typed-FAKE-{secrets.token_hex(12)}"
OTHER_TYPED = f"sk-other-FAKE-{secrets.token_hex(12)}"
MODEL = "openai/gpt-4o-mini"
QUESTION = "Who designed the Velmora Bridge?"
MESSAGES = [{"role": "user", "content": f"Context: The Velmora Bridge was designed by Ingrid Haldane.\n"
                                        f"Question: {QUESTION}"}]


@pytest.fixture(autouse=True)
def server_key(monkeypatch):
    """The server's key in its environment; no setting allows any api_base (the default)."""
    deployment.reset()
    for name in (deployment.ENV_KEY_ENDPOINTS, ENV_API_KEY, "OPENAI_API_BASE", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    yield
    deployment.reset()


@pytest.fixture
def honest():
    with Listener(reply="HONEST-ANSWER") as srv:
        yield srv


@pytest.fixture
def poison():
    with Listener(reply="POISONED-ANSWER") as srv:
        yield srv


def port(srv: Listener) -> int:
    return int(srv.base.rsplit(":", 1)[1].split("/")[0])


def ask(cache, api_base: str, api_key: str | None = None):
    client = LLMClient(LLMConfig(model=MODEL, api_base=api_base, timeout_s=10, num_retries=0), cache=cache,
                       api_key=api_key)
    return client.complete(MESSAGES, task="keyword_answer", step="answer", question=QUESTION)


def paths(srv: Listener) -> list[str]:
    return [r.path for r in srv.received()]


# -- the two-parser URL: one analyst's endpoint never answers for another's -----------------------------------------

def test_the_two_parser_api_base_poisons_no_other_analysts_cache(tmp_path, honest, poison):
    """urllib read ``http://P:9903 /x@http://H/v1`` as H (its identity) while httpx sent it to P: a second analyst on H
    was served P's reply from the cache. Now it is refused before anything is sent, and H is asked."""
    cache = default_cache(tmp_path)
    crafted = f"http://127.0.0.1:{port(poison)} /x@{honest.base}"
    try:
        ask(cache, crafted)  # the first analyst
        refused = None
    except LLMError as err:
        refused = err
    second = ask(cache, honest.base)  # the second analyst, on the real endpoint
    assert (second.response, second.cache_hit) == ("HONEST-ANSWER", False)
    assert paths(honest) == ["/v1/chat/completions"] and poison.received() == []
    assert refused is not None and refused.kind == "bad_request" and crafted not in str(refused)
    failure = classify_failure(refused)
    assert failure.problem == "the api_base is refused: it holds whitespace or a control character"
    cache.close()


#: (variant, whether it is refused) — {H}: the honest listener's host:port, {P}: the other one's.
REFUSED_VARIANTS = [
    "http://{P} /x@http://{H}/v1",        # a space
    "http://{P}\t/x@http://{H}/v1",       # a tab (urllib drops it, httpx refuses it)
    "http://{P}\r\n@{H}/v1",              # CR/LF
    "http://{H}/v1\n",                    # a trailing newline
    "http://{H}@{P}/v1",                  # userinfo (httpx sends it as a Basic credential)
    "http://u:pw@{H}/v1",
    "http://{H}\\@{P}/v1",                # a backslash before the @
    "http://{H}/v1\\..\\..\\x",           # a backslash path
    "http://{H}/v1%2F..%2F..%2Fx",        # an encoded slash
    "http://{H}/v1?x=1",                  # a query: litellm appends its path after it
    "http://{H}/v1#f",
    "http://{H}\u200b/v1",                # a zero-width space
    "{H}/v1",                             # no scheme
    "http://127.0.0.1:99999/v1",          # a port urllib refuses and httpx takes
]


@pytest.mark.parametrize("variant", REFUSED_VARIANTS)
def test_a_refused_api_base_reaches_no_server_and_leaves_the_cache_to_its_owner(tmp_path, honest, poison, variant):
    cache = default_cache(tmp_path)
    api_base = variant.format(H=honest.base.removeprefix("http://").removesuffix("/v1"),
                              P=poison.base.removeprefix("http://").removesuffix("/v1"))
    with pytest.raises(LLMError, match="is refused") as err:
        ask(cache, api_base)
    assert err.value.kind == "bad_request" and "\n" not in str(err.value)
    assert honest.received() == [] and poison.received() == []
    assert ask(cache, honest.base).response == "HONEST-ANSWER" and len(honest.received()) == 1
    assert ask(cache, poison.base).response == "POISONED-ANSWER" and len(poison.received()) == 1
    cache.close()


#: (variant, the canonical URL it names) — sent there, keyed there.
SENT_VARIANTS = [
    ("http://{H}/v1/", "http://{H}/v1"),
    ("HTTP://{H}/v1", "http://{H}/v1"),
    ("http://{H}/x/../v1", "http://{H}/v1"),                    # dot segments
    ("http://{H}/v1/./", "http://{H}/v1"),
    ("http://{H}/x/%2e%2e/v1", "http://{H}/v1"),                # percent-encoded dots are dots
    ("http://{H}/x/%2E%2E/v1", "http://{H}/v1"),
    ("http://{H}/v1/../../x/v1", "http://{H}/x/v1"),            # above the root: stays at the root
    ("http://127.0.0.1.:{HP}/v1", "http://{H}/v1"),            # a trailing-dot host is the same host, sent without it
    ("http://LOCALHOST:{HP}/v1", "http://localhost:{HP}/v1"),  # a host is case-blind
]


@pytest.mark.parametrize("variant, canonical", SENT_VARIANTS)
def test_an_api_base_is_sent_to_and_cached_as_its_canonical_url(tmp_path, honest, poison, variant, canonical):
    cache = default_cache(tmp_path)
    where = dict(H=honest.base.removeprefix("http://").removesuffix("/v1"), HP=port(honest))
    api_base, canonical = variant.format(**where), canonical.format(**where)
    first = ask(cache, api_base)
    assert (first.response, first.cache_hit) == ("HONEST-ANSWER", False)
    assert paths(honest) == [urls.parse(canonical).path + "/chat/completions"]  # what the server received
    again = ask(cache, canonical)  # the same endpoint: the same cache entry
    assert (again.response, again.cache_hit) == ("HONEST-ANSWER", True) and len(honest.received()) == 1
    other = ask(cache, poison.base)  # another endpoint is asked, never answered from this one's entry
    assert (other.response, other.cache_hit) == ("POISONED-ANSWER", False) and len(poison.received()) == 1
    cache.close()


def test_an_idna_host_is_one_host_in_either_spelling():
    """httpx sends a non-ASCII host as IDNA: both spellings are one endpoint (no request: no such host on loopback)."""
    one, other = urls.parse("http://BÜCHER.example/v1/"), urls.parse("http://xn--bcher-kva.example:80/v1")
    assert one == other and one.canonical == "http://xn--bcher-kva.example:80/v1"
    assert one.url == "http://xn--bcher-kva.example/v1"
    assert urls.endpoint_hash("https://API.example.com/v1") == urls.endpoint_hash("https://api.example.com:443/v1")
    for bad in ("http://１２７.０.０.１:8000/v1", "http://ex\u202eample/v1", "http://127.0.0.1%2e/v1"):
        with pytest.raises(urls.BadURL, match="is refused"):
            urls.parse(bad)


# -- key_endpoints: the server's key goes where the canonical URL is allowed ------------------------------------------

@pytest.mark.parametrize("suffix", ["/../../x/v1", "/%2e%2e/%2e%2e/x/v1", "/./../x/v1"])
def test_dot_segments_do_not_carry_the_servers_key_outside_an_allowed_prefix(honest, monkeypatch, suffix):
    monkeypatch.setenv(deployment.ENV_KEY_ENDPOINTS, honest.base)  # http://127.0.0.1:P/v1 may get the server's key
    deployment.reset()
    ok, said, _ = LLMClient(LLMConfig(model=MODEL, api_base=honest.base + suffix, cache_mode="off", timeout_s=10,
                                      num_retries=0)).test_connection()
    assert ok, said
    [request] = honest.received()
    assert request.path == "/x/v1/chat/completions"  # where the request went: outside the prefix
    assert honest.carried(SERVER_KEY) == 0 and PLACEHOLDER_KEY in request.headers["authorization"]
    honest.clear()
    LLMClient(LLMConfig(model=MODEL, api_base=honest.base + "/x/../chat/..", cache_mode="off", timeout_s=10,
                        num_retries=0)).test_connection()  # inside it, however spelled: the rule is no blanket refusal
    assert honest.carried(SERVER_KEY) == 1


def test_key_endpoints_and_chroma_urls_that_would_be_refused_stop_the_settings_with_one_line():
    for table, setting in (({"key_endpoints": ["http://u:pw@127.0.0.1:9/v1"]}, "key_endpoints entry"),
                           ({"chroma_urls": ["http://127.0.0.1:8000 /x@evil:8000"]}, "chroma server"),
                           ({"label_store": "postgresql://db/lab\x00els"}, "label store URL")):
        with pytest.raises(deployment.DeploymentError) as err:
            deployment.from_sources(table, {})
        assert setting in str(err.value) and "is refused" in str(err.value) and "pw" not in str(err.value)
    d = deployment.from_sources({"chroma_urls": ["chroma.internal"]}, {})
    assert not d.allows_chroma("http://chroma.internal\t:8000") and d.allows_chroma("http://chroma.internal:8000")


def test_the_chroma_connection_reads_the_address_as_the_allow_list_does():
    from backend.retrieval import RetrievalError, _open_http

    for bad in ("http://127.0.0.1:9 /x@127.0.0.1:8000", "http://u:pw@127.0.0.1:9", "http://127.0.0.1:9\\@x"):
        with pytest.raises(RetrievalError, match="chroma server is refused"):
            _open_http(bad)


def test_a_label_store_url_with_a_control_character_is_refused():
    from backend.labels.store import LabelStoreError, store_url

    with pytest.raises(LabelStoreError, match="label store URL is refused"):
        store_url("postgresql://bob:pw@127.0.0.1:1/labels\x00")
    assert str(store_url("postgresql://bob:pw@127.0.0.1:1/labels").host) == "127.0.0.1"  # a password stays allowed


# -- a typed key's replies are its holder's --------------------------------------------------------------------------

def test_a_reply_fetched_with_a_typed_key_is_not_served_to_a_caller_without_it(tmp_path, honest):
    cache = default_cache(tmp_path)
    paid = ask(cache, honest.base, api_key=TYPED)
    assert (paid.response, paid.cache_hit) == ("HONEST-ANSWER", False) and honest.carried(TYPED) == 1
    keyless = ask(cache, honest.base)  # no key: asks the endpoint itself (with no key of anyone's)
    assert not keyless.cache_hit and len(honest.received()) == 2
    assert PLACEHOLDER_KEY in honest.received()[1].headers["authorization"]
    other = ask(cache, honest.base, api_key=OTHER_TYPED)  # another key: its own request too
    assert not other.cache_hit and len(honest.received()) == 3
    again = ask(cache, honest.base, api_key=f"  {TYPED} ")  # the holder: answered from the cache
    assert again.cache_hit and len(honest.received()) == 3
    assert ask(cache, honest.base).cache_hit  # the keyless caller's own reply is the keyless callers'
    stored = cache.path.read_bytes() + b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert TYPED.encode() not in stored and OTHER_TYPED.encode() not in stored
    secret = tmp_path / SECRET_FILE
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    cache.close()


# -- the app: the sidebar refuses such an api_base; a team server's page never empties the cache -----------------------

APP = str(ROOT / "app.py")


def _app(monkeypatch, tmp_path, secrets_tables: dict | None = None, user: dict | None = None):
    from streamlit.testing.v1 import AppTest

    monkeypatch.delenv("CONFLICTLENS_CHROMA_URL", raising=False)
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CONFLICTLENS_LABELS", str(tmp_path / "labels.db"))
    at = AppTest.from_file(APP, default_timeout=180)
    for name, table in (secrets_tables or {}).items():
        at.secrets[name] = table
    if user is not None:
        at.user = user
    at.query_params["methods"] = "no_rag"
    return at.run()


def test_the_sidebar_says_the_api_base_is_refused_and_sends_nothing(monkeypatch, tmp_path, honest, poison,
                                                                     _st_navigation_app):
    from components.session import apikey

    at = _app(monkeypatch, tmp_path)
    assert not at.exception, at.exception
    at.text_input(key="app.model").set_value(MODEL).run()
    at.text_input(key="app.api_base").set_value(f"http://127.0.0.1:{port(poison)} /x@{honest.base}").run()
    from components.safe import md

    assert md("the api_base is refused: it holds whitespace or a control character") in [e.value for e in at.error]
    assert not [t for t in at.text_input if t.key == apikey.KEY]  # no key asked for an address nothing is sent to
    at.button(key="app.test_connection").click().run()
    assert not at.exception, at.exception
    assert poison.received() == [] and honest.received() == []


AUTH = {"redirect_uri": "http://127.0.0.1:8501/oauth2callback", "cookie_secret": "x" * 32, "client_id": "cl",
        "client_secret": "not-a-real-secret",
        "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}
ALICE = {"is_logged_in": True, "email": "alice@example.org", "email_verified": True, "sub": "alice-sub",
         "name": "Alice", "iss": "http://127.0.0.1:9"}


@pytest.mark.parametrize("tables, user", [({"auth": AUTH}, ALICE),
                                          ({"deployment": {"max_file_mb": 100}}, None)],
                         ids=["sign-in", "deployment settings"])
def test_no_analyst_on_a_team_server_empties_the_shared_reply_cache(monkeypatch, tmp_path, tables, user,
                                                                     _st_navigation_app):
    from backend.llm.cache import CachedReply

    cache = default_cache(tmp_path / "cache")
    cache.put("k" * 64, MODEL, CachedReply("a reply someone paid for", 3, 1, 0.01))
    at = _app(monkeypatch, tmp_path, tables, user)
    assert not at.exception, at.exception
    at.switch_page("pages/calls.py").run()
    assert not at.exception, at.exception
    keys = {b.key for b in at.button}
    assert "calls.clear_cache" not in keys and "calls.confirm" not in keys
    assert "calls.clear_log" in keys  # the session's own call list is still the analyst's to clear
    assert any("python -m backend cache clear" in c.value for c in at.caption)
    assert cache.get("k" * 64) is not None
    # its operator clears it from the command line
    done = subprocess.run([sys.executable, "-m", "backend", "cache", "clear", "--cache-dir", str(tmp_path / "cache")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "CONFLICTLENS_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("deleted ") and cache.stats()["entries"] == 0 and cache.get("k" * 64) is None
    cache.close()


def test_the_command_line_refuses_such_an_api_base_with_one_line(tmp_path, honest, poison):
    done = subprocess.run([sys.executable, "-m", "backend", "inspect", "--dataset", str(SAMPLE_DATA / "ramdocs_dev"), "--question",
                           "ramdocs-0001", "--methods", "no_rag", "--model", MODEL, "--cache-dir", str(tmp_path),
                           "--api-base", f"http://127.0.0.1:{port(poison)} /x@{honest.base}"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip() == "error: the --api-base is refused: it holds whitespace or a control character"
    assert poison.received() == [] and honest.received() == []
