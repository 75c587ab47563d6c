"""The chatty offline voice (``offline/chatty``): the offline model's replies as chat models write them.

``offline/reader`` answers every task in exactly the format its reader expects; hosted and local chat models do
not. ``offline/chatty`` gives the same content -- the reply ``backend.llm.offline.respond`` gives -- rendered per
call in a mix of chat-model styles: a preamble ("Sure! Here is the answer.") or a closing remark, Markdown bold
around labels or values (the colon inside or outside), headings, labels in other cases, bullets / ``1)`` /
``**1.**`` / ``Q1:`` / restarted numbering / a table where a list was asked, bracketed or bold values,
probabilities as percentages, fractions, leading-dot decimals or with a decimal comma, a JSON object with the
expected keys, refusals in a chat model's words. So the whole pipeline -- readers, methods, pages -- meets
realistic replies on every offline run.

The dress is seeded by the request (its messages and task): the same request always gets the same dress, another
call another one. Which dresses fit depends on the task's format (the task name comes with the call's metadata;
this is rendering, not content). What a careful reader extracts is what the plain reply says: the dressers
(``dressers``, ``consolidation``) read the plain reply in the offline handler's exact format and rewrite only its
form. A reply they do not recognise is left as it is.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from typing import Any

from backend.llm.chatty import consolidation, dressers
from backend.llm.chatty.pieces import frame

CHATTY_MODEL = "offline/chatty"

#: The dresser of each task's format (tasks without one are left plain).
DRESSERS: dict[str, dressers.Dresser] = {
    "ping": dressers.ping,
    "closed_book": dressers.short_answer,
    "keyword_answer": dressers.short_answer,
    "entailment": dressers.entailment,
    "generate_passage": dressers.generate_passage,
    "debate_turn": dressers.debate_turn,
    "aggregate": dressers.aggregate,
    "cf_answer": dressers.cf_answer,
    "cf_quality": dressers.cf_answer,
    "cf_usage": dressers.cf_usage,
    "cf_judge": dressers.cf_judge,
    "cf_probability": dressers.cf_probability,
    "soft_bias": dressers.soft_bias,
    "sub_queries": dressers.sub_queries,
    "multi_answer": dressers.multi_answer,
    "reflect": dressers.reflect,
    "select_option": dressers.select_option,
    "consolidate": consolidation.consolidate,
    "consolidate_answer": consolidation.consolidate_answer,
}


@dataclass(frozen=True)
class Dressed:
    text: str
    styles: tuple[str, ...]   # what was drawn, e.g. ("lines", "label:bold-inside", "preamble"); ("plain",) if nothing


def request_seed(messages: list[dict[str, Any]], task: str | None) -> int:
    """The seed of a request's dress: a hash of its messages and task (never of the process or the clock)."""
    blob = json.dumps({"task": task, "messages": messages}, sort_keys=True, ensure_ascii=False, default=str)
    return int.from_bytes(hashlib.sha256(blob.encode()).digest()[:8], "big")


def render(reply: str, fields: dict[str, Any], seed: int) -> Dressed:
    """``reply`` (the offline model's plain reply to a call with ``fields``) dressed by the draw ``seed`` gives."""
    dresser = DRESSERS.get(str(fields.get("task") or ""))
    rng = random.Random(seed)
    body = dresser(reply, fields, rng) if dresser else None
    if body is None:
        return Dressed(reply, ("plain",))
    text, framed = frame(body.text, rng, body.preambles, p_closing=0.3 if body.closing else 0.0)
    return Dressed(text, tuple(body.styles + framed))


def dress(reply: str, messages: list[dict[str, Any]], fields: dict[str, Any]) -> str:
    """The chatty voice's reply to a request whose plain reply is ``reply``."""
    return render(reply, fields, request_seed(messages, fields.get("task"))).text
