"""Trace of the two baselines, ``no_rag`` (closed book) and ``vanilla_rag`` (concatenated documents)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from backend.schema.trace import Trace


class BaselineTrace(Trace):
    """What a baseline read and said: the evidence it was given and how its reply was parsed."""

    kind: Literal["baseline"] = "baseline"
    evidence_mode: Literal["none", "given", "retrieve"]
    documents: list[str] = Field(default_factory=list)   # document ids, in prompt order
    raw_answer: str | None = None
    parsed_answer: str | None = None
    parse_note: str | None = None

    def key_facts(self) -> dict[str, str]:
        """The few facts a what-if comparison shows side by side (``backend.whatif.compare``)."""
        return {"documents read": str(len(self.documents)), "answer": self.parsed_answer or "I don't know"}
