"""A hostile model: every reply of serve-model (``reply_text``) is HTML, a Markdown image on a loopback server, a
script and LaTeX. Run through the app over HTTP with every method on a clean dataset, then every page visited: no
dialog opens, nothing fetches the image, no element is made from the reply, no LaTeX is typeset from it, and the
reply is on screen as the literal text it is. (tests/browser/test_hostile.py does the same for hostile data.)"""

import pytest

from backend.llm.server import running_server
from tests.browser.test_hostile import MADE_FROM_DATA, _watch_dialogs, pixel_server  # noqa: F401 - a fixture
from tests.browser.walk import (PAGES, VIEWPORT, accept_unknown_price, exceptions, main_text, ms, screenshot, settle,
                                show, use_model, wait_until)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

IMG = "<img src=x onerror=alert(2)>"
SCRIPT = "<script>alert(3)</script>"
REPLY = "<b>bold</b> " + IMG + " ![m](http://127.0.0.1:{port}/model.png) $\\sqrt{{m}}$ " + SCRIPT
TYPESET = "() => [...document.querySelectorAll('.katex annotation, .katex-mathml')].map(e => e.textContent)"


def test_a_hostile_model_s_replies_are_shown_as_text_on_every_page(app_url, browser, pixel_server):  # noqa: F811
    port, hits = pixel_server
    with running_server(reply_text=REPLY.format(port=port)) as model:
        page = browser.new_page(viewport=VIEWPORT)
        dialogs = _watch_dialogs(page)
        found: dict[str, dict] = {}
        try:
            page.goto(f"{app_url}/calls?dataset=scenarios", timeout=ms(120))  # a page that runs nothing
            wait_until(page, "cached replies in")
            use_model(page, "hosted_vllm/reader", model.base_url)
            settle(page)
            page.get_by_test_id("stSidebarNav").get_by_role("link", name="Inspect", exact=True).click()
            wait_until(page, "Press Run.")  # a hosted model waits for Run
            accept_unknown_price(page)  # once for the session: the other pages' runs do not ask again
            page.get_by_role("button", name="Run", exact=True).click()
            wait_until(page, "Download this inspection as HTML")
            for link in PAGES:
                show(page, link, calibration=5)
                settle(page)
                screenshot(page, "hostile-model", PAGES[link])
                text = main_text(page)
                found[link] = {"made": page.evaluate(MADE_FROM_DATA),
                               "typeset": [t for t in page.evaluate(TYPESET) if "sqrt" in t],
                               "exceptions": exceptions(page), "shown": IMG in text and SCRIPT in text}
        finally:
            page.close()
        requests = model.stats["requests"]
    bad = {link: {k: v for k, v in f.items() if v and k != "shown"} for link, f in found.items()}
    bad = {link: b for link, b in bad.items() if b}
    assert not bad, f"pages that made elements, typeset LaTeX or raised: {bad}"
    assert not dialogs, f"dialogs opened: {dialogs}"
    assert not hits, f"the image was fetched: {hits}"
    assert requests > 0, "the methods never asked the hostile model"
    # where a page shows the model's words as page text, they are the literal reply (the Debate page shows them in
    # a table, which the browser draws on a canvas: its screenshot shows them literally)
    shown = {link for link, f in found.items() if f["shown"]}
    assert {"Inspect", "Consolidation (Astute RAG)", "Risk (counterfactual prompting)", "Decision path (BRIDGE)",
            "Model calls"} <= shown, shown
