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
