"""Team labelling on the Label page (issue 28): the round (set by anyone first, then only by its lead), each analyst's
to-do queue under an overlap, blind labelling (other analysts' labels hidden until the analyst saved their own, in
every view), the Agreement view (the backend's α / κ and the cases behind the disagreements, a row opening the case
for adjudication, ``?view=agreement``), and adjudication (only by the lead, settling the analysts' labels).

Uses the run of tests/app/test_labels_page.py: queue order 0004, 0002, 0003, 0005."""

import json

import pytest

from backend.labels import LabelDraft, LabelError, LabelStore
from backend.labels.agreement import agreement
from backend.labels.model import ADJUDICATED
from tests.app.test_labels_page import (QUEUE, _captions, _current, _field, _fill, _open, _page, _press, _progress,
                                        _queue, _run, _seen, db, write_results)  # noqa: F401 (fixture)
from tests.labels.test_store import KEY

#: Bob's words, found nowhere in the dataset: where they show, his label shows.
BOB_ANSWER, BOB_NOTE, CLEO_ANSWER = "Quidditch", "bob-private-note", "Croquet"


def _as(at, analyst: str):
    at.text_input(key="labels.analyst").input(analyst)
    return _run(at)


def _label(store: LabelStore, analyst: str, qid: str, answers=(), unanswerable=False, **fields):
    return store.save(LabelDraft(dataset=KEY, question_id=qid, answers=list(answers), unanswerable=unanswerable,
                                 analyst=analyst, **fields))


def _round_box(at) -> str:
    label = next(e.label for e in at.expander if "label each case" in e.label or "No labelling round" in e.label)
    return label.replace("\\", "")


def _plain(text: str) -> str:
    return text.replace("\\", "")


def _open_view(tmp_path, monkeypatch, view: str):
    """The page opened by a link to one of its views (``?view=``), with the run of test_labels_page."""
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path / "cache"))
    write_results(tmp_path / "cache" / "evaluations" / "ramdocs_dev-test")
    return _as(_page({"view": view}), "Ann")


def _pick_row(at, table_key: str, row: int):
    """Pick a row of a selectable ``st.dataframe`` as a browser does (AppTest has no interaction for it): the next
    run carries the table's selection state, so its ``on_select`` callback runs first."""
    [frame] = [f for f in at.dataframe if f.key == table_key]
    states = at._tree.get_widget_states()
    state = states.widgets.add()
    state.id = frame.proto.id
    state.string_value = json.dumps({"selection": {"rows": [row], "columns": [], "cells": []}})
    at._run(states)
    assert not at.exception, at.exception
    return at


def _table(at, column: str):
    return next(f.value for f in at.dataframe if column in f.value.columns)


def test_the_first_round_is_anyones_later_ones_only_the_leads(tmp_path, monkeypatch, db):
    at = _as(_open(tmp_path, monkeypatch), "Ann")
    assert _round_box(at).startswith("No labelling round: each case needs one label")
    at.number_input(key=f"labels.round.overlap.{KEY}.0").set_value(2)
    at.text_input(key=f"labels.round.lead.{KEY}.0").input("Ann")
    _press(at, "round.set")
    rnd = LabelStore(db).round(KEY)
    assert (rnd.number, rnd.overlap, rnd.lead, rnd.set_by, rnd.set_by_source) == (1, 2, "Ann", "Ann", "self-declared")
    assert "Round set: 2 analysts per case, led by Ann." in [t.value.replace("\\", "") for t in at.toast]
    assert _round_box(at).startswith("2 analysts label each case · lead: Ann · set by Ann (self-declared) at ")
    assert _plain(_progress(at)) == "0 of 4 cases have 2 of 2 labels · you: 0 labelled"
    assert list(_queue(at)["labels"]) == ["0 of 2 labels"] * 4

    bob = _as(_page(), "Bob")  # another session: Bob sees the round and cannot change it
    assert at.number_input(key=f"labels.round.overlap.{KEY}.1").value == 2
    assert bob.number_input(key=f"labels.round.overlap.{KEY}.1").disabled
    assert bob.text_input(key=f"labels.round.lead.{KEY}.1").disabled and bob.button(key="labels.round.set").disabled
    assert "Only the round's lead, Ann, changes it." in _captions(bob)
    with pytest.raises(LabelError, match=r"only the round's lead \(Ann\) changes it; you are Bob"):
        LabelStore(db).set_round(KEY, 3, "Bob", "Bob", expected=1)
    assert LabelStore(db).round(KEY).number == 1

    at.number_input(key=f"labels.round.overlap.{KEY}.1").set_value(3)  # the lead changes it: a new setting
    _press(at, "round.set")
    assert [(r.number, r.overlap, r.lead) for r in LabelStore(db).rounds(KEY)] == [(1, 2, "Ann"), (2, 3, "Ann")]
    assert _plain(_progress(at)) == "0 of 4 cases have 3 of 3 labels · you: 0 labelled"


def test_with_two_labels_per_case_a_case_leaves_the_to_do_queue_once_it_has_two(tmp_path, monkeypatch, db):
    store = LabelStore(db)
    store.set_round(KEY, 2, "Ann", "Ann")
    _label(store, "Bob", "ramdocs-0004", ["Chess"])
    _label(store, "Cleo", "ramdocs-0004", ["Cricket"])
    _label(store, "Bob", "ramdocs-0002", ["Football"])
    at = _as(_open(tmp_path, monkeypatch), "Ann")
    assert list(_queue(at)["id"]) == QUEUE[1:]  # 0004 has its two labels; 0002 (Bob's only) still needs one
    assert list(_queue(at)["labels"]) == ["1 of 2 labels", "0 of 2 labels", "0 of 2 labels"]
    assert _plain(_progress(at)) == "1 of 4 cases have 2 of 2 labels · you: 0 labelled · by analyst: Bob 2, Cleo 1"
    assert _current(at) == "ramdocs-0002"

    _fill(at, picked=["Football"])
    _press(at, "save")
    assert list(_queue(at)["id"]) == QUEUE[2:] and _current(at) == "ramdocs-0003"
    assert _plain(_progress(at)) == ("2 of 4 cases have 2 of 2 labels · you: 1 labelled · "
                                     "by analyst: Bob 2, Ann 1, Cleo 1")
    at.radio(key="labels.labelled").set_value("labelled").run()  # "yours"
    assert list(_queue(at)["id"]) == ["ramdocs-0002"] and [bool(t) for t in _queue(at)["yours"]] == [True]
    assert list(_queue(at)["labels"]) == ["2 of 2 labels"]
    at.radio(key="labels.labelled").set_value("all").run()
    assert [bool(t) for t in _queue(at)["yours"]] == [False, True, False, False]
    assert at.radio(key="labels.labelled").options == ["to do", "yours", "all"]


def test_other_analysts_labels_stay_hidden_in_every_view_until_the_analyst_saved_hers(tmp_path, monkeypatch, db):
    store = LabelStore(db)
    store.set_round(KEY, 3, "Lee", "Lee")  # Ann does not lead: the lead sees every label
    _label(store, "Bob", "ramdocs-0004", [BOB_ANSWER], note=BOB_NOTE, conflict_type="misinformation")
    _label(store, "Cleo", "ramdocs-0004", [CLEO_ANSWER], conflict_type="noise")  # Bob and Cleo disagree
    at = _as(_open(tmp_path, monkeypatch), "Ann")
    assert _current(at) == "ramdocs-0004"
    assert "2 of 3 labels · not labelled by you yet" in _captions(at)
    assert "2 other analysts labelled this case: their labels show once you saved yours" in _captions(at)
    hidden = (BOB_ANSWER, BOB_NOTE, CLEO_ANSWER)
    assert not [w for w in hidden if w in _seen(at)]
    for picked in ("agreement", "adjudicate"):
        at.segmented_control(key="labels.view").set_value(picked).run()
        assert not at.exception, at.exception
        assert not [w for w in hidden if w in _seen(at)], picked
    assert any("No case whose labels disagree among those you labelled" in i.value for i in at.info)  # blind
    at.segmented_control(key="labels.view").set_value("label").run()

    _fill(at, picked=["Chess"], kind="misinformation")
    _press(at, "save")
    _press(at, "previous")
    assert _current(at) == "ramdocs-0004"
    [others] = [e for e in at.expander if e.label.startswith("Other analysts")]
    assert others.label == "Other analysts' labels (2)"
    assert [c.value.split(" · ")[0] for c in others.caption] == ["Bob", "Cleo"]
    assert any(t.value.startswith(f"answers: {BOB_ANSWER}") and f"note: {BOB_NOTE}" in t.value for t in others.text)
    at.segmented_control(key="labels.view").set_value("adjudicate").run()
    boxes = [t.value for t in at.text if t.value.startswith("answers: ")]
    assert len(boxes) == 3 and boxes[1].startswith(f"answers: {BOB_ANSWER}")  # Ann, Bob, Cleo side by side
    assert "Only the round's lead records the final label (Lee)." in _captions(at)
    assert not [b for b in at.button if b.key == "labels-adj.save"]


def _team_labels(store: LabelStore) -> None:
    """Ann and Bob label all four disputed cases: answers agree on 0002 and 0003 (case aside), differ on 0004 and
    0005 (unanswerable against an answer); conflict types differ on 0003."""
    store.set_round(KEY, 2, "Ann", "Ann")
    for analyst, kinds, answers in (("Ann", ("misinformation", "noise"), (["Chess"], None)),
                                    ("Bob", ("misinformation", "misinformation"), (["Soccer"], ["academy"]))):
        _label(store, analyst, "ramdocs-0002", ["Football"], conflict_type=kinds[0])
        _label(store, analyst, "ramdocs-0003", ["Ahmed Hussen" if analyst == "Ann" else "ahmed hussen"],
               conflict_type=kinds[1])
        _label(store, analyst, "ramdocs-0004", answers[0])
        _label(store, analyst, "ramdocs-0005", answers[1] or [], unanswerable=answers[1] is None)


def test_the_agreement_view_shows_the_backends_figures_and_a_row_opens_the_case_to_adjudicate(tmp_path, monkeypatch,
                                                                                               db):
    store = LabelStore(db)
    _team_labels(store)
    at = _open_view(tmp_path, monkeypatch, "agreement")  # a link opens the view
    assert at.segmented_control(key="labels.view").value == "agreement"
    assert at.query_params["view"] in ("agreement", ["agreement"])
    result = agreement(store.current(KEY))
    assert result.cases == 4 and result.analysts == ["Ann", "Bob"]
    figures = _table(at, "α (Krippendorff)")
    assert list(figures["field"]) == ["accepted answers", "unanswerable", "conflict type", "wrong documents",
                                      "best method"]
    expected = ["—" if f.alpha is None else f"{f.alpha:.3f}" for f in result.fields.values()]
    assert list(figures["α (Krippendorff)"]) == expected
    assert list(figures["cases"]) == [f.cases for f in result.fields.values()] == [4, 4, 2, 4, 0]
    assert list(figures["disagreements"]) == [len(f.disagreements) for f in result.fields.values()] == [2, 1, 1, 0, 0]
    kappa = result.fields["answers"].pairs[("Ann", "Bob")]
    assert figures["κ Ann · Bob"][0] == f"{kappa.kappa:.3f} (4)"
    assert result.fields["answers"].disagreements == ["ramdocs-0004", "ramdocs-0005"]

    cases = _table(at, "differ on")
    assert list(cases["id"]) == ["ramdocs-0003", "ramdocs-0004", "ramdocs-0005"]  # dataset order
    assert list(cases["differ on"]) == ["conflict type", "accepted answers", "accepted answers, unanswerable"]

    _pick_row(at, "labels.agreement.cases", 2)  # 0005: opens in the adjudication view
    assert at.segmented_control(key="labels.view").value == "adjudicate"
    assert at.query_params["view"] in ("adjudicate", ["adjudicate"])
    assert at.query_params["case"] in ("ramdocs-0005", ["ramdocs-0005"])
    disputed = _table(at, "settled")
    assert list(disputed["id"]) == ["ramdocs-0004", "ramdocs-0005", "ramdocs-0003"]  # answers differ first
    assert list(disputed[""]) == ["", "▶", ""] and list(disputed["answers"]) == ["differ", "differ", "agree"]
    assert "ramdocs-0005 · differ on: accepted answers, unanswerable" in _captions(at)


def test_the_lead_records_the_final_label_settling_the_analysts_labels(tmp_path, monkeypatch, db):
    store = LabelStore(db)
    _team_labels(store)
    at = _open_view(tmp_path, monkeypatch, "adjudicate")
    assert _table(at, "settled")["settled"].tolist() == ["", "", ""]
    assert "ramdocs-0004 · differ on: accepted answers" in _captions(at)  # the first whose answers differ
    boxes = [t.value for t in at.text if t.value.startswith("answers: ")]
    assert boxes[:2] == ["answers: Chess\nconflict type: —\nbest method: —",
                         "answers: Soccer\nconflict type: —\nbest method: —"]
    analysts = {lab.analyst: lab.uid for lab in store.current(KEY)["ramdocs-0004"].analysts.values()}

    _field(at, "multiselect", "Accepted answers").set_value(["Soccer"])
    _field(at, "text_area", "Note").input("d4 is right")
    at.button(key="labels-adj.save").click()
    _run(at)
    final = store.current(KEY)["ramdocs-0004"].adjudicated
    assert (final.kind, final.analyst, final.answers, final.note) == (ADJUDICATED, "Ann", ["Soccer"], "d4 is right")
    assert sorted(final.settles) == sorted(analysts.values()) and len(final.settles) == 2
    assert store.current(KEY)["ramdocs-0004"].gold() == final
    assert {a: lab.uid for a, lab in store.current(KEY)["ramdocs-0004"].analysts.items()} == analysts  # kept
    assert final.version == 3 and [_plain(t.value) for t in at.toast] == ["Settled ramdocs-0004."]
    settled = _table(at, "settled")
    assert dict(zip(settled["id"], settled["settled"])) == {"ramdocs-0004": "yes", "ramdocs-0005": "",
                                                            "ramdocs-0003": ""}  # settled: after the unsettled
    assert "ramdocs-0005 · differ on: accepted answers, unanswerable" in _captions(at)  # on to the next

    bob = _as(_page({"view": "adjudicate"}), "Bob")  # Bob labelled 0004 (he sees the labels) but does not lead
    assert "Only the round's lead records the final label (Ann)." in _captions(bob)
    assert not [b for b in bob.button if b.key == "labels-adj.save"]
    with pytest.raises(LabelError, match=r"only the round's lead \(Ann\) records an adjudicated label; you are Bob"):
        store.adjudicate(LabelDraft(dataset=KEY, question_id="ramdocs-0005", answers=["academy"], analyst="Bob"),
                         [])


def test_label_text_in_the_side_by_side_view_stays_text(tmp_path, monkeypatch, db):
    store = LabelStore(db)
    store.set_round(KEY, 2, "Ann", "Ann")
    _label(store, "Ann", "ramdocs-0004", ["<b>x</b>"], note="**bold** ![i](http://127.0.0.1:9/i.png)")
    _label(store, "Bob", "ramdocs-0004", ["**bold**"])
    at = _open_view(tmp_path, monkeypatch, "adjudicate")
    boxes = [t.value for t in at.text if t.value.startswith("answers: ")]
    assert boxes == ["answers: <b>x</b>\nconflict type: —\nbest method: —\nnote: **bold** "
                     "![i](http://127.0.0.1:9/i.png)", "answers: **bold**\nconflict type: —\nbest method: —"]
    rendered = [m.value for m in at.markdown] + [c.value for c in at.caption] + [e.label for e in at.expander]
    assert not [r for r in rendered if "<b>x</b>" in r or "**bold**" in r or "](http" in r], rendered


def test_a_name_typed_after_the_case_opened_loads_that_analysts_own_label(tmp_path, monkeypatch, db):
    """A link opens a case before the analyst says who they are: once they type their name, the form holds their own
    saved label (not an empty form whose save would be refused as from another tab), and exports are the lead's."""
    store = LabelStore(db)
    _label(store, "Ann", "ramdocs-0004", ["Cricket"], note="ann's own")
    store.set_round(KEY, 2, "Lee", "Lee")
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path / "cache"))
    write_results(tmp_path / "cache" / "evaluations" / "ramdocs_dev-test")
    at = _page({"case": "ramdocs-0004"})
    assert _field(at, "text_area", "Note").value == ""  # nobody named: an empty form
    _as(at, "Ann")
    assert _current(at) == "ramdocs-0004" and _field(at, "text_area", "Note").value == "ann's own"
    assert not [w for w in at.warning if "elsewhere" in w.value]
    _field(at, "text_area", "Note").input("ann's own, checked")
    _press(at, "save")
    assert [(lab.analyst, lab.note) for lab in store.history(KEY, "ramdocs-0004")] == [
        ("Ann", "ann's own"), ("Ann", "ann's own, checked")]
    assert not [b for b in at.get("download_button")]  # the exports hold every analyst's labels: the lead's only
    assert "offers the exports to its lead" in _plain(_captions(at))


def test_the_lead_starts_the_final_label_from_an_analysts_label(tmp_path, monkeypatch, db):
    """"Start from Bob's label" fills the final-label form with Bob's label (new widgets prefilled from it), which the
    lead edits and saves as the adjudicated label."""
    store = LabelStore(db)
    _team_labels(store)
    at = _open_view(tmp_path, monkeypatch, "adjudicate")
    assert "ramdocs-0004 · differ on: accepted answers" in _captions(at)
    other = next(lab for lab in store.current(KEY)["ramdocs-0004"].analysts.values() if lab.analyst != "Ann")
    [start] = [b for b in at.button if b.label == f"Start from {other.analyst}'s label"]
    start.click()
    _run(at)
    assert _field(at, "multiselect", "Accepted answers").value == other.answers
    _field(at, "text_area", "Note").input("taken from the other label")
    at.button(key="labels-adj.save").click()
    _run(at)
    final = store.current(KEY)["ramdocs-0004"].adjudicated
    assert (final.answers, final.note) == (other.answers, "taken from the other label")


def test_an_analyst_who_has_not_labelled_sees_no_agreement_figure_nor_settlement_of_others(tmp_path, monkeypatch,
                                                                                           db):
    """Blind: the Agreement view's figures and a case's "adjudicated" mark say how other analysts' labels compare:
    an analyst sees them only for the cases they labelled too; a settled case leaves the to-do queue."""
    store = LabelStore(db)
    store.set_round(KEY, 3, "Lee", "Lee")
    bob = _label(store, "Bob", "ramdocs-0004", [BOB_ANSWER])
    cleo = _label(store, "Cleo", "ramdocs-0004", [CLEO_ANSWER])
    _label(store, "Bob", "ramdocs-0002", ["Football"])
    _label(store, "Cleo", "ramdocs-0002", ["Hockey"])
    store.adjudicate(LabelDraft(dataset=KEY, question_id="ramdocs-0002", answers=["Football"], analyst="Lee"),
                     [lab.uid for lab in store.current(KEY)["ramdocs-0002"].analysts.values()])
    at = _open_view(tmp_path, monkeypatch, "agreement")
    assert "2 other labelled cases count for the round's lead only" in _plain(_captions(at))
    assert any("Agreement needs cases labelled by at least two analysts" in i.value for i in at.info)
    assert not [f for f in at.dataframe if "α (Krippendorff)" in f.value.columns]  # no figure of theirs
    at.segmented_control(key="labels.view").set_value("label").run()
    assert "ramdocs-0002" not in list(_queue(at)["id"])  # settled: no more labels needed
    _fill(at, typed="Chess")
    _press(at, "save")
    at.segmented_control(key="labels.view").set_value("agreement").run()
    figures = _table(at, "α (Krippendorff)")  # now over 0004, which Ann labelled too
    assert list(figures["cases"])[0] == 1 and sorted(agreement(
        {"ramdocs-0004": store.current(KEY)["ramdocs-0004"]}).analysts) == ["Ann", "Bob", "Cleo"]
    del bob, cleo


def test_a_refused_adjudication_keeps_what_the_lead_typed_and_says_whose_label_changed(tmp_path, monkeypatch, db):
    store = LabelStore(db)
    _team_labels(store)
    at = _open_view(tmp_path, monkeypatch, "adjudicate")
    assert "ramdocs-0004 · differ on: accepted answers" in _captions(at)
    [start] = [b for b in at.button if b.label == "Start from Bob's label"]
    start.click()
    _run(at)
    _field(at, "text_area", "Note").input("the lead's reasons")
    bob = store.current(KEY)["ramdocs-0004"].analysts["Bob"]
    store.save(LabelDraft(dataset=KEY, question_id="ramdocs-0004", answers=["Rugby"], analyst="Bob"),
               expected=bob.uid)  # Bob changes his label while the lead writes
    at.button(key="labels-adj.save").click()
    _run(at)
    assert any("changed since you looked (Bob saved a new one)" in _plain(e.value) for e in at.error)
    assert store.current(KEY)["ramdocs-0004"].adjudicated is None
    assert _field(at, "text_area", "Note").value == "the lead's reasons"  # kept
    assert any(t.value.startswith("answers: Rugby") for t in at.text)  # Bob's new label beside it now
    at.button(key="labels-adj.save").click()  # looked: saved, settling the labels as they are now
    _run(at)
    final = store.current(KEY)["ramdocs-0004"].adjudicated
    assert final.note == "the lead's reasons" and store.current(KEY)["ramdocs-0004"].analysts["Bob"].uid in final.settles


def test_typing_a_name_moves_the_page_off_a_case_that_analyst_labelled(tmp_path, monkeypatch, db):
    """The page picks the top of the queue before anyone is named; once Bob names himself, a case he labelled is
    not his to do: the page moves to his first case to do (a case opened by a link stays)."""
    store = LabelStore(db)
    store.set_round(KEY, 2, "Lee", "Lee")  # 0004 needs a second label: at the top of an unnamed queue
    _label(store, "Bob", "ramdocs-0004", ["Chess"])
    at = _open(tmp_path, monkeypatch)
    assert _current(at) == "ramdocs-0004"
    _as(at, "Bob")
    assert _current(at) == "ramdocs-0002"
    linked = _as(_page({"case": "ramdocs-0004"}), "Bob")
    assert _current(linked) == "ramdocs-0004"
    cleo = _page()  # unnamed, on the top case, which is Cleo's to do too: naming herself keeps her there
    assert _current(_as(cleo, "Cleo")) == "ramdocs-0004"
    _label(store, "Cleo", "ramdocs-0004", ["Go"])  # she saves it in another tab: this one stays on it
    assert _current(_run(cleo)) == "ramdocs-0004"
