"""The reading of replies as an app setting (backend.methods.reading): the sidebar's "Reading of replies" decides
the runs (``Runner(reading=...)``), keyed apart from the other reading's; RA-RAG's stage-1 tie rule on the Sources
page reaches the method's parameters."""

from streamlit.testing.v1 import AppTest

from components.session.runs import RESULTS_KEY
from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

APP = str(ROOT / "app.py")
METHODS = ["no_rag", "vanilla_rag"]


def _runs(at) -> dict:
    """The session's results by run key (every run so far)."""
    store = at.session_state[RESULTS_KEY]
    return {k: store.get(k) for k in store.keys()}


def test_switching_the_sidebar_reading_to_paper_runs_with_the_papers_reading():
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["methods"] = ",".join(METHODS)
    wait_for_runs(at.run())  # Inspect runs the offline model without a click
    assert not at.exception, at.exception
    assert at.radio(key="app.reading").value == "tolerant"  # the default
    assert not [c for c in at.sidebar.caption if "each paper's own rule" in c.value]
    tolerant = _runs(at)
    assert tolerant and {k.reading for k in tolerant} == {"tolerant"}
    assert {r.reading for rs in tolerant.values() for r in rs.values()} == {"tolerant"}

    at.radio(key="app.reading").set_value("paper").run()
    wait_for_runs(at)
    assert not at.exception, at.exception
    runs = _runs(at)
    paper = {k: rs for k, rs in runs.items() if k.reading == "paper"}
    assert paper, runs  # a run of its own: the tolerant results are not shown for the paper's reading
    results = next(iter(paper.values()))
    assert set(results) == set(METHODS) and {r.reading for r in results.values()} == {"paper"}
    assert all(not r.error for r in results.values())
    assert {k for k in runs if k.reading == "tolerant"} == set(tolerant)  # kept apart, still there
    assert [c for c in at.sidebar.caption if "each paper's own rule" in c.value]  # said outside the expander

    at.radio(key="app.reading").set_value("tolerant").run()  # back: the tolerant results, no new run
    wait_for_runs(at)
    assert len(_runs(at)) == len(runs)


def test_the_sources_page_passes_the_stage_1_tie_rule_to_ra_rag():
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["methods"] = "no_rag"  # keep the home page's automatic runs cheap
    at.run()
    at.selectbox(key="app.dataset").set_value("multisource").run()
    at.switch_page("pages/sources.py").run()
    assert not at.exception, at.exception
    ties = at.radio(key="sources.ties")
    assert ties.value == "skip" and ties.options == ["skip (default)", "source_order (released code)"]
    assert "released code" in ties.help and "source order" in ties.help
    at.number_input(key="sources.calibration").set_value(10).run()
    at.radio(key="sources.ties").set_value("source_order").run()
    wait_for_runs(at.button(key="sources.run").click().run())
    assert not at.exception, at.exception
    ra = {k: rs["ra_rag"] for k, rs in _runs(at).items() if "ra_rag" in rs}
    # the default is left out of the key (runs keyed as before); a reply cache warm from another test may have
    # answered the default already on opening the page
    assert all(k.params["ra_rag"].get("ties", "skip") == r.params["ties"] for k, r in ra.items())
    chosen = [r for k, r in ra.items() if k.params["ra_rag"].get("ties") == "source_order"]
    assert len(chosen) == 1 and chosen[0].params["ties"] == "source_order" and not chosen[0].error
