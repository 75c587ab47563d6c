"""The label repository, run on SQLite and on a real PostgreSQL server: save, edit with history (each analyst's own
chain), conflicts between two saves of one analyst, refusals of bad labels, import of exports, and the schema's
migrations."""

import threading

import pytest
import sqlalchemy as sa

from backend.labels import ANY, LabelConflict, LabelDraft, LabelError, LabelStore, LabelStoreError
from backend.labels.files import read_labels, render
from backend.data import load_dataset
from backend.labels import dataset_key
from backend.labels.store import current_revision, head_revision, migrate
from backend.methods import METHODS
from backend.paths import SAMPLE_DATA

#: The identity ramdocs_dev's labels are kept under (its name and content hash, backend.labels.identity).
KEY = dataset_key(load_dataset(SAMPLE_DATA / "ramdocs_dev"))


def draft(qid="ramdocs-0001", **kw) -> LabelDraft:
    return LabelDraft(**{"dataset": KEY, "question_id": qid, "answers": ["3,559 people"],
                         "analyst": "ana", **kw})


def test_save_then_edit_keeps_every_version(store):
    first = store.save(draft(conflict_type="misinformation", wrong_documents=["doc-1"], note="doc 1 inflates it"))
    assert (first.version, first.supersedes, first.created_at.utcoffset().total_seconds()) == (1, None, 0)
    second = store.save(draft(answers=["3,559"]), expected=first.uid)  # ana edits her own label
    assert (second.version, second.supersedes, second.kind, second.settles) == (2, first.uid, "analyst", [])
    beside = store.save(draft(answers=["3,559 people"], analyst="ben"), expected=None)  # ben's own, beside ana's
    assert (beside.version, beside.supersedes) == (3, None)
    history = store.history(KEY, "ramdocs-0001")
    assert [h.uid for h in history] == [first.uid, second.uid, beside.uid]
    assert history[0] == first  # the first version is still exactly what was saved
    assert store.latest(KEY) == {"ramdocs-0001": beside}
    case = store.current(KEY)["ramdocs-0001"]
    assert (case.analysts, case.adjudicated) == ({"ana": second, "ben": beside}, None)
    assert store.mine(KEY, "ana") == {"ramdocs-0001": second} and store.mine(KEY, "cleo") == {}
    assert store.count() == 3 and store.count("other") == 0


def test_a_draft_is_cleaned_before_it_is_stored(store):
    saved = store.save(draft(answers=[" Paris ", "paris", ""], wrong_sources=["", "wiki"], best_method=" ",
                             note="  hi  ", analyst=" ana "))
    assert (saved.answers, saved.wrong_sources, saved.best_method, saved.note, saved.analyst) == (
        ["Paris"], ["wiki"], None, "hi", "ana")


def test_an_analyst_saving_over_a_newer_label_is_stopped(store):
    seen = store.save(draft())
    newer = store.save(draft(answers=["3,559"]), expected=seen.uid)  # ana, in one tab
    with pytest.raises(LabelConflict) as err:
        store.save(draft(answers=["10,000 people"]), expected=seen.uid)  # ana, in another tab that showed v1
    assert err.value.current == newer and "ana saved version 2" in str(err.value)
    with pytest.raises(LabelConflict):
        store.save(draft(), expected=None)  # a tab that showed no label of hers, but she has one now
    with pytest.raises(LabelError, match="the label being edited is not ben's"):
        store.save(draft(analyst="ben"), expected=newer.uid)  # ben cannot edit (or supersede) ana's label
    assert store.count() == 2
    bens = store.save(draft(analyst="ben"), expected=None)  # another analyst's label never conflicts with his own
    assert (bens.version, bens.supersedes) == (3, None) and store.count() == 3


def test_labels_of_one_question_from_many_threads_get_distinct_versions(store):
    errors = []

    def write(n):
        try:
            for i in range(10):
                store.save(draft(answers=[f"answer {n}-{i}"], analyst=f"analyst {n}"), expected=ANY)
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    history = store.history(KEY, "ramdocs-0001")
    assert [h.version for h in history] == list(range(1, 41))
    for n in range(4):  # each analyst's ten saves are one chain, each on their own previous one
        chain = [h for h in history if h.analyst == f"analyst {n}"]
        assert [h.answers for h in chain] == [[f"answer {n}-{i}"] for i in range(10)]
        assert [h.supersedes for h in chain] == [None] + [prev.uid for prev in chain[:-1]]
    assert {who: lab.answers for who, lab in store.current(KEY)["ramdocs-0001"].analysts.items()} == {
        f"analyst {n}": [f"answer {n}-9"] for n in range(4)}


@pytest.mark.parametrize("bad, message", [
    (dict(answers=[]), "accept at least one answer, or mark the question unanswerable"),
    (dict(answers=["  "]), "accept at least one answer, or mark the question unanswerable"),
    (dict(question_id="ramdocs-9999"), "no question with id 'ramdocs-9999' in ramdocs_dev"),
    (dict(note="x" * 10_001), "the note has 10,001 characters; the limit is 10,000"),
    (dict(unanswerable=True), "either unanswerable or has accepted answers, not both"),
    (dict(analyst="  "), "say who labels"),
    (dict(wrong_documents=["nope"]), "the question has no document 'nope'"),
    (dict(best_method="oracle"), "best_method: not one of the methods"),
    (dict(dataset="multisource"), "the label is for dataset 'multisource', not 'ramdocs_dev'"),
])
def test_bad_labels_are_refused_with_a_clear_message(store, ramdocs, bad, message):
    with pytest.raises(LabelError) as err:
        store.save(draft(**bad), dataset=ramdocs, methods=sorted(METHODS))
    assert any(message in p for p in err.value.problems), err.value.problems
    assert store.count() == 0


def test_a_note_of_exactly_the_limit_and_an_unanswerable_label_are_accepted(store, ramdocs):
    saved = store.save(draft(answers=[], unanswerable=True, note="x" * 10_000), dataset=ramdocs)
    assert saved.unanswerable and len(saved.note) == 10_000


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_and_import_round_trip_every_version(store, tmp_path, fmt):
    tricky = ['=HYPERLINK("http://127.0.0.1/x")', "'=quoted", "'plain", "+1", "-2", "@sum", "line\nbreak, \"q\""]
    a = store.save(draft(note=tricky[0], answers=tricky[1:4]))
    b = store.save(draft(answers=tricky[4:], unanswerable=False, note="\t tab first".strip()), expected=a.uid)
    c = store.save(draft("ramdocs-0002", answers=[], unanswerable=True, conflict_type="noise", analyst="=ben"))
    path = tmp_path / f"labels.{fmt}"
    path.write_text(render(store.versions(), fmt), encoding="utf-8")
    assert read_labels(path) == [a, b, c]

    other = LabelStore(tmp_path / "other.db")
    report = other.import_labels(read_labels(path))
    assert (report.added, report.skipped) == (3, 0)
    assert other.versions() == [a, b, c]                       # same uids, versions, chain, times, text
    again = other.import_labels(read_labels(path))
    assert (again.added, again.skipped) == (0, 3) and other.count() == 3  # importing twice adds nothing
    if fmt == "csv":
        cells = path.read_text().splitlines()[1]
        assert "\"'=HYPERLINK" in cells  # a spreadsheet shows it as text instead of running it


def test_an_import_is_all_or_nothing(store, ramdocs, tmp_path):
    good, bad = draft(), draft("ramdocs-9999")
    labels = [LabelStore(tmp_path / "a.db").save(good), LabelStore(tmp_path / "b.db").save(bad)]
    with pytest.raises(LabelError, match="no question with id 'ramdocs-9999'"):
        store.import_labels(labels, dataset=ramdocs)
    assert store.count() == 0


def test_the_schema_is_at_the_newest_revision_and_migrations_go_both_ways(store):
    assert current_revision(store.engine) == head_revision() == "0004"
    from alembic import command

    from backend.labels.store import _alembic_config

    with store.engine.begin() as conn:
        command.downgrade(_alembic_config(conn), "base")
    assert not {"labels", "rounds"} & set(sa.inspect(store.engine).get_table_names())
    migrate(store.engine)
    assert {"labels", "rounds"} <= set(sa.inspect(store.engine).get_table_names())
    assert store.save(draft()).version == 1


def test_a_store_written_by_a_newer_version_is_refused(store, store_where):
    with store.engine.begin() as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = '9999'"))
    with pytest.raises(LabelStoreError, match="schema revision '9999', which this version of ConflictLens does not "
                                              "know"):
        LabelStore(store_where)


def test_an_unusable_location_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(LabelStoreError, match="cannot create the label store's folder"):
        LabelStore(blocker / "sub" / "labels.db")
    with pytest.raises(LabelStoreError, match="SQLite or PostgreSQL only"):
        LabelStore("mysql://u@localhost/db")
    with pytest.raises(LabelStoreError, match="cannot open the label store") as err:
        LabelStore("postgresql://cl:secret-pw@127.0.0.1:1/none")
    assert "secret-pw" not in str(err.value)


def test_readers_do_not_queue_behind_a_writer_on_sqlite(tmp_path):
    import sqlite3
    import time

    store = LabelStore(tmp_path / "l.db")
    store.save(draft())
    writer = sqlite3.connect(tmp_path / "l.db", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process holds the write lock (the page re-reads every 5 s)
    try:
        start = time.monotonic()
        assert list(store.latest(KEY)) == ["ramdocs-0001"] and store.count() == 1
        assert len(store.history(KEY, "ramdocs-0001")) == 1
        assert time.monotonic() - start < 5  # the busy timeout is 60 s: a queued reader would wait for it
    finally:
        writer.execute("ROLLBACK")
        writer.close()
