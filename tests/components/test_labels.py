"""Label page shaping: where the store is by default (secrets, environment, per-user file) and how it is shown (no
password), the runs found for a dataset, reading a results file for a queue, walking the queue, the form's values
from a stored label and back, the queue and history tables, the exports, and the case panel (untrusted text as text,
truth only when asked)."""

import json
import os
import time
from datetime import datetime, timezone

import pytest
from streamlit.testing.v1 import AppTest

from backend.labels import Label, LabelDraft
from backend.labels.files import read_labels
from backend.labels.queue import case_for
from backend.outputs import ResultsError, find_runs, read_results
from backend.schema import Document, DocLabel, MethodResult, Question
from components import labels as view

Q = Question(id="q1", question="Who wrote *it*? <b>x</b>", gold_answers=["Ann"], wrong_answers=["Bob"],
             documents=[Document(id="q1-d1", source="src-a", text="Ann wrote it.",
                                 label=DocLabel(type="correct", answer="Ann")),
                        Document(id="q1-d2", source="src-b", text="Bob wrote it, see http://evil.example",
                                 label=DocLabel(type="misinfo", answer="Bob"))])
RESULTS = {"a": MethodResult(method="a", question_id="q1", answers=["Ann"]),
           "b": MethodResult(method="b", question_id="q1", answers=["**Bob**"]),
           "c": MethodResult(method="c", question_id="q1", answers=[], abstained=True),
           "d": MethodResult(method="d", question_id="q1", error="timeout")}


def _case():
    return case_for(Q, 1, RESULTS)


def _label(version=1, **fields) -> Label:
    data = dict(dataset="tiny", question_id="q1", answers=["ann", "Anne Smith"], conflict_type="misinformation",
                wrong_documents=["q1-d2", "gone-d9"], wrong_sources=["src-b"], best_method="a", note="d2 lies",
                analyst="Ann")
    data.update(fields)
    return Label(**data, uid=f"u{version}", version=version,
                 created_at=datetime(2025, 1, version, 12, 0, tzinfo=timezone.utc))


# --- the store's location -------------------------------------------------------------------------------------

def test_default_location_prefers_secrets_then_environment_then_the_user_file(monkeypatch, tmp_path):
    monkeypatch.setenv("CONFLICTLENS_DATA_DIR", str(tmp_path))
    assert view.default_location(None, {}) == str(tmp_path / "labels.db")
    assert view.default_location({}, {"CONFLICTLENS_LABELS": " /x/team.db "}) == "/x/team.db"
    secrets = {"labels_url": "postgresql://u:pw@db/labels"}
    assert view.default_location(secrets, {"CONFLICTLENS_LABELS": "/x/team.db"}) == "postgresql://u:pw@db/labels"
    assert view.default_location({"labels_url": "  "}, {"CONFLICTLENS_LABELS": ""}) == str(tmp_path / "labels.db")
    table = {"deployment": {"label_store": "/srv/team.db"}, "labels_url": "/old.db"}  # the table wins over the alias
    assert view.default_location(table, {"CONFLICTLENS_LABELS": "/x/team.db"}) == "/srv/team.db"
    assert view.store_choices(table, {}).fixed and not view.store_choices({}, {"CONFLICTLENS_LABELS": "/x"}).fixed


def test_shown_location_never_shows_a_password(tmp_path):
    assert view.shown_location("postgresql://u:pw@db:5432/labels") == "postgresql+psycopg://u:***@db:5432/labels"
    assert view.shown_location(str(tmp_path / "l.db")) == str(tmp_path / "l.db")
    assert "pw" not in view.shown_location("mysql://u:pw@db/x")


# --- the queue's source --------------------------------------------------------------------------------------

def _write(folder, dataset="tiny", rows=None):
    folder.mkdir(parents=True)
    rows = rows if rows is not None else [
        {"dataset": dataset, "model": "m", "question_id": "q1", "method": name, "result": r.model_dump(mode="json")}
        for name, r in RESULTS.items()]
    (folder / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder / "results.jsonl"


def test_find_runs_lists_the_datasets_runs_newest_first(tmp_path):
    old = _write(tmp_path / "evaluations" / "tiny-1")
    _write(tmp_path / "evaluations" / "other-1", dataset="other")
    new = _write(tmp_path / "evaluations" / "tiny-2")
    (tmp_path / "evaluations" / "empty").mkdir()
    os.utime(old, (time.time() - 60, time.time() - 60))
    runs = find_runs(tmp_path, "tiny")
    assert [r.path for r in runs] == [new, old]
    assert runs[0].label.startswith("tiny-2 · ") and runs[0].label.endswith(" · m")
    assert find_runs(tmp_path / "nowhere", "tiny") == []


def test_read_results_reads_rows_and_says_what_is_wrong(tmp_path):
    path = _write(tmp_path / "run")
    src = read_results(tmp_path / "run", "tiny")  # the folder is enough
    assert src.path == path and src.methods == ["a", "b", "c", "d"] and src.model == "m"
    assert src.results[("q1", "b")].answers == ["**Bob**"]
    with pytest.raises(ResultsError, match="of the dataset 'tiny', not 'other'"):
        read_results(path, "other")
    with pytest.raises(ResultsError, match="no such file or folder"):
        read_results(tmp_path / "nope", "tiny")
    with pytest.raises(ResultsError, match="no results.jsonl in this folder"):
        read_results(tmp_path, "tiny")
    (tmp_path / "bad.jsonl").write_text('{"question": "not a row"}\n', encoding="utf-8")
    with pytest.raises(ResultsError, match="not a results file"):
        read_results(tmp_path / "bad.jsonl", "tiny")
    with pytest.raises(ResultsError, match="Enter the path"):
        read_results("  ", "tiny")


# --- walking the queue ---------------------------------------------------------------------------------------

ORDER = ["a", "b", "c", "d"]


def test_next_case_moves_on_wraps_and_skips_what_is_not_eligible():
    assert view.next_case(ORDER, ORDER, "a") == ("b", False)
    assert view.next_case(ORDER, ["a", "d"], "a") == ("d", False)
    assert view.next_case(ORDER, ORDER, "d") == ("a", True)
    assert view.next_case(ORDER, ["b", "c"], "c") == ("b", True)
    assert view.next_case(ORDER, ["b", "d"], "c") == ("d", False)  # the current case need not be eligible
    assert view.next_case(ORDER, ["c"], "c") == (None, False)
    assert view.next_case(ORDER, [], "a") == (None, False)
    assert view.next_case(ORDER, ["c"], None) == ("c", False)  # no current case: the first eligible


def test_previous_case_goes_up_without_wrapping():
    assert view.previous_case(ORDER, ORDER, "c") == "b"
    assert view.previous_case(ORDER, ["a", "d"], "c") == "a"
    assert view.previous_case(ORDER, ORDER, "a") is None
    assert view.previous_case(ORDER, ORDER, "zz") is None


# --- the form ------------------------------------------------------------------------------------------------

def test_prefill_puts_the_methods_answers_among_the_picks_and_the_rest_in_the_typed_box():
    case = _case()
    assert case.candidates() == ["Ann", "**Bob**"]
    values = view.prefill(case, _label())
    assert values.picked == ["Ann"] and values.typed == "Anne Smith"  # "ann" is the candidate "Ann"
    assert values.conflict_type == "misinformation" and values.wrong_documents == ["q1-d2"]  # gone-d9: not here
    assert values.wrong_sources == ["src-b"] and values.best_method == "a" and values.note == "d2 lies"
    assert view.prefill(case, None) == view.FormValues()
    assert view.prefill(case, _label(best_method="zz")).best_method == view.ANY


def test_draft_from_the_form_round_trips_through_prefill():
    case = _case()
    values = view.FormValues(picked=["Ann"], typed="Anne Smith\n\n  \n", unanswerable=False, conflict_type=None,
                             wrong_documents=["q1-d2"], wrong_sources=[], best_method=view.ANY, note=" n ")
    draft = view.draft_from(values, "tiny", "q1", "Ann")
    assert draft.answers[:2] == ["Ann", "Anne Smith"] and draft.best_method is None and draft.conflict_type is None
    clean = draft.cleaned()
    assert clean.answers == ["Ann", "Anne Smith"] and clean.note == "n"
    stored = Label(**clean.model_dump(), uid="u", version=1, created_at=datetime.now(timezone.utc))
    again = view.prefill(case, stored)
    assert (again.picked, again.typed, again.wrong_documents, again.note) == (["Ann"], "Anne Smith", ["q1-d2"], "n")


def test_form_keys_change_with_the_version_loaded():
    new, v1 = view.form_keys("labels", "q1", None), view.form_keys("labels", "q1", "u1")
    assert set(new) == set(view.FORM_FIELDS) and new["note"] == "labels.form.q1.new.note"
    assert not set(new.values()) & set(v1.values())


# --- words and tables ----------------------------------------------------------------------------------------

def test_status_and_label_text():
    assert view.status_text(None) == "Not labelled yet"
    assert view.status_text(_label(3)) == "Labelled by Ann at 2025-01-03 12:00:00 UTC"  # versions count everyone's
    text = view.label_text(LabelDraft(dataset="t", question_id="q", unanswerable=True, analyst="A"))
    assert text.splitlines() == ["answers: unanswerable", "conflict type: —", "best method: —"]
    assert "wrong sources: src-b" in view.label_text(_label())


def test_queue_frame_marks_the_current_case_its_labels_so_far_yours_and_skips():
    from backend.labels.team import by_case

    other = case_for(Q.model_copy(update={"id": "q2"}), 2, RESULTS)
    mine = _label(2, question_id="q2")
    team = by_case([mine, _label(3, question_id="q2", analyst="Bob")])
    frame = view.queue_frame([_case(), other], {"q2": mine}, {"q1"}, "q2", team, 2)
    assert list(frame["#"]) == [1, 2] and list(frame["id"]) == ["q1", "q2"]
    assert list(frame[""]) == ["", "▶"] and list(frame["yours"]) == ["", "2025-01-02 12:00"]
    assert list(frame["labels"]) == ["0 of 2 labels", "2 of 2 labels"]  # counts only: whose and what stay hidden
    assert "Bob" not in frame.to_csv()
    assert list(frame["skipped"]) == [True, False] and list(frame["groups"]) == [3, 3]
    assert list(view.queue_frame([], {}, set(), None).columns) == list(frame.columns)


def test_history_frame_is_newest_first():
    frame = view.history_frame([_label(1), _label(2, analyst="Bob", unanswerable=True, answers=[])])
    assert list(frame["version"]) == [2, 1] and list(frame["analyst"]) == ["Bob", "Ann"]
    assert list(frame["answers"]) == ["unanswerable", "ann; Anne Smith"]
    assert frame["conflict type"].iloc[0] == "misinformation"


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_exports_read_back_as_the_same_labels(tmp_path, fmt):
    labels = [_label(1), _label(2, note="=cmd|' /C calc'!A0")]
    path = tmp_path / f"labels.{fmt}"
    path.write_bytes(view.export_bytes(labels, fmt))
    assert read_labels(path) == labels


# --- the case panel ------------------------------------------------------------------------------------------

def _panel(show_truth: bool):
    import streamlit as st

    from components import labels as view
    from tests.components.test_labels import _case

    view.render_case(st, _case(), show_truth, "./?dataset=tiny&question=q1", "t")


def _render(show_truth: bool) -> AppTest:
    at = AppTest.from_function(_panel, args=(show_truth,), default_timeout=60).run()
    assert not at.exception, at.exception
    return at


def test_case_panel_shows_untrusted_text_as_text_and_truth_only_when_asked():
    at = _render(False)
    texts = [t.value for t in at.text]
    assert texts[:3] == ["Who wrote *it*? <b>x</b>", "Ann", "**Bob**"]  # st.text: no Markdown, no HTML
    assert "Bob wrote it, see http://evil.example" in texts
    captions = [c.value for c in at.caption]
    assert captions[1:5] == ["a", "b", "abstained", "c"] and "failed" in captions
    assert not [m for m in at.markdown if "-badge[" in m.value] and "Gold answers" not in " ".join(captions)
    assert at.get("link_button")[0].proto.url == "./?dataset=tiny&question=q1"

    at = _render(True)
    assert [m.value for m in at.markdown if "-badge[" in m.value] == [":green-badge[correct]",
                                                                       ":red-badge[misinformation]"]
    captions = [c.value for c in at.caption]
    assert "b ✗" in captions and "a" in captions  # b gives no gold answer
    assert "Ann" in [t.value for t in at.text] and any("misinformation" in c for c in captions)
