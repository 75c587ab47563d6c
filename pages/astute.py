"""Consolidation: Astute RAG's internal passages, the numbered passages D0, the consolidation groups of every round,
the candidates' confidence and the final pick (docs/methods/astute.md §7). The panels: ``components/astute.py``."""

from components.session.views import render_method_page

render_method_page("astute")
