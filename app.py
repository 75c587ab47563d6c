"""ConflictLens: Streamlit entry point. Page wiring and the shared sidebar only."""

import backend  # noqa: F401, I001  (offline environment before any heavy import)
from pathlib import Path

import streamlit as st

from backend import warmup
from components.session import sidebar
from components.session.state import keep_widget_state

# The page icon is a file in the repo, served by this server (/media/...). A ":material/...:" page icon makes the
# browser fetch its SVG from fonts.gstatic.com (the frontend builds that URL for favicons, unlike st.Page icons,
# which use the font bundled with Streamlit), so offline the tab had no icon and every page load went to Google.
ICON = Path(__file__).resolve().parent / "components" / "assets" / "icon.png"  # a 64×64 magnifier drawn with Pillow
st.set_page_config(page_title="ConflictLens", page_icon=ICON, layout="wide")

# Grouped as the user thinks: one question, each method's reasoning, the data and the model calls behind them, and
# every method over a whole dataset.
# A page file's name is its URL path: a fresh server's first request to a deep link resolves pages by file name
# (Streamlit's pages/ folder mode) before this navigation exists, and shared links (/sources, /debate) must work.
pages = {
    "Question": [
        st.Page("pages/inspect.py", title="Inspect", icon=":material/compare:", default=True, url_path="inspect"),
        st.Page("pages/whatif.py", title="What-if", icon=":material/science:", url_path="whatif"),
    ],
    "Methods": [
        st.Page("pages/sources.py", title="Sources (RA-RAG)", icon=":material/hub:", url_path="sources"),
        st.Page("pages/debate.py", title="Debate (MADAM-RAG)", icon=":material/forum:", url_path="debate"),
        st.Page("pages/astute.py", title="Consolidation (Astute RAG)", icon=":material/merge:", url_path="astute"),
        st.Page("pages/counterfactual.py", url_path="counterfactual", icon=":material/shield:",
                title="Risk (counterfactual prompting)"),
        st.Page("pages/bridge.py", title="Decision path (BRIDGE)", icon=":material/account_tree:", url_path="bridge"),
    ],
    "Data": [
        st.Page("pages/dataset.py", title="Dataset", icon=":material/dataset:", url_path="dataset"),
        st.Page("pages/calls.py", title="Model calls", icon=":material/call_log:", url_path="calls"),
    ],
    "Evaluate": [
        st.Page("pages/evaluate.py", title="Evaluate", icon=":material/leaderboard:", url_path="evaluate"),
        st.Page("pages/labels.py", title="Label", icon=":material/label:", url_path="labels"),
    ],
}
navigation = st.navigation(pages)
keep_widget_state()
sidebar.render()
try:
    navigation.run()
finally:  # once the first page is drawn (or stopped): load what a first run needs while the user looks
    warmup.start()
