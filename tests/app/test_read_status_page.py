"""Replies a method could not read, in the app (issue 25 §3, §4): Inspect warns with the default the method used and
keeps the raw reply one click away; the Model calls page filters by read status; the sidebar says when structured
output is on for a model that cannot honour it."""

import pytest
from streamlit.testing.v1 import AppTest

from backend.llm.providers import scripted
from backend.methods import SPECS
from components.views import method_view
from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")
DEFAULT = "the method used its default: I don't know (abstain)"


def test_inspect_warns_and_the_calls_page_filters_the_unreadable_replies():
    with scripted({"*": ""}):  # an empty reply: nothing to read
        at = AppTest.from_file(APP, default_timeout=180)
        at.query_params["methods"] = "no_rag,vanilla_rag"
        at.run()
        at.text_input(key="app.model").set_value("scripted/empty-replies").run()
        at.button(key="inspect.run").click().run()
        wait_for_runs(at)
        assert not at.exception, at.exception
    warnings = [w.value.replace("\\", "") for w in at.warning]  # shown literally: Markdown escaped
    for name in ("no_rag", "vanilla_rag"):
        line = next((w for w in warnings if w.startswith(SPECS[name].title + ":")), None)
        assert line is not None, warnings
        assert "1 reply was not in the expected format" in line and DEFAULT in line
    assert sum("not in the expected format" in e.label for e in at.expander) == 2

    at.switch_page("pages/calls.py").run()
    assert not at.exception, at.exception
    at.multiselect(key="calls.reads").set_value(["unreadable"]).run()
    frame = next(f.value for f in at.dataframe if "read" in f.value.columns)
    assert len(frame) == 2 and set(frame["read"]) == {"unreadable"} and all(DEFAULT in n for n in frame["read note"])
    at.multiselect(key="calls.reads").set_value(["exact"]).run()
    frame = next(f.value for f in at.dataframe if "read" in f.value.columns)
    assert "scripted/empty-replies" not in set(frame["model"])


def test_the_sidebar_says_when_structured_output_cannot_be_honoured():
    at = AppTest.from_file(APP, default_timeout=180).run()
    assert not at.exception, at.exception
    assert not [w for w in at.sidebar.warning if "Structured output" in w.value]
    at.toggle(key="app.structured_output").set_value(True).run()
    assert not at.exception, at.exception
    said = [w.value for w in at.sidebar.warning if "Structured output is on" in w.value]
    assert said and "does not support JSON" in said[0]
    at.text_input(key="app.model").set_value("openai/reader").run()
    at.text_input(key="app.api_base").set_value("http://127.0.0.1:9/v1").run()  # an OpenAI-compatible server
    assert not [w for w in at.sidebar.warning if "Structured output is on" in w.value]


@pytest.mark.parametrize("name", ["ra_rag", "astute", "madam", "counterfactual", "bridge"])
def test_each_method_page_warns_of_its_unreadable_replies(name):
    view = method_view(name)
    with scripted({"*": ""}):
        at = AppTest.from_file(APP, default_timeout=180).run()
        at.text_input(key="app.model").set_value(f"scripted/empty-{name}").run()
        at.switch_page(view.page).run()
        at.button(key=f"{view.url_path}.run").click().run()
        wait_for_runs(at)
        assert not at.exception, at.exception
    warnings = [w.value.replace("\\", "") for w in at.warning]
    assert any("not in the expected format" in w and "the method used its default" in w for w in warnings), warnings
    assert any("not in the expected format" in e.label for e in at.expander)
