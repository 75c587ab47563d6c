"""Labelling as a team, on SQLite and on a real PostgreSQL server: rounds (who sets and changes them), each
analyst's own chain of label versions, the lead's adjudicated labels, which label of a case is gold, concurrent saves
of one question by two analysts, and the 0002 -> 0003 migration keeping every legacy label."""

import json
import subprocess
import sys
import threading
from datetime import datetime, timezone

import pytest
import sqlalchemy as sa

from backend.labels import LabelConflict, LabelError, LabelStore
from backend.labels.store import _sqlite_engine, current_revision, head_revision, migrate, store_url
from backend.labels.files import read_labels, render
from backend.labels.team import GoldCounts, overlap_of, resolve
from tests.conftest import ROOT
from tests.labels.test_store import KEY, draft


def _two(store, qid="ramdocs-0001", ana=("3,559",), ben=("10,000",)):
    """ana's and ben's own labels of one question."""
    return (store.save(draft(qid, answers=list(ana)), expected=None),
            store.save(draft(qid, answers=list(ben), analyst="ben"), expected=None))


# --- rounds --------------------------------------------------------------------------------------------------

def test_without_a_round_the_overlap_is_one_and_the_first_round_may_be_set_by_anyone(store):
    assert (store.round(KEY), store.rounds(KEY), overlap_of(store.round(KEY))) == (None, [], 1)
    first = store.set_round(KEY, 2, " ana ", "ben", by_source="signed-in", expected=None)
    assert (first.number, first.overlap, first.lead, first.set_by, first.set_by_source) == (1, 2, "ana", "ben",
                                                                                             "signed-in")
    assert store.round(KEY) == first and overlap_of(first) == 2
    assert store.round("other@000000000000") is None  # a round is per dataset identity


def test_only_the_lead_changes_a_round_and_a_stale_change_is_refused(store):
    store.set_round(KEY, 2, "ana", "ben")
    with pytest.raises(LabelError, match=r"only the round's lead \(ana\) changes it; you are ben"):
        store.set_round(KEY, 3, "ben", "ben")
    second = store.set_round(KEY, 3, "ben", "ana", expected=1)  # the lead hands it over
    assert (second.number, second.overlap, second.lead, second.set_by) == (2, 3, "ben", "ana")
    with pytest.raises(LabelError, match="ana changed the round meanwhile"):
        store.set_round(KEY, 1, "ben", "ben", expected=1)  # ben's page still showed round 1
    with pytest.raises(LabelError, match="changed the round meanwhile"):
        store.set_round(KEY, 1, "ben", "ben", expected=None)
    assert [(r.number, r.overlap, r.lead) for r in store.rounds(KEY)] == [(1, 2, "ana"), (2, 3, "ben")]


@pytest.mark.parametrize("overlap, lead, by, message", [
    (0, "ana", "ana", "overlap must be a whole number from 1 to 10"),
    (11, "ana", "ana", "overlap must be a whole number from 1 to 10"),
    ("2", "ana", "ana", "overlap must be a whole number from 1 to 10"),
    (2, "  ", "ana", "name the round's lead"),
    (2, "ana", "", "say who sets the round"),
    (2, "a" * 101, "ana", "the lead's name is over 100 characters"),
])
def test_a_bad_round_is_refused(store, overlap, lead, by, message):
    with pytest.raises(LabelError) as err:
        store.set_round(KEY, overlap, lead, by)
    assert any(message in p for p in err.value.problems), err.value.problems
    assert store.rounds(KEY) == []


# --- each analyst's own chain, current labels ----------------------------------------------------------------

def test_each_analyst_has_their_own_current_label(store):
    ana, ben = _two(store)
    ana2 = store.save(draft(answers=["3,559 people"]), expected=ana.uid)
    other = store.save(draft("ramdocs-0002", answers=["x"], analyst="ben"), expected=None)
    assert [(lab.version, lab.supersedes) for lab in (ana, ben, ana2)] == [(1, None), (2, None), (3, ana.uid)]
    cases = store.current(KEY)
    assert {qid: (case.analysts, case.adjudicated) for qid, case in cases.items()} == {
        "ramdocs-0001": ({"ana": ana2, "ben": ben}, None), "ramdocs-0002": ({"ben": other}, None)}
    assert (cases["ramdocs-0001"].agree(), cases["ramdocs-0001"].status()) == (False, "disputed")
    assert store.mine(KEY, "ana") == {"ramdocs-0001": ana2}
    assert store.mine(KEY, "ben") == {"ramdocs-0001": ben, "ramdocs-0002": other}
    assert store.mine(KEY, "") == {} and set(store.current(KEY, ["ramdocs-0002"])) == {"ramdocs-0002"}


# --- adjudication --------------------------------------------------------------------------------------------

def test_only_the_rounds_lead_adjudicates(store):
    ana, ben = _two(store)
    final = draft(answers=["3,559"], analyst="lea")
    with pytest.raises(LabelError, match="ramdocs_dev has no labelling round: set one first"):
        store.adjudicate(final, [ana.uid, ben.uid])
    store.set_round(KEY, 2, "lea", "ana")
    with pytest.raises(LabelError, match=r"only the round's lead \(lea\) records an adjudicated label; you are ana"):
        store.adjudicate(draft(answers=["3,559"]), [ana.uid, ben.uid])
    assert store.count() == 2
    settled = store.adjudicate(final, [ana.uid, ben.uid, ana.uid], expected=None)
    assert (settled.kind, settled.settles, settled.supersedes, settled.version, settled.analyst) == (
        "adjudicated", [ana.uid, ben.uid], None, 3, "lea")
    case = store.current(KEY)["ramdocs-0001"]
    assert (case.adjudicated, case.analysts, case.status(), case.gold()) == (
        settled, {"ana": ana, "ben": ben}, "adjudicated", settled)
    assert store.mine(KEY, "lea") == {}  # an adjudicated label is nobody's own label


def test_an_adjudicated_label_settles_only_analysts_labels_of_its_question(store):
    ana, ben = _two(store)
    elsewhere = store.save(draft("ramdocs-0002", answers=["x"]), expected=None)
    store.set_round(KEY, 2, "ana", "ana")
    with pytest.raises(LabelError, match=f"settles {elsewhere.uid}, not analysts' labels of this question"):
        store.adjudicate(draft(answers=["3,559"]), [ana.uid, elsewhere.uid])
    with pytest.raises(LabelError, match="settles nope, not analysts' labels"):
        store.adjudicate(draft(answers=["3,559"]), ["nope"])
    first = store.adjudicate(draft(answers=["3,559"]), [ana.uid, ben.uid])
    with pytest.raises(LabelError, match=f"settles {first.uid}, not analysts' labels"):  # not another adjudication
        store.adjudicate(draft(answers=["3,559"]), [first.uid])
    assert store.count() == 4


def test_a_second_adjudication_supersedes_the_first_and_leaves_the_analysts_labels(store):
    ana, ben = _two(store)
    store.set_round(KEY, 2, "ana", "ana")
    first = store.adjudicate(draft(answers=["3,559"]), [ana.uid, ben.uid], expected=None)
    with pytest.raises(LabelConflict) as err:
        store.adjudicate(draft(answers=["10,000"]), [ana.uid, ben.uid], expected=None)  # another tab: saw none
    assert err.value.current == first
    second = store.adjudicate(draft(answers=["10,000"]), [ana.uid, ben.uid], expected=first.uid)
    assert (second.supersedes, second.version, second.kind) == (first.uid, 4, "adjudicated")
    with pytest.raises(LabelConflict):
        store.adjudicate(draft(answers=["3,559"]), [ana.uid], expected=first.uid)  # a stale adjudication
    case = store.current(KEY)["ramdocs-0001"]
    assert (case.adjudicated, case.analysts, case.gold().answers) == (second, {"ana": ana, "ben": ben}, ["10,000"])
    ana2 = store.save(draft(answers=["3,559 again"]), expected=ana.uid)  # ana's own chain goes on beside it
    assert ana2.supersedes == ana.uid and store.current(KEY)["ramdocs-0001"].adjudicated == second
    with pytest.raises(LabelError, match="the analysts' labels changed since you looked"):  # ana edited since
        store.adjudicate(draft(answers=["3,559"]), [ana.uid, ben.uid], expected=second.uid)
    third = store.adjudicate(draft(answers=["3,559"]), [ana2.uid, ben.uid], expected=second.uid)
    assert sorted(third.settles) == sorted([ana2.uid, ben.uid])


# --- gold of a case ------------------------------------------------------------------------------------------

def test_resolve_counts_adjudicated_agreed_disputed_and_short_cases(store):
    store.set_round(KEY, 2, "ana", "ana")
    a1, b1 = _two(store, "ramdocs-0001")                                    # disputed, then adjudicated
    store.adjudicate(draft("ramdocs-0001", answers=["final"]), [a1.uid, b1.uid])
    _two(store, "ramdocs-0002", ana=("Paris", "Lyon"), ben=("lyon", "PARIS"))  # the same answer set: agreed
    _two(store, "ramdocs-0003", ana=("x",), ben=("y",))                       # disputed
    store.save(draft("ramdocs-0004", answers=[], unanswerable=True), expected=None)  # one label: agreed, short
    store.save(draft("ramdocs-0005", answers=[], unanswerable=True), expected=None)
    store.save(draft("ramdocs-0005", answers=["z"], analyst="ben"), expected=None)   # unanswerable vs z: disputed
    gold, counts = resolve(store.current(KEY), overlap_of(store.round(KEY)))
    assert counts == GoldCounts(adjudicated=1, agreed=2, disputed=2, short=1, overlap=2,
                                disputed_ids=["ramdocs-0003", "ramdocs-0005"])
    assert {qid: (lab.kind, lab.answers, lab.unanswerable) for qid, lab in gold.items()} == {
        "ramdocs-0001": ("adjudicated", ["final"], False), "ramdocs-0002": ("analyst", ["lyon", "PARIS"], False),
        "ramdocs-0004": ("analyst", [], True)}  # agreed: the newest of the agreeing labels
    assert counts.as_dict() == {"adjudicated": 1, "agreed": 2, "disputed": 2, "agreed_below_overlap": 1,
                                "overlap": 2, "disputed_ids": ["ramdocs-0003", "ramdocs-0005"]}


# --- two analysts at once ------------------------------------------------------------------------------------

def test_two_analysts_saving_one_question_at_once_keep_every_save_and_their_chains(store):
    errors, saved = [], {"ana": [], "ben": []}
    start = threading.Barrier(2)

    def label(who):
        try:
            start.wait()
            seen = None
            for i in range(15):  # as the page does: each save names the analyst's own version it showed
                seen = store.save(draft(answers=[f"{who} {i}"], analyst=who), expected=seen.uid if seen else None)
                saved[who].append(seen.uid)
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=label, args=(who,)) for who in saved]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    history = store.history(KEY, "ramdocs-0001")
    assert [h.version for h in history] == list(range(1, 31))
    for who, uids in saved.items():
        chain = [h for h in history if h.analyst == who]
        assert [h.uid for h in chain] == uids and [h.answers for h in chain] == [[f"{who} {i}"] for i in range(15)]
        assert [h.supersedes for h in chain] == [None] + uids[:-1]
    case = store.current(KEY)["ramdocs-0001"]
    assert {who: lab.uid for who, lab in case.analysts.items()} == {"ana": saved["ana"][-1], "ben": saved["ben"][-1]}


# --- migration 0002 -> 0003 ----------------------------------------------------------------------------------

COLUMNS_0002 = ("uid, dataset, question_id, version, supersedes, answers, unanswerable, conflict_type, "
                "wrong_documents, wrong_sources, best_method, note, analyst, created_at, analyst_source, "
                "question_fingerprint, carried_from")


def _legacy_rows() -> list[dict]:
    def row(uid, qid, version, supersedes, analyst, answers, minute, **kw):
        return {"uid": uid, "dataset": KEY, "question_id": qid, "version": version, "supersedes": supersedes,
                "answers": answers, "unanswerable": False, "conflict_type": kw.get("conflict_type"),
                "wrong_documents": kw.get("wrong_documents", []), "wrong_sources": [], "best_method": None,
                "note": kw.get("note", ""), "analyst": analyst,
                "created_at": datetime(2025, 3, 1, 12, minute, 7, 123456, tzinfo=timezone.utc),
                "analyst_source": kw.get("analyst_source", "self-declared"),
                "question_fingerprint": kw.get("question_fingerprint"), "carried_from": None}

    return [row("a" * 32, "ramdocs-0001", 1, None, "ana", ["3,559"], 1, conflict_type="misinformation",
                wrong_documents=["doc-1"], note="ünïcode, \"quoted\"\nline"),
            row("b" * 32, "ramdocs-0001", 2, "a" * 32, "ben", ["3,559 people"], 2, analyst_source="signed-in",
                question_fingerprint="f" * 64),   # ben edited ana's label: the legacy way
            row("c" * 32, "ramdocs-0002", 1, None, "cleo", ["x", "y"], 3)]


def _engine_at_0002(where: str):
    url = store_url(where)
    engine = _sqlite_engine(url) if url.get_backend_name() == "sqlite" else sa.create_engine(url)
    migrate(engine, "0002")
    assert current_revision(engine) == "0002"
    table = sa.Table("labels", sa.MetaData(), autoload_with=engine)
    assert "kind" not in table.c
    with engine.begin() as conn:
        conn.execute(sa.insert(table), _legacy_rows())
    return engine


def _raw(engine) -> list[tuple]:
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(sa.text(f"SELECT id, {COLUMNS_0002} FROM labels ORDER BY id"))]


def test_the_team_migration_keeps_every_legacy_label_and_its_chain(store_where):
    engine = _engine_at_0002(store_where)
    before = _raw(engine)
    assert len(before) == 3
    store = LabelStore(store_where)  # opening upgrades to the newest revision
    try:
        assert current_revision(store.engine) == head_revision()
        assert _raw(store.engine) == before  # every field of every row, exactly as it was
        versions = store.versions()
        assert [(v.uid, v.kind, v.settles) for v in versions] == [(r["uid"], "analyst", []) for r in _legacy_rows()]
        assert [v.model_dump(include=set(COLUMNS_0002.split(", "))) for v in versions] == _legacy_rows()
        cases = store.current(KEY)
        assert {qid: set(case.analysts) for qid, case in cases.items()} == {"ramdocs-0001": {"ben"},
                                                                          "ramdocs-0002": {"cleo"}}
        assert cases["ramdocs-0001"].analysts["ben"].uid == "b" * 32  # legacy ben v2 is the only current label
        assert store.mine(KEY, "ana") == {} and store.rounds(KEY) == []
        again = store.save(draft(answers=["3,559"]), expected=None)  # ana starts her own chain beside ben's
        assert (again.version, again.supersedes) == (3, None)
        assert set(store.current(KEY)["ramdocs-0001"].analysts) == {"ana", "ben"}
    finally:
        store.close()
        engine.dispose()


# --- exports carry kind and settles ---------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_exports_carry_kind_and_settles_and_import_keeps_them(store, tmp_path, fmt):
    ana, ben = _two(store)
    store.set_round(KEY, 2, "ana", "ana")
    settled = store.adjudicate(draft(answers=["3,559"]), [ana.uid, ben.uid])
    path = tmp_path / f"labels.{fmt}"
    path.write_text(render(store.versions(), fmt), encoding="utf-8")
    if fmt == "csv":
        header, *rows = path.read_text().splitlines()
        assert header.split(",")[-2:] == ["kind", "settles"]
        assert rows[2].endswith(f',adjudicated,"[""{ana.uid}"", ""{ben.uid}""]"') and rows[0].endswith(",analyst,[]")
    assert read_labels(path) == [ana, ben, settled]
    other = LabelStore(tmp_path / "other.db")
    assert other.import_labels(read_labels(path)).added == 3
    assert other.versions() == [ana, ben, settled]
    case = other.current(KEY)["ramdocs-0001"]
    assert (case.adjudicated.kind, case.adjudicated.settles, set(case.analysts)) == (
        "adjudicated", [ana.uid, ben.uid], {"ana", "ben"})


def test_an_export_from_before_team_labelling_reads_as_analysts_labels(tmp_path):
    old = tmp_path / "old.csv"
    old.write_text("uid,dataset,question_id,version,created_at,analyst,answers,carried_from\n"
                   f"u1,{KEY},ramdocs-0001,1,2025-01-01T00:00:00Z,ana,\"[\"\"x\"\"]\",\n", encoding="utf-8")
    [lab] = read_labels(old)
    assert (lab.kind, lab.settles, lab.answers) == ("analyst", [], ["x"])
    jsonl = tmp_path / "old.jsonl"
    jsonl.write_text(json.dumps({"uid": "u2", "dataset": KEY, "question_id": "ramdocs-0002", "version": 1,
                                 "created_at": "2025-01-01T00:00:00Z", "analyst": "ben", "answers": ["y"]}) + "\n")
    [lab] = read_labels(jsonl)
    assert (lab.kind, lab.settles) == ("analyst", [])


# --- labels round / labels info ------------------------------------------------------------------------------

def _cli(*args):
    return subprocess.run([sys.executable, "-m", "backend", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


def test_labels_round_and_info_from_the_command_line(tmp_path):
    db = tmp_path / "l.db"
    ds = "sample_data/ramdocs_dev"
    done = _cli("labels", "round", "--labels", db, "--dataset", ds, "--overlap", "2", "--lead", "lea", "--as", "ben")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{KEY}: round 1: 2 labels per case, lead lea (set by ben, command-line)"
    refused = _cli("labels", "round", "--labels", db, "--dataset", ds, "--overlap", "3", "--lead", "ben", "--as",
                   "ben")
    assert refused.returncode == 2
    assert refused.stderr.strip() == "error: ramdocs_dev: only the round's lead (lea) changes it; you are ben"
    bad = _cli("labels", "round", "--labels", db, "--dataset", ds, "--overlap", "0", "--lead", "lea", "--as", "lea")
    assert bad.returncode == 2 and "overlap must be a whole number from 1 to 10" in bad.stderr

    store = LabelStore(db)
    a1, b1 = _two(store, "ramdocs-0001")
    store.adjudicate(draft("ramdocs-0001", answers=["3,559"], analyst="lea"), [a1.uid, b1.uid])
    _two(store, "ramdocs-0002", ana=("x",), ben=("X",))
    _two(store, "ramdocs-0003", ana=("x",), ben=("y",))
    store.save(draft("ramdocs-0004", answers=["z"]))
    store.close()
    info = _cli("labels", "info", "--labels", db, "--dataset", ds)
    assert info.returncode == 0, info.stderr
    lines = info.stdout.splitlines()
    team = ("  round 1: 2 labels per case, lead lea (set by ben, command-line); 3 of {} have 2 of 2 labels; labels "
            "per analyst: ana 4, ben 3; 1 adjudicated")
    assert lines[1:3] == [f"{KEY}: 4 question(s) labelled, 8 version(s); ana (self-declared) 4, ben (self-declared) 3, "
                          "lea (self-declared) 1", team.format("4 labelled cases")]
    assert lines[3:9] == [f"{ds} is {KEY}: 4 question(s) labelled", team.format("100 cases"),
                          "  ramdocs-0001: 2 of 2 labels (ana, ben) · adjudicated by lea",
                          "  ramdocs-0002: 2 of 2 labels (ana, ben) · agreed",
                          "  ramdocs-0003: 2 of 2 labels (ana, ben) · disputed",
                          "  ramdocs-0004: 1 of 2 labels (ana) · agreed"]


def test_an_imported_export_keeps_its_chains_so_file_and_store_agree_on_current_labels(store, tmp_path):
    """A label another analyst's edit replaced before team labelling (ana v1 -> ben v2) stays replaced after an
    export is imported elsewhere: the same labels are current, so gold from the file and from the store agree."""
    from backend.labels.gold import team_gold
    from backend.labels.model import Label

    when = datetime(2025, 1, 1, tzinfo=timezone.utc)
    ana = Label(**draft(answers=["x"]).model_dump(), uid="a" * 32, version=1, created_at=when)
    ben = Label(**draft(answers=["y"], analyst="ben").model_dump(), uid="b" * 32, version=2, supersedes=ana.uid,
                created_at=when.replace(day=2))
    path = tmp_path / "legacy.jsonl"
    path.write_text(render([ana, ben], "jsonl"))
    assert store.import_labels(read_labels(path)).added == 2
    assert set(store.current(KEY)["ramdocs-0001"].analysts) == {"ben"}
    from_file, from_store = team_gold(path, KEY), team_gold(store.where if "://" in store.where else
                                                           store.url.database, KEY)
    assert from_file.counts == from_store.counts and from_file.labels["ramdocs-0001"].uid == ben.uid


def test_the_lead_is_named_exactly_but_for_surrounding_spaces(store):
    """A lead named `` ana `` is ``ana``: they adjudicate and change the round; ``ANA`` and ``anna`` do not (issue
    36: no case folding, look-alikes are other names: tests/security/test_identity_claims.py)."""
    ana, ben = _two(store)
    store.set_round(KEY, 2, " ana ", "ben")
    settled = store.adjudicate(draft(answers=["3,559"], analyst=" ana "), [ana.uid, ben.uid])
    assert (settled.analyst, settled.kind) == ("ana", "adjudicated")
    for other in ("anna", "ANA"):
        with pytest.raises(LabelError, match=r"only the round's lead \(ana\)"):
            store.adjudicate(draft(answers=["3,559"], analyst=other), [ana.uid, ben.uid])
    with pytest.raises(LabelError, match=r"only the round's lead \(ana\) changes it; you are Ana"):
        store.set_round(KEY, 3, "ana", "Ana")
    assert store.set_round(KEY, 3, "ana", "ana ").overlap == 3


def test_carry_over_copies_every_current_label_of_a_case_and_the_adjudication_names_the_copies(store):
    """Another version of the dataset (one question edited): each unchanged question's current labels (each analyst's
    and the adjudicated one) are carried, the adjudicated one naming the carried copies; the edited question stays."""
    from backend.data import load_dataset
    from backend.labels import dataset_key
    from backend.paths import SAMPLE_DATA

    ramdocs = load_dataset(SAMPLE_DATA / "ramdocs_dev")
    ana, ben = (store.save(draft(answers=[a], analyst=who), dataset=ramdocs) for who, a in (("ana", "1"), ("ben", "2")))
    for who in ("ana", "ben"):
        store.save(draft("ramdocs-0002", answers=["x"], analyst=who), dataset=ramdocs)
    store.set_round(KEY, 2, "ana", "ana")
    store.adjudicate(draft(answers=["3,559"]), [ana.uid, ben.uid], dataset=ramdocs)
    edited = ramdocs.model_copy(update={"questions": [
        q.model_copy(update={"question": q.question + "?"}) if q.id == "ramdocs-0002" else q
        for q in ramdocs.questions]})
    report = store.carry_over(KEY, edited)
    assert (report.carried, report.changed, report.by_id_only) == (1, 1, 0)
    case = store.current(dataset_key(edited))["ramdocs-0001"]
    assert sorted(case.analysts) == ["ana", "ben"] and case.adjudicated is not None
    assert sorted(case.adjudicated.settles) == sorted(lab.uid for lab in case.analysts.values())
    assert {lab.carried_from for lab in case.analysts.values()} == {ana.uid, ben.uid}
    assert "ramdocs-0002" not in store.current(dataset_key(edited))


def test_a_label_saved_after_the_adjudication_is_flagged_and_a_settled_case_needs_no_more_labels(store):
    from backend.labels.team import needs

    ana, ben = _two(store)
    store.set_round(KEY, 3, "ana", "ana")
    store.adjudicate(draft(answers=["3,559"]), [ana.uid, ben.uid])
    case = store.current(KEY)["ramdocs-0001"]
    assert case.settled_before() == [] and not needs(case, "cid", 3)  # settled: cid is not asked
    store.save(draft(answers=["12"], analyst="cid"), expected=None)  # cid labels it all the same (a link)
    case = store.current(KEY)["ramdocs-0001"]
    assert case.settled_before() == ["cid"] and case.status() == "adjudicated"
