"""Take a Chromium screenshot of a running ConflictLens page (for the README and for looking at changes).

usage: .venv/bin/python scripts/screenshot.py URL OUT.png [--click TEXT ...] [--wait-for TEXT] [--height PX]
"""

import argparse
import shutil

from playwright.sync_api import sync_playwright

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("out")
    p.add_argument("--click", action="append", default=[], help="text of an element to click, in order")
    p.add_argument("--wait-for", default=None, help="text that must appear before the shot")
    p.add_argument("--then-wait-for", default=None, help="text that must appear after the clicks")
    p.add_argument("--height", type=int, default=1400)
    p.add_argument("--width", type=int, default=1400)
    p.add_argument("--settle", type=float, default=1.5,
                   help="seconds to wait before the shot (charts and tables paint after the text)")
    a = p.parse_args()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
        page = browser.new_page(viewport={"width": a.width, "height": a.height})
        page.goto(a.url, timeout=90_000)
        if a.wait_for:
            page.get_by_text(a.wait_for).first.wait_for(timeout=90_000)
        for text in a.click:
            page.get_by_text(text, exact=True).first.click()
            page.wait_for_timeout(1500)
        if a.then_wait_for:
            page.get_by_text(a.then_wait_for).first.wait_for(timeout=180_000)
        page.wait_for_timeout(a.settle * 1000)
        page.screenshot(path=a.out)
        browser.close()


if __name__ == "__main__":
    main()
