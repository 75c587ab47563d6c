"""A reply the method could not read is never hidden (issue 25 §3): every call records how its reader read it; the
warning names the count and the default the method used, with the raw reply one click away; the Model calls page
filters by it; the evaluation summary and attacks count ``format_failures``. End to end with the scripted provider."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from backend.data import load_dataset
from backend.evaluate import format_counts, summarize
from backend.llm.client import LLMClient, LLMConfig, default_cache
from backend.llm.providers import scripted
from backend.llm.tasks import TASKS, TaskSpec, read_reply
from backend.paths import SAMPLE_DATA
from backend.runner import Runner
from backend.schema import LLMCall
from backend.schema.summary import AttackRates, MethodSummary
from backend.whatif.campaign import summarize_attack
from components import calls as calls_view
from components.read_status import groups, lenient_text, unreadable_text

MSG = [{"role": "user", "content": "Question: who?\nAnswer:"}]
R_P = "no soft-bias probabilities found; the method used its default: r_p = 0.5 (r_p = g_p = 50%)"


def _call(i: int, status: str | None, note: str | None = None, step: str = "allocate", response: str = "…",
          method: str = "bridge") -> LLMCall:
    return LLMCall(id=f"c{i}", step=step, task="soft_bias", method=method, model="scripted/x", messages=[],
                   response=response, read_status=status, read_note=note)


# -- the pure shaping -----------------------------------------------------------------------------------------

def test_the_warning_names_the_count_the_role_and_the_default():
    calls = [_call(1, "unreadable", R_P), _call(2, "exact"), _call(3, "unreadable", R_P)]
    assert unreadable_text(calls) == [f"2 replies were not in the expected format (Soft Bias Allocator): {R_P}"]
    assert unreadable_text([_call(1, "exact"), _call(2, None)]) == []


def test_different_defaults_get_a_line_each_in_call_order():
    other = "no option letter found; the method used its default: no option"
    calls = [_call(1, "unreadable", R_P), _call(2, "unreadable", other, step="respond"),
             _call(3, "unreadable", R_P)]
    assert unreadable_text(calls) == ["3 replies were not in the expected format:",
                                      f"2 × Soft Bias Allocator: {R_P}", f"1 × responder: {other}"]
    assert [len(g.calls) for g in groups(calls, "unreadable")] == [2, 1]


def test_lenient_reads_get_one_quiet_line():
    calls = [_call(1, "lenient", "removed Markdown"), _call(2, "lenient", "removed Markdown"), _call(3, "exact")]
    assert lenient_text(calls) == "2 replies were read leniently — Soft Bias Allocator: removed Markdown (× 2)"
    assert lenient_text([_call(1, "exact")]) is None


def test_the_model_calls_table_filters_by_read_status():
    calls = [_call(1, "unreadable", R_P), _call(2, "exact"), _call(3, None, response=None),
             _call(4, "lenient", "removed Markdown")]
    frame = calls_view.calls_frame(calls, reads=["unreadable", calls_view.NOT_READ])
    assert list(frame["id"]) == ["c1", "c3"] and list(frame["read"]) == ["unreadable", "—"]
    assert list(frame["read note"]) == [R_P, ""]
    assert len(calls_view.calls_frame(calls)) == 4  # no filter: every call
    assert calls_view.summary(calls)["unreadable replies"] == 1
    assert list(calls_view.roles_frame(calls)["read"]) == ["unreadable", "exact", "—", "lenient"]


def test_format_counts_is_a_percentage_of_the_replies_read():
    calls = [_call(1, "unreadable", R_P), _call(2, "exact"), _call(3, "lenient", "x"), _call(4, "exact"),
             _call(5, None, response=None)]
    assert format_counts(calls) == {"format_failures": 25.0, "unreadable_calls": 1, "lenient_calls": 1}
    assert format_counts([_call(1, None)])["format_failures"] is None  # rows written before reads were recorded


# -- the panel --------------------------------------------------------------------------------------------------

def _panel(calls_json: list[str]):
    import streamlit as st

    from backend.schema import LLMCall
    from components.read_status import render_read_status

    render_read_status(st, [LLMCall.model_validate_json(c) for c in calls_json])


def test_the_panel_warns_and_keeps_the_raw_reply_one_click_away():
    calls = [_call(1, "unreadable", R_P, response="I would **rather** not say _which_ one."), _call(2, "exact"),
             _call(3, "lenient", "removed Markdown")]
    at = AppTest.from_function(_panel, kwargs={"calls_json": [c.model_dump_json() for c in calls]}).run()
    assert not at.exception
    warning = at.warning[0].value
    assert "1 reply was not in the expected format" in warning and "r\\_p \\= 0\\.5" in warning  # escaped: literal
    assert "the 1 reply not in the expected format" in at.expander[0].label
    assert at.expander[0].code[0].value == "I would **rather** not say _which_ one."  # verbatim, as text
    assert "read leniently" in at.caption[-1].value


# -- recorded on every call, by the client ----------------------------------------------------------------------

def test_the_client_records_the_read_on_every_call_and_on_a_cache_hit(tmp_path):
    with scripted({"closed_book": ["", "Ann"]}):
        client = LLMClient(LLMConfig(model="scripted/reads", cache_mode="live"), cache=default_cache(tmp_path))
        empty = client.complete(MSG, task="closed_book", step="a", question="who?")
        hit = client.complete(MSG, task="closed_book", step="a", question="who?")
        plain = client.complete(MSG, task="closed_book", step="b", question="who?", fields={"memory": "m"})
    assert (empty.read_status, hit.read_status, hit.cache_hit) == ("unreadable", "unreadable", True)
    assert "the method used its default" in empty.read_note and hit.read_note == empty.read_note
    assert (plain.read_status, plain.read_note, plain.structured) == ("exact", None, False)


def test_a_reader_that_raises_is_recorded_as_unreadable_with_the_exception():
    def broken(text, **_):
        raise KeyError("boom")

    TASKS["broken_reader"] = TaskSpec("broken_reader", (), broken, "a reader with a bug")
    try:
        read = read_reply("broken_reader", "anything", {"task": "broken_reader", "question": "q"})
    finally:
        del TASKS["broken_reader"]
    assert read.status == "unreadable" and "KeyError" in read.note and "boom" in read.note


# -- end to end: a method run -> trace calls -> the warning -> the summary -------------------------------------

@pytest.fixture(scope="module")
def scenarios():
    ds = load_dataset(SAMPLE_DATA / "scenarios")
    return ds.model_copy(update={"questions": ds.questions[:2]})


def test_unreadable_replies_end_to_end(scenarios):
    """BRIDGE with a Soft Bias Allocator that never gives probabilities, and vanilla RAG with an empty reply."""
    script = {"soft_bias": "Hard to say, honestly.", "keyword_answer": "", "*": "I don't know"}
    with scripted(script):
        runner = Runner(scenarios, llm=LLMConfig(model="scripted/unreadable", cache_mode="off"))
        results = {(q.id, m): r for q in scenarios.questions
                   for m, r in runner.run(q, ["bridge", "vanilla_rag"]).items()}
    bridge = results[(scenarios.questions[0].id, "bridge")]
    assert bridge.error is None
    allocator = [c for c in bridge.calls if c.task == "soft_bias"]
    assert allocator and all(c.read_status == "unreadable" and "r_p = 0.5" in c.read_note for c in allocator)
    lines = unreadable_text(bridge.calls)
    n = sum(c.read_status == "unreadable" for c in bridge.calls)
    assert lines[0].startswith(f"{n} replies were not in the expected format")
    assert any("the method used its default: r_p = 0.5" in line for line in lines)

    summary = summarize(scenarios, results, methods=["bridge", "vanilla_rag"])
    for method in ("bridge", "vanilla_rag"):
        entry = MethodSummary.model_validate(summary["methods"][method])
        assert entry.format_failures and entry.format_failures > 0 and entry.unreadable_calls > 0
    assert summary["methods"]["vanilla_rag"]["format_failures"] == 100.0  # its one call per question

    # the same count in an attack's summary (rows as the campaign writes them: k = 0, the clean questions)
    info = {q.id: {"k": 0, "attack_of": q.id, "target": "x", "clean_documents": len(q.documents)}
            for q in scenarios.questions}
    cells = summarize_attack(results, scenarios.questions, info, ["vanilla_rag"], [0])
    assert AttackRates.model_validate(cells["vanilla_rag"]["0"]).format_failures == 100.0


# -- the Evaluate page and attack results ----------------------------------------------------------------------

def test_the_evaluate_table_and_warning_show_format_failures():
    from backend.schema.summary import Summary
    from components.evaluate import format_warning, summary_frame

    summary = Summary.model_validate({"dataset": "d", "methods": {
        "bridge": {"n": 4, "format_failures": 12.5, "unreadable_calls": 3},
        "vanilla_rag": {"n": 4, "format_failures": 0.0}}})
    frame = summary_frame(summary).set_index("method")
    assert frame.loc["bridge", "format failures %"] == "12.5" and frame.loc["vanilla_rag", "format failures %"] == "0.0"
    assert format_warning(summary) == ("Replies not in the expected format: bridge 3 replies (12.5 %). For those the "
                                       "method used its paper's default; a question's method page names the default "
                                       "and shows the reply.")
    clean = Summary.model_validate({"dataset": "d", "methods": {"vanilla_rag": {"n": 4, "format_failures": 0.0}}})
    assert format_warning(clean) is None


def test_the_attack_table_shows_format_failures():
    from backend.schema.summary import AttackSummary
    from components.attack import FORMAT_FAILURES, summary_frame

    summary = AttackSummary.model_validate({"bridge": {"1": {"n": 2, "format_failures": 50.0, "unreadable_calls": 4}}})
    assert summary_frame(summary)[FORMAT_FAILURES].tolist() == [50.0]
