"""The offline model (``offline/reader``): a deterministic heuristic reader, not a language model.

It answers from what a hosted model would see: the rendered messages. It recognises the task from the prompt's
wording (one ``PromptReader`` per template, registered beside the task's handler) and reads the task's inputs back
out of the prompt text: the question, the passages with their numbering and source labels, the round, the other
agents' replies, the sub-queries, the options, its own earlier answers. The handler then answers from those, in the
exact format the prompt asks for, so the methods' parsers run as they would on a hosted model and every offline run
exercises the prompts actually sent. It never sees ground truth.

The one input not in the prompt is its own memory (``knowledge``): the ``memory`` the method sends, or, over HTTP
without task fields, the store ``serve-model`` loaded. The task fields a client sends beside the prompt only
cross-check the reading (``check``); a prompt no template matches is answered as a bare prompt
(``handlers.respond_to_prompt``).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from backend.llm.offline.check import cross_check, unrecognised
from backend.llm.offline.handlers import respond_to_prompt
from backend.llm.offline.knowledge import Knowledge, bundled_knowledge
from backend.llm.offline.prompt import GENERIC_TASKS, Prompt, recognise
from backend.llm.offline.registry import HANDLERS

for _info in pkgutil.iter_modules(__path__):  # every handler module registers its tasks' handlers
    importlib.import_module(f"{__name__}.{_info.name}")

MODEL_NOTE = ("offline/reader is a deterministic heuristic reader (sentence ranking with all-MiniLM-L6-v2 "
              "plus typed answer-span extraction), not a language model. Its answers show how the methods "
              "behave, not how an LLM would answer.")


def _knowledge(sent: dict[str, Any] | None, knowledge: Knowledge | None) -> Knowledge:
    """What the model knows: the memory the method sent about its question, else the given store, else the
    bundled datasets' (``knowledge``)."""
    if sent is not None:
        return Knowledge.of(sent.get("question"), sent.get("memory"))
    return knowledge if knowledge is not None else bundled_knowledge()


def respond(messages: list[dict[str, Any]], fields: dict[str, Any], knowledge: Knowledge | None = None) -> str:
    """The reply to ``messages``. ``fields``: the task fields the client sent ({} when none), a cross-check only;
    ``knowledge``: the model's memory when no fields are sent (default: the bundled datasets')."""
    prompt = Prompt.of(messages)
    sent = fields if fields.get("task") else None
    found = recognise(prompt)
    if found is None:
        if sent is not None and sent["task"] not in GENERIC_TASKS:
            unrecognised(sent["task"])
        return respond_to_prompt(prompt, lambda question: _knowledge(sent, knowledge).recall(question))
    reader, read = found
    if sent is not None:
        cross_check(reader, read, sent)
    if reader.remember is not None:
        read = reader.remember(read, _knowledge(sent, knowledge))
    return HANDLERS[reader.task](read)
