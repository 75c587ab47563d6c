"""Whose key fetched a reply (issue 36): a reply fetched with a typed key (the sidebar's "API key for this api_base",
``$CONFLICTLENS_API_KEY``) was paid for by that key's holder, so the reply cache keeps it for callers with the same key
only; a caller with no key, or another one, asks the endpoint itself.

The cache identity gains ``tag(key)``: an HMAC-SHA256 of the key under a secret of this install, kept owner-only in the
cache folder (``SECRET_FILE``, made once, never shown). The key itself is never stored. A plain hash would let
whoever can read the cache file test guesses of a short key (a local server's ``--api-key test``) against the stored
request keys; without the secret nobody can, and the tag is one-way all the same.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import secrets
from pathlib import Path

#: The per-install secret's file in the cache folder (0600).
SECRET_FILE = "reply_holder.secret"


def tag(key: str, folder: str | Path) -> str:
    """A short one-way tag naming the holder of ``key`` (stripped) in the cache in ``folder``."""
    return hmac.new(_secret(str(Path(folder).resolve())), key.strip().encode(), hashlib.sha256).hexdigest()[:24]


@functools.lru_cache(maxsize=8)
def _secret(folder: str) -> bytes:
    """The install's secret in ``folder``, made owner-only on first use. Made in a file of its own and linked into
    place, so two processes starting at once agree on one secret and none reads a half-written file."""
    path = Path(folder) / SECRET_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        draft = path.with_name(f".{SECRET_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_hex(32))
            try:
                os.link(draft, path)
            except FileExistsError:  # another process made it first: use theirs
                pass
        finally:
            draft.unlink(missing_ok=True)
    return bytes.fromhex(path.read_text().strip())
