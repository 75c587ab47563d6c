"""Reading files named by a user: only regular files, never more than the size cap, and, from a page or a link, only
inside the deployment's open folders. Every refusal is one line that names the file and the rule, never its content.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from backend import deployment


class FileRefused(ValueError):
    """A file that will not be read; the message is one line for the user. ``reason``: the same without the path,
    for callers whose own messages name the file already (``file:line: field: reason``)."""

    def __init__(self, message: str, reason: str | None = None):
        super().__init__(message)
        self.reason = reason or message


def _refused(path: str | Path, reason: str) -> FileRefused:
    return FileRefused(f"{path}: {reason}", reason)


def _mb(n: int) -> str:
    mb = n / (1024 * 1024)
    return f"{mb:.0f} MB" if mb >= 10 else f"{mb:.2g} MB"  # a small cap (a test's, a tight server's) stays readable


def confine(path: str | Path, what: str = "file") -> Path:
    """``path`` resolved (``~`` expanded, symlinks followed), refused unless inside an open folder. For paths that
    come from a page or a link; the command line reads what its user names."""
    text = str(path).strip()
    if not text or "\x00" in text:
        raise FileRefused(f"no {what} given")
    try:
        resolved = Path(text).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        raise _refused(text, f"this {what} path cannot be resolved") from None
    settings = deployment.current()
    if not settings.allows_folder(resolved):
        raise _refused(text, f"outside the folders this server opens {what}s from "
                             f"(the deployment setting open_folders)")
    return resolved


def _opened_inside(fd: int) -> bool:
    """Whether the file open as ``fd`` lies inside an open folder, asked of the kernel (Linux's /proc/self/fd):
    O_NOFOLLOW guards only the last part of a path, so a folder of it swapped for a symlink after ``confine`` would
    otherwise be followed out. Where the kernel cannot say (no /proc), ``confine``'s answer stands."""
    try:
        where = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return True
    return where.startswith("/") and deployment.current().allows_folder(Path(where))


def read_bytes(path: str | Path, max_bytes: int | None = None, *, confine_as: str | None = None) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (default: the deployment's size cap). A FIFO, device,
    socket or folder is refused without blocking: the file is opened non-blocking and checked before reading.
    ``confine_as`` (what the file is, e.g. "dataset"): a path from a page or a link, ``confine``d first and read
    where it resolved to."""
    limit = deployment.current().max_file_bytes if max_bytes is None else max_bytes
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    if confine_as is not None:
        path = confine(path, confine_as)
        flags |= getattr(os, "O_NOFOLLOW", 0)  # resolved: a symlink now in its place was put there since
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise _refused(path, "no such file") from None
    except IsADirectoryError:
        raise _refused(path, "a folder, not a file") from None
    except OSError as err:
        raise _refused(path, f"cannot be opened ({err.strerror or 'error'})") from None
    try:
        if confine_as is not None and not _opened_inside(fd):
            raise _refused(path, f"outside the folders this server opens {confine_as}s from "
                                 f"(the deployment setting open_folders)")
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise _refused(path, "a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise _refused(path, "not a regular file (a device, pipe or socket is never read)")
        if info.st_size > limit:
            raise _refused(path, f"{_mb(info.st_size)}, over the {_mb(limit)} limit "
                                 f"(the deployment setting max_file_mb)")
        chunks, total = [], 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # grew while being read
                raise _refused(path, f"over the {_mb(limit)} limit (the deployment setting max_file_mb)")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: str | Path, max_bytes: int | None = None, encoding: str = "utf-8", *,
              confine_as: str | None = None) -> str:
    """``read_bytes`` decoded; a file that is not valid text is refused in one line."""
    data = read_bytes(path, max_bytes, confine_as=confine_as)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as err:
        raise _refused(path, f"not valid {encoding} (at byte {err.start})") from None
