"""A long step survives a reload, in a real browser (issue 27): Inspect on a generated file whose RA-RAG stage 1 takes
a while (200 calibration questions × 20 sources, cold cache, the offline model) names the step RA-RAG waits for,
with its count, while the method that needs nothing long is already in; after a reload (a new session) the page
shows the same step again, its count not back at 0 and its clock not restarted, and the quick method at once (its
reply is cached); then every result comes in."""

import os
import re

import pytest

from backend.methods import title
from benchmarks.large_dataset import inspect_url, write_many_documents
from tests.browser.conftest import app_server
from tests.browser.walk import DRAWN_LAST, exceptions, ms, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]
METHODS = ["no_rag", "ra_rag"]
STEP = re.compile(rf"{re.escape(title('ra_rag'))} is waiting for RA-RAG stage 1 [^:]*: ([\d,]+)/([\d,]+) calls · "
                  r"(?:(\d+) min )?([\d.]+) s elapsed")
BARS = """() => [...document.querySelectorAll('[data-testid="stProgress"]')].map(e => e.innerText.trim())"""


def _step(page) -> tuple[int, int, float] | None:
    """The stage-1 bar's (done, total, seconds elapsed), if the page shows it."""
    for text in page.evaluate(BARS):
        if m := STEP.search(text):
            return (int(m[1].replace(",", "")), int(m[2].replace(",", "")),
                    60 * int(m[3] or 0) + float(m[4]))
    return None


def _bars(page) -> str:
    return "\n".join(page.evaluate(BARS))


def test_a_long_step_shows_again_after_a_reload_from_where_it_was(browser, tmp_path):
    data = write_many_documents(tmp_path / "open" / "slow", questions=200, per_question=20, sources=20)
    env = {**os.environ, "CONFLICTLENS_OPEN_FOLDERS": str(tmp_path / "open"),
           "CONFLICTLENS_CACHE_DIR": str(tmp_path / "cache")}  # a cold cache: stage 1 is computed
    with app_server(env=env) as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        try:
            page.goto(inspect_url(url, data, METHODS), timeout=ms(90))
            quick_in = f"1/2 methods done · still running: {title('ra_rag')}"  # the quick method's result is in

            def counting(p) -> bool:  # the step counting with the quick method in, or (too late) every result
                return ((s := _step(p)) is not None and s[0] > 0 and quick_in in _bars(p)
                        or p.get_by_text(DRAWN_LAST["Inspect"]).count() > 0)
            wait_until(page, counting, "the stage-1 step, counting, beside the quick method's result")
            done, total, elapsed = _step(page) or (0, 0, 0.0)
            assert 0 < done < total, "the run ended without the page naming the step RA-RAG waited for"

            page.reload(timeout=ms(90))
            seen: list[tuple[int, int, float]] = []

            def step_or_results(p) -> bool:  # the step again beside the quick method's result (its reply is a
                if (s := _step(p)) is not None and quick_in in _bars(p):  # cache read), or (too late) every result
                    seen.append(s)
                    return True
                return p.get_by_text(DRAWN_LAST["Inspect"]).count() > 0
            wait_until(page, step_or_results, "the stage-1 step after the reload")
            assert seen, "after the reload the page showed the results without ever naming the step it waited for"
            again, _, elapsed_again = seen[-1]
            assert again >= done and elapsed_again >= elapsed, (done, elapsed, again, elapsed_again)  # not restarted

            wait_until(page, DRAWN_LAST["Inspect"])
            assert not exceptions(page) and _step(page) is None
            for name in METHODS:
                assert page.get_by_text(title(name), exact=True).count() >= 1
        finally:
            page.close()
