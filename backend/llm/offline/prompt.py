"""Answering a bare prompt (no task fields): find the question and any context, then read it."""

from __future__ import annotations

import re
from typing import Any

from backend.llm.formats import IDK


def _last_user(messages: list[dict[str, Any]]) -> str:
    for m in reversed(messages):
        if m.get("role") == "user":
            return str(m.get("content") or "")
    return str(messages[-1].get("content") or "") if messages else ""


def split_prompt(text: str) -> tuple[str, str]:
    """(question, context) from a prompt with ``Question:``/``Context:`` lines, else (whole text, "")."""
    q = re.findall(r"^\s*question\s*:\s*(.+)$", text, re.I | re.M)
    question = q[-1].strip() if q else text.strip().splitlines()[-1] if text.strip() else ""
    c = re.search(r"context\s*:\s*(.*?)(?:^\s*question\s*:|\Z)", text, re.I | re.S | re.M)
    return question, (c.group(1).strip() if c else "")


def respond_to_prompt(messages: list[dict[str, Any]]) -> str:
    from backend.llm.reader import read

    text = _last_user(messages)
    if re.search(r"reply with the single word\s*:\s*(\w+)", text, re.I):
        return re.search(r"reply with the single word\s*:\s*(\w+)", text, re.I).group(1)
    question, context = split_prompt(text)
    if not context:
        return IDK
    return read(question, context).answer or IDK
