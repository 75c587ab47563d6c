"""Finding 4: the Label page's "Label store" field created files anywhere and connected anywhere: a path such as
``<folder>/new/dirs/created.db`` created the folder chain and a database, an existing empty file became a SQLite
database, and a ``postgresql://`` URL made the server connect to any host and port.

Now the page may open only the default store, one listed in the deployment setting ``label_stores``, or a SQLite file
inside the open folders whose folder exists, new (``.db``/``.sqlite``/``.sqlite3``) or an existing ConflictLens store;
every other path or URL is refused in one line, with nothing created, changed or connected to. Checked on the rules
(``backend.labels.location``), on the store itself (the command line's ``--labels``), and on the page (AppTest)."""

from __future__ import annotations

import socket
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import sqlalchemy
from streamlit.testing.v1 import AppTest

from backend import deployment
from backend.labels import LabelStore, LabelStoreError, location
from backend.labels.location import LocationRefused
from tests.conftest import ROOT

APP = str(ROOT / "app.py")
NOT_A_STORE = "an existing file that is not a ConflictLens label store (it is left as it is)"
URL_REFUSED = ("Label store: a database URL typed on this page is refused; only this server's default store and "
               "those in the deployment setting label_stores are opened")


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """The one folder the server opens files from (``open_folders``), the default store inside it."""
    open_ = tmp_path / "open"
    open_.mkdir()
    monkeypatch.setenv(deployment.ENV_OPEN_FOLDERS, str(open_))
    monkeypatch.setenv(deployment.ENV_LABELS, str(open_ / "default.db"))
    deployment.reset()
    yield open_
    deployment.reset()


def _choices(table: dict | None = None, labels_url: str | None = None) -> location.StoreChoices:
    table = table or {}
    return location.choices(deployment.from_sources(table), table, labels_url)


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for a folder): what "nothing changed" compares."""
    return {str(p.relative_to(root)): None if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))}


class Accepts:
    """A loopback TCP listener that counts the connections made to it (a database server stand-in)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.count = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.count += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()


@pytest.fixture
def listener():
    srv = Accepts()
    yield srv
    srv.close()


@pytest.fixture
def no_engine(monkeypatch):
    """Every engine created meanwhile, by URL: a refused URL must never get one (no connection is even tried)."""
    made: list[str] = []
    real = sqlalchemy.create_engine

    def record(url, *args, **kwargs):
        made.append(str(url))
        return real(url, *args, **kwargs)

    monkeypatch.setattr(sqlalchemy, "create_engine", record)
    return made


# --- the rules (pure) -------------------------------------------------------------------------------------------

def test_a_path_creating_folders_is_refused_and_nothing_is_created(folder):
    before = _tree(folder.parent)
    target = folder / "new" / "dirs" / "created.db"
    with pytest.raises(LocationRefused) as err:
        location.page_location(str(target), _choices())
    assert str(err.value) == f"Label store: {folder / 'new' / 'dirs'}: no such folder (a page never creates folders)"
    assert _tree(folder.parent) == before and not (folder / "new").exists()


@pytest.mark.parametrize("content", [b"", b"my notes, not a database\n" * 10], ids=["empty", "text"])
def test_an_existing_file_that_is_not_a_store_is_refused_and_unchanged(folder, content):
    target = folder / "existing.db"
    target.write_bytes(content)
    before = _tree(folder)
    with pytest.raises(LocationRefused) as err:
        location.page_location(str(target), _choices())
    assert str(err.value) == (f"Label store: {target}: {NOT_A_STORE}; name a new file (.db, .sqlite, .sqlite3) or an "
                              "existing store")
    with pytest.raises(LabelStoreError, match="not a ConflictLens label store"):  # the store itself refuses it too
        LabelStore(target)
    assert _tree(folder) == before  # byte for byte, and no -wal / -shm beside it


def test_another_sqlite_database_is_refused_and_unchanged(folder):
    target = folder / "app.sqlite"
    with sqlite3.connect(target) as conn:
        conn.execute("CREATE TABLE users (name TEXT)")
        conn.execute("INSERT INTO users VALUES ('ann')")
    conn.close()
    before = _tree(folder)
    with pytest.raises(LocationRefused, match="not a ConflictLens label store"):
        location.page_location(str(target), _choices())
    with pytest.raises(LabelStoreError, match="not a ConflictLens label store"):
        LabelStore(target)
    assert _tree(folder) == before


def test_paths_outside_the_open_folders_are_refused(folder, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    for path in (outside / "x.db", folder / ".." / "outside" / "y.db"):
        with pytest.raises(LocationRefused, match="outside the folders this server opens label stores from "
                                                  r"\(the deployment setting open_folders\)"):
            location.page_location(str(path), _choices())
    (folder / "link").symlink_to(outside)  # inside by name, outside after symlinks
    with pytest.raises(LocationRefused, match="outside the folders"):
        location.page_location(str(folder / "link" / "z.db"), _choices())
    assert list(outside.iterdir()) == []


def test_a_new_store_needs_a_store_name_then_opens_again(folder):
    with pytest.raises(LocationRefused, match=r"a new label store's file name ends in \.db, \.sqlite, \.sqlite3"):
        location.page_location(str(folder / "labels.txt"), _choices())
    assert not (folder / "labels.txt").exists()
    where = location.page_location(str(folder / "team.db"), _choices())
    assert where == str((folder / "team.db").resolve())
    LabelStore(where).close()
    assert location.page_location(str(folder / "team.db"), _choices()) == where  # an existing store: allowed


def test_a_typed_database_url_is_refused_without_a_connection(folder, listener, no_engine):
    for url in (f"postgresql://127.0.0.1:{listener.port}/x", f"postgresql://bob:s3cret@127.0.0.1:{listener.port}/x",
                "mysql://u@127.0.0.1/x", f"sqlite:///{folder}/x.db"):
        with pytest.raises(LocationRefused) as err:
            location.page_location(url, _choices())
        assert str(err.value) == URL_REFUSED and "s3cret" not in str(err.value)
    assert listener.count == 0 and no_engine == []
    listed = f"postgresql://team@127.0.0.1:{listener.port}/labels"  # the admin's: allowed (opened when picked)
    assert location.page_location(listed, _choices({"label_stores": [listed]})) == listed
    assert listener.count == 0 and no_engine == []


def test_a_store_set_by_the_server_cannot_be_changed_by_typing(folder):
    team, extra = folder / "team.db", folder / "extra.db"
    table = {"label_store": str(team), "label_stores": [str(extra)]}
    choices = _choices(table)
    assert (choices.default, choices.fixed, choices.options) == (str(team), True, [str(team), str(extra)])
    with pytest.raises(LocationRefused, match="this server sets where labels live"):
        location.page_location(str(folder / "mine.db"), choices)
    assert location.page_location(str(extra), choices) == str(extra)
    assert location.page_location("", choices) == str(team)
    legacy = _choices(labels_url=str(team))  # labels_url, the older name: the same
    assert (legacy.default, legacy.fixed) == (str(team), True)


def test_on_a_team_server_a_page_makes_no_store_in_an_open_folder(folder):
    """A [deployment] table opens folders for reading: a typed path, new store or existing one, is refused there."""
    (folder / "teamA").mkdir()
    existing = LabelStore(folder / "teamA" / "old.db")
    existing.close()
    deployment.configure({"open_folders": [str(folder)]})
    before = _tree(folder)
    choices = _choices({"open_folders": [str(folder)]})
    for typed in (folder / "teamA" / "junk.db", folder / "teamA" / "old.db"):
        with pytest.raises(LocationRefused, match="on this server a page opens only the default store"):
            location.page_location(str(typed), choices)
    assert _tree(folder) == before
    assert location.page_location("", choices) == choices.default


def test_the_default_still_works(folder):
    choices = _choices()
    assert (choices.default, choices.fixed) == (str(folder / "default.db"), False)
    assert location.page_location("", choices) == location.page_location("  ", choices) == choices.default
    store = LabelStore(location.page_location("", choices))
    assert store.count() == 0
    store.close()


def test_the_command_line_refuses_a_file_that_is_not_a_store(tmp_path):
    """``--labels`` takes any path its user names, but never turns an existing file into a database."""
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    notes = tmp_path / "notes.txt"
    notes.write_text("keep me\n")
    for path in (empty, notes):
        before = path.read_bytes()
        done = subprocess.run([sys.executable, "-m", "backend", "labels", "info", "--labels", str(path)], cwd=ROOT,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 2 and NOT_A_STORE in done.stderr and "Traceback" not in done.stderr
        assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.db", "notes.txt"]
    new = tmp_path / "made" / "by" / "cli.db"  # the user's own shell: folders are made for a new store
    LabelStore(new).close()
    assert new.is_file()


# --- the page ------------------------------------------------------------------------------------------------------

def _page(secrets: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for name, value in (secrets or {}).items():
        at.secrets[name] = value
    at.query_params["methods"] = "no_rag"
    at.run()
    at.switch_page("pages/labels.py").run()
    assert not at.exception, at.exception
    return at


def _type(at: AppTest, text: str) -> list[str]:
    at.text_input(key="labels.store").input(text).run()
    assert not at.exception, at.exception
    return [e.value.replace("\\", "") for e in at.error]


def _store_label(at: AppTest) -> str:
    return next(e.label for e in at.expander if e.label.startswith("Label store")).replace("\\", "")


def test_the_page_refuses_what_the_field_must_not_do(folder, listener, no_engine):
    at = _page()
    assert _store_label(at) == f"Label store: {folder / 'default.db'}"  # the default opens
    before = _tree(folder.parent)

    deep = folder / "new" / "dirs" / "created.db"
    assert _type(at, str(deep)) == [f"Label store: {deep.parent}: no such folder (a page never creates folders)"]
    assert _store_label(at) == "Label store: cannot be opened" and not (folder / "new").exists()
    assert _tree(folder.parent) == before

    empty = folder / "empty.db"
    empty.write_bytes(b"")
    before = _tree(folder.parent)
    assert _type(at, str(empty)) == [f"Label store: {empty}: {NOT_A_STORE}; name a new file (.db, .sqlite, "
                                     ".sqlite3) or an existing store"]
    assert _tree(folder.parent) == before

    made = len(no_engine)
    for url in (f"postgresql://127.0.0.1:{listener.port}/x", f"postgresql://u:pw-77@127.0.0.1:{listener.port}/x"):
        errors = _type(at, url)
        assert errors == [URL_REFUSED] and "pw-77" not in "".join(errors)
    assert listener.count == 0 and not [u for u in no_engine[made:] if "postgresql" in u]
    assert _tree(folder.parent) == before

    new = folder / "team.db"
    assert _type(at, str(new)) == [] and _store_label(at) == f"Label store: {new}" and new.is_file()
    assert _type(at, "") == [] and _store_label(at) == f"Label store: {folder / 'default.db'}"


def test_a_server_set_store_offers_only_its_list(folder):
    team, extra = folder / "team.db", folder / "extra.db"
    at = _page({"deployment": {"label_store": str(team), "label_stores": [str(extra)]}})
    assert not [t for t in at.text_input if t.key == "labels.store"]  # nothing to type
    picker = at.selectbox(key="labels.store.pick")
    assert picker.options == [f"{team} (this server's default)", str(extra)] and picker.value == str(team)
    assert _store_label(at) == f"Label store: {team}" and team.is_file()
    picker.set_value(str(extra)).run()
    assert not at.exception and _store_label(at) == f"Label store: {extra}" and extra.is_file()
    at = _page({"deployment": {"label_store": str(team)}})  # nothing else listed: said, no choice at all
    assert not [t for t in at.text_input if t.key == "labels.store"]
    assert not [s for s in at.selectbox if s.key == "labels.store.pick"]
    assert any(f"Labels live in {team}, set by whoever runs this server" in c.value.replace("\\", "")
               for c in at.caption)
