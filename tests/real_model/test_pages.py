"""Every method page renders the trace of a real model's run (AppTest): the app, set to local/smollm2 on the tiny
dataset, answers from the replies the tier's run recorded and draws each method's view from them."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT
from tests.real_model.conftest import METHODS, MODEL, TINY

APP = str(ROOT / "app.py")


@pytest.fixture(autouse=True)
def _st_navigation_app(monkeypatch):
    """As tests/app/conftest.py: AppTest stays in ``st.navigation`` mode on every rerun."""
    from streamlit.runtime.pages_manager import PagesManager

    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)


def _app_on_the_real_model() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["dataset"] = f"file:{TINY}"
    at.query_params["question"] = "tiny-1"
    at.query_params["methods"] = ",".join(METHODS)
    at.run()
    at.text_input(key="app.model").set_value(MODEL).run()
    assert "Run" in at.button(key="inspect.run").label  # a real model waits for Run (it takes seconds a call)
    wait_for_runs(at.button(key="inspect.run").click().run(), timeout=600)
    assert not at.exception, at.exception
    from components.session.runs import LOG_KEY

    # the app opens the session's cache, whichever folder an earlier app in this process opened: every call of the
    # real model is the tier's recorded reply (a live one would answer differently: temperature 0 is not bit-stable)
    live = [c.id for c in at.session_state[LOG_KEY].all() if c.model == MODEL and not c.cache_hit]
    assert not live, live
    return at


def _shown(at) -> str:
    parts = [e.value for kind in ("text", "markdown", "caption", "code", "info", "warning", "success") for e in
             at.get(kind) if isinstance(getattr(e, "value", None), str)]
    parts += [f.value.to_string() for f in at.dataframe]
    # Markdown on the page escapes punctuation ("tiny\\-1", "is\\: Canberra"): compare the text it shows
    return re.sub(r"\\(.)", r"\1", "\n".join(parts))


def test_inspect_and_every_method_page_render_the_real_models_run(real_run):
    at = _app_on_the_real_model()
    shown = _shown(at)
    assert "heuristic reader" not in shown  # the page says which model answered, not the offline reader's note
    first = real_run["tiny-1"]
    for name in ("vanilla_rag", "no_rag"):
        if first[name].answers:
            assert first[name].answers[0] in shown, name
    from components.views import views

    pages = [v for v in views() if v.section == "Methods" and v.page]
    assert len(pages) == 5
    for view in pages:
        at.switch_page(view.page).run()
        wait_for_runs(at, timeout=600)
        assert not at.exception, (view.page, at.exception)
        text = _shown(at)
        assert at.title, view.page
        method = VIEW_METHOD[view.url_path]
        result = first[method]
        assert f"model {MODEL}" in text, view.page  # the trace drawn is the real model's run
        assert all(a in text for a in result.answers), (view.page, result.answers)
        assert TRACE_MARK[method] in text, (view.page, TRACE_MARK[method])


#: each method page's view of its method, and a line only a drawn trace of that method shows
VIEW_METHOD = {"sources": "ra_rag", "debate": "madam", "astute": "astute", "counterfactual": "counterfactual",
               "bridge": "bridge"}
TRACE_MARK = {"ra_rag": "κ = 4: the walk asked", "madam": "stopped at round", "astute": "consolidation round",
              "counterfactual": "evidence: ", "bridge": "Path: N0"}
