"""Datasets uploaded through the app: kept in the cache folder as ``uploads/<content hash>.jsonl``, so a link can
name one (``?dataset=upload:<hash>``) without ever naming a path. The name is the server's (the SHA-256 of the
bytes), never the user's; a link's hash resolves only inside the uploads folder."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

from backend import deployment
from backend.paths import default_cache_dir

FOLDER = "uploads"
#: A link's ``dataset=upload:<hash>``.
PREFIX = "upload:"
_HASH = re.compile(r"[0-9a-f]{64}")


class UploadError(ValueError):
    """An upload refused (too large, empty): one line naming the rule, never the content."""


def folder(cache_dir: Path | None = None) -> Path:
    return (cache_dir or default_cache_dir()) / FOLDER


def save(data: bytes, cache_dir: Path | None = None) -> str:
    """Keep ``data`` as ``uploads/<sha256>.jsonl`` (written once: the same bytes are the same file) and return the
    hash. ``UploadError`` above the deployment's ``max_file_mb`` or when empty."""
    cap = deployment.current().max_file_bytes
    if len(data) > cap:
        raise UploadError(f"the uploaded file is larger than this server reads "
                          f"({deployment.current().max_file_mb:g} MB, the deployment setting max_file_mb)")
    if not data.strip():
        raise UploadError("the uploaded file is empty")
    digest = hashlib.sha256(data).hexdigest()
    target = folder(cache_dir) / f"{digest}.jsonl"
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".part")  # whole or not at all
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return digest


def path_of(digest: str, cache_dir: Path | None = None) -> Path | None:
    """The uploaded file of ``digest`` (a link's, so checked: 64 hex digits, a regular file directly inside the
    uploads folder); None when there is no such upload."""
    digest = str(digest).strip().lower()
    if not _HASH.fullmatch(digest):
        return None
    base = folder(cache_dir)
    target = base / f"{digest}.jsonl"
    try:
        if target.is_symlink() or not target.is_file() or target.resolve().parent != base.resolve():
            return None
    except OSError:
        return None
    return target
