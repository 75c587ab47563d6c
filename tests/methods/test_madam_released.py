"""The real Llama-3.3-70B MADAM-RAG trace (released code's output) loaded into our trace model: the
early-stop case where the last round has no aggregation; and the trace-file loader's errors."""

import json

import pytest

from backend.data import load_dataset
from backend.methods.madam_released import TraceFileError, load_trace_file, trace_from_released
from backend.paths import SAMPLE_DATA
from backend.schema import MethodResult
from tests.conftest import FIXTURES

TRACE = FIXTURES / "madam" / "RAMDocs_test_madam_rag_Llama-3.3-70B-Instruct_rounds3.jsonl"


@pytest.fixture(scope="module")
def ramdocs():
    return load_dataset(SAMPLE_DATA / "ramdocs_dev")


@pytest.fixture(scope="module")
def row():
    return json.loads(TRACE.read_text())


def test_fixture_keeps_its_licence_note():
    assert "MIT License" in (TRACE.parent / "LICENSE").read_text()
    assert "taaha/RAMDocs" in (TRACE.parent / "SOURCE.md").read_text()


def test_released_trace_is_the_early_stop_case(ramdocs, row):
    tr = trace_from_released(row, ramdocs.question("@1"))
    assert tr.origin == "released" and not tr.shuffle and tr.history_mode == "other_agents"
    assert [a.document_id for a in tr.agents] == ["ramdocs-0001-d1", "ramdocs-0001-d2", "ramdocs-0001-d3"]
    assert [[t.answer for t in r.turns] for r in tr.rounds] == [["3,559", "3,506", "10,000"]] * 2
    assert all(t.parse_ok for r in tr.rounds for t in r.turns)
    assert tr.rounds[0].turns[0].raw.startswith("Answer: 3,559. Explanation: To answer the question")
    # round 2: nobody changed; the released run did not aggregate it and reused round 1's aggregation
    assert tr.rounds[1].n_changed == 0 and tr.rounds[1].converged and tr.rounds[1].aggregation is None
    assert (tr.stop_reason, tr.stopped_at, tr.final_round) == ("converged", 2, 1)
    assert "round 1's aggregation is final" in tr.rounds[1].no_aggregation_reason
    assert tr.final_answers == ["3,559", "3,506"] and tr.final_explanation.startswith("Agent 1 provides")
    assert tr.rounds[0].aggregation.raw == row["final_aggregation"]
    assert [(s.answer, s.agents) for s in tr.support] == [("3,559", [1]), ("3,506", [2])]
    assert [(s.answer, s.agents, s.rounds) for s in tr.rejected] == [("10,000", [3], [1, 2])]
    # what agent 1 read in round 2: the other agents' round-1 replies
    assert tr.rounds[1].turns[0].history.splitlines()[0].startswith("Agent 2: Answer: 3,506.")
    assert "Agent 1:" not in tr.rounds[1].turns[0].history
    assert tr.notes == []


def test_released_trace_round_trips_through_json(ramdocs):
    result = load_trace_file(TRACE, ramdocs.question("@1"))
    again = MethodResult.model_validate_json(result.model_dump_json())
    assert again == result and again.trace.kind == "madam" and again.answers == ["3,559", "3,506"]


def test_a_changed_final_aggregation_is_noted(ramdocs, row):
    changed = dict(row, final_aggregation='All Correct Answers: ["3,559"]. Explanation: only 2010.')
    tr = trace_from_released(changed, ramdocs.question("@1"))
    assert tr.final_answers == ["3,559"] and "differs" in tr.notes[0]
    assert [s.answer for s in tr.rejected] == ["3,506", "10,000"]


def test_trace_file_errors_are_clear(ramdocs, tmp_path, row):
    with pytest.raises(TraceFileError, match="has 5 documents"):
        load_trace_file(TRACE, ramdocs.question("@2"))          # 3 agents, 5 documents
    with pytest.raises(TraceFileError, match="cannot read"):
        load_trace_file(tmp_path / "missing.jsonl", ramdocs.question("@1"))
    with pytest.raises(TraceFileError, match="line 2 asked for, the file has 1 lines"):
        load_trace_file(TRACE, ramdocs.question("@1"), line=2)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"round1": {}}\nnot json\n')
    with pytest.raises(TraceFileError, match=r"bad.jsonl:2: not JSON"):
        load_trace_file(bad, ramdocs.question("@1"), line=2)
    with pytest.raises(TraceFileError, match=r"bad.jsonl:1: round1 has 0 answers"):
        load_trace_file(bad, ramdocs.question("@1"))
    other = tmp_path / "other.json"
    other.write_text(MethodResult(method="vanilla_rag", question_id="ramdocs-0001").model_dump_json())
    with pytest.raises(TraceFileError, match="not a MADAM-RAG result"):
        load_trace_file(other, ramdocs.question("@1"))
    ours = tmp_path / "ours.json"
    ours.write_text(json.dumps({"question": {"id": "ramdocs-0001"},
                                "results": {"madam": json.loads(load_trace_file(TRACE, ramdocs.question("@1"))
                                                                .model_dump_json())}}))
    assert load_trace_file(ours, ramdocs.question("@1")).answers == ["3,559", "3,506"]
    with pytest.raises(TraceFileError, match="for question ramdocs-0001; select that question"):
        load_trace_file(ours, ramdocs.question("@2"))


def test_a_non_utf8_file_is_a_trace_file_error(ramdocs, tmp_path):
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b'{"round1": {}}\n{"final_aggregation": "caf\xe9"}\n')
    with pytest.raises(TraceFileError, match=r"latin1.jsonl:2: not UTF-8 text \(at column 27\)"):
        load_trace_file(bad, ramdocs.question("@1"))


@pytest.mark.parametrize("row, problem", [
    ({"round1": 5}, "round1 is a number, expected an object with answers and explanations"),
    ({"round1": [{"a": 1}]}, r"round1 is a list, expected an object with answers and explanations"),
    ({"round1": {"answers": "abc", "explanations": ["x"] * 3}}, "round1.answers is a string, expected a list of"),
    ({"round1": {"answers": ["a", {"b": 1}, "c"], "explanations": ["x"] * 3}},
     r"round1.answers\[1\] is an object, expected a string"),
    ({"round1": {"answers": ["a"] * 3, "explanations": ["x"] * 3, "aggregation": 7}},
     "round1.aggregation is a number, expected a string"),
    ({"round1": {"answers": ["a"] * 3, "explanations": ["x"] * 3}, "final_aggregation": ["y"]},
     "final_aggregation is a list, expected a string"),
])
def test_malformed_released_rows_are_trace_file_errors(ramdocs, tmp_path, row, problem):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"round1": {}}\n' + json.dumps(row) + "\n")
    with pytest.raises(TraceFileError, match=r"rows.jsonl:2: " + problem):
        load_trace_file(path, ramdocs.question("@1"), line=2)
