"""Heavy, shareable resources under ``st.cache_resource`` (one copy per server process)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from backend.data import confined_path, load_dataset
from backend.schema import Dataset


def _mtime(path: str) -> float:
    p = Path(path)
    target = p / "questions.jsonl" if p.is_dir() else p
    extra = p / "sources.json" if p.is_dir() else None
    stamp = target.stat().st_mtime if target.exists() else 0.0
    return stamp + (extra.stat().st_mtime if extra and extra.exists() else 0.0)


@st.cache_resource(show_spinner="Loading dataset…", max_entries=8)
def _load(path: str, mtime: float, name: str | None, _confined: bool = False) -> Dataset:
    # _confined is not part of the key: a confined path is resolved already, the same file as unconfined
    return load_dataset(path, name=name, confined=_confined)


def dataset(path: str | Path, name: str | None = None, *, confined: bool = False) -> Dataset:
    """The dataset at ``path``, reloaded when its files change; raises ``DatasetError``. ``confined``: a path from
    the page or a link, refused outside the deployment's open folders before anything there is looked at."""
    if confined:
        path = confined_path(path)
    return _load(str(path), _mtime(str(path)), name, confined)


@st.cache_resource(show_spinner=False, max_entries=4)
def _retriever(path: str, mtime: float, name: str | None, chroma_url: str | None):
    from backend.retrieval import Retriever

    return Retriever(_load(path, mtime, name), chroma_host=chroma_url)


def retriever(path: str | Path, name: str | None = None, chroma_url: str | None = None):
    """The dataset's retriever (index in the cache folder, or on the chroma server at ``chroma_url``); building it
    is left to the caller. Raises ``RetrievalError`` when the index cannot be opened."""
    return _retriever(str(path), _mtime(str(path)), name, chroma_url)
