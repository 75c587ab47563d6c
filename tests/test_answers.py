"""Multi-answer metrics (madam-rag.md §3.6, §8.7-8.8): strict exact match, plain accuracy, P/R/F1."""

import pytest

from backend.answers import accuracy, contains_match, precision_recall_f1, strict_em

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
