"""Attack section shaping: the method × k table and its figures from a hand-made summary (values in the right cells,
one line per method, k numeric), the clean-documents slice, the fooled rows, earlier folders and their resume
match (reading the folders: tests/test_outputs.py)."""

import json

from backend.outputs import AttackRow, find_attacks, rows_written
from backend.schema.summary import AttackSummary
from components import attack as view


def _e(asr, acc, abst, n, errors=0, missing=0, by_clean=None):
    return {"attack_success_rate": asr, "accuracy": acc, "abstention": abst, "n": n, "errors": errors,
            "missing": missing, "by_clean_documents": by_clean or {}}


#: vanilla_rag before no_rag in the file, k "10" before "3" as strings: the shaping must reorder both.
SUMMARY = AttackSummary.model_validate({
    "vanilla_rag": {"10": _e(90.0, 5.0, 0.0, 20), "1": _e(20.0, 60.0, 10.0, 20, errors=1),
                    "3": _e(55.0, 30.0, 5.0, 19, missing=1,
                            by_clean={"4": _e(40.0, 50.0, 0.0, 10), "2": _e(70.0, 10.0, 10.0, 9)})},
    "no_rag": {"1": _e(0.0, 0.0, 100.0, 20), "3": _e(0.0, 0.0, 100.0, 20, by_clean={"2": _e(0.0, 0.0, 100.0, 20)}),
               "10": _e(None, None, None, 0, errors=20)},
})


def test_summary_frame_puts_each_rate_in_its_method_and_k_row():
    frame = view.summary_frame(SUMMARY)
    assert list(zip(frame["method"], frame["k"])) == [("no_rag", 1), ("no_rag", 3), ("no_rag", 10),
                                                      ("vanilla_rag", 1), ("vanilla_rag", 3), ("vanilla_rag", 10)]
    row = frame.set_index(["method", "k"]).loc[("vanilla_rag", 3)]
    assert (row["attack success %"], row["answer match (lenient) %"], row["abstention %"], row["n"], row["errors"],
            row["missing"]) == (55.0, 30.0, 5.0, 19, 0, 1)
    assert frame.set_index(["method", "k"]).loc[("vanilla_rag", 1), "errors"] == 1
    assert frame.set_index(["method", "k"])["attack success %"].isna().tolist() == [False, False, True,
                                                                                   False, False, False]


def test_rate_figure_one_line_per_method_with_k_numeric_on_x():
    fig = view.rate_figure(SUMMARY, "attack_success_rate")
    assert [t.name for t in fig.data] == ["no_rag", "vanilla_rag"]
    vanilla = fig.data[1]
    assert [row[0] for row in vanilla.customdata] == [1, 3, 10] and list(vanilla.y) == [20.0, 55.0, 90.0]
    # nudged apart so equal rates stay visible, each within a hair of its k
    assert [round(x) for x in vanilla.x] == [1, 3, 10] and list(vanilla.x) != list(fig.data[0].x)
    assert list(fig.layout.xaxis.tickvals) == [1, 3, 10]
    assert fig.layout.title.text == view.rate_title("attack_success_rate")
    abst = view.rate_figure(SUMMARY, "abstention")
    assert list(abst.data[0].y[:2]) == [100.0, 100.0] and list(abst.data[1].y) == [10.0, 5.0, 0.0]
    nothing = AttackSummary.model_validate({"a": {"1": _e(None, None, None, 0)}})
    assert "No data" in view.rate_figure(nothing).layout.annotations[0].text


def test_clean_documents_slice_for_one_k():
    frame = view.clean_documents_frame(SUMMARY, 3)
    assert list(zip(frame["method"], frame["clean documents"], frame["answer match (lenient) %"], frame["n"])) == [
        ("no_rag", 2, 0.0, 20), ("vanilla_rag", 2, 10.0, 9), ("vanilla_rag", 4, 50.0, 10)]
    fig = view.clean_documents_figure(SUMMARY, 3, "attack_success_rate")
    assert [t.name for t in fig.data] == ["no_rag", "vanilla_rag"]
    assert list(fig.data[1].x) == ["2 (n=20)", "4 (n=10)"] and list(fig.data[1].y) == [70.0, 40.0]
    assert list(fig.data[0].y[:1]) == [0.0] and str(fig.data[0].y[1]) == "nan"  # no_rag has no 4-document row
    assert view.clean_documents_frame(SUMMARY, 1).empty
    assert "No data" in view.clean_documents_figure(SUMMARY, 1).layout.annotations[0].text


def test_ks_sorted_numerically_and_the_cost():
    assert view.ks_of(SUMMARY) == [1, 3, 10]
    assert view.run_count(20, 3, 7) == 420


def _row(qid, k, method, answers, target="Lyon", error=None):
    return AttackRow.model_validate(
        {"question_id": f"{qid}~attack-k{k}", "method": method, "k": k, "attack_of": qid, "target": target,
         "clean_documents": 2, "result": {"method": method, "question_id": f"{qid}~attack-k{k}", "answers": answers,
                                          "error": error}})


def test_fooled_rows_are_those_whose_answers_include_the_target():
    rows = [_row("q1", 1, "a", ["Paris"]), _row("q1", 3, "a", ["Lyon", "Paris"]), _row("q1", 0, "a", ["Lyon"]),
            _row("q2", 1, "b", ["lyon"]), _row("q2", 1, "a", ["Lyon"], error="boom")]
    frame = view.fooled_frame(rows)
    assert frame.to_dict("records") == [
        {"question": "q1", "k": 3, "method": "a", "target": "Lyon", "answers": "Lyon; Paris"},
        {"question": "q2", "k": 1, "method": "b", "target": "Lyon", "answers": "lyon"}]


def _folder(root, name, **settings):
    folder = root / name
    folder.mkdir(parents=True)
    base = {"dataset": "d", "model": "offline/reader", "ks": [1, 3], "placement": "spread", "source": None,
            "questions": 5, "not_attacked": [], "plans": {}}
    (folder / "attack.json").write_text(json.dumps(base | settings))
    return folder


def test_earlier_attacks_newest_first_and_the_resume_match(tmp_path):
    import os

    old = _folder(tmp_path, "d-1")
    new = _folder(tmp_path, "d-2")
    _folder(tmp_path, "e-1", dataset="e")
    (tmp_path / "junk").mkdir()
    os.utime(old, (1, 1))
    found = find_attacks(tmp_path)
    assert [f for f, _ in find_attacks(tmp_path, "d")] == [new, old]
    assert len(found) == 3 and find_attacks(tmp_path / "none") == []
    wanted = view.wanted_settings("d", "offline/reader", [3, 1], "spread", "ignored", 5)
    assert view.resumable(found, wanted) == new
    assert view.differences(find_attacks(tmp_path, "d")[0][1], {**wanted, "ks": [1]}) == ["ks"]
    assert view.resumable(found, {**wanted, "questions": 6}) is None
    assert view.resumable(found, {**wanted, "dataset": "e"}) == tmp_path / "e-1"
    assert view.folder_label(new, find_attacks(tmp_path, "d")[0][1]) == "d-2 · k 1, 3 · 5 questions · spread"
    (new / "results.jsonl").write_text('{"a": 1}\n{"a": 2}\n\n{"a"')
    assert rows_written(new) == 3 and rows_written(old) == 0
