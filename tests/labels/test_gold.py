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
from backend.labels.gold import apply_gold, load_gold
from backend.llm.client import LLMConfig
from backend.llm.providers import scripted
from backend.runner import Runner
from backend.schema import MethodResult
from backend.scoring import accuracy
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
    store.save(_label("ramdocs-0001", ["new"], analyst="ben"), expected=first.uid)
    path = tmp_path / "l.jsonl"
    path.write_text(render(store.versions(), "jsonl"))
    for spec in (tmp_path / "l.db", path):
        assert load_gold(spec, KEY)["ramdocs-0001"].answers == ["new"]
        assert load_gold(spec, KEY, analyst="ana")["ramdocs-0001"].answers == ["old"]
        assert load_gold(spec, "other") == {} and load_gold(spec, "ramdocs_dev") == {}  # an identity, not a name


def test_on_an_unanswerable_question_abstaining_is_correct(ramdocs, tmp_path):
    store = LabelStore(tmp_path / "l.db")
    store.save(_label("ramdocs-0001", unanswerable=True))
    questions, _ = apply_gold(ramdocs, store.latest(KEY))
    results = {("ramdocs-0001", "quiet"): MethodResult(method="quiet", question_id="ramdocs-0001", abstained=True),
               ("ramdocs-0001", "loud"): MethodResult(method="loud", question_id="ramdocs-0001", answers=["3,559"])}
    summary = summarize(ramdocs, results, methods=["quiet", "loud"], questions=questions)["methods"]
    assert (summary["quiet"]["accuracy"], summary["quiet"]["strict_em"], summary["quiet"]["scored"]) == (100.0, 100.0,
                                                                                                         1)
    assert (summary["loud"]["accuracy"], summary["loud"]["strict_em"]) == (0.0, 0.0)
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
    assert "gold answers from 5 analyst label(s)" in done.stderr and "95 unlabelled question(s) left out" in done.stderr
    assert "Gold answers: analysts' labels from" in done.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["questions"] == 5 and summary["gold"]["from"] == str(csv_path)
    assert summary["methods"]["no_rag"]["accuracy"] == 20.0  # closed book abstains: right on the unanswerable one
    results, _ = load_results(out / "results.jsonl")
    assert {q for q, _ in results} == set(ids)
    right = sum(accuracy(results[(qid, "vanilla_rag")].answers, ramdocs.question(qid).gold_answers[:1])
                for qid in ids[:3])
    assert summary["methods"]["vanilla_rag"]["accuracy"] == pytest.approx(100 * right / 5)
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
