"""Label page: the review queue built from a results file (hand-made rows, so the order is known), labelling with
Save & next / Previous / Skip / Next, labels of another analyst (hidden until the analyst saved their own), the
analyst's own label saved from another tab (a save over it refused until looked at), a refused label, exports, a
store that cannot be opened, the run picker, and a run computed on the page."""

import json
import time

import pytest
from streamlit.testing.v1 import AppTest

from backend.labels import LabelDraft, LabelStore
from backend.schema import MethodResult
from components.safe import md
from tests.conftest import ROOT
from tests.labels.test_store import KEY

APP = str(ROOT / "app.py")
DATASET = "ramdocs_dev"  # its labels are kept under KEY: its identity (name@content hash, backend.labels.identity)
#: (question, {method: answers}); None: abstained. Disagreement (entropy, then the number of answer groups; never the
#: truth) gives the queue order 0004 (3 groups), 0002, 0003, 0005 (2 groups: dataset order); 0001 agrees.
ROWS = {"ramdocs-0001": {"no_rag": ["3,559 people"], "vanilla_rag": ["3,559 people"], "astute": ["3,559 people"]},
        "ramdocs-0002": {"no_rag": ["Football"], "vanilla_rag": ["Football"], "astute": ["hockey"]},
        "ramdocs-0003": {"no_rag": None, "vanilla_rag": ["Ahmed Hussen"], "astute": ["Ahmed Hussen"]},
        "ramdocs-0004": {"no_rag": ["Chess"], "vanilla_rag": ["Soccer"], "astute": ["Cricket"]},
        "ramdocs-0005": {"no_rag": None, "vanilla_rag": ["academy"], "astute": ["academy"]}}
QUEUE = ["ramdocs-0004", "ramdocs-0002", "ramdocs-0003", "ramdocs-0005"]
QUESTIONS = {"ramdocs-0002": "What sport is William Carrier associated with?",
             "ramdocs-0003": "Who is the current Minister of Immigration?",
             "ramdocs-0004": "What sport is Doak associated with?",
             "ramdocs-0005": "What is the type of institution Fontbonne is?"}


def write_results(folder, dataset=DATASET, rows=ROWS):
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for qid, answers in rows.items():
        for method, said in answers.items():
            result = MethodResult(method=method, question_id=qid, answers=said or [], abstained=said is None)
            lines.append(json.dumps({"dataset": dataset, "model": "offline/reader", "question_id": qid,
                                     "method": method, "result": result.model_dump(mode="json")}))
    (folder / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder / "results.jsonl"


@pytest.fixture
def db(tmp_path, monkeypatch):
    path = tmp_path / "labels.db"
    monkeypatch.setenv("CONFLICTLENS_LABELS", str(path))
    return path


def _page(query: dict | None = None, secrets: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for name, value in (secrets or {}).items():
        at.secrets[name] = value
    at.query_params.update({"methods": "no_rag", **(query or {})})  # Inspect, the first page, runs one cheap method
    at.run()
    at.switch_page("pages/labels.py").run()
    assert not at.exception, at.exception
    return at


def _open(tmp_path, monkeypatch, query: dict | None = None) -> AppTest:
    """The page on a cache folder of its own holding one run: the picker opens it."""
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path / "cache"))
    path = write_results(tmp_path / "cache" / "evaluations" / "ramdocs_dev-test")
    at = _page(query)
    assert at.selectbox(key="labels.run").value == str(path)
    return at


def _run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def _field(at, kind: str, label: str):
    return next(w for w in getattr(at, kind) if w.label == label)


def _question(at) -> str:
    return next(t.value for t in at.text if t.value in QUESTIONS.values())


def _current(at) -> str:
    return next(q for q, text in QUESTIONS.items() if text == _question(at))


def _queue(at):
    return next(f.value for f in at.dataframe if "entropy (bits)" in f.value.columns)


def _progress(at) -> str:
    return at.get("progress")[0].proto.text


def _captions(at) -> str:
    return "\n".join(c.value for c in at.caption).replace("\\", "")


def _fill(at, analyst="Ann", picked=(), typed="", unanswerable=False, kind=None, docs=(), best=None, note=""):
    at.text_input(key="labels.analyst").input(analyst)
    _field(at, "multiselect", "Accepted answers").set_value(list(picked))
    _field(at, "text_area", "Other accepted answers, one per line").input(typed)
    _field(at, "checkbox", "Unanswerable: the documents support no answer").set_value(unanswerable)
    _field(at, "selectbox", "Conflict type").set_value(kind)
    _field(at, "multiselect", "Wrong documents").set_value(list(docs))
    _field(at, "selectbox", "Best method").set_value(best or "")
    _field(at, "text_area", "Note").input(note)
    return at


def _store_setting(at):
    return next(e for e in at.expander if e.label.startswith("Label store"))


def _press(at, name: str) -> AppTest:
    at.button(key=f"labels.{name}").click()
    return _run(at)


def test_queue_order_save_next_and_previous(tmp_path, monkeypatch, db):
    at = _open(tmp_path, monkeypatch)
    assert list(_queue(at)["id"]) == QUEUE and list(_queue(at)["groups"]) == [3, 2, 2, 2]
    assert _current(at) == "ramdocs-0004" and _progress(at) == "0 / 4 labelled"
    assert "0 of 1 label · not labelled by you yet" in _captions(at)
    assert not [m for m in at.markdown if "-badge[" in m.value]  # blind: no truth until asked
    assert _field(at, "multiselect", "Accepted answers").options == ["Cricket", "Chess", "Soccer"]  # method order

    _fill(at, picked=["Soccer"], typed="Football\n", kind="misinformation", docs=["ramdocs-0004-d4"],
          best="vanilla_rag", note="d4 says soccer")
    _press(at, "save")
    [label] = LabelStore(db).versions(KEY)
    assert (label.question_id, label.answers, label.analyst, label.version) == ("ramdocs-0004", ["Soccer", "Football"],
                                                                                "Ann", 1)
    assert (label.conflict_type, label.wrong_documents, label.best_method, label.note) == (
        "misinformation", ["ramdocs-0004-d4"], "vanilla_rag", "d4 says soccer")
    assert [t.value for t in at.toast] == ["Saved ramdocs\\-0004\\."]
    assert _current(at) == "ramdocs-0002" and _progress(at) == "1 / 4 labelled"
    assert list(_queue(at)["id"]) == QUEUE[1:]  # unlabelled only, by default
    assert _field(at, "multiselect", "Accepted answers").value == []  # a fresh form for the next case

    _press(at, "previous")
    assert _current(at) == "ramdocs-0004"
    assert "Labelled by Ann at " in _captions(at) and "(version" not in _captions(at)
    assert _field(at, "multiselect", "Accepted answers").value == ["Soccer"]
    assert _field(at, "text_area", "Other accepted answers, one per line").value == "Football"
    assert _field(at, "selectbox", "Conflict type").value == "misinformation"
    assert _field(at, "multiselect", "Wrong documents").value == ["ramdocs-0004-d4"]
    assert _field(at, "selectbox", "Best method").value == "vanilla_rag"
    assert _field(at, "text_area", "Note").value == "d4 says soccer"
    assert "outside the filters" in _captions(at)

    # an edit is a new version on top of the one shown; the history lists both
    _field(at, "text_area", "Note").input("d4 is misinformation")
    _press(at, "save")
    assert [(lab.version, lab.note) for lab in LabelStore(db).history(KEY, "ramdocs-0004")] == [
        (1, "d4 says soccer"), (2, "d4 is misinformation")]
    _press(at, "previous")
    history = next(f.value for f in at.dataframe if "when (UTC)" in f.value.columns)
    assert list(history["version"]) == [2, 1] and list(history["analyst"]) == ["Ann", "Ann"]


def test_skip_next_and_the_filters(tmp_path, monkeypatch, db):
    at = _open(tmp_path, monkeypatch)
    _press(at, "skip")
    assert _current(at) == "ramdocs-0002"
    assert list(_queue(at)["skipped"]) == [True, False, False, False]
    _press(at, "next")
    assert _current(at) == "ramdocs-0003"
    _press(at, "next")
    _press(at, "next")  # Next visits skipped cases too: round to the top
    assert _current(at) == "ramdocs-0004" and "Back to the top of the queue\\." in [t.value for t in at.toast]
    _press(at, "previous")
    assert _current(at) == "ramdocs-0005"
    _fill(at, unanswerable=True)
    _press(at, "save")  # Save & next passes over the skipped case
    assert _current(at) == "ramdocs-0002"
    assert LabelStore(db).latest(KEY)["ramdocs-0005"].unanswerable

    at.selectbox(key="labels.type").set_value("misinformation").run()  # 0004 and 0005 by the dataset's truth
    assert list(_queue(at)["id"]) == ["ramdocs-0004"] and _progress(at) == "1 / 2 labelled"
    assert _current(at) == "ramdocs-0004"  # a filter change starts at the top of the filtered queue
    at.radio(key="labels.labelled").set_value("labelled").run()
    assert list(_queue(at)["id"]) == ["ramdocs-0005"]
    at.selectbox(key="labels.type").set_value("noise").run()
    assert not at.dataframe and "Every case matching" not in at.info[0].value
    assert "No case matches these filters" in at.info[0].value
    at.selectbox(key="labels.type").set_value("").run()
    at.radio(key="labels.labelled").set_value("all").run()
    at.selectbox(key="labels.method").set_value("astute").run()  # astute outside the largest group
    assert list(_queue(at)["id"]) == ["ramdocs-0004", "ramdocs-0002"]
    at.selectbox(key="labels.method").set_value("").run()
    at.toggle(key="labels.agreeing").set_value(True).run()
    assert list(_queue(at)["id"]) == QUEUE + ["ramdocs-0001"]


def _seen(at) -> str:
    """Everything the page says in words: texts, captions, markdown, alerts, expander labels, table cells."""
    parts = [e.value for kind in ("text", "caption", "markdown", "warning", "info", "error", "success")
             for e in getattr(at, kind)]
    parts += [e.label for e in at.expander] + [f.value.to_csv() for f in at.dataframe]
    return "\n".join(parts).replace("\\", "")


def test_another_analysts_label_stays_hidden_until_ann_saved_and_her_other_tab_conflicts(tmp_path, monkeypatch, db):
    at = _open(tmp_path, monkeypatch)
    at.text_input(key="labels.analyst").input("Ann").run()
    other = LabelStore(db)
    other.save(LabelDraft(dataset=KEY, question_id="ramdocs-0002", answers=["Football"], analyst="Bob"))
    _run(at)  # no round: each case needs one label, so Bob's takes 0002 off Ann's to-do queue (backend.labels.team)
    assert list(_queue(at)["id"]) == QUEUE[:1] + QUEUE[2:] and _progress(at) == "1 / 4 labelled"
    at.radio(key="labels.labelled").set_value("all").run()
    assert list(_queue(at)["labels"]) == ["0 of 1 label", "1 of 1 label", "0 of 1 label", "0 of 1 label"]
    assert list(_queue(at)["yours"]) == ["", "", "", ""]  # whose label it is is not said (blind)
    assert "labelled by" not in _queue(at).columns and "Bob (" not in _seen(at)

    other.save(LabelDraft(dataset=KEY, question_id="ramdocs-0004", answers=["Quidditch"], note="see d1",
                          conflict_type="misinformation", analyst="Bob"))
    _run(at)  # Bob labelled the case Ann has open: that someone did is said, not what (blind)
    assert _current(at) == "ramdocs-0004"
    assert "1 of 1 label · not labelled by you yet" in _captions(at)
    assert "1 other analyst labelled this case: their labels show once you saved yours" in _captions(at)
    assert not at.warning and _field(at, "text_area", "Note").value == ""  # not her label: no conflict
    assert not [e for e in at.expander if e.label.startswith("Other analysts")]
    assert not any(word in _seen(at) for word in ("Bob ·", "Quidditch", "see d1"))  # documents name a Bobby

    _fill(at, picked=["Cricket"])
    _press(at, "save")  # her own label, beside Bob's
    assert [(lab.analyst, lab.version, lab.supersedes) for lab in other.history(KEY, "ramdocs-0004")] == [
        ("Bob", 1, None), ("Ann", 2, None)]
    assert set(other.current(KEY)["ramdocs-0004"].analysts) == {"Ann", "Bob"}
    _press(at, "previous")
    assert _current(at) == "ramdocs-0004" and "Labelled by Ann at " in _captions(at)
    [others] = [e for e in at.expander if e.label.startswith("Other analysts")]
    assert others.label == "Other analysts\' labels (1)"
    assert any(t.value.startswith("answers: Quidditch") and "note: see d1" in t.value for t in others.text)
    assert "1 other analyst labelled" not in _captions(at)
    assert _field(at, "multiselect", "Accepted answers").value == ["Cricket"]  # the form is hers, not Bob's

    # Ann in a second tab (another session) saves her label of 0004 again: the first tab's form is now stale
    tab = _page()
    tab.text_input(key="labels.analyst").input("Ann").run()
    tab.radio(key="labels.labelled").set_value("all").run()  # the top of the queue: 0004
    assert _current(tab) == "ramdocs-0004" and _field(tab, "multiselect", "Accepted answers").value == ["Cricket"]
    _field(tab, "text_area", "Note").input("from the other tab")
    _press(tab, "save")
    _run(at)
    assert any("You saved version 3 of your label" in w.value and "after this form was loaded" in w.value
               for w in at.warning)
    assert _field(at, "text_area", "Note").value == ""  # the form is left as it is

    _field(at, "text_area", "Note").input("from the first tab")
    _press(at, "save")
    assert [(lab.analyst, lab.version) for lab in other.history(KEY, "ramdocs-0004")] == [
        ("Bob", 1), ("Ann", 2), ("Ann", 3)]  # nothing overwritten
    assert _current(at) == "ramdocs-0004"
    assert any("You (Ann) saved version 3 of your label" in w.value and "This form was not saved" in w.value
               for w in at.warning)
    assert _field(at, "text_area", "Note").value == "from the other tab"  # her other version is in the form now
    assert any(t.value.startswith("answers: Cricket") and "note: from the first tab" in t.value for t in at.text)

    _field(at, "text_area", "Note").input("both tabs")
    _press(at, "save")  # looked at: now it goes on top of her version 3, Bob's untouched
    history = other.history(KEY, "ramdocs-0004")
    assert [(lab.analyst, lab.version) for lab in history] == [("Bob", 1), ("Ann", 2), ("Ann", 3), ("Ann", 4)]
    assert history[3].supersedes == history[2].uid and history[0].uid not in {lab.supersedes for lab in history}
    assert other.current(KEY)["ramdocs-0004"].analysts["Ann"].note == "both tabs"


def test_a_bad_label_is_refused_and_stores_nothing(tmp_path, monkeypatch, db):
    at = _open(tmp_path, monkeypatch)
    _fill(at, note="no answer yet")
    _press(at, "save")
    errors = [e.value.replace("\\", "") for e in at.error]
    assert errors == ["ramdocs_dev / ramdocs-0004: accept at least one answer, or mark the question unanswerable"]
    assert LabelStore(db).count() == 0 and _current(at) == "ramdocs-0004"
    assert _field(at, "text_area", "Note").value == "no answer yet"  # the input is kept

    _fill(at, analyst="", picked=["Chess"], unanswerable=True)
    _press(at, "save")
    errors = [e.value.replace("\\", "") for e in at.error]
    assert len(errors) == 2 and "say who labels" in errors[0] and "either unanswerable or has" in errors[1]
    assert LabelStore(db).count() == 0


def test_exports_and_the_store_setting(tmp_path, monkeypatch, db):
    at = _open(tmp_path, monkeypatch)
    assert {b.label for b in at.get("download_button")} == {"Labels (CSV)", "Labels (JSONL)"}
    assert md(str(db)) in _store_setting(at).label
    refused = "a database URL typed on this page is refused"  # no connection tried (tests/security/)
    at.text_input(key="labels.store").input("mysql://user@host/db").run()
    assert not at.exception, at.exception
    assert [refused in e.value.replace("\\", "") for e in at.error] == [True]
    assert not at.get("download_button")  # nothing else until the store opens
    at.text_input(key="labels.store").input("postgresql://bob:s3cret@127.0.0.1:1/labels").run()
    assert not at.exception, at.exception
    [error] = at.error
    assert refused in error.value.replace("\\", "") and "s3cret" not in error.value
    other = tmp_path / "team.db"
    at.text_input(key="labels.store").input(str(other)).run()
    assert not at.error and md(str(other)) in _store_setting(at).label and other.exists()
    secret = tmp_path / "from-secrets.db"  # .streamlit/secrets.toml's labels_url wins over the environment
    at = _page(secrets={"labels_url": str(secret)})
    assert md(str(secret)) in _store_setting(at).label and secret.exists()
    assert not [t for t in at.text_input if t.key == "labels.store"]  # set by the server: nothing to type


def test_runs_under_the_cache_folder_newest_first(tmp_path, monkeypatch, db):
    monkeypatch.setenv("CONFLICTLENS_CACHE_DIR", str(tmp_path / "cache"))
    at = _page()
    assert any("No evaluation run of ramdocs\\_dev" in i.value for i in at.info)
    runs = tmp_path / "cache" / "evaluations"
    old = write_results(runs / "ramdocs_dev-old", rows={"ramdocs-0002": ROWS["ramdocs-0002"]})
    write_results(runs / "multisource-x", dataset="multisource")
    time.sleep(0.05)
    new = write_results(runs / "ramdocs_dev-new")
    at = _page()
    picker = at.selectbox(key="labels.run")
    assert picker.options[-1] == "A results file elsewhere…" and len(picker.options) == 3
    assert picker.value == str(new) and picker.options[0].startswith("ramdocs_dev-new · ")
    assert list(_queue(at)["id"]) == QUEUE
    picker.set_value(str(old)).run()
    assert list(_queue(at)["id"]) == ["ramdocs-0002"]
    at.selectbox(key="labels.run").set_value("other").run()
    at.text_input(key="labels.path").input(str(runs / "multisource-x")).run()
    assert "of the dataset \\'multisource\\'" in at.error[0].value


def test_a_link_opens_its_case(tmp_path, monkeypatch, db):
    at = _open(tmp_path, monkeypatch, {"case": "ramdocs-0003"})
    assert _current(at) == "ramdocs-0003" and at.query_params["case"] in ("ramdocs-0003", ["ramdocs-0003"])
    link = next(b for b in at.get("link_button") if b.proto.label == "Open in Inspect").proto.url
    assert link == "./?dataset=ramdocs_dev&question=ramdocs-0003&methods=astute%2Cno_rag%2Cvanilla_rag"
    at.toggle(key="labels.show_truth").set_value(True).run()
    assert [m.value for m in at.markdown if "-badge[" in m.value][:1] == [":green-badge[correct]"]
    assert "Ahmed Hussen" in [t.value for t in at.text]


def test_compute_now_opens_the_queue_on_the_new_run(db):
    at = _page()
    at.radio(key="labels.source").set_value("compute").run()
    at.multiselect(key="labels.methods").set_value(["no_rag", "vanilla_rag"]).run()
    at.number_input(key="labels.limit").set_value(3).run()
    at.button(key="labels.compute").click().run()
    deadline = time.time() + 240
    while not at.dataframe and time.time() < deadline:  # the page polls its worker thread; so do we
        assert not at.exception, at.exception
        time.sleep(0.5)
        at.run()
    assert at.radio(key="labels.source").value == "run"
    assert at.selectbox(key="labels.run").value.endswith("results.jsonl")
    assert set(_queue(at)["id"]) <= {"ramdocs-0001", "ramdocs-0002", "ramdocs-0003"} and len(_queue(at)) >= 1


def test_dataset_text_and_answers_stay_text(tmp_path, db):
    """Ids, sources and answers from files: escaped in captions and labels, answers and documents as st.text."""
    from backend.data import load_dataset
    from tests.app.test_untrusted_labels import DOC_ID, QID, RAW, SOURCE

    folder = tmp_path / "**folder** ![f](http:x)"
    folder.mkdir()
    row = {"id": QID, "question": "Who wrote it?", "documents": [{"id": DOC_ID, "source": SOURCE, "text": "Al."}]}
    (folder / "questions.jsonl").write_text(json.dumps(row) + "\n")
    name = load_dataset(folder).name
    answer = "**Bob** ![x](http://127.0.0.1:9/x.png)"
    path = write_results(tmp_path / "run", dataset=name, rows={QID: {"no_rag": None, "vanilla_rag": [answer]}})
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["methods"] = "no_rag"
    at.run()
    at.selectbox(key="app.dataset").set_value("Your own file…").run()
    at.text_input(key="app.own_path").input(str(folder)).run()
    at.text_input(key="app.model").set_value("scripted/never-called").run()  # nothing runs by itself
    at.switch_page("pages/labels.py").run()
    at.selectbox(key="labels.run").set_value("other").run()
    at.text_input(key="labels.path").input(str(path)).run()
    assert not at.exception, at.exception
    assert answer in [t.value for t in at.text] and "Al." in [t.value for t in at.text]
    labels = [c.value for c in at.caption] + [e.label for e in at.expander] + [w.label for w in at.selectbox]
    assert any(md(QID) in c for c in labels) and any(md(DOC_ID) in c for c in labels), labels
    assert not [label for label in labels if any(r in label for r in RAW)], labels
    _fill(at, picked=[answer])
    _press(at, "save")
    assert [t.value for t in at.toast] == [f"Saved {md(QID)}\\.", "No other case in the queue\\."]
    from backend.labels import dataset_key

    assert LabelStore(db).latest(dataset_key(load_dataset(folder)))[QID].answers == [answer]
