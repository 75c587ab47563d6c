"""ConflictLens: Streamlit entry point. Page wiring and the shared sidebar only."""

import backend  # noqa: F401  (offline environment before any heavy import)
import streamlit as st

from components import sidebar

st.set_page_config(page_title="ConflictLens", page_icon="🔍", layout="wide")

pages = [
    st.Page("pages/dataset.py", title="Dataset", icon="📚", default=True, url_path="dataset"),
]
navigation = st.navigation(pages)
sidebar.render()
navigation.run()
