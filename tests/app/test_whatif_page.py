"""What-if page: remove a document and re-run (the diff shows the method that changed; the loaded dataset is left as
it was), document influence on a small question, a hosted model's influence asks first and calls nothing, and an
edit that cannot be made is a message, not a traceback."""

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")
METHODS = "vanilla_rag,madam,counterfactual"
#: ramdocs_dev's ramdocs-0018 has two documents; without its first, the offline reader's vanilla RAG answers
#: "Democratic" instead of "Republican" (found by leaving each document out of the first 20 questions).
QUESTION, DOC = "ramdocs-0018", "ramdocs-0018-d1"


def _whatif(question: str = QUESTION, methods: str = METHODS) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"dataset": "ramdocs_dev", "question": question, "methods": methods})
    wait_for_runs(at.run())  # Inspect runs the same methods: the What-if page finds them done
    wait_for_runs(at.switch_page("pages/whatif.py").run())
    assert not at.exception, at.exception
    assert at.title[0].value == "What-if"
    return at


def _frame(at, column):
    return next(f.value for f in at.dataframe if column in f.value.columns)


def test_removing_a_document_and_re_running_shows_what_changed_and_leaves_the_dataset_alone():
    at = _whatif()
    dataset = at.session_state["app.selection"].dataset
    before = dataset.model_dump_json()
    assert at.button(key="whatif.rerun").disabled  # nothing edited yet
    at.multiselect(key=f"whatif.remove_ids.{QUESTION}").set_value([DOC]).run()
    at.button(key=f"whatif.do_remove.{QUESTION}").click().run()
    assert not at.exception, at.exception
    edited_id = at.session_state["app.selection"].question.id + "~"
    caption = next(c.value for c in at.caption if "edited copy of" in c.value)
    assert caption.startswith(edited_id.replace("-", r"\-").replace("~", r"\~")) and "1 edit;" in caption
    assert "the dataset is unchanged" in caption
    assert f"1. remove {DOC}" in [t.value for t in at.text]
    assert list(_frame(at, "text")["id"]) == ["ramdocs-0018-d2"]

    wait_for_runs(at.button(key="whatif.rerun").click().run())
    assert not at.exception, at.exception
    changes = _frame(at, "what changed").set_index("method")
    assert changes.loc["vanilla_rag", "what changed"] == "answer changed"
    assert (changes.loc["vanilla_rag", "before"], changes.loc["vanilla_rag", "after"]) == ("Republican", "Democratic")
    assert "verdict after" not in changes.columns  # the truth waits for its toggle
    # answer changes counted apart from reasoning changes
    assert any(t.value.startswith("2 of 3 methods changed their answer (") and "vanilla_rag" in t.value
               for t in at.text), [t.value for t in at.text]
    assert any(b.label.startswith("Download the edited question") for b in at.get("download_button"))
    at.toggle(key="app.show_truth").set_value(True).run()
    changes = _frame(at, "what changed").set_index("method")
    assert changes.loc["vanilla_rag", "verdict before"] == "correct"
    assert changes.loc["vanilla_rag", "verdict after"] == "wrong"
    # the loaded dataset object is the one it was, and so is the selected question
    assert at.session_state["app.selection"].dataset is dataset and dataset.model_dump_json() == before
    assert [d.id for d in at.session_state["app.selection"].question.documents] == [DOC, "ramdocs-0018-d2"]


def test_document_influence_on_a_small_question_shows_the_matrix():
    at = _whatif(methods="vanilla_rag,no_rag")
    assert any("up to 4 model calls" in t.value for t in at.text)  # 2 documents × (1 + 1 calls)
    wait_for_runs(at.button(key="whatif.influence").click().run())
    assert not at.exception, at.exception
    matrix = _frame(at, "document").set_index("document")
    assert list(matrix.index) == [DOC, "ramdocs-0018-d2"]  # each RAMDocs document is its own source
    assert matrix.loc[DOC, "vanilla_rag"] == "Democratic · answer"
    assert set(matrix["no_rag"]) == {"—"}  # closed book reads no document
    (chart,) = [c for c in at.get("plotly_chart") if "Leaving each document out" in c.proto.spec]


def test_a_hosted_model_asks_before_influence_and_calls_nothing(monkeypatch):
    """Influence with a hosted model waits for a confirmation naming the number of calls. The methods' results on
    the question are put in the session as an earlier run would have (no model is called in this test)."""
    from backend.llm.client import LLMConfig
    from backend.runner import Runner
    from components.session.results import Results
    from components.session.runs import RESULTS_KEY, run_key

    monkeypatch.setenv("OPENAI_API_KEY", "sk-whatif-FAKE-0000")
    at = _whatif(methods="vanilla_rag,no_rag")
    at.text_input(key="app.model").set_value("openai/gpt-4o-mini").run()
    at.text_input(key="app.api_base").set_value("http://127.0.0.1:9").run()  # nothing listens there
    selection = at.session_state["app.selection"]
    results = Runner(selection.dataset, llm=LLMConfig(model="offline/reader")).run(selection.question,
                                                                                  ["vanilla_rag", "no_rag"])
    stored = Results()
    stored.put(run_key(selection, ["vanilla_rag", "no_rag"]), results)
    at.session_state[RESULTS_KEY] = stored
    at.run()
    assert not at.exception, at.exception
    (confirm,) = [c for c in at.checkbox if c.key.startswith("whatif.confirm.")]
    assert "up to 4 calls to openai/gpt\\-4o\\-mini" in confirm.label
    assert at.button(key="whatif.influence").disabled
    confirm.check().run()
    assert not at.button(key="whatif.influence").disabled
    assert not [c for c in at.session_state["app.call_log"].all() if c.model.startswith("openai/")]


@pytest.mark.parametrize("kind, fill, message", [
    ("Add a document", lambda at: at.text_area(key=f"whatif.add_text.{QUESTION}").input("   ").run(),
     "text is empty"),
    ("Flip a source", lambda at: (at.text_input(key=f"whatif.flip_from.{QUESTION}.{DOC}").input("Whig").run(),
                                  at.text_input(key=f"whatif.flip_to.{QUESTION}").input("Tory").run()),
     "no document of source"),
])
def test_an_edit_that_cannot_be_made_says_why(kind, fill, message):
    at = _whatif(methods="vanilla_rag")
    at.segmented_control(key="whatif.kind").set_value(kind).run()
    fill(at)
    button = {"Add a document": "whatif.do_add", "Flip a source": "whatif.do_flip"}[kind]
    at.button(key=button).click().run()
    assert not at.exception, at.exception
    assert any(message.replace(" ", " ") in e.value.replace("\\", "") for e in at.error), [e.value for e in at.error]
    assert not any("edited copy of" in c.value for c in at.caption)  # nothing was stored


def test_an_attack_on_the_question_says_per_method_whether_it_held():
    """ramdocs-0009: the target is the correct date with its year changed, the passages its correct documents with
    the date replaced; two of them at the top turn the offline reader's vanilla RAG."""
    at = _whatif("ramdocs-0009", methods="vanilla_rag,no_rag")
    plan = next(t.value for t in at.text if t.value.startswith("target answer: "))
    target = plan.splitlines()[0].removeprefix("target answer: ")
    assert target == "2 July 1817" and "the correct answer replaced by the target" in plan
    at.number_input(key="whatif.k").set_value(2).run()
    wait_for_runs(at.button(key="whatif.attack").click().run())
    assert not at.exception, at.exception
    table = _frame(at, "attack").set_index("method")
    assert table.loc["no_rag", "attack"] == "resisted: abstained"  # closed book never reads the passages
    assert target in table.loc["vanilla_rag", "after"] and table.loc["vanilla_rag", "attack"] == "attack succeeded"
    assert any(b.label.startswith("Download the attacked question") for b in at.get("download_button"))
    assert len(at.session_state["app.selection"].question.documents) == 3  # the dataset's question is untouched


def test_edits_accumulate_and_each_can_be_taken_back():
    at = _whatif(methods="vanilla_rag")
    at.segmented_control(key="whatif.kind").set_value("Rewrite a document").run()
    at.selectbox(key=f"whatif.rewrite_id.{QUESTION}").set_value("ramdocs-0018-d2").run()
    at.text_area(key=f"whatif.rewrite_text.{QUESTION}.ramdocs-0018-d2").input("He was a Whig.").run()
    at.button(key="whatif.do_rewrite").click().run()
    first = at.session_state["app.selection"].question.id
    at.segmented_control(key="whatif.kind").set_value("Add a document").run()
    edited = next(k for k in at.session_state["whatif.edits"])  # (dataset, question): this question's edits
    current = [c.value for c in at.caption if "edited copy of" in c.value][0].split(":")[0].replace("\\", "")
    at.text_area(key=f"whatif.add_text.{current}").input("He was a Federalist.").run()
    at.text_input(key=f"whatif.add_new_source.{current}").input("gazette").run()
    at.button(key="whatif.do_add").click().run()
    assert not at.exception, at.exception
    lines = [t.value for t in at.text if t.value[:3] in ("1. ", "2. ")]
    assert lines == ["1. rewrite ramdocs-0018-d2: “He was a Whig.”",
                     "2. add a document (source gazette): “He was a Federalist.”"]
    assert list(_frame(at, "text")["source"]) == [DOC, "ramdocs-0018-d2", "gazette"]
    at.button(key="whatif.undo.0").click().run()
    assert [t.value for t in at.text if t.value[:3] in ("1. ", "2. ")] == [
        "1. add a document (source gazette): “He was a Federalist.”"]
    assert list(_frame(at, "text")["text"])[1] != "He was a Whig."
    at.button(key="whatif.reset").click().run()
    assert any("No edits yet" in c.value for c in at.caption) and at.session_state["whatif.edits"][edited] == []
    assert at.session_state["app.selection"].question.id == first == QUESTION
