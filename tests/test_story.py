"""Each question's story (``backend.story``, issue 27): deterministic text from the results alone, the truth only
with the overlay on, each method's turning point named in its display name, and Inspect showing it above the
columns. Results come from the offline model on bundled questions chosen for what they show:

* scenarios sc-0019 — only BRIDGE is right (the telling case): a 3-way split, RC-RAG discards its RAG answer;
* scenarios sc-0016 — every method is wrong: no gold answer appears anywhere unless the truth is on;
* ramdocs_dev ramdocs-0002 — a MADAM-RAG agent is talked out of the gold "football" into "hockey" in round 2.
"""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from backend.data import load_dataset
from backend.methods import METHODS, SPECS
from backend.paths import SAMPLE_DATA
from backend.runner import Runner
from backend.schema import MethodResult
from backend.story import story
from components.story import story_markdown
from tests.app.conftest import _st_navigation_app  # noqa: F401 - AppTest in st.navigation mode, as tests/app
from tests.conftest import ROOT

CASES = {"only_bridge": ("scenarios", "sc-0019"), "all_wrong": ("scenarios", "sc-0016"),
         "talked_out": ("ramdocs_dev", "ramdocs-0002")}


@pytest.fixture(scope="module")
def cases():
    """(question, results) per case, every registered method, offline model."""
    out = {}
    for name, (dataset, qid) in CASES.items():
        ds = load_dataset(SAMPLE_DATA / dataset)
        question = next(q for q in ds.questions if q.id == qid)
        out[name] = (question, Runner(ds).run(question, list(METHODS)))
    return out


def _text(s) -> str:
    """Everything a story says or holds: headline, sentences and facts."""
    return "\n".join([s.headline, *(m.sentence for m in s.methods), repr(s.facts)])


def test_the_story_is_deterministic(cases):
    question, results = cases["only_bridge"]
    again = Runner(load_dataset(SAMPLE_DATA / "scenarios")).run(question, list(METHODS))  # replies from the cache
    for truth in (False, True):
        assert story(question, results, truth) == story(question, again, truth)
    s = story(question, results, False)
    assert [m for m, _ in s.lines] == list(results)
    assert s.headline == ("The methods split 3 ways: “EastWest Records America” (RA-RAG, Astute RAG, MADAM-RAG, "
                          "Closed book, Vanilla RAG); abstained (Counterfactual prompting (RC-RAG)); "
                          "“Missy \"Misdemeanor\" Elliott” (BRIDGE).")


def test_who_was_right_only_with_the_truth_on(cases):
    question, results = cases["only_bridge"]
    off, on = story(question, results, False), story(question, results, True)
    assert on.headline.startswith("Only BRIDGE was right. Gold: “Missy \"Misdemeanor\" Elliott”.")
    assert on.facts["right"] == ["bridge"] and "(right)" in on.line("bridge") and "(wrong)" in on.line("ra_rag")
    assert "right" not in off.facts and "gold" not in off.facts
    for word in ("right", "wrong", "Gold", "gold", "verdict"):
        assert not re.search(rf"\b{word}\b", _text(off)), word


def test_no_gold_answer_appears_with_the_truth_off(cases):
    question, results = cases["all_wrong"]
    off, on = story(question, results, False), story(question, results, True)
    for gold in question.gold_answers:
        assert gold.lower() not in _text(off).lower(), "a gold answer leaked into the story with the truth off"
        assert gold in on.headline
    assert on.headline.startswith("No method was right.")


def test_each_methods_turning_point_is_named(cases):
    question, results = cases["only_bridge"]
    s = story(question, results, False)
    assert "the decision tree went N0 yes to leaf FA (integrate all knowledge)" in s.line("bridge")
    assert s.line("counterfactual").startswith(
        "Counterfactual prompting (RC-RAG) abstained: it discarded the RAG answer “EastWest Records America” "
        "(quality: discard, usage: keep")
    assert "group 1 (mixed, 2 passages) won" in s.line("astute")
    assert "vote went to “EastWest Records America”" in s.line("ra_rag") and "carried by source weights external" \
        in s.line("ra_rag")
    assert "no agent changed its answer; the debate converged in round 2" in s.line("madam")
    assert s.facts["methods"]["bridge"]["leaf"] == "FA"
    assert s.facts["methods"]["counterfactual"]["decision"] == "discard"
    # a method with no story of its own: answers and the documents they rest on
    assert s.line("vanilla_rag") == "Vanilla RAG answered “EastWest Records America” from d1."
    assert s.line("no_rag") == "Closed book answered “EastWest Records America” citing no document."


def test_the_debate_switch_and_an_agent_talked_out_of_the_right_answer(cases):
    question, results = cases["talked_out"]
    off, on = story(question, results, False).line("madam"), story(question, results, True).line("madam")
    assert off.endswith(": in round 2 Agent 1 (d1) switched from “football” to “hockey”; the debate converged in "
                        "round 3.")
    assert "talked out" not in off and "right" not in off
    assert on.endswith(": in round 2 Agent 1 (d1) was talked out of the right answer “football” into “hockey”; the "
                       "debate converged in round 3.")
    assert story(question, results, True).facts["methods"]["madam"]["talked out"] == "Agent 1, round 2"
    assert "talked out" not in story(question, results, False).facts["methods"]["madam"]


def test_display_names_never_raw_ids(cases):
    for question, results in cases.values():
        for truth in (False, True):
            s = story(question, results, truth)
            said = "\n".join([s.headline, *(m.sentence for m in s.methods)])
            assert not [n for n in SPECS if re.search(rf"\b{n}\b", said)], said


def test_a_failed_method_and_hostile_answers_render_as_text():
    from backend.schema import Question

    q = Question(id="q1", question="Who?", documents=[], gold_answers=["Ann"])
    results = {"vanilla_rag": MethodResult(method="vanilla_rag", question_id="q1", answers=["**[x](http://e.x)**"],
                                           support={"**[x](http://e.x)**": ["q1-d1"]}),
               "no_rag": MethodResult(method="no_rag", question_id="q1", error="provider said: secret-ish text")}
    s = story(q, results, False)
    assert s.line("no_rag") == "Closed book failed on this question."  # the error text is never quoted
    assert "secret" not in _text(s)
    markdown = story_markdown(s)
    assert "[x](http" not in markdown and "**[" not in markdown and "\\*\\*\\[x\\]" in markdown
    assert markdown.startswith("**Only Vanilla RAG answered\\. Closed book failed\\.**") and "- **Vanilla RAG** answered" in markdown


def test_generic_story_code_names_no_method():
    for path in ("backend/story.py", "components/story.py"):
        source = (ROOT / path).read_text(encoding="utf-8")
        assert not [m for m in SPECS if f'"{m}"' in source or f"'{m}'" in source], path


def test_inspect_shows_the_story_above_the_columns():
    from components.session.present import TRUTH_KEY
    from tests.app.conftest import wait_for_runs

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.query_params.update({"dataset": "scenarios", "question": "sc-0019"})
    wait_for_runs(at.run())
    assert not at.exception, at.exception
    texts = [m.value for m in at.markdown]
    story_md = next((t for t in texts if "The methods split 3 ways" in t), None)
    assert story_md is not None, texts
    assert "leaf FA" in story_md and "Gold" not in story_md
    # above the columns: the story's block comes before the first column's method name
    assert texts.index(story_md) < next(i for i, t in enumerate(texts) if t.strip("*") in SPECS or
                                        t.strip("*") in {s.title for s in SPECS.values()})
    at.toggle(key=TRUTH_KEY).set_value(True).run()
    assert any(m.value.startswith("**Only BRIDGE was right\\.") for m in at.markdown), [m.value for m in at.markdown]
