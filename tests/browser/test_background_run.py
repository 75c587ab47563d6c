"""A run survives the user, in a real browser: press Run on Inspect with a slow model server, go to another page
while the methods run, come back: every method's column is there, and each method asked the model once."""

import re

import pytest

from backend.llm.server import running_server
from backend.methods import SPECS
from tests.browser.walk import accept_unknown_price, ms, use_model, wait_until

pytestmark = pytest.mark.browser
METHODS = ["no_rag", "vanilla_rag"]  # one model call each


def test_a_run_goes_on_while_the_user_visits_another_page(app_url, browser):
    with running_server(latency_ms=5000) as model_server:  # every reply takes 5 s: the run is in flight a while
        page = browser.new_page(viewport={"width": 1400, "height": 1200})
        try:
            page.goto(f"{app_url}/calls", timeout=ms(90))  # a fresh server's first request can drop ?methods=
            wait_until(page, "cached replies in")
            page.goto(f"{app_url}/inspect?methods={','.join(METHODS)}", timeout=ms(90))
            wait_until(page, "Download this inspection as HTML")  # the offline model ran by itself; now a served one
            page.keyboard.press("Escape")  # a "Page not found" notice of the server's first requests, if any
            use_model(page, "hosted_vllm/reader", model_server.base_url)
            wait_until(page, "Press Run.")  # a hosted model waits for Run (nothing of it is in the reply cache)
            accept_unknown_price(page)  # litellm's price map does not list a self-hosted model
            page.get_by_role("button", name="Run", exact=True).click()
            wait_until(page, "running…")

            nav = page.get_by_test_id("stSidebarNav")
            nav.get_by_role("link", name="Model calls").click()
            wait_until(page, "cached replies in")
            nav.get_by_role("link", name="Inspect").click()

            wait_until(page, "Download this inspection as HTML")
            assert page.get_by_text(re.compile(r"^1 call · ")).count() == len(METHODS)  # one column per method
            for name in METHODS:  # the columns are headed by the methods' display names
                assert page.get_by_text(SPECS[name].title, exact=True).count() >= 1
            assert page.get_by_text("Press Run.").count() == 0
        finally:
            page.close()
        assert model_server.stats["requests"] == len(METHODS)  # not cancelled, not run again
