"""A team round in Chromium (issue 28), on SQLite and on a real PostgreSQL: the lead sets overlap 2; two analysts, each
in a browser context of their own, label the same six cases at once (blind: the other's label hidden until their own is
saved), disagreeing on two; the Agreement view's figures equal ``krippendorff.alpha`` / ``cohen_kappa_score``
computed here from the page's CSV export (read with the csv module, not ConflictLens); the lead opens each disputed
case from the agreement table and adjudicates it; ``evaluate --gold`` then scores 4 agreed + 2 adjudicated questions."""

import csv
import json
import os
import subprocess
import sys
from collections import defaultdict

import pytest

from backend.labels import LabelStore
from tests.app.test_labels_page import KEY, write_results
from tests.browser.conftest import app_server
from tests.browser.walk import ms, screenshot, wait_until
from tests.conftest import ROOT
from tests.servers import fresh_database, postgres_server

pytestmark = pytest.mark.browser
CASES = [f"ramdocs-000{i}" for i in range(2, 8)]
#: every case disagrees the same way (two answer groups): the queue is in dataset order
ROWS = {q: {"no_rag": [f"first {q}"], "vanilla_rag": [f"second {q}"], "astute": [f"first {q}"]} for q in CASES}
DISPUTED = {"ramdocs-0003", "ramdocs-0006"}  # where Ben's answer is not Ann's
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
DONE = "No case matching these filters needs your label."


def answer(analyst: str, qid: str) -> str:
    return f"other {qid}" if analyst == "Ben" and qid in DISPUTED else f"answer {qid}"


@pytest.fixture(scope="module")
def pg_server():
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def team_app(request, tmp_path, _session_cache_dir):
    cache = tmp_path / "cache"
    write_results(cache / "evaluations" / "ramdocs_dev-team", rows=ROWS)
    where = str(tmp_path / "labels.db") if request.param == "sqlite" else fresh_database(
        request.getfixturevalue("pg_server"), "team_round")
    env = {**os.environ, "CONFLICTLENS_CACHE_DIR": str(cache), "CONFLICTLENS_LABELS": where}
    with app_server(env) as url:
        yield url, where, request.param


def _open_as(browser, url: str, name: str):
    page = browser.new_context(viewport={"width": 1400, "height": 1100}).new_page()
    page.goto(url + "/labels?dataset=ramdocs_dev", timeout=ms(60))
    wait_until(page, "Save & next")
    box = page.get_by_role("textbox", name="Your name")
    box.fill(name)
    box.press("Enter")
    wait_until(page, lambda p: not p.get_by_text("Enter your name above to save labels.").count()
               and p.locator(IDLE).count(), f"{name}'s name taken")
    return page


def _case(page) -> str | None:
    return page.url.split("case=")[1].split("&")[0] if "case=" in page.url else None


def _fill(page, analyst: str, qid: str) -> None:
    typed = page.get_by_role("textbox", name="Other accepted answers, one per line")
    typed.fill(answer(analyst, qid))
    note = page.get_by_role("textbox", name="Note")
    note.fill(f"{analyst.lower()}'s note on {qid}")
    note.blur()
    wait_until(page, page.locator(IDLE), "the form's text taken in")


def _moved_on(page, qid: str):
    return lambda _p: (_case(page) != qid or page.get_by_text(DONE).count()) and page.locator(IDLE).count()


def _grid(page, n: int, width: int) -> list[list[str]]:
    """The rows of the n-th table (st.dataframe, ``width`` columns) on the page, read from its accessible cells."""
    cells = [c.inner_text() for c in page.locator('[data-testid="stDataFrame"]').nth(n)
             .locator('[role="gridcell"]').all()]
    return [cells[i:i + width] for i in range(0, len(cells), width)]


def _pick_row(page, n: int, row: int) -> None:
    """Select a row of the n-th table by its row marker (the checkbox column at the left of the canvas grid)."""
    box = page.locator('[data-testid="stDataFrame"]').nth(n).bounding_box()
    page.mouse.click(box["x"] + 15, box["y"] + 35 * (row + 1) + 17)


def _export(page, tmp_path) -> list[dict]:
    with page.expect_download() as got:
        page.get_by_role("button", name="Labels (CSV)").click()
    path = tmp_path / "export.csv"
    got.value.save_as(path)
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _figures_from_export(rows: list[dict]) -> tuple[float, float]:
    """α and κ of the accepted answers, from the export alone: each analyst's newest analyst version per question,
    the answers as a case-insensitive set."""
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    newest: dict[tuple[str, str], dict] = {}
    for r in rows:
        if r["kind"] == "analyst":
            k = (r["question_id"], r["analyst"])
            if k not in newest or int(r["version"]) > int(newest[k]["version"]):
                newest[k] = r
    values: dict[str, dict[str, str]] = defaultdict(dict)
    for (qid, who), r in newest.items():
        values[who][qid] = json.dumps(sorted({a.strip().casefold() for a in json.loads(r["answers"])}))
    qids = sorted(values["Ann"])
    ann, ben = [values["Ann"][q] for q in qids], [values["Ben"][q] for q in qids]
    codes = {v: i for i, v in enumerate(sorted(set(ann + ben)))}
    alpha = krippendorff.alpha(reliability_data=[[codes[v] for v in ann], [codes[v] for v in ben]],
                               level_of_measurement="nominal")
    return alpha, cohen_kappa_score(ann, ben)


def _gold(where: str, out) -> dict:
    done = subprocess.run([sys.executable, "-m", "backend", "evaluate", "--dataset", "sample_data/ramdocs_dev",
                           "--methods", "no_rag", "--gold", where, "--out", str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads((out / "summary.json").read_text())


def test_two_analysts_label_agree_and_the_lead_adjudicates(team_app, browser, tmp_path):
    url, where, backend = team_app
    ann = _open_as(browser, url, "Ann")
    ann.get_by_text("No labelling round").click()
    overlap = ann.get_by_role("spinbutton", name="Analysts per case")
    overlap.fill("2")
    overlap.press("Enter")
    lead = ann.get_by_role("textbox", name="Lead")
    lead.fill("Ann")
    lead.press("Enter")
    wait_until(ann, ann.locator(IDLE), "the round's fields taken in")
    ann.get_by_role("button", name="Set round").click()
    wait_until(ann, "2 analysts label each case · lead: Ann")
    ben = _open_as(browser, url, "Ben")
    wait_until(ben, "2 analysts label each case · lead: Ann")
    ben.get_by_text("2 analysts label each case").click()
    wait_until(ben, "Only the round's lead, Ann, changes it.")
    assert ben.get_by_role("button", name="Set round").is_disabled()  # only the lead changes the round

    for n in range(len(CASES)):
        qa, qb = _case(ann), _case(ben)
        assert qa == qb == CASES[n]  # both queues: the cases still needing their label, in the same order
        _fill(ann, "Ann", qa)
        _fill(ben, "Ben", qb)
        assert not ben.get_by_text("ann's note").count()  # blind: Ann's label never shown before Ben's is saved
        ann.get_by_role("button", name="Save & next").click()  # both at once
        ben.get_by_role("button", name="Save & next").click()
        wait_until(ann, _moved_on(ann, qa), "Ann's next case")
        wait_until(ben, _moved_on(ben, qb), "Ben's next case")
        if n == 2:
            ann.mouse.wheel(0, -20000)  # up to the queue (a wheel also ends the page's keep-the-case-in-view loop)
            ann.get_by_text("Queue:").click()
            wait_until(ann, lambda p: len(_grid(p, 0, 10)) >= 3, "the queue table")
            labels = {row[3]: row[6] for row in _grid(ann, 0, 10)}
            assert labels[CASES[3]] == "0 of 2 labels" and labels[CASES[4]] == "0 of 2 labels"
            ann.get_by_text("Queue:").scroll_into_view_if_needed()
            screenshot(ann, "team-round", backend, "queue")
    for page in (ann, ben):
        wait_until(page, DONE)
        wait_until(page, "6 of 6 cases have 2 of 2 labels")

    store = LabelStore(where)
    current = store.current(KEY)
    assert sorted(current) == CASES and all(sorted(c.analysts) == ["Ann", "Ben"] for c in current.values())
    assert store.count(KEY) == 12  # every save kept: one version per analyst and case
    assert {q: c.analysts["Ben"].answers for q, c in current.items()} == {q: [answer("Ben", q)] for q in CASES}

    # once saved, the other analyst's label is shown
    ben.get_by_text("yours", exact=True).click()
    wait_until(ben, "Other analysts' labels (1)")
    ben.get_by_text("Other analysts' labels (1)").click()
    wait_until(ben, "ann's note on")

    # agreement: the page's figures are the libraries' on the export
    ann.get_by_text("Agreement", exact=True).click()
    wait_until(ann, "Agreement between analysts")
    wait_until(ann, lambda p: len(_grid(p, 0, 6)) == 5 and len(_grid(p, 1, 3)) == 2, "the agreement tables")
    table = {row[0]: row for row in _grid(ann, 0, 6)}
    alpha, kappa = _figures_from_export(_export(ann, tmp_path))
    assert table["accepted answers"][1:5] == [f"{alpha:.3f}", "6", "67%", "2"]
    assert table["accepted answers"][5] == f"{kappa:.3f} (6)"
    assert table["unanswerable"][1] == "—"  # every label answerable: α undefined, said so
    assert sorted(row[0] for row in _grid(ann, 1, 3)) == sorted(DISPUTED)
    screenshot(ann, "team-round", backend, "agreement")
    before = _gold(where, tmp_path / "ev-before")["gold"]
    assert (before["agreed"], before["disputed"], before["adjudicated"]) == (4, 2, 0)

    # the lead opens a disputed case from the table, sees both labels side by side, settles both
    _pick_row(ann, 1, 0)
    wait_until(ann, "Adjudication")
    wait_until(ann, lambda p: _case(p) == sorted(DISPUTED)[0] and p.locator(IDLE).count(), "the picked case open")
    for n in range(2):
        qid = _case(ann)
        assert qid in DISPUTED
        wait_until(ann, lambda p, q=qid: p.get_by_text(f"answers: other {q}").count(), "Ben's label side by side")
        assert ann.get_by_text(f"answers: answer {qid}").count()
        if n == 0:
            screenshot(ann, "team-round", backend, "adjudication")
        typed = ann.get_by_role("textbox", name="Other accepted answers, one per line")
        typed.fill(f"settled {qid}")
        typed.blur()
        wait_until(ann, ann.locator(IDLE), "the final answer taken in")
        ann.get_by_role("button", name="Save & next").click()
        wait_until(ann, lambda p, q=qid: _case(p) != q or p.get_by_text("2 settled").count(), "the next case")
    settled = {q: c.adjudicated for q, c in store.current(KEY).items() if c.adjudicated}
    assert sorted(settled) == sorted(DISPUTED)
    for qid, lab in settled.items():
        assert (lab.analyst, lab.answers) == ("Ann", [f"settled {qid}"])
        assert sorted(lab.settles) == sorted(c.uid for c in current[qid].analysts.values())

    gold = _gold(where, tmp_path / "ev-after")["gold"]
    assert (gold["agreed"], gold["adjudicated"], gold["disputed"]) == (4, 2, 0)
    store.close()
