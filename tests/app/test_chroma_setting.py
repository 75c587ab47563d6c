"""The app's chroma server setting: read from $CONFLICTLENS_CHROMA_URL into the sidebar, carried by the selection to
every runner, and a server that does not answer is one clear message on the Dataset page."""

from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT
from tests.servers import free_port

APP = str(ROOT / "app.py")


def test_chroma_url_from_the_environment_reaches_the_selection_and_a_dead_server_is_said(monkeypatch):
    port = free_port()  # nothing listens there
    dead = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("CONFLICTLENS_CHROMA_URL", dead)
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["methods"] = "no_rag"
    at.run()
    assert at.text_input(key="app.chroma_url").value == dead
    at.switch_page("pages/dataset.py").run()
    assert not at.exception, at.exception
    assert at.session_state["app.selection"].chroma_url == dead
    errors = " ".join(e.value for e in at.error)
    assert "The retrieval index cannot be opened" in errors and str(port) in errors
    # emptied in the sidebar: back to the embedded index
    at.text_input(key="app.chroma_url").set_value("").run()
    assert at.session_state["app.selection"].chroma_url is None
    from components.session.runs import runner

    assert runner(at.session_state["app.selection"]).chroma_url is None
