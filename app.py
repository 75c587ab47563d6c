"""ConflictLens: Streamlit entry point. Page wiring and the shared sidebar only."""

import backend  # noqa: F401, I001  (offline environment before any heavy import)
from components.session import upload_gate  # noqa: I001  (light: Starlette only)

# First, before any slow import: Streamlit's upload endpoint takes files only for sessions admitted below (a session
# learns its id when its first run starts; the gate must be in place by then). Once per process.
upload_gate.install()

from pathlib import Path  # noqa: E402

import streamlit as st

from backend import warmup
from components import layout
from components.session import deployment, present, sidebar, signin
from components.session.state import keep_widget_state
from components.session.views import navigation_pages

# The page icon is a file in the repo, served by this server (/media/...). A ":material/...:" page icon makes the
# browser fetch its SVG from fonts.gstatic.com (the frontend builds that URL for favicons, unlike st.Page icons,
# which use the font bundled with Streamlit), so offline the tab had no icon and every page load went to Google.
ICON = Path(__file__).resolve().parent / "components" / "assets" / "icon.png"  # a 64×64 magnifier drawn with Pillow
st.set_page_config(page_title="ConflictLens", page_icon=ICON, layout="wide")
layout.inject(st)  # components/assets/layout.css: text wraps between words, rows of cards wrap (laptop screens)

# Every page, grouped as the user thinks (Question / Methods / Data / Evaluate), comes from the view registry
# (components/views.py); a method's page from its own components module, or the generic method page.
# A page file's name is its URL path: a fresh server's first request to a deep link resolves pages by file name
# (Streamlit's pages/ folder mode) before this navigation exists, and shared links (/sources, /debate) must work.
deployment.apply()  # what the server allows, before anything reads a file or a key
upload_gate.admit_this_session(not signin.configured() or signin.current() is not None, signin.configured())
who = signin.require()  # with [auth]: the sign-in page only, until the visitor is signed in
navigation = st.navigation(navigation_pages())
keep_widget_state()
sidebar.render()
signin.render_sidebar(who)
present.render()  # the truth overlay and presentation mode: one setting each, kept in the link
try:
    navigation.run()
finally:  # once the first page is drawn (or stopped): load what a first run needs while the user looks
    warmup.start()
