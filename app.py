"""ConflictLens: Streamlit entry point. Page wiring and the shared sidebar only."""

import backend  # noqa: F401  (offline environment before any heavy import)
import streamlit as st

from components import sidebar
from components.state import keep_widget_state

st.set_page_config(page_title="ConflictLens", page_icon=":material/search:", layout="wide")

pages = [
    st.Page("pages/inspect.py", title="Inspect", icon=":material/compare:", default=True, url_path="inspect"),
    st.Page("pages/dataset.py", title="Dataset", icon=":material/dataset:", url_path="dataset"),
    st.Page("pages/sources.py", title="Sources", icon=":material/hub:", url_path="sources"),
    st.Page("pages/debate.py", title="Debate", icon=":material/forum:", url_path="debate"),
    st.Page("pages/calls.py", title="Model calls", icon=":material/call_log:", url_path="calls"),
]
navigation = st.navigation(pages)
keep_widget_state()
sidebar.render()
navigation.run()
