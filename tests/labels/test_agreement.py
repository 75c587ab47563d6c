"""Inter-annotator agreement (backend.labels.agreement): α and κ must equal the libraries' own results on matrices
written out here by hand, so a wrong coding of the labels' values (sets, case, missing values) would fail."""

import json
import math
import warnings
from datetime import UTC, datetime, timedelta

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from backend.cli import main
from backend.data import load_dataset
from backend.labels import LabelDraft, LabelStore, dataset_key
from backend.labels.agreement import FIELDS, agreement, from_versions, value
from backend.labels.model import Label
from backend.labels.team import by_case
from backend.paths import SAMPLE_DATA

nan = np.nan
DS = "tiny@0123456789ab"
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def lab(qid, who, answers=(), unanswerable=False, conflict_type=None, wrong=(), best=None, kind="analyst", uid=None,
        supersedes=None, minute=1, dataset=DS) -> Label:
    return Label(dataset=dataset, question_id=qid, analyst=who, answers=list(answers), unanswerable=unanswerable,
                 conflict_type=conflict_type, wrong_documents=list(wrong), best_method=best, kind=kind,
                 uid=uid or f"{qid}-{who}-{kind}", version=1, supersedes=supersedes,
                 created_at=T0 + timedelta(minutes=minute))


#: 3 analysts, 5 cases; q4 has one label only; cleo skipped q2, ben q3; q1 also has an adjudicated label (ignored)
LABELS = [
    lab("q1", "ana", ["Paris", "paris "], conflict_type="noise", wrong=["d2", "d1"], best="vanilla_rag"),
    lab("q1", "ben", ["paris"], conflict_type="noise", wrong=["d1", "d2"], best="madam_rag"),
    lab("q1", "cleo", ["Lyon"]),
    lab("q1", "ana", ["Lyon"], kind="adjudicated", minute=2),
    lab("q2", "ana", unanswerable=True, conflict_type="misinformation", wrong=["d3"]),
    lab("q2", "ben", unanswerable=True, conflict_type="misinformation", best="vanilla_rag"),
    lab("q3", "ana", ["42"], conflict_type="ambiguity", best="madam_rag"),
    lab("q3", "cleo", ["42", "forty-two"], conflict_type="ambiguity", best="madam_rag"),
    lab("q4", "ben", ["x"], conflict_type="noise", best="vanilla_rag"),
    lab("q5", "ana", ["1"]),
    lab("q5", "ben", ["1"], conflict_type="outdated"),
    lab("q5", "cleo", ["2"], conflict_type="noise"),
]

#: analysts (ana, ben, cleo) × the cases with 2+ values of the field, values coded by hand
MATRICES = {
    # cases q1 q2 q3 q5; paris=0 lyon=1 []=2 42=3 {42, forty-two}=4 1=5 2=6
    "answers": [[0, 2, 3, 5], [0, 2, nan, 5], [1, nan, 4, 6]],
    # q1 q2 q3 q5; false=0 true=1
    "unanswerable": [[0, 1, 0, 0], [0, 1, nan, 0], [0, nan, 0, 0]],
    # q1 q2 q3 q5; noise=0 misinformation=1 ambiguity=2 outdated=3 (q1 cleo, q3 ben, q5 ana: missing)
    "conflict_type": [[0, 1, 2, nan], [0, 1, nan, 3], [nan, nan, 2, 0]],
    # q1 q2 q3 q5; {d1, d2}=0 []=1 {d3}=2
    "wrong_documents": [[0, 2, 1, 1], [0, 1, nan, 1], [1, nan, 1, 1]],
    # q1 q3 (q2: ben only, q5: nobody); vanilla_rag=0 madam_rag=1
    "best_method": [[0, 1], [1, nan], [nan, 1]],
}


def alpha(matrix) -> float:
    return krippendorff.alpha(reliability_data=np.array(matrix, dtype=float), level_of_measurement="nominal")


def kappa(a, b) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cohen_kappa_score(a, b)


@pytest.fixture
def result():
    return agreement(by_case(LABELS))


def test_values_are_canonical_and_missing_is_none():
    q1 = [lab_ for lab_ in LABELS if lab_.question_id == "q1"]
    assert [value(x, "answers") for x in q1] == ['["paris"]', '["paris"]', '["lyon"]', '["lyon"]']
    assert value(LABELS[4], "answers") == "[]" and value(LABELS[4], "unanswerable") == "true"
    assert value(LABELS[0], "unanswerable") == "false"
    assert value(LABELS[0], "wrong_documents") == value(LABELS[1], "wrong_documents") == '["d1", "d2"]'
    assert value(LABELS[2], "wrong_documents") == "[]"
    assert (value(LABELS[2], "conflict_type"), value(LABELS[2], "best_method")) == (None, None)
    assert (value(LABELS[0], "conflict_type"), value(LABELS[0], "best_method")) == ("noise", "vanilla_rag")
    with pytest.raises(ValueError, match="unknown field 'note'"):
        value(LABELS[0], "note")


def test_alpha_per_field_is_the_librarys_on_the_hand_coded_matrix(result):
    assert result.analysts == ["ana", "ben", "cleo"] and result.cases == 4
    assert list(result.fields) == list(FIELDS)
    for name, matrix in MATRICES.items():
        f = result.fields[name]
        assert f.alpha == pytest.approx(alpha(matrix), abs=1e-12), name
        assert (f.cases, f.why) == (len(matrix[0]), None), name
    assert result.fields["answers"].alpha == pytest.approx(5 / 14)  # by hand: 1 - D_o / D_e = 1 - 0.6 / (84 / 90)
    assert result.fields["unanswerable"].alpha == 1.0


def test_observed_agreement_and_disagreements(result):
    got = {name: (f.observed, f.disagreements) for name, f in result.fields.items()}
    assert got == {"answers": (0.25, ["q1", "q3", "q5"]), "unanswerable": (1.0, []),
                   "conflict_type": (0.75, ["q5"]), "wrong_documents": (0.5, ["q1", "q2"]),
                   "best_method": (0.5, ["q1"])}


def test_kappa_per_pair_is_sklearns_over_the_cases_both_labelled(result):
    answers = result.fields["answers"].pairs
    assert list(answers) == [("ana", "ben"), ("ana", "cleo"), ("ben", "cleo")]
    assert (answers["ana", "ben"].kappa, answers["ana", "ben"].cases) == (1.0, 3)  # q1 q2 q5
    assert answers["ana", "cleo"].kappa == kappa(["paris", "42", "1"], ["lyon", "42|forty-two", "2"])
    assert answers["ana", "cleo"].cases == 3
    assert (answers["ben", "cleo"].kappa, answers["ben", "cleo"].cases) == (kappa(["paris", "1"], ["lyon", "2"]), 2)
    conflict = result.fields["conflict_type"].pairs
    assert (conflict["ana", "ben"].kappa, conflict["ana", "ben"].cases) == (1.0, 2)
    assert (conflict["ana", "cleo"].kappa, conflict["ana", "cleo"].cases) == (None, 1)  # one shared value: undefined
    assert (conflict["ben", "cleo"].kappa, conflict["ben", "cleo"].cases) == (kappa(["outdated"], ["noise"]), 1)
    wrong = result.fields["wrong_documents"].pairs
    assert wrong["ana", "ben"].cases == 3
    assert wrong["ana", "ben"].kappa == pytest.approx(kappa(["d1d2", "d3", "-"], ["d1d2", "-", "-"]), abs=1e-12)
    assert wrong["ana", "ben"].kappa == pytest.approx(0.5)  # by hand: (2/3 - 1/3) / (1 - 1/3)
    best = result.fields["best_method"].pairs
    assert (best["ben", "cleo"].kappa, best["ben", "cleo"].cases) == (None, 0)  # no case both judged
    unanswerable = result.fields["unanswerable"].pairs
    assert [(p.kappa, p.cases) for p in unanswerable.values()] == [(1.0, 3), (None, 3), (None, 2)]


def test_undefined_alpha_says_why():
    same = agreement(by_case([lab("q1", "ana", ["a"]), lab("q1", "ben", ["A "]), lab("q2", "ana", ["b"]),
                              lab("q2", "ben", ["b"]), lab("q3", "ben", ["c"])]))
    assert same.fields["answers"].alpha == 1.0
    assert (same.fields["unanswerable"].alpha, same.fields["unanswerable"].cases) == (None, 2)
    assert same.fields["unanswerable"].why == "every label gives the same value: α is undefined"
    none = same.fields["conflict_type"]
    assert (none.alpha, none.cases, none.observed, none.disagreements) == (None, 0, None, [])
    assert none.why == "no case has values from 2 analysts: α needs at least one"
    assert {k: (p.kappa, p.cases) for k, p in none.pairs.items()} == {("ana", "ben"): (None, 0)}
    alone = agreement(by_case([lab("q1", "ana", ["a"]), lab("q2", "ana", ["b"])]))
    assert (alone.analysts, alone.cases) == (["ana"], 0)
    assert all(f.alpha is None and f.cases == 0 and f.pairs == {} for f in alone.fields.values())
    assert agreement({}).as_json()["fields"]["answers"] == {
        "alpha": None, "cases": 0, "observed": None, "why": "no case has values from 2 analysts: α needs at least one",
        "disagreements": [], "pairs": {}}


def test_from_versions_uses_current_analyst_labels_of_one_dataset():
    old = lab("q1", "ana", ["Berlin"], uid="old", minute=0)
    current = [old, *[x.model_copy(update={"supersedes": "old"}) if x.uid == "q1-ana-analyst" else x
                      for x in LABELS]]
    other = lab("q1", "ana", ["Rome"], dataset="other@0123456789ab", uid="elsewhere")
    got = from_versions([*current, other], dataset=DS)
    assert got.as_json() == agreement(by_case(LABELS)).as_json()
    with pytest.raises(ValueError, match="labels of 2 datasets"):
        from_versions([*current, other])


def test_as_json(result):
    data = json.loads(json.dumps(result.as_json()))
    assert (data["analysts"], data["cases"], list(data["fields"])) == (["ana", "ben", "cleo"], 4, list(FIELDS))
    assert data["fields"]["best_method"] == {
        "alpha": alpha(MATRICES["best_method"]), "cases": 2, "observed": 0.5, "why": None, "disagreements": ["q1"],
        "pairs": {"ana|ben": {"kappa": kappa(["vanilla_rag"], ["madam_rag"]), "cases": 1},
                  "ana|cleo": {"kappa": None, "cases": 1}, "ben|cleo": {"kappa": None, "cases": 0}}}


# --- the command line, on a real SQLite store -------------------------------------------------------------------

RAMDOCS = load_dataset(SAMPLE_DATA / "ramdocs_dev")
KEY = dataset_key(RAMDOCS)


def save(store, qid, who, **kw):
    store.save(LabelDraft(dataset=KEY, question_id=qid, analyst=who, **kw), dataset=RAMDOCS)


@pytest.fixture
def db(tmp_path):
    store = LabelStore(tmp_path / "l.db")
    save(store, "ramdocs-0001", "ana", answers=["3,559 people"], conflict_type="misinformation",
         wrong_documents=["ramdocs-0001-d2"])
    save(store, "ramdocs-0001", "ben", answers=["3,559 People "], conflict_type="misinformation",
         wrong_documents=["ramdocs-0001-d2"])
    save(store, "ramdocs-0002", "ana", answers=["ice hockey"], conflict_type="ambiguity")
    save(store, "ramdocs-0002", "ben", answers=["football"], conflict_type="ambiguity")
    save(store, "ramdocs-0003", "ana", unanswerable=True, conflict_type="outdated")
    store.close()
    return str(tmp_path / "l.db")


def run(capsys, *argv):
    code = main(["labels", "agreement", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_json_is_as_json(db, capsys):
    code, out, _ = run(capsys, "--labels", db, "--dataset", "sample_data/ramdocs_dev", "--json")
    data = json.loads(out)
    assert code == 0 and (data["analysts"], data["cases"]) == (["ana", "ben"], 2)
    answers = data["fields"]["answers"]
    assert answers["alpha"] == pytest.approx(alpha([[0, 1], [0, 2]]), abs=1e-12)
    assert (answers["cases"], answers["observed"], answers["disagreements"]) == (2, 0.5, ["ramdocs-0002"])
    assert answers["pairs"] == {"ana|ben": {"kappa": kappa(["3559", "hockey"], ["3559", "football"]), "cases": 2}}
    assert data["fields"]["conflict_type"]["alpha"] == 1.0
    assert data["fields"]["unanswerable"]["why"] == "every label gives the same value: α is undefined"
    code, by_name, _ = run(capsys, "--labels", db, "--dataset", "ramdocs_dev", "--json")
    assert code == 0 and json.loads(by_name) == data


def test_cli_table(db, capsys):
    code, out, _ = run(capsys, "--labels", db, "--dataset", "ramdocs_dev")
    assert code == 0
    assert f"Agreement on {KEY}: 2 cases labelled by 2 or more of ana, ben" in " ".join(out.split())
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
            for line in out.splitlines() if line.count("│") == 6}
    a = alpha([[0, 1], [0, 2]])
    k = kappa(["3559", "hockey"], ["3559", "football"])
    assert rows["accepted answers"] == [f"{a:.3f}", "2", "50%", f"{k:.3f} (2)"]
    assert rows["unanswerable"] == ["—", "2", "100%", "— (2)"]
    assert rows["conflict type"] == ["1.000", "2", "100%", "1.000 (2)"]
    assert rows["best method"] == ["—", "0", "—", "— (0)"]
    assert "κ ana · ben (cases)" in out
    assert "accepted answers: disagree on ramdocs-0002\n" in out
    assert "unanswerable: disagree on none (α: every label gives the same value: α is undefined)\n" in out
    assert "best method: disagree on none (α: no case has values from 2 analysts: α needs at least one)\n" in out


def test_cli_without_two_analysts_says_so(tmp_path, capsys):
    empty = tmp_path / "e.db"
    LabelStore(empty).close()
    code, out, _ = run(capsys, "--labels", empty, "--dataset", "sample_data/ramdocs_dev")
    assert (code, out) == (0, f"agreement needs cases labelled by at least 2 analysts; {KEY} has 0 (0 questions "
                               "labelled, by 0 analysts)\n")
    store = LabelStore(empty)
    save(store, "ramdocs-0001", "ana", answers=["3,559"])
    save(store, "ramdocs-0002", "ana", answers=["hockey"])
    store.close()
    code, out, _ = run(capsys, "--labels", empty, "--dataset", "ramdocs_dev")
    assert (code, out) == (0, f"agreement needs cases labelled by at least 2 analysts; {KEY} has 0 (2 questions "
                               "labelled, by 1 analyst)\n")
    code, out, _ = run(capsys, "--labels", empty, "--dataset", "ramdocs_dev", "--json")
    data = json.loads(out)
    assert (code, data["analysts"], data["cases"], data["fields"]["answers"]["alpha"]) == (0, ["ana"], 0, None)


def test_cli_name_with_several_versions_asks_for_the_path(db, capsys):
    store = LabelStore(db)
    store.save(LabelDraft(dataset="ramdocs_dev@000000000000", question_id="q", answers=["a"], analyst="ana"))
    store.close()
    code, out, err = run(capsys, "--labels", db, "--dataset", "ramdocs_dev")
    assert (code, out) == (2, "")
    assert f"has labels of 2 versions of ramdocs_dev (ramdocs_dev@000000000000, {KEY}): name the dataset by its " \
           "path" in err
    code, out, _ = run(capsys, "--labels", db, "--dataset", "sample_data/ramdocs_dev", "--json")
    assert code == 0 and json.loads(out)["cases"] == 2
    assert not math.isnan(json.loads(out)["fields"]["answers"]["alpha"])
