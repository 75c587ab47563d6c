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
``uploads_mb``         ``CONFLICTLENS_UPLOADS_MB``     the most the uploads folder holds (``backend.uploads``; default
                                                       2000 MB): past it, the uploads opened longest ago are removed
``uploads_days``       ``CONFLICTLENS_UPLOADS_DAYS``   an upload not opened for this long is removed (default 30)
``max_run_calls``      ``CONFLICTLENS_MAX_RUN_CALLS``  the most model calls one run may be estimated at without asking
                                                       (``backend.limits``; default 400); on a team server (a
                                                       ``[deployment]`` table) a ceiling no page can pass
``max_question_        ``CONFLICTLENS_MAX_QUESTION_    the most documents of a question a run may read without asking
documents``            DOCUMENTS``                     (default 100); binding on a team server, like the calls
``job_grace_seconds``  ``CONFLICTLENS_JOB_GRACE_S``    how long a session's background jobs outlive its last open tab
                                                       before they stop between model calls (default 120 s)
``leads``              ``CONFLICTLENS_LEADS``          the analysts who set labelling rounds and lead them: signed-in
                       (comma-separated)               analyst ids (``<sub>@<issuer host>[#...]``, the sidebar shows
                                                       each). Default: none; with sign-in nobody sets a round.
=====================  ==============================  ============================================================

A machine with no settings keeps the single-user convenience: the defaults open the user's own folders.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from backend import limits
from backend.llm import urls
from backend.paths import SAMPLE_DATA, default_cache_dir, default_data_dir

#: The table of .streamlit/secrets.toml holding these settings.
SECRETS_TABLE = "deployment"
ENV_OPEN_FOLDERS = "CONFLICTLENS_OPEN_FOLDERS"
ENV_MAX_FILE_MB = "CONFLICTLENS_MAX_FILE_MB"
ENV_LABELS = "CONFLICTLENS_LABELS"
ENV_KEY_ENDPOINTS = "CONFLICTLENS_KEY_ENDPOINTS"
#: ``backend.uploads``: the uploads folder's quota and how long an unopened upload is kept
ENV_UPLOADS = {"uploads_mb": "CONFLICTLENS_UPLOADS_MB", "uploads_days": "CONFLICTLENS_UPLOADS_DAYS"}
DEFAULT_UPLOADS_MB = 2000.0
DEFAULT_UPLOADS_DAYS = 30.0
#: ``backend.limits``: the ceiling of one run, and how long a job outlives its session's tabs
ENV_LIMITS = {"max_run_calls": "CONFLICTLENS_MAX_RUN_CALLS",
              "max_question_documents": "CONFLICTLENS_MAX_QUESTION_DOCUMENTS",
              "job_grace_seconds": "CONFLICTLENS_JOB_GRACE_S"}
ENV_LEADS = "CONFLICTLENS_LEADS"
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
    uploads_mb: float = Field(DEFAULT_UPLOADS_MB, gt=0, allow_inf_nan=False)
    uploads_days: float = Field(DEFAULT_UPLOADS_DAYS, gt=0, allow_inf_nan=False)
    #: Analyst ids (issuer + subject, ``backend.labels.analysts.analyst_id``) of the leads: only they set rounds.
    leads: tuple[str, ...] = ()
    max_run_calls: int = Field(limits.DEFAULT_MAX_CALLS, ge=1)
    max_question_documents: int = Field(limits.DEFAULT_MAX_DOCUMENTS, ge=1)
    job_grace_seconds: float = Field(limits.DEFAULT_JOB_GRACE_S, ge=0, allow_inf_nan=False)
    #: Whether the secrets hold a ``[deployment]`` table (a server set up for a team), not the environment alone.
    configured: bool = False

    @property
    def ceiling(self) -> limits.Ceiling:
        """The most one run may do without asking (``backend.limits``)."""
        return limits.Ceiling(max_calls=self.max_run_calls, max_documents=self.max_question_documents)

    @property
    def ceiling_binding(self) -> bool:
        """On a team server (a ``[deployment]`` table in the secrets) nobody on a page confirms past the ceiling: its
        operator raises it (the environment alone sets the figures, not this: the command line's own shell).
        On one's own machine the page asks, and a yes runs it."""
        return self.configured

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * 1024 * 1024)

    def allows_folder(self, path: Path) -> bool:
        """Whether ``path`` (already resolved) lies inside one of the open folders."""
        return any(path == folder or path.is_relative_to(folder) for folder in self.open_folders)

    def allows_keys_to(self, api_base: str | None) -> bool:
        """Whether the server's API keys may go to ``api_base``: no api_base (the provider's own endpoint), or one
        within an allowed prefix, both in the canonical form the request is sent to (``backend.llm.urls``: same
        scheme, host and port, and a path at or below the prefix's once dot segments are resolved). An api_base
        ``backend.llm.urls`` refuses is allowed nothing."""
        if not api_base:
            return True
        return urls.allows(api_base, self.key_endpoints)

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


def _chroma_server(url: str) -> tuple[bool, str, int] | None:
    """(https?, host, port) of a chroma server given as ``host[:port]`` or ``http(s)://host[:port]``, as
    ``backend.retrieval`` connects to it (default port 8000, or 443 over https); None if it names no host."""
    try:
        return urls.chroma_server(url)  # as ``backend.retrieval`` connects: one parse (``backend.llm.urls``)
    except urls.BadURL:
        return None


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
    if "leads" in table or env.get(ENV_LEADS):
        named = table.get("leads", _split(env.get(ENV_LEADS), ","))
        named = [named] if isinstance(named, str) else named
        if not isinstance(named, (list, tuple)) or not all(isinstance(n, str) for n in named):
            raise DeploymentError(f"[{SECRETS_TABLE}] settings are not valid: leads (a list of analyst ids)")
        given["leads"] = tuple(n.strip() for n in named if n.strip())
    for name, variable in ENV_LIMITS.items():
        if name in table or env.get(variable):
            given[name] = table.get(name, env.get(variable))
    for name, variable in ENV_UPLOADS.items():
        if name in table or env.get(variable):
            given[name] = table.get(name, env.get(variable))
    for name in ("label_stores", "chroma_urls"):
        if name in table:
            value = table[name]
            given[name] = tuple([value] if isinstance(value, str) else value)
    try:
        settings = Deployment(open_folders=given.pop("open_folders", default_open_folders()),
                              configured=bool(table), **given)
    except ValidationError as err:
        fields = ", ".join(sorted({".".join(str(p) for p in e["loc"][:1]) for e in err.errors()}))
        raise DeploymentError(f"[{SECRETS_TABLE}] settings are not valid: {fields}") from None
    _check_addresses(settings)
    return settings


def _check_addresses(settings: Deployment) -> None:
    """An address in the settings that ``backend.llm.urls`` refuses (whitespace, a user name, two parsers reading it
    differently...) stops the server with one line naming the setting and the rule, never the address."""
    try:
        for address in settings.key_endpoints:
            urls.parse(address.strip(), "key_endpoints entry")
        for address in settings.chroma_urls:
            urls.chroma_server(address)
        for address in (settings.label_store or "", *settings.label_stores):
            if "://" in address:  # a database URL: its password is its own (SQLAlchemy reads it), no whitespace
                urls.check_text(address.strip(), "label store URL")
    except urls.BadURL as err:
        raise DeploymentError(f"[{SECRETS_TABLE}] settings are not valid: {err}") from None


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


def shown_path(path: str | Path) -> str:
    """How a page shows a path of this server. On one's own machine (no deployment setting), as it is. On a team
    server (any ``[deployment]`` setting) a visitor is not told where the server keeps things: a path in the cache
    folder is shown as ``<cache>/…``, in the data folder as ``<data>/…``, in the home folder of the account running
    the server as ``~/…`` (the first that holds it); any other path (a dataset in an open folder, which visitors
    name themselves; a store its operator listed) as it is."""
    if not current().configured:
        return str(path)
    given = Path(path).expanduser()
    try:
        resolved = given.resolve()
    except (OSError, RuntimeError):
        resolved = given
    for shown, base in (("<cache>", default_cache_dir()), ("<data>", default_data_dir()), ("~", Path.home())):
        for folder in dict.fromkeys((base.expanduser().absolute(), base.expanduser().resolve())):
            if resolved == folder or resolved.is_relative_to(folder):
                inside = resolved.relative_to(folder).as_posix()
                return shown if inside == "." else f"{shown}/{inside}"
    return str(path)
