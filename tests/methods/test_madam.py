"""MADAM-RAG: scripted debates (stop rule, mind changes, max rounds, malformed replies, one document),
call graph and concurrency from recorded timestamps, the offline model end to end, truth isolation."""

import json
import re
import time

import pytest

from backend.llm.client import LLMClient, LLMConfig
from backend.llm.providers import scripted
from backend.methods import METHODS
from backend.methods.base import RunContext
from backend.methods.madam import NO_OTHER_AGENTS, MadamRAG, same_answer, shuffled_order
from backend.schema import Document, MethodResult, Question, strip_truth

Q = "In which year was Michael Jordan born?"


def _question(*texts: str, qid: str = "mj") -> Question:
    return Question(id=qid, question=Q, documents=[Document(id=f"{qid}-d{i}", text=t)
                                                    for i, t in enumerate(texts, start=1)])


DOCS = _question("Michael Jeffrey Jordan was born on February 17, 1963.",
                 "Basketball star Michael Jordan was born in 1963 in Brooklyn.",
                 "Michael Jeffrey Jordan was born on February 17, 1998.")


def _ctx(model="scripted/madam", concurrency=8):
    return RunContext(client=LLMClient(LLMConfig(model=model, cache_mode="off",
                                                 concurrency=concurrency)).for_method("madam"))


def agents(table: dict[tuple[int, int], str], delay: float = 0.0):
    """A debate_turn reply per (document number, round); a missing round repeats the last one given."""
    def reply(fields):
        time.sleep(delay)
        doc = int(fields["passages"][0]["id"].rsplit("-d", 1)[1])
        t = fields["round"]
        while (doc, t) not in table and t > 1:
            t -= 1
        return table[(doc, t)]
    return reply


def aggregator(delay: float = 0.0):
    """Keeps the answers given by the most agents (enough to make the bookkeeping visible)."""
    def reply(fields):
        time.sleep(delay)
        answers = [re.search(r"Answer:\s*(.*?)\.\s*Explanation", r).group(1) for r in fields["responses"]
                   if "Explanation" in r]
        known = [a for a in answers if a.lower() != "unknown"]
        kept = [a for a in dict.fromkeys(known) if known.count(a) == max(map(known.count, known))]
        return f"All Correct Answers: {json.dumps(kept)}. Explanation: kept answers given twice or more."
    return reply


def _run(question, table, method=None, **kw) -> tuple[MethodResult, list]:
    with scripted({"debate_turn": agents(table), "aggregate": aggregator()}) as model:
        result = (method or MadamRAG(**kw)).run(question, _ctx())
        return result, model.received


def _steps(result):
    return sorted(c.step for c in result.calls)


A = "Answer: {}. Explanation: my document says so."


def test_convergence_in_round_two_stops_and_reuses_round_one_aggregation():
    table = {(1, 1): A.format("1963"), (2, 1): A.format("1963"), (3, 1): A.format("1998")}
    r, received = _run(DOCS, table)
    assert r.error is None and r.answers == ["1963"] and not r.abstained
    tr = r.trace
    assert (tr.stop_reason, tr.stopped_at, tr.final_round) == ("converged", 2, 1)
    assert [rnd.round for rnd in tr.rounds] == [1, 2]
    assert tr.rounds[1].converged and tr.rounds[1].n_changed == 0 and tr.rounds[1].aggregation is None
    assert "round 1's aggregation is final" in tr.rounds[1].no_aggregation_reason
    assert "Converged at round 2" in tr.final_note
    assert _steps(r) == ["aggregate_round_1"] + ["debate_round_1"] * 3 + ["debate_round_2"] * 3
    assert [(s.answer, s.agents, s.documents) for s in tr.support] == [("1963", [1, 2], ["mj-d1", "mj-d2"])]
    assert [(s.answer, s.agents, s.rounds) for s in tr.rejected] == [("1998", [3], [1, 2])]
    # round 1 reads only the document; round 2 the other agents' raw replies, never its own
    first = [f for f in received if f["task"] == "debate_turn" and f["round"] == 1]
    assert all(f["history"] == [] and len(f["passages"]) == 1 for f in first)
    third = next(f for f in received if f["task"] == "debate_turn" and f["round"] == 2
                 and f["passages"][0]["id"] == "mj-d3")
    assert third["history"] == [f"Agent 1: {A.format('1963')}", f"Agent 2: {A.format('1963')}"]
    # the prompts: [C]'s two agent templates, the App. E aggregator prompt with the responses appended
    first_prompt = next(c for c in r.calls if c.step == "debate_round_1").messages
    later_prompt = next(c for c in r.calls if c.step == "debate_round_2").messages[0]["content"]
    agg_prompt = next(c for c in r.calls if c.step == "aggregate_round_1").messages[0]["content"]
    assert len(first_prompt) == 1 and first_prompt[0]["role"] == "user"
    assert "based only on this document" in first_prompt[0]["content"]
    assert first_prompt[0]["content"].endswith("Please follow the format: 'Answer: {}. Explanation: {}.'")
    assert "The following responses are from other agents as additional information.\nAgent " in later_prompt
    assert 'Please follow the format: "All Correct Answers: []. Explanation: {}."' in agg_prompt
    assert agg_prompt.endswith("Agent responses:\n" + "\n".join(
        f"Agent {a}: {A.format('1998' if a == 3 else '1963')}" for a in tr.rounds[0].aggregation.order))


def test_mind_change_in_round_two_is_recorded_then_converges():
    table = {(1, 1): A.format("1963"), (2, 1): A.format("1963"), (3, 1): A.format("1998"), (3, 2): A.format("1963")}
    r, _ = _run(DOCS, table)
    tr = r.trace
    changed = tr.rounds[1].turns[2]
    assert changed.changed and (changed.previous_answer, changed.answer) == ("1998", "1963")
    assert tr.rounds[1].n_changed == 1 and not tr.rounds[1].converged
    assert [t.changed for t in tr.rounds[1].turns] == [False, False, True]
    assert (tr.stop_reason, tr.stopped_at, tr.final_round) == ("converged", 3, 2)
    assert tr.rounds[1].aggregation is not None and tr.rounds[2].aggregation is None
    assert [(s.answer, s.agents) for s in tr.support] == [("1963", [1, 2, 3])]
    assert [(s.answer, s.agents, s.rounds) for s in tr.rejected] == [("1998", [3], [1])]


def test_max_rounds_reached_aggregates_every_round():
    table = {(1, 1): A.format("1963"), (2, 1): A.format("1963"), (3, 1): A.format("1998"),
             (3, 2): A.format("1956"), (3, 3): A.format("1999")}
    r, _ = _run(DOCS, table)
    tr = r.trace
    assert (tr.stop_reason, tr.stopped_at, tr.final_round) == ("max_rounds", 3, 3)
    assert all(rnd.aggregation is not None for rnd in tr.rounds)
    assert _steps(r).count("aggregate_round_3") == 1 and len(r.calls) == 3 * 3 + 3
    assert "Ran all 3 rounds" in tr.final_note
    one, _ = _run(DOCS, table, max_rounds=1)
    assert (one.trace.stop_reason, one.trace.stopped_at, one.trace.final_round) == ("max_rounds", 1, 1)
    assert len(one.calls) == 4
    # early stop off: every round runs and is aggregated even when nothing changes
    same = {(1, 1): A.format("1963"), (2, 1): A.format("1963"), (3, 1): A.format("1998")}
    off, _ = _run(DOCS, same, early_stop=False)
    assert off.trace.stop_reason == "max_rounds" and off.trace.final_round == 3 and off.trace.rounds[1].converged
    both, _ = _run(DOCS, same, aggregate_converged_round=True)
    assert both.trace.final_round == 2 and both.trace.rounds[1].aggregation is not None


def test_malformed_replies_never_raise_and_are_noted():
    table = {(1, 1): A.format("1963"), (2, 1): "", (3, 1): "I refuse to use your format\nsecond line"}
    with scripted({"debate_turn": agents(table), "aggregate": "the answer is probably 1963"}):
        r = MadamRAG().run(DOCS, _ctx())
    assert r.error is None
    tr = r.trace
    blank, garbage = tr.rounds[0].turns[1], tr.rounds[0].turns[2]
    assert blank.answer is None and not blank.parse_ok
    assert garbage.answer == "I refuse to use your format" and not garbage.parse_ok
    assert "no 'Answer:' found" in garbage.parse_note
    agg = tr.rounds[0].aggregation
    assert agg.answers == [] and not agg.parse_ok and "All Correct Answers" in agg.parse_note
    assert any(n.startswith("round 1, agent 3:") for n in tr.notes)
    assert any(n.startswith("round 1, aggregator:") for n in tr.notes)
    # the same blank and garbage replies again count as unchanged: the debate converges
    assert tr.stop_reason == "converged" and r.answers == [] and r.abstained


def test_stop_test_follows_the_released_code_with_the_unknown_rule():
    assert same_answer("3,559.", "3,559 people")        # normalised containment either way
    assert same_answer("The Beatles", "beatles")
    assert not same_answer("1963", "1998")
    assert same_answer(None, None) and same_answer(None, "")
    assert not same_answer(None, "1963") and not same_answer("1963", None)


def test_one_document_question_still_debates_and_aggregates():
    q = _question("Michael Jeffrey Jordan was born on February 17, 1963.", qid="solo")
    r, received = _run(q, {(1, 1): A.format("1963")})
    tr = r.trace
    assert r.answers == ["1963"] and (tr.stop_reason, tr.stopped_at, tr.final_round) == ("converged", 2, 1)
    assert _steps(r) == ["aggregate_round_1", "debate_round_1", "debate_round_2"]
    round2 = next(c for c in r.calls if c.step == "debate_round_2")
    assert NO_OTHER_AGENTS in round2.messages[0]["content"] and round2.parents == []
    assert tr.rounds[1].turns[0].history == ""
    assert [f["history"] for f in received if f["task"] == "debate_turn"] == [[], []]


def test_no_documents_is_unknown_without_calls():
    q = Question(id="empty", question=Q, documents=[])
    with scripted({}):
        r = MadamRAG().run(q, _ctx())
    assert r.error is None and r.abstained and r.answers == [] and r.calls == []
    assert r.trace.stop_reason == "no_documents" and "No documents" in r.trace.final_note


def test_call_graph_parents_are_the_true_inputs():
    table = {(1, 1): A.format("1963"), (2, 1): A.format("1963"), (3, 1): A.format("1998"), (3, 2): A.format("1963")}
    r, _ = _run(DOCS, table)
    by_step = {}
    for c in r.calls:
        by_step.setdefault(c.step, []).append(c)
    tr = r.trace
    ids = {(t.round, t.agent): t.call_id for rnd in tr.rounds for t in rnd.turns}
    assert all(c.parents == [] for c in by_step["debate_round_1"])
    for t in tr.rounds[1].turns:  # round 2 reads the other agents' round-1 replies, not the aggregation
        call = next(c for c in r.calls if c.id == t.call_id)
        assert sorted(call.parents) == sorted(ids[(1, a)] for a in (1, 2, 3) if a != t.agent)
    agg1 = by_step["aggregate_round_1"][0]
    assert agg1.parents == [ids[(1, a)] for a in tr.rounds[0].aggregation.order]
    assert tr.rounds[0].aggregation.call_id == agg1.id
    # aggregator mode: round 2 reads (and depends on) the round-1 aggregation only
    r2, received = _run(DOCS, table, history_mode="aggregator")
    agg1 = next(c for c in r2.calls if c.step == "aggregate_round_1")
    for c in (c for c in r2.calls if c.step == "debate_round_2"):
        assert c.parents == [agg1.id]
        assert "Aggregator: All Correct Answers:" in c.messages[0]["content"]
    hist = [f["history"] for f in received if f["task"] == "debate_turn" and f["round"] == 2]
    assert all(len(h) == 1 and h[0].startswith("Aggregator: All Correct Answers:") for h in hist)
    r3, _ = _run(DOCS, table, history_mode="both")
    c = next(c for c in r3.calls if c.step == "debate_round_2")
    assert len(c.parents) == 3 and any(p.startswith("madam:aggregate_round_1") for p in c.parents)


def test_shuffle_is_a_deterministic_permutation_and_can_be_turned_off():
    orders = {shuffled_order(6, Q, t, 42, True) == shuffled_order(6, Q, t, 42, True) for t in (1, 2, 3)}
    assert orders == {True}
    assert sorted(shuffled_order(6, Q, 1, 42, True)) == [1, 2, 3, 4, 5, 6]
    assert len({tuple(shuffled_order(6, Q, t, s, True)) for t in (1, 2, 3) for s in (1, 2)}) > 1
    assert shuffled_order(6, Q, 1, 42, False) == [1, 2, 3, 4, 5, 6]
    table = {(1, 1): A.format("1963"), (2, 1): A.format("1963"), (3, 1): A.format("1998")}
    r, received = _run(DOCS, table, shuffle=False)
    agg = next(f for f in received if f["task"] == "aggregate")
    assert [x.split(":")[0] for x in agg["responses"]] == ["Agent 1", "Agent 2", "Agent 3"]
    r, received = _run(DOCS, table, seed=7)
    order = r.trace.rounds[0].aggregation.order
    agg = next(f for f in received if f["task"] == "aggregate")
    assert [x.split(":")[0] for x in agg["responses"]] == [f"Agent {a}" for a in order]
    assert order == shuffled_order(3, Q, 1, 7, True)


def test_paper_defaults_and_registry():
    m = MadamRAG()
    assert (m.max_rounds, m.history_mode, m.shuffle, m.early_stop, m.aggregate_converged_round) == (
        3, "other_agents", True, True, False)
    assert METHODS["madam"] is MadamRAG
    with pytest.raises(ValueError):
        MadamRAG(history_mode="everyone")


# --- concurrency, from the recorded call timestamps -------------------------------------------------

DELAY = 0.3


def _overlap(calls) -> bool:
    """All calls were in flight at one moment, and together took about one delay (not one each)."""
    span = max(c.ended_at for c in calls) - min(c.started_at for c in calls)
    return max(c.started_at for c in calls) < min(c.ended_at for c in calls) and DELAY <= span < 2 * DELAY


def test_agents_of_a_round_run_concurrently():
    q = _question(*[f"Document {i} says Michael Jordan was born in 1963." for i in range(1, 7)], qid="six")
    table = {(i, 1): A.format("1963") for i in range(1, 7)}
    with scripted({"debate_turn": agents(table, DELAY), "aggregate": aggregator(DELAY)}):
        MadamRAG(max_rounds=1).run(q, _ctx())  # warm-up: litellm's first call is slow
        r = MadamRAG(max_rounds=1).run(q, _ctx())
    round1 = [c for c in r.calls if c.step == "debate_round_1"]
    assert len(round1) == 6 and _overlap(round1)  # about one delay, not six


def test_aggregation_overlaps_the_next_round_only_when_the_history_allows():
    table = {(1, 1): A.format("1963"), (2, 1): A.format("1963"), (3, 1): A.format("1998")}
    script = {"debate_turn": agents(table, DELAY), "aggregate": aggregator(DELAY)}
    with scripted(script):
        MadamRAG(max_rounds=1).run(DOCS, _ctx())  # warm-up
        default = MadamRAG(max_rounds=2).run(DOCS, _ctx())
        waits = MadamRAG(max_rounds=2, history_mode="aggregator").run(DOCS, _ctx())
    agg1 = next(c for c in default.calls if c.step == "aggregate_round_1")
    round2 = [c for c in default.calls if c.step == "debate_round_2"]
    assert _overlap(round2 + [agg1])
    agg1 = next(c for c in waits.calls if c.step == "aggregate_round_1")
    round2 = [c for c in waits.calls if c.step == "debate_round_2"]
    assert min(c.started_at for c in round2) >= agg1.ended_at


# --- the offline model, end to end --------------------------------------------------------------

def _offline_ctx():
    return RunContext(client=LLMClient(LLMConfig(cache_mode="off")).for_method("madam"))


def test_offline_model_debate_on_broken_bow(ramdocs):
    q = ramdocs.question("@1")
    r = MadamRAG().run(strip_truth(q), _offline_ctx())
    assert r.error is None and r.answers == ["3,559"]
    assert r.trace.stop_reason == "converged" and r.trace.final_round == 1
    assert r.trace.support[0].agents == [1, 2]
    assert all(c.task in ("debate_turn", "aggregate") for c in r.calls)


def test_offline_model_minority_agent_changes_its_mind():
    from tests.llm.test_offline_tasks import BORN_1869, BORN_1869_B, BORN_1872, NOISE, Q_BORN

    q = _question(BORN_1869, BORN_1872, BORN_1869_B, NOISE, qid="hr").model_copy(update={"question": Q_BORN})
    r = MadamRAG().run(q, _offline_ctx())
    tr = r.trace
    assert r.error is None and [t.answer for t in tr.rounds[0].turns] == [
        "5 February 1869", "5 February 1872", "1869", None]
    switched = tr.rounds[1].turns[1]
    assert switched.changed and switched.previous_answer == "5 February 1872" and "1869" in switched.answer
    assert "revise my answer" in switched.explanation
    assert (tr.stop_reason, tr.stopped_at, tr.final_round) == ("converged", 3, 2)
    assert len(r.answers) == 1 and "1869" in r.answers[0]
    assert [(s.answer, s.agents, s.rounds) for s in tr.rejected] == [("5 February 1872", [2], [1])]
