"""Decision path page (BRIDGE): live offline runs on scenarios questions that reach FA, FI and FE, a question that
reflects three times and defaults to RA, one where the model has no internal knowledge (K_int "None"), the truth
overlay (with the scorer's blind spot said when an answer swap passes for agreement), and a scripted model forcing RA
at N5."""

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from backend.llm.providers import scripted
from components import bridge as view
from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")


def _bridge(question: str, model: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["methods"] = "no_rag"  # keep the home page's automatic run cheap
    at.run()
    for kind, name, value in (("selectbox", "dataset", "scenarios"), ("selectbox", "question", question),
                              ("text_input", "model", model)):
        if value is not None:
            getattr(at, kind)(key=f"app.{name}").set_value(value).run()
    at.switch_page("pages/bridge.py").run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Decision path (BRIDGE)"
    wait_for_runs(at.button(key="bridge.run").click().run())
    assert not at.exception, at.exception
    return at


def _texts(at) -> list[str]:
    return [t.value for t in at.text]


def _badges(at) -> list[str]:
    return [m.value for m in at.markdown if "-badge[" in m.value]


def _frames(at, column):
    return [f.value for f in at.dataframe if column in f.value.columns]


def _charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def _taken(chart: dict) -> set[str]:
    return {t["name"] for t in chart["data"] if t.get("meta") == "taken"}


@pytest.mark.parametrize("question, leaf, taken, option", [
    ("sc-0001", "FA", {"N0→FA"}, "D. Andy Williams"),
    ("sc-0021", "FI", {"N0→N2", "N2→N3", "N3→FI"}, "A. Steve Valentine"),
    ("sc-0032", "FE", {"N0→N2", "N2→N4", "N4→FE"}, "C. Vienna"),
])
def test_offline_runs_reach_each_answering_leaf(question, leaf, taken, option):
    at = _bridge(question)
    texts = _texts(at)
    assert f":{view.OUTCOME_BADGES[leaf]}-badge[leaf {leaf} ({view.STRATEGY[leaf]})]" in _badges(at)
    assert any(t.startswith(f"leaf {leaf} ({view.STRATEGY[leaf]}) · no reflection · answer: {option}")
               for t in texts), texts
    assert any(t.startswith("allocator ICL (5 demonstrations) · α = 0.5 · β = 1.1 · n = 10 · max 3 reflections · "
                            "scorer 0.2 sparse + 0.4 dense + 0.4 ColBERT · model offline/reader · 5 calls")
               for t in texts)
    assert [t.label for t in at.tabs] == [f"Cycle 0: initial → {leaf}"]
    subs = _frames(at, "→ retriever")[0]
    assert len(subs) == 10 and set(subs["→ retriever"]) <= {"✓", "✗"}
    assert len(_frames(at, "I don't know")) == 1 and len(_frames(at, "retrieval score")) == 1
    charts = _charts(at)
    tree = next(c for c in charts if c["layout"]["title"]["text"].startswith(view.TREE_TITLE))
    assert _taken(tree) == taken
    assert any(c["layout"]["title"]["text"] == view.PHASE_TITLE for c in charts)
    assert any(c["layout"]["title"]["text"] == view.SQUARE_TITLE for c in charts)
    assert f"Chosen option: {option}\nFinal answer: {option.split('. ', 1)[1]}" in texts
    assert any(c.value == f"Correct Option: {option[0]}" for c in at.code)  # the responder's raw reply
    assert not any(t.startswith("Scenario:") for t in texts)  # truth hidden until asked

    at.toggle(key="app.show_truth").set_value(True).run()
    assert not at.exception, at.exception
    assert any(t.startswith(f"Scenario: {leaf} (") for t in _texts(at))
    badges = _badges(at)
    assert f":green-badge[leaf matches the scenario ({leaf} vs {leaf})]" in badges
    assert ":green-badge[answer correct ✓]" in badges


def test_three_reflections_default_to_ra():
    at = _bridge("sc-0027")  # FE evolution: the memory's 22 episodes against the document's 24
    assert [t.label for t in at.tabs] == ["Cycle 0: initial → REFLECT", "Cycle 1/3: reflection → REFLECT",
                                          "Cycle 2/3: reflection → REFLECT", "Cycle 3/3: reflection → REFLECT"]
    badges = _badges(at)
    assert ":orange-badge[defaulted to RA]" in badges and ":gray-badge[leaf RA (refuse)]" in badges
    texts = "\n".join(_texts(at))
    assert "leaf RA (refuse) · 3 reflection cycles of 3 · defaulted to RA · answer: D. I don't know" in texts
    assert "outcome REFLECT, but 3 reflection cycles are used up: defaulted to RA" in texts
    assert "Chosen option: D. I don't know (no responder call)" in texts
    trees = [c for c in _charts(at) if c["layout"]["title"]["text"].startswith(view.TREE_TITLE)]
    assert len(trees) == 4 and all(_taken(t) == {"N0→N2", "N2→N4", "N4→N5", "N5→REFLECT"} for t in trees)
    assert any(e.label == "Raw prompts and outputs (10 calls)" for e in at.expander)

    at.toggle(key="app.show_truth").set_value(True).run()
    badges = _badges(at)
    assert ":red-badge[leaf differs from the scenario (RA vs FE)]" in badges
    assert ":red-badge[answer wrong ✗]" in badges


def test_the_truth_overlay_says_when_the_scorer_cannot_tell_a_swapped_answer_from_memory():
    """Issue 25 §9: sc-0014's memory is its document's passage with the true date (FI); S1 rates the two as agreeing,
    N0 says FA and the misinformation wins. The truth overlay says why; without the truth nothing is said."""
    at = _bridge("sc-0014")
    assert not [w for w in at.warning if "similarity scorer" in w.value]
    at.toggle(key="app.show_truth").set_value(True).run()
    assert not at.exception, at.exception
    assert ":red-badge[leaf differs from the scenario (FA vs FI)]" in _badges(at)
    notes = [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning      # shown escaped (components.safe.md)
             if "similarity scorer" in w.value]
    assert len(notes) == 1 and notes[0].startswith(
        "BRIDGE's similarity scorer cannot tell the misinformation passage sc-0014-d1 (it says “2 July 1825”) from "
        "the memory it contradicts (it says “2 July 1829”): S1 = 0.")
    assert notes[0].endswith(" > α = 0.5, so it rates them as agreeing.")


def test_no_internal_knowledge():
    at = _bridge("sc-0031")  # FE perpetuation: the entity is new, the model knows nothing
    assert view.NO_INTERNAL in [i.value for i in at.info]
    assert ":gray-badge[K_int: None]" in _badges(at)
    scores = _frames(at, "aggregation")[0]
    assert list(scores["total"][:2]) == [0.0, 0.0]
    assert scores["aggregation"].iloc[0].endswith("(K_int is None: 0)")


def test_a_scripted_model_reaches_ra_at_n5():
    memory = "The township's population is 815 people, according to the record."
    script = {"soft_bias": "Analysis: needs recent data.\nProbability of retrieving external knowledge: 80%\n"
                           "Probability of answering directly: 20%",
              "generate_passage": memory,
              "sub_queries": "\n".join(f"{i}. What is the population of West Township?" for i in range(1, 11)),
              "multi_answer": f"1. {memory}\n2. I don't know",
              "select_option": "Correct Option: B"}
    with scripted(script):
        at = _bridge("sc-0013", model="scripted/bridge-n5")
    texts = _texts(at)
    assert any(t.startswith("leaf RA (refuse) · no reflection · answer: A. I don't know") for t in texts), texts
    tree = next(c for c in _charts(at) if c["layout"]["title"]["text"].startswith(view.TREE_TITLE))
    assert _taken(tree) == {"N0→N2", "N2→N4", "N4→N5", "N5→RA@N5"}
    path = _frames(at, "with the numbers")[0]
    assert list(path["node"]) == ["N0", "N2", "N4", "N5"] and path["branch"].iloc[-1] == "yes → leaf RA"
    gen = _frames(at, "I don't know")[0]
    assert list(gen["I don't know"]) == ["", "⚑ yes"]


def test_a_failing_model_is_one_message_with_the_calls():
    with scripted({}):  # no reply for any task: every call fails
        at = _bridge("sc-0001", model="scripted/bridge-none")
    assert [e.value for e in at.error] == ["BRIDGE failed on this question:"]
    assert any(e.label.startswith("Raw prompts and outputs") for e in at.expander)
