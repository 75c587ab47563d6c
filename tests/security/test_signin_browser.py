"""Sign-in for teams in Chromium, against a real OpenID Connect provider (oidc-provider-mock) started on loopback by
the test: ``[auth]`` in a temporary ``~/.streamlit/secrets.toml`` names it, Streamlit's own st.login does the code
flow. A visitor who is not signed in sees the sign-in page only, whatever the link (a deep link to /debate with a
dataset too); alice signs in through the provider's own login form; the sidebar says who is signed in; the label
she saves on the Label page carries her identity (read back from the label store the app used); Sign out ends
the session at the provider and brings the sign-in page back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from urllib.parse import quote, urlsplit

import pytest

from backend.labels import LabelStore
from backend.labels.analysts import analyst_id
from tests.app.test_labels_page import write_results
from tests.browser.conftest import app_server
from tests.browser.walk import ms, patience, screenshot, wait_until
from tests.conftest import ROOT
from tests.security.conftest import write_auth_secrets
from tests.servers import free_port, stop_process

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ALICE = "alice@example.org"


def _get(url: str, timeout: float = 2) -> bytes:
    return urllib.request.urlopen(url, timeout=timeout).read()


def _put_json(url: str, body: dict) -> int:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="PUT",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status


@pytest.fixture
def provider(tmp_path):
    """``python -m oidc_provider_mock`` on a free loopback port (its own process, as an admin's provider would be);
    yields its issuer URL. It cannot start: the test fails saying why."""
    try:
        import oidc_provider_mock  # noqa: F401
    except ImportError as err:
        pytest.fail(f"oidc-provider-mock is not installed ({err}); `pip install -r requirements.txt` installs it")
    port, log = free_port(), tmp_path / "provider.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1", "--port",
                                 str(port)], stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path)
    issuer = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30 * patience()
    while True:
        try:
            if json.loads(_get(f"{issuer}/.well-known/openid-configuration"))["issuer"] == issuer:
                break
        except (OSError, ValueError, KeyError):
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_process(proc)
            pytest.fail(f"the OpenID Connect provider (oidc-provider-mock) did not start on {issuer}: "
                        f"{log.read_text(errors='replace')[-1500:]}")
        time.sleep(0.2)
    try:
        yield issuer
    finally:
        stop_process(proc)


@pytest.fixture
def team_app(tmp_path, provider):
    """The app with sign-in: [auth] in a temporary HOME's .streamlit/secrets.toml naming the provider, a cache folder
    holding one evaluation run (the Label page's queue), and a label store in tmp_path."""
    home, cache, data, db = tmp_path / "home", tmp_path / "cache", tmp_path / "data", tmp_path / "labels.db"
    write_results(cache / "evaluations" / "ramdocs_dev-test")
    port = free_port()
    write_auth_secrets(home, port, provider)
    env = {**os.environ, "HOME": str(home), "CONFLICTLENS_CACHE_DIR": str(cache), "CONFLICTLENS_DATA_DIR": str(data),
           "CONFLICTLENS_LABELS": str(db), "PYTHONPATH": str(ROOT)}
    with app_server(env, log=tmp_path / "app.log", port=port) as url:
        yield url, provider, db


def _loopback(url: str) -> bool:
    return url.startswith(("data:", "blob:", "about:")) or urlsplit(url).hostname in ("127.0.0.1", "localhost")


def _sign_in_page_only(page) -> None:
    """The sign-in page, and nothing of the app: no sidebar pickers, no page, no dataset."""
    wait_until(page, page.get_by_role("button", name="Sign in", exact=True), "the Sign in button")
    wait_until(page, page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]'), "the run's end")
    main = page.get_by_test_id("stMain").inner_text()
    assert "ConflictLens" in main and "sign in" in main.lower()
    for absent in ("Debate", "Question (", "ramdocs", "Dataset", "Signed in as"):
        assert absent not in main, absent
    sidebar = page.get_by_test_id("stSidebar")
    assert not sidebar.count() or not sidebar.get_by_role("combobox").count(), "the sidebar's pickers are shown"
    assert not page.get_by_test_id("stSidebarNav").count(), "the pages' navigation is shown"


def test_sign_in_label_as_the_signed_in_identity_and_sign_out(team_app, browser):
    url, provider, db = team_app
    # her claims at the provider: a verified email (shown); she is stored as her subject at this issuer
    assert _put_json(f"{provider}/users/{quote(ALICE)}", {"email": ALICE, "email_verified": True}) == 204
    alice_id = analyst_id(provider, ALICE)
    context = browser.new_context(viewport={"width": 1400, "height": 1600})
    context.route("**/*", lambda route: route.continue_() if _loopback(route.request.url) else route.abort())
    page = context.new_page()
    try:
        # a deep link, on a fresh server, before anyone signed in: the sign-in page only
        page.goto(f"{url}/debate?dataset=ramdocs_dev&question=ramdocs-0004", timeout=ms(60))
        _sign_in_page_only(page)
        screenshot(page, "signin", "deep-link")
        page.goto(url, timeout=ms(60))
        _sign_in_page_only(page)

        # sign in through the provider's own login form
        page.get_by_role("button", name="Sign in", exact=True).click()
        sub = page.get_by_placeholder("sub")
        wait_until(page, sub, "the provider's login form")
        assert page.url.startswith(provider), page.url
        sub.fill(ALICE)
        page.get_by_role("button", name="Authorize", exact=True).click()
        sidebar = page.get_by_test_id("stSidebar")
        wait_until(page, sidebar.get_by_text(f"Signed in as {ALICE}", exact=True), "the signed-in identity")
        assert page.url.startswith(url), page.url
        wait_until(page, sidebar.get_by_text("Question (100)"), "the sidebar's pickers")

        # a label saved on the Label page carries the identity: no name to type
        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Label", exact=True).click()
        wait_until(page, "Save & next")
        assert not page.get_by_role("textbox", name="Your name").count()
        assert page.get_by_text(alice_id, exact=True).count()
        typed = page.get_by_role("textbox", name="Other accepted answers, one per line")
        typed.fill("Football")
        page.get_by_role("button", name="Save & next").click()
        wait_until(page, lambda p: "case=ramdocs-0002" in p.url, "the next case (the label saved)")
        screenshot(page, "signin", "labelled")
        [label] = LabelStore(db).versions()
        assert (label.question_id, label.answers, label.analyst, label.analyst_source) == (
            "ramdocs-0004", ["Football"], alice_id, "signed-in")

        # sign out: the provider ends its session, and the sign-in page is back (the identity cookie gone)
        sidebar.get_by_role("button", name="Sign out").click()
        end = page.get_by_role("button", name="End session")
        wait_until(page, lambda p: p.url.startswith(provider) and end.count() or p.url.startswith(url)
                   and p.get_by_role("button", name="Sign in", exact=True).count(), "the provider's sign-out")
        if page.url.startswith(provider):
            end.click()
        _sign_in_page_only(page)
        screenshot(page, "signin", "signed-out")
        page.goto(f"{url}/labels?dataset=ramdocs_dev", timeout=ms(60))
        _sign_in_page_only(page)
    except BaseException:
        screenshot(page, "signin", "failed")
        raise
    finally:
        context.close()
