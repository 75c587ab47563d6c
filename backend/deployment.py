"""Deployment settings: what whoever runs the server allows, never set from a page.

Read from the ``[deployment]`` table of ``.streamlit/secrets.toml`` (the app passes it to ``configure``) and from
the environment (the command line, and the app when the table leaves a setting out):

=====================  ==============================  ============================================================
setting                environment                     meaning
=====================  ==============================  ============================================================
``open_folders``       ``CONFLICTLENS_OPEN_FOLDERS``   folders a page or a link may open datasets, results and trace
                       (``os.pathsep``-separated)      files from (after symlinks). Default: the home folder, the
                                                       data and cache folders, the bundled sample data.
``max_file_mb``        ``CONFLICTLENS_MAX_FILE_MB``    the largest file read, from a page or the command line
                                                       (default 200 MB); only regular files are read.
``label_store``        ``CONFLICTLENS_LABELS``         where the label store lives (a SQLite path or a database URL).
``label_stores``       —                               other stores a page may switch to (each a path or URL).
``key_endpoints``      ``CONFLICTLENS_KEY_ENDPOINTS``  api_bases that may receive the server's API keys (URL
                       (comma-separated)               prefixes). Default: none; the keys go to their provider's own
                                                       endpoint only. Any other api_base gets only a key typed for it.
``chroma_urls``        —                               chroma servers a page may switch to (beside the configured one)
=====================  ==============================  ============================================================

A machine with no settings keeps the single-user convenience: the defaults open the user's own folders.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from backend.paths import SAMPLE_DATA, default_cache_dir, default_data_dir

#: The table of .streamlit/secrets.toml holding these settings.
SECRETS_TABLE = "deployment"
ENV_OPEN_FOLDERS = "CONFLICTLENS_OPEN_FOLDERS"
ENV_MAX_FILE_MB = "CONFLICTLENS_MAX_FILE_MB"
ENV_LABELS = "CONFLICTLENS_LABELS"
ENV_KEY_ENDPOINTS = "CONFLICTLENS_KEY_ENDPOINTS"
DEFAULT_MAX_FILE_MB = 200.0


class DeploymentError(ValueError):
    """The settings themselves are wrong (an admin's mistake): the message names the setting, never its value."""


class Deployment(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    open_folders: tuple[Path, ...]
    max_file_mb: float = Field(DEFAULT_MAX_FILE_MB, gt=0)
    label_store: str | None = None
    label_stores: tuple[str, ...] = ()
    key_endpoints: tuple[str, ...] = ()
    chroma_urls: tuple[str, ...] = ()
    #: Whether any setting was given (a server set up for a team) rather than every default taken.
    configured: bool = False

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * 1024 * 1024)

    def allows_folder(self, path: Path) -> bool:
        """Whether ``path`` (already resolved) lies inside one of the open folders."""
        return any(path == folder or path.is_relative_to(folder) for folder in self.open_folders)

    def allows_keys_to(self, api_base: str | None) -> bool:
        """Whether the server's API keys may go to ``api_base``: no api_base (the provider's own endpoint), or one
        that starts with an allowed prefix on the same scheme, host and port."""
        if not api_base:
            return True
        return any(_same_prefix(api_base, allowed) for allowed in self.key_endpoints)

    def allows_chroma(self, url: str | None, configured: str | None = None) -> bool:
        """Whether a page may connect to the chroma server ``url``: none (the embedded index), the server's configured
        one (``configured``: ``chroma_url`` of the secrets, or $CONFLICTLENS_CHROMA_URL) or one in ``chroma_urls``;
        compared as the retrieval index connects: https or not, host, port (``backend.retrieval``'s defaults)."""
        if not url or not url.strip():
            return True
        wanted = _chroma_server(url)
        return wanted is not None and any(wanted == _chroma_server(allowed)
                                          for allowed in (configured, *self.chroma_urls) if allowed)


def default_open_folders() -> tuple[Path, ...]:
    """The user's own folders: home, the data and cache folders, the bundled sample data."""
    folders = [Path.home(), default_data_dir(), default_cache_dir(), SAMPLE_DATA]
    return tuple(dict.fromkeys(_resolved(f) for f in folders))


def _resolved(path: str | Path) -> Path:
    return Path(path).expanduser().resolve()


def _split(text: str | None, sep: str) -> list[str]:
    return [part.strip() for part in (text or "").split(sep) if part.strip()]


def _same_prefix(url: str, allowed: str) -> bool:
    try:
        got, want = urlsplit(url.strip()), urlsplit(allowed.strip())
        got_port, want_port = got.port, want.port
    except ValueError:
        return False
    if (got.scheme.lower(), (got.hostname or "").lower()) != (want.scheme.lower(), (want.hostname or "").lower()):
        return False
    default = {"http": 80, "https": 443}.get(got.scheme.lower())
    if (got_port or default) != (want_port or default) or got.username or got.password:
        return False
    prefix = want.path.rstrip("/")
    return got.path == prefix or got.path.startswith(prefix + "/") or not prefix


def _chroma_server(url: str) -> tuple[bool, str, int] | None:
    """(https?, host, port) of a chroma server given as ``host[:port]`` or ``http(s)://host[:port]``, as
    ``backend.retrieval`` connects to it (default port 8000, or 443 over https); None if it names no host."""
    text = url.strip()
    try:
        parts = urlsplit(text if "://" in text else f"http://{text}")
        https = parts.scheme.lower() == "https"
        port = parts.port or (443 if https else 8000)
    except ValueError:
        return None
    return (https, parts.hostname.lower(), port) if parts.hostname else None


def from_sources(secrets: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> Deployment:
    """The settings from a secrets table (may be None) and the environment; the table wins where both give one."""
    table = dict(secrets or {})
    env = os.environ if environ is None else environ
    unknown = sorted(set(table) - (set(Deployment.model_fields) - {"configured"}))
    if unknown:
        raise DeploymentError(f"[{SECRETS_TABLE}] has unknown settings: {', '.join(unknown)}")
    given: dict[str, Any] = {}
    if "open_folders" in table or env.get(ENV_OPEN_FOLDERS):
        folders = table.get("open_folders", _split(env.get(ENV_OPEN_FOLDERS), os.pathsep))
        if isinstance(folders, str):
            folders = [folders]
        given["open_folders"] = tuple(dict.fromkeys(_resolved(f) for f in folders))
    if "max_file_mb" in table or env.get(ENV_MAX_FILE_MB):
        given["max_file_mb"] = table.get("max_file_mb", env.get(ENV_MAX_FILE_MB))
    if "label_store" in table or env.get(ENV_LABELS):
        given["label_store"] = table.get("label_store", env.get(ENV_LABELS))
    if "key_endpoints" in table or env.get(ENV_KEY_ENDPOINTS):
        endpoints = table.get("key_endpoints", _split(env.get(ENV_KEY_ENDPOINTS), ","))
        given["key_endpoints"] = tuple([endpoints] if isinstance(endpoints, str) else endpoints)
    for name in ("label_stores", "chroma_urls"):
        if name in table:
            value = table[name]
            given[name] = tuple([value] if isinstance(value, str) else value)
    try:
        return Deployment(open_folders=given.pop("open_folders", default_open_folders()), configured=bool(table),
                          **given)
    except ValidationError as err:
        fields = ", ".join(sorted({".".join(str(p) for p in e["loc"][:1]) for e in err.errors()}))
        raise DeploymentError(f"[{SECRETS_TABLE}] settings are not valid: {fields}") from None


_current: Deployment | None = None


def configure(secrets: Mapping[str, Any] | None) -> Deployment:
    """Set this process's settings from the secrets table (the app calls it on every script run: cheap)."""
    global _current
    _current = from_sources(secrets)
    return _current


def current() -> Deployment:
    """This process's settings: those ``configure`` set, else the environment's."""
    return _current if _current is not None else from_sources()


def reset() -> None:
    """Forget configured settings (tests)."""
    global _current
    _current = None
