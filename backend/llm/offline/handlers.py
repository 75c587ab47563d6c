"""Task handlers of the offline model: task inputs in, reply text in the task's format out.

Each handler is a pure function of the inputs (deterministic; no ground truth is ever among them), which the model
reads from the prompt (``prompt.recognise``). General tasks live here, with the readers of the baselines' prompts
and ``respond_to_prompt`` for a prompt no template matches; a method's own tasks and templates in its module beside
this one, each registering its handlers (``registry.register_handlers``) and readers (``registry.register_readers``).
``HANDLERS`` is the complete mapping once the package is imported.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from backend.answers import matches
from backend.llm.formats import IDK, is_idk
from backend.llm.offline.common import (Fields, as_int, best_answer, memory_text, passage_texts,
                                        read_passages)
from backend.llm.offline.knowledge import remember_question
from backend.llm.offline.prompt import Prompt, labelled_texts, matcher, single_word, split_prompt
from backend.llm.offline.registry import HANDLERS, PromptReader, register_handlers, register_readers
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


# ------------------------------------------------------------------------------------------- prompts

def respond_to_prompt(prompt: Prompt, memory: Callable[[str], str | None]) -> str:
    """A prompt no template matches, answered as a bare prompt: "reply with the single word: X" -> X; a
    ``Context:`` -> the answer read from it; otherwise the ``Question:`` (or last line) closed book, from
    ``memory(question)``, the model's own knowledge."""
    text = prompt.user
    if (word := single_word(text)) is not None:
        return word
    question, context = split_prompt(text)
    if context:
        return keyword_answer({"question": question, "passages": [context]})
    return closed_book({"question": question, "memory": memory(question)})


#: The baselines' system prompt (``methods.baselines.SYSTEM``); the documents prompt adds its last sentence.
_BASELINE = (r"Answer the question with only the essential keywords, without explanations\. If you do not "
             r"confidently know the answer, just say \"I don't know\"\.")
_DOCUMENT = re.compile(r"Document (\d+): ")


def _system(pattern: str) -> Callable[[Prompt], bool]:
    compiled = re.compile(pattern, re.S)
    return lambda prompt: compiled.fullmatch(prompt.system) is not None


_closed_book_system = _system(_BASELINE)
_documents_system = _system(_BASELINE + r" Use only the given documents, not internal knowledge\.")


def _documents(block: str) -> list[dict[str, str]] | None:
    """``Document 1: …`` lines (a document may span lines); [] for an empty block."""
    texts = labelled_texts(block, _DOCUMENT, 1)
    return None if texts is None else [{"text": t} for t in texts]


def _closed_book(m: re.Match[str], prompt: Prompt) -> Fields | None:
    return {"question": m["question"]} if _closed_book_system(prompt) else None


def _vanilla(m: re.Match[str], prompt: Prompt) -> Fields | None:
    docs = _documents(m["context"]) if _documents_system(prompt) else None
    return None if docs is None else {"question": m["question"], "passages": docs}


register_readers(
    PromptReader("closed_book", "closed book (no_rag)", matcher(r"Question: (?P<question>.*)\nAnswer:", _closed_book),
                 remember=remember_question),
    PromptReader("keyword_answer", "concatenated documents (vanilla_rag)",
                 matcher(r"Context:\n(?P<context>.*)\nQuestion: (?P<question>.*?)\nAnswer:", _vanilla)),
)
