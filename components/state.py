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


@dataclass(frozen=True)
class Selection:
    dataset: Dataset
    question: Question
    model: ModelChoice


def key(page: str, name: str) -> str:
    return f"{page}.{name}"


def init_page_state(page: str, defaults: dict) -> None:
    """Set a page's defaults once per session."""
    flag = key(page, "initialized")
    if not st.session_state.get(flag):
        for name, value in defaults.items():
            st.session_state.setdefault(key(page, name), value)
        st.session_state[flag] = True


def current_selection() -> Selection | None:
    return st.session_state.get(SELECTION_KEY)
