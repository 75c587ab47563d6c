"""The app's view registry (pure data, no Streamlit): every page of the navigation, from which ``app.py``'s menu and
Inspect's "details" links are generated.

The app's own views are listed here. A method's view is declared beside its panels, as ``VIEW`` in
``components/<home>.py`` (``home``: the method's module under ``backend/methods``). A method with no view of its own
gets the generic method page (its answers, trace and calls); a baseline has no page, and its details are on the Model
calls page.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from backend.methods import SPECS

SECTIONS = ("Question", "Methods", "Data", "Evaluate")
#: the generic page's icon
GENERIC_ICON = ":material/extension:"


@dataclass(frozen=True)
class View:
    title: str
    icon: str
    url_path: str             # the page's URL; for a page file, its file name (deep links on a fresh server)
    page: str | None = None   # the page file; None: the generic method page of ``method``
    section: str = "Methods"
    method: str | None = None
    default: bool = False
    #: a method view's place in the menu (default: its method's ``MethodSpec.order``, Inspect's column order)
    order: int | None = None
    # -- a method page drawn by the shared method page (``components.session.views.render_method_page``) ----------
    #: under the title: the question as the method reads it (``intro(st, question)``); None: its text and documents
    intro: Callable[[Any, Any], None] | None = None
    run_label: str = ""               # what the progress line says while it runs; "": "Running <title>"
    truth_help: str = "Colour answers by gold / wrong. Methods never see these."
    #: the panels of a successful run: ``panels(st, result, question, show_truth, page)``; None: the generic ones
    panels: Callable[[Any, Any, Any, bool, str], None] | None = None
    #: the calls of a failed run (``calls(st, calls)``); None: the generic call table
    calls: Callable[[Any, Any], None] | None = None
    missing: str = "no trace"         # what a failed run could not show


# Grouped as the user thinks: one question, each method's reasoning, the data and the model calls behind them, and
# every method over a whole dataset.
APP_VIEWS = (
    View("Inspect", ":material/compare:", "inspect", "pages/inspect.py", "Question", default=True),
    View("Cases", ":material/lightbulb:", "cases", "pages/cases.py", "Question"),
    View("What-if", ":material/science:", "whatif", "pages/whatif.py", "Question"),
    View("Dataset", ":material/dataset:", "dataset", "pages/dataset.py", "Data"),
    View("Model calls", ":material/call_log:", "calls", "pages/calls.py", "Data"),
    View("Evaluate", ":material/leaderboard:", "evaluate", "pages/evaluate.py", "Evaluate"),
    View("Label", ":material/label:", "labels", "pages/labels.py", "Evaluate"),
)
CALLS = next(v for v in APP_VIEWS if v.url_path == "calls")


def method_view(name: str) -> View | None:
    """``name``'s own view (its ``VIEW`` in ``components/<home>.py``), else the generic page; None for a baseline."""
    spec = SPECS[name]
    if spec.baseline:
        return None
    if spec.home and importlib.util.find_spec(f"components.{spec.home}") is not None:
        view = getattr(importlib.import_module(f"components.{spec.home}"), "VIEW", None)
        if isinstance(view, View) and view.method == name:
            return view
    return View(spec.title, GENERIC_ICON, name, None, "Methods", method=name)


def views() -> list[View]:
    """Every page in menu order: the app's own, with each method's view (in display order) under Methods."""
    methods = sorted((v for name in SPECS if (v := method_view(name)) is not None),
                     key=lambda v: SPECS[v.method].order if v.order is None else v.order)
    return [v for section in SECTIONS for v in [*APP_VIEWS, *methods] if v.section == section]


def details_view(name: str) -> View:
    """Where a method's "details" link goes: its view, or the Model calls page for a baseline."""
    return method_view(name) or CALLS
