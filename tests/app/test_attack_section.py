"""Evaluate page, "Attack a dataset" tab: an attack of 2 questions × k = 1 with two cheap methods runs on its worker
thread and shows its table (and its folder's summary.json); the same settings offer Resume, which runs nothing again;
other settings do not; a folder whose plans changed or that cannot be written gives a message, not a traceback;
an earlier folder opens with the same numbers."""

import json
import shutil

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")
TABLE = "attack success %"


def _section() -> AppTest:
    at = wait_for_runs(AppTest.from_file(APP, default_timeout=120).run())  # the home page's run, done
    at.switch_page("pages/evaluate.py").run()
    at.session_state["evaluate.tab"] = "Attack a dataset"  # what a click on the tab does
    at.run()
    assert not at.exception, at.exception
    return at


def _wait(at: AppTest) -> AppTest:
    """Wait for the attack's worker thread (the page polls it; AppTest runs no fragment timers), then rerun."""
    job = at.session_state["evaluate.attack_job"]
    job.thread.join(timeout=300)
    assert not job.running, "the attack did not finish in 300 s"
    at.run()
    assert not at.exception, at.exception
    return at


def _table(at):
    return next(f.value for f in at.dataframe if TABLE in f.value.columns)


def _errors(at) -> str:
    return " ".join(e.value for e in at.error).replace("\\", "")


@pytest.mark.slow  # the app's first run, then three attacks of 4 method runs each (about 70 s on 2 shared cores)
def test_attack_runs_resumes_refuses_and_opens():
    at = _section()
    assert not at.dataframe and not at.get("download_button")  # nothing shown before a run
    at.multiselect(key="evaluate.attack_methods").set_value(["vanilla_rag", "no_rag"]).run()
    at.multiselect(key="evaluate.attack_ks").set_value([1]).run()
    at.number_input(key="evaluate.attack_limit").set_value(2).run()
    assert "2 questions × 1 k × 2 methods = **4 method runs**" in " ".join(c.value for c in at.caption)
    at.button(key="evaluate.attack_run").click().run()
    _wait(at)

    table = _table(at)
    assert list(zip(table["method"], table["k"], table["n"])) == [("no_rag", 1, 2), ("vanilla_rag", 1, 2)]
    folder = at.session_state["evaluate.attack_job"].about.out_dir
    assert folder.parent.name == "attacks" and folder.name.startswith("ramdocs_dev-")
    written = json.loads((folder / "summary.json").read_text())
    assert {m: written[m]["1"]["n"] for m in written} == {"vanilla_rag": 2, "no_rag": 2}
    assert table.set_index("method").loc["vanilla_rag", TABLE] == written["vanilla_rag"]["1"]["attack_success_rate"]
    charts = {json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")}
    assert "Attack success per number of injected passages k" in charts
    assert [b.label for b in at.get("download_button")] == ["Summary (JSON)"]

    # the same settings: Resume that folder; every row is there, so nothing runs again
    resume = at.button(key="evaluate.attack_resume")
    assert folder.name in resume.label and "4 rows written" in resume.label
    rows = (folder / "results.jsonl").read_text()
    resume.click().run()
    job = _wait(at).session_state["evaluate.attack_job"]
    assert job.about.resume and job.about.out_dir == folder and job.error is None
    assert (folder / "results.jsonl").read_text() == rows
    assert list(_table(at)["n"]) == [2, 2]

    # other settings: no Resume
    at.multiselect(key="evaluate.attack_ks").set_value([1, 3]).run()
    assert not [b for b in at.button if b.key == "evaluate.attack_resume"]
    at.multiselect(key="evaluate.attack_ks").set_value([1]).run()

    # the folder's plans no longer match the dataset's (it was edited): a clear refusal
    settings = json.loads((folder / "attack.json").read_text())
    first = next(iter(settings["plans"]))
    settings["plans"][first]["target"] = "something else"
    (folder / "attack.json").write_text(json.dumps(settings))
    at.button(key="evaluate.attack_resume").click().run()
    _wait(at)
    assert "The attack failed" in _errors(at) and "other settings (plans)" in _errors(at)
    assert not at.dataframe  # the run's results are not shown beside its failure

    # the attacks folder cannot be written (a file in its way): a clear message
    root = folder.parent
    moved = root.with_name("attacks.moved")
    root.rename(moved)
    try:
        root.write_text("not a folder")
        at.button(key="evaluate.attack_run").click().run()
        _wait(at)
        assert "cannot write the attack folder" in _errors(at)
    finally:
        root.unlink()
        moved.rename(root)

    # open the earlier folder: the same numbers; a folder that is not an attack: a message
    at.radio(key="evaluate.attack_source").set_value("open").run()
    at.selectbox(key="evaluate.attack_folder").set_value(str(folder)).run()
    at.button(key="evaluate.attack_open").click().run()
    assert not at.exception, at.exception
    assert list(zip(_table(at)["method"], _table(at)["n"])) == [("no_rag", 2), ("vanilla_rag", 2)]
    at.selectbox(key="evaluate.attack_folder").set_value("another folder…").run()
    at.text_input(key="evaluate.attack_path").input(str(ROOT / "sample_data")).run()
    at.button(key="evaluate.attack_open").click().run()
    assert not at.exception, at.exception
    assert "not an attack folder" in _errors(at) and not at.dataframe
    shutil.rmtree(folder)
