"""Labels as gold: the analysts' answers replace the dataset's, unanswerable means abstaining is right, only labelled
questions are scored; the CLI sequence of the issue (label, export, ``evaluate --gold``); and no label ever reaches
a model."""

import json
import subprocess
import sys

import pytest

from backend.evaluate import evaluate, load_results, summarize
from backend.labels import LabelDraft, LabelStore
from backend.labels.files import render
from backend.labels.gold import apply_gold, load_gold, settled_text, team_gold
from backend.llm.client import LLMConfig
from backend.llm.providers import scripted
from backend.runner import Runner
from backend.schema import MethodResult
from backend.scoring import PAPER_METRICS, accuracy
from tests.conftest import ROOT
from tests.labels.test_store import KEY  # ramdocs_dev's identity (name@content hash)


def _label(qid, answers=(), unanswerable=False, analyst="ana"):
    return LabelDraft(dataset=KEY, question_id=qid, answers=list(answers), unanswerable=unanswerable,
                      analyst=analyst)


def test_apply_gold_keeps_only_labelled_questions_with_the_labels_answers(ramdocs, tmp_path):
    store = LabelStore(tmp_path / "l.db")
    store.save(_label("ramdocs-0003", ["my answer"]))
    store.save(_label("ramdocs-0001", unanswerable=True))
    store.save(LabelDraft(dataset=KEY, question_id="gone", answers=["x"], analyst="ana"))
    questions, info = apply_gold(ramdocs, load_gold(tmp_path / "l.db", ramdocs))
    assert [q.id for q in questions] == ["ramdocs-0001", "ramdocs-0003"]  # dataset order
    assert questions[0].gold_answers == [] and questions[0].meta["unanswerable"] is True
    assert questions[1].gold_answers == ["my answer"]
    assert questions[1].wrong_answers == ramdocs.question("ramdocs-0003").wrong_answers
    assert ramdocs.question("ramdocs-0003").gold_answers != ["my answer"]  # the dataset itself is untouched
    assert info == {"labels": 3, "questions": 2, "unanswerable": 1, "unlabelled": 98, "unknown": ["gone"]}


def test_the_newest_version_is_gold_and_an_analyst_can_be_chosen(tmp_path):
    store = LabelStore(tmp_path / "l.db")
    first = store.save(_label("ramdocs-0001", ["old"]))
    store.save(_label("ramdocs-0001", ["new"]), expected=first.uid)                # ana edits her label
    store.save(_label("ramdocs-0001", ["other"], analyst="ben"), expected=None)    # ben's own: they disagree
    store.save(_label("ramdocs-0002", ["x"], analyst="ben"), expected=None)
    path = tmp_path / "l.jsonl"
    path.write_text(render(store.versions(), "jsonl"))
    for spec in (tmp_path / "l.db", path):
        gold = team_gold(spec, KEY)
        assert {q: lab.answers for q, lab in gold.labels.items()} == {"ramdocs-0002": ["x"]}  # 0001 is disputed
        # overlap: a store's round (none here: 1); a file has no rounds: the most labels a case has (2)
        assert (gold.counts.agreed, gold.counts.disputed, gold.counts.disputed_ids, gold.counts.overlap,
                gold.counts.short) == (1, 1, ["ramdocs-0001"], *((2, 1) if spec == path else (1, 0)))
        assert load_gold(spec, KEY, analyst="ana")["ramdocs-0001"].answers == ["new"]  # only hers: agreed
        assert load_gold(spec, KEY, analyst="ben")["ramdocs-0001"].answers == ["other"]
        mine = team_gold(spec, KEY, analyst="ana").counts
        assert (mine.agreed, mine.disputed, mine.overlap) == (1, 0, 1)
        assert load_gold(spec, "other") == {} and load_gold(spec, "ramdocs_dev") == {}  # an identity, not a name


def test_gold_is_the_adjudicated_label_else_the_agreed_one_from_a_store_and_its_export(tmp_path):
    store = LabelStore(tmp_path / "l.db")
    store.set_round(KEY, 3, "lea", "lea")
    a = store.save(_label("ramdocs-0001", ["3,559"]))
    b = store.save(_label("ramdocs-0001", ["10,000"], analyst="ben"))
    store.adjudicate(_label("ramdocs-0001", ["3,559"], analyst="lea"), [a.uid, b.uid])
    store.save(_label("ramdocs-0002", ["Paris", "Lyon"]))
    store.save(_label("ramdocs-0002", ["lyon", "paris"], analyst="ben"))
    store.save(_label("ramdocs-0002", ["PARIS", "LYON"], analyst="cleo"))
    store.save(_label("ramdocs-0003", unanswerable=True))
    store.save(_label("ramdocs-0003", unanswerable=True, analyst="ben"))
    store.save(_label("ramdocs-0004", ["y"]))
    store.save(_label("ramdocs-0004", unanswerable=True, analyst="ben"))  # abstaining is an answer: disputed
    expected = {"adjudicated": 1, "agreed": 2, "disputed": 1, "agreed_below_overlap": 1,
                "disputed_ids": ["ramdocs-0004"]}
    for fmt in ("csv", "jsonl"):
        path = tmp_path / f"l.{fmt}"
        path.write_text(render(store.versions(), fmt))
        for spec, overlap in ((tmp_path / "l.db", 3), (path, 3)):  # the round's; the file's most labels per case
            gold = team_gold(spec, KEY)
            assert gold.counts.as_dict() == {**expected, "overlap": overlap}
            assert {q: (lab.kind, lab.answers, lab.unanswerable) for q, lab in gold.labels.items()} == {
                "ramdocs-0001": ("adjudicated", ["3,559"], False),
                "ramdocs-0002": ("analyst", ["PARIS", "LYON"], False),
                "ramdocs-0003": ("analyst", [], True)}
    assert settled_text(gold.counts.as_dict()) == ("1 adjudicated, 2 agreed (1 of them with fewer than 3 labels); "
                                                   "1 disputed (left out: ramdocs-0004)")


def test_evaluate_scores_against_the_teams_gold_and_summary_counts_it(tmp_path):
    """`evaluate --gold STORE`: adjudicated and agreed questions are scored, the disputed one is left out and named."""
    db = tmp_path / "labels.db"
    store = LabelStore(db)
    store.set_round(KEY, 2, "lea", "ana")
    a = store.save(_label("ramdocs-0001", ["3,559"]))
    b = store.save(_label("ramdocs-0001", ["10,000"], analyst="ben"))
    store.adjudicate(_label("ramdocs-0001", ["3,559"], analyst="lea"), [a.uid, b.uid])
    store.save(_label("ramdocs-0002", unanswerable=True))
    store.save(_label("ramdocs-0002", unanswerable=True, analyst="ben"))
    store.save(_label("ramdocs-0003", ["x"]))
    store.save(_label("ramdocs-0003", ["y"], analyst="ben"))
    store.save(_label("ramdocs-0004", ["z"], analyst="ben"))
    out = tmp_path / "ev"
    done = _cli("evaluate", "--dataset", "sample_data/ramdocs_dev", "--gold", db, "--methods", "vanilla_rag",
                "--out", out)
    assert done.returncode == 0, done.stderr
    assert (f"gold answers from 3 question(s) in {db}: 1 adjudicated, 2 agreed (1 of them with fewer than 2 labels); "
            "1 disputed (left out: ramdocs-0003) (1 unanswerable); 96 unlabelled question(s) left out") in done.stderr
    assert "1 adjudicated, 2 agreed (1 of them with fewer than 2 labels); 1 disputed (left out: ramdocs-0003)" in (
        " ".join(done.stdout.split()))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["questions"] == 3
    assert {k: summary["gold"][k] for k in ("from", "analyst", "adjudicated", "agreed", "disputed",
                                            "agreed_below_overlap", "overlap", "disputed_ids", "questions",
                                            "unanswerable", "unlabelled")} == {
        "from": str(db), "analyst": None, "adjudicated": 1, "agreed": 2, "disputed": 1, "agreed_below_overlap": 1,
        "overlap": 2, "disputed_ids": ["ramdocs-0003"], "questions": 3, "unanswerable": 1, "unlabelled": 96}
    results, _ = load_results(out / "results.jsonl")
    assert {q for q, _ in results} == {"ramdocs-0001", "ramdocs-0002", "ramdocs-0004"}

    only = _cli("evaluate", "--dataset", "sample_data/ramdocs_dev", "--gold", db, "--gold-analyst", "ben",
                "--methods", "vanilla_rag", "--out", tmp_path / "ben")
    assert only.returncode == 0, only.stderr
    gold = json.loads((tmp_path / "ben" / "summary.json").read_text())["gold"]
    assert (gold["analyst"], gold["agreed"], gold["adjudicated"], gold["disputed"], gold["overlap"]) == (
        "ben", 4, 0, 0, 1)  # only ben's labels: every case agreed, none adjudicated


def test_evaluate_refuses_when_every_labelled_question_is_disputed(tmp_path):
    store = LabelStore(tmp_path / "l.db")
    store.save(_label("ramdocs-0003", ["x"]))
    store.save(_label("ramdocs-0003", ["y"], analyst="ben"))
    done = _cli("evaluate", "--dataset", "sample_data/ramdocs_dev", "--gold", tmp_path / "l.db", "--methods",
                "no_rag", "--out", tmp_path / "ev")
    assert done.returncode == 2
    assert "every labelled question of ramdocs_dev is disputed (ramdocs-0003): the round's lead adjudicates" in (
        done.stderr)


def test_on_an_unanswerable_question_abstaining_is_correct(ramdocs, tmp_path):
    store = LabelStore(tmp_path / "l.db")
    store.save(_label("ramdocs-0001", unanswerable=True))
    questions, _ = apply_gold(ramdocs, store.latest(KEY))
    results = {("ramdocs-0001", "quiet"): MethodResult(method="quiet", question_id="ramdocs-0001", abstained=True),
               ("ramdocs-0001", "loud"): MethodResult(method="loud", question_id="ramdocs-0001", answers=["3,559"])}
    summary = summarize(ramdocs, results, methods=["quiet", "loud"], questions=questions)["methods"]
    assert (summary["quiet"]["lenient_match"], summary["quiet"]["lenient_all_gold"], summary["quiet"]["scored"]) == (
        100.0, 100.0, 1)
    # every paper's metric alike: an abstention is right on an unanswerable question, an answer wrong
    assert {k: summary["quiet"][k] for k in PAPER_METRICS} == dict.fromkeys(PAPER_METRICS, 100.0)
    assert {k: summary["loud"][k] for k in PAPER_METRICS} == dict.fromkeys(PAPER_METRICS, 0.0)
    assert (summary["loud"]["lenient_match"], summary["loud"]["lenient_all_gold"]) == (0.0, 0.0)
    assert summary["quiet"]["f1"] is None  # no gold answer to match: P/R/F1 leave it out


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "backend", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env=env)


def test_label_five_export_and_evaluate_against_the_export(ramdocs, tmp_path, monkeypatch):
    """The issue's sequence from the command line: five labels, `labels export`, `evaluate --gold` on it."""
    db = tmp_path / "labels.db"
    store = LabelStore(db)
    ids = [q.id for q in ramdocs.questions[:5]]
    for qid in ids[:3]:
        store.save(_label(qid, ramdocs.question(qid).gold_answers[:1]), dataset=ramdocs)
    store.save(_label(ids[3], ["an answer nobody gives"]), dataset=ramdocs)
    store.save(_label(ids[4], unanswerable=True), dataset=ramdocs)
    csv_path, jsonl_path = tmp_path / "labels.csv", tmp_path / "labels.jsonl"
    for fmt, path in (("csv", csv_path), ("jsonl", jsonl_path)):
        done = _cli("labels", "export", "--labels", db, "--dataset", "sample_data/ramdocs_dev", "--format", fmt,
                    "--out", path)
        assert done.returncode == 0, done.stderr
    assert len(csv_path.read_text().splitlines()) == 6 and len(jsonl_path.read_text().splitlines()) == 5
    out = tmp_path / "ev"
    done = _cli("evaluate", "--dataset", "sample_data/ramdocs_dev", "--gold", csv_path, "--methods",
                "no_rag,vanilla_rag", "--out", out)
    assert done.returncode == 0, done.stderr
    assert "gold answers from 5 question(s) in" in done.stderr and ": 0 adjudicated, 5 agreed (1 unanswerable)" in (
        done.stderr) and "95 unlabelled question(s) left out" in done.stderr
    assert "Gold answers: analysts' labels from" in done.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["questions"] == 5 and summary["gold"]["from"] == str(csv_path)
    assert summary["methods"]["no_rag"]["lenient_match"] == 20.0  # closed book abstains: right on the unanswerable one
    results, _ = load_results(out / "results.jsonl")
    assert {q for q, _ in results} == set(ids)
    right = sum(accuracy(results[(qid, "vanilla_rag")].answers, ramdocs.question(qid).gold_answers[:1])
                for qid in ids[:3])
    assert summary["methods"]["vanilla_rag"]["lenient_match"] == pytest.approx(100 * right / 5)
    assert accuracy(results[(ids[3], "vanilla_rag")].answers, ramdocs.question(ids[3]).gold_answers)  # the dataset
    # would call that answer right; against the analyst's label it is wrong, and the score above counts it wrong


def test_cli_errors_name_the_problem(tmp_path):
    done = _cli("evaluate", "--dataset", "sample_data/ramdocs_dev", "--gold", tmp_path / "none.csv", "--methods",
                "no_rag", "--out", tmp_path / "ev")
    assert done.returncode == 2 and "none.csv: no such file" in done.stderr
    LabelStore(tmp_path / "l.db").save(LabelDraft(dataset="other@000000000000", question_id="q", answers=["a"],
                                                  analyst="a"))
    done = _cli("evaluate", "--dataset", "sample_data/ramdocs_dev", "--gold", tmp_path / "l.db", "--methods",
                "no_rag", "--out", tmp_path / "ev")
    assert done.returncode == 2 and "no label for a question of ramdocs_dev" in done.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"dataset": "ramdocs_dev"}\n')
    done = _cli("labels", "import", bad, "--labels", tmp_path / "l.db")
    assert done.returncode == 2 and f"{bad}:1: question_id: missing (required)" in done.stderr
    good = tmp_path / "good.jsonl"
    good.write_text(render(LabelStore(tmp_path / "l.db").versions(), "jsonl"))
    done = _cli("labels", "import", good, "--labels", tmp_path / "m.db", "--dataset", "sample_data/ramdocs_dev")
    assert done.returncode == 2 and f"holds labels of other@000000000000, not only {KEY}" in done.stderr
    done = _cli("labels", "info", "--labels", "postgresql://cl:pw-123@127.0.0.1:1/x")
    assert done.returncode == 2 and "cannot open the label store" in done.stderr and "pw-123" not in done.stderr


def test_import_and_info_from_the_command_line(tmp_path):
    src = LabelStore(tmp_path / "a.db")
    src.save(LabelDraft(dataset=KEY, question_id="ramdocs-0001", answers=["x"], analyst="ana"))
    path = tmp_path / "a.csv"
    path.write_text(render(src.versions(), "csv"))
    done = _cli("labels", "import", path, "--labels", tmp_path / "b.db", "--dataset", "sample_data/ramdocs_dev")
    assert done.returncode == 0 and "added 1, already there 0" in done.stdout, done.stderr
    env = {**__import__("os").environ, "CONFLICTLENS_LABELS": str(tmp_path / "b.db")}
    done = _cli("labels", "info", env=env)
    assert done.returncode == 0 and f"{KEY}: 1 question(s) labelled, 1 version(s); ana (self-declared) 1" in done.stdout


def test_labels_used_as_gold_never_reach_a_model(ramdocs, tmp_path):
    canary = "zq-label-canary-4417"
    store = LabelStore(tmp_path / "l.db")
    for q in ramdocs.questions[:2]:
        store.save(LabelDraft(dataset=KEY, question_id=q.id, answers=[f"{canary} answer"],
                              wrong_documents=[q.documents[0].id], note=f"{canary} note", analyst=canary))
    questions, _ = apply_gold(ramdocs, store.latest(KEY))
    assert canary in json.dumps([q.model_dump() for q in questions])  # the check below is not empty
    runner = Runner(ramdocs, llm=LLMConfig(model="scripted/echo", cache_mode="off"))
    with scripted({"*": lambda fields: json.dumps(fields)}) as model:
        summary = evaluate(runner, questions, ["vanilla_rag", "astute"], tmp_path / "ev")
        received = json.dumps(model.received)
    assert model.received and canary not in received
    assert summary["methods"]["vanilla_rag"]["scored"] == 2
