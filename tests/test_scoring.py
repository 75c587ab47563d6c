"""Multi-answer metrics (docs/methods/madam.md §3.6, §8.7-8.8): strict exact match, plain accuracy, P/R/F1."""

import pytest

from backend.answers import contains_match
from backend.schema import Document, MethodResult, Question
from backend.scoring import accuracy, answer_kind, counted_wrong, evaluation, precision_recall_f1, strict_em, verdict

GOLD = ["1963", "1956"]
WRONG = ["1998"]


def test_strict_em_needs_every_gold_answer_and_no_wrong_one():
    assert strict_em(["1963", "1956"], GOLD, WRONG)
    assert strict_em(["1956", "February 17, 1963"], GOLD, WRONG)        # containment on word boundaries
    assert not strict_em(["1963"], GOLD, WRONG)                         # one gold answer missing
    assert not strict_em(["1963", "1956", "1998"], GOLD, WRONG)         # a wrong answer included
    assert strict_em(["1963", "1956", "1971"], GOLD, WRONG)             # extra, not-wrong answers are allowed
    assert not strict_em([], GOLD, WRONG) and not strict_em(["unknown"], GOLD, WRONG)
    assert not strict_em(["1963"], [], WRONG)                           # nothing to be right about


def test_strict_em_edge_cases():
    # the token-F1 rule would make "3,559 people" match the wrong answer "10,000 people"
    assert strict_em(["3,559 people"], ["3,559 people"], ["10,000 people"])
    assert strict_em(["3,559"], ["3,559 people"], ["10,000 people"])
    assert not strict_em(["10,000"], ["3,559 people"], ["10,000 people"])
    # a wrong answer equal to a gold answer is ignored (10 RAMDocs rows)
    assert strict_em(["Paris"], ["Paris"], ["Paris", "Lyon"])
    assert not strict_em(["Paris", "Lyon"], ["Paris"], ["Paris", "Lyon"])
    assert strict_em(["The Beatles."], ["beatles"], [])


def test_accuracy_is_any_gold_answer():
    assert accuracy(["1963"], GOLD)
    assert accuracy(["1998", "1956"], GOLD)       # wrong answers are not penalised
    assert not accuracy(["1998"], GOLD) and not accuracy([], GOLD) and not accuracy(["I don't know"], GOLD)


def test_precision_recall_f1():
    assert precision_recall_f1(["1963", "1998"], GOLD) == pytest.approx((0.5, 0.5, 0.5))
    assert precision_recall_f1(["1963", "1956"], GOLD) == pytest.approx((1.0, 1.0, 1.0))
    assert precision_recall_f1(["1963", "1963."], GOLD) == pytest.approx((1.0, 0.5, 2 / 3))  # duplicates once
    assert precision_recall_f1([], GOLD) == (0.0, 0.0, 0.0)


def test_contains_match():
    assert contains_match("3,559", "3,559 people") and contains_match("3,559 people", "3,559")
    assert not contains_match("3,559 people", "10,000 people") and not contains_match("", "x")


# --- verdicts and single answers (the one definition every view uses) -------------------------------------

Q = Question(id="q", question="Who?", gold_answers=["Ann Lee"], documents=[
    Document(id="d1", text="Ann Lee wrote it."), Document(id="d2", text="Bob wrote it.")])


def r(method, answers=(), error=None, support=None):
    return MethodResult(method=method, question_id="q", answers=list(answers), abstained=not answers and not error,
                        error=error, support=support or {})


def test_verdicts():
    assert verdict(r("a", ["ann lee"]), Q) == "correct"
    two = Q.model_copy(update={"gold_answers": ["Ann Lee", "Cy Young"], "wrong_answers": ["Bob"]})
    assert verdict(r("a", ["Ann Lee", "Cy Young"]), two) == "correct"
    assert verdict(r("a", ["Ann Lee"]), two) == "partly correct"        # a gold answer missing
    assert verdict(r("a", ["Ann Lee", "Cy Young", "Bob"]), two) == "partly correct"  # misinformation kept
    assert verdict(r("a", ["Bob"]), Q) == "wrong"
    assert verdict(r("a"), Q) == "abstained"
    assert verdict(r("a", error="boom"), Q) == "error"



def test_verdict_without_gold_answers():
    assert verdict(r("a", ["Ann Lee"]), Q.model_copy(update={"gold_answers": []})) == "no gold answers"


def test_which_wrong_answers_count():
    """A wrong answer equal to, containing or contained in a gold answer is dropped (the module docstring)."""
    assert counted_wrong(["All-girls", "Paris"], ["Girls", "Paris", "Lyon", "Greater Paris", ""]) == ["Lyon"]
    from backend.answers import exact_match
    assert counted_wrong(["All-girls", "Paris"], ["Girls", "Paris", "Lyon"], exact_match) == ["Girls", "Lyon"]
    q = Q.model_copy(update={"gold_answers": ["All-girls"], "wrong_answers": ["Girls", "Co-ed"]})
    assert answer_kind("girls", q) == "gold" and answer_kind("Co-ed", q) == "wrong"
    assert answer_kind("Boys", q) == "other" and answer_kind(None, q) == answer_kind("I don't know", q) == "unknown"
    assert answer_kind("Girls", q, match=exact_match) == "wrong"  # EM taxonomy: only identical answers are dropped


def test_evaluation_lists_what_is_missing_and_wrong():
    q = Q.model_copy(update={"gold_answers": ["1963", "1956"], "wrong_answers": ["1998"]})
    ev = evaluation(["1963", "1998"], q)
    assert (ev["strict_em"], ev["accuracy"], ev["precision"], ev["recall"]) == (False, True, 0.5, 0.5)
    assert ev["missing gold"] == ["1956"] and ev["included wrong"] == ["1998"]


def test_a_correct_answer_with_extras_is_told_apart():
    football = Q.model_copy(update={"gold_answers": ["Football"], "wrong_answers": ["basketball"]})
    assert verdict(r("a", ["football"]), football) == "correct"
    assert verdict(r("a", ["hockey", "football"]), football) == "correct + extras"
    assert strict_em(["hockey", "football"], ["Football"], ["basketball"])   # the paper's strict EM still holds
    assert verdict(r("a", ["basketball", "football"]), football) == "partly correct"  # a listed wrong answer
    assert verdict(r("a", ["American football", "I don't know"]), football) == "correct"  # containment; IDK dropped
