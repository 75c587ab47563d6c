"""What every schema module shares: a strict pydantic base and the evidence modes."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

#: ``given``: the question's own documents (RAMDocs, MADAM-RAG); ``retrieve``: top-k from the chromadb index
#: over the whole corpus, optionally restricted to one source (RA-RAG's setting).
EvidenceMode = Literal["given", "retrieve"]


class StrictModel(BaseModel):
    """Unknown fields are errors, so a typo in a dataset or a trace never passes silently."""

    model_config = ConfigDict(extra="forbid")
