"""A prompt that would not fit the local model's context is cut by one stated rule, before it is sent (and keyed).

The rule (``RULE``): the reply's ``max_tokens`` is reserved; the passages the prompt quotes (the call's ``passages``
fields, found verbatim in its messages) are shortened to one common length -- the longest cut first, so every
passage keeps as much as the others (water-filling) -- each cut at a word boundary and marked ``" […]"``; the question
and the instructions are never cut. The common length is the largest that fits, counted with the server's own chat
template and tokenizer (``/apply-template``, ``/tokenize``). A prompt that cannot fit even with every passage cut to
``MIN_CHARS`` is refused with one line (``PromptTooLong``), never sent to fail as a server error.

A prompt whose character count cannot reach the limit (``CHARS_PER_TOKEN_FLOOR``: no tokenizer packs fewer than 1.5
characters per token into English text... a conservative bound) is never counted: no server needed, so a replay
needs none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

RULE = ("passages shortened to one common length (longest first), each cut at a word and marked ' […]'; the "
        "question, the instructions and the reply's max_tokens kept")
MARK = " […]"
MIN_CHARS = 40
CHARS_PER_TOKEN_FLOOR = 1.5
#: Tokens the template adds around messages beyond what ``/tokenize`` of the rendered prompt counts (none today:
#: the rendered prompt is what is tokenized), kept as a small margin for the generation prompt.
MARGIN_TOKENS = 8


class PromptCut(BaseModel):
    """What was cut from a call's prompt to fit the model's context (recorded on the call, shown in its view)."""

    rule: str = RULE
    context_tokens: int          # the context one server slot holds
    reply_tokens: int            # reserved for the reply (the call's max_tokens)
    tokens_before: int
    tokens_after: int
    passages_cut: int
    kept_chars: int              # every cut passage's length, in characters, before the mark
    chars_removed: int

    def note(self) -> str:
        return (f"prompt cut to fit the model's context ({self.context_tokens} tokens, {self.reply_tokens} kept for "
                f"the reply): {self.tokens_before} -> {self.tokens_after} tokens; {self.passages_cut} passage(s) cut "
                f"to {self.kept_chars} characters ({self.chars_removed} removed)")


class PromptTooLong(ValueError):
    pass


def may_exceed(messages: list[dict[str, str]], budget: int) -> bool:
    chars = sum(len(str(m.get("content", ""))) for m in messages)
    return chars / CHARS_PER_TOKEN_FLOOR > budget


def passage_texts(fields: dict[str, Any]) -> list[str]:
    out = []
    for p in fields.get("passages") or []:
        text = p.get("text") if isinstance(p, dict) else p if isinstance(p, str) else None
        if isinstance(text, str) and text:
            out.append(text)
    return out


def _shorten(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    cut = text[:cap]
    at = cut.rfind(" ")
    return (cut[:at] if at >= cap // 2 else cut).rstrip() + MARK


def _apply(messages: list[dict[str, str]], texts: list[str], cap: int) -> list[dict[str, str]]:
    out = []
    for m in messages:
        content = str(m.get("content", ""))
        for text in sorted(set(texts), key=len, reverse=True):
            if len(text) > cap:
                content = content.replace(text, _shorten(text, cap))
        out.append({**m, "content": content})
    return out


def fit(messages: list[dict[str, str]], fields: dict[str, Any], *, context_tokens: int, reply_tokens: int,
        count: Callable[[list[dict[str, str]]], int]) -> tuple[list[dict[str, str]], PromptCut | None]:
    """``messages`` as sent: unchanged when they fit (``count``: the server's count of the templated prompt), else
    cut by ``RULE``; ``PromptTooLong`` when no cut can make them fit."""
    budget = context_tokens - reply_tokens - MARGIN_TOKENS
    if budget <= 0:
        raise PromptTooLong(f"the reply's max_tokens ({reply_tokens}) leaves no room for a prompt in the model's "
                            f"context of {context_tokens} tokens: start the server with a larger --ctx")
    if not may_exceed(messages, budget):
        return messages, None
    before = count(messages)
    if before <= budget:
        return messages, None
    texts = [t for t in passage_texts(fields) if any(t in str(m.get("content", "")) for m in messages)]
    longest = max((len(t) for t in texts), default=0)
    floor = count(_apply(messages, texts, MIN_CHARS)) if texts else before
    if not texts or floor > budget:
        raise PromptTooLong(f"the prompt needs {before} tokens and the model's context holds {context_tokens} per "
                            f"request ({reply_tokens} kept for the reply); even with every passage cut to "
                            f"{MIN_CHARS} characters it needs {floor}: use fewer or shorter documents, or a larger "
                            "--ctx")
    low, high = MIN_CHARS, longest  # the largest common length that fits: low fits, high does not
    while high - low > 8:
        mid = (low + high) // 2
        if count(_apply(messages, texts, mid)) <= budget:
            low = mid
        else:
            high = mid
    cut = _apply(messages, texts, low)
    removed = sum(max(0, len(t) - low) for t in texts)
    return cut, PromptCut(context_tokens=context_tokens, reply_tokens=reply_tokens, tokens_before=before,
                          tokens_after=count(cut), passages_cut=sum(len(t) > low for t in texts), kept_chars=low,
                          chars_removed=removed)
