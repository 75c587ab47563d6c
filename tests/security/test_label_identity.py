"""Finding 5: labels landed on the wrong dataset or question. Labels were keyed by the file's stem, so
``teamA/questions.jsonl`` and ``teamB/questions.jsonl`` shared them (B's question showed A's label), and
``LabelDraft.cleaned()`` trimmed ids, so a label for ``"q1 "`` was saved on ``q1``; both fed ``evaluate --gold``.

Now a label is kept under its dataset's identity (name and a hash of what analysts see, ``backend.labels.identity``)
with the fingerprint of its question, ids are kept exactly, and labels of another version are carried over only onto
unchanged questions. Checked through the store, the Label page's reading path (AppTest), the command line and the
schema migration."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import datetime, timezone

import pytest
import sqlalchemy as sa
from streamlit.testing.v1 import AppTest

from backend import deployment
from backend.data import load_dataset
from backend.labels import Label, LabelDraft, LabelError, LabelStore, dataset_key, question_fingerprint
from backend.labels.files import read_labels, render
from backend.labels.gold import gold_labels, load_gold
from backend.labels.identity import is_key, name_of
from backend.labels.store import _sqlite_engine, current_revision, head_revision, migrate, store_url
from tests.app.test_labels_page import write_results
from tests.conftest import ROOT

APP = str(ROOT / "app.py")


def _row(qid: str, question: str, docs: list[tuple[str, str]]) -> dict:
    return {"id": qid, "question": question, "gold_answers": ["gold " + qid],
            "documents": [{"id": d, "source": "wiki", "text": text} for d, text in docs]}


A_ROWS = [_row("q1", "Who wrote Hamlet?", [("d1", "Shakespeare wrote Hamlet."), ("d2", "Marlowe wrote it.")]),
          _row("q2", "Where is Paris?", [("d3", "Paris is in France."), ("d4", "Paris is in Texas.")])]
B_ROWS = [_row("q1", "Who painted the Mona Lisa?", [("d1", "Leonardo painted it."), ("d2", "Raphael did.")]),
          _row("q2", "What is the capital of Peru?", [("d3", "Lima."), ("d4", "Cusco.")])]


def _write(folder, rows) -> object:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder / "questions.jsonl"


@pytest.fixture
def teams(tmp_path):
    """teamA/questions.jsonl and teamB/questions.jsonl: one name, different questions."""
    return load_dataset(_write(tmp_path / "teamA", A_ROWS)), load_dataset(_write(tmp_path / "teamB", B_ROWS))


def _draft(ds, qid, answer, analyst="ann", **kw) -> LabelDraft:
    return LabelDraft(dataset=ds.name, question_id=qid, answers=[answer], analyst=analyst, **kw)


# --- two files of one name ------------------------------------------------------------------------------------

def test_two_files_of_one_name_never_share_labels(teams, tmp_path):
    a, b = teams
    assert a.name == b.name == "questions" and dataset_key(a) != dataset_key(b)
    assert is_key(dataset_key(a)) and name_of(dataset_key(a)) == "questions"
    store = LabelStore(tmp_path / "l.db")
    saved = store.save(_draft(a, "q1", "Shakespeare"), dataset=a)
    assert saved.dataset == dataset_key(a) and saved.question_fingerprint == question_fingerprint(a.questions[0])
    assert store.latest(dataset_key(b)) == {} and store.history(dataset_key(b), "q1") == []
    assert store.latest(dataset_key(a)) == {"q1": saved}
    # a label drafted for A cannot be saved onto B (it names A's identity)
    with pytest.raises(LabelError, match="another version of it"):
        store.save(LabelDraft(dataset=dataset_key(a), question_id="q1", answers=["x"], analyst="ann"), dataset=b)
    assert store.count() == 1


def test_a_copy_keeps_the_identity_and_truth_is_not_part_of_it(teams, tmp_path):
    a, _ = teams
    copy = load_dataset(shutil.copy(a.path, tmp_path / "copy.jsonl"))  # another name: another identity
    assert dataset_key(copy) != dataset_key(a) and name_of(dataset_key(copy)) == "copy"
    (tmp_path / "elsewhere").mkdir()
    moved = load_dataset(shutil.copy(a.path, tmp_path / "elsewhere" / "questions.jsonl"))
    assert dataset_key(moved) == dataset_key(a)  # the same file elsewhere: the same labels
    truth = [dict(r, gold_answers=["changed"]) for r in A_ROWS]
    truth[0]["documents"] = [dict(d, label={"type": "misinfo", "answer": "x"}) for d in truth[0]["documents"]]
    assert dataset_key(load_dataset(_write(tmp_path / "truth", truth))) == dataset_key(a)  # analysts never see truth
    reordered = load_dataset(_write(tmp_path / "reordered", A_ROWS[::-1]))
    assert dataset_key(reordered) == dataset_key(a)


def test_the_label_page_reads_only_its_own_files_labels(teams, tmp_path, monkeypatch):
    """B opened on the Label page: A's label is not B's, progress counts none, and carry over moves nothing (B's
    questions are other questions)."""
    a, b = teams
    db = tmp_path / "labels.db"
    monkeypatch.setenv("CONFLICTLENS_LABELS", str(db))
    monkeypatch.setenv("CONFLICTLENS_OPEN_FOLDERS", str(tmp_path))
    deployment.reset()
    LabelStore(db).save(_draft(a, "q1", "Shakespeare", analyst="Alice"), dataset=a)
    rows = {"q1": {"no_rag": ["one"], "vanilla_rag": ["two"]}, "q2": {"no_rag": ["three"], "vanilla_rag": ["four"]}}
    results = write_results(tmp_path / "run", dataset=b.name, rows=rows)
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["methods"] = "no_rag"
    at.run()
    at.selectbox(key="app.dataset").set_value("Your own file…").run()
    at.text_input(key="app.own_path").input(b.path).run()  # teamB/questions.jsonl
    at.text_input(key="app.model").set_value("scripted/never-called").run()
    at.switch_page("pages/labels.py").run()
    at.selectbox(key="labels.run").set_value("other").run()
    at.text_input(key="labels.path").input(str(results)).run()
    assert not at.exception, at.exception
    captions = "\n".join(c.value for c in at.caption).replace("\\", "")
    assert "0 of 1 label · not labelled by you yet" in captions and "Alice" not in captions
    assert at.get("progress")[0].proto.text == "0 / 2 labelled"
    [other] = [e for e in at.expander if "another version of" in e.label]
    assert other.label.replace("\\", "") == "1 label was saved for another version of questions"
    at.button(key="labels.carry").click().run()
    assert not at.exception, at.exception
    assert any("1 question(s) changed: left as they were" in t.value.replace("\\", "") for t in at.toast)
    assert LabelStore(db).latest(dataset_key(b)) == {}  # nothing of A's on B

    # a label saved before identities (the bare name, no fingerprint): the page says it carries over by id only
    legacy = Label(dataset="questions", question_id="q2", answers=["Lima"], analyst="Old", uid="legacy" + "0" * 26,
                   version=1, created_at=datetime(2025, 1, 1, tzinfo=timezone.utc))
    LabelStore(db).import_labels([legacy])
    at.run()
    [other] = [e for e in at.expander if "another version of" in e.label]
    assert other.label.replace("\\", "") == "2 labels were saved for another version of questions"
    at.selectbox(key="labels.carry_from").set_value("questions").run()
    captions = "\n".join(c.value for c in at.caption).replace("\\", "")
    assert "1 of its labels were saved before ConflictLens recorded the question's content: they carry over by " \
           "question id only" in captions
    at.button(key="labels.carry").click().run()
    assert any("1 of them by question id only" in t.value.replace("\\", "") for t in at.toast)
    assert {q: lab.answers for q, lab in LabelStore(db).latest(dataset_key(b)).items()} == {"q2": ["Lima"]}
    deployment.reset()


# --- an edited file: carry over ----------------------------------------------------------------------------------

def test_an_edit_changes_the_identity_and_carry_over_moves_only_unchanged_questions(teams, tmp_path):
    a, _ = teams
    store = LabelStore(tmp_path / "l.db")
    one = store.save(_draft(a, "q1", "Shakespeare", note="d2 is wrong"), dataset=a, analyst_source="signed-in")
    store.save(_draft(a, "q2", "France"), dataset=a)
    edited_rows = [A_ROWS[0], dict(A_ROWS[1], question="Where is Paris, Texas?"),
                   _row("q3", "New?", [("d5", "New.")])]
    edited = load_dataset(_write(tmp_path / "v2", edited_rows))
    assert dataset_key(edited) != dataset_key(a) and edited.name == a.name
    assert store.latest(dataset_key(edited)) == {}  # the old labels stay where they were
    [other] = store.other_versions(dataset_key(edited))
    assert (other.dataset, other.questions, other.unfingerprinted) == (dataset_key(a), 2, 0)

    report = store.carry_over(dataset_key(a), edited)
    assert (report.carried, report.changed, report.gone, report.already, report.by_id_only) == (1, 1, 0, 0, 0)
    [moved] = store.latest(dataset_key(edited)).values()
    assert (moved.question_id, moved.answers, moved.analyst, moved.analyst_source) == ("q1", ["Shakespeare"], "ann",
                                                                                      "signed-in")
    assert moved.carried_from == one.uid and moved.version == 1
    assert moved.note.startswith("d2 is wrong\n[carried over from questions@") and dataset_key(a) in moved.note
    assert moved.question_fingerprint == question_fingerprint(edited.questions[0])
    assert len(store.latest(dataset_key(a))) == 2  # nothing removed from the old version
    again = store.carry_over(dataset_key(a), edited)  # twice: nothing more
    assert (again.carried, again.already, again.changed) == (0, 1, 1)
    assert [o.questions for o in store.other_versions(dataset_key(edited))] == [1]  # q2 only: it changed


def test_labels_from_before_identities_carry_over_by_id_only(teams, tmp_path):
    """A store written before this change holds labels under the bare name, without fingerprints: said, and carried
    over by question id only (a question that is gone is left)."""
    a, _ = teams
    path = tmp_path / "old.db"
    _old_store(path, [("questions", "q1", "Shakespeare"), ("questions", "q9", "gone")])
    store = LabelStore(path)
    [other] = store.other_versions(dataset_key(a))
    assert (other.dataset, other.questions, other.unfingerprinted) == ("questions", 2, 2)
    report = store.carry_over("questions", a)
    assert (report.carried, report.by_id_only, report.gone) == (1, 1, 1)
    assert "by question id only" in report.text() and "check them" in report.text()
    assert "by question id only" in store.latest(dataset_key(a))["q1"].note


def test_carry_over_from_the_command_line_and_labels_info(teams, tmp_path):
    a, _ = teams
    db = tmp_path / "l.db"
    LabelStore(db).save(_draft(a, "q1", "Shakespeare"), dataset=a)
    edited = _write(tmp_path / "v2", [A_ROWS[0], dict(A_ROWS[1], question="Edited?")])
    info = _cli("labels", "info", "--labels", db, "--dataset", edited)
    assert info.returncode == 0, info.stderr
    assert "1 label was saved for another version of questions" in info.stdout
    done = _cli("labels", "carry", "--labels", db, "--dataset", edited)
    assert done.returncode == 0 and "carried over 1 label(s) from questions@" in done.stdout, done.stderr
    assert list(LabelStore(db).latest(dataset_key(load_dataset(edited)))) == ["q1"]


# --- ids are never altered -----------------------------------------------------------------------------------

def test_a_label_for_q1_space_is_never_stored_on_q1(tmp_path):
    only = load_dataset(_write(tmp_path / "only", [A_ROWS[0]]))
    store = LabelStore(tmp_path / "l.db")
    draft = _draft(only, "q1 ", "Shakespeare")
    assert draft.cleaned().question_id == "q1 " and draft.cleaned().dataset == "questions"
    with pytest.raises(LabelError, match="no question with id 'q1 '"):
        store.save(draft, dataset=only)
    assert store.count() == 0
    # a dataset with both ids: each label stays on its own question
    both = load_dataset(_write(tmp_path / "both", [A_ROWS[0], dict(A_ROWS[1], id="q1 ")]))
    assert [q.id for q in both.questions] == ["q1", "q1 "]  # the loader keeps ids as written
    spaced = store.save(_draft(both, "q1 ", "Paris answer"), dataset=both)
    assert spaced.question_id == "q1 " and set(store.latest(dataset_key(both))) == {"q1 "}
    assert store.history(dataset_key(both), "q1") == []
    for fmt in ("csv", "jsonl"):  # exports keep it too
        out = tmp_path / f"l.{fmt}"
        out.write_text(render(store.versions(), fmt), encoding="utf-8")
        assert [lab.question_id for lab in read_labels(out)] == ["q1 "]


# --- evaluate --gold ---------------------------------------------------------------------------------------------

def test_gold_reads_only_this_versions_labels(teams, tmp_path):
    a, b = teams
    db = tmp_path / "l.db"
    store = LabelStore(db)
    store.save(_draft(a, "q1", "Shakespeare"), dataset=a)
    store.save(_draft(b, "q2", "Lima"), dataset=b)
    labels, elsewhere = gold_labels(db, b)
    assert {q: lab.answers for q, lab in labels.items()} == {"q2": ["Lima"]} and elsewhere == 1
    assert set(load_gold(db, a)) == {"q1"} and load_gold(db, "questions") == {}
    export = tmp_path / "labels.jsonl"
    export.write_text(render(store.versions(), "jsonl"), encoding="utf-8")
    assert set(load_gold(export, b)) == {"q2"}

    done = _cli("evaluate", "--dataset", b.path, "--gold", db, "--methods", "no_rag", "--out", tmp_path / "ev")
    assert done.returncode == 0, done.stderr
    assert "gold answers from 1 question(s) in" in done.stderr and ": 0 adjudicated, 1 agreed (0 unanswerable)" in (
        done.stderr)
    assert "1 question(s) have labels saved for another version of questions only" in done.stderr
    summary = json.loads((tmp_path / "ev" / "summary.json").read_text())
    assert summary["questions"] == 1 and summary["gold"]["labels"] == 1


# --- the migration keeps every label ------------------------------------------------------------------------------

def _old_store(path, rows: list[tuple[str, str, str]]) -> None:
    """A store at the previous head revision (0001) holding ``rows`` (dataset, question, answer), as the code
    before this change wrote them."""
    engine = _sqlite_engine(store_url(path))
    migrate(engine, "0001")
    with engine.begin() as conn:
        for i, (ds, qid, answer) in enumerate(rows):
            conn.execute(sa.text(
                "INSERT INTO labels (uid, dataset, question_id, version, supersedes, answers, unanswerable, "
                "conflict_type, wrong_documents, wrong_sources, best_method, note, analyst, created_at) VALUES "
                "(:uid, :ds, :q, 1, NULL, :a, 0, NULL, '[]', '[]', NULL, 'old', 'ann', '2025-01-02 03:04:05')"),
                {"uid": f"old{i:029d}", "ds": ds, "q": qid, "a": json.dumps([answer])})
    assert current_revision(engine) == "0001"
    engine.dispose()


def test_the_migration_keeps_every_label(tmp_path):
    path = tmp_path / "old.db"
    rows = [("ramdocs_dev", "ramdocs-0001", "a"), ("ramdocs_dev", "ramdocs-0002", "b"), ("questions", "q1", "c")]
    _old_store(path, rows)
    store = LabelStore(path)  # opening migrates to the newest revision
    assert current_revision(store.engine) == head_revision()
    versions = store.versions()
    assert [(v.dataset, v.question_id, v.answers[0]) for v in versions] == rows
    assert all(v.analyst_source == "self-declared" and v.question_fingerprint is None and v.carried_from is None
               and v.kind == "analyst" and v.settles == [] for v in versions)
    assert [v.uid for v in versions] == [f"old{i:029d}" for i in range(3)]


def test_the_analyst_source_is_stored_and_exported(teams, tmp_path):
    a, _ = teams
    store = LabelStore(tmp_path / "l.db")
    typed = store.save(_draft(a, "q1", "x"), dataset=a)
    signed = store.save(_draft(a, "q2", "y", analyst="ann@example.org"), dataset=a, analyst_source="signed-in")
    assert (typed.analyst_source, signed.analyst_source) == ("self-declared", "signed-in")
    with pytest.raises(LabelError, match="analyst_source must be"):
        store.save(_draft(a, "q1", "z"), dataset=a, analyst_source="admin")
    csv_text = render(store.versions(), "csv")
    assert csv_text.splitlines()[0].split(",")[7] == "analyst_source"
    assert ",ann,self-declared," in csv_text and ",ann@example.org,signed-in," in csv_text
    assert [json.loads(line)["analyst_source"] for line in render(store.versions(), "jsonl").splitlines()] == [
        "self-declared", "signed-in"]
    old_export = tmp_path / "old.csv"  # an export written before the column existed reads as self-declared
    old_export.write_text("uid,dataset,question_id,version,created_at,analyst,answers\n"
                          "u1,questions,q1,1,2025-01-01T00:00:00Z,ann,\"[\"\"x\"\"]\"\n", encoding="utf-8")
    assert read_labels(old_export)[0].analyst_source == "self-declared"


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "backend", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
