"""Streamlit's upload endpoint behind the app's own door: a file is taken only for a session this app has let in.

The browser sends an uploader's file to ``PUT /_stcore/upload_file/<session id>/<file id>``, which Streamlit answers
by itself: app.py never runs for it, so sign-in (``components.session.signin``) does not cover it, and a visitor who
is not signed in could fill the server's memory (Streamlit keeps every file in memory until its session ends).

``install`` (first thing in app.py, once per process) puts a check in front of that route: a request for a session
that ``admit`` has not let in gets 401 before a byte of its body is read (uvicorn then closes the connection, so
the body is never buffered). ``admit`` runs on every script run: with ``[auth]``, only a signed-in session is let
in; without it, every session whose script ran. A session id the app never saw is refused, so nothing is let in
between the server's start and a session's first run.

It wraps Starlette's ``Route.handle`` (Streamlit 1.67 serves through Starlette): ``install`` checks first that the
pinned Streamlit still serves uploads at that route, and says so in one line when it does not, so that a Streamlit
upgrade that moves it stops a server with sign-in instead of quietly opening the endpoint again
(``tests/security/test_uploads.py`` runs a real server against it).
"""

from __future__ import annotations

import threading
from typing import Any

#: Streamlit's upload route, below ``server.baseUrlPath`` (its frontend PUTs each file there).
UPLOAD_ROUTE = "/_stcore/upload_file/{session_id}/{file_id}"
REFUSED = "Sign in to upload files to this server."
_MARK = "_conflictlens_upload_gate"

_admitted: set[str] = set()
_lock = threading.Lock()
_install_error: str | None = None


class GateError(RuntimeError):
    """The upload endpoint cannot be put behind the gate with this Streamlit: one line saying so."""


def may_upload(session_id: str) -> bool:
    """Whether the upload endpoint takes a file for ``session_id`` (a session ``admit`` let in)."""
    with _lock:
        return session_id in _admitted


def _check_streamlit() -> Any:
    """Starlette's ``Route`` class, after checking that this Streamlit serves uploads where the gate looks."""
    import streamlit

    try:
        from starlette.routing import Route
        from streamlit.web.server.starlette import starlette_routes
        route = "/" + starlette_routes._ROUTE_UPLOAD_FILE
    except (ImportError, AttributeError):
        route = None
    if route != UPLOAD_ROUTE or not callable(getattr(Route, "handle", None)):
        raise GateError(f"Streamlit {streamlit.__version__} no longer serves uploads at {UPLOAD_ROUTE} through "
                        "Starlette, so this server cannot keep them behind sign-in (checked with Streamlit 1.67)")
    return Route


def install() -> None:
    """Once per process: refuse, with 401 and before its body is read, every upload for a session not admitted.
    When this Streamlit serves uploads elsewhere nothing is installed, and ``admit`` stops a server with sign-in."""
    global _install_error
    try:
        route_class = _check_streamlit()
    except GateError as err:
        _install_error = str(err)
        return
    if getattr(route_class.handle, _MARK, False):
        return
    from starlette.responses import PlainTextResponse

    original = route_class.handle

    async def handle(self, scope, receive, send):
        if (scope.get("type") == "http" and scope.get("method") == "PUT" and self.path.endswith(UPLOAD_ROUTE)
                and not may_upload(str(scope.get("path_params", {}).get("session_id", "")))):
            # answered before receive() is ever called: the body stays in the client's socket, not in memory
            await PlainTextResponse(REFUSED, status_code=401, headers={"Connection": "close"})(scope, receive, send)
            return
        await original(self, scope, receive, send)

    setattr(handle, _MARK, True)
    route_class.handle = handle


def admit(session_id: str, allowed: bool, sign_in_required: bool) -> None:
    """Let ``session_id`` upload (``allowed``: signed in, or no sign-in on this server) or not. With sign-in
    required and the gate not installed, the page says so and stops: an open upload endpoint is not served."""
    if sign_in_required and _install_error is not None:
        import streamlit as st

        st.error(f"{_install_error}. Whoever runs the server pins Streamlit to requirements.txt's version.",
                 icon=":material/error:")
        st.stop()
    with _lock:
        if allowed:
            _admitted.add(session_id)
        else:
            _admitted.discard(session_id)
        _forget_ended(session_id)


def _forget_ended(keep: str) -> None:
    """Drop the sessions that ended (the set stays as small as the sessions connected). Called holding the lock."""
    from streamlit import runtime

    if not runtime.exists():
        return
    live = runtime.get_instance()
    for session_id in [s for s in _admitted if s != keep and not live.is_active_session(s)]:
        _admitted.discard(session_id)


def admit_this_session(allowed: bool, sign_in_required: bool) -> None:
    """``admit`` for the session running this script."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is not None:
        admit(ctx.session_id, allowed, sign_in_required)
