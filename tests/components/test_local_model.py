"""The local model in the app's components, pure (hand-built calls and estimates, no server): what a page says of the
model (the offline reader is a heuristic reader; SmolLM2 a real language model on this CPU), what the sidebar says when
it is not installed, its estimate's time per method, a call that looped until max_tokens (its raw text shown as text)
or whose prompt was cut to fit the context, and a run's calls counted while it is in flight."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from backend.cost import MethodCost, RunEstimate
from backend.llm.local import BUNDLED_TITLE, SMOLLM2
from backend.llm.local.context import RULE, PromptCut
from backend.llm.local.serve import INSTALL_SERVER
from backend.llm.local.weights import INSTALL_WEIGHTS
from backend.llm.pricing import LOCAL_NOTE
from backend.schema import LLMCall
from components import calls as view
from components.cost import estimate_frame
from components.models import local_missing, model_note
from components.read_status import raw_reply

#: A reply that looped: an answer, then the same sentence until max_tokens cut it mid-word. Hostile markup in it.
LOOPED = "Paris. " + "The answer is <b>Paris</b>. " * 12 + "The ans"
UNIT = "The answer is <b>Paris</b>."
CUT = PromptCut(context_tokens=8192, reply_tokens=256, tokens_before=9100, tokens_after=7920, passages_cut=3,
                kept_chars=1200, chars_removed=4100)


def _call(i: int = 1, **fields) -> LLMCall:
    base = dict(id=f"vanilla_rag:answer:{i}", step="answer", task="keyword_answer", method="vanilla_rag",
                question_id="q1", model=SMOLLM2, messages=[{"role": "user", "content": "Question: where?"}],
                response="Paris", prompt_tokens=795, completion_tokens=15)
    return LLMCall(**{**base, **fields})


def _looped(i: int = 1) -> LLMCall:
    """As the client records it (``backend.llm.client``): no reply for the method, its text kept in ``cut_off``."""
    return _call(i, response="", cut_off=LOOPED, finish_reason="length", completion_tokens=256,
                 read_status="unreadable",
                 read_note=f"cut off at max_tokens while repeating {UNIT!r}: read as no reply; no answer found; "
                           "the method used its default: I don't know (abstain)")


# -- what the pages say of the model ----------------------------------------------------------------------------

def test_the_offline_reader_is_a_heuristic_reader_and_smollm2_a_real_model_on_this_cpu():
    assert "heuristic reader" in model_note("offline/reader") and "not a language model" in model_note("offline/reader")
    real = model_note(SMOLLM2)
    assert "real language model running on this CPU" in real and "heuristic" not in real
    assert "real language model" in model_note("local/my-model") and "heuristic" not in model_note("local/my-model")
    assert model_note("openai/gpt-4o-mini") is None


def test_the_sidebar_says_in_one_line_what_to_install():
    assert local_missing(weights=True, server=True) is None
    assert INSTALL_WEIGHTS in local_missing(weights=False, server=True)
    assert INSTALL_SERVER in local_missing(weights=True, server=False)
    both = local_missing(weights=False, server=False)
    assert INSTALL_WEIGHTS in both and INSTALL_SERVER in both and BUNDLED_TITLE in both and "\n" not in both


# -- the estimate: $0, and the time ------------------------------------------------------------------------------

def _local_estimate(measured: bool) -> RunEstimate:
    seconds = dict(seconds=7.6, seconds_max=31.0) if measured else {}
    return RunEstimate(model=SMOLLM2, questions=1, free=True, priced=True, price_note=LOCAL_NOTE, local=True,
                       speed="100 prompt and 26 generated tokens/s, measured on this machine" if measured else None,
                       methods={"vanilla_rag": MethodCost(method="vanilla_rag", calls=1, calls_min=1,
                                                          prompt_tokens=626, completion_tokens=8, cost_usd=0.0,
                                                          ceiling_usd=0.0, **seconds)})


def test_a_local_estimate_gives_each_methods_time_instead_of_a_price_ceiling():
    frame = estimate_frame(_local_estimate(True))
    assert list(frame.columns) == ["calls", "prompt tokens", "completion tokens", "cost", "time", "time at most",
                                   "assumed"]
    row = frame.loc["Vanilla RAG"]
    assert (row["cost"], row["time"], row["time at most"]) == ("$0", "~8 s", "~30 s")
    assert estimate_frame(_local_estimate(False)).loc["Vanilla RAG", "time"] == "not measured yet"
    assert "time" not in estimate_frame(_local_estimate(True).model_copy(update={"local": False})).columns


def _estimate_panel(estimate_json: str):
    import streamlit as st

    from backend.cost import RunEstimate
    from components.cost import render_estimate

    st.session_state["may_run"] = render_estimate(st, RunEstimate.model_validate_json(estimate_json), 0.0, "confirm",
                                                  always=True)


def test_the_estimate_above_run_says_how_long_at_measured_speeds_and_asks_nothing():
    for measured, said in ((True, "\\~8 s at measured speeds"), (False, "time not measured yet")):
        at = AppTest.from_function(_estimate_panel, kwargs={"estimate_json": _local_estimate(measured)
                                                            .model_dump_json()}).run()
        assert not at.exception, at.exception
        captions = " ".join(c.value for c in at.caption)
        assert said in captions and "this CPU" in captions, captions
        assert ("26 generated tokens/s" in captions) == measured and not at.checkbox and at.session_state["may_run"]
        assert at.expander[0].label == "Estimate per method"


# -- a call that looped until max_tokens, a prompt cut to fit ----------------------------------------------------

def test_a_cut_off_call_names_what_it_repeated_and_keeps_its_text():
    call = _looped()
    assert view.repeating(call) == UNIT
    assert view.cut_off_text(call).startswith(f"cut off at max_tokens while repeating {UNIT!r}: the method got no "
                                              "reply")
    assert raw_reply(call) == LOOPED and raw_reply(_call()) == "Paris"
    assert view.cut_off_text(_call()) is None and view.cut_label(call) == "reply"
    assert "stopped at max_tokens" not in (view.server_text(call) or "")  # said once, as a loop


def test_a_clipped_cut_off_text_still_names_the_repetition_from_the_read_note():
    call = _looped().model_copy(update={"cut_off": LOOPED[:40]})  # too short to find the period again
    assert view.repeating(call) == UNIT


def test_a_prompt_cut_to_fit_the_context_says_what_was_cut():
    call = _call(prompt_cut=CUT.model_dump(), server_s=8.13, queued_s=0.25, cached_tokens=640)
    assert view.prompt_cut_text(call) == CUT.note() and "9100 -> 7920 tokens" in view.prompt_cut_text(call)
    assert view.prompt_cut_text(_call(prompt_cut={"rule": "another version's"})) == \
        "prompt cut to fit the model's context"
    assert view.server_text(call) == ("server 8.13 s · waited 0.25 s for a free slot · 640 prompt tokens from the "
                                      "server's prompt cache")
    assert view.server_text(_call(finish_reason="length", completion_tokens=256)) == \
        "stopped at max_tokens (256 tokens): the reply may be cut short"
    assert view.server_text(_call()) is None
    both = _looped(4).model_copy(update={"prompt_cut": CUT.model_dump()})
    frame = view.calls_frame([call, _looped(2), _call(3), both])
    assert list(frame["cut"]) == ["prompt", "reply", "", "prompt, reply"]


def _call_view(call_json: str):
    import streamlit as st

    from backend.schema import LLMCall
    from components.calls import render_call

    render_call(st, LLMCall.model_validate_json(call_json))


def test_the_model_calls_view_shows_a_cut_off_reply_as_text_and_a_cut_prompt():
    call = _looped().model_copy(update={"prompt_cut": CUT.model_dump(), "server_s": 9.5})
    at = AppTest.from_function(_call_view, kwargs={"call_json": call.model_dump_json()}).run()
    assert not at.exception, at.exception
    warning = at.warning[0].value.replace("\\", "")
    assert warning.startswith(f"cut off at max_tokens while repeating {UNIT!r}") and "no reply" in warning
    assert LOOPED in [c.value for c in at.code]  # verbatim, as a code block: text, never HTML
    assert not any("<b>" in m.value for m in at.markdown)  # no Markdown element carries the raw reply
    info = at.info[0].value.replace("\\", "")
    assert CUT.note() in info and RULE in info
    assert "server 9.50 s" in " ".join(c.value for c in at.caption).replace("\\", "")

    plain = AppTest.from_function(_call_view, kwargs={"call_json": _call().model_dump_json()}).run()
    assert not plain.warning and not plain.info and "Paris" in [c.value for c in plain.code]


def _read_panel(calls_json: list[str]):
    import streamlit as st

    from backend.schema import LLMCall
    from components.read_status import render_read_status

    render_read_status(st, [LLMCall.model_validate_json(c) for c in calls_json])


def test_the_format_warning_keeps_a_cut_off_replys_text_one_click_away():
    at = AppTest.from_function(_read_panel, kwargs={"calls_json": [_looped().model_dump_json(),
                                                                   _call(2).model_dump_json()]}).run()
    assert not at.exception, at.exception
    assert "1 reply was not in the expected format" in at.warning[0].value
    assert "cut off at max\\_tokens while repeating" in at.warning[0].value
    assert at.expander[0].code[0].value == LOOPED  # not the empty reply the method got


# -- a run in flight: its calls ------------------------------------------------------------------------------------

def test_a_runs_progress_counts_its_calls_against_the_estimate():
    assert view.progress_text([]) == "Model calls: none done yet"
    calls = [_call(1, cache_hit=True), _call(2, queued_s=0.4), _looped(3).model_copy(update={"queued_s": 1.3}),
             _call(4, error="timeout", response=None), _call(5, prompt_cut=CUT.model_dump())]
    assert view.progress_text(calls) == ("Model calls: 5 done (1 from the cache, 1 failed) · 1 cut off at max_tokens "
                                         "(looping) · 1 prompt cut to fit the context · 2 waited 2 s in all for a "
                                         "free slot of the server")
    ranged = _local_estimate(True).model_copy(update={"methods": {"madam": MethodCost(
        method="madam", calls=12, calls_min=7, seconds=55.0, seconds_max=200.0)}})
    assert view.progress_text(calls[:2], ranged) == ("Model calls: 2 done (1 from the cache), of 7–12 expected "
                                                     "(~55 s at measured speeds)")
    unmeasured = ranged.model_copy(update={"speed": None})
    assert view.progress_text(calls[:1], unmeasured) == "Model calls: 1 done (1 from the cache), of 7–12 expected"
