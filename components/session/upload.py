"""The sidebar's upload, beside typing a path: the file is kept under the cache folder as
``uploads/<content hash>.jsonl`` (``backend.uploads``) and loaded as a typed path is; the link names it by its hash
(``?dataset=upload:<hash>``), never by a path."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from backend import uploads
from backend.data import DatasetError, Problem
from components.session import resources

WIDGET = "app.upload_file"
ERROR = "app.upload_error"


def name_of(digest: str) -> str:
    """The dataset's name: the hash's start (the user's file name is not kept: a link must reproduce it)."""
    return f"upload-{digest[:12]}"


def _received(upload_key: str) -> None:
    """The uploader's callback: keep the file, or say why not (shown in place of a dataset until the next file)."""
    st.session_state.pop(ERROR, None)
    got = st.session_state.get(WIDGET)
    if got is None:  # the user removed the file
        st.session_state[upload_key] = ""
        return
    try:
        st.session_state[upload_key] = uploads.save(got.getvalue())
    except uploads.UploadError as err:
        st.session_state[ERROR] = str(err)
    except OSError:
        st.session_state[ERROR] = "the uploaded file cannot be kept in the cache folder (not writable)"


def forget(upload_key: str) -> None:
    """A typed path wins over the upload."""
    st.session_state[upload_key] = ""
    st.session_state.pop(ERROR, None)


def check_link(dataset_key: str, fallback: str, asked: str | None,
               notice: Callable[[str, str | None, str], None]) -> None:
    """Before the dataset picker is drawn: an upload the link names that this server does not hold falls back to
    ``fallback`` with the link notice."""
    digest = st.session_state.get("app.upload") or ""
    if digest and uploads.path_of(digest) is not None:
        return
    st.session_state["app.upload"] = ""
    if asked and asked.startswith(uploads.PREFIX):  # the first run's link (dropped once a dataset is shown)
        st.session_state[dataset_key] = fallback
        notice("dataset", asked, fallback)


def render(upload_key: str, path_key: str):
    """The uploader; the uploaded dataset (``DatasetError`` naming "the uploaded file", never a server path), or
    None when nothing is uploaded."""
    from backend import deployment

    st.sidebar.file_uploader("Upload a .jsonl file", type=["jsonl"], key=WIDGET, on_change=_received,
                             args=(upload_key,),
                             help=f"Up to {deployment.current().max_file_mb:g} MB. Kept in this server's cache "
                                  "folder under its content hash, so the page's link opens it again.")
    refused = st.session_state.get(ERROR)
    if refused:
        raise DatasetError([Problem("uploaded file", 0, "(file)", refused)])
    digest = st.session_state.get(upload_key) or ""
    path = uploads.path_of(digest) if digest else None
    if path is None:
        return None
    st.sidebar.caption(f"Loaded the uploaded file ({name_of(digest)}).")
    try:
        return resources.dataset(path, name=name_of(digest))
    except DatasetError as err:  # name the upload, not where this server keeps it
        shown = str(path)
        raise DatasetError([Problem("uploaded file" if p.file == shown else p.file.replace(shown, "uploaded file"),
                                    p.line, p.field, p.message) for p in err.problems]) from None
