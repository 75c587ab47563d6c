"""Datasets uploaded through the app: kept in the cache folder as ``uploads/<content hash>.jsonl``, so a link can
name one (``?dataset=upload:<hash>``) without ever naming a path. The name is the server's (the SHA-256 of the
bytes), never the user's; a link's hash resolves only inside the uploads folder.

The folder is bounded (``tidy``, on every upload): an upload not opened for ``uploads_days`` is removed, and past
``uploads_mb`` in all the uploads opened longest ago go first (the deployment settings; defaults 30 days, 2000 MB)."""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
import tempfile
import time
from pathlib import Path
from typing import BinaryIO

from backend import deployment
from backend.paths import default_cache_dir, private_dir

FOLDER = "uploads"
#: A link's ``dataset=upload:<hash>``.
PREFIX = "upload:"
_HASH = re.compile(r"[0-9a-f]{64}")


class UploadError(ValueError):
    """An upload refused (too large, empty): one line naming the rule, never the content."""


def folder(cache_dir: Path | None = None) -> Path:
    return (cache_dir or default_cache_dir()) / FOLDER


#: Read and written in pieces of this size: an upload is never held twice in memory (nor once, from a file).
CHUNK = 1024 * 1024
#: A ``.part`` file older than this is a write that never finished (a killed server): removed by ``tidy``.
STALE_PART_S = 3600
#: How often the opened-at time (the file's mtime, which ``tidy`` removes by) is refreshed at most.
TOUCH_EVERY_S = 3600


def _too_large() -> UploadError:
    return UploadError(f"the uploaded file is larger than this server reads "
                       f"({deployment.current().max_file_mb:g} MB, the deployment setting max_file_mb)")


def save(data: bytes | BinaryIO, cache_dir: Path | None = None) -> str:
    """Keep ``data`` (bytes, or a binary file read in ``CHUNK`` pieces) as ``uploads/<sha256>.jsonl`` (written once:
    the same bytes are the same file) and return the hash; the folder is tidied to its quota first (``tidy``).
    ``UploadError`` above the deployment's ``max_file_mb``, above the whole quota, or when empty."""
    source = io.BytesIO(data) if isinstance(data, (bytes, bytearray, memoryview)) else data
    cap = deployment.current().max_file_bytes
    known = getattr(source, "size", None) if not isinstance(data, (bytes, bytearray, memoryview)) else len(data)
    if isinstance(known, int) and known > cap:  # refused before anything is written
        raise _too_large()
    base = private_dir(folder(cache_dir))  # owner-only; mkstemp's files are 0600
    fd, tmp = tempfile.mkstemp(dir=base, suffix=".part")  # whole or not at all
    try:
        digest, size, blank = hashlib.sha256(), 0, True
        with os.fdopen(fd, "wb") as out:
            while chunk := source.read(CHUNK):
                size += len(chunk)
                if size > cap:
                    raise _too_large()
                digest.update(chunk)
                blank = blank and not chunk.strip()
                out.write(chunk)
        if blank:
            raise UploadError("the uploaded file is empty")
        name = digest.hexdigest()
        target = base / f"{name}.jsonl"
        tidy(cache_dir, incoming=0 if target.is_file() else size, keep=target)
        if target.is_file():
            os.utime(target)  # uploaded again: opened now
        else:
            os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return name


def _uploads(base: Path) -> list[tuple[float, int, Path]]:
    """(opened at, size, path) of every upload in ``base``, the one opened longest ago first."""
    found = []
    for path in base.glob("*.jsonl"):
        try:
            info = path.lstat()
        except OSError:
            continue
        if _HASH.fullmatch(path.stem) and stat.S_ISREG(info.st_mode):
            found.append((info.st_mtime, info.st_size, path))
    return sorted(found)


def tidy(cache_dir: Path | None = None, incoming: int = 0, keep: Path | None = None,
         now: float | None = None) -> list[Path]:
    """Bound the uploads folder (the deployment settings ``uploads_days`` and ``uploads_mb``): remove every upload
    not opened for ``uploads_days`` and every unfinished ``.part`` write, then the uploads opened longest ago until
    the rest plus ``incoming`` bytes fit in ``uploads_mb`` (``keep`` is never removed). Returns what it removed;
    ``UploadError`` when ``incoming`` alone is more than the quota. A link to a removed upload gives the link notice.
    """
    settings = deployment.current()
    quota = int(settings.uploads_mb * 1024 * 1024)
    if incoming > quota:
        raise UploadError(f"the uploaded file is larger than this server keeps for uploads "
                          f"({settings.uploads_mb:g} MB, the deployment setting uploads_mb)")
    base, now = folder(cache_dir), time.time() if now is None else now
    if not base.is_dir():
        return []
    removed = [p for p in base.glob("*.part") if _older(p, now - STALE_PART_S) and _remove(p)]
    kept = []
    for opened, size, path in _uploads(base):
        if path != keep and opened < now - settings.uploads_days * 86400 and _remove(path):
            removed.append(path)
        else:
            kept.append((opened, size, path))
    total = sum(size for _, size, _ in kept) + incoming
    for _, size, path in kept:  # the longest unopened first
        if total <= quota:
            break
        if path != keep and _remove(path):
            removed.append(path)
            total -= size
    return removed


def _older(path: Path, than: float) -> bool:
    try:
        return path.lstat().st_mtime < than
    except OSError:
        return False


def _remove(path: Path) -> bool:
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def opened(path: Path, now: float | None = None) -> None:
    """Record that the upload at ``path`` was opened (its mtime, at most once per ``TOUCH_EVERY_S``): ``tidy``
    removes the uploads opened longest ago first."""
    now = time.time() if now is None else now
    try:
        if path.stat().st_mtime < now - TOUCH_EVERY_S:
            os.utime(path, (now, now))
    except OSError:  # removed meanwhile, or a read-only cache folder: nothing to record
        pass


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


def digest_of(path: str | Path, cache_dir: Path | None = None) -> str | None:
    """The hash naming ``path`` when it is an upload this server holds (a link then says ``upload:<hash>``, which
    opens it again on this server, never ``file:`` and a server path); None for any other file."""
    candidate = Path(path)
    found = path_of(candidate.stem, cache_dir) if candidate.suffix == ".jsonl" else None
    try:
        return candidate.stem.lower() if found is not None and candidate.resolve() == found.resolve() else None
    except OSError:
        return None
