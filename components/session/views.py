"""The app's navigation and "details" links as Streamlit pages, generated from the view registry
(``components.views``), and the generic method page that serves every method without a view of its own."""

from __future__ import annotations

import streamlit as st

from backend.methods import SPECS
from backend.report.text import plural
from components import method_page
from components.failures import render_failure
from components.read_status import render_read_status
from components.reading import render_reading
from components.safe import md
from components.session.navigation import ensure_navigation
from components.session.present import truth_toggle
from components.session.run_block import run_block
from components.session.state import require_selection
from components.story import render_method_story
from components.views import SECTIONS, View, details_view, method_view, views


def page(view: View) -> st.Page:
    if view.page is not None:
        return st.Page(view.page, title=view.title, icon=view.icon, url_path=view.url_path, default=view.default)
    return st.Page(_generic(view.method), title=view.title, icon=view.icon, url_path=view.url_path)


def navigation_pages() -> dict[str, list[st.Page]]:
    every = views()
    return {section: [page(v) for v in every if v.section == section] for section in SECTIONS}


def details_page(name: str) -> st.Page | str:
    """What Inspect's "details" link under ``name``'s column opens: a page file, or the generic page."""
    view = details_view(name)
    return view.page if view.page is not None else page(view)


def _generic(name: str):
    def run() -> None:
        render_method_page(name)

    run.__name__ = f"method_{name}"
    return run


def render_method_page(name: str) -> None:
    """A method's page: its title, the question as the method reads it, the run block (button, progress, results),
    and then, after the truth toggle, its view's panels (or the generic ones); a failed run shows its failure and
    calls. A method page file is this one call; a method without a view gets it as its generic page."""
    spec, view = SPECS[name], method_view(name)
    page = view.url_path
    ensure_navigation()
    st.title(view.title)
    if view.panels is None:  # the generic page: say what the method does (its own view's page says it its way)
        st.caption(spec.description)
    selection = require_selection(model_note=False)
    question = selection.question
    if view.intro is not None:
        view.intro(st, question)
    else:
        st.text(question.question)
        st.caption(f"{md(question.id)} · {plural(len(question.documents), 'document')}")
    results = run_block(selection, [name], view.run_label or f"Running {spec.title}", page, model_note=True)
    if results is None:  # in flight (it goes on in the background whatever the user clicks), or not run yet
        st.stop()
    result = results[name]
    kind = spec.trace.model_fields["kind"].default  # by kind, not class: a re-imported trace module is the same
    if result.error or result.trace is None or result.trace.kind != kind:
        model = next((c.model for c in result.calls if c.error), None)
        render_failure(st, f"{spec.title} failed on this question:", result.error, model=model, missing=view.missing)
        if result.calls:
            (view.calls or method_page.render_calls)(st, result.calls)
        st.stop()
    render_read_status(st, result.calls)  # replies the method could not read: it took its paper's default
    render_reading(st, result)  # decisions the other reading of the same replies would have read otherwise
    show_truth = truth_toggle(st, help=view.truth_help)
    render_method_story(st, selection, name, result, show_truth)  # the question's story, this method's line
    (view.panels or method_page.render_panels)(st, result, question, show_truth, page)
