"""The decisions that depend on the reading of replies (components/reading.py): the line a method's page and Inspect
show, its quiet caption, the table of differences, and that model text inside them is shown literally."""

from streamlit.testing.v1 import AppTest

from backend.schema import MethodResult
from backend.schema.result import ReadingDifference
from components import reading as view


def _diff(step="responder", what="option", used="D", other="nothing (unreadable)", call_id="c1"):
    return ReadingDifference(step=step, call_id=call_id, what=what, used=used, other=other)


def _result(reading="tolerant", decisions=9, diffs=(), method="bridge") -> MethodResult:
    return MethodResult(method=method, question_id="q1", answers=["x"], reading=reading, decisions_read=decisions,
                        reading_differences=list(diffs))


def test_the_line_names_the_reading_and_each_difference():
    result = _result(diffs=[_diff(), _diff(step="refiner", what="keep or discard", used="yes", other="no",
                                           call_id=None)])
    assert view.dependent_text(result) == (
        "2 of this method's 9 decisions depend on the tolerant reader: responder: option D (paper: nothing "
        "(unreadable)); refiner: keep or discard yes (paper: no)")


def test_read_the_papers_way_the_line_says_so_and_names_the_tolerant_reading_in_brackets():
    result = _result(reading="paper", decisions=4, diffs=[_diff(used="nothing (unreadable)", other="D")])
    assert view.dependent_text(result) == (
        "1 of this method's 4 decisions depends on the paper's reading: responder: option nothing (unreadable) "
        "(tolerant: D)")


def test_a_decision_without_a_name_and_long_values():
    long = "an answer " * 20
    line = view.dependent_text(_result(decisions=1, diffs=[_diff(step="agent_2", what="", used=long, other="Paris")]))
    assert line.startswith("1 of this method's 1 decision depends on the tolerant reader: agent_2: an answer")
    assert "…" in line and line.endswith("(paper: Paris)") and len(line) < 200  # cut in the line, whole in the table


def test_many_differences_are_cut_to_a_few_and_counted():
    result = _result(decisions=12, diffs=[_diff(step=f"agent_{i}") for i in range(5)])
    line = view.dependent_text(result)
    assert line.startswith("5 of this method's 12 decisions depend on")
    assert "agent_2" in line and "agent_3" not in line and line.endswith("; and 2 more")
    assert view.dependent_text(result, limit=5).count("agent_") == 5


def test_decisions_never_fewer_than_the_differences():
    assert view.dependent_text(_result(decisions=0, diffs=[_diff()])).startswith("1 of this method's 1 decision ")


def test_no_difference_is_a_quiet_caption_or_nothing():
    assert view.dependent_text(_result()) is None
    assert view.quiet_text(_result()) == ("Replies read the tolerant way: none of this method's 9 decisions would be "
                                          "read otherwise by the paper's rule.")
    assert view.quiet_text(_result(reading="paper", decisions=1)) == (
        "Replies read by each paper's own rule: this method's one decision would not be read otherwise by the "
        "tolerant reader.")
    assert view.quiet_text(_result(decisions=0)) is None  # nothing read (an error, a method that reads none)
    assert view.quiet_text(_result(diffs=[_diff()])) is None


def test_one_caption_for_the_quiet_methods_of_inspect():
    results = {"no_rag": _result(method="no_rag", decisions=5), "vanilla_rag": _result(method="vanilla_rag",
                                                                                      decisions=7),
               "bridge": _result(diffs=[_diff()]), "madam": _result(method="madam", decisions=0)}
    assert view.quiet_many_text(results) == ("Replies read the tolerant way: no decision of Closed book or Vanilla "
                                             "RAG (12 in all) would be read otherwise by the paper's rule.")
    assert view.quiet_many_text({"bridge": results["bridge"]}) is None


def test_the_table_has_every_difference_whole():
    long = "an answer " * 20
    frame = view.differences_frame(_result(diffs=[_diff(), _diff(step="agent_1", what="", used=long, call_id=None)]))
    assert list(frame.columns) == ["step", "call", "decision", "read (tolerant, used)", "read (paper)"]
    assert frame.iloc[0].tolist() == ["responder", "c1", "option", "D", "nothing (unreadable)"]
    assert frame.iloc[1].tolist() == ["agent_1", "—", "—", long, "nothing (unreadable)"]
    assert list(view.differences_frame(_result(reading="paper")).columns)[3:] == ["read (paper, used)",
                                                                                 "read (tolerant)"]


def _panel(text: str, reading: str, titled: bool) -> None:
    import streamlit as st

    from backend.schema import MethodResult
    from backend.schema.result import ReadingDifference
    from components.reading import render_reading, render_results_reading

    diff = ReadingDifference(step="responder", call_id="c1", what="option", used=text, other="nothing (unreadable)")
    result = MethodResult(method="bridge", question_id="q1", reading=reading, decisions_read=3,
                          reading_differences=[diff])
    quiet = MethodResult(method="no_rag", question_id="q1", reading=reading, decisions_read=2)
    if titled:
        render_results_reading(st, {"bridge": result, "no_rag": quiet})
    else:
        render_reading(st, result)
        render_reading(st, quiet)


HOSTILE = "**D** [click](http://evil.example) <b>x</b>"


def test_rendered_as_text_never_markdown():
    at = AppTest.from_function(_panel, args=(HOSTILE, "tolerant", False), default_timeout=60).run()
    assert not at.exception, at.exception
    info = at.info[0].value
    assert "\\*\\*D\\*\\*" in info and "\\[click\\]" in info and "\\<b\\>" in info  # escaped: shown literally
    assert info.replace("\\", "").startswith("1 of this method's 3 decisions depends on the tolerant reader: "
                                             "responder: option **D**")
    assert [e.label for e in at.expander] == ["the 1 decision the paper's rule would read otherwise"]
    table = at.dataframe[0].value
    assert table.iloc[0]["read (tolerant, used)"] == HOSTILE  # whole, as data
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert captions == ["Replies read the tolerant way: none of this method's 2 decisions would be read otherwise "
                        "by the paper's rule."]


def test_rendered_for_several_methods_titled():
    at = AppTest.from_function(_panel, args=("D", "paper", True), default_timeout=60).run()
    assert not at.exception, at.exception
    assert at.info[0].value.replace("\\", "").startswith("BRIDGE: 1 of this method's 3 decisions depends on the "
                                                         "paper's reading: responder: option D (tolerant: ")
    assert [c.value.replace("\\", "") for c in at.caption] == [
        "Replies read by each paper's own rule: no decision of Closed book (2 in all) would be read otherwise by the "
        "tolerant reader."]
