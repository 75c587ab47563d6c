"""Ids, source names and file paths from a dataset appear in captions and expander labels (which render
Markdown) only escaped: an id like ``![x](http://…) **bold**`` shows as that text, not as an image in bold."""

import json

import pytest
from streamlit.testing.v1 import AppTest

from backend.llm.providers import scripted
from components.safe import md
from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")
QID = "q1 ![x](http://127.0.0.1:9/px.png) **bold**"
DOC_ID = "d1 [link](http://127.0.0.1:9/d)"
SOURCE = "src ![s](http://127.0.0.1:9/s.png) _it_"
RAW = ("![", "](", "**")  # would render as an image, a link, bold


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    folder = tmp_path_factory.mktemp("data") / "**folder** ![f](http:x)"  # the path lands in a dataset note
    folder.mkdir()
    long_text = "Alice wrote it. " * 6_300  # over 100,000 characters: the loader adds a note naming the file
    rows = [{"id": QID, "question": "Who wrote it?",
             "documents": [{"id": DOC_ID, "source": SOURCE, "text": "Alice wrote it."},
                           {"id": "d2", "source": "plain", "text": long_text}]}]
    path = folder / "questions.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _labels(at) -> list[str]:
    return [c.value for c in at.caption] + [e.label for e in at.expander]


def _open(dataset, page: str) -> AppTest:
    at = wait_for_runs(AppTest.from_file(APP, default_timeout=120).run())
    at.selectbox(key="app.dataset").set_value("Your own file…").run()
    at.text_input(key="app.own_path").input(str(dataset)).run()
    at.text_input(key="app.model").set_value("scripted/never-called").run()  # nothing runs by itself
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("page", ["pages/dataset.py", "pages/inspect.py", "pages/debate.py", "pages/sources.py",
                                  "pages/astute.py"])
def test_dataset_text_in_labels_is_escaped(dataset, page):
    at = _open(dataset, page)
    labels = _labels(at)
    assert any(md(QID) in c for c in labels), labels
    assert not [label for label in labels if any(r in label for r in RAW)], labels


def test_dataset_page_escapes_notes_sources_and_document_ids(dataset):
    labels = _labels(_open(dataset, "pages/dataset.py"))
    assert any(c.startswith("Note: ") and md(str(dataset)) in c for c in labels), labels
    assert f"{md(SOURCE)} · 1 document" in labels
    assert f"{md(DOC_ID)} · source {md(SOURCE)}" in labels


def test_calls_page_escapes_the_model_name():
    model = "scripted/**x** ![m](http://127.0.0.1:9/m.png)"
    with scripted({"*": "Alice"}):
        at = AppTest.from_file(APP, default_timeout=120)
        at.query_params["methods"] = "no_rag"
        at.run()
        at.text_input(key="app.model").set_value(model).run()
        at.switch_page("pages/inspect.py").run()
        wait_for_runs(at.button(key="inspect.run").click().run())
        at.switch_page("pages/calls.py").run()
    assert not at.exception, at.exception
    shown = at.selectbox(key="calls.call")
    shown.set_value(shown.options[-1]).run()  # the scripted model's call (the offline model ran on start-up)
    labels = _labels(at)
    assert any(md(model) in c for c in labels), labels
    assert not [label for label in labels if any(r in label for r in RAW)], labels
