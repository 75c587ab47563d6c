"""Identities that cannot be claimed, and rounds only the deployment's leads set (issue 36, parts 3 and 4).

* A signed-in analyst is the provider's issuer and the account's subject, never the email claim: an account whose
  email claim says ``lead@example.org`` without ``email_verified`` (as Microsoft Entra ID sends none) is not the
  lead and gets no lead controls; the same subject at another issuer is another analyst. Checked on the claims
  ``oidc-provider-mock`` puts in real ID tokens, in the app (AppTest) and through Streamlit's own sign-in in Chromium.
* Who sets a round: when the deployment names leads, only they set or change one (the first one too, and on a new
  version of the dataset); on a server with sign-in that names none, nobody; the page shows those controls disabled
  and a forged click is refused by the store. ``labels round --as`` is held to the same rule and marked as set from
  the command line.
* Lead names compare exactly after NFC: no case folding, and look-alikes (Cyrillic ``а``, fullwidth letters,
  ``ß``/``ss``, the Kelvin sign) are other names.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime, timezone

import pytest
from streamlit.testing.v1 import AppTest

from backend import deployment
from backend.data import load_dataset
from backend.labels import LabelError, LabelStore
from backend.labels.identity import dataset_key
from backend.labels.team import Round, leads
from backend.paths import SAMPLE_DATA
from components.session.signin import identity_of
from tests.app.test_labels_page import write_results
from tests.browser.walk import patience
from tests.conftest import ROOT
from tests.security.conftest import keep_navigation_mode, write_auth_secrets
from tests.servers import free_port, stop_process

APP = str(ROOT / "app.py")
LEAD_EMAIL = "lead@example.org"
ISSUER = "http://127.0.0.1:9400"  # as oidc-provider-mock names itself
#: The lead's identity as this server stores it: her subject at the provider (backend.labels.analysts.analyst_id).
LEAD_SUB = "lead-sub"
AUTH = {"redirect_uri": "http://127.0.0.1:8501/oauth2callback", "cookie_secret": "x" * 32, "client_id": "cl",
        "client_secret": "not-a-real-secret",
        "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}
#: Mallory's claims: her own subject, the lead's email and name, no email_verified (Entra ID sends none).
MALLORY = {"is_logged_in": True, "iss": ISSUER, "sub": "mallory", "email": LEAD_EMAIL, "name": "Lea Lead"}
LEAD = {"is_logged_in": True, "iss": ISSUER, "sub": LEAD_SUB, "email": LEAD_EMAIL, "email_verified": True,
        "name": "Lea Lead"}
KEY = dataset_key(load_dataset(SAMPLE_DATA / "ramdocs_dev"))


def _lead_id() -> str:
    return identity_of(LEAD).analyst


@pytest.fixture(autouse=True)
def _fresh_settings(monkeypatch):
    """Each test starts from its own deployment settings (AppTest runs the app in this process, which configures
    them), and AppTest stays in st.navigation mode (as tests/security/test_signin.py)."""
    monkeypatch.delenv("CONFLICTLENS_LEADS", raising=False)
    deployment.reset()
    keep_navigation_mode(monkeypatch)
    yield
    deployment.reset()


def _name_leads(monkeypatch, *ids: str) -> None:
    monkeypatch.setenv("CONFLICTLENS_LEADS", ",".join(ids))
    deployment.reset()


# --- the identity --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("verified", [None, False, "false", "no"])
def test_an_account_claiming_the_leads_email_unverified_is_not_the_lead(verified):
    claims = dict(MALLORY) if verified is None else {**MALLORY, "email_verified": verified}
    who = identity_of(claims)
    assert who is not None and who.analyst != LEAD_EMAIL and who.analyst != _lead_id()
    assert LEAD_EMAIL not in who.analyst and LEAD_EMAIL not in who.shown  # not even shown as hers
    rnd = Round(dataset=KEY, number=1, overlap=2, lead=LEAD_EMAIL, set_by=LEAD_EMAIL, set_by_source="signed-in",
                created_at=datetime.now(timezone.utc))  # a round from when identities were emails
    assert not leads(rnd, who.analyst)


def test_a_verified_email_is_shown_but_is_not_the_identity():
    who = identity_of(LEAD)
    assert who.shown == f"Lea Lead ({LEAD_EMAIL})" and who.analyst != LEAD_EMAIL
    assert LEAD_SUB in who.analyst and "127.0.0.1" in who.analyst  # readable: the subject at the provider's host


@pytest.mark.parametrize("other", ["http://127.0.0.1:9401", "https://127.0.0.1:9400",
                                   "http://127.0.0.1:9400/realms/other"])
def test_the_same_subject_at_another_issuer_is_another_analyst(other):
    here, there = identity_of(LEAD), identity_of({**LEAD, "iss": other})
    assert there is not None and here.analyst != there.analyst


# --- real ID tokens from two providers (oidc-provider-mock on loopback) -------------------------------------

@contextlib.contextmanager
def _provider(folder):
    """``python -m oidc_provider_mock`` on a free loopback port, in its own process; its issuer URL."""
    folder.mkdir(parents=True, exist_ok=True)
    port, log = free_port(), folder / "provider.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1", "--port",
                                 str(port)], stdout=out, stderr=subprocess.STDOUT, cwd=folder)
    issuer = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30 * patience()
        while True:
            try:
                with urllib.request.urlopen(f"{issuer}/.well-known/openid-configuration", timeout=2) as answer:
                    if json.loads(answer.read())["issuer"] == issuer:
                        break
            except (OSError, ValueError, KeyError):
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"oidc-provider-mock did not start on {issuer}: {log.read_text(errors='replace')[-1500:]}")
            time.sleep(0.2)
        yield issuer
    finally:
        stop_process(proc)


def _id_token_claims(issuer: str, sub: str) -> dict:
    """The claims of the ID token ``issuer`` gives ``sub``, by the code flow Streamlit runs (its login form posted
    as a browser would): what ``st.user`` holds after a real sign-in, ``is_logged_in`` added as Streamlit does."""
    redirect = "http://127.0.0.1:1/oauth2callback"
    query = urllib.parse.urlencode({"client_id": "conflictlens", "redirect_uri": redirect, "response_type": "code",
                                    "scope": "openid email profile", "state": "s", "nonce": "n"})

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        opener.open(urllib.request.Request(f"{issuer}/oauth2/authorize?{query}",
                                           data=urllib.parse.urlencode({"sub": sub}).encode()), timeout=10)
        raise AssertionError("the provider did not redirect back with a code")
    except urllib.error.HTTPError as err:
        assert err.code in (301, 302, 303), err.code
        code = urllib.parse.parse_qs(urllib.parse.urlsplit(err.headers["Location"]).query)["code"][0]
    token = json.loads(urllib.request.urlopen(urllib.request.Request(
        f"{issuer}/oauth2/token", data=urllib.parse.urlencode({
            "grant_type": "authorization_code", "code": code, "redirect_uri": redirect, "client_id": "conflictlens",
            "client_secret": "s"}).encode()), timeout=10).read())
    payload = token["id_token"].split(".")[1]
    return {**json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))), "is_logged_in": True}


@pytest.fixture
def two_providers(tmp_path):
    with _provider(tmp_path / "a") as first, _provider(tmp_path / "b") as second:
        yield first, second


def test_real_id_tokens_the_leads_email_claimed_and_one_subject_at_two_providers(two_providers):
    first, second = two_providers
    for issuer in two_providers:  # at each provider: the lead, and an account claiming her email (not verified)
        assert _put(f"{issuer}/users/{LEAD_SUB}", {"email": LEAD_EMAIL, "email_verified": True}) == 204
        assert _put(f"{issuer}/users/mallory", {"email": LEAD_EMAIL, "name": "Lea Lead"}) == 204
    lead = identity_of(_id_token_claims(first, LEAD_SUB))
    mallory = identity_of(_id_token_claims(first, "mallory"))
    elsewhere = identity_of(_id_token_claims(second, LEAD_SUB))
    assert lead.analyst == identity_of({**LEAD, "iss": first}).analyst and lead.shown == LEAD_EMAIL
    assert mallory.analyst not in (LEAD_EMAIL, lead.analyst) and LEAD_EMAIL not in mallory.shown
    assert elsewhere.analyst != lead.analyst  # her subject at another provider is someone else


def _put(url: str, body: dict) -> int:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="PUT",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status


# --- who sets a round: the store -----------------------------------------------------------------------------

def test_with_named_leads_only_they_set_the_first_round_and_name_one_of_them_lead(tmp_path, monkeypatch):
    lead, mallory = _lead_id(), identity_of(MALLORY).analyst
    _name_leads(monkeypatch, lead)
    store = LabelStore(tmp_path / "labels.db")
    with pytest.raises(LabelError, match="only a lead this server's deployment names sets or changes a round"):
        store.set_round(KEY, 2, mallory, mallory, by_source="signed-in", expected=None)
    with pytest.raises(LabelError, match="only a lead this server's deployment names"):
        store.set_round(KEY, 2, LEAD_EMAIL, LEAD_EMAIL, by_source="signed-in")  # the old email identity
    with pytest.raises(LabelError, match="the round's lead must be one of the leads"):
        store.set_round(KEY, 2, mallory, lead, by_source="signed-in")
    assert store.rounds(KEY) == []
    rnd = store.set_round(KEY, 2, lead, lead, by_source="signed-in", expected=None)
    assert (rnd.lead, rnd.set_by, rnd.set_by_source) == (lead, lead, "signed-in")
    with pytest.raises(LabelError, match="only a lead this server's deployment names"):
        store.set_round(KEY, 3, mallory, mallory, by_source="signed-in", expected=1)


def test_a_new_version_of_the_dataset_does_not_reopen_the_first_round(tmp_path, monkeypatch):
    lead, mallory = _lead_id(), identity_of(MALLORY).analyst
    _name_leads(monkeypatch, lead)
    store = LabelStore(tmp_path / "labels.db")
    store.set_round(KEY, 2, lead, lead, by_source="signed-in")
    ds = load_dataset(SAMPLE_DATA / "ramdocs_dev")
    edited = ds.model_copy(update={"questions": [ds.questions[0].model_copy(update={"question": "Edited?"}),
                                                 *ds.questions[1:]]})
    new_key = dataset_key(edited)
    assert new_key != KEY and store.round(new_key) is None  # a new identity, no round yet
    with pytest.raises(LabelError, match="only a lead this server's deployment names"):
        store.set_round(new_key, 1, mallory, mallory, by_source="signed-in", expected=None)
    assert store.round(new_key) is None
    assert store.set_round(new_key, 2, lead, lead, by_source="signed-in").number == 1


def test_a_round_from_before_the_leads_were_named_gives_its_lead_nothing(tmp_path, monkeypatch):
    store = LabelStore(tmp_path / "labels.db")
    store.set_round(KEY, 2, "mallory", "mallory")  # self-appointed before the deployment named leads
    lead = _lead_id()
    _name_leads(monkeypatch, lead)
    assert not leads(store.round(KEY), "mallory")
    from backend.labels import LabelDraft

    with pytest.raises(LabelError, match="only the round's lead"):
        store.adjudicate(LabelDraft(dataset=KEY, question_id="ramdocs-0001", answers=["x"], analyst="mallory"), [])
    assert store.set_round(KEY, 3, lead, lead, by_source="signed-in").lead == lead  # a named lead takes over


# --- who sets a round: the page ------------------------------------------------------------------------------

def _label_page(user: dict, auth: dict | None = AUTH) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    if auth is not None:
        at.secrets["auth"] = auth
    at.user = user
    at.query_params.update({"methods": "no_rag"})
    at.run()
    assert not at.exception, at.exception
    at.switch_page("pages/labels.py").run()
    assert not at.exception, at.exception
    return at


def _round_controls(at, number: int):
    return (at.number_input(key=f"labels.round.overlap.{KEY}.{number}"),
            at.text_input(key=f"labels.round.lead.{KEY}.{number}"), at.button(key="labels.round.set"))


def _forged_click(at, button) -> None:
    """A click on a disabled button, as a crafted client could send it (AppTest, as a browser, refuses): the
    button's trigger in the next run's widget states, so its on_click runs."""
    states = at._tree.get_widget_states()
    state = states.widgets.add()
    state.id, state.trigger_value = button.proto.id, True
    at._run(states)
    assert not at.exception, at.exception


def _captions(at) -> str:
    return "\n".join(c.value for c in at.caption).replace("\\", "")


def test_an_account_claiming_the_leads_email_gets_no_lead_controls_on_the_page(db, monkeypatch):
    """Mallory claims the lead's email (unverified); the round was set when identities were emails, naming
    ``lead@example.org``; the deployment names the lead by her identity. Mallory is neither: every control of the
    round is disabled, a forged click is refused, and her label is stored under her own identity."""
    LabelStore(db).set_round(KEY, 2, LEAD_EMAIL, LEAD_EMAIL, by_source="signed-in")
    monkeypatch.setenv("CONFLICTLENS_LEADS", _lead_id())
    at = _label_page(MALLORY)
    sidebar = "\n".join(t.value for t in at.sidebar.text)
    assert LEAD_EMAIL not in sidebar and identity_of(MALLORY).analyst in sidebar
    overlap, lead, button = _round_controls(at, 1)
    assert overlap.disabled and lead.disabled and button.disabled
    assert "Only a lead this server names sets or changes a round." in _captions(at)
    _forged_click(at, button)  # the store refuses it
    assert [(r.number, r.lead) for r in LabelStore(db).rounds(KEY)] == [(1, LEAD_EMAIL)]
    next(w for w in at.multiselect if w.label == "Accepted answers").set_value(["Soccer"])
    at.button(key="labels.save").click().run()
    assert not at.exception, at.exception
    [label] = LabelStore(db).versions()
    assert label.analyst == identity_of(MALLORY).analyst != LEAD_EMAIL


def test_a_signed_in_analyst_who_is_not_a_named_lead_cannot_set_the_first_round(db, monkeypatch):
    monkeypatch.setenv("CONFLICTLENS_LEADS", _lead_id())
    at = _label_page(MALLORY)
    overlap, lead, button = _round_controls(at, 0)
    assert button.disabled and overlap.disabled and lead.disabled
    _forged_click(at, button)
    assert LabelStore(db).rounds(KEY) == []
    # the named lead (signed in) sets it from the same page
    at = _label_page(LEAD)
    overlap, lead, button = _round_controls(at, 0)
    assert not button.disabled and lead.value == _lead_id()
    overlap.set_value(2)
    _forged_click(at, button)  # as the refused clicks above were sent: it is the rule that refused them
    [rnd] = LabelStore(db).rounds(KEY)
    assert (rnd.overlap, rnd.lead, rnd.set_by, rnd.set_by_source) == (2, _lead_id(), _lead_id(), "signed-in")


def test_with_sign_in_and_no_named_leads_nobody_sets_a_round(db):
    at = _label_page(LEAD)
    assert _round_controls(at, 0)[2].disabled
    assert "This server names no leads, so nobody sets a round here" in _captions(at)
    _forged_click(at, _round_controls(at, 0)[2])
    assert LabelStore(db).rounds(KEY) == []


# --- labels round --as -----------------------------------------------------------------------------------------

def _cli(env: dict, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "backend", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env={**os.environ, **env})


def test_labels_round_as_must_be_a_named_lead_and_is_marked_command_line(tmp_path):
    db, lead = tmp_path / "labels.db", _lead_id()
    env = {"CONFLICTLENS_LEADS": lead, "CONFLICTLENS_LABELS": str(db)}
    ds = SAMPLE_DATA / "ramdocs_dev"
    refused = _cli(env, "labels", "round", "--dataset", ds, "--overlap", "2", "--lead", "mallory", "--as", "mallory")
    assert refused.returncode == 2 and "only a lead this server's deployment names" in refused.stderr
    assert not db.exists() or LabelStore(db).rounds(KEY) == []
    done = _cli(env, "labels", "round", "--dataset", ds, "--overlap", "2", "--lead", lead, "--as", lead)
    assert done.returncode == 0, done.stderr
    [rnd] = LabelStore(db).rounds(KEY)
    assert (rnd.lead, rnd.set_by, rnd.set_by_source) == (lead, lead, "command-line")


# --- names compare exactly -------------------------------------------------------------------------------------

def _round(lead: str) -> Round:
    return Round(dataset=KEY, number=1, overlap=2, lead=lead, set_by=lead, created_at=datetime.now(timezone.utc))


@pytest.mark.parametrize("lead, claimed", [
    ("ana", "\u0430na"),            # Cyrillic а
    ("ana", "\uff41\uff4e\uff41"),  # fullwidth ａｎａ (NFKC would fold it)
    ("strasse", "stra\u00dfe"),      # ß is not ss (case folding would match them)
    ("Kelvin", "\u212aelvin"),      # the Kelvin sign (NFC and case folding turn it into K / k)
    ("ana", "ANA"),                 # no case folding
    ("\u2126mega", "\u03a9mega"),   # the Ohm sign is not Ω
])
def test_a_look_alike_is_not_the_lead(lead, claimed):
    assert not leads(_round(lead), claimed)
    assert not leads(_round(claimed), lead)


@pytest.mark.parametrize("lead, claimed", [("ana", " ana "), ("Jos\u00e9", "Jose\u0301")])
def test_the_same_name_spelled_canonically_alike_is_the_lead(lead, claimed):
    assert leads(_round(lead), claimed)


def test_named_leads_compare_as_exactly(monkeypatch):
    _name_leads(monkeypatch, "ana@idp.example.org")
    assert leads(_round("ana@idp.example.org"), " ana@idp.example.org ")
    assert not leads(_round("ANA@idp.example.org"), "ANA@idp.example.org")  # named as ana, not ANA


# --- through Streamlit's own sign-in, in Chromium ---------------------------------------------------------------

@pytest.fixture
def claimed_team_app(tmp_path):
    """The app with sign-in against oidc-provider-mock, the deployment naming the lead by her identity
    ($CONFLICTLENS_LEADS), and a store holding a round from when identities were emails (lead ``lead@example.org``).
    Yields the app's URL, the issuer, the store."""
    from tests.browser.conftest import app_server

    with _provider(tmp_path / "provider") as issuer:
        assert _put(f"{issuer}/users/{LEAD_SUB}", {"email": LEAD_EMAIL, "email_verified": True}) == 204
        # mallory's account claims the lead's email, and sends no email_verified (as Entra ID)
        assert _put(f"{issuer}/users/mallory", {"email": LEAD_EMAIL, "name": "Lea Lead"}) == 204
        home, cache, db = tmp_path / "home", tmp_path / "cache", tmp_path / "labels.db"
        write_results(cache / "evaluations" / "ramdocs_dev-test")
        LabelStore(db).set_round(KEY, 2, LEAD_EMAIL, LEAD_EMAIL, by_source="signed-in")
        port = free_port()
        write_auth_secrets(home, port, issuer)
        lead = identity_of({**LEAD, "iss": issuer}).analyst
        env = {**os.environ, "HOME": str(home), "CONFLICTLENS_CACHE_DIR": str(cache),
               "CONFLICTLENS_DATA_DIR": str(tmp_path / "data"), "CONFLICTLENS_LABELS": str(db),
               "CONFLICTLENS_LEADS": lead, "PYTHONPATH": str(ROOT)}
        with app_server(env, log=tmp_path / "app.log", port=port) as url:
            yield url, issuer, db


@pytest.mark.browser
@pytest.mark.slow
def test_signing_in_with_the_leads_email_unverified_gives_no_lead_controls(claimed_team_app, browser):
    from tests.browser.walk import ms, screenshot, wait_until

    url, issuer, db = claimed_team_app
    mallory = identity_of({**MALLORY, "iss": issuer}).analyst
    context = browser.new_context(viewport={"width": 1400, "height": 1600})
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(
        ("data:", "blob:", "about:", "http://127.0.0.1")) else route.abort())
    page = context.new_page()
    try:
        page.goto(url, timeout=ms(60))
        page.get_by_role("button", name="Sign in", exact=True).click()
        sub = page.get_by_placeholder("sub")
        wait_until(page, sub, "the provider's login form")
        sub.fill("mallory")
        page.get_by_role("button", name="Authorize", exact=True).click()
        sidebar = page.get_by_test_id("stSidebar")
        wait_until(page, sidebar.get_by_text("Signed in as Lea Lead", exact=True), "the signed-in name")
        assert LEAD_EMAIL not in sidebar.inner_text()  # the unverified email is not shown as hers
        assert sidebar.get_by_text(mallory, exact=True).count()  # she is her own subject at this provider

        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Label", exact=True).click()
        wait_until(page, "Save & next")
        page.get_by_text("2 analysts label each case", exact=False).first.click()  # the round's expander
        wait_until(page, "Only a lead this server names sets or changes a round.")
        assert page.get_by_role("button", name="Set round").is_disabled()
        assert page.get_by_role("spinbutton", name="Analysts per case").is_disabled()
        screenshot(page, "identity-claims", "no-lead-controls")

        page.get_by_role("textbox", name="Other accepted answers, one per line").fill("Football")
        page.get_by_role("button", name="Save & next").click()
        wait_until(page, lambda p: "case=ramdocs-0002" in p.url, "the next case (the label saved)")
        [label] = LabelStore(db).versions()
        assert (label.analyst, label.analyst_source) == (mallory, "signed-in")
        assert [(r.number, r.lead) for r in LabelStore(db).rounds(KEY)] == [(1, LEAD_EMAIL)]
    except BaseException:
        screenshot(page, "identity-claims", "failed")
        raise
    finally:
        context.close()
