"""Every page readable on a laptop (1024×768) and at 1400×900, in a real Chromium: with every method run on one
bundled question (the truth overlay on, so verdict badges are drawn) and a What-if result on the page, no visible
text is cut by its box (an ellipsis, or overflow hidden) and no word is broken inside ("ra_r ag", "coun terfa
ctual") where a word of that length could sit on one line; no chart title runs out of its chart. One app server,
one browser context per width."""

import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.walk import DRAWN_LAST, PAGES, main_text, ms, open_page, screenshot, settle, show, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIDTHS = [(1024, 768), (1400, 900)]
QUESTION, DOC = "ramdocs-0001", "ramdocs-0001-d1"
#: A token longer than this (a URL, a hash, a file path) may break where it does not fit: nothing shorter may.
LONGEST_WORD = 30

#: The page's text problems, one dict each: ``kind`` ("cut", "broken word", "chart text cut"), ``text``, ``box``
#: (px) and ``needs`` (px). Skipped: canvas tables (st.dataframe draws no DOM text), code blocks (they scroll),
#: select boxes (a chosen option is shortened by design; the list shows it whole).
OVERFLOW_JS = r"""(longest) => {
  const out = [], seen = new Set();
  const skip = 'canvas, [data-testid="stDataFrame"], [data-testid="stCode"], pre, textarea, input, [data-baseweb="select"]';
  const shown = el => { const r = el.getBoundingClientRect(), s = getComputedStyle(el);
                        return r.width > 0 && r.height > 0 && s.visibility !== 'hidden'; };
  const say = el => (el.innerText || el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 80);
  const add = (kind, text, box, needs) => { const k = kind + text; if (!seen.has(k)) { seen.add(k);
    out.push({kind, text, box: Math.round(box), needs: Math.round(needs)}); } };
  for (const root of document.querySelectorAll('[data-testid="stMain"], [data-testid="stSidebar"]')) {
    // cut: text wider than a box that hides the rest
    for (const el of root.querySelectorAll('*')) {
      if (el.closest(skip) || el.closest('.js-plotly-plot') || !shown(el)) continue;
      const s = getComputedStyle(el);
      if (!(s.textOverflow === 'ellipsis' || ['hidden', 'clip'].includes(s.overflowX))) continue;
      if (el.scrollWidth > el.clientWidth + 1 && say(el)) add('cut', say(el), el.clientWidth, el.scrollWidth);
    }
    // broken word: a word (between the places a line may break) laid out on two lines; a longer token (an id
    // such as "counterfactual:rag_answer:5dad877f") must break where it does not fit
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || el.closest(skip) || el.closest('.js-plotly-plot') || !shown(el)) continue;
      const words = /[^\s\-\u200b–—]+/g;  // where Chromium may end a line without breaking a word
      for (let m; (m = words.exec(n.textContent));) {
        if (m[0].length < 2 || m[0].length > longest) continue;
        const range = document.createRange();
        range.setStart(n, m.index); range.setEnd(n, m.index + m[0].length);
        const rects = [...range.getClientRects()].filter(r => r.width > 0);
        if (new Set(rects.map(r => Math.round(r.top))).size > 1)
          add('broken word', m[0] + ' in ' + JSON.stringify(say(el)), el.clientWidth,
              rects.reduce((a, r) => a + r.width, 0));
      }
    }
    // a chart's title, axis title or legend outside the chart
    for (const svg of root.querySelectorAll('.js-plotly-plot .main-svg')) {
      const box = svg.getBoundingClientRect();
      for (const t of svg.querySelectorAll('.gtitle, .g-xtitle text, .g-ytitle text, .legendtext')) {
        const r = t.getBoundingClientRect();
        if (r.width && (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1))
          add('chart text cut', t.textContent.slice(0, 80), box.width, r.width);
      }
    }
  }
  return out;
}"""


def _whatif_result(page) -> None:
    """Remove one document and re-run, as a user does: the diff cards (headline and outcome badges) are drawn."""
    box = page.get_by_test_id("stMultiSelect").filter(has_text="documents to remove")
    option = page.get_by_role("option", name=DOC, exact=True)
    for _ in range(3):  # a click while the page still redraws can miss the list
        settle(page)
        box.click()
        try:
            option.wait_for(timeout=ms(5))
            break
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    option.click()
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Remove", exact=True).click()
    wait_until(page, "edited copy of")
    settle(page)
    page.get_by_role("button", name="Re-run on the edited question").click()
    wait_until(page, "Download the edited question")
    settle(page)


@pytest.mark.timeout(1200)
def test_no_text_is_cut_or_broken_at_laptop_and_desktop_widths(app_url, browser):
    problems = {}
    for width, height in WIDTHS:
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        try:
            page.goto(f"{app_url}/?dataset=ramdocs_dev&question={QUESTION}", timeout=ms(120))
            wait_until(page, DRAWN_LAST["Inspect"])  # every method's column is in
            settle(page)
            page.get_by_text("Show ground truth").first.click()  # verdict badges in the columns
            wait_until(page, page.locator(".stMarkdownBadge").filter(has_text=re.compile("^correct$")).first,
                       "a verdict badge")
            for link in PAGES:
                if link in DRAWN_LAST:
                    show(page, link)
                else:  # a page walk.py knows no last text of: its title, then the end of the script run
                    open_page(page, link)
                if link == "What-if":
                    _whatif_result(page)
                settle(page)
                assert PAGES[link] in main_text(page)
                if found := page.evaluate(OVERFLOW_JS, LONGEST_WORD):
                    problems[f"{link} at {width}px"] = found
                    screenshot(page, "overflow", link, str(width))
        finally:
            context.close()
    assert not problems, "text cut or broken inside a word:\n" + "\n".join(
        f"{where}: {p['kind']}: {p['text']!r} (box {p['box']} px, needs {p['needs']} px)"
        for where, found in problems.items() for p in found)
