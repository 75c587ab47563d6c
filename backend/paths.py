"""Where ConflictLens keeps things: the repository's bundled data and the per-user cache folder.

Everything ConflictLens creates is its user's alone (``private_dir``, ``open_private``, ``write_private``): folders
0700, files 0600, whatever the umask. On a shared machine (a team server) the label store holds every analyst's
labels, the reply cache replies someone paid for, results and uploads the team's data. Only what is created gets the
mode: a folder or file that already exists (the user's home, a folder they named, an export they overwrite) keeps
its own.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

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


#: The modes of what ConflictLens creates (the umask can only take more away).
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def private_dir(folder: str | Path) -> Path:
    """``folder``, created when missing with each missing parent, owner-only (0700); an existing folder is left as
    it is. Raises what ``mkdir`` raises (a file in the way, no permission)."""
    folder = Path(folder)
    if folder.is_dir():
        return folder
    if folder.parent != folder:
        private_dir(folder.parent)
    folder.mkdir(mode=PRIVATE_DIR_MODE, exist_ok=True)  # os.makedirs would give the parents the umask's mode
    return folder


def open_private(path: str | Path, mode: str = "w", encoding: str | None = None) -> IO[Any]:
    """``open(path, mode)`` for writing ("w", "wb", "a", "ab", "x", "xb"), a file it creates made owner-only (0600)
    from the start (never world-readable for a moment, unlike a chmod after). An existing file keeps its mode."""
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    flags |= {"w": os.O_TRUNC, "a": os.O_APPEND, "x": os.O_EXCL}[mode[0]]
    fd = os.open(path, flags, PRIVATE_FILE_MODE)
    try:
        return os.fdopen(fd, mode, encoding=None if "b" in mode else (encoding or "utf-8"))
    except BaseException:
        os.close(fd)
        raise


def write_private(path: str | Path, data: str | bytes, encoding: str = "utf-8") -> None:
    """``path`` holding ``data`` (``Path.write_text`` / ``write_bytes``), created owner-only (``open_private``)."""
    with open_private(path, "wb" if isinstance(data, bytes) else "w", encoding) as out:
        out.write(data)


def create_private(path: str | Path) -> Path:
    """An empty owner-only file at ``path`` when nothing is there, before a library creates it with the umask's mode
    (SQLite: it then gives the database's own mode to its -wal, -shm and -journal files). What is already there is
    never opened (a pipe would block)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                         PRIVATE_FILE_MODE))
    except FileExistsError:
        pass
    return Path(path)

