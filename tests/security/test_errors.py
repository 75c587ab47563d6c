"""Finding 2 (the message half) and finding 6 (secrets in URLs): an error names the field and the problem, never a
value from the input, and an address is shown with its secrets masked.

The input is a credentials file (an OAuth client's ``client_secret``) opened as everything a user can name: a Debate
trace, a dataset, a results file, an attack folder, a label import. Before, the trace showed
``client_secret … input_value='d-FL95Q19q7…'``. Then every pydantic model of the library fed secret values (the
contract: a new model is covered the moment it exists), and the URL forms a password or token can take."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest
from pydantic import BaseModel, ValidationError

from backend.errors import describe, mask_secrets, mask_url, problem, text_of
from tests.conftest import ROOT

LONG = "d-FL95Q19q7MqmTD6ldTNpm5xKzXvXl5Yc2Jq8sVtQWz"  # pydantic showed long values as their first and last 25
SHORT = "GOCSPX-s3cr3tV4lue"
CLIENT_ID = "1234-abc.apps.googleusercontent.com"
CREDENTIALS = {"client_secret": LONG, "installed": {"client_id": CLIENT_ID, "client_secret": SHORT,
                                                     "token_uri": "https://oauth2.googleapis.com/token"}}
#: what must never be shown: each value, and the pieces pydantic used to show of a long one
VALUES = [LONG, SHORT, CLIENT_ID, LONG[:25], LONG[-25:], "s3cr3t", "googleusercontent"]


def assert_quotes_nothing(message: str) -> None:
    leaked = [v for v in VALUES if v in message]
    assert not leaked, f"the message quotes {leaked}: {message}"
    assert "input_value" not in message and "Traceback" not in message


def _write(path, obj) -> str:
    path.write_text(json.dumps(obj) + "\n", encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def question():
    from backend.data import load_dataset

    return load_dataset(ROOT / "sample_data" / "ramdocs_dev").questions[0]


# --- a Debate trace ------------------------------------------------------------------------------------------

def test_a_credentials_file_as_a_trace_names_what_is_missing(tmp_path, question):
    from backend.methods.madam_released import TraceFileError, load_trace_file

    with pytest.raises(TraceFileError) as err:
        load_trace_file(_write(tmp_path / "trace.json", CREDENTIALS), question)
    message = str(err.value)
    assert_quotes_nothing(message)
    assert message == (f"{tmp_path / 'trace.json'}: not a MADAM-RAG debate trace (missing field: round1 of a "
                       "released debate, or method and trace of a ConflictLens result)")


@pytest.mark.parametrize("row, fields", [
    ({"method": LONG, "question_id": SHORT, "trace": {"kind": LONG}, "answers": SHORT, CLIENT_ID: 1},
     ["answers: Input should be a valid list (got a string)", "trace: unknown trace kind"]),
    ({"round1": {"answers": [LONG], "explanations": SHORT}}, ["round1.explanations is a string"]),
    ({"round1": LONG, "round3": SHORT}, ["round keys found: round1, round3"]),
    ({"results": {"madam": {"trace": SHORT, "method": LONG}}}, ["question_id: missing (required)"]),
])
def test_a_trace_line_with_secret_values_names_fields_only(tmp_path, question, row, fields):
    from backend.methods.madam_released import TraceFileError, load_trace_file

    path = tmp_path / "trace.jsonl"
    path.write_text(json.dumps({"round1": {}}) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(TraceFileError) as err:
        load_trace_file(path, question, line=2)  # the line field picks any line: still nothing quoted
    assert_quotes_nothing(str(err.value))
    assert all(f in str(err.value) for f in fields), str(err.value)


def test_the_debate_page_shows_no_value_of_a_credentials_file(tmp_path, monkeypatch):
    """The page a user reproduced it on: Debate → Open a trace file."""
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.testing.v1 import AppTest

    original = PagesManager.__init__

    def navigation_mode(self, *args, **kwargs):  # as tests/app/conftest.py: keep AppTest in st.navigation mode
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", navigation_mode)
    path = _write(tmp_path / "credentials.json", CREDENTIALS)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params["methods"] = "no_rag"
    at.run()
    at.switch_page("pages/debate.py").run()
    at.radio(key="debate.source").set_value("Open a trace file").run()
    at.text_input(key="debate.path").input(path).run()
    assert not at.exception, at.exception
    shown = "\n".join([c.value for c in at.code] + [e.value for e in at.error] + [m.value for m in at.markdown])
    assert "not a MADAM-RAG debate trace (missing field: round1" in shown, shown
    assert_quotes_nothing(shown)


# --- a dataset -----------------------------------------------------------------------------------------------

def _problems(path) -> str:
    from backend.data import DatasetError, load_dataset

    with pytest.raises(DatasetError) as err:
        load_dataset(path)
    return "\n".join(str(p) for p in err.value.problems)


def test_a_credentials_file_as_a_dataset_names_fields_only(tmp_path):
    shown = _problems(_write(tmp_path / "creds.jsonl", CREDENTIALS))
    assert_quotes_nothing(shown)
    for field in ("question: missing", "documents: missing", "unknown fields (expected only id, question"):
        assert field in shown, shown
    assert "client_secret" not in shown and "installed" not in shown  # a key of the file is content too (issue 36)


def test_secret_values_in_a_datasets_fields_are_named_not_quoted(tmp_path):
    path = tmp_path / "data.jsonl"
    rows = [{"id": LONG, "question": [LONG], "documents": [{"text": 5, "label": {"type": SHORT}}],
             "gold_answers": SHORT, "meta": LONG},
            {"id": LONG, "question": "ok?", "documents": [{"text": "x", "source": SHORT}]},
            {"id": LONG, "question": "again?", "documents": [{"text": "y"}]},
            {"question": "ok?", "documents": [{"text": "x"}], LONG: 1}]
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in rows) + b'{"question": "caf\xe9"}\n')
    (tmp_path / "sources.json").write_text(json.dumps([{"name": "wiki", "true_reliability": SHORT}]))
    questions = tmp_path / "questions.jsonl"
    path.rename(questions)
    shown = _problems(tmp_path)
    assert_quotes_nothing(shown)
    for words in ("question: Input should be a valid string (got a list)", "label.type: Input should be",
                  "(got a string)", "duplicate question id (first at line 2)", "not valid UTF-8 (at byte",
                  "unknown source: not a name in sources.json", "[0].true_reliability", "(line): unknown field"):
        assert words in shown, (words, shown)
    assert "\\xe9" not in shown and "0xe9" not in shown  # not even the byte that is not UTF-8


def test_validate_on_the_command_line_quotes_nothing(tmp_path):
    path = _write(tmp_path / "creds.jsonl", CREDENTIALS)
    proc = subprocess.run([sys.executable, "-m", "backend", "validate", path], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    assert_quotes_nothing(proc.stdout + proc.stderr)
    assert "unknown fields (expected only" in proc.stderr and "client_secret" not in proc.stderr


# --- results, summaries, attack folders --------------------------------------------------------------------

def test_a_credentials_file_as_results_quotes_nothing(tmp_path):
    from backend.outputs import ResultsError, open_evaluation, read_summary

    creds = _write(tmp_path / "results.jsonl", CREDENTIALS)
    with pytest.raises(ResultsError) as err:
        open_evaluation(creds, lambda name: None)
    assert_quotes_nothing(str(err.value))
    assert "missing question_id, method or result" in str(err.value)

    bad_rows = tmp_path / "rows" / "results.jsonl"
    bad_rows.parent.mkdir()
    _write(bad_rows, {"dataset": "d", "model": "m", "question_id": "q", "method": "m",
                      "result": {"method": LONG, "question_id": SHORT, "answers": LONG, "trace": {"kind": SHORT}}})
    with pytest.raises(ResultsError) as err:
        open_evaluation(bad_rows, lambda name: None)
    assert_quotes_nothing(str(err.value))
    assert "result.answers: Input should be a valid list" in str(err.value)

    with pytest.raises(ResultsError) as err:
        read_summary(_write(tmp_path / "summary.json", CREDENTIALS))
    assert_quotes_nothing(str(err.value))
    assert "not a summary of `evaluate`" in str(err.value)


def test_a_credentials_file_as_attack_settings_quotes_nothing(tmp_path):
    from backend.outputs import AttackError, open_attack

    folder = tmp_path / "attack"
    folder.mkdir()
    _write(folder / "attack.json", CREDENTIALS)
    _write(folder / "summary.json", CREDENTIALS)
    with pytest.raises(AttackError) as err:
        open_attack(folder)
    assert_quotes_nothing(str(err.value))
    assert "of an attack (" in str(err.value)  # the settings or the summary, by field


# --- label imports -------------------------------------------------------------------------------------------

def test_a_credentials_file_as_a_label_import_quotes_nothing(tmp_path):
    from backend.labels.files import LabelFileError, read_labels

    with pytest.raises(LabelFileError) as err:
        read_labels(_write(tmp_path / "labels.jsonl", CREDENTIALS))
    assert_quotes_nothing(str(err.value))
    assert "dataset: missing (required)" in str(err.value)

    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["dataset", "question_id", "analyst", "unanswerable", "answers", "version"])
    writer.writerow(["d", "q1", "ann", LONG, "[]", "1"])
    writer.writerow(["d", "q1", "ann", "false", SHORT, "1"])
    writer.writerow(["d", "q1", "ann", "false", "[]", LONG])
    (tmp_path / "labels.csv").write_text(buf.getvalue())
    with pytest.raises(LabelFileError) as err:
        read_labels(tmp_path / "labels.csv")
    assert_quotes_nothing(str(err.value))
    for words in ("labels.csv:2: unanswerable: expected true or false", "labels.csv:3: answers: expected a JSON array",
                  "labels.csv:4: "):
        assert words in str(err.value), (words, str(err.value))


def test_a_label_import_on_the_command_line_quotes_nothing(tmp_path):
    path = _write(tmp_path / "labels.jsonl", CREDENTIALS)
    proc = subprocess.run([sys.executable, "-m", "backend", "labels", "import", path, "--labels",
                           str(tmp_path / "store.db")], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    assert_quotes_nothing(proc.stdout + proc.stderr)


# --- the contract: every model of the library ------------------------------------------------------------------

def _models() -> list[type[BaseModel]]:
    import backend.labels.model  # noqa: F401 - the label models
    import backend.outputs  # noqa: F401 - results and attack models
    import backend.schema  # noqa: F401 - data, results, traces, summaries

    found, todo = set(), [BaseModel]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    return sorted((m for m in found if m.__module__.startswith("backend.") and not m.__pydantic_generic_metadata__
                   ["parameters"]), key=lambda m: f"{m.__module__}.{m.__qualname__}")


@pytest.mark.parametrize("model", _models(), ids=lambda m: f"{m.__module__}.{m.__qualname__}")
def test_no_model_error_quotes_its_input(model):
    """Every field given a secret (as a string, a list, an object), and a secret as a key: the described errors
    name fields and problems, never a value."""
    payloads = [{name: value for name in model.model_fields} | {LONG: SHORT}
                for value in (LONG, [LONG, SHORT], {"kind": SHORT, LONG: SHORT}, 12345678987654321)]
    for payload in payloads:
        for validate in (model.model_validate, lambda p: model.model_validate_json(json.dumps(p))):
            try:
                validate(payload)
            except ValidationError as err:
                lines = describe(err)
                assert lines
                for line in lines:
                    assert_quotes_nothing(line)
                assert_quotes_nothing(text_of(err))
            except (TypeError, ValueError):  # a model that cannot take a dict at all: nothing pydantic would print
                pass


def test_messages_that_embed_input_are_rewritten():
    from typing import Annotated, Literal, Union

    from pydantic import Field, field_validator

    class A(BaseModel):
        kind: Literal["a"]

    class B(BaseModel):
        kind: Literal["b"]

    class M(BaseModel):
        u: Annotated[Union[A, B], Field(discriminator="kind")]
        v: str = ""

        @field_validator("v")
        @classmethod
        def _v(cls, value):
            raise ValueError(f"bad value {value!r} here")

    with pytest.raises(ValidationError) as err:
        M.model_validate({"u": {"kind": LONG}, "v": SHORT})
    lines = describe(err.value)
    for line in lines:
        assert_quotes_nothing(line)
    assert any(line.startswith("u: not one of the expected") and "'a', 'b'" in line for line in lines), lines
    assert "v: bad value … here" in lines
    with pytest.raises(ValidationError) as err:
        M.model_validate_json('{"u": "' + LONG)
    assert problem(err.value.errors()[0]).startswith("not valid JSON (")
    assert_quotes_nothing(describe(err.value)[0])


# --- secrets in addresses ------------------------------------------------------------------------------------

@pytest.mark.parametrize("url, shown", [
    ("postgresql://bob:hunter2pw@db.example:5432/labels", "postgresql://bob:***@db.example:5432/labels"),
    ("postgresql://bob@db.example/labels?password=hunter2pw&sslmode=require",
     "postgresql://bob@db.example/labels?password=***&sslmode=require"),
    ("postgresql://db/labels?sslmode=verify-full&sslpassword=hunter2pw&PWD=hunter2pw",
     "postgresql://db/labels?sslmode=verify-full&sslpassword=***&PWD=***"),
    ("http://127.0.0.1:8000/?token=hunter2pw&x=1", "http://127.0.0.1:8000/?token=***&x=1"),
    ("https://proxy.example/v1?api_key=hunter2pw#access_token=hunter2pw",
     "https://proxy.example/v1?api_key=***#access_token=***"),
    ("https://ghp_hunter2pwhunter2pwhunter2@github.com/x", "https://***@github.com/x"),
    ("http://h/?key=hunter2pw&secret=hunter2pw&pass=hunter2pw", "http://h/?key=***&secret=***&pass=***"),
    ("host=db user=bob password=hunter2pw dbname=labels", "host=db user=bob password=*** dbname=labels"),
    ("postgresql://bob:hunter2@pw@db/labels", "postgresql://bob:***@db/labels"),  # an unescaped @ in it
    ("http://127.0.0.1:8000/v1?passes=3", "http://127.0.0.1:8000/v1?passes=3"),   # not a secret: kept
])
def test_mask_url_masks_every_form_of_secret(url, shown):
    assert mask_url(url) == shown
    assert "hunter2" not in mask_secrets(f"error: cannot reach {url} (refused)")


def test_the_label_store_never_shows_a_password_in_any_form(tmp_path):
    from backend.labels.store import LabelStore, LabelStoreError, store_url
    from components.labels import shown_location

    url = "postgresql://bob:hunter2pw@127.0.0.1:1/labels?password=hunter2pw&sslpassword=hunter2pw&sslmode=disable"
    with pytest.raises(LabelStoreError) as err:  # nothing listens on port 1: refused at once
        LabelStore(url)
    assert "hunter2" not in str(err.value) and "cannot open the label store" in str(err.value)
    assert "127.0.0.1:1/labels?password=***" in str(err.value)
    shown = shown_location(url)
    assert "hunter2" not in shown and shown.startswith("postgresql+psycopg://bob:***@127.0.0.1:1/labels?")
    assert {"password=***", "sslpassword=***", "sslmode=disable"} == set(shown.split("?")[1].split("&"))
    for bad in ("postgresql://bob:hunter2pw@db:notaport/x?password=hunter2pw", "post gres://x/?password=hunter2pw"):
        with pytest.raises(LabelStoreError) as err:
            store_url(bad)
        assert "hunter2" not in str(err.value) and "neither a file path nor a database URL" in str(err.value)


def test_the_model_endpoint_and_the_chroma_url_are_named_without_secrets():
    from backend.llm.client import endpoint, redact
    from backend.retrieval import RetrievalError, _open_http

    assert endpoint("http://u:hunter2pw@127.0.0.1:8000/v1?api_key=hunter2pw#t=hunter2pw") == "http://127.0.0.1:8000/v1"
    assert endpoint("http://u:hunter2pw@127.0.0.1:99999/v1?api_key=hunter2pw#t=x") == "127.0.0.1:99999/v1"
    assert "hunter2" not in redact("APIError at http://u:hunter2pw@h/v1?api_key=hunter2pw")
    for url in ("http://u:hunter2pw@127.0.0.1:1/?token=hunter2pw", "http://u:hunter2pw@127.0.0.1:x/?token=hunter2pw"):
        with pytest.raises(RetrievalError) as err:
            _open_http(url)
        assert "hunter2" not in str(err.value)
