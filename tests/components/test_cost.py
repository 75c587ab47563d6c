"""The cost panels, pure (issue 25 §6): the estimate's table and confirmation rules, what recorded calls cost in the
tables, and the Evaluate summary's cost column and stop."""

from __future__ import annotations

from backend.cost import MethodCost, RunEstimate, cost_text
from backend.schema import LLMCall
from backend.schema.summary import Summary
from components import calls as calls_view
from components import evaluate as evaluate_view
from components.cost import confirm_label, estimate_frame, needs_confirming


def _estimate(cost: float | None, model: str = "openai/gpt-4o-mini", free: bool = False) -> RunEstimate:
    madam = MethodCost(method="madam", calls=12, calls_min=7, prompt_tokens=4600, completion_tokens=780,
                       cost_usd=cost, ceiling_usd=None if cost is None else 2 * cost, upper_bound=True,
                       notes=["agent replies ~44 tokens"])
    return RunEstimate(model=model, questions=1, free=free, priced=cost is not None, price_note="",
                       methods={"madam": madam, "toy": MethodCost(method="toy", estimated=False)})


def test_the_estimate_table_shows_ranges_costs_and_what_was_assumed():
    frame = estimate_frame(_estimate(0.0123))
    assert frame.loc["MADAM-RAG", "calls"] == "7–12" and frame.loc["MADAM-RAG", "cost"] == "$0.01"
    assert frame.loc["MADAM-RAG", "at most"] == "$0.02" and "44 tokens" in frame.loc["MADAM-RAG", "assumed"]
    assert frame.loc["toy", "calls"] == "not estimated"
    assert set(estimate_frame(_estimate(None))["cost"]) == {"price unknown", "—"}


def test_confirmation_above_the_threshold_at_an_unknown_price_or_always_never_for_the_offline_model():
    assert needs_confirming(_estimate(1.0), 0.5) and not needs_confirming(_estimate(0.1), 0.5)
    assert needs_confirming(_estimate(None), 100.0)                      # unknown price: ask
    assert needs_confirming(_estimate(0.01), 0.5, always=True)            # influence, a dataset attack
    assert not needs_confirming(_estimate(0.0, "offline/reader", free=True), 0.0, always=True)
    assert not needs_confirming(None, 0.0)
    assert confirm_label(_estimate(1.0)) == "Yes, send up to 12 calls to openai/gpt\\-4o\\-mini ($1.00)"


def _call(model: str, cost: float | None, hit: bool = False, saved: float | None = None) -> LLMCall:
    return LLMCall(id=f"c{cost}{hit}", step="answer", task="keyword_answer", model=model, messages=[],
                   cost_usd=cost, cache_hit=hit, saved_usd=saved)


def test_recorded_costs_read_as_dollars_free_or_unknown():
    assert cost_text([_call("offline/reader", None)]) == "$0"               # records from before costs, too
    assert cost_text([_call("openai/x", 0.012), _call("openai/x", 0.0, hit=True, saved=0.004)]) == \
        "$0.01 (saved $0.0040)"
    assert cost_text([_call("openai/reader", None)]) == "price unknown"
    frame = calls_view.calls_frame([_call("openai/x", 0.25)])
    assert list(frame["cost"]) == ["$0.25"] and calls_view.summary([_call("openai/x", 0.25)])["cost"] == "$0.25"


def test_the_evaluate_summary_shows_each_methods_cost_and_why_it_stopped():
    summary = Summary.model_validate({"dataset": "d", "model": "openai/x", "questions": 2, "cost_usd": 0.5,
                                      "stopped": "stopped at the cost limit: $0.50 spent",
                                      "methods": {"a": {"n": 1, "cost_usd": 0.5}, "b": {"n": 1,
                                                                                      "cost_unknown_calls": 3}}})
    frame = evaluate_view.summary_frame(summary).set_index("method")
    assert frame.loc["a", "cost"] == "$0.50" and frame.loc["b", "cost"] == "price unknown"
    offline = Summary.model_validate({"dataset": "d", "model": "offline/reader", "methods": {"a": {"n": 1}}})
    assert list(evaluate_view.summary_frame(offline)["cost"]) == ["$0"]
