"""Sign-in for teams: Streamlit's own ``st.login`` / ``st.user`` / ``st.logout`` against the OpenID Connect provider
whoever runs the server names in the ``[auth]`` table of .streamlit/secrets.toml (Streamlit reads that table itself:
redirect_uri, cookie_secret, client_id, client_secret, server_metadata_url). Without ``[auth]`` nothing changes:
no sign-in, and the Label page's analyst is a name the user types (marked self-declared).

With ``[auth]`` a visitor who is not signed in sees the sign-in page only, whatever the link: ``require`` stops the
script before the navigation, the sidebar or any page runs (Streamlit always runs app.py first, deep links too).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import streamlit as st

from backend.labels.analysts import analyst_id
from components.session.deployment import secrets_table

AUTH_TABLE = "auth"
#: What Streamlit's st.login needs in [auth] (or, for a named provider, in [auth.NAME]); checked here first so a
#: half-written table stops the app with one line instead of failing when the button is pressed.
SHARED_KEYS = ("redirect_uri", "cookie_secret")
PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")


@dataclass(frozen=True)
class Identity:
    """Who is signed in: ``analyst`` is stored with the labels they save and names the leads: the provider's issuer
    and the account's subject (``backend.labels.analysts.analyst_id``), never an email or a name, which an account
    may claim; ``shown`` is what the sidebar says (the name, and the email only when the provider verified it)."""
    analyst: str
    shown: str


def identity_of(user: Mapping[str, Any]) -> Identity | None:
    """The identity in ``st.user``'s claims (None when not signed in, or when they hold no issuer or subject: the
    ID token always has both). The email is shown only when ``email_verified`` is exactly true (a provider that
    omits it, as Microsoft Entra ID does, lets the claim say any address), and is never the identity."""
    if not user.get("is_logged_in"):
        return None
    analyst = analyst_id(str(user.get("iss") or ""), str(user.get("sub") or ""))
    if analyst is None:
        return None
    name, email = (str(user.get(k) or "").strip() for k in ("name", "email"))
    if user.get("email_verified") is not True and str(user.get("email_verified")).lower() != "true":
        email = ""
    shown = f"{name} ({email})" if name and email and name != email else name or email or analyst
    return Identity(analyst=analyst, shown=shown)


def configured(auth: Mapping[str, Any] | None = None) -> bool:
    """Whether whoever runs the server configured sign-in (an ``[auth]`` table in the secrets)."""
    return bool(secrets_table(AUTH_TABLE) if auth is None else auth)


def missing_settings(auth: Mapping[str, Any]) -> list[str]:
    """The ``[auth]`` keys st.login needs and the table lacks (the default provider's, or each named one's)."""
    missing = [k for k in SHARED_KEYS if not auth.get(k)]
    named = {name: dict(v) for name, v in auth.items() if hasattr(v, "keys")}
    if named:
        missing += [f"{name}.{k}" for name, section in named.items() for k in PROVIDER_KEYS if not section.get(k)]
    else:
        missing += [k for k in PROVIDER_KEYS if not auth.get(k)]
    return missing


def providers(auth: Mapping[str, Any]) -> list[str | None]:
    """The providers a visitor may sign in with: the named ``[auth.NAME]`` sections, else the default (None)."""
    named = [name for name, v in auth.items() if hasattr(v, "keys")]
    return named or [None]


def current() -> Identity | None:
    """The signed-in identity of this session (None without ``[auth]`` or before sign-in)."""
    if not configured():
        return None
    return identity_of(st.user.to_dict())


def require() -> Identity | None:
    """With ``[auth]``: the signed-in identity, else the sign-in page and ``st.stop()`` (nothing else is drawn).
    Without ``[auth]``: None, and the app runs as before."""
    auth = secrets_table(AUTH_TABLE)
    if not configured(auth):
        return None
    if missing := missing_settings(auth):
        st.error(f"This server's sign-in is not set up: [auth] in .streamlit/secrets.toml lacks "
                 f"{', '.join(missing)}. Whoever runs the server fixes it.", icon=":material/error:")
        st.stop()
    if importlib.util.find_spec("authlib") is None:
        st.error("This server's sign-in needs Authlib, which is not installed: `pip install -r requirements.txt`.",
                 icon=":material/error:")
        st.stop()
    who = identity_of(st.user.to_dict())
    if who is not None:
        return who

    def sign_in() -> None:
        _sign_in_page(auth)

    # the only page (hidden): without a navigation Streamlit lists the pages/ folder in the sidebar, and any link
    # (/debate?dataset=...) resolves to this one page
    st.navigation([st.Page(sign_in, title="Sign in", default=True)], position="hidden").run()
    st.stop()
    return None  # not reached


def _sign_in_page(auth: Mapping[str, Any]) -> None:
    st.title("ConflictLens")
    st.write("This server is shared by a team: sign in, so that what you do here, and every label you save, "
             "carries who you are.")
    if st.user.get("is_logged_in"):  # signed in, but the claims hold no issuer or subject
        st.error("The sign-in provider sent no issuer or subject for this account; ask whoever runs the server.",
                 icon=":material/error:")
    for provider in providers(auth):
        label = "Sign in" if provider is None else f"Sign in with {provider}"
        if st.button(label, type="primary", key=f"signin.{provider or 'default'}"):
            st.login(*([provider] if provider else []))


def render_sidebar(who: Identity | None) -> None:
    """Who is signed in and the Sign out button, at the foot of the sidebar (nothing without sign-in)."""
    if who is None:
        return
    box = st.sidebar.container(border=True)
    box.text(f"Signed in as {who.shown}")  # the provider's claims: data, never Markdown
    if who.shown != who.analyst:  # what labels are stored under, and what whoever runs the server names leads by
        box.caption("Analyst id (stored with your labels)")
        box.text(who.analyst)
    if box.button("Sign out", key="signin.logout", icon=":material/logout:"):
        st.logout()

