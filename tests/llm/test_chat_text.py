"""``backend.llm.chat_text``: seeing through what chat models wrap around a value (Markdown, chatter, labels, lists,
numbers, JSON, a reply cut off). The readers' own behaviour on whole replies is in ``test_reply_corpus.py``."""

import pytest

from backend.llm import chat_text as ct


def test_plain_removes_markdown_but_not_inside_words_or_numbers():
    text = ("## Answer ##\n**Answer:** __Chicago__ *Bulls* _x_\n> quoted\n```json\n{\"a\": 1}\n```\n---\n"
            "snake_case 2*3*4 a*b")
    assert ct.plain(text).split("\n") == ["Answer", "Answer: Chicago Bulls x", "quoted", "", '{"a": 1}', "", "",
                                          "snake_case 2*3*4 a*b"]
    assert ct.plain("“curly” ‘quotes’\u00a0and\u200b spaces") == "\"curly\" 'quotes' and spaces"
    assert ct.plain("**Answer: X**") == "Answer: X" and ct.plain("**unclosed") == "unclosed"
    assert ct.has_markup("**X**") and not ct.has_markup("It’s plain.")


@pytest.mark.parametrize("text,want", [
    ("Sure! Here is the answer.\n\nAnswer: 3,559 people", "Answer: 3,559 people"),
    ("Certainly!\nParis", "Paris"),
    ("Here's my analysis:\nParis\n\nLet me know if you need anything else.", "Paris"),
    ("Based on the passages provided, here is my answer:\nParis\nI hope this helps!", "Paris"),
    ("Paris\n\nNote: the passages disagree about the answer.", "Paris"),
    ("Sure! Paris.", "Paris."),
    ("Sure!", "Sure!"),                                          # never drop the only content line
    ("Here is the answer: Paris", "Here is the answer: Paris"),  # the value is on that line
    ("Based on the passages, the answer is Paris.", "Based on the passages, the answer is Paris."),
    ("Paris\nNote: Paris is also a city in Texas.", "Paris\nNote: Paris is also a city in Texas."),  # content
])
def test_strip_chatter_is_conservative(text, want):
    assert ct.strip_chatter(text) == want


@pytest.mark.parametrize("text", ["Answer: X", "**Answer:** X", "**Answer**: X", "Answer - X", "answer — X",
                                  "ANSWER: X", "### Answer\n\nX", "**Answer**\nX", "- **Answer:** X", "[Answer]: X",
                                  "Reasoning first. Answer: X", "Agent 1: Answer: X", "__Answer:__ X"])
def test_labelled_reads_every_layout(text):
    assert ct.labelled(text, "Answer") == "X"


def test_labelled_order_and_misses():
    assert ct.labelled("Answer: maybe X\nFinal Answer: Y", "Final Answer", "Answer") == "Y"
    assert ct.labelled("Answer the question carefully.", "Answer") is None
    assert ct.labelled("Answer:\nExplanation: why", "Answer") is None    # the next line is another label
    assert ct.labelled("no label here", "Answer") is None and ct.labelled(None, "Answer") is None
    assert ct.after_label("Explanation: a\nb\nAnswer: X", "Explanation", until=("Answer",)) == "a\nb"


@pytest.mark.parametrize("text,items,kind", [
    ("1. a\n2. b", ["a", "b"], "numbered"),
    ("1) a\n2) b", ["a", "b"], "numbered"),
    ("(1) a\n(2) b", ["a", "b"], "numbered"),
    ("**1.** a\n**2.** b", ["a", "b"], "numbered"),
    ("1. a\n2. b\n\n1. c\n2. d", ["a", "b", "c", "d"], "numbered"),     # restarted numbering
    ("1. **a**\n   - why a\n2. \"b\"", ["a", "b"], "numbered"),          # nested bullets are not items
    ("Q1: a\nQ2: b", ["a", "b"], "tagged"),
    ("Query 1: a\nSub-query 2: b", ["a", "b"], "tagged"),
    ("- a\n* b\n• c", ["a", "b", "c"], "bullets"),
    ("| # | Question |\n|---|---|\n| 1 | a? |\n| 2 | b? |", ["a?", "b?"], "table"),
    ("| Question | Why |\n|:--|:--|\n| a? | x |\n| b? | y |", ["a?", "b?"], "table"),
    ("| 1 | a |\n| 2 | b |", ["a", "b"], "table"),
    ("no list here", [], None),
])
def test_read_list(text, items, kind):
    assert ct.read_list(text) == (items, kind) and ct.list_items(text) == items


@pytest.mark.parametrize("text,value,noted", [
    ("0.8", 0.8, False), (".8", 0.8, False), ("1", 1.0, False), ("0.3.", 0.3, False),
    ("0,8", 0.8, True), ("80%", 0.8, True), ("**70%**", 0.7, True), ("[80%]", 0.8, True), ("(80 %)", 0.8, True),
    ("7/10", 0.7, True), ("8 out of 10", 0.8, True), ("80", 0.8, True), ("250", 1.0, True),
    ("Passage-2 supports it: 0.9", 0.9, True), ("80 percent", 0.8, True),
])
def test_probability(text, value, noted):
    got, note = ct.probability(text)
    assert got == pytest.approx(value) and bool(note) == noted, note


def test_number():
    assert ct.number("3,559 people") == (3559.0, "read '3,559' from '3,559 people'")
    assert ct.number("7/10")[0] == pytest.approx(0.7) and ct.number("80%")[0] == 80.0
    assert ct.number("0,8")[0] == 0.8 and ct.number("42") == (42.0, None)
    assert ct.number("Passage-1 and Q2") is None and ct.number("") is None and ct.probability("high") is None


def test_json_object():
    assert ct.json_object('Here:\n```json\n{"answer": "x", "explanation": "y",}\n```') == {"answer": "x",
                                                                                         "explanation": "y"}
    assert ct.json_object("{'answer': 'x'}") == {"answer": "x"}
    assert ct.json_object('text {"a": {"b": 1}} more') == {"a": {"b": 1}}
    assert ct.json_object("[1, 2]") is None and ct.json_object("{ not json") is None and ct.json_object(None) is None
    assert ct.json_object("{" * 5000) is None and ct.json_object('{"a": ' + "[" * 5000) is None   # never raises


@pytest.mark.parametrize("text,cut", [
    ("Paris", False), ("The answer is Paris.", False), ("1. a\n2. b", False), ("Answer: 1869", False),
    ("Answer: Paris. Explanation: The passages say that the city of Paris is the capital and", True),
    ("1. a\n2.", True), ("```json\n{\"a\": 1", True), ('All Correct Answers: ["a", "b', True),
    ("<DOC>\nHorace Rumbold was", True), ("Answer: X,", True),
])
def test_truncated(text, cut):
    assert ct.truncated(text) is cut
