"""Sign-in for teams, without a browser: the identity taken from ``st.user``'s claims, a half-written ``[auth]`` table,
and the app (AppTest) with and without ``[auth]``: a visitor who is not signed in gets the sign-in page and nothing
else (no sidebar, no dataset, no page, whatever page the link names); a signed-in analyst's labels carry the
identity, not a typed name; without ``[auth]`` the sidebar and the typed, self-declared name stay as before.
The real sign-in through an OpenID Connect provider in Chromium: ``test_signin_browser.py``."""

from __future__ import annotations

import csv
import io
import json

import pytest
from streamlit.testing.v1 import AppTest

from backend.labels import LabelStore
from components.labels import export_bytes
from components.session.signin import Identity, identity_of, missing_settings
from tests.conftest import ROOT
from tests.security.conftest import keep_navigation_mode

APP = str(ROOT / "app.py")
AUTH = {"redirect_uri": "http://127.0.0.1:8501/oauth2callback", "cookie_secret": "x" * 32, "client_id": "cl",
        "client_secret": "not-a-real-secret",
        "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}
ISSUER = "https://idp.example.org"
ALICE = {"is_logged_in": True, "iss": ISSUER, "email": "alice@example.org", "email_verified": True,
         "sub": "alice-sub", "name": "Alice"}
ALICE_ID = "alice-sub@idp.example.org"  # her issuer and subject (backend.labels.analysts.analyst_id)


@pytest.fixture(autouse=True)
def _st_navigation_app(monkeypatch):
    """AppTest in st.navigation mode (conftest.keep_navigation_mode)."""
    keep_navigation_mode(monkeypatch)


def _app(auth: dict | None, user: dict | None = None, query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    if auth is not None:
        at.secrets["auth"] = auth
    if user is not None:
        at.user = user
    at.query_params.update({"methods": "no_rag", **(query or {})})
    return at.run()


def _saved(at, db) -> list:
    """Every label version in the store the page used (a refused save: the page's errors say why)."""
    labels = LabelStore(db).versions()
    assert labels, [e.value for e in at.error]
    return labels


def _texts(at) -> str:
    return "\n".join([t.value for t in at.text] + [m.value for m in at.markdown] + [t.value for t in at.title])


# --- the identity ----------------------------------------------------------------------------------------------

def test_the_analyst_is_the_issuer_and_subject_and_the_email_is_shown_only_when_verified():
    assert identity_of(ALICE) == Identity(analyst=ALICE_ID, shown="Alice (alice@example.org)")
    bob = {"is_logged_in": True, "iss": ISSUER, "sub": "b1", "email": "bob@example.org", "email_verified": "true"}
    assert identity_of(bob) == Identity("b1@idp.example.org", "bob@example.org")
    assert identity_of({"is_logged_in": True, "iss": ISSUER, "sub": "1234", "name": "Carol"}) == Identity(
        "1234@idp.example.org", "Carol")
    # an email the provider has not verified (false, or not said: Entra ID) is anyone's to claim: never shown
    for unverified in ({"email_verified": False}, {"email_verified": None}, {"email_verified": "yes"}, {}):
        claims = {k: v for k, v in ALICE.items() if k != "email_verified"} | unverified
        assert identity_of(claims) == Identity(ALICE_ID, "Alice")
        assert identity_of({**claims, "name": ""}) == Identity(ALICE_ID, ALICE_ID)
    assert identity_of({"is_logged_in": True, "email": "dan@example.org", "name": "Dan"}) is None  # no iss, sub
    assert identity_of({"is_logged_in": True, "iss": ISSUER, "sub": " "}) is None
    assert identity_of({"is_logged_in": False, "iss": ISSUER, "sub": "eve"}) is None  # claims without a sign-in
    assert identity_of({}) is None


def test_a_half_written_auth_table_is_named_key_by_key():
    assert missing_settings(AUTH) == []
    assert missing_settings({"client_id": "x"}) == ["redirect_uri", "cookie_secret", "client_secret",
                                                    "server_metadata_url"]
    named = {"redirect_uri": "u", "cookie_secret": "s", "corp": {"client_id": "x", "server_metadata_url": "m"}}
    assert missing_settings(named) == ["corp.client_secret"]


# --- the app with [auth] ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("query, page", [({}, "pages/inspect.py"), ({"dataset": "ramdocs_dev"}, "pages/debate.py"),
                                         ({"dataset": "file:/etc/passwd"}, "pages/labels.py")])
def test_a_visitor_not_signed_in_sees_the_sign_in_page_only(db, query, page):
    at = _app(AUTH, {}, query)
    assert not at.exception, at.exception
    with pytest.raises(ValueError):  # the sign-in page is the only page the navigation holds (a deep link: browser)
        at.switch_page(page)
    assert [t.value for t in at.title] == ["ConflictLens"]
    assert [b.label for b in at.button] == ["Sign in"]
    assert not at.sidebar.children or not any(at.sidebar.get(kind) for kind in ("selectbox", "text_input", "button"))
    assert not at.selectbox and not at.text_input and not at.tabs and not at.dataframe
    assert "Signed in as" not in _texts(at)
    assert "app.selection" not in at.session_state  # the sidebar never ran: no dataset was loaded
    assert not [k for k in at.session_state if k.startswith(("app.", "labels.", "debate."))]


def test_a_half_written_auth_table_stops_the_app_with_one_line(db):
    at = _app({"client_id": "cl", "client_secret": "do-not-show-me"}, {})
    assert not at.exception, at.exception
    [error] = at.error
    assert error.value == ("This server's sign-in is not set up: [auth] in .streamlit/secrets.toml lacks "
                           "redirect_uri, cookie_secret, server_metadata_url. Whoever runs the server fixes it.")
    assert not at.button and not at.selectbox


def test_a_signed_in_analyst_labels_as_their_identity(db):
    at = _app(AUTH, ALICE)
    assert not at.exception, at.exception
    sidebar = [t.value for t in at.sidebar.text]
    assert "Signed in as Alice (alice@example.org)" in sidebar
    assert any(b.label == "Sign out" for b in at.sidebar.button)
    assert at.sidebar.selectbox  # the app itself, as before
    at.switch_page("pages/labels.py").run()
    assert not at.exception, at.exception
    assert not [w for w in at.text_input if w.label == "Your name"]  # no name to type
    assert ALICE_ID in [t.value for t in at.text]
    assert "Enter your name above" not in "\n".join(c.value for c in at.caption)
    next(w for w in at.multiselect if w.label == "Accepted answers").set_value(["Soccer"])
    at.button(key="labels.save").click().run()
    assert not at.exception, at.exception
    [label] = _saved(at, db)
    assert (label.analyst, label.analyst_source) == (ALICE_ID, "signed-in")
    csv_text = export_bytes([label], "csv").decode()
    assert next(csv.DictReader(io.StringIO(csv_text)))["analyst_source"] == "signed-in"
    at.button(key="labels.previous").click().run()  # back to the labelled case: its history says signed in
    history = next(f.value for f in at.dataframe if "when (UTC)" in f.value.columns)
    assert list(history["analyst from"]) == ["signed-in"]


# --- the app without [auth] -------------------------------------------------------------------------------------

def test_without_auth_the_app_and_the_typed_name_stay_as_before(db):
    at = _app(None)
    assert not at.exception, at.exception
    assert at.sidebar.selectbox and "Signed in as" not in _texts(at)
    assert not any(b.label in ("Sign in", "Sign out") for b in at.button)
    at.switch_page("pages/labels.py").run()
    assert not at.exception, at.exception
    name = at.text_input(key="labels.analyst")
    assert name.label == "Your name" and "Self-declared" in name.help
    assert "Enter your name above to save labels." in [c.value for c in at.caption]
    name.input("Ann")
    next(w for w in at.multiselect if w.label == "Accepted answers").set_value(["Soccer"])
    at.button(key="labels.save").click().run()
    assert not at.exception, at.exception
    [label] = _saved(at, db)
    assert (label.analyst, label.analyst_source) == ("Ann", "self-declared")
    # the exports say so (export_bytes: what the page's download buttons send)
    row = next(csv.DictReader(io.StringIO(export_bytes([label], "csv").decode())))
    assert (row["analyst"], row["analyst_source"]) == ("Ann", "self-declared")
    assert json.loads(export_bytes([label], "jsonl"))["analyst_source"] == "self-declared"
