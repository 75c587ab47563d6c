"""Keep Streamlit in ``st.navigation`` mode even though page files live in ``pages/``.

Streamlit treats an app whose folder has ``pages/`` as a legacy multipage app until ``st.navigation``
runs once in the process. So the first request of a fresh server that deep-links to a page (``/dataset``)
runs that page file alone, without ``app.py`` and its sidebar; AppTest does the same on every rerun.
Every page calls ``ensure_navigation()`` first: in legacy mode it switches the mode and reruns, so
``app.py`` runs and routes to the same page (legacy and ``st.Page`` agree on the URL path).
"""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager


def ensure_navigation() -> None:
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()
