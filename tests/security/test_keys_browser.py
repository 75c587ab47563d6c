"""Issue 26, finding 1, in Chromium: a real ``streamlit run`` with the server's key in ``~/.streamlit/secrets.toml``
(under a temporary HOME) and no setting allowing any api_base. A user types ``openai/…`` and the api_base of a
loopback listener, presses Test connection and Run: the listener never sees the server's key. In a second session
the user types a key of their own in "API key for this api_base": the listener sees that key, and still never the
server's."""

from __future__ import annotations

import os
import secrets

import pytest

from backend import deployment
from backend.data import load_dataset
from backend.llm.keys import PLACEHOLDER_KEY
from backend.paths import SAMPLE_DATA
from tests.browser.conftest import app_server
from tests.browser.walk import accept_unknown_price, ms, use_model, wait_until
from tests.security.listener import Listener

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SERVER_KEY = f"sk-server-FAKE-{secrets.token_hex(12)}"
TYPED = f"sk-typed-FAKE-{secrets.token_hex(12)}"


def _connection_and_run(page, url: str, question: str, listener: Listener, typed: str | None) -> None:
    """Test connection, then Run two methods, on ``openai/m`` at the listener; ``typed``: the key typed first."""
    page.goto(f"{url}/?dataset=ramdocs_dev&question={question}&methods=no_rag,vanilla_rag", timeout=ms(90))
    sidebar = page.get_by_test_id("stSidebar")
    wait_until(page, sidebar.get_by_text("Question (100)"))
    use_model(page, "openai/m", listener.base)
    field = sidebar.get_by_role("textbox", name="API key for this api_base", exact=True)  # asked for: the server's keys do not go there
    wait_until(page, field)
    wait_until(page, sidebar.get_by_text("This server's API keys are not sent to this api_base"))
    if typed:
        field.fill(typed)
        field.press("Enter")
    sidebar.get_by_role("button", name="Test connection").click()
    wait_until(page, sidebar.get_by_text("Connected in"))
    assert listener.received(), "Test connection sent nothing to the listener"
    tested = len(listener.received())
    wait_until(page, "Press Run")
    accept_unknown_price(page)
    page.get_by_role("button", name="Run", exact=True).click()
    wait_until(page, lambda p: p.evaluate("() => { const t = document.body.innerText; "
                                          "return t.includes('Vanilla RAG') && !t.includes('Press Run') "
                                          "&& !t.includes('running…'); }"), "both methods' results")
    assert len(listener.received()) > tested, "Run sent nothing to the listener"
    shown = page.inner_text("body")
    for key in (SERVER_KEY, TYPED):
        assert key not in shown


def test_the_servers_key_never_reaches_a_typed_api_base(tmp_path, browser):
    home = tmp_path / "home"
    (home / ".streamlit").mkdir(parents=True)
    (home / ".streamlit" / "secrets.toml").write_text(f'OPENAI_API_KEY = "{SERVER_KEY}"\n')
    env = {k: v for k, v in os.environ.items()
           if not k.upper().endswith(("_API_KEY", "_TOKEN")) and k != deployment.ENV_KEY_ENDPOINTS}
    env |= {"HOME": str(home), "CONFLICTLENS_CACHE_DIR": str(tmp_path / "cache"),
            "CONFLICTLENS_DATA_DIR": str(tmp_path / "data")}
    questions = load_dataset(SAMPLE_DATA / "ramdocs_dev").questions
    with Listener() as listener, app_server(env, log=tmp_path / "app.log") as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            _connection_and_run(page, url, questions[2].id, listener, typed=None)
            untyped = listener.received()
            listener.clear()
            page.close()
            page = browser.new_page(viewport={"width": 1400, "height": 1000})  # another session
            _connection_and_run(page, url, questions[3].id, listener, typed=TYPED)
            typed = listener.received()
        finally:
            page.close()
    assert not any(SERVER_KEY in r.raw() for r in untyped + typed), "the server's key reached a typed api_base"
    assert all(r.headers.get("authorization") == f"Bearer {PLACEHOLDER_KEY}" for r in untyped)
    assert all(r.headers.get("authorization") == f"Bearer {TYPED}" for r in typed)
    assert SERVER_KEY not in (tmp_path / "app.log").read_text() and TYPED not in (tmp_path / "app.log").read_text()
