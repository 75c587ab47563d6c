"""RA-RAG's two readings of one source's keyword reply (``backend.methods.reading``): what the misalignment filter
f_align scores and, when it keeps it, what the vote counts.

* ``tolerant`` (the default; the project's reader): ``backend.llm.formats.parse_short_answer`` cleans the reply
  first (Markdown, "Answer:" labels, "The answer is X.", a JSON "answer" key, a refusal sentence read as "I don't
  know"), and f_align scores the cleaned answer. "The answer is Gustave Eiffel." is read as "Gustave Eiffel",
  scored 1.0 against documents naming him, and kept.
* ``paper``: f_align scores the reply as the authors' released code passes it to its filter. The paper's Algorithm
  1 line 3 applies f_align to ỹ_i = LLM(q, R(q, S_i), P_keyword) itself, the model's output, and adds no keyword
  post-processing (paper §3.1, App. E). The released code (ml-postech/RA-RAG) makes ỹ_i with ``inference``, which
  reads each generation with ``src/utils.py: extract_final_answer``: lower-case, "answer:" deleted, the articles
  a / an / the deleted (``re.sub(r"\\b(a|an|the)\\b", "", …)``), stripped, one trailing "." dropped, an empty
  result -> "I don't know". That string is what ``convert_to_valid_answer`` filters (``src/reliability_utils.py``)
  and, when kept, what ``weighted_majority_voting`` counts. "The answer is Gustave Eiffel." is read as "answer is
  gustave eiffel": its ROUGE-1 precision is 2/4 = 0.5 against documents that name Gustave Eiffel but not "answer"
  or "is", under the paper's τ = 0.9, so the paper's f_align discards it (IDK).
  IDK: the released vote skips an answer that contains "i don't know" (``"i don't know" in answer``), so a reply
  whose cleaned text contains it is IDK, and nothing else is ("Unknown" is scored by f_align like any answer).

What stays one rule for both readings ([ours] unless marked):

* The filter itself: the paper's f_align (ROUGE-1 precision ≥ τ = 0.9, §3.2) with our tokeniser (lower-cased
  Unicode ``\\w+``, clipped counts, the source's documents concatenated; docs/methods/ra_rag.md §8.9). The released
  code filters with AlignScore (an NLI model, threshold 0.5) instead; the paper reading keeps the paper's metric
  and takes from the released code only what reaches the filter.
* Answer equality in the vote: SQuAD normalisation of the kept answer (§3.5, §8.17). The released code compares
  the cleaned strings exactly; the two differ only in inner punctuation and spacing ("3,559" vs "3559").
* The entailment judge (App. I, ``clustering="entailment"``): our prompt asks "yes"/"no" (the paper gives no
  prompt, its code uses a DeBERTa NLI model, no reply to read), so its reply is read by ``parse_yes_no`` in both
  readings (``Readings.same``).

``answering.tolerant_reading`` / ``answering.paper_reading`` apply f_align to each reading's answer. A decision is
one source's answer to one question (``answering.answer_source``): the kept answer's vote key (its cluster),
None for IDK. ``key`` compares those, so a difference in wording that votes alike ("Gustave Eiffel" vs "gustave
eiffel") is not a difference.
"""

from __future__ import annotations

import re

from backend.llm.formats import Parsed, exact, lenient, parse_short_answer, unreadable

#: The released code's IDK string (``"i don't know" in answer``: the vote skips such an answer).
RELEASED_IDK = "i don't know"
_ARTICLE = re.compile(r"\b(a|an|the)\b")


def released_answer(reply: str) -> str:
    """``extract_final_answer`` of the released code (``src/utils.py``), character for character: the string its
    filter scores and its vote counts."""
    clean = (reply or "").lower().replace("answer:", "")
    clean = _ARTICLE.sub("", clean)
    clean = clean.strip().lower()
    if len(clean) > 1 and clean[-1] == ".":
        clean = clean[:-1]
    return clean or "I don't know"


def released_idk(answer: str) -> bool:
    """The released vote's IDK test: the (cleaned) answer contains "i don't know". [ours] Compared in lower case:
    every cleaned answer is lower case but the "I don't know" ``released_answer`` returns for an empty reply, which
    the released test (case-sensitive) would count as an answer; we read its intent, IDK."""
    return RELEASED_IDK in answer.lower()


def read_tolerant(reply: str) -> Parsed[str | None]:
    """The project's keyword reader (``parse_short_answer``): the answer, or None for "I don't know"."""
    return parse_short_answer(reply or "")


def read_paper(reply: str) -> Parsed[str | None]:
    """The released code's reading of the reply (``released_answer``), None when it is IDK. Exact when that
    changed nothing but case, else lenient, with what it changed in the note."""
    answer = released_answer(reply)
    if not (reply or "").strip():
        return unreadable(None, "empty reply; the method used its default: I don't know (abstain)")
    if released_idk(answer):
        return exact(None) if answer == RELEASED_IDK else lenient(None, "the reply contains \"i don't know\": IDK "
                                                                        "(the released code's test)")
    if answer == (reply or "").strip().lower():
        return exact(answer)
    return lenient(answer, "read as the released code does: lower case, 'answer:' and articles deleted, a final "
                           "'.' dropped")


__all__ = ["RELEASED_IDK", "read_paper", "read_tolerant", "released_answer", "released_idk"]
