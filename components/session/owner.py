"""Jobs end when nobody can see them: each app session has one stop ``threading.Event``, given to every runner it
builds (``runs.runner``: each model call checks it first, ``backend.limits``), and a watchdog thread of the process
sets it once the session is gone.

Gone means: Streamlit's session manager no longer knows the session (closed, or its reconnect window over), or it
has had no open tab (no live websocket) for the deployment's ``job_grace_seconds`` (default 120 s: Streamlit keeps a
disconnected session that long for a reconnect; a network blip stops nothing). A tab open on any page keeps its
session's jobs going, polled or not. The work then stops between calls: the calls in flight finish, their replies
stay in the reply cache, an evaluation writes no row for a pair it cut short and says in its summary why it stopped
(``backend.evaluate``), so whoever opens it again sees where it stopped and resumes it from the cache.

Without Streamlit's runtime (``AppTest``, a notebook) a session is never taken for gone."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import streamlit as st

from backend import deployment

STOP_KEY = "app.stop"
#: How often the watchdog looks (seconds): a stop lands this long after the grace at most.
POLL_S = 0.5

Status = str  # "active" (a tab is open), "waiting" (disconnected, kept for a reconnect), "gone", "unknown"


@dataclass
class _Watched:
    stop: threading.Event
    seen: float = field(default_factory=time.monotonic)  # when a tab of it was last open


_WATCHED: dict[str, _Watched] = {}
_LOCK = threading.Lock()
_thread: threading.Thread | None = None


def session_stop() -> threading.Event:
    """This session's stop: set once the session is gone (see the module docstring). Called on the script thread."""
    stop = st.session_state.get(STOP_KEY)
    if stop is None:
        stop = st.session_state[STOP_KEY] = threading.Event()
    if (session := _session_id()) is not None:
        watch(session, stop)
    return stop


def _session_id() -> str | None:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else None


def session_status(session_id: str) -> Status:
    """Where Streamlit's runtime has the session: its ``Runtime.is_active_session`` (a tab open), else its session
    manager's ``get_session_info`` (kept for a reconnect), else gone; "unknown" without a runtime."""
    from streamlit import runtime

    if not runtime.exists():
        return "unknown"
    instance = runtime.get_instance()
    if instance.is_active_session(session_id):
        return "active"
    manager = getattr(instance, "_session_mgr", None)  # no public look-up of a disconnected session
    info = getattr(manager, "get_session_info", None)
    if info is None:
        return "waiting"  # cannot tell: the grace decides
    return "waiting" if info(session_id) is not None else "gone"


def watch(session_id: str, stop: threading.Event) -> None:
    """Have the watchdog set ``stop`` once ``session_id`` is gone (again: a tab of it is open now)."""
    global _thread
    with _LOCK:
        entry = _WATCHED.get(session_id)
        if entry is None or entry.stop is not stop:
            entry = _WATCHED[session_id] = _Watched(stop)
        entry.seen = time.monotonic()
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_watchdog, name="conflictlens-owner-watchdog", daemon=True)
            _thread.start()


def sweep(status: Callable[[str], Status] = session_status, grace_s: float | None = None,
          now: float | None = None) -> list[str]:
    """One look of the watchdog: set the stop of every watched session that is gone; the sessions stopped."""
    grace = deployment.current().job_grace_seconds if grace_s is None else grace_s
    now = time.monotonic() if now is None else now
    stopped = []
    with _LOCK:
        entries = list(_WATCHED.items())
    for session_id, entry in entries:
        try:
            state = status(session_id)
        except Exception:  # noqa: BLE001 - a runtime that cannot answer this time: never a reason to stop
            state = "unknown"
        if state in ("active", "unknown"):
            entry.seen = now if state == "active" else entry.seen
            continue
        if state == "gone" or now - entry.seen > grace:
            entry.stop.set()
            stopped.append(session_id)
    with _LOCK:
        for session_id in stopped:
            if (entry := _WATCHED.get(session_id)) is not None and entry.stop.is_set():
                del _WATCHED[session_id]
    return stopped


def _watchdog() -> None:
    """Look every ``POLL_S`` while any session is watched; end when none is (``watch`` starts it again)."""
    global _thread
    while True:
        time.sleep(POLL_S)
        sweep()
        with _LOCK:
            if not _WATCHED:
                _thread = None
                return


def stopped_here() -> bool:
    """Whether this session's jobs were stopped (it was taken for gone, then came back: a reconnect after the
    grace). Its runners are then built again with a fresh stop."""
    stop = st.session_state.get(STOP_KEY)
    return stop is not None and stop.is_set()


def renew() -> threading.Event:
    """A fresh stop for this session (after ``stopped_here``): the runners built from now on run again."""
    st.session_state.pop(STOP_KEY, None)
    return session_stop()
