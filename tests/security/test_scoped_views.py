"""Issue 36, low findings: the Label page's exports held every analyst's labels outside a multi-analyst round, and
every analyst listed and opened everyone's attack folders.

Now an export holds what the analyst may see (their own labels, and every label of the cases they labelled too; the
round's lead everything), and on a server with sign-in each analyst's attacks live in a folder of their own (a hash
of the signed-in identity) that only they list and open. What ``/media/`` serves is said in the README: Streamlit
serves a download's bytes at ``/media/<hash of its content>`` to whoever has the URL, for as long as the file is
held (until the second script run after it ends); ConflictLens only makes the bytes for a signed-in session, and
the URL is a hash over label uids (random)."""

import csv
import io
import json

import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

from backend.labels import LabelDraft, LabelStore
from backend.outputs import AttackError, find_attacks
from components.session import attacks, signin
from tests.app.test_labels_page import _open, _run, db  # noqa: F401 (fixture)
from tests.app.test_team_labels import _as
from tests.labels.test_store import KEY

BOB, CLEO = "bob-only-answer", "cleo-only-answer"


@pytest.fixture
def downloads(monkeypatch):
    """The data callables of the page's download buttons, by their placeholder id (Streamlit runs one when the
    button is pressed; AppTest has no media server)."""
    found = {}
    original = MediaFileManager.add_deferred

    def keep(self, data_callable, *args, **kwargs):
        file_id = original(self, data_callable, *args, **kwargs)
        found[file_id] = data_callable
        return file_id

    monkeypatch.setattr(MediaFileManager, "add_deferred", keep)
    return found


def _export(at, downloads) -> list[dict]:
    [button] = [b for b in at.get("download_button") if b.proto.label == "Labels (CSV)"]
    data = downloads[button.proto.deferred_file_id]()
    return list(csv.DictReader(io.StringIO(data.decode("utf-8") if isinstance(data, bytes) else data)))


def _label(store, analyst, qid, answer):
    return store.save(LabelDraft(dataset=KEY, question_id=qid, answers=[answer], analyst=analyst))


def test_an_export_outside_a_round_holds_only_what_the_analyst_may_see(tmp_path, monkeypatch, db, downloads):
    store = LabelStore(db)  # no round: overlap 1, no lead; labels stay blind all the same
    _label(store, "Bob", "ramdocs-0004", BOB)
    _label(store, "Cleo", "ramdocs-0002", CLEO)
    _label(store, "Ann", "ramdocs-0002", "Hockey")
    at = _as(_open(tmp_path, monkeypatch), "Ann")
    rows = _export(at, downloads)
    assert sorted((r["analyst"], r["question_id"]) for r in rows) == [("Ann", "ramdocs-0002"),
                                                                      ("Cleo", "ramdocs-0002")]
    assert not [r for r in rows if BOB in r["answers"]]  # Bob's case: Ann has not labelled it, blind
    nobody = _run(_as(at, ""))
    assert _export(nobody, downloads) == []  # nobody named: nobody's labels


def test_the_leads_export_holds_every_label(tmp_path, monkeypatch, db, downloads):
    store = LabelStore(db)
    store.set_round(KEY, 1, "Ann", "Ann")
    _label(store, "Bob", "ramdocs-0004", BOB)
    _label(store, "Cleo", "ramdocs-0002", CLEO)
    at = _as(_open(tmp_path, monkeypatch), "Ann")
    assert sorted(r["analyst"] for r in _export(at, downloads)) == ["Bob", "Cleo"]


# --- attack folders -------------------------------------------------------------------------------------------

def _signed_in(monkeypatch, analyst: str | None) -> None:
    who = None if analyst is None else signin.Identity(analyst=analyst, shown=analyst)
    monkeypatch.setattr(signin, "current", lambda: who)


def _attack_folder(root, name="ramdocs_dev-20250101-000000"):
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "attack.json").write_text(json.dumps({"dataset": "ramdocs_dev", "ks": [1], "questions": 1}))
    (folder / "summary.json").write_text("{}")
    (folder / "results.jsonl").write_text("")
    return folder


def test_each_signed_in_analyst_lists_and_opens_only_their_own_attacks(tmp_path, monkeypatch):
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path / "cache"))
    ann_id, ben_id = "https://idp.example/|ann-sub", "https://idp.example/|../../ben"
    _signed_in(monkeypatch, ann_id)
    ann_root = attacks.attacks_root()
    _signed_in(monkeypatch, ben_id)
    ben_root = attacks.attacks_root()
    assert ann_root != ben_root and ann_root.parent == ben_root.parent == attacks.attacks_base()
    assert ".." not in ben_root.name and "idp" not in ben_root.name  # a hash: no identity text in the path
    ben = _attack_folder(ben_root)
    assert [f for f, _ in find_attacks(attacks.attacks_root())] == [ben]
    assert attacks.open_folder(str(ben)).path == ben  # Ben opens his own

    _signed_in(monkeypatch, ann_id)
    assert find_attacks(attacks.attacks_root()) == []  # Ann does not list Ben's
    for typed in (str(ben), str(ben / "attack.json"), str(ann_root / ".." / ben_root.name / ben.name)):
        with pytest.raises(AttackError, match="another analyst's attack"):
            attacks.open_folder(typed)
    shared = _attack_folder(attacks.attacks_base(), "ramdocs_dev-old")  # written before sign-in: nobody's
    with pytest.raises(AttackError, match="another analyst's attack"):
        attacks.open_folder(str(shared))


def test_without_sign_in_the_attacks_folder_is_as_before(tmp_path, monkeypatch):
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path / "cache"))
    _signed_in(monkeypatch, None)
    assert attacks.attacks_root() == attacks.attacks_base() == tmp_path / "cache" / "attacks"
    folder = _attack_folder(attacks.attacks_root())
    assert [f for f, _ in find_attacks(attacks.attacks_root())] == [folder]
    assert attacks.open_folder(str(folder)).path == folder


# --- /media/ --------------------------------------------------------------------------------------------------

def test_a_downloads_media_url_is_unguessable_and_short_lived():
    """What Streamlit's ``/media/`` route serves (it asks for no sign-in): a deferred download's bytes are made only
    when its session presses the button (a random placeholder id reaches that session only), then held under a
    hash of the bytes — of label uids, random — until the second script run (of any session) ends after it. Beyond
    that, ``/media/`` is the authenticating proxy's to guard (README)."""
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    from backend.labels.files import render
    from backend.labels.model import Label

    mgr = MediaFileManager(MemoryMediaFileStorage("/media"))
    export = render([Label(dataset=KEY, question_id="ramdocs-0004", answers=["x"], analyst="Ann", uid=uid,
                           version=1, created_at="2025-01-01T00:00:00Z") for uid in ("a" * 32,)], "csv")
    ids = {mgr.add_deferred(lambda: export, "text/csv", "coords") for _ in range(2)}
    assert len(ids) == 2 and all(len(i) == 32 for i in ids)  # a new random placeholder each run
    url = mgr.execute_deferred(ids.pop())
    file_id = url.rsplit("/", 1)[1]
    assert mgr.read_file(file_id) is not None  # served to whoever has the URL, sign-in or not ...
    other = render([Label(dataset=KEY, question_id="ramdocs-0004", answers=["x"], analyst="Ann", uid="b" * 32,
                          version=1, created_at="2025-01-01T00:00:00Z")], "csv")
    mgr2 = MediaFileManager(MemoryMediaFileStorage("/media"))
    assert mgr2.execute_deferred(mgr2.add_deferred(lambda: other, "text/csv", "c")) != url  # ... named by content
    mgr.clear_session_refs()
    mgr.remove_orphaned_files()  # the end of the next script run marks a download for deleting ...
    assert mgr.read_file(file_id) is not None
    mgr.remove_orphaned_files()  # ... the one after deletes it
    assert mgr.read_file(file_id) is None
