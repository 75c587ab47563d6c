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
#: The uploader's generation: a kept file gets a fresh (empty) uploader, so that the widget's state, which holds the
#: whole file, goes with the old one at the end of the run.
GENERATION = "app.upload_generation"
#: When the uploads folder was last tidied by a page run in this process (``backend.uploads.tidy``; every upload
#: tidies it too).
_tidied = [0.0]
TIDY_EVERY_S = 3600


def widget_key() -> str:
    """The uploader's key: ``WIDGET``, then ``WIDGET.<n>`` after the n-th kept file."""
    generation = st.session_state.get(GENERATION, 0)
    return WIDGET if not generation else f"{WIDGET}.{generation}"


def name_of(digest: str) -> str:
    """The dataset's name: the hash's start (the user's file name is not kept: a link must reproduce it)."""
    return f"upload-{digest[:12]}"


def _received(upload_key: str) -> None:
    """The uploader's callback: keep the file, or say why not (shown in place of a dataset until the next file)."""
    st.session_state.pop(ERROR, None)
    got = st.session_state.get(widget_key())
    if got is None:  # the user removed the file
        st.session_state[upload_key] = ""
        return
    try:
        got.seek(0)
        st.session_state[upload_key] = uploads.save(got)  # read in pieces: no second copy in memory
    except uploads.UploadError as err:
        st.session_state[ERROR] = str(err)
    except OSError:
        st.session_state[ERROR] = "the uploaded file cannot be kept in the cache folder (not writable)"
    finally:
        _release(got)


def _release(got) -> None:
    """Free the server's copies of an uploaded file at once, kept or refused (Streamlit would hold them until the
    session ends): the file manager's record, the widget value's buffer, and the widget itself (a fresh key)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is not None and ctx.uploaded_file_mgr is not None:
        ctx.uploaded_file_mgr.remove_file(ctx.session_id, got.file_id)
    got.close()
    st.session_state[GENERATION] = st.session_state.get(GENERATION, 0) + 1


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


def _largest_mb() -> float:
    """The largest upload taken: the deployment's ``max_file_mb``, or Streamlit's ``server.maxUploadSize`` if less
    (the shipped .streamlit/config.toml sets it to the same 200 MB; the endpoint refuses anything larger)."""
    from backend import deployment

    return min(deployment.current().max_file_mb, float(st.get_option("server.maxUploadSize")))


def _tidy_now_and_then() -> None:
    """``backend.uploads.tidy`` at most once per ``TIDY_EVERY_S`` in this process, so an old upload goes even when
    nobody uploads; a folder that cannot be tidied (read-only) is left as it is."""
    import time

    if time.monotonic() - _tidied[0] < TIDY_EVERY_S and _tidied[0]:
        return
    _tidied[0] = time.monotonic()
    try:
        uploads.tidy()
    except (OSError, uploads.UploadError):
        pass


def render(upload_key: str, path_key: str):
    """The uploader; the uploaded dataset (``DatasetError`` naming "the uploaded file", never a server path), or
    None when nothing is uploaded."""
    from backend import deployment

    _tidy_now_and_then()
    st.sidebar.file_uploader("Upload a .jsonl file", type=["jsonl"], key=widget_key(), on_change=_received,
                             args=(upload_key,),
                             help=f"Up to {_largest_mb():g} MB. Kept in this server's cache folder under its "
                                  "content hash, so the page's link opens it again (an upload not opened for "
                                  f"{deployment.current().uploads_days:g} days is removed).")
    refused = st.session_state.get(ERROR)
    if refused:
        raise DatasetError([Problem("uploaded file", 0, "(file)", refused)])
    digest = st.session_state.get(upload_key) or ""
    path = uploads.path_of(digest) if digest else None
    if path is None:
        return None
    uploads.opened(path)
    st.sidebar.caption(f"Loaded the uploaded file ({name_of(digest)}).")
    try:
        return resources.dataset(path, name=name_of(digest))
    except DatasetError as err:  # name the upload, not where this server keeps it
        shown = str(path)
        raise DatasetError([Problem("uploaded file" if p.file == shown else p.file.replace(shown, "uploaded file"),
                                    p.line, p.field, p.message) for p in err.problems]) from None
