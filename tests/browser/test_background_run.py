"""A run survives the user, in a real browser: press Run on Inspect with a slow model server, go to another page
while the methods run, come back: every method's column is there, and each method asked the model once."""

import re

import pytest

from backend.llm.server import running_server
from tests.browser.walk import use_model

pytestmark = pytest.mark.browser
METHODS = ["no_rag", "vanilla_rag"]  # one model call each


def _wait(page, text: str, timeout_s: float = 120) -> None:
    page.get_by_text(text).first.wait_for(timeout=timeout_s * 1000)


def test_a_run_goes_on_while_the_user_visits_another_page(app_url, browser):
    with running_server(latency_ms=5000) as model_server:  # every reply takes 5 s: the run is in flight a while
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        try:
            page.goto(f"{app_url}/calls", timeout=90_000)  # a fresh server's first request can drop ?methods=
            _wait(page, "cached replies in")
            page.goto(f"{app_url}/inspect?methods={','.join(METHODS)}", timeout=90_000)
            _wait(page, "Download this inspection as HTML")  # the offline model ran by itself; now a served one
            page.keyboard.press("Escape")  # a "Page not found" notice of the server's first requests, if any
            use_model(page, "hosted_vllm/reader", model_server.base_url)
            _wait(page, "Press Run.")  # a hosted model waits for Run (nothing of it is in the reply cache)
            page.get_by_role("button", name="Run", exact=True).click()
            _wait(page, "running…")

            nav = page.get_by_test_id("stSidebarNav")
            nav.get_by_role("link", name="Model calls").click()
            _wait(page, "cached replies in")
            nav.get_by_role("link", name="Inspect").click()

            _wait(page, "Download this inspection as HTML")
            assert page.get_by_text(re.compile(r"^1 call · ")).count() == len(METHODS)  # one column per method
            for name in METHODS:
                assert page.get_by_text(name, exact=True).count() >= 1
            assert page.get_by_text("Press Run.").count() == 0
        finally:
            page.close()
        assert model_server.stats["requests"] == len(METHODS)  # not cancelled, not run again
