"""Decision path: BRIDGE's soft bias, sub-queries, generated vs retrieved knowledge, S1–S4, the decision tree node by
node (with reflection cycles), the phase map and the response (docs/methods/bridge.md §7). The panels:
``components/bridge.py``."""

from components.session.views import render_method_page

render_method_page("bridge")
