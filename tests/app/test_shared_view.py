"""One truth overlay for every page (and in the link), link values the app does not know shown as a notice, and
pages that speak the user's words: display names, not the registry's ids; no notes meant for the developers."""

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")
PAGES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py"))
TRUTH = "app.show_truth"
#: What a user must never read on a page: the registry's ids (as written, and as Markdown escapes them) and notes
#: meant for the developers (the spec files, "[ours]", module paths).
FORBIDDEN = ("ra_rag", r"ra\_rag", "vanilla_rag", r"vanilla\_rag", "no_rag", r"no\_rag", "[ours]", r"\[ours\]",
             "bridge.md", "docs/methods", "backend.report", "Pair mapping")


def _started(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update(params)
    return wait_for_runs(at.run())


def _texts(at: AppTest) -> list[str]:
    """Everything the page writes, plus its widgets' labels and the options as they are shown. Call ids
    (``ra_rag:step:hash``: the Model calls page's "show call" and a call's parents) and results folders' names are
    identifiers by design."""
    out = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "text", "info", "warning", "success", "error"):
        out += [str(e.value).split(" · parents: ")[0] for e in getattr(at, kind)]
    for kind in ("multiselect", "selectbox", "radio"):
        for w in getattr(at, kind):
            # run pickers list results folders by name (a folder's name is a path, named after its methods)
            ids = w.label == "show call" or w.label.startswith("Evaluation run of")
            out += [w.label, *(map(str, w.options) if not ids else ())]
    for kind in ("toggle", "button", "checkbox"):
        out += [w.label for w in getattr(at, kind)]
    return out


def test_truth_turned_on_in_one_page_is_on_in_every_page():
    at = _started()
    assert not at.exception, at.exception
    assert at.toggle(key=TRUTH).value is False
    at.toggle(key=TRUTH).set_value(True).run()
    assert at.query_params["truth"] in ("1", ["1"])  # the link carries it
    for page in ("pages/calls.py", "pages/bridge.py", "pages/sources.py", "pages/evaluate.py", "pages/dataset.py"):
        wait_for_runs(at.switch_page(page).run())
        assert not at.exception, at.exception
        if page not in ("pages/calls.py", "pages/evaluate.py"):  # pages without the overlay keep it for the others
            assert at.toggle(key=TRUTH).value is True, page
    at.toggle(key=TRUTH).set_value(False).run()  # off on the Dataset page...
    wait_for_runs(at.switch_page("pages/inspect.py").run())
    assert at.toggle(key=TRUTH).value is False  # ...is off back in Inspect
    assert "truth" not in at.query_params


def test_the_link_sets_truth_presentation_and_methods():
    at = _started(truth="1", present="1", methods="vanilla_rag,madam")
    assert not at.exception, at.exception
    assert at.toggle(key=TRUTH).value is True and at.toggle(key="app.present").value is True
    assert at.multiselect(key="inspect.methods").value == ["vanilla_rag", "madam"]
    frame = next(f.value for f in at.dataframe if "verdict" in f.value.columns)  # the truth columns are drawn
    assert list(frame["method"]) == ["Vanilla RAG", "MADAM-RAG"]
    captions = [c.value for c in at.caption]  # presentation mode: a line on what each method does
    assert any(c.startswith("One agent per document debates") for c in captions), captions
    at.button(key="app.leave_present").click().run()
    assert at.toggle(key="app.present").value is False and "present" not in at.query_params


@pytest.mark.parametrize("params, notice", [
    ({"truth": "yes"}, "The link names the truth overlay yes, which does not exist here; showing off."),
    ({"present": "2"}, "The link names the presentation mode 2, which does not exist here; showing off."),
    ({"methods": "ra_rag,nosuch"},
     "The link names the methods nosuch, which does not exist here; showing RA\\-RAG."),
])
def test_unknown_link_values_are_a_notice_not_an_error(params, notice):
    at = _started(**params)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert notice in [w.value for w in at.warning], [w.value for w in at.warning]


def test_no_page_shows_raw_ids_or_notes_for_developers():
    at = _started(truth="1")  # with the truth on: the overlay's own words are checked too
    seen = {}
    for page in PAGES:
        wait_for_runs(at.switch_page(page).run())
        assert not at.exception, (page, at.exception)
        for text in _texts(at):
            for word in FORBIDDEN:
                if word in text:
                    seen.setdefault(page, set()).add(f"{word} in {text[:160]!r}")
    assert not seen, seen


def test_the_sources_page_says_each_note_once():
    at = _started()
    wait_for_runs(at.switch_page("pages/sources.py").run())
    texts = [t.value.split(": ", 1)[-1] for t in at.text if t.value.startswith(("Weights: ", "Note: "))]
    assert texts and len(texts) == len(set(texts)), texts
