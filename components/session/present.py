"""What a link carries beyond dataset and question, shared by every page: the truth overlay (one setting for all
pages, ``?truth=1``), presentation mode (``?present=1``: no sidebar, display names with a line on each method,
larger type) and the methods Inspect compares (``?methods=ra_rag,madam``, checked here against the registry).

The truth overlay is display only: pages pass it to their views; no method ever reads it.
"""

from __future__ import annotations

import streamlit as st

from backend.methods import METHODS, title as method_title

#: The one truth toggle's key (every page's "Show ground truth" is this widget).
TRUTH_KEY = "app.show_truth"
PRESENT_KEY = "app.present"
#: Inspect's method picker (pages/inspect.py); its link parameter is checked here, before the page draws.
METHODS_KEY = "inspect.methods"
FLAGS = {"1": True, "0": False}
TRUTH_HELP = "Colour answers by gold / wrong, on every page. Methods never see these."


title = method_title  # a method's display name (backend.methods.title), as the pages import it here


def titled(results: dict) -> dict:
    """``results`` keyed by display names: what a chart's axes and a table's method column show."""
    return {title(name): value for name, value in results.items()}


def link_methods(params) -> tuple[list[str], list[str]]:
    """The methods a link's ``methods`` names that exist, and those that do not."""
    asked = [m.strip() for m in params.get("methods", "").split(",") if m.strip()]
    return [m for m in asked if m in METHODS], [m for m in asked if m not in METHODS]


def read_link(params) -> list[tuple[str, str, str]]:
    """On a session's first run: the overlay and presentation mode from the link; returns the notices
    ``(what, asked, shown)`` for values it does not know (shown as the link notice, never an error)."""
    notices = []
    for k, param, what in ((TRUTH_KEY, "truth", "truth overlay"), (PRESENT_KEY, "present", "presentation mode")):
        asked = params.get(param)
        if asked is not None and asked not in FLAGS:
            notices.append((what, asked, "off"))
        st.session_state.setdefault(k, FLAGS.get(asked, False))
    known, unknown = link_methods(params)
    if unknown:
        shown = known or list(METHODS)
        notices.append(("methods", ", ".join(unknown), ", ".join(title(m) for m in shown)))
    return notices


def shown() -> dict[str, str]:
    """What the page shows now, for the link notices (a notice goes once the user picks another value)."""
    methods = st.session_state.get(METHODS_KEY) or link_methods(st.query_params)[0] or list(METHODS)
    return {"truth": "on" if truth() else "off", "presentation": "on" if presenting() else "off",
            "methods": ", ".join(title(m) for m in methods)}


def truth() -> bool:
    return bool(st.session_state.get(TRUTH_KEY, False))


def presenting() -> bool:
    return bool(st.session_state.get(PRESENT_KEY, False))


def truth_toggle(parent=st, help: str = TRUTH_HELP, label: str = "Show ground truth") -> bool:  # noqa: A002
    """The truth overlay's toggle, where a page puts it; the same setting on every page and in the link."""
    return parent.toggle(label, key=TRUTH_KEY, help=help)


def _leave() -> None:
    st.session_state[PRESENT_KEY] = False


def render() -> None:
    """Every run, after the sidebar: the presentation toggle (sidebar; in the mode, a button in the page) and the
    link's ``truth`` / ``present`` parameters, present only when on."""
    # keep the two settings alive on pages that do not draw their widget (Streamlit drops an undrawn widget's state)
    for k in (TRUTH_KEY, PRESENT_KEY):
        st.session_state[k] = bool(st.session_state.get(k, False))
    st.sidebar.toggle("Presentation mode", key=PRESENT_KEY,
                      help="For showing the app: no sidebar, each method's name with one line on what it does, "
                           "larger type. The link keeps it (present=1).")
    for param, on in (("truth", truth()), ("present", presenting())):
        if on:
            st.query_params[param] = "1"
        elif param in st.query_params:
            del st.query_params[param]
    if presenting():
        st.html(f"<style>{PRESENT_CSS}</style>")
        st.button("Leave presentation mode", key="app.leave_present", icon=":material/close_fullscreen:",
                  on_click=_leave, help="Show the sidebar again (pickers, model, settings).")


#: Presentation mode's own CSS (scoped by the mode: injected only while it is on): the sidebar and its
#: open/close control hidden, larger type in the main pane.
PRESENT_CSS = """
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stExpandSidebarButton"],
[data-testid="stSidebarCollapseButton"] { display: none !important; }
[data-testid="stMain"] { font-size: 1.15rem; }
[data-testid="stMainBlockContainer"] { padding-top: 3rem; }
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMain"] [data-testid="stText"],
[data-testid="stMain"] [data-testid="stCaptionContainer"] { font-size: 1.1rem; }
[data-testid="stMain"] h1 { font-size: 2.6rem; }
"""
