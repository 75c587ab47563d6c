"""The offline reader answers the question's type or abstains (issue 27 item 7): the answer-type classifier
(``backend.llm.reader.atype``), the reader keeping only typed candidates, the reason in the replies that have room for
one, and the per-kind benchmark (``benchmarks/reader_types.py``)."""

from __future__ import annotations

import json

import pytest

import backend.methods  # noqa: F401  (registers every method's tasks: their readers parse the replies below)
from backend.llm import reader
from backend.llm.offline.handlers import HANDLERS
from backend.llm.reader import atype, read
from backend.llm.reader import reader as pipeline
from backend.llm.tasks import TASKS
from benchmarks.reader_types import main as types_main

MINISTER = "Who is the current Minister of Immigration?"
#: page debris whose only capitalised run is "Meeting Minutes All" (the user's case, shortened)
DEBRIS = ("Meeting Minutes All committee interventions by this member in the last session. "
          "none of the bills were jointly seconded in the last session.")


@pytest.fixture(autouse=True)
def _fresh_caches():
    reader.clear_caches()
    yield
    pipeline.TYPE_CHECK = True
    reader.clear_caches()


@pytest.mark.parametrize("qtype,text,question,ok", [
    ("PERSON", "Meeting Minutes All", "", False),
    ("PERSON", "Ahmed Hussen", MINISTER, True),
    ("PERSON", "Ludwig van Beethoven", "", True),
    ("PERSON", "The Beatles", "Who is the artist of the album?", True),
    ("PERSON", "Family Brown", "Who is the artist of the album?", True),
    ("PERSON", "Columbia Records", "Who is the artist of the album?", True),      # who -> an organisation too
    ("PERSON", "Library of Parliament", MINISTER, False),                       # ... unless only a person can be it
    ("PERSON", "Refugees and Citizenship", MINISTER, False),
    ("PERSON", "Sponsored Jointly Seconded Showing", "", False),
    ("PERSON", "Code of Conduct", "", False),
    ("PERSON", "Piano Quartet No", "", False),
    ("PERSON", "Actually", "", False),
    ("PERSON", "1869", "", False),
    ("DATE", "2 July 1829", "", True),
    ("DATE", "the 1990s", "", True),
    ("DATE", "Ahmed Hussen", "", False),
    ("NUM", "3,559", "", True),
    ("NUM", "twelve", "", True),
    ("NUM", "Texas", "", False),
    ("LOC", "Aguadilla, Puerto Rico", "", True),
    ("LOC", "Open Data", "", False),
    ("WHAT", "psychological thriller", "", True),
    ("DESC", "an English rock band", "", True),
    ("PERSON", "", "", False),
])
def test_answer_type_classifier(qtype, text, question, ok):
    assert atype.fits(qtype, text, question) is ok


def test_missing_reason_and_question_kinds():
    assert atype.missing("PERSON", MINISTER) == "no person named"
    assert atype.missing("PERSON", "Who is the artist of the album?") == "no person or organisation named"
    assert atype.missing("DATE") == "no date given" and atype.missing("NUM") == "no number given"
    kinds = {q: atype.wh_bucket(q) for q in (MINISTER, "When was X born?", "What year was X founded?",
                                            "Where is X located?", "How many buildings are in X?",
                                            "What is the population of X?", "What sport is X associated with?",
                                            "Name the capital of X.")}
    assert list(kinds.values()) == ["who", "when", "when", "where", "how many", "how many", "what", "other"]


def test_who_question_with_no_person_abstains_and_says_why():
    r = read(MINISTER, DEBRIS)
    assert r.answer is None and r.signals["reason"] == "no person named", r.signals
    assert r.signals["wrong_type"] >= 1
    pipeline.TYPE_CHECK = False      # what the check protects: without it the debris is the answer
    reader.clear_caches()
    assert read(MINISTER, DEBRIS).answer == "Meeting Minutes All"


def test_who_question_with_a_person_answers_the_person():
    assert read(MINISTER, DEBRIS + " The current minister is Ahmed Hussen.").answer == "Ahmed Hussen"


def test_when_answers_a_date_and_how_many_a_number():
    passage = ("Oak Hill is a district in Ohio named after Samuel Reed. It was established in 1887 and "
               "encompasses 112 contributing buildings.")
    when = read("When was the Oak Hill district established?", passage).answer
    count = read("How many buildings are in the Oak Hill district?", passage).answer
    assert when == "1887" and atype.is_date(when)
    assert count == "112" and atype.is_number(count)


def test_replies_with_room_for_a_reason_say_it_and_still_parse():
    turn = HANDLERS["debate_turn"]({"question": MINISTER, "passages": [{"text": DEBRIS}], "round": 1,
                                    "history": []})
    assert turn == ("Answer: unknown. Explanation: The document does not answer the question "
                    "(no person named in it).")
    parsed = TASKS["debate_turn"].reader(turn)
    assert parsed.status == "exact" and parsed.value[0] is None
    cf = HANDLERS["cf_answer"]({"question": MINISTER, "passages": [{"text": DEBRIS}, {"text": DEBRIS}]})
    assert cf == "Answer: I don't know.\nEvidence: ## no passage answers the question (no person named in them) ##."
    parsed = TASKS["cf_answer"].reader(cf, question=MINISTER)
    assert parsed.status == "exact" and parsed.value.reject and parsed.value.passages == []
    # a reply with no room for a reason (the baselines' bare answer) stays the bare "I don't know"
    assert HANDLERS["keyword_answer"]({"question": MINISTER, "passages": [{"text": DEBRIS}]}) == "I don't know"


def test_benchmark_prints_the_per_kind_table(capsys):
    assert types_main(["--limit", "4", "--compare"]) == 0
    out = capsys.readouterr().out
    last = json.loads(out.strip().splitlines()[-1])
    assert set(last) == {"unchecked", "checked"} and last["checked"]["n"] == 4
    assert last["checked"]["doc_mismatch"] == 0.0
    for kind in ("who", "when", "where", "how many", "what", "other"):
        assert f"\n{kind:10}" in out
    assert pipeline.TYPE_CHECK is True


@pytest.mark.parametrize("qtype, question, answer", [
    ("PERSON", "Who is the parent company of Google?", "Alphabet Inc"),     # a role word before "company"
    ("PERSON", "Who was the host nation of the 2010 World Cup?", "South Africa"),
    ("PERSON", "Who first reported the story?", "Associated Press"),      # a participle that names an agency
    ("PERSON", "Who played Brandon Walsh?", "Jason Priestly"),             # a surname ending in -ly
    ("PERSON", "Who is the director of Jaws?", "Steven Spielberg"),
    ("DATE", "When was Rome founded?", "753 BC"),                          # a year before 1000
    ("DATE", "When was the church built?", "AD 325"),
])
def test_answers_of_the_right_type_are_kept(qtype, question, answer):
    assert atype.fits(qtype, answer, question)


@pytest.mark.parametrize("qtype, question, answer", [
    ("PERSON", "Who is the current Minister of Immigration?", "Meeting Minutes All"),
    ("PERSON", "Who is the current Minister of Immigration?", "Jointly Owned"),  # debris opening with an adverb
    ("PERSON", "Who is the director of Jaws?", "Universal Pictures Corporation"),
    ("DATE", "When was Rome founded?", "Romulus"),
])
def test_answers_of_another_type_are_refused(qtype, question, answer):
    assert not atype.fits(qtype, answer, question)
