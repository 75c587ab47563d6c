import time

import pytest
from streamlit.runtime.pages_manager import PagesManager


@pytest.fixture(autouse=True)
def _st_navigation_app(monkeypatch):
    """Keep AppTest in ``st.navigation`` mode on every rerun, as the real server is after its first run.

    AppTest resets ``PagesManager.uses_pages_directory`` before each run; our pages then take the
    ``ensure_navigation`` path (switch mode, ``st.rerun()``) every time, and that rerun drops button
    clicks. The deep-link path itself is covered by the browser test on a fresh server.
    """
    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)


def wait_for_runs(at, timeout: float = 300.0):
    """Wait for the session's background runs (``components.session.runs.jobs``) to finish, then rerun ``at`` once
    so the page picks their results up: what the page's poll does in a browser (AppTest runs no fragment timers).
    Bounded: fails after ``timeout`` seconds."""
    from components.session.runs import JOB_KINDS, JOBS_KEY

    stores = [at.session_state[f"{JOBS_KEY}.{kind}"] for kind in JOB_KINDS if f"{JOBS_KEY}.{kind}" in at.session_state]
    deadline = time.monotonic() + timeout
    while any(s.busy() for s in stores):
        if time.monotonic() > deadline:
            pytest.fail(f"background runs still running after {timeout:.0f} s")
        time.sleep(0.05)
    return at.run()


@pytest.fixture
def featured_default():
    """Ask for this to keep the app opening on the bundled data's featured case (``sample_data/featured.json``)."""


@pytest.fixture(autouse=True)
def _open_on_question_one(request, monkeypatch):
    """The app opens on a featured case of the bundled data (issue 27); the page tests were written for question 1
    on open and keep it, unless they ask for ``featured_default``."""
    if "featured_default" not in request.fixturenames:
        monkeypatch.setattr("components.session.sidebar.featured_question", lambda name: None)
