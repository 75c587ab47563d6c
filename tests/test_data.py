import json
import subprocess
import sys

import pytest

from backend.data import DatasetError, bundled_datasets, load_dataset
from backend.schema import Dataset, strip_truth
from tests.conftest import FIXTURES, ROOT

BAD = FIXTURES / "bad"
RAMDOCS_RAW = ROOT / "sample_data" / "raw" / "ramdocs" / "RAMDocs_dev100.jsonl"

# fixture -> (line, field, words the message must contain)
EXPECTED = {
    "invalid_json.jsonl": (2, "(line)", "invalid JSON"),
    "missing_question.jsonl": (2, "question", "missing"),
    "missing_documents.jsonl": (1, "documents", "missing"),
    "empty_documents.jsonl": (1, "documents", "at least one document"),
    "wrong_types.jsonl": (2, "documents", "valid list"),
    "empty_text.jsonl": (2, "documents[0].text", "empty"),
    "duplicate_ids.jsonl": (3, "id", "duplicate question id (first at line 1)"),
    "bad_label.jsonl": (1, "documents[0].label.type", "should be 'correct', 'misinfo' or 'noise' (got a string)"),
    "not_an_object.jsonl": (2, "(line)", "JSON object"),
    "unknown_field.jsonl": (1, "(line)", "unknown field (expected only id, question, documents"),  # never the key
    "empty.jsonl": (1, "(file)", "empty file"),
    "non_utf8.jsonl": (2, "(line)", "not valid UTF-8"),
    "unknown_source": (2, "documents[0].source", "unknown source: not a name in sources.json"),
    "bad_sources": (7, "[1].true_reliability", "less than or equal to 1"),
}


def test_every_bad_fixture_is_covered():
    assert {p.name for p in BAD.iterdir()} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_fixture_names_file_line_field(name):
    line, field, words = EXPECTED[name]
    with pytest.raises(DatasetError) as err:
        load_dataset(BAD / name)
    rendered = [str(p) for p in err.value.problems]
    assert any(f":{line}: {field}: " in r and words in r for r in rendered), rendered


@pytest.mark.parametrize("name", ["wrong_types.jsonl", "non_utf8.jsonl", "empty.jsonl", "unknown_source"])
def test_cli_validate_rejects_with_exit_2_and_no_traceback(name):
    proc = subprocess.run([sys.executable, "-m", "backend", "validate", str(BAD / name)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    line, field, _ = EXPECTED[name]
    assert f":{line}: {field}: " in proc.stderr


def test_wrong_types_reports_every_problem_in_one_pass():
    with pytest.raises(DatasetError) as err:
        load_dataset(BAD / "wrong_types.jsonl")
    assert {(p.line, p.field) for p in err.value.problems} == {(2, "documents"), (3, "gold_answers")}


def test_one_megabyte_document_is_kept_whole_with_a_note():
    ds = load_dataset(FIXTURES / "good" / "big_document.jsonl")
    text = ds.questions[0].documents[0].text
    assert len(text) >= 1_048_576
    assert text == json.loads((FIXTURES / "good" / "big_document.jsonl").read_text())["documents"][0]["text"]
    assert any("kept whole" in n for n in ds.notes)


def test_missing_ids_get_stable_line_based_ids():
    ds = load_dataset(FIXTURES / "good" / "no_ids.jsonl")
    assert [q.id for q in ds.questions] == ["q0001", "q0003"]  # line 2 is blank
    assert ds.questions[0].documents[0].id == "q0001-d1"


def test_project_folder_with_sources():
    ds = load_dataset(FIXTURES / "good" / "multi")
    assert ds.format == "project" and ds.name == "multi"
    assert ds.sources[0].true_reliability == 0.9
    assert ds.multi_source and ds.source_names() == ["wiki"]
    assert ds.question("@2").id == "q2" and ds.question("q1").id == "q1"
    with pytest.raises(KeyError):
        ds.question("@3")


def test_ramdocs_raw_is_auto_detected():
    ds = load_dataset(RAMDOCS_RAW)
    assert ds.format == "ramdocs" and len(ds.questions) == 100
    q = ds.questions[0]
    assert q.question == "What is the population of Broken Bow?"
    assert [d.label.type for d in q.documents] == ["correct", "correct", "noise"]
    assert q.documents[2].label.answer is None  # RAMDocs "unknown"
    assert q.documents[0].source is None and q.documents[0].source_name == q.documents[0].id
    assert not ds.multi_source


def test_strip_truth_removes_every_truth_field():
    ds = load_dataset(FIXTURES / "good" / "multi")
    ds.questions[0].meta["scenario"] = "FI"
    stripped = strip_truth(ds)
    assert all(not q.has_truth for q in stripped.questions)
    assert all(s.true_reliability is None and s.coverage is None for s in stripped.sources)
    assert "Ann" not in json.dumps([q.gold_answers for q in stripped.questions])
    # the original is untouched
    assert ds.questions[0].gold_answers == ["Ann"] and ds.questions[0].documents[0].label is not None
    # texts and ids survive
    assert [d.text for q in stripped.questions for d in q.documents] == [
        d.text for q in ds.questions for d in q.documents]


@pytest.mark.parametrize("name", sorted(bundled_datasets()))
def test_bundled_datasets_validate(name):
    path = bundled_datasets()[name]
    proc = subprocess.run([sys.executable, "-m", "backend", "validate", str(path)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert isinstance(load_dataset(path), Dataset)


def test_all_bundled_datasets_present():
    assert set(bundled_datasets()) == {"ramdocs_dev", "multisource", "multisource_beta", "scenarios"}


def test_validate_loads_no_model_stack():
    """``validate`` is the quick check before anything runs: the loader alone, not litellm or torch (~7 s of imports;
    reaching them through a package's ``__init__`` once made a 10,000-document check take 17 s instead of 1 s)."""
    code = ("import sys; from backend.cli import main; rc = main(['validate', 'sample_data/scenarios']); "
            "print(sorted({'litellm', 'torch', 'chromadb', 'streamlit'} & set(sys.modules))); sys.exit(rc)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("[]"), proc.stdout
