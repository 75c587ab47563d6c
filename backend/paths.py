"""Where ConflictLens keeps things: the repository's bundled data and the per-user cache folder."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DATA = REPO_ROOT / "sample_data"


def default_cache_dir() -> Path:
    """``$CONFLICTLENS_CACHE_DIR``, else ``$XDG_CACHE_HOME/conflictlens``, else ``~/.cache/conflictlens``."""
    if env := os.environ.get("CONFLICTLENS_CACHE_DIR"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "conflictlens"
