"""The sidebar's upload (issue 27): an uploaded .jsonl is kept as uploads/<content hash>.jsonl in the cache folder,
loaded as a typed path is, and named by the link (``?dataset=upload:<hash>``); a hash this server does not hold,
or anything but a hash, gives the link notice; a file over the size cap or with problems is refused in the main
pane, naming "the uploaded file", never the server's path or the file's content."""

import hashlib

import pytest
from streamlit.testing.v1 import AppTest

from backend import uploads
from tests.conftest import FIXTURES, ROOT

APP = str(ROOT / "app.py")
GOOD = (FIXTURES / "good" / "no_ids.jsonl").read_bytes()
MARKER = "Zebulon-secret-words"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _app(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(query or {"dataset": "file:"})  # the own-file picker, nothing loaded yet
    at.run()
    assert not at.exception, at.exception
    return at


def _plain(values) -> list[str]:
    return [v.value.replace("\\", "") for v in values]


def _upload(at: AppTest, data: bytes, name: str = "mine.jsonl") -> AppTest:
    at.file_uploader(key="app.upload_file").set_value((name, data, "application/jsonl"))
    at.run()
    assert not at.exception, at.exception
    return at


def test_an_upload_is_kept_under_its_hash_loaded_and_named_by_the_link(cache):
    at = _app()
    assert at.selectbox(key="app.dataset").value == "Your own file…"
    _upload(at, GOOD)
    digest = hashlib.sha256(GOOD).hexdigest()
    assert (cache / "uploads" / f"{digest}.jsonl").read_bytes() == GOOD
    assert sorted(p.name for p in (cache / "uploads").iterdir()) == [f"{digest}.jsonl"]  # no user-chosen name
    assert at.query_params["dataset"] == f"upload:{digest}"
    assert len(at.selectbox(key="app.question").options) == 2  # the two questions of the file
    assert not at.main.error

    again = _app({"dataset": f"upload:{digest}"})  # the link opens it in a new session
    assert len(again.selectbox(key="app.question").options) == 2
    assert not again.warning and not again.main.error


@pytest.mark.parametrize("asked", ["upload:" + "0" * 64, "upload:../../../etc/passwd", "upload:"])
def test_a_link_to_an_upload_this_server_does_not_hold_gives_the_link_notice(cache, asked):
    at = _app({"dataset": asked})
    assert at.selectbox(key="app.dataset").value == "ramdocs_dev"
    notes = _plain(at.warning)
    assert any(n.startswith("The link names the dataset ") and "which does not exist here" in n for n in notes), notes


def test_an_upload_over_the_size_cap_is_refused_in_the_main_pane(cache, monkeypatch):
    monkeypatch.setenv("CONFLICTLENS_MAX_FILE_MB", "0.0001")  # ~100 bytes
    at = _upload(_app(), GOOD + b"\n" * 10 + f'{{"question": "{MARKER}", "documents": []}}\n'.encode())
    errors = _plain(at.main.error)
    assert errors and errors[0].startswith("This dataset cannot be loaded: uploaded file: the uploaded file is "
                                           "larger than this server reads"), errors
    assert not (cache / "uploads").exists() or not any((cache / "uploads").iterdir())
    assert _plain(at.main.info) == ["Fix the file and press R to load it again, or pick another dataset in the "
                                    "sidebar."]


def test_an_upload_with_problems_names_the_upload_not_the_server_path(cache):
    bad = b'{"question": "' + MARKER.encode() + b'"}\nnot json ' + MARKER.encode() + b"\n"
    at = _upload(_app(), bad)
    errors = _plain(at.main.error)
    assert errors and errors[0].startswith("This dataset cannot be loaded: uploaded file:"), errors
    shown = "\n".join(errors + [c.value for c in at.code])
    assert str(cache) not in shown and MARKER not in shown, shown
    assert len(at.main.code) == 1  # every problem, listed in the main pane


def test_save_is_idempotent_and_path_of_checks_the_hash(cache):
    digest = uploads.save(GOOD)
    assert uploads.save(GOOD) == digest
    assert uploads.path_of(digest) == cache / "uploads" / f"{digest}.jsonl"
    assert uploads.path_of(digest.upper()) == cache / "uploads" / f"{digest}.jsonl"
    for asked in ("../" + digest, digest[:-1], "x" * 64, ""):
        assert uploads.path_of(asked) is None
    with pytest.raises(uploads.UploadError):
        uploads.save(b"  \n")
