"""Where ConflictLens keeps things: the repository's bundled data and the per-user cache folder."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DATA = REPO_ROOT / "sample_data"
#: The environment variable naming a chroma server (``http://host:port``) that holds the retrieval index for a team,
#: read by the command line and the app (``Runner(chroma_url=...)`` in Python).
CHROMA_URL_ENV = "CONFLICTLENS_CHROMA_URL"


def default_cache_dir() -> Path:
    """``$CONFLICTLENS_CACHE_DIR``, else ``$XDG_CACHE_HOME/conflictlens``, else ``~/.cache/conflictlens``."""
    if env := os.environ.get("CONFLICTLENS_CACHE_DIR"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "conflictlens"


def default_data_dir() -> Path:
    """Where user data that must not be lost lives (the label store): ``$CONFLICTLENS_DATA_DIR``, else
    ``$XDG_DATA_HOME/conflictlens``, else ``~/.local/share/conflictlens``. Unlike the cache, never safe to delete."""
    if env := os.environ.get("CONFLICTLENS_DATA_DIR"):
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "conflictlens"
