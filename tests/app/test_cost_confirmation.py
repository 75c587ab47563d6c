"""Cost before a run in the app (issue 25 §6): with a hosted model whose price is registered here (served by a real
serve-model), Inspect shows the estimate before anything is sent and waits for a confirmation above the sidebar's
threshold; below it the Run button is free; the run's table and the Model calls page then show what the calls cost.
The offline model shows no confirmation (it costs $0)."""

from __future__ import annotations

import litellm
import pytest
from streamlit.testing.v1 import AppTest

from backend.llm.server import running_server
from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")
PRICED = "openai/test-priced"


@pytest.fixture(autouse=True)
def priced_model(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cost-FAKE-0123456789")   # serve-model reads no key; litellm wants one
    litellm.register_model({PRICED: {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6,
                                     "litellm_provider": "openai", "mode": "chat"}})


def _confirmations(at) -> list:
    return [c for c in at.checkbox if c.key.startswith("inspect.confirm.")]


def test_inspect_asks_above_the_threshold_then_runs_and_shows_the_cost():
    with running_server(model_name="test-priced") as srv:
        at = AppTest.from_file(APP, default_timeout=300)
        at.query_params["methods"] = "no_rag,vanilla_rag"
        wait_for_runs(at.run())
        assert not _confirmations(at)                                   # the offline model: nothing to confirm
        at.text_input(key="app.model").set_value(PRICED).run()
        at.text_input(key="app.api_base").set_value(srv.base_url).run()
        at.number_input(key="app.cost_threshold").set_value(0.0).run()
        assert not at.exception, at.exception
        captions = " ".join(c.value for c in at.caption)
        assert "Estimate\\: 2 model calls" in captions and "per million prompt tokens" in captions
        (confirm,) = _confirmations(at)
        assert "Yes, send up to 2 calls to openai/test\\-priced ($0.00" in confirm.label
        assert at.button(key="inspect.run").disabled and srv.stats["requests"] == 0   # nothing sent yet
        at.number_input(key="app.cost_threshold").set_value(0.5).run()               # below the threshold: free
        assert not _confirmations(at) and not at.button(key="inspect.run").disabled
        at.number_input(key="app.cost_threshold").set_value(0.0).run()
        _confirmations(at)[0].check().run()
        assert not at.button(key="inspect.run").disabled
        wait_for_runs(at.button(key="inspect.run").click().run())
        assert not at.exception, at.exception
        assert srv.stats["requests"] == 2
        frame = next(f.value for f in at.dataframe if "method" in f.value.columns and "cost" in f.value.columns)
        assert all(c not in ("$0", "price unknown") for c in frame["cost"])      # litellm's cost, recorded per call
        logged = [c for c in at.session_state["app.call_log"].all() if c.model == PRICED]
        assert len(logged) == 2 and all(c.cost_usd > 0 for c in logged)
        at.switch_page("pages/calls.py").run()
        calls = next(f.value for f in at.dataframe if "step" in f.value.columns)
        assert all(c not in ("$0", "price unknown") for c in calls[calls["model"] == PRICED]["cost"])
