"""Uploads on a team server (issue 36): Streamlit's upload endpoint (``PUT /_stcore/upload_file/<session>/<file>``)
takes a file only for a session the app let in (signed in, with ``[auth]``), and refuses the others with 401 before
their body is read; the endpoint's size cap is the project's; the server's copies of an uploaded file are freed once
the app has kept it on disk; the uploads folder has a quota and an age limit; a link to an uploaded dataset is its
``upload:<hash>``, never a ``file:`` server path.

The server tests run a real ``streamlit run app.py`` on loopback with ``[auth]`` in a temporary HOME's secrets, and
talk to it as any client may (``tests/security/stclient.py``): its own XSRF token, the websocket, the upload PUT. The
signed-in session carries the sign-in cookie Streamlit's own /oauth2callback sets, signed with the test's
cookie_secret (the sign-in flow itself, through a real provider, is ``test_signin_browser.py``'s)."""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import time
import tomllib

import httpx
import pytest

from backend import deployment, uploads
from backend.schema import Dataset
from components import evaluate as view
from tests.browser.conftest import app_server
from tests.browser.walk import ms, patience, wait_until
from tests.conftest import FIXTURES, ROOT
from tests.security import stclient
from tests.servers import free_port

GOOD = (FIXTURES / "good" / "no_ids.jsonl").read_bytes()
MB = 1024 * 1024


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path / "cache"))
    deployment.reset()
    yield tmp_path / "cache"
    deployment.reset()


def _held_by_streamlit(url: str) -> int:
    """Bytes Streamlit's UploadedFileManager holds, from the server's own metrics (0 when it holds no file)."""
    text = httpx.get(f"{url}/_stcore/metrics", timeout=10).text
    found = re.search(r'^cache_memory_bytes\{cache_type="UploadedFileManager"[^}]*\}\s+(\d+)', text, re.M)
    return int(found.group(1)) if found else 0


def _wait_for(condition, what: str, seconds: float = 60):
    deadline = time.monotonic() + seconds * patience()
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.5)


@pytest.fixture
def team_server(tmp_path):
    """The app with [auth] (a provider that is never reached: the signed-in session brings its cookie); yields its
    URL and the cookie secret."""
    home, port, cookie_secret = tmp_path / "home", free_port(), secrets.token_hex(32)
    (home / ".streamlit").mkdir(parents=True)
    (home / ".streamlit" / "secrets.toml").write_text(
        "[auth]\n"
        f'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        f'cookie_secret = "{cookie_secret}"\n'
        'client_id = "conflictlens"\n'
        'client_secret = "not-used"\n'
        'server_metadata_url = "http://127.0.0.1:9/.well-known/openid-configuration"\n')
    env = {**os.environ, "HOME": str(home), "CONFLICTLENS_CACHE_DIR": str(tmp_path / "cache"),
           "CONFLICTLENS_DATA_DIR": str(tmp_path / "data"), "CONFLICTLENS_LABELS": str(tmp_path / "labels.db"),
           "PYTHONPATH": str(ROOT)}
    with app_server(env, log=tmp_path / "app.log", port=port) as url:
        yield url, cookie_secret


@pytest.mark.slow
def test_an_upload_without_sign_in_is_refused_before_its_body_is_read(team_server):
    url, cookie_secret = team_server
    with stclient.session(url) as (session_id, jar):  # a visitor on the sign-in page
        refused = stclient.put_file(url, session_id, jar, GOOD)
        assert refused.status_code == 401, (refused.status_code, refused.text)
        # 150 MB announced, 64 KB sent: the answer comes before the rest (nothing of it is buffered)
        status, sent = stclient.answer_before_body(url, session_id, jar, 150 * MB)
        assert status == 401 and sent < MB, (status, sent)
        assert _held_by_streamlit(url) == 0

    claims = {"iss": "http://127.0.0.1:9", "sub": "ana", "email": "ana@example.org", "email_verified": True}
    signed_in = {stclient.USER_COOKIE: stclient.user_cookie(url, cookie_secret, claims)}
    with stclient.session(url, signed_in) as (session_id, jar):
        taken = stclient.put_file(url, session_id, jar, GOOD)
        assert taken.status_code == 204, (taken.status_code, taken.text)
        # meanwhile a visitor's session is still refused: each session is let in by its own run
        with stclient.session(url) as (other, other_jar):
            assert stclient.put_file(url, other, other_jar, GOOD).status_code == 401


def test_the_upload_endpoints_size_cap_is_the_projects():
    shipped = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert shipped["server"]["maxUploadSize"] == deployment.DEFAULT_MAX_FILE_MB


def test_the_gate_fits_the_pinned_streamlit_and_says_so_when_it_moves(monkeypatch):
    from streamlit.web.server.starlette import starlette_routes

    from components.session import upload_gate

    upload_gate._check_streamlit()  # the route the gate guards is the one this Streamlit serves
    monkeypatch.setattr(starlette_routes, "_ROUTE_UPLOAD_FILE", "_stcore/upload/{session_id}/{file_id}")
    with pytest.raises(upload_gate.GateError, match="cannot keep them behind sign-in"):
        upload_gate._check_streamlit()


@pytest.mark.browser
@pytest.mark.slow
def test_an_uploaded_file_is_freed_from_the_servers_memory_once_kept(tmp_path, browser):
    """In Chromium: a 3 MB upload is kept on disk, and Streamlit's UploadedFileManager (which would hold it until
    the session ends) holds nothing once the sidebar says it is loaded; the link names it by its hash."""
    data = b'{"question": "Who wrote it?", "documents": [{"text": "' + b"Ann wrote it. " * (3 * MB // 14) + b'"}]}\n'
    env = {**os.environ, "HOME": str(tmp_path / "home"), "CONFLICTLENS_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": str(ROOT)}
    (tmp_path / "mine.jsonl").write_bytes(data)
    with app_server(env, log=tmp_path / "app.log") as url:
        page = browser.new_page()
        try:
            page.goto(f"{url}/?dataset=file:", timeout=ms(60))
            dropzone = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
            wait_until(page, page.get_by_test_id("stFileUploaderDropzone"), "the uploader")
            dropzone.set_input_files(str(tmp_path / "mine.jsonl"))
            wait_until(page, page.get_by_text("Loaded the uploaded file"), "the uploaded dataset")
            digest = hashlib.sha256(data).hexdigest()
            assert (tmp_path / "cache" / "uploads" / f"{digest}.jsonl").read_bytes() == data
            _wait_for(lambda: _held_by_streamlit(url) == 0, "Streamlit to hold no uploaded file")
            page.wait_for_url(re.compile(f"dataset=upload(%3A|:){digest}"), timeout=ms(30))  # the link names it
        finally:
            page.close()


def test_save_reads_a_file_in_pieces(cache):
    class Source:
        def __init__(self, data: bytes):
            self.data, self.asked = data, []

        def read(self, n: int = -1) -> bytes:
            self.asked.append(n)
            piece, self.data = self.data[:n], self.data[n:]
            return piece

    data = GOOD * (3 * MB // len(GOOD))
    source = Source(data)
    digest = uploads.save(source)
    assert digest == hashlib.sha256(data).hexdigest() and uploads.path_of(digest).read_bytes() == data
    assert set(source.asked) == {uploads.CHUNK}  # never the whole file at once
    assert not list((cache / "uploads").glob("*.part"))


def _upload(cache, text: str, opened: float) -> str:
    digest = uploads.save(text.encode() + b"\n")
    os.utime(uploads.path_of(digest), (opened, opened))
    return digest


def test_the_uploads_folder_keeps_to_its_quota_removing_the_least_recently_opened(cache, monkeypatch):
    monkeypatch.setenv("CONFLICTLENS_UPLOADS_MB", str(3.5 * MB / MB))
    now = time.time()
    old, older, recent = (_upload(cache, f'{{"question": "{n}", "documents": []}}' + " " * MB, now - age)
                          for n, age in (("a", 7200), ("b", 10800), ("c", 60)))
    newest = uploads.save(b'{"question": "d", "documents": []}' + b" " * MB + b"\n")
    assert uploads.path_of(older) is None  # opened longest ago: removed to make room
    assert all(uploads.path_of(d) is not None for d in (old, recent, newest))
    assert sum(p.stat().st_size for p in (cache / "uploads").iterdir()) <= 3.5 * MB

    uploads.opened(uploads.path_of(old))  # opened now: it moves to the back of the queue
    uploads.save(b'{"question": "e", "documents": []}' + b" " * MB + b"\n")
    assert uploads.path_of(old) is not None and uploads.path_of(recent) is None

    with pytest.raises(uploads.UploadError, match="the deployment setting uploads_mb"):
        uploads.save(b'{"question": "f", "documents": []}' + b" " * 4 * MB + b"\n")


def test_uploads_not_opened_for_the_age_limit_and_unfinished_writes_are_removed(cache, monkeypatch):
    monkeypatch.setenv("CONFLICTLENS_UPLOADS_DAYS", "7")
    now = time.time()
    fresh = _upload(cache, '{"question": "b", "documents": []}', now - 6 * 86400)
    stale = _upload(cache, '{"question": "a", "documents": []}', now - 8 * 86400)
    part = cache / "uploads" / "tmp123.part"
    part.write_bytes(b"half")
    os.utime(part, (now - 2 * uploads.STALE_PART_S,) * 2)
    removed = uploads.tidy()
    assert sorted(p.name for p in removed) == sorted([part.name, f"{stale}.jsonl"])
    assert uploads.path_of(stale) is None and uploads.path_of(fresh) is not None
    stale = _upload(cache, '{"question": "c", "documents": []}', now - 8 * 86400)
    uploads.save(b'{"question": "d", "documents": []}\n')  # every upload tidies the folder too
    assert uploads.path_of(stale) is None and uploads.path_of(fresh) is not None


def test_the_quota_and_age_are_deployment_settings_with_named_defaults():
    defaults = deployment.from_sources({}, {})
    assert (defaults.uploads_mb, defaults.uploads_days) == (deployment.DEFAULT_UPLOADS_MB,
                                                            deployment.DEFAULT_UPLOADS_DAYS)
    assert deployment.from_sources({"uploads_mb": 500, "uploads_days": 2}, {}).uploads_mb == 500
    assert deployment.from_sources({}, {"CONFLICTLENS_UPLOADS_DAYS": "3"}).uploads_days == 3
    for wrong in ({"uploads_mb": float("inf")}, {"uploads_mb": 0}, {"uploads_days": float("nan")}):
        with pytest.raises(deployment.DeploymentError, match="uploads_"):
            deployment.from_sources(wrong, {})


def test_a_link_to_an_uploaded_dataset_names_its_hash_not_a_server_path(cache):
    digest = uploads.save(GOOD)
    ds = Dataset(name=f"upload-{digest[:12]}", path=str(uploads.path_of(digest)), questions=[])
    assert view.dataset_param(ds, {}) == f"upload:{digest}"
    other = cache / "elsewhere" / f"{digest}.jsonl"  # the same name outside the uploads folder is a file like any
    other.parent.mkdir()
    other.write_bytes(GOOD)
    assert view.dataset_param(Dataset(name="x", path=str(other), questions=[]), {}) == f"file:{other}"
