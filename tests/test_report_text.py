from backend.report.text import duration, plural, progress_text


def test_plural():
    assert plural(1, "document") == "1 document" and plural(0, "document") == "0 documents"
    assert plural(1112, "call") == "1,112 calls" and plural(2, "query", "queries") == "2 queries"


def test_duration_and_progress_with_an_eta():
    assert duration(0.421) == "0.42 s" and duration(34.4) == "34 s" and duration(185) == "3 min 05 s"
    assert progress_text("Stage 1", 0, 1600, 0.0) == "Stage 1: 0/1,600 calls · 0.00 s elapsed"
    assert progress_text("Stage 1", 400, 1600, 10.0) == "Stage 1: 400/1,600 calls · 10 s elapsed"  # measured only
    assert progress_text("Stage 1", 400, 1600, 10.0, left_s=30) == ("Stage 1: 400/1,600 calls · 10 s elapsed · "
                                                                    "about 30 s left")
    assert progress_text("Stage 1", 1600, 1600, 40.0).endswith("40 s elapsed")
    assert progress_text("x", 1, 1, 1.0, unit="question") == "x: 1/1 question · 1.00 s elapsed"
