"""Session state in one place: page-namespaced keys and the app-wide selection.

Every key is ``"<page>.<name>"`` so pages never trample each other's state (after TruLens' dashboard).
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from backend.schema import Dataset, Question

SELECTION_KEY = "app.selection"
DEFAULT_MODEL = "offline/reader"


@dataclass(frozen=True)
class ModelChoice:
    model: str = DEFAULT_MODEL
    api_base: str | None = None  # keys never live here: they come from the environment or st.secrets
    structured_output: bool = False  # ask for each task's JSON schema where the model supports it
    #: how the methods read the replies (``backend.methods.reading``): the project's tolerant readers or the papers'
    reading: str = "tolerant"


@dataclass(frozen=True)
class Selection:
    dataset: Dataset
    question: Question
    model: ModelChoice
    #: A chroma server holding the retrieval index (None: the embedded index in the cache folder).
    chroma_url: str | None = None


def key(page: str, name: str) -> str:
    return f"{page}.{name}"


PERSISTENT_KEYS = "app.persistent_keys"


def init_page_state(page: str, defaults: dict) -> None:
    """Set a page's defaults (first visit) and keep those keys alive while the user is on other pages."""
    keep = st.session_state.setdefault(PERSISTENT_KEYS, set())
    for name, value in defaults.items():
        k = key(page, name)
        keep.add(k)
        st.session_state.setdefault(k, value)


def keep_widget_state() -> None:
    """Streamlit deletes a widget's state when a run does not draw it (another page is shown);
    re-assigning the registered keys at the top of every run keeps each page's choices."""
    for k in st.session_state.get(PERSISTENT_KEYS, ()):
        if k in st.session_state:
            st.session_state[k] = st.session_state[k]


def current_selection() -> Selection | None:
    return st.session_state.get(SELECTION_KEY)


def require_selection(model_note: bool = True) -> Selection:
    """The sidebar's selection; without one, a hint and ``st.stop()``. ``model_note``: say under the title what the
    selected model is when it is one of ours (``components.models.model_note``): the offline model a heuristic
    reader, the local model a real language model on this CPU."""
    selection = current_selection()
    if selection is None:
        if st.session_state.get("app.load_failed"):  # the sidebar put the reasons above (components.session.sidebar)
            st.info("Fix the file and press R to load it again, or pick another dataset in the sidebar.")
        else:
            st.info("Pick a dataset in the sidebar.")
        st.stop()
    if model_note:
        from components.models import model_note as note_for

        if (note := note_for(selection.model.model)) is not None:
            st.caption(note)
    return selection
