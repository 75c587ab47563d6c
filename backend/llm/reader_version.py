"""The offline reader's version, for the reply cache's keys: a hash of its code (``backend/llm/offline`` and
``backend/llm/reader``), so replies the reader gave before an upgrade (or an edit) never answer for the reader of
now. Hosted models are keyed by name and endpoint only: their version is theirs to name."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

LLM = Path(__file__).resolve().parent
READER_CODE = (LLM / "offline", LLM / "reader")


@cache
def reader_version() -> str:
    """12 hex digits of the sha256 over the reader's source files (path and bytes, in path order)."""
    digest = hashlib.sha256()
    for folder in READER_CODE:
        for path in sorted(folder.rglob("*.py")):
            digest.update(path.relative_to(LLM).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]
