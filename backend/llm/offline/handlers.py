"""Task handlers of the offline model: task fields in, reply text in the task's format out.

Each handler is a pure function of the fields (deterministic; no ground truth is ever among them).
General tasks live here; a method's own tasks in its module beside this one, each registering its handlers
(``registry.register_handlers``). ``HANDLERS`` is the complete mapping once the package is imported.
"""

from __future__ import annotations

from backend.answers import matches
from backend.llm.formats import IDK, is_idk
from backend.llm.offline.common import (Fields, as_int, best_answer, memory_text, passage_texts,
                                        read_passages)
from backend.llm.offline.registry import HANDLERS, register_handlers
from backend.llm.reader import read

__all__ = ["HANDLERS", "Fields", "best_answer", "passage_texts", "read_passages"]


def closed_book(fields: Fields) -> str:
    """Answer from memory only; "I don't know" without memory."""
    memory = memory_text(fields)
    if not memory:
        return IDK
    return read(fields["question"], memory).answer or IDK


def keyword_answer(fields: Fields) -> str:
    """The answer most passages support, or "I don't know"."""
    answer, _ = best_answer(read_passages(fields))
    return answer or IDK


def entailment(fields: Fields) -> str:
    """"Yes" when the two answers match (``answers.matches``: containment or token F1 >= 0.5), else "No".
    "I don't know" entails only "I don't know" (never merged with a real answer)."""
    premise, hypothesis = str(fields.get("premise") or ""), str(fields.get("hypothesis") or "")
    if is_idk(premise) or is_idk(hypothesis):
        return "Yes" if is_idk(premise) and is_idk(hypothesis) else "No"
    return "Yes" if matches(premise, hypothesis) else "No"


def generate_passage(fields: Fields) -> str:
    """The memory passage (one ``<DOC>`` block when more than one passage may be written), else
    "I don't know"."""
    memory = memory_text(fields)
    if not memory:
        return IDK
    if as_int(fields.get("max_passages"), 1) > 1:
        return f"<DOC>\n{memory}\n</DOC>"
    return memory


register_handlers({
    "ping": lambda fields: "ready",
    "closed_book": closed_book,
    "keyword_answer": keyword_answer,
    "entailment": entailment,
    "generate_passage": generate_passage,
})
