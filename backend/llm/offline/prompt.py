"""What the offline model sees: the prompt. ``Prompt`` is the messages as the model reads them; ``recognise`` finds the
registered template (``registry.PromptReader``) a prompt was written from and reads the task's inputs back out of it;
``read_labelled`` / ``labelled_texts`` / ``read_numbered`` split the blocks templates number (``Document 1: …``,
``Passage-0: …``, ``1. …``); ``split_prompt`` reads a prompt no template matches (``handlers.respond_to_prompt``
answers it)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from backend.llm.offline.registry import READERS, Fields, PromptReader


@dataclass(frozen=True)
class Prompt:
    """The messages as (role, text) pairs, in order."""

    messages: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, messages: list[dict[str, Any]]) -> Prompt:
        return cls(tuple((str(m.get("role") or "user"), str(m.get("content") or "")) for m in messages))

    def _texts(self, role: str) -> list[str]:
        return [text for r, text in self.messages if r == role]

    @property
    def system(self) -> str:
        """The first system message ("" when there is none)."""
        return next(iter(self._texts("system")), "")

    @property
    def user(self) -> str:
        """The last user message: what the model is asked now."""
        users = self._texts("user")
        return users[-1] if users else (self.messages[-1][1] if self.messages else "")

    @property
    def first_user(self) -> str:
        return next(iter(self._texts("user")), "")

    @property
    def replies(self) -> list[str]:
        """The model's own earlier turns in this conversation, in order."""
        return self._texts("assistant")


def read_labelled(block: str, label: re.Pattern[str], first: int) -> list[tuple[re.Match[str], str]] | None:
    """The items of a block of labelled items numbered ``first``, ``first + 1``, …: (label match, text) each
    (``label`` matches one item's label at a line start, its first group the number). A line starting with a label of
    another number belongs to the item before it, so an item's text may span lines. None when the block does not
    start with item ``first``."""
    starts, expected = [], first
    for m in label.finditer(block):
        if int(m.group(1)) == expected and (m.start() == 0 or block[m.start() - 1] == "\n"):
            starts.append(m)
            expected += 1
    if not starts or starts[0].start() != 0:
        return None
    ends = [m.start() - 1 for m in starts[1:]] + [len(block)]
    return [(m, block[m.end():end]) for m, end in zip(starts, ends)]


def labelled_texts(block: str, label: re.Pattern[str], first: int) -> list[str] | None:
    """The texts of ``read_labelled``'s items; [] for an empty block."""
    if not block:
        return []
    items = read_labelled(block, label, first)
    return None if items is None else [text for _, text in items]


_NUMBERED = re.compile(r"(\d+)\. ")


def read_numbered(block: str) -> list[str] | None:
    """``1. a\n2. b`` -> ["a", "b"] (see ``read_labelled``)."""
    return labelled_texts(block, _NUMBERED, 1)


def matcher(pattern: str, build: Callable[[re.Match[str], Prompt], Fields | None],
            text: Callable[[Prompt], str] = lambda p: p.user) -> Callable[[Prompt], Fields | None]:
    """A reader's ``read``: ``pattern`` (compiled once, DOTALL) must match the whole of ``text(prompt)`` (the last
    user message by default); ``build`` turns the match into the task's inputs."""
    compiled = re.compile(pattern, re.S)

    def read(prompt: Prompt) -> Fields | None:
        m = compiled.fullmatch(text(prompt))
        return build(m, prompt) if m else None

    return read


def recognise(prompt: Prompt) -> tuple[PromptReader, Fields] | None:
    """The first registered template that ``prompt`` was written from, with the inputs read out of it."""
    for reader in READERS:
        fields = reader.read(prompt)
        if fields is not None:
            return reader, {"task": reader.task, **fields}
    return None


# ------------------------------------------------------------------------------- a prompt no template matches

#: The tasks a prompt that matches no template may stand for (``handlers.respond_to_prompt`` answers them).
GENERIC_TASKS = frozenset({"ping", "closed_book", "keyword_answer"})

_SINGLE_WORD = re.compile(r"reply with the single word\s*:\s*(\w+)", re.I)
_QUESTION_LINE = re.compile(r"^\s*question\s*:\s*(.+)$", re.I | re.M)
_CONTEXT = re.compile(r"context\s*:\s*(.*?)(?:^\s*question\s*:|\Z)", re.I | re.S | re.M)


def single_word(text: str) -> str | None:
    """X when the prompt says "reply with the single word: X"."""
    m = _SINGLE_WORD.search(text)
    return m.group(1) if m else None


def split_prompt(text: str) -> tuple[str, str]:
    """(question, context) from a prompt with ``Question:``/``Context:`` lines, else (last line, "")."""
    q = _QUESTION_LINE.findall(text)
    question = q[-1].strip() if q else text.strip().splitlines()[-1] if text.strip() else ""
    c = _CONTEXT.search(text)
    return question, (c.group(1).strip() if c else "")
