"""Smoke test over the entry point and every page, plus the Dataset page's content."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")
PAGES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py"))


def _app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=120)


def _started() -> AppTest:
    """The app after its first run, its home page's run of every method done (that run goes on in the background)."""
    return wait_for_runs(_app().run())


def test_every_page_is_wired_into_navigation():
    """Every page file is in the view registry app.py's menu is generated from, and every view's file exists."""
    from components.views import views

    files = [v.page for v in views() if v.page is not None]
    assert sorted(files) == PAGES


def test_the_menu_groups_the_views_as_the_user_thinks():
    """Every view is under one of the four sections, the method views in their menu order (the two views of evidence
    from many documents first), a method without a view of its own on the generic page."""
    from components.views import SECTIONS, views

    every = views()
    assert [v.section for v in every] == sorted((v.section for v in every), key=SECTIONS.index)
    assert [v.url_path for v in every if v.section == "Methods"] == ["sources", "debate", "astute", "counterfactual",
                                                                     "bridge"]
    assert next(v for v in every if v.default).url_path == "inspect"


def test_every_page_url_is_its_file_name():
    """A fresh server answers its first request in Streamlit's pages/ folder mode, where a page's URL is its file
    name; only then does app.py's navigation take over. A page whose url_path differs from its file name would
    greet a shared deep link with "Page not found"."""
    from components.views import views

    declared = [(Path(v.page).stem, v.url_path) for v in views() if v.page is not None]
    assert len(declared) == len(PAGES)
    assert all(stem == url for stem, url in declared), declared


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_without_exception(page):
    at = _started()
    assert not at.exception, at.exception
    at.switch_page(page).run()
    assert not at.exception, at.exception
    assert at.title, "every page has a title"


def _dataset_page() -> AppTest:
    at = _started()
    at.switch_page("pages/dataset.py").run()
    return at


def test_dataset_page_shows_question_documents_and_truth_overlay():
    at = _dataset_page()
    assert not at.exception
    assert at.title[0].value == "Dataset"
    texts = [t.value for t in at.text]
    assert "What is the population of Broken Bow?" in texts
    assert any(t.startswith("the second class in 1888") for t in texts)
    assert not [m for m in at.markdown if "-badge[" in m.value]  # no truth until asked
    at.toggle(key="app.show_truth").set_value(True).run()
    badges = [m.value for m in at.markdown if "-badge[" in m.value]
    assert badges == [":green-badge[correct]", ":green-badge[correct]", ":gray-badge[noise]"]
    texts = [t.value for t in at.text]
    assert texts.count("supports: 3,559 people") == 2
    assert "3,559 people" in texts and "10,000 people" in texts  # gold and wrong answers


def test_question_picker_and_dataset_switch():
    at = _dataset_page()
    at.selectbox(key="app.question").set_value("ramdocs-0002").run()
    assert "What sport is William Carrier associated with?" in [t.value for t in at.text]
    at.selectbox(key="app.dataset").set_value("multisource").run()
    assert not at.exception
    frames = at.dataframe
    assert any("source" in f.value.columns for f in frames)
    at.toggle(key="app.show_truth").set_value(True).run()
    table = next(f.value for f in at.dataframe if "true reliability" in f.value.columns)
    assert sorted(set(table["true reliability"])) == [0.1, 0.9]


def test_own_file_with_errors_shows_the_validation_lines():
    at = _dataset_page()
    at.selectbox(key="app.dataset").set_value("Your own file…").run()
    at.text_input(key="app.own_path").input(str(ROOT / "tests/fixtures/bad/wrong_types.jsonl")).run()
    assert not at.exception
    shown = "\n".join(c.value for c in at.code)
    assert "wrong_types.jsonl:2: documents: Input should be a valid list" in shown
    assert "wrong_types.jsonl:3: gold_answers:" in shown


def test_dataset_page_retrieval_preview_builds_index_and_shows_hits():
    at = _dataset_page()
    build = [b for b in at.button if b.key == "dataset.build_index"]
    if build:  # the index may already be on disk from another test of this session
        build[0].click().run()
    assert not at.exception, at.exception
    assert not [b for b in at.button if b.key == "dataset.build_index"]  # gone once the index is built
    hits = next(f.value for f in at.dataframe if "own document" in f.value.columns)
    assert len(hits) == 3 and bool(hits["own document"].iloc[0])
    assert "type" not in hits.columns  # truth hidden
    at.slider(key="dataset.k").set_value(5).run()
    hits = next(f.value for f in at.dataframe if "own document" in f.value.columns)
    assert list(hits["rank"]) == [1, 2, 3, 4, 5]


def test_a_link_to_an_unknown_dataset_or_question_says_so():
    at = _app()
    at.query_params.update({"dataset": "no_such_dataset", "methods": "no_rag"})  # the notice, not the methods
    at.run()
    assert not at.exception, at.exception
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 1 and "no\\_such\\_dataset" in warnings[0] and "ramdocs\\_dev" in warnings[0]
    at.run()  # still said on the next rerun (the offline model's auto-run reruns the page)
    assert len(at.warning) == 1
    at = _app()
    at.query_params.update({"dataset": "multisource", "question": "ms-9999", "methods": "no_rag"})
    at.run()
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 1 and "ms\\-9999" in warnings[0] and "multisource" in warnings[0]
    at.selectbox(key="app.question").set_value("ms-0002").run()
    assert not at.warning  # the user moved on
    assert at.query_params["question"] == ["ms-0002"] or at.query_params["question"] == "ms-0002"


def test_a_known_link_raises_no_notice_and_own_files_go_into_the_url(tmp_path):
    import shutil

    from backend.paths import SAMPLE_DATA

    at = _app()
    at.query_params.update({"dataset": "scenarios", "question": "sc-0002", "methods": "no_rag"})
    at.run()
    assert not at.exception and not at.warning
    path = tmp_path / "mine.jsonl"
    shutil.copy(SAMPLE_DATA / "ramdocs_dev" / "questions.jsonl", path)
    at.selectbox(key="app.dataset").set_value("Your own file…").run()
    at.text_input(key="app.own_path").set_value(str(path)).run()
    assert not at.exception, at.exception
    dataset = at.query_params["dataset"]
    assert (dataset[0] if isinstance(dataset, list) else dataset) == f"file:{path}"
    # and the link opens that file again in a new session
    again = _app()
    again.query_params.update({"dataset": f"file:{path}", "question": "ramdocs-0003", "methods": "no_rag"})
    again.run()
    assert not again.exception and not again.warning
    assert again.selectbox(key="app.question").value == "ramdocs-0003"
