"""Issue 36, "rounds and blindness that cannot be taken": blind labelling was beaten by saving a throwaway label
(which unlocks the other analysts' labels), reading theirs, then saving a copy: the case then counted as agreed.

Now a label saved once the others' could be shown to its analyst (they had a label there, another analyst had one)
is stored marked ``seen_others``; agreement, gold (``resolve``, ``evaluate --gold``) and the agreement figures
count each analyst's newest label saved blind. On SQLite and on a real PostgreSQL; the mark survives an export, an
import and a carry-over, and the migration marks copies saved before it existed."""

import json
from datetime import datetime, timezone
import subprocess
import sys

import pytest
import sqlalchemy as sa

from backend.data import load_dataset
from backend.labels import LabelDraft, LabelStore
from backend.labels.agreement import agreement
from backend.labels.files import read_labels, render
from backend.labels.gold import team_gold
from backend.labels.identity import dataset_key
from backend.labels.store import _sqlite_engine, current_revision, migrate, store_url
from backend.labels.team import may_see_others
from backend.paths import SAMPLE_DATA
from tests.conftest import ROOT
from tests.labels.test_store import KEY
from tests.labels.conftest import postgres, store, store_where  # noqa: F401 - the label tests' stores

QID, HONEST = "ramdocs-0004", "ramdocs-0002"


def _save(store, analyst: str, qid: str, answer: str, dataset=None):
    return store.save(LabelDraft(dataset=KEY if dataset is None else dataset.name, question_id=qid,
                                 answers=[answer], analyst=analyst), dataset=dataset)


def _bypass(store) -> None:
    """Bob labels blind; Ann saves a throwaway, which shows her Bob's label; she saves a copy of it. On another
    case both label honestly (Ann corrects hers before Bob labels: still blind) and agree."""
    store.set_round(KEY, 2, "Lee", "Lee")
    _save(store, "Bob", QID, "Quidditch")
    _save(store, "Ann", QID, "throwaway")
    assert may_see_others(store.current(KEY)[QID], "Ann")  # the throwaway unlocked Bob's label
    _save(store, "Ann", QID, store.current(KEY)[QID].analysts["Bob"].answers[0])  # the copy
    _save(store, "Ann", HONEST, "Hockey")
    _save(store, "Ann", HONEST, "Football")  # a correction before anyone else labelled: still blind
    _save(store, "Bob", HONEST, "football")  # Bob had no label of his own there: blind


def test_a_throwaway_then_a_copy_does_not_make_the_case_agreed(store, store_where):
    _bypass(store)
    case = store.current(KEY)[QID]
    assert case.status() == "disputed"  # it was "agreed": the copy counted
    assert store.current(KEY)[HONEST].status() == "agreed"
    assert [(lab.analyst, lab.answers[0], lab.seen_others) for lab in store.history(KEY, QID)] == [
        ("Bob", "Quidditch", False), ("Ann", "throwaway", False), ("Ann", "Quidditch", True)]
    assert not [lab for lab in store.history(KEY, HONEST) if lab.seen_others]
    assert case.analysts["Ann"].answers == ["Quidditch"]  # her current label is kept and shown ...
    assert case.counted()["Ann"].answers == ["throwaway"]  # ... but her blind one counts
    assert case.status() == "disputed" and case.seen() == ["Ann"]
    assert store.current(KEY)[HONEST].status() == "agreed"
    assert agreement(store.current(KEY)).fields["answers"].disagreements == [QID]
    gold = team_gold(store_where, KEY)
    assert (gold.counts.agreed, gold.counts.disputed, gold.counts.disputed_ids) == (1, 1, [QID])
    assert gold.counts.as_dict()["seen_others_not_counted"] == 1
    assert sorted(gold.labels) == [HONEST]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_the_mark_survives_an_export_and_an_import(store, tmp_path, fmt):
    _bypass(store)
    path = tmp_path / f"labels.{fmt}"
    path.write_text(render(store.versions(), fmt), encoding="utf-8")
    assert [lab.seen_others for lab in read_labels(path)] == [lab.seen_others for lab in store.versions()]
    gold = team_gold(path, KEY)  # gold from the export: the copy does not count either
    assert (gold.counts.agreed, gold.counts.disputed_ids) == (1, [QID])
    other = LabelStore(tmp_path / "other.db")
    other.import_labels(read_labels(path))
    assert other.current(KEY)[QID].status() == "disputed"


def test_a_carried_over_copy_keeps_the_blind_label_counted(tmp_path):
    ds = load_dataset(SAMPLE_DATA / "ramdocs_dev")
    store = LabelStore(tmp_path / "labels.db")
    _save(store, "Bob", QID, "Quidditch", ds)
    _save(store, "Ann", QID, "throwaway", ds)
    _save(store, "Ann", QID, "Quidditch", ds)
    edited = ds.model_copy(update={"questions": ds.questions[:10]})  # another version of the file
    assert dataset_key(edited) != dataset_key(ds)
    store.carry_over(dataset_key(ds), edited)
    case = store.current(dataset_key(edited))[QID]
    assert case.analysts["Ann"].answers == ["Quidditch"] and case.counted()["Ann"].answers == ["throwaway"]
    assert case.status() == "disputed"


def test_the_migration_marks_copies_saved_before_it(store_where):
    url = store_url(store_where)
    engine = _sqlite_engine(url) if url.get_backend_name() == "sqlite" else sa.create_engine(url)
    migrate(engine, "0003")
    table = sa.Table("labels", sa.MetaData(), autoload_with=engine)
    rows = [("Bob", "Quidditch"), ("Ann", "throwaway"), ("Ann", "Quidditch")]
    with engine.begin() as conn:
        for n, (who, answer) in enumerate(rows, 1):
            conn.execute(sa.insert(table).values(
                uid=f"u{n:031d}", dataset=KEY, question_id=QID, version=n,
                supersedes=f"u{n - 1:031d}" if who == "Ann" and n == 3 else None, answers=[answer],
                unanswerable=False, wrong_documents=[], wrong_sources=[], note="", analyst=who,
                created_at=datetime(2025, 1, n, tzinfo=timezone.utc), kind="analyst"))
    engine.dispose()
    store = LabelStore(store_where)  # opening migrates
    try:
        assert int(current_revision(store.engine)) >= 4
        assert [(lab.analyst, lab.answers[0], lab.seen_others) for lab in store.versions(KEY)] == [
            ("Bob", "Quidditch", False), ("Ann", "throwaway", False), ("Ann", "Quidditch", True)]
        assert store.current(KEY)[QID].status() == "disputed"
    finally:
        store.close()


def test_evaluate_gold_counts_honest_agreement_and_leaves_the_copy_out(tmp_path):
    where = str(tmp_path / "labels.db")
    store = LabelStore(where)
    _bypass(store)
    store.close()
    out = tmp_path / "ev"
    done = subprocess.run([sys.executable, "-m", "backend", "evaluate", "--dataset", "sample_data/ramdocs_dev",
                           "--methods", "no_rag", "--gold", where, "--out", str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    gold = json.loads((out / "summary.json").read_text())["gold"]
    assert (gold["agreed"], gold["disputed"], gold["disputed_ids"]) == (1, 1, [QID])
