"""Truth where the eye is, in a real Chromium at 1,400 px: the Inspect page's truth columns come first and its
heat maps keep their row labels inside the page; the HTML report's matrix and map row labels are inside the viewport too."""

import pytest

from tests.browser.conftest import write_report
from tests.browser.walk import ms, wait_until

pytestmark = pytest.mark.browser
WIDTH, HEIGHT = 1400, 1000


def _inside(box, outer) -> bool:
    """``box`` lies within ``outer`` (and horizontally within the viewport), 1 px of rounding allowed."""
    return (box is not None and box["x"] >= max(outer["x"], 0) - 1
            and box["x"] + box["width"] <= min(outer["x"] + outer["width"], WIDTH) + 1
            and ("y" not in outer or (box["y"] >= outer["y"] - 1
                                      and box["y"] + box["height"] <= outer["y"] + outer["height"] + 1)))


def _heatmap_labels_visible(page, chart) -> list[str]:
    """The y-axis row labels of one plotly heat map (and its axis title): each must be drawn inside the chart's
    own box and the viewport; the chart clips whatever sticks out on the left."""
    frame = chart.bounding_box()
    labels = chart.locator(".yaxislayer-above .ytick text")
    texts = []
    for i in range(labels.count()):
        label = labels.nth(i)
        text = label.text_content()  # SVG text: not an HTMLElement, so no inner_text
        assert _inside(label.bounding_box(), frame), f"row label {text!r} is cut off: {label.bounding_box()}"
        texts.append(text)
    title = chart.locator(".g-ytitle text")
    if title.count():
        assert _inside(title.first.bounding_box(), frame), f"the y-axis title is cut off: {title.first.bounding_box()}"
    return texts


def test_inspect_truth_columns_and_heatmap_labels_are_in_view(app_url, browser):
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    # Inspect is the home page: "/" (a running server answers "/inspect" with a "Page not found" dialog)
    page.goto(f"{app_url}/?dataset=ramdocs_dev&question=ramdocs-0007", timeout=ms(90))
    wait_until(page, "Agreement between methods")
    page.get_by_text("Show ground truth").first.click()
    wait_until(page, lambda p: p.get_by_text("its paper's metric").count() > 0, "the paper's metric column")  # attached
    table = page.locator('[data-testid="stDataFrame"]').first
    headers = [h.inner_text() for h in table.locator('[role="columnheader"]').all()]
    assert headers[:4] == ["method", "verdict", "all gold, no wrong (lenient)", "its paper's metric"], headers
    assert _inside(table.bounding_box(), {"x": 0, "width": WIDTH})
    charts = page.locator(".js-plotly-plot")
    wait_until(page, charts.nth(1), "the second chart")
    rows = _heatmap_labels_visible(page, charts.nth(1))  # which documents each answer rests on
    assert len(rows) >= 3 and all(" · " in r for r in rows), rows  # truth-tagged document labels
    page.close()


def _row_labels_visible(page, table) -> list[str]:
    """The row labels (first column) of one of the report's HTML tables: each inside the viewport and not cut
    (its text fits its cell)."""
    labels = table.locator("tr th:first-child")
    texts = []
    for i in range(labels.count()):
        label = labels.nth(i)
        assert _inside(label.bounding_box(), {"x": 0, "width": WIDTH}), f"row label {label.inner_text()!r} is cut off"
        assert label.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), f"{label.inner_text()!r} overflows its cell"
        texts.append(label.inner_text())
    return [t for t in texts if t.strip()]


def test_html_report_heatmap_labels_are_in_view(browser, tmp_path):
    """The report's agreement matrix and documents x methods map are HTML tables (no plotly: the report stays
    small): their row labels are in view."""
    out = write_report(tmp_path, "@7")
    context = browser.new_context(offline=True, viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    page.goto(out.as_uri())
    wait_until(page, page.locator("#support table"), "the report's documents x methods table")
    assert len(_row_labels_visible(page, page.locator("#agreement table"))) >= 4  # the methods
    assert len(_row_labels_visible(page, page.locator("#support table"))) >= 4    # the header + the documents
    context.close()
