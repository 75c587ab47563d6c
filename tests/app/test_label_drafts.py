"""Label drafts (issue 27): a half-filled label form survives a switch to another page and back, and a move to
another case and back; a save drops the draft (the saved label is what the form shows then); each move scrolls
the new case into view, the first draw does not."""

from components.session import labels as session
from tests.app.test_labels_page import _current, _field, _fill, _open, _press, _run, db  # noqa: F401 (fixture)
from tests.labels.test_store import KEY

FILLED = dict(picked=(), typed="Rugby\nHandball", unanswerable=False, kind="misinformation", best="astute",
              note="half done")


def _form(at) -> dict:
    return {"typed": _field(at, "text_area", "Other accepted answers, one per line").value,
            "unanswerable": _field(at, "checkbox", "Unanswerable: the documents support no answer").value,
            "kind": _field(at, "selectbox", "Conflict type").value,
            "docs": list(_field(at, "multiselect", "Wrong documents").value),
            "best": _field(at, "selectbox", "Best method").value,
            "note": _field(at, "text_area", "Note").value}


def _scrolls(at) -> int:
    return sum("scrollIntoView" in h.proto.body for h in at.get("html"))


def test_a_draft_survives_a_page_switch_and_a_move_and_a_save_drops_it(tmp_path, monkeypatch, db):
    at = _open(tmp_path, monkeypatch)
    assert _scrolls(at) == 0  # the first draw stays where the page opens
    case = _current(at)
    doc = _field(at, "multiselect", "Wrong documents").options[0].split(" · ")[0]  # shown as "id · source"
    _run(_fill(at, docs=[doc], **FILLED))
    left = _form(at)
    assert left == {"typed": "Rugby\nHandball", "unanswerable": False, "kind": "misinformation", "docs": [doc],
                    "best": "astute", "note": "half done"}

    at.switch_page("pages/dataset.py")
    _run(at)
    assert not any(w.label == "Note" for w in at.text_area)  # the form is not drawn there: Streamlit drops its state
    at.switch_page("pages/labels.py")
    _run(at)
    assert _current(at) == case and _form(at) == left
    assert any("unsaved changes to this label are back" in c.value for c in at.caption)

    _press(at, "next")  # another case: an empty form, and the page scrolls to it
    assert _current(at) != case and _form(at)["note"] == "" and _scrolls(at) == 1
    _press(at, "previous")
    assert _current(at) == case and _form(at) == left

    _press(at, "save")  # saved as left: the draft goes, and the next case is scrolled into view
    assert _current(at) != case and _scrolls(at) == 1
    assert case not in at.session_state[session.STATE_KEY][KEY].drafts
    _press(at, "previous")
    assert _current(at) == case and _form(at) == left  # the saved label, loaded from the store
    assert not any("unsaved changes" in c.value for c in at.caption)
    _run(at)
    assert _scrolls(at) == 0  # a rerun that moved nowhere does not scroll
