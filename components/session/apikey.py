"""A key typed for an api_base that may not receive the server's keys (``backend.llm.keys``).

It lives in this browser session's state only, under the sidebar's password field: never in the URL, a ``RunKey`` or
``Selection``, results, caches, logs or exports. It belongs to the api_base it was typed for: changing the api_base (or
picking a built-in model) forgets it, and so does Streamlit when the field is not drawn (the api_base is empty or
allowed again)."""

from __future__ import annotations

import streamlit as st

from backend import deployment

#: The password field's widget key.
KEY = "app.api_key"


def needed(api_base: str | None) -> bool:
    """Whether ``api_base`` gets only a key typed for it: set, and not one the server's keys may go to."""
    return bool(api_base) and not deployment.current().allows_keys_to(api_base)


def typed() -> str | None:
    """The key typed for the current api_base, if any."""
    value = st.session_state.get(KEY)
    return value.strip() or None if isinstance(value, str) else None


def forget() -> None:
    """Drop the typed key (a widget callback: the api_base it was typed for changed)."""
    st.session_state.pop(KEY, None)
