"""The Inspect page's method column, rendered alone with AppTest.from_function."""

from streamlit.testing.v1 import AppTest


def _column(result_json: str | None, show_truth: bool):
    import streamlit as st

    from backend.schema import Document, MethodResult, Question
    from components.inspect import render_column

    question = Question(id="q", question="Who?", gold_answers=["Ann Lee"], wrong_answers=["Bob"],
                        documents=[Document(id="d1", text="Ann Lee wrote it.")])
    result = MethodResult.model_validate_json(result_json) if result_json else None
    render_column(st, "my_method", result, question, show_truth)  # a method without a page: no link


def _render(result=None, show_truth=False) -> AppTest:
    at = AppTest.from_function(_column, args=(result.model_dump_json() if result else None, show_truth))
    at.run()
    assert not at.exception
    return at


def test_a_running_column_says_so():
    assert [c.value for c in _render().caption] == ["running…"]


def test_an_answered_column_shows_answer_verdict_and_cost():
    from backend.schema import MethodResult

    at = _render(MethodResult(method="vanilla_rag", question_id="q", answers=["Bob"]), show_truth=True)
    assert [t.value for t in at.text] == ["Bob"]
    assert [m.value for m in at.markdown if "-badge[" in m.value] == [":red-badge[wrong]"]
    assert at.caption[0].value.startswith("0 calls · 0 tokens")


def test_an_error_is_shown_as_text():
    from backend.schema import MethodResult

    at = _render(MethodResult(method="vanilla_rag", question_id="q", error="model call failed: <b>boom</b>"))
    assert [t.value for t in at.text] == ["model call failed: <b>boom</b>"]


def test_a_column_read_from_the_reply_cache_shows_the_time_the_run_took_when_its_replies_were_made():
    from backend.schema import LLMCall, MethodResult

    call = LLMCall(id="c1", step="answer", task="answer", model="offline/reader", messages=[], response="Bob",
                   cache_hit=True, latency_s=0.001, recorded_latency_s=2.0)
    result = MethodResult(method="vanilla_rag", question_id="q", answers=["Bob"], calls=[call], wall_s=0.01,
                          first_run_s=2.5)
    caption = _render(result).caption[0].value
    assert "2.50 s" in caption and "from the reply cache" in caption  # not the 0.01 s cache read
    assert "0.01" not in caption
