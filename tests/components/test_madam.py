"""Debate page shaping on hand-built traces and the real released trace (no Streamlit)."""

import json

import pytest

from backend.data import load_dataset
from backend.methods.madam import check_convergence, finalize, parse_aggregation, parse_turn
from backend.methods.madam_released import trace_from_released
from backend.paths import SAMPLE_DATA
from backend.schema import DocLabel, Document, LLMCall, MadamAgent, MadamRound, MadamTrace, Question
from components import madam as view
from tests.conftest import FIXTURES

Q = Question(id="mj", question="In which year was Michael Jordan born?", gold_answers=["1963", "1956"],
             wrong_answers=["1998"],
             documents=[Document(id="d1", text="born 1963", label=DocLabel(type="correct", answer="1963")),
                        Document(id="d2", text="born 1956", label=DocLabel(type="correct", answer="1956")),
                        Document(id="d3", text="born 1998", label=DocLabel(type="misinfo", answer="1998")),
                        Document(id="d4", text="college", label=DocLabel(type="noise"))])


def _trace(answers_by_round, aggregations, stop_reason="converged") -> MadamTrace:
    """A trace built with the method's own steps: answers per round per agent; aggregations per round."""
    tr = MadamTrace(max_rounds=3, history_mode="other_agents", shuffle=True, seed=42, early_stop=True,
                    agents=[MadamAgent(number=i, document_id=f"d{i}") for i in range(1, 5)])
    previous = None
    for t, answers in enumerate(answers_by_round, start=1):
        turns = [parse_turn(i, t, f"Answer: {a}. Explanation: because." if a else "???", None, f"c{t}{i}")
                 for i, a in enumerate(answers, start=1)]
        rnd = MadamRound(round=t, turns=turns)
        if previous is not None:
            check_convergence(rnd, previous)
        if aggregations.get(t) is not None:
            rnd.aggregation = parse_aggregation(t, [3, 1, 4, 2], aggregations[t], f"a{t}")
        tr.rounds.append(rnd)
        previous = rnd
    tr.stopped_at, tr.stop_reason = len(answers_by_round), stop_reason
    finalize(tr)
    return tr


AGG = 'All Correct Answers: ["1963", "1956"]. Explanation: Agent 3 is misinformation.'
MIND_CHANGE = _trace([["1963", "1956", "1998", "unknown"], ["1963", "1956", "1963", "unknown"],
                      ["1963", "1956", "1963", "unknown"]], {1: AGG, 2: AGG})


def test_grid_shows_answers_changes_and_trajectories():
    frame = view.grid_frame(MIND_CHANGE, Q, show_truth=False)
    assert list(frame.columns) == ["agent", "document", "round 1", "round 2", "round 3", "trajectory"]
    assert list(frame["round 1"]) == ["1963", "1956", "1998", "unknown"]
    assert frame.loc[2, "round 2"] == "↻ 1963 (was 1998)" and frame.loc[2, "round 3"] == "1963"
    assert list(frame["trajectory"]) == ["1963", "1956", "1998 → 1963", "unknown"]
    truth = view.grid_frame(MIND_CHANGE, Q, show_truth=True)
    assert list(truth["document type"]) == ["correct", "correct", "misinfo", "noise"]
    assert list(truth["document supports"]) == ["1963", "1956", "1998", "—"]


def test_grid_colours_changes_without_truth_and_answer_kinds_with_it():
    plain = view.grid_colors(MIND_CHANGE, Q, show_truth=False)
    coloured = [(i, c) for c in plain.columns for i in plain.index if plain.loc[i, c]]
    assert coloured == [(2, "round 2")] and "font-weight: bold" in plain.loc[2, "round 2"]
    truth = view.grid_colors(MIND_CHANGE, Q, show_truth=True)
    assert truth.loc[2, "round 1"].startswith(f"background-color: {view.ANSWER_COLORS['wrong']}")
    assert truth.loc[0, "round 1"].startswith(f"background-color: {view.ANSWER_COLORS['gold']}")
    assert truth.loc[3, "round 3"].startswith(f"background-color: {view.ANSWER_COLORS['unknown']}")
    assert truth.loc[0, "agent"] == ""
    assert view.styled_grid(MIND_CHANGE, Q, True).data.shape == truth.shape


def test_rounds_frame_marks_the_stop_and_counts_calls():
    calls = [LLMCall(id=f"x{i}", step=step, task="t", model="m", messages=[], prompt_tokens=10,
                     completion_tokens=5, latency_s=0.5)
             for i, step in enumerate(["debate_round_1"] * 4 + ["aggregate_round_1"] + ["debate_round_3"] * 4)]
    frame = view.rounds_frame(MIND_CHANGE, calls)
    assert list(frame["agents changed"]) == ["—", "1", "0"]
    assert frame.loc[0, "stop test"].startswith("—") and frame.loc[1, "stop test"] == "failed: 1 changed"
    assert frame.loc[2, "stop test"] == "passed: no agent changed"
    assert list(frame["aggregation"]) == ["yes", "final", "none"]
    assert list(frame["stop"]) == ["", "", "■ stop"]
    assert list(frame["agent calls"]) == [4, 0, 4] and list(frame["aggregator calls"]) == [1, 0, 0]
    assert frame.loc[0, "prompt tokens"] == 50 and frame.loc[0, "model s"] == 2.5


def test_aggregation_rows_say_which_is_final_and_why_the_last_is_missing():
    rows = view.aggregation_rows(MIND_CHANGE)
    assert [r["final"] for r in rows] == [False, True, False]
    assert rows[0]["answers"] == "1963; 1956" and rows[0]["order"].startswith("Agent 3 (d3), Agent 1 (d1)")
    assert rows[2]["answers"] is None and "round 2's aggregation is final" in rows[2]["note"]
    assert view.status_line(MIND_CHANGE) == "stopped at round 3 of 3: converged · final aggregation: round 2"


def test_final_and_rejected_answers_with_truth_tags():
    final = view.final_frame(MIND_CHANGE, Q, show_truth=True)
    assert final.to_dict("records") == [
        {"answer": "1963", "agents": "Agent 1, Agent 3", "documents": "d1, d3", "document types": "correct, misinfo",
         "verdict": "gold"},
        {"answer": "1956", "agents": "Agent 2", "documents": "d2", "document types": "correct", "verdict": "gold"}]
    rejected = view.rejected_frame(MIND_CHANGE, Q, show_truth=True)
    assert rejected.to_dict("records") == [{"answer": "1998", "agents": "Agent 3", "documents": "d3",
                                            "rounds": "1", "document types": "misinfo",
                                            "tag": "misinfo-suppressed"}]
    assert "tag" not in view.rejected_frame(MIND_CHANGE, Q, show_truth=False).columns
    missed = _trace([["1963", "1956", "1998", "unknown"], ["1963", "1956", "1998", "unknown"]],
                    {1: 'All Correct Answers: ["1963"]. Explanation: x'})
    tags = {r["answer"]: r["tag"] for r in view.rejected_frame(missed, Q, True).to_dict("records")}
    assert tags == {"1956": "valid-but-missed", "1998": "misinfo-suppressed"}


def test_evaluation_badge_numbers():
    ev = view.evaluation(MIND_CHANGE.final_answers, Q)
    assert ev["strict_em"] and ev["accuracy"] and (ev["precision"], ev["recall"], ev["f1"]) == (1.0, 1.0, 1.0)
    ev = view.evaluation(["1963", "1998"], Q)
    assert not ev["strict_em"] and ev["accuracy"]
    assert ev["missing gold"] == ["1956"] and ev["included wrong"] == ["1998"]


def test_malformed_turn_is_flagged_in_the_grid():
    tr = _trace([["1963", None, "1998", "unknown"], ["1963", None, "1998", "unknown"]], {1: AGG})
    frame = view.grid_frame(tr, Q, False)
    assert frame.loc[1, "round 1"] == "??? ⚠"
    assert any("agent 2" in n for n in tr.notes)


@pytest.fixture(scope="module")
def released():
    q = load_dataset(SAMPLE_DATA / "ramdocs_dev").question("@1")
    row = json.loads((FIXTURES / "madam" / "RAMDocs_test_madam_rag_Llama-3.3-70B-Instruct_rounds3.jsonl").read_text())
    return q, trace_from_released(row, q)


def test_released_trace_shapes(released):
    q, tr = released
    assert list(view.grid_frame(tr, q, False)["round 2"]) == ["3,559", "3,506", "10,000"]
    rounds = view.rounds_frame(tr, [])
    assert list(rounds["aggregation"]) == ["final", "none"] and "agent calls" not in rounds.columns
    assert view.status_line(tr) == "stopped at round 2 of 3: converged · final aggregation: round 1"
    assert "released" in view.config_line(tr) and "in agent order" in view.config_line(tr)
    assert view.evaluation(tr.final_answers, q)["strict_em"]


# --- panels, rendered alone with AppTest.from_function ------------------------------------------------------

def _final_panel(show_truth: bool):
    import json

    import streamlit as st

    from backend.data import load_dataset
    from backend.methods.madam_released import trace_from_released
    from backend.paths import SAMPLE_DATA
    from components.madam import render_final
    from tests.conftest import FIXTURES

    q = load_dataset(SAMPLE_DATA / "ramdocs_dev").question("@1")
    row = json.loads((FIXTURES / "madam" / "RAMDocs_test_madam_rag_Llama-3.3-70B-Instruct_rounds3.jsonl").read_text())
    render_final(st, trace_from_released(row, q), q, show_truth)


def test_final_panel_renders_alone():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_final_panel, args=(True,), default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert [h.value for h in at.subheader] == ["Final answers"]
    badges = [m.value for m in at.markdown if "-badge[" in m.value]
    assert ":green-badge[all gold, no wrong (lenient) ✓]" in badges
    at = AppTest.from_function(_final_panel, args=(False,), default_timeout=60)
    at.run()
    assert not [m.value for m in at.markdown if "(lenient)" in m.value]  # no truth until asked
