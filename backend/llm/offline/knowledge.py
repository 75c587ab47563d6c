"""The offline model's own memory: what it "knows" besides the prompt (docs/architecture.md, the offline model).

The simulated memory (a question's ``internal_knowledge``) is the one input the offline model does not read from the
prompt, by design: a closed-book prompt holds the question only, and a model's knowledge is not in its prompt.

* In-process (and over HTTP when the client sends the task fields), the model knows what the method sent as ``memory``
  about the question it sent: ``Knowledge.of(question, memory)``.
* Over HTTP without task fields, ``serve-model`` knows a store loaded from datasets (``load_knowledge``; by default
  ``bundled_knowledge``: the bundled datasets that have ``internal_knowledge``), looked up by the question as the
  prompt states it. Two datasets giving one question different memories: the first loaded wins, so serve a dataset's
  own memory with ``serve-model --knowledge <dataset>`` (the benchmark does) when questions are shared.

Where a prompt does carry a memory passage (Astute's generated passages, BRIDGE's K_int), it is read from the prompt as
any passage is; this store only answers what the model is asked to recall.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from backend.answers import normalize
from backend.llm.formats import is_idk
from backend.llm.offline.common import content_words, focus_words


def _key(question: str) -> str:
    return normalize(question or "")


@dataclass(frozen=True)
class Knowledge:
    """Memory passages by question (normalised: case, punctuation and articles do not matter)."""

    entries: Mapping[str, tuple[str, str]] = field(default_factory=dict)   # key -> (question, memory)

    @classmethod
    def of(cls, question: str | None, memory: str | None) -> Knowledge:
        """Knowing ``memory`` about ``question`` only (nothing when the memory is absent or "I don't know")."""
        text = str(memory).strip() if memory is not None else ""
        if not question or not text or is_idk(text):
            return cls()
        return cls({_key(question): (question, text)})

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[str, str | None]]) -> Knowledge:
        entries: dict[str, tuple[str, str]] = {}
        for question, memory in pairs:
            for key, entry in cls.of(question, memory).entries.items():
                entries.setdefault(key, entry)   # the first dataset loaded wins
        return cls(entries)

    def __len__(self) -> int:
        return len(self.entries)

    def recall(self, question: str) -> str | None:
        """The memory about exactly this question, else None."""
        entry = self.entries.get(_key(question))
        return entry[1] if entry else None

    def recall_within(self, texts: list[str]) -> tuple[str, str] | None:
        """(question, memory) of the known question the texts ask again: the one whose normalised words are inside
        most texts (as paraphrases built around it have them), then the longest; failing that, the one whose subject
        (``common.focus_words``, else its content words) most texts keep, at least half of its words; None when no
        text asks about anything known."""
        padded = [f" {_key(t)} " for t in texts]
        best = max(((sum(f" {key} " in t for t in padded), len(key), key) for key in self.entries if key),
                   default=(0, 0, ""))
        if best[0]:
            return self.entries[best[2]]
        words = [content_words(t) for t in texts]
        for key, (question, _) in self.entries.items():
            subject = _subject(question)
            kept = sum(len(subject & w) * 2 >= len(subject) for w in words) if subject else 0
            if kept and kept > best[0]:
                best = (kept, 0, key)
        return self.entries[best[2]] if best[0] else None


@lru_cache(maxsize=4096)
def _subject(question: str) -> frozenset[str]:
    """A question's subject words (the reader's analysis is not free: once per question)."""
    return frozenset(focus_words(question) or content_words(question))


def remember_question(fields: dict, knowledge: Knowledge) -> dict:
    """A reader's ``remember`` for a task that recalls what the model knows about the prompt's question."""
    return {**fields, "memory": knowledge.recall(fields.get("question") or "")}


def load_knowledge(paths: Iterable[str | Path]) -> Knowledge:
    """The memories (``internal_knowledge``) of the questions of these datasets (``backend.data.load_dataset``)."""
    from backend.data import load_dataset

    return Knowledge.from_pairs((q.question, q.internal_knowledge) for p in paths for q in load_dataset(p).questions)


@lru_cache(maxsize=1)
def bundled_knowledge() -> Knowledge:
    """The bundled datasets' memories (those that have any): what serve-model knows unless told otherwise."""
    from backend.data import BUNDLED
    from backend.paths import SAMPLE_DATA

    return load_knowledge(SAMPLE_DATA / name for name in BUNDLED)
