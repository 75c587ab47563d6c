"""Files a user names (issue 26, finding 3 and the file-reading half of 2): only regular files are read, never more
than the size cap, and a path from a page or a link only inside the deployment's open folders, after ``~`` and
symlinks. /dev/zero, a FIFO, an oversized file and a line of 200,000 nested ``[`` are each refused in one line,
promptly (a FIFO never blocks: every read here runs under a deadline so a regression fails instead of hanging), by
the library and by every command that takes a file (exit 2, no traceback)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from backend import deployment, files
from backend.data import DatasetError, Problem, load_dataset
from backend.labels.files import LabelFileError, read_labels
from backend.methods.madam_released import TraceFileError, load_trace_file
from backend.outputs import AttackError, ResultsError, open_attack, open_evaluation, read_results
from tests.conftest import ROOT

ROW = {"id": "q1", "question": "Who wrote the book?",
       "documents": [{"id": "d1", "text": "Ann wrote the book.", "label": {"type": "correct", "answer": "Ann"}}],
       "gold_answers": ["Ann"]}
DEVICE = "not a regular file (a device, pipe or socket is never read)"
DEEP = "[" * 200_000
PROMPT_S = 20  # every refusal here takes milliseconds; a blocked read would take forever


def rows(n: int) -> str:
    return "".join(json.dumps({**ROW, "id": f"q{i}", "documents": [{**ROW["documents"][0], "id": f"d{i}"}]}) + "\n"
                   for i in range(n))


def within(seconds: float, fn, *args, **kwargs):
    """``fn(*args)`` on a daemon thread: its value or exception, or a test failure if it has not returned in time
    (a read blocked on a pipe never would)."""
    out: dict = {}

    def run():
        try:
            out["value"] = fn(*args, **kwargs)
        except BaseException as err:  # noqa: BLE001 - handed to the test
            out["error"] = err
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"{getattr(fn, '__name__', fn)} still running after {seconds} s: it blocked")
    if "error" in out:
        raise out["error"]
    return out["value"]


def refused(fn, *args, error=DatasetError, **kwargs) -> str:
    with pytest.raises(error) as caught:
        within(PROMPT_S, fn, *args, **kwargs)
    text = str(caught.value)
    assert "Traceback" not in text and "\n" not in text.strip(), text
    return text


@pytest.fixture(autouse=True)
def _settings(monkeypatch):
    """Settings from the environment each test sets (an app test run earlier in this process configured its own)."""
    deployment.reset()
    yield
    deployment.reset()


@pytest.fixture
def place(tmp_path, monkeypatch):
    """An open folder with a good dataset, and a folder beside it that is not open."""
    open_dir, outside = tmp_path / "open", tmp_path / "outside"
    for folder in (open_dir, outside):
        folder.mkdir()
        (folder / "q.jsonl").write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    monkeypatch.setenv(deployment.ENV_OPEN_FOLDERS, str(open_dir))
    return open_dir, outside


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe.jsonl"
    os.mkfifo(path)
    return path


# --- only regular files, never more than the cap --------------------------------------------------------------

@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_device_or_a_pipe_is_refused_at_once(kind, fifo):
    path = Path("/dev/zero") if kind == "device" else fifo
    assert refused(files.read_bytes, path, error=files.FileRefused) == f"{path}: {DEVICE}"
    with pytest.raises(DatasetError) as err:
        within(PROMPT_S, load_dataset, path)
    assert err.value.problems == [Problem(str(path), 0, "(file)", DEVICE)]


def test_a_folders_questions_or_sources_that_is_a_pipe_is_refused(tmp_path):
    folder = tmp_path / "ds"
    folder.mkdir()
    os.mkfifo(folder / "questions.jsonl")
    with pytest.raises(DatasetError) as err:
        within(PROMPT_S, load_dataset, folder)
    assert err.value.problems == [Problem(str(folder / "questions.jsonl"), 0, "(file)", DEVICE)]
    (folder / "questions.jsonl").unlink()
    (folder / "questions.jsonl").write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    os.mkfifo(folder / "sources.json")
    with pytest.raises(DatasetError) as err:
        within(PROMPT_S, load_dataset, folder)
    assert Problem(str(folder / "sources.json"), 0, "(file)", DEVICE) in err.value.problems


def test_a_file_over_the_cap_is_refused_and_the_admin_can_raise_it(tmp_path, monkeypatch):
    path = tmp_path / "big.jsonl"
    path.write_text(rows(20), encoding="utf-8")  # ~3 KB
    monkeypatch.setenv(deployment.ENV_MAX_FILE_MB, "0.001")
    with pytest.raises(DatasetError) as err:
        within(PROMPT_S, load_dataset, path)
    [problem] = err.value.problems
    assert (problem.file, problem.line, problem.field) == (str(path), 0, "(file)")
    assert problem.message.endswith("MB, over the 0.001 MB limit (the deployment setting max_file_mb)"), problem
    deployment.configure({"max_file_mb": 1})  # the secrets table wins over the environment, as on the server
    assert len(load_dataset(path).questions) == 20


def test_the_other_readers_refuse_a_pipe(fifo, tmp_path):
    question = load_dataset(ROOT / "sample_data" / "ramdocs_dev").questions[0]
    assert refused(load_trace_file, fifo, question, error=TraceFileError) == f"{fifo}: cannot read: {DEVICE}"
    out = tmp_path / "run"
    out.mkdir()
    os.mkfifo(out / "results.jsonl")
    assert refused(open_evaluation, out, lambda name: None, error=ResultsError) == \
        f"{out / 'results.jsonl'}: cannot be read ({DEVICE})"
    attack = tmp_path / "attack"
    attack.mkdir()
    os.mkfifo(attack / "attack.json")
    (attack / "summary.json").write_text("{}")
    assert refused(open_attack, attack, error=AttackError) == f"{attack / 'attack.json'}: cannot be read ({DEVICE})"
    labels = tmp_path / "labels.csv"
    os.mkfifo(labels)
    assert refused(read_labels, labels, error=LabelFileError) == f"{labels}: {DEVICE}"


# --- deep nesting ---------------------------------------------------------------------------------------------

def test_deep_nesting_is_a_problem_not_a_recursion_error(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps(ROW) + "\n" + DEEP + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        within(PROMPT_S, load_dataset, path)
    assert err.value.problems == [Problem(str(path), 2, "(line)", "nested too deeply")]
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "questions.jsonl").write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    (folder / "sources.json").write_text(DEEP, encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        within(PROMPT_S, load_dataset, folder)
    assert Problem(str(folder / "sources.json"), 1, "(file)", "nested too deeply") in err.value.problems
    question = load_dataset(ROOT / "sample_data" / "ramdocs_dev").questions[0]
    assert refused(load_trace_file, path, question, line=2, error=TraceFileError) == f"{path}:2: nested too deeply"
    labels = tmp_path / "labels.csv"
    labels.write_text("dataset,question_id,analyst,answers\nd,q1,ana," + "[" * 5000 + "\n", encoding="utf-8")
    assert refused(read_labels, labels, error=LabelFileError) == f"{labels}:2: nested too deeply"


# --- confinement: paths from a page or a link -----------------------------------------------------------------

def test_a_path_outside_the_open_folders_is_refused_before_it_is_looked_at(place):
    open_dir, outside = place
    assert load_dataset(open_dir / "q.jsonl", confined=True).questions[0].id == "q1"
    reason = "outside the folders this server opens datasets from (the deployment setting open_folders)"
    for path in (outside / "q.jsonl", outside / "nothing-here.jsonl", f"{open_dir}/../outside/q.jsonl",
                 "/dev/zero", "/etc/passwd"):
        with pytest.raises(DatasetError) as err:
            within(PROMPT_S, load_dataset, path, confined=True)
        assert err.value.problems == [Problem(str(path), 0, "(file)", reason)]  # the same whether it exists or not
    assert load_dataset(outside / "q.jsonl").questions[0].id == "q1"  # the command line is not confined


def test_a_symlink_from_an_open_folder_to_outside_is_refused(place):
    open_dir, outside = place
    (open_dir / "link.jsonl").symlink_to(outside / "q.jsonl")
    (open_dir / "zero.jsonl").symlink_to("/dev/zero")
    for link in ("link.jsonl", "zero.jsonl"):
        text = refused(load_dataset, open_dir / link, confined=True)
        assert "outside the folders this server opens datasets from" in text, text
    folder = open_dir / "ds"  # a folder inside whose questions.jsonl points outside: each file is checked
    folder.mkdir()
    (folder / "questions.jsonl").symlink_to(outside / "q.jsonl")
    text = refused(load_dataset, folder, confined=True)
    assert "questions.jsonl:0: (file): outside the folders this server opens datasets from" in text, text
    (open_dir / "inside.jsonl").symlink_to(open_dir / "q.jsonl")  # a link that stays inside is fine
    assert load_dataset(open_dir / "inside.jsonl", confined=True).questions[0].id == "q1"


def test_home_is_expanded(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / "q.jsonl").write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv(deployment.ENV_OPEN_FOLDERS, "~")
    assert load_dataset("~/q.jsonl", confined=True).questions[0].id == "q1"
    assert files.confine("~/q.jsonl", "dataset") == (home / "q.jsonl").resolve()


def test_every_page_reader_is_confined(place):
    open_dir, outside = place
    question = load_dataset(ROOT / "sample_data" / "ramdocs_dev").questions[0]
    target = str(outside / "q.jsonl")
    assert refused(load_trace_file, target, question, confined=True, error=TraceFileError) == (
        f"{target}: cannot read: outside the folders this server opens trace files from "
        "(the deployment setting open_folders)")
    assert refused(open_evaluation, outside, lambda name: None, confined=True, error=ResultsError) == (
        f"{outside}: outside the folders this server opens results files from (the deployment setting open_folders)")
    assert refused(read_results, outside, "q", confined=True, error=ResultsError).startswith(f"{outside}: outside")
    assert refused(open_attack, outside, confined=True, error=AttackError) == (
        f"{outside}: outside the folders this server opens attack folders from (the deployment setting open_folders)")
    run = open_dir / "run"  # a results folder inside whose results.jsonl points outside
    run.mkdir()
    (outside / "results.jsonl").write_text("{}\n")
    (run / "results.jsonl").symlink_to(outside / "results.jsonl")
    assert "outside the folders" in refused(open_evaluation, run, lambda name: None, confined=True,
                                            error=ResultsError)


# --- the command line: exit 2, one line, no traceback, promptly ----------------------------------------------

def cli(args: list[str], **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "backend", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, **env})  # a blocked read fails the test, never hangs it


@pytest.fixture
def cases(tmp_path, fifo):
    deep = tmp_path / "deep.jsonl"
    deep.write_text(DEEP + "\n")
    big = tmp_path / "big.jsonl"
    big.write_text(rows(20))
    folder = tmp_path / "ds"
    folder.mkdir()
    os.mkfifo(folder / "questions.jsonl")
    labels_fifo = tmp_path / "labels.csv"
    os.mkfifo(labels_fifo)
    deep_csv = tmp_path / "deep.csv"
    deep_csv.write_text("dataset,question_id,analyst,answers\nd,q1,ana," + DEEP + "\n")
    run = tmp_path / "run"
    run.mkdir()
    os.mkfifo(run / "results.jsonl")
    return {"fifo": fifo, "deep": deep, "big": big, "folder": folder, "labels_fifo": labels_fifo,
            "deep_csv": deep_csv, "run": run, "out": tmp_path / "out", "good": ROOT / "sample_data" / "ramdocs_dev",
            "store": tmp_path / "labels.db"}


COMMANDS = {
    "validate /dev/zero": (["validate", "/dev/zero"], "/dev/zero:0: (file): " + DEVICE),
    "validate a fifo": (["validate", "{fifo}"], "{fifo}:0: (file): " + DEVICE),
    "validate a folder with a fifo": (["validate", "{folder}"], "{folder}/questions.jsonl:0: (file): " + DEVICE),
    "validate oversized": (["validate", "{big}"], "{big}:0: (file): "),
    "validate deep": (["validate", "{deep}"], "{deep}:1: (line): nested too deeply"),
    "inspect": (["inspect", "--dataset", "{fifo}", "--question", "@1"], "{fifo}:0: (file): " + DEVICE),
    "evaluate --dataset": (["evaluate", "--dataset", "/dev/zero", "--out", "{out}"], "/dev/zero:0: (file): " + DEVICE),
    "evaluate --resume": (["evaluate", "--dataset", "{good}", "--methods", "no_rag", "--limit", "1", "--out", "{run}",
                           "--resume"], "error: {run}/results.jsonl: " + DEVICE),
    "evaluate --gold": (["evaluate", "--dataset", "{good}", "--out", "{out}", "--gold", "{labels_fifo}"],
                        "error: --gold: {labels_fifo}: " + DEVICE),
    "attack": (["attack", "--dataset", "{deep}", "--out", "{out}"], "{deep}:1: (line): nested too deeply"),
    "risk": (["risk", "--dataset", "{fifo}"], "{fifo}:0: (file): " + DEVICE),
    "reliability": (["reliability", "--dataset", "{folder}"], "{folder}/questions.jsonl:0: (file): " + DEVICE),
    "labels import a fifo": (["labels", "import", "{labels_fifo}", "--labels", "{store}"], "{labels_fifo}: " + DEVICE),
    "labels import deep": (["labels", "import", "{deep_csv}", "--labels", "{store}"],
                           "{deep_csv}:2: not CSV (field larger than field limit (131072))"),
    "labels export --dataset": (["labels", "export", "--labels", "{store}", "--dataset", "{fifo}"],
                                "{fifo}:0: (file): " + DEVICE),
    "serve-model --knowledge": (["serve-model", "--port", "0", "--no-warmup", "--knowledge", "/dev/zero"],
                                "/dev/zero:0: (file): " + DEVICE),
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_that_reads_a_file_refuses_in_one_line(name, cases):
    args, expected = COMMANDS[name]
    args = [a.format(**cases) for a in args]
    proc = cli(args, CONFLICTLENS_MAX_FILE_MB="0.001" if "oversized" in name else "200")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and len(lines) == 1, proc.stderr[-2000:]
    assert lines[0].startswith(expected.format(**cases)), lines
    if "oversized" in name:
        assert lines[0].endswith("over the 0.001 MB limit (the deployment setting max_file_mb)"), lines
