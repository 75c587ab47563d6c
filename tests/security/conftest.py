"""The security tests' shared set-up: one Chromium for the package (as tests/browser has its own), AppTest kept in
st.navigation mode, a label store with one evaluation run to label, the sign-in settings of a real OIDC provider."""

import secrets
from pathlib import Path

import pytest
from streamlit.runtime.pages_manager import PagesManager

from tests.app.test_labels_page import write_results
from tests.browser.conftest import chromium_browser


def keep_navigation_mode(monkeypatch) -> None:
    """As tests/app/conftest.py: AppTest stays in st.navigation mode on every rerun (as the server does after its
    first run), so a click is not lost to the legacy-mode rerun."""
    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)


@pytest.fixture
def db(tmp_path, monkeypatch):
    """A label store in tmp_path ($CONFLICTLENS_LABELS) and a cache folder holding one evaluation run (the Label
    page's queue); the store's path."""
    path = tmp_path / "labels.db"
    monkeypatch.setenv("CONFLICTLENS_LABELS", str(path))
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path / "cache"))
    write_results(tmp_path / "cache" / "evaluations" / "ramdocs_dev-test")
    return path


def write_auth_secrets(home: Path, port: int, issuer: str) -> None:
    """``home``'s .streamlit/secrets.toml with an [auth] table signing in through ``issuer``, the app on ``port``."""
    (home / ".streamlit").mkdir(parents=True, exist_ok=True)
    (home / ".streamlit" / "secrets.toml").write_text(
        "[auth]\n"
        f'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        f'cookie_secret = "{secrets.token_hex(32)}"\n'
        'client_id = "conflictlens"\n'
        f'client_secret = "{secrets.token_hex(16)}"\n'
        f'server_metadata_url = "{issuer}/.well-known/openid-configuration"\n')


@pytest.fixture(scope="package")
def browser():
    yield from chromium_browser()
