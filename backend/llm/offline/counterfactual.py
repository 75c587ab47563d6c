"""Counterfactual-prompting (RC-RAG) tasks of the offline model (docs/methods/counterfactual.md §3, §4, §9).

Passages are numbered 0..n-1 in prompt order, as the paper's RAG prompt numbers them (``Passage-0``).
"Support" for an answer = the passages whose reading clusters with it (``answers.cluster``); a "conflict" = a
cluster of passages giving a different answer.

* ``cf_answer``: the answer most passages support; the evidence is the single most relevant supporting
  passage (a model cites where it read the answer; citing one passage is what makes the quality
  counterfactual informative: re-answering without it keeps the answer only when another passage backs it).
* ``cf_quality``: drop the cited passages (``previous_evidence``, 0-based ids; if absent, the most relevant
  passage supporting the previous answer) and answer from the rest the same way; "I don't know" when none
  of the rest answers.
* ``cf_usage``: repeats the previous answer (the overconfidence the paper observed).
* ``cf_judge``: keep when the answer is backed by >= 2 passages and by more passages than any conflicting
  answer, or by one passage of relevance >= ``KEEP_RELEVANCE`` with no conflicting answer; otherwise
  discard. The same rule for both kinds (quality/usage); "I don't know" is always discarded.
* ``cf_probability``: 0.05 + 0.6 * support share (supporting / answering passages) + 0.35 * relevance of the
  best supporting passage, clamped to [0.05, 0.95]; 0.10 for "I don't know".

Prompts (App. C, ``methods.counterfactual.prompts``): one conversation per branch. The first user turn is the RAG
prompt (question, ``Passage-i:`` lines); the model's turns hold its earlier answers only (counterfactual.md §3.0), so
``previous_answer`` is the last of them (the first, the RAG answer, for the direct selection) and the passages the
model cited are not in the prompt: CF-quality sets aside the most relevant passage backing the previous answer (the
one ``cf_answer`` cites for it). The last user turn says which task it is.
"""

from __future__ import annotations

import re

from backend.llm.formats import IDK
from backend.llm.offline.common import (Fields, best_answer, group_answers, known, read_passages,
                                        supporting, type_gap)
from backend.llm.offline.prompt import Prompt, labelled_texts
from backend.llm.offline.registry import PromptReader, register_handlers, register_readers
from backend.llm.reader import Reading

KEEP_RELEVANCE = 0.5


def _top(readings: list[Reading], members: list[int]) -> int:
    return max(members, key=lambda i: (readings[i].relevance, -i))


def _answer_evidence(answer: str | None, cited: int | None, none_reason: str) -> str:
    if answer is None or cited is None:
        return f"Answer: {IDK}.\nEvidence: ## {none_reason} ##."
    return f"Answer: {answer}.\nEvidence: ## Passage-{cited} ##."


def cf_answer(fields: Fields) -> str:
    readings = read_passages(fields)
    answer, members = best_answer(readings)
    cited = _top(readings, members) if members else None
    gap = type_gap(readings, fields["question"])   # "no person named": why nothing answers, when that is why
    return _answer_evidence(answer, cited, "no passage answers the question" + (f" ({gap} in them)" if gap else ""))


def _excluded(fields: Fields, readings: list[Reading]) -> set[int]:
    """Indices (0-based, as the prompt numbers passages) of the previously cited passages."""
    cited = set()
    for v in fields.get("previous_evidence") or []:
        try:
            n = int(v)
        except (TypeError, ValueError):
            continue
        if 0 <= n < len(readings):
            cited.add(n)
    if not cited:
        support = supporting(readings, fields.get("previous_answer"))
        if support:
            cited.add(_top(readings, support))
    return cited


def cf_quality(fields: Fields) -> str:
    readings = read_passages(fields)
    excluded = _excluded(fields, readings)
    rest = [i for i in range(len(readings)) if i not in excluded]
    answer, members = best_answer([readings[i] for i in rest])
    cited = rest[_top([readings[i] for i in rest], members)] if members else None
    return _answer_evidence(answer, cited, "none of the other passages answers the question")


def cf_usage(fields: Fields) -> str:
    previous = fields.get("previous_answer")
    return str(previous).strip() if known(previous) else IDK


def _support(fields: Fields) -> tuple[str | None, list[Reading], list[int], int, int]:
    """(answer, readings, supporting indices, largest conflicting cluster, answering passages)."""
    readings = read_passages(fields)
    answer = fields.get("previous_answer")
    answer = str(answer).strip() if known(answer) else None
    support = supporting(readings, answer)
    others = [r.answer if i not in support else None for i, r in enumerate(readings)]
    conflict = max((len(g.members) for g in group_answers(others)), default=0)
    answering = sum(1 for r in readings if known(r.answer))
    return answer, readings, support, conflict, answering


def cf_judge(fields: Fields) -> str:
    answer, readings, support, conflict, _ = _support(fields)
    if answer is None:
        return "$$ discard $$\nThe answer is \"I don't know\"."
    n = len(support)
    if n >= 2 and n > conflict:
        return f"$$ keep $$\n{n} passages support {answer}, more than any other answer ({conflict})."
    if n == 1 and conflict == 0 and readings[support[0]].relevance >= KEEP_RELEVANCE:
        return f"$$ keep $$\nPassage-{support[0]} supports {answer} and no passage contradicts it."
    if n == 0:
        return f"$$ discard $$\nNo passage supports {answer}."
    if conflict == 0:
        return f"$$ discard $$\nOnly Passage-{support[0]} supports {answer}, and it is barely relevant."
    return (f"$$ discard $$\n{n} passage{'s' if n > 1 else ''} support{'' if n > 1 else 's'} {answer}, "
            f"against {conflict} for a different answer.")


def cf_probability(fields: Fields) -> str:
    answer, readings, support, _, answering = _support(fields)
    if answer is None:
        return "Probability: 0.10"
    share = len(support) / answering if answering else 0.0
    rel = max((readings[i].relevance for i in support), default=0.0)
    p = max(0.05, min(0.95, 0.05 + 0.6 * share + 0.35 * rel))
    return f"Probability: {p:.2f}"


HANDLERS = register_handlers({"cf_answer": cf_answer, "cf_quality": cf_quality, "cf_usage": cf_usage,
                              "cf_judge": cf_judge, "cf_probability": cf_probability})


# ------------------------------------------------------------------------------------------- prompts

_RAG = re.compile(r"Answer the following question from the given passages in one or a few words\. .*?\n"
                  r"Question: (?P<question>.*?)\nPassages: (?P<passages>.*)\nAnswer:\s*", re.S)
_PASSAGE = re.compile(r"Passage-(\d+): ")
_LAST = {
    "cf_quality": re.compile(r"Assume that your answer is wrong because the passages you referred to are of poor "
                             r"quality\. .*\nAnswer:\s*", re.S),
    "cf_usage": re.compile(r"Assume that your answer is wrong because you used the retrieved passages improperly\. "
                           r".*\nAnswer:\s*", re.S),
    "cf_judge": re.compile(r"Your answer is likely to be wrong because the retrieved passages (?:are of poor quality"
                           r"|were used improperly)\. Choose whether to keep or discard this output: .*", re.S),
    "cf_probability": re.compile(r"Give the probability that your regenerated answer is correct\. .*", re.S),
}


def _rag(prompt: Prompt) -> Fields | None:
    """The question and the passages of the RAG prompt that opens the conversation."""
    m = _RAG.fullmatch(prompt.first_user)
    if m is None:
        return None
    texts = labelled_texts(m["passages"], _PASSAGE, 0)
    return None if texts is None else {"question": m["question"], "passages": [{"text": t} for t in texts]}


def _read(task: str):
    def read(prompt: Prompt) -> Fields | None:
        replies = prompt.replies
        if task == "cf_answer":
            if replies or len(prompt.messages) != 1:
                return None
        elif not replies or not _LAST[task].fullmatch(prompt.user):
            return None
        fields = _rag(prompt)
        if fields is None or task == "cf_answer":
            return fields
        if task == "cf_judge":   # the decision is about the RAG answer; the prompt names the branch's factor
            kind = "quality" if "poor quality" in prompt.user else "usage"
            return {**fields, "previous_answer": replies[0], "kind": kind}
        return {**fields, "previous_answer": replies[-1]}
    return read


register_readers(*(PromptReader(task, f"RC-RAG {name}", _read(task)) for task, name in (
    ("cf_answer", "RAG prompt"), ("cf_quality", "CF-quality"), ("cf_usage", "CF-usage"),
    ("cf_judge", "direct selection"), ("cf_probability", "probability"))))
