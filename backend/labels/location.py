"""Which label store a page may open: the rules of the Label page's "Label store" field (the command line's
``--labels`` takes any path or URL: its user's own shell).

The default is the store whoever runs the server set: ``label_store`` in the ``[deployment]`` table of
.streamlit/secrets.toml, or ``labels_url`` at its top level (the older name, an alias), else
``$CONFLICTLENS_LABELS``, else the per-user ``labels.db``. A page may switch only to

* the default, or a store listed in the deployment setting ``label_stores`` (opened as given);
* on a machine without a ``[deployment]`` table only (a team's open folders are for reading): a SQLite file inside
  the folders the server opens (``open_folders``, after symlinks) whose folder already
  exists (a page never creates folders), and which is either not there yet (a new store, named ``.db``,
  ``.sqlite`` or ``.sqlite3``) or an existing ConflictLens label store. Any other file, an empty one included, is
  refused and left exactly as it is.

A database URL typed on a page is refused unless it is the default or listed: nothing connects to it. When the
secrets file sets the store (``label_store`` or ``labels_url``), nothing can be typed: the page offers the listed
stores only. Every refusal is one line naming the rule, never a URL (it may hold a password).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from backend import deployment, files
from backend.deployment import Deployment
from backend.labels.store import (NEW_SUFFIXES, LabelStoreError, default_store_path, not_a_store, sqlite_file_state,
                                  store_url)

#: The older top-level key of .streamlit/secrets.toml naming the store (an alias of [deployment] label_store).
LEGACY_SECRET = "labels_url"


class LocationRefused(ValueError):
    """A store a page may not open; the message is one line for the user."""


@dataclass(frozen=True)
class StoreChoices:
    """What the Label page offers: the default store, whether the secrets fixed it (no typing), the other stores
    listed by whoever runs the server."""
    default: str
    fixed: bool = False
    listed: tuple[str, ...] = ()

    @property
    def options(self) -> list[str]:
        """The default, then the listed stores (each once)."""
        return list(dict.fromkeys([self.default, *self.listed]))


def choices(settings: Deployment, table: Mapping | None = None, labels_url: object = None) -> StoreChoices:
    """The page's choices from the deployment settings (``backend.deployment.current()``), the ``[deployment]``
    table they came from (did it set ``label_store``?) and the top-level ``labels_url`` secret. The table's
    ``label_store`` wins over ``labels_url``, which wins over ``$CONFLICTLENS_LABELS``; the first two fix the store,
    the environment only sets the default."""
    listed = tuple(s.strip() for s in settings.label_stores if isinstance(s, str) and s.strip())
    store = (settings.label_store or "").strip()
    if store and "label_store" in (table or {}):
        return StoreChoices(store, fixed=True, listed=listed)
    if isinstance(labels_url, str) and labels_url.strip():
        return StoreChoices(labels_url.strip(), fixed=True, listed=listed)
    return StoreChoices(store or str(default_store_path()), listed=listed)


def _same(a: str, b: str) -> bool:
    try:
        return store_url(a) == store_url(b)
    except LabelStoreError:
        return False


def page_location(typed: str, choices: StoreChoices) -> str:
    """The store to open for what the user typed or picked (empty: the default), or ``LocationRefused``. Only looks:
    nothing is created, opened for writing or connected to here."""
    text = (typed or "").strip()
    if not text:
        return choices.default
    for allowed in choices.options:
        if text == allowed or _same(text, allowed):
            return allowed
    if choices.fixed:
        raise LocationRefused("Label store: this server sets where labels live (the deployment setting label_store); "
                              "pick one of the stores it lists (label_stores)")
    if "://" in text:
        raise LocationRefused("Label store: a database URL typed on this page is refused; only this server's default "
                              "store and those in the deployment setting label_stores are opened")
    if deployment.current().configured:  # a team's server: open folders are for reading; no page makes a store
        raise LocationRefused("Label store: on this server a page opens only the default store and those in the "
                              "deployment setting label_stores")
    try:
        path = files.confine(text, "label store")
    except files.FileRefused as err:
        raise LocationRefused(f"Label store: {err}") from None
    if not path.parent.is_dir():
        raise LocationRefused(f"Label store: {path.parent}: no such folder (a page never creates folders)")
    state = sqlite_file_state(path)
    if state == "store":
        return str(path)
    if state == "other":
        raise LocationRefused(f"Label store: {not_a_store(path)}")
    if path.suffix.lower() not in NEW_SUFFIXES:
        raise LocationRefused(f"Label store: {path}: a new label store's file name ends in "
                              f"{', '.join(NEW_SUFFIXES)}")
    return str(path)


__all__ = ["StoreChoices", "LocationRefused", "choices", "page_location", "LEGACY_SECRET"]
