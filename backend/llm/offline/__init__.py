"""The offline model (``offline/reader``): a deterministic heuristic reader, not a language model.

It sees what a hosted model would see — the rendered messages — plus the task's structured fields
(``backend.llm.tasks``): the question, passages with their source labels, the simulated memory
(``internal_knowledge``) and earlier outputs. It never sees ground truth. Each task handler answers in
the exact format its prompt asks for, so the methods' parsers run as they would on a hosted model.
Without task fields (e.g. a plain chat request to ``serve-model``) it reads the prompt itself.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from backend.llm.offline.prompt import respond_to_prompt
from backend.llm.offline.registry import HANDLERS

for _info in pkgutil.iter_modules(__path__):  # every handler module registers its tasks' handlers
    importlib.import_module(f"{__name__}.{_info.name}")

MODEL_NOTE = ("offline/reader is a deterministic heuristic reader (sentence ranking with all-MiniLM-L6-v2 "
              "plus typed answer-span extraction), not a language model. Its answers show how the methods "
              "behave, not how an LLM would answer.")


def respond(messages: list[dict[str, Any]], fields: dict[str, Any]) -> str:
    task = fields.get("task")
    handler = HANDLERS.get(task) if task else None
    if handler is None:
        return respond_to_prompt(messages)
    return handler(fields)
