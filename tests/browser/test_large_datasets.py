"""A dataset of 10,000 documents and one with a 1 MB document (written by ``benchmarks/large_dataset.py``, which also
times them): ``validate`` accepts both, and in Chromium the first question's Inspect (the cheap methods) and the
Dataset page render without an exception; the long document is shown cut, with a switch to show it all."""

import json
import subprocess
import sys

import pytest

from backend.methods import SPECS
from benchmarks.large_dataset import CHEAP, inspect_url, write_big_document, write_many_documents
from tests.browser.walk import DRAWN_LAST, VIEWPORT, exceptions, main_text, ms, settle, show, wait_until
from tests.conftest import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.mark.parametrize("write,said", [(write_many_documents, "1,000 questions, 10,000 documents, 20 named sources"),
                                        (write_big_document, "1 question, 2 documents")],
                         ids=["10k-documents", "1MB-document"])
def test_large_dataset_validates_and_renders(app_url, browser, tmp_path, write, said):
    path = write(tmp_path / "data")
    proc = subprocess.run([sys.executable, "-m", "backend", "validate", str(path)], capture_output=True, text=True,
                          cwd=ROOT)
    assert proc.returncode == 0 and said in proc.stdout, proc.stdout + proc.stderr
    page = browser.new_page(viewport=VIEWPORT)
    try:
        page.goto(inspect_url(app_url, path), timeout=ms(120))
        wait_until(page, DRAWN_LAST["Inspect"])
        settle(page)
        assert not exceptions(page)
        columns = page.get_by_test_id("stColumn").filter(has=page.get_by_test_id("stPageLink"))
        assert [c.inner_text().split("\n")[0] for c in columns.all()] == [SPECS[m].title for m in CHEAP]
        show(page, "Dataset")
        settle(page)
        assert not exceptions(page)
        if write is write_big_document:  # a preview, not a megabyte of text in the page
            chars = len(json.loads((path / "questions.jsonl").read_text())["documents"][0]["text"])
            assert chars >= 1_048_576
            assert f"show all {chars:,} characters" in main_text(page) and len(main_text(page)) < 100_000
    finally:
        page.close()
