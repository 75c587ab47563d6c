"""The reply corpus (``tests/llm/replies``): every reader reads realistic chat-model replies -- GPT-4o's bold labels
and preambles, Claude's "Based on the passages…" and closing remarks, Llama 3's "**Answer:**" and numbered lists,
Qwen's JSON or terse replies, replies cut at the token limit, tables where a list was asked, and replies with
nothing to read -- to the value it must yield, with an honest status (exact / lenient / unreadable)."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from tests.llm.replies.corpus import FAMILIES, Case, families, load, pick, problems, resolve

CASES = load()
MIN_PER_READER = 15


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_reply_reads_as_expected(case: Case):
    assert not problems(case), problems(case)


def test_every_reader_has_enough_cases_in_several_styles():
    """Per file (one reader, or one task of a reader shared by several: RC-RAG's answer, CF-quality, CF-usage)."""
    per_file = Counter(c.file for c in CASES if not c.error)
    assert per_file and all(n >= MIN_PER_READER for n in per_file.values()), per_file
    for file in per_file:
        mine = [c for c in CASES if c.file == file]
        covered = set().union(*map(families, mine))
        assert set(FAMILIES) <= covered, (file, covered)
        assert {"exact", "lenient", "unreadable"} <= {c.status for c in mine}, (file, Counter(c.status for c in mine))


def test_case_ids_are_unique():
    names = Counter(c.name for c in CASES)
    assert not [n for n, k in names.items() if k > 1]


def test_the_runner_takes_any_reader_by_dotted_path(tmp_path):
    """Another helper's readers join by adding a file: the runner knows no reader, and it catches a wrong value,
    a wrong status and an unreadable read that names no default."""
    (tmp_path / "toy.yaml").write_text(
        "reader: backend.llm.formats:parse_yes_no\n"
        "cases:\n"
        "  - {id: right, family: qwen, reply: 'Yes', expect: {value: true}, status: exact}\n"
        "  - {id: wrong-value, family: qwen, reply: 'No', expect: {value: true}, status: exact}\n"
        "  - {id: wrong-status, family: qwen, reply: '**Yes**', expect: {value: true}, status: exact}\n"
        "  - id: other-reader\n"
        "    family: qwen\n"
        "    reader: backend.methods.counterfactual.parse:read_cf_reply\n"
        "    kwargs: {n_passages: 2}\n"
        "    reply: 'Answer: Paris. Evidence: ## Passage-1 ##'\n"
        "    expect: {value.answer: Paris, value.passages: [1]}\n"
        "    status: exact\n", encoding="utf-8")
    cases = {c.id: c for c in load(tmp_path)}
    assert not problems(cases["right"]) and not problems(cases["other-reader"])
    assert any("value" in p for p in problems(cases["wrong-value"]))
    assert any("status" in p for p in problems(cases["wrong-status"]))
    assert pick(resolve("backend.llm.formats:parse_agent_response")("Answer: X. Explanation: Y"), "value[1]") == "Y"


def test_readers_are_total_and_fast_on_long_and_hostile_replies():
    """Readers run on every call: no catastrophic backtracking on long runs of markup, digits or labels."""
    hostile = ["*" * 20000, "_a" * 10000, "#" * 5000 + "\n", "1." * 10000, "Answer: " * 3000, "$$ keep " * 3000,
               "| a " * 5000 + "|\n|---|\n", "{" * 5000, "9" * 20000, "Passage-" * 3000, ("word " * 4000) + ",",
               "**Answer:** " + "x " * 10000, "[" * 3000, '{"a": [' * 1000,
               "All Correct Answers: " + "[" * 3000 + "]" * 3000, "0," * 5000, "## " * 5000, "*a " * 5000,
               # a model looping on whitespace up to its token limit (local models in JSON mode do)
               "Answer: Paris" + " " * 50000 + "x", "x" + "\t" * 50000 + "x", "x" + " " * 50000 + "x!", "{" + "\n" * 50000,
               " " * 50000 + "x!", "\n \n" * 20000, "$" * 50000 + "keep"]
    failures = []
    for reader in sorted({c.reader for c in CASES if not c.error}):
        kwargs = next(c.kwargs for c in CASES if c.reader == reader)
        for text in hostile:
            start = time.process_time()
            try:
                resolve(reader)(text, **kwargs)
            except Exception as exc:  # noqa: BLE001 - a reader must never raise: report which one did
                failures.append((reader, text[:12], f"raised {type(exc).__name__}"))
            if time.process_time() - start > 2.0:
                failures.append((reader, text[:12], "took over 2 s of CPU"))
    assert not failures, failures
