"""The telling cases (backend.cases): each kind found on fixture results, none when absent; the picker's mark; the
featured question the app opens on still holds (recomputed with the offline model)."""

from __future__ import annotations

import json

import pytest

from backend.cases import (FEATURED_FILE, KINDS, by_kind, by_question, featured, featured_question, find_cases, mark,
                           question_cases)
from backend.outputs import AttackRow
from backend.schema import Document, MethodResult, Question
from backend.schema.traces.madam import MadamRound, MadamTrace, MadamTurn

Q = Question(id="q1", question="Who wrote it?", gold_answers=["Alice"], wrong_answers=["Bob"],
             documents=[Document(id="d1", source="wiki", text="Alice wrote it."),
                        Document(id="d2", source="blog", text="Bob wrote it."),
                        Document(id="d3", source="news", text="Alice did.")])


def res(method: str, answers: list[str], support: dict | None = None, **kw) -> MethodResult:
    return MethodResult(method=method, question_id=Q.id, answers=answers, abstained=not answers,
                        support=support or {}, **kw)


def madam(rounds: list[list[str | None]], final: list[str]) -> MethodResult:
    trace = MadamTrace(max_rounds=3, history_mode="full", shuffle=False, seed=0, early_stop=True,
                       rounds=[MadamRound(round=i + 1, turns=[MadamTurn(agent=a + 1, round=i + 1, raw="", answer=x)
                                                              for a, x in enumerate(answers)])
                               for i, answers in enumerate(rounds)])
    return res("madam", final, trace=trace)


def kinds(results, q=Q) -> set[str]:
    return {c.kind for c in question_cases(q, results)}


def test_one_right():
    rs = {"a": res("a", ["Alice"]), "b": res("b", ["Bob"]), "c": res("c", [])}
    cases = question_cases(Q, rs)
    assert [c.kind for c in cases] == ["one_right"]
    assert cases[0].right == ("a",) and set(cases[0].scored) == {"a", "b", "c"}


def test_all_wrong():
    assert kinds({"a": res("a", ["Bob"]), "b": res("b", ["Carol"])}) == {"all_wrong"}


def test_everyone_right_or_one_method_is_no_case():
    assert kinds({"a": res("a", ["Alice"]), "b": res("b", ["alice"])}) == set()
    assert kinds({"a": res("a", ["Bob"])}) == set()          # one method: nothing to compare
    assert kinds({"a": res("a", ["Bob"]), "b": res("b", [], error="boom")}) == set()  # an error is not scored


def test_no_truth_no_truth_kinds():
    q = Q.model_copy(update={"gold_answers": [], "wrong_answers": []})
    assert kinds({"a": res("a", ["Bob"]), "b": res("b", ["Carol"])}, q) == set()


def test_talked_out_of_the_right_answer():
    rs = {"madam": madam([["Alice", "Bob"], ["Bob", "Bob"]], ["Bob"]), "b": res("b", ["Alice"])}
    cases = {c.kind: c for c in question_cases(Q, rs)}
    assert "talked_out" in cases
    assert "agent 1" in cases["talked_out"].why and "round 1" in cases["talked_out"].why
    # kept the right answer to the end: no case
    kept = {"madam": madam([["Alice", "Bob"], ["Alice", "Bob"]], ["Alice", "Bob"]), "b": res("b", ["Alice"])}
    assert "talked_out" not in kinds(kept)


def test_split_by_source():
    rs = {"a": res("a", ["Alice"], {"Alice": ["d1"]}), "b": res("b", ["Bob"], {"Bob": ["d2"]})}
    assert "source_split" in kinds(rs)
    # the two answers rest on a shared source: not a split by source
    shared = {"a": res("a", ["Alice"], {"Alice": ["d1", "d2"]}), "b": res("b", ["Bob"], {"Bob": ["d2"]})}
    assert "source_split" not in kinds(shared)
    # the same answer set: no split at all
    same = {"a": res("a", ["Alice"], {"Alice": ["d1"]}), "b": res("b", ["alice"], {"alice": ["d3"]})}
    assert "source_split" not in kinds(same)


def test_attack_fooled_every_method():
    def row(method, answers, k=3):
        return AttackRow(question_id=f"q1~attack-k{k}", method=method, k=k, attack_of="q1", target="Mallory",
                         result=MethodResult(method=method, question_id="q1~attack", answers=answers))
    fooled = find_cases([Q], {}, [row("a", ["Mallory"]), row("b", ["mallory"]), row("a", ["Alice"], 0)])
    assert [c.kind for c in fooled] == ["attack_fooled"]
    assert find_cases([Q], {}, [row("a", ["Mallory"]), row("b", ["Alice"])]) == []
    assert find_cases([Q], {}, []) == []   # no attack: skipped cleanly


def test_find_cases_by_kind_and_featured():
    results = by_question({("q1", "a"): res("a", ["Alice"]), ("q1", "b"): res("b", ["Bob"])}, ["a", "b"])
    cases = find_cases([Q], results)
    assert set(by_kind(cases)) <= set(KINDS)
    assert featured(cases).kind == "one_right"
    assert featured([]) is None


def test_mark():
    rs = {"a": res("a", ["Alice"]), "b": res("b", ["Bob"]), "c": res("c", [])}
    assert mark(Q, rs, show_truth=False) == "≠3"
    assert mark(Q, rs, show_truth=True) == "≠3 ✓ 1/3"
    assert mark(Q, {"a": res("a", ["Alice"]), "b": res("b", ["alice"])}, show_truth=False) == ""


# --- the question the app opens on ---------------------------------------------------------------------------

@pytest.mark.slow
def test_featured_question_still_holds(ramdocs):
    """sample_data/featured.json (scripts/featured_cases.py) names a telling case of ramdocs_dev: every method run
    on it with the offline model still gives that kind."""
    from backend.llm.client import LLMConfig
    from backend.methods import METHODS
    from backend.runner import Runner

    entry = json.loads(FEATURED_FILE.read_text(encoding="utf-8"))["ramdocs_dev"]
    assert featured_question("ramdocs_dev") == entry["question"]
    q = ramdocs.question(entry["question"])
    results = Runner(ramdocs, llm=LLMConfig(model=entry["model"]), cache=None).run(q, list(METHODS))
    assert entry["kind"] in {c.kind for c in question_cases(q, results)}, (
        f"{q.id} is no longer a {entry['kind']} case: run `python scripts/featured_cases.py`")


def test_featured_question_of_a_dataset_without_one():
    assert featured_question("no such dataset") is None
