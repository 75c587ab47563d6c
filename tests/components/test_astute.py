"""Consolidation page shaping on hand-built Astute RAG traces (no Streamlit): well-formed, the model generated
nothing, a failed parse, invalid citations, several answers, word confidences, two rounds, the truth overlay."""

import html
import json

from backend.schema import (
    AstuteDropped,
    AstuteGeneration,
    AstuteGroup,
    AstutePassage,
    AstuteRound,
    AstuteTrace,
    DocLabel,
    Document,
    LLMCall,
    Question,
)
from components import astute as view
from components.safe import md
from tests.test_report_layout import assert_legend_clear_of_axis_titles

Q = Question(id="q1", question="Who wrote The Book?", gold_answers=["Alice"], wrong_answers=["Bob"],
             documents=[Document(id="d1", source="web-a", text="The Book was written by Alice.",
                                 label=DocLabel(type="correct", answer="Alice")),
                        Document(id="d2", source="web-b", text="Bob wrote The Book in 1990.",
                                 label=DocLabel(type="misinfo", answer="Bob")),
                        Document(id="d3", source="web-c", text="Books are printed on paper.",
                                 label=DocLabel(type="noise"))])

# "reversed" order: rank 3, 2, 1, then the internal passage
D0 = [AstutePassage(number=1, origin="external", text=Q.documents[2].text, document_id="d3", source="web-c", rank=3),
      AstutePassage(number=2, origin="external", text=Q.documents[1].text, document_id="d2", source="web-b", rank=2),
      AstutePassage(number=3, origin="external", text=Q.documents[0].text, document_id="d1", source="web-a", rank=1)]
MEMORY = AstutePassage(number=4, origin="internal", text="I recall that Alice wrote The Book.")


def _trace(**kw) -> AstuteTrace:
    base = {"m_hat": 1, "iterations": 1, "order": "reversed", "answer_mode": "single",
            "prompt_mode": "structured", "drop_idk": True, "source_detail": False, "max_tokens": 1024}
    return AstuteTrace(**(base | kw))


def _final(groups, **kw) -> AstuteRound:
    return AstuteRound(round=kw.pop("round", 1), step="consolidate_answer", final=True, raw="<GROUP …>",
                       groups=groups, parse=kw.pop("parse", "structured"), **kw)


G1 = AstuteGroup(id="G1", summary="Alice wrote it (memory and web-a).", documents=[3, 4], stated_source="both",
                 source="mixed", answer="Alice", confidence=0.6, confidence_raw="0.6")
G2 = AstuteGroup(id="G2", summary="Bob wrote it.", documents=[2], stated_source="external", source="external",
                 answer="Bob", confidence=0.3, confidence_raw="0.3")
WELL = _trace(generation=AstuteGeneration(raw="I recall that Alice wrote The Book.", kept=[MEMORY.text]),
              passages=[*D0, MEMORY], rounds=[_final([G1, G2], excluded=[1], conflict=True)],
              final_answers=["Alice"], final_groups=["G1"], answer_parse="tag",
              rationale="Group G1 is confirmed by memory and a web page.")
NOTHING = _trace(generation=AstuteGeneration(raw="I don't know.", dropped=[AstuteDropped(
                     text="I don't know.", reason="an \"I don't know\" statement")]),
                 passages=D0, rounds=[_final([G2.model_copy(update={"confidence": 1.0, "confidence_raw": "1.0"})],
                                             excluded=[1, 3])],
                 final_answers=["Bob"], final_groups=["G2"], answer_parse="tag")
PARSE_FAILED = _trace(generation=AstuteGeneration(raw=MEMORY.text, kept=[MEMORY.text]), passages=[*D0, MEMORY],
                      rounds=[_final([AstuteGroup(id="unparsed", summary="Well, it could be anyone.")],
                                     parse="failed", excluded=[1, 2, 3, 4],
                                     notes=["no group could be parsed: the raw text is kept as one group"])],
                      final_answers=["it could be anyone"], final_groups=[None], answer_parse="last_line",
                      notes=["no <ANSWER> tag: the last line was taken"])
CALLS = [LLMCall(id="c2", step="consolidate_answer", task="consolidate_answer", model="offline/reader",
                 messages=[{"role": "user", "content": "Task: Answer …"}], response="<ANSWER>Alice</ANSWER>",
                 prompt_tokens=300, completion_tokens=80, latency_s=0.25),
         LLMCall(id="c1", step="generate_passages", task="generate_passage", model="offline/reader",
                 messages=[{"role": "user", "content": "Generate a document …"}], response=MEMORY.text,
                 prompt_tokens=40, completion_tokens=12, latency_s=0.1, cache_hit=True)]


def test_config_status_and_cost_lines():
    assert view.config_line(WELL, CALLS) == (
        "m̂ = 1 · t = 1 · order reversed · prompt mode structured · answer mode single · drop \"I don't know\" on · "
        "max 1,024 tokens per call · model offline/reader · 2 calls (t + 1 = 2)")
    assert view.config_line(WELL, CALLS[:1]).endswith("· 1 call (expected 2)")
    assert view.status_line(WELL) == ("D0: 4 passages (3 external + 1 internal) · 1 consolidation round · "
                                      "final: Alice")
    assert view.cost_line(CALLS) == "340 tokens in · 92 out · 0.25 s model time · 1 of 2 from the cache"
    assert view.truncation_warning(WELL) is None
    cut = WELL.model_copy(update={"truncated": True})
    full = [CALLS[0].model_copy(update={"completion_tokens": 1024})]
    assert view.truncation_warning(cut, full).startswith("A reply used its whole budget of 1,024 tokens "
                                                         "(consolidate_answer): it may be cut off")
    no_context = _trace(no_context=True, answer_parse="skipped")
    assert view.status_line(no_context) == view.NO_CONTEXT
    assert view.config_line(no_context, CALLS[1:]).endswith("· 1 call")


def test_calls_frame_orders_the_calls_as_the_method_makes_them():
    frame = view.calls_frame(WELL, CALLS)
    assert list(frame["step"]) == ["generate_passages", "consolidate_answer"]
    assert list(frame["role"]) == ["p_gen: internal passages", "p_ans: round 1 + answers + final pick"]
    assert list(frame["prompt tokens"]) == [40, 300] and list(frame["cached"]) == [True, False]
    assert view.call_role("consolidate_round_2", 3) == "p_con: consolidation round 2"


def test_internal_knowledge_kept_and_generated_nothing():
    kept = view.generation_frame(WELL)
    assert kept.to_dict("records") == [{"status": "kept: internal", "D0 number": "4", "reason": "",
                                        "text": MEMORY.text}]
    assert view.generation_state(WELL) == "Kept 1 of at most m̂ = 1 generated passage, marked internal."
    nothing = view.generation_frame(NOTHING)
    assert nothing.to_dict("records") == [{"status": "dropped", "D0 number": "—",
                                           "reason": "an \"I don't know\" statement", "text": "I don't know."}]
    assert view.generation_state(NOTHING) == view.GENERATED_NOTHING
    assert view.generation_state(_trace(generation=AstuteGeneration(raw=""))) == view.GENERATED_NOTHING_NO_EXTERNAL
    hedged = _trace(generation=AstuteGeneration(raw="x", kept=["Maybe Alice; I don't know."], hedged=[0]),
                    passages=[MEMORY.model_copy(update={"number": 1})])
    assert view.generation_frame(hedged)["status"].tolist() == ["kept: internal (hedged)"]


def test_passages_frame_without_and_with_the_truth():
    frame = view.passages_frame(WELL, Q, show_truth=False)
    assert list(frame.columns) == ["#", "origin", "source", "rank", "document", "final groups", "snippet"]
    assert list(frame["#"]) == [1, 2, 3, 4]
    assert list(frame["origin"]) == ["external", "external", "external", "internal"]
    assert list(frame["source"]) == ["web-c", "web-b", "web-a", "model memory"]
    assert frame["rank"].tolist()[:3] == [3, 2, 1] and frame["rank"].isna().tolist()[3]
    assert list(frame["document"]) == ["d3", "d2", "d1", "—"]
    assert list(frame["final groups"]) == ["excluded", "G2", "G1", "G1"]
    truth = view.passages_frame(WELL, Q, show_truth=True)
    assert list(truth["document type"]) == ["noise", "misinformation", "correct", "internal: no label"]
    assert list(truth["supports"]) == ["—", "Bob", "Alice", "—"]
    assert list(truth["contains gold"]) == [False, False, True, True]
    assert view.retrieval_precision(WELL, Q) == (1, 3)
    assert view.retrieval_precision(WELL, Q.model_copy(update={"gold_answers": []})) is None
    long = WELL.model_copy(update={"passages": [D0[0].model_copy(update={"text": "word " * 100})]})
    assert len(view.passages_frame(long, Q, False)["snippet"][0]) == view.SNIPPET_CHARS


def test_group_cards_badges_and_round_facts():
    rnd = WELL.rounds[0]
    assert view.round_label(rnd) == "Round 1 (final answer call)"
    cards = view.group_cards(rnd, WELL)
    assert [c["id"] for c in cards] == ["G1", "G2"]
    assert cards[0]["cited"] == "3 (external), 4 (internal)" and cards[1]["cited"] == "2 (external)"
    assert (cards[0]["n_internal"], cards[0]["n_external"]) == (1, 1)
    assert cards[0]["badges"] == [("cross-source confirmed", "green"), ("★ final pick", "gray")]
    assert cards[1]["badges"] == [] and not cards[0]["disagrees"]
    assert cards[0]["confidence"] == "0.60 (raw '0.6')"
    facts = view.round_facts(rnd, WELL)
    assert facts["conflict"] and facts["distinct_answers"] == 2
    assert facts["conflict_text"] == "conflict: 2 distinct answers"
    assert facts["excluded"] == "1 (external)" and facts["split"] == "—"
    assert facts["parse"] == "structured tags" and not facts["parse_failed"]
    frame = view.groups_frame(rnd, WELL)
    assert frame.to_dict("records")[1] == {"group": "G2", "cited passages": "2 (external)",
                                           "stated source": "external", "derived source": "external",
                                           "candidate answer": "Bob", "confidence": "0.30 (raw '0.3')",
                                           "summary": "Bob wrote it."}


def test_invalid_citations_unknown_source_split_and_word_confidence():
    bad = AstuteGroup(id="A", summary="?", documents=[], invalid_citations=[9], stated_source="memory",
                      source="unknown", answer="Carol", confidence=0.9, confidence_raw="high",
                      confidence_heuristic=True)
    lying = AstuteGroup(id="B", summary="…", documents=[2, 3], stated_source="memory", source="external",
                        answer="Alice", confidence=None, confidence_raw=None)
    rnd = _final([bad, lying, G1], split=[3], notes=["cited number 9 is out of range (D0 has 4 passages)"])
    trace = _trace(passages=[*D0, MEMORY], rounds=[rnd], final_answers=["Alice"], final_groups=["G1"])
    cards = {c["id"]: c for c in view.group_cards(rnd, trace)}
    assert cards["A"]["cited"] == "9 (no such passage)"
    assert ("invalid citations", "red") in cards["A"]["badges"] and ("heuristic confidence", "orange") in \
        cards["A"]["badges"]
    assert cards["A"]["confidence"] == "0.90 (raw 'high': a word, mapped by heuristic)"
    assert not cards["A"]["disagrees"]  # no valid citation: nothing to contradict
    assert cards["B"]["disagrees"] and cards["B"]["confidence"] == "—"  # stated memory, cites external only
    assert ("cites a split passage", "orange") in cards["B"]["badges"]
    assert view.round_facts(rnd, trace)["split"] == "3 (external)"
    assert view.round_facts(rnd, trace)["notes"] == ["cited number 9 is out of range (D0 has 4 passages)"]
    frame = view.candidates_frame(trace, Q, show_truth=False)
    assert list(frame["confidence"].isna()) == [False, True, False]
    assert list(frame["heuristic"]) == [True, False, False]
    assert view.stated_source("Memory + external retrieval") == "mixed" and view.stated_source("??") is None
    assert view.confidence_text(AstuteGroup(id="x", confidence_raw="very")) == "— (raw 'very': unreadable)"


def test_candidates_frame_and_figure_with_the_truth_overlay():
    frame = view.candidates_frame(WELL, Q, show_truth=False)
    assert frame.to_dict("records") == [
        {"group": "G1", "candidate answer": "Alice", "confidence": 0.6, "confidence raw": "0.6", "heuristic": False,
         "internal passages": 1, "external passages": 1, "final pick": True},
        {"group": "G2", "candidate answer": "Bob", "confidence": 0.3, "confidence raw": "0.3", "heuristic": False,
         "internal passages": 0, "external passages": 1, "final pick": False}]
    fig = view.candidates_figure(WELL, Q, show_truth=False)
    assert fig.layout.title.text == view.CHART_TITLE
    assert [d.name for d in fig.data] == ["confidence", "internal passages", "external passages"]
    assert list(fig.data[0].x) == ["★ group G1: Alice", "group G2: Bob"] and list(fig.data[0].y) == [0.6, 0.3]
    assert list(fig.data[1].y) == [1, 0] and list(fig.data[2].y) == [1, 1]
    assert fig.data[1].marker.color == view.KIND_COLORS["internal"]
    assert fig.data[2].marker.color == view.KIND_COLORS["external"]
    assert fig.layout.xaxis.type == "category" and fig.layout.barmode == "stack"
    assert_legend_clear_of_axis_titles(fig)
    truth = view.candidates_figure(WELL, Q, show_truth=True)
    assert [d.name for d in truth.data][:2] == ["gold answer", "wrong answer"]
    assert truth.data[0].marker.color == view.KIND_COLORS["correct"]
    assert truth.data[1].marker.color == view.KIND_COLORS["misinfo"] and list(truth.data[1].x) == ["group G2: Bob"]
    assert list(view.candidates_frame(WELL, Q, show_truth=True)["verdict"]) == ["gold", "wrong"]


def test_candidate_labels_are_escaped_and_an_empty_round_says_why():
    evil = '<a href="https://evil.example">x</a>'
    trace = WELL.model_copy(update={"rounds": [_final([G1.model_copy(update={"answer": evil})])]})
    fig = view.candidates_figure(trace, Q, show_truth=False)
    assert list(fig.data[0].x) == [html.escape(f"★ group G1: {evil}")]
    assert not any("<a" in str(v) for d in fig.data for v in d.x)
    empty = view.candidates_figure(PARSE_FAILED, Q, show_truth=False)
    assert "No data" in empty.layout.annotations[0].text


def test_final_decision_and_why_facts_well_formed():
    (row,) = view.final_rows(WELL)
    assert row["group"] == "G1" and row["confidence"] == "0.60 (raw '0.6')"
    assert row["facts"] == [
        "Its confidence 0.60 is the highest of 2 candidates.",
        "Source mix: mixed: cross-source confirmed (1 external + 1 internal passages cited, of 4 in D0).",
        "Agrees with the internal passage (4).",
        "Backed by 1 of 3 external passages: no majority, but no other answer has more."]
    frame = view.final_frame(WELL, Q, show_truth=True, support={"Alice": ["d1"]})
    assert frame.to_dict("records") == [{"answer": "Alice", "verdict": "gold", "group": "G1",
                                         "confidence": "0.60 (raw '0.6')", "rests on documents": "d1"}]
    assert view.answer_parse_text(WELL) == "answer parse: tag (read from the <ANSWER> tag)"


def test_why_facts_when_the_pick_is_not_the_most_confident_and_disagrees_with_memory():
    low = G2.model_copy(update={"documents": [1, 2], "confidence": 0.2})
    trace = WELL.model_copy(update={"rounds": [_final([G1, low])], "final_answers": ["Bob"],
                                    "final_groups": ["G2"]})
    facts = view.why_facts(trace, "Bob", "G2")
    assert facts[0] == "Its confidence 0.20 is not the highest: rank 2 of 2; group G1 (Alice) has 0.60."
    assert facts[2] == "Disagrees with the internal passage (4), which backs group G1: Alice."
    assert facts[3] == "Agrees with the majority of external passages: 2 of 3 back it."


def test_generated_nothing_final_facts():
    (row,) = view.final_rows(NOTHING)
    assert row["facts"][0] == "Its confidence 1.00 is the only one given."
    assert "No internal passage to agree with (the model generated nothing)." in row["facts"]
    assert row["facts"][-1] == "Backed by 1 of 3 external passages: no majority, but no other answer has more."


def test_parse_failure_keeps_the_raw_text_and_flags_the_answer():
    rnd = PARSE_FAILED.rounds[0]
    facts = view.round_facts(rnd, PARSE_FAILED)
    assert facts["parse_failed"] and facts["parse"] == "failed" and not facts["conflict"]
    assert facts["excluded"] == "1 (external), 2 (external), 3 (external), 4 (internal)"
    (card,) = view.group_cards(rnd, PARSE_FAILED)
    assert card["id"] == "unparsed" and card["cited"] == "—" and card["derived"] == "unknown"
    assert view.candidates_frame(PARSE_FAILED, Q, False).empty
    (row,) = view.final_rows(PARSE_FAILED)
    assert row["group"] is None and row["confidence"] == "—"
    assert list(view.final_frame(PARSE_FAILED, Q, False)["rests on documents"]) == ["— (no external document)"]
    assert row["facts"][0].startswith("No group proposes this answer (flagged)")
    repeated = PARSE_FAILED.model_copy(update={"notes": [*PARSE_FAILED.notes, f"round 1: {rnd.notes[0]}"]})
    assert view.decision_notes(repeated) == PARSE_FAILED.notes  # shown once, in the round's tab
    assert view.answer_parse_text(PARSE_FAILED) == "answer parse: last_line (no tag: the reply's last line)"
    assert list(view.passages_frame(PARSE_FAILED, Q, False)["final groups"]) == ["excluded"] * 4
    # no group at all (the answer still read from its tag)
    bare = PARSE_FAILED.model_copy(update={"rounds": [_final([], parse="failed")], "final_answers": ["Alice"],
                                           "answer_parse": "tag"})
    assert view.group_cards(bare.rounds[0], bare) == [] and view.round_facts(bare.rounds[0], bare)["groups"] == 0
    assert view.final_frame(bare, Q, False)["group"].tolist() == ["none (flagged)"]


def test_multi_answer_mode_maps_each_answer_to_its_group():
    g3 = AstuteGroup(id="G3", summary="Carol co-wrote it.", documents=[1], source="external", answer="Carol",
                     confidence=0.3, confidence_raw="30%")
    trace = WELL.model_copy(update={"answer_mode": "multi", "rounds": [_final([G1, G2, g3], conflict=True)],
                                    "final_answers": ["Alice", "Carol"], "final_groups": ["G1", "G3"]})
    rows = view.final_rows(trace)
    assert [(r["answer"], r["group"]) for r in rows] == [("Alice", "G1"), ("Carol", "G3")]
    assert rows[1]["facts"][0] == ("Its confidence 0.30 is not the highest: rank 2 of 3, tied with G2; group G1 "
                                   "(Alice) has 0.60.")
    assert rows[0]["facts"][0] == "Its confidence 0.60 is the highest of 3 candidates."
    cards = {c["id"]: c for c in view.group_cards(trace.rounds[0], trace)}
    assert ("★ final pick", "gray") in cards["G3"]["badges"] and ("★ final pick", "gray") not in cards["G2"]["badges"]
    assert list(view.candidates_frame(trace, Q, False)["final pick"]) == [True, False, True]
    frame = view.final_frame(trace, Q, show_truth=True)
    assert list(frame["verdict"]) == ["gold", "other"]


def test_two_rounds_label_the_final_answer_call():
    con = AstuteRound(round=1, step="consolidate_round_1", raw="Document 1 …", groups=[G1, G2], parse="lenient")
    trace = WELL.model_copy(update={"iterations": 2, "rounds": [con, _final([G1], round=2)]})
    assert [view.round_label(r) for r in trace.rounds] == ["Round 1 (p_con)", "Round 2 (final answer call)"]
    assert view.final_round(trace).round == 2
    assert view.round_facts(con, trace)["parse"] == "lenient (paper-format text)"
    apart = con.model_copy(update={"conflict": True, "groups": [g.model_copy(update={"answer": None})
                                                                for g in (G1, G2)]})
    assert view.round_facts(apart, trace)["conflict_text"] == "conflict: 2 separate groups"
    assert view.group_cards(con, trace)[0]["badges"] == [("cross-source confirmed", "green")]  # no pick in p_con
    assert list(view.candidates_frame(trace, Q, False)["group"]) == ["G1"]  # the chart reads the final round
    assert view.call_role("consolidate_answer", 2) == "p_ans: round 2 + answers + final pick"


def test_the_trace_fixtures_round_trip_through_json():
    for trace in (WELL, NOTHING, PARSE_FAILED):
        assert AstuteTrace.model_validate(json.loads(trace.model_dump_json())) == trace


# --- panels, rendered alone with AppTest.from_function ------------------------------------------------------

def _panels(trace_json: str, show_truth: bool):
    import streamlit as st

    from backend.schema import AstuteTrace
    from components import astute
    from tests.components.test_astute import CALLS, Q

    trace = AstuteTrace.model_validate_json(trace_json)
    astute.render_header(st, trace, Q, CALLS, show_truth)
    astute.render_internal(st, trace)
    astute.render_passages(st, trace, Q, show_truth)
    astute.render_rounds(st, trace)
    astute.render_candidates(st, trace, Q, show_truth, "test")
    astute.render_final(st, trace, Q, show_truth, {"Alice": ["d1"]})
    astute.render_calls(st, CALLS, trace.iterations)


def _render(trace: AstuteTrace, show_truth: bool = False):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_panels, args=(trace.model_dump_json(), show_truth), default_timeout=60).run()
    assert not at.exception, at.exception
    return at


def _badges(at) -> list[str]:
    return [m.value for m in at.markdown if "-badge[" in m.value]


def test_panels_render_a_well_formed_trace():
    at = _render(WELL)
    assert [h.value for h in at.subheader] == ["Internal knowledge (call 1, p_gen)",
                                               "Passages D0 = E ⊕ I (as numbered in the prompt)", "Consolidation",
                                               "Candidates and confidence", "Final decision"]
    assert [t.label for t in at.tabs] == ["Round 1 (final answer call)"]
    texts = [t.value for t in at.text]
    assert "Kept 1 of at most m̂ = 1 generated passage, marked internal." in texts
    assert "Group G1 is confirmed by memory and a web page." in texts  # the Step-3 rationale, as text
    assert "Alice  ←  group G1" in texts
    assert any(t.startswith("• Its confidence 0.60 is the highest of 2 candidates.\n• Source mix") for t in texts)
    badges = _badges(at)
    for badge in (":violet-badge[internal]", ":red-badge[conflict: 2 distinct answers]",
                  ":green-badge[cross-source confirmed]", ":gray-badge[★ final pick]",
                  ":blue-badge[parse: structured tags]", ":blue-badge[answer parse: tag]"):
        assert badge in badges, badges
    assert not any("(lenient)" in b for b in badges)  # truth hidden until asked
    assert "document type" not in next(f.value for f in at.dataframe if "snippet" in f.value.columns).columns
    assert [e.label for e in at.expander][-1] == "Raw prompts and outputs (2 calls)"
    assert any(c.value == "Generate a document …" for c in at.code)  # the prompt, verbatim


def test_panels_with_the_truth_overlay():
    at = _render(WELL, show_truth=True)
    badges = _badges(at)
    assert ":green-badge[all gold, no wrong (lenient) ✓]" in badges and ":green-badge[answer match (lenient) ✓]" in badges
    assert ":red-badge[misinformation]" in badges  # the passage list in full carries each document's type
    texts = [t.value for t in at.text]
    assert "Retrieval precision: 1 of 3 external passages contain a gold answer (33%)." in texts
    d0 = next(f.value for f in at.dataframe if "snippet" in f.value.columns)
    assert list(d0["supports"]) == ["—", "Bob", "Alice", "—"]


def test_panels_when_the_model_generated_nothing():
    at = _render(NOTHING)
    assert at.info[0].value == view.GENERATED_NOTHING
    assert ":gray-badge[dropped]" in _badges(at) and ":violet-badge[internal]" not in _badges(at)
    captions = [c.value for c in at.caption]
    assert md("I don't know.") in captions  # the dropped output, greyed (a caption), escaped
    assert "reason: " + md('an "I don\'t know" statement') in captions


def test_panels_when_the_parse_failed():
    at = _render(PARSE_FAILED)
    badges = _badges(at)
    assert ":red-badge[parse: failed]" in badges and ":red-badge[answer parse: last_line]" in badges
    assert ":gray-badge[unknown (no valid citation)]" in badges
    texts = [t.value for t in at.text]
    assert "Note: no group could be parsed: the raw text is kept as one group" in texts
    assert "Note: no <ANSWER> tag: the last line was taken" in texts
    assert "Well, it could be anyone." in texts
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert charts[0]["layout"]["annotations"][0]["text"].startswith("No data")


def test_panels_when_there_was_nothing_to_consolidate():
    at = _render(_trace(no_context=True, answer_parse="skipped",
                        generation=AstuteGeneration(raw="I don't know.")))
    texts = [t.value for t in at.text]
    assert view.NO_CONTEXT in texts and "No consolidation round ran." in texts and "D0 is empty." in texts
    assert ":gray-badge[abstained]" in _badges(at)
