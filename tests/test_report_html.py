"""The HTML report (issue 27): one question's story and every method's "why" from its trace, under 1.5 MB, with the
timings recorded when the replies were made (not a cache read), and every piece of untrusted text escaped."""

from __future__ import annotations

import re
from html import escape

import pytest

from backend.data import load_dataset
from backend.llm.cache import CallCache
from backend.llm.client import LLMConfig
from backend.methods import METHODS
from backend.report.html import MAX_BYTES, report_html
from backend.report.text import duration
from backend.runner import Runner
from backend.story import story

DATASETS = {"ramdocs_dev": "sample_data/ramdocs_dev", "multisource": "sample_data/multisource"}


@pytest.fixture(scope="module", params=list(DATASETS))
def runs(request, tmp_path_factory):
    """Every method on the dataset's first question twice with one reply cache: made, then read from the cache."""
    ds = load_dataset(DATASETS[request.param])
    question = ds.questions[0]
    cache = CallCache(tmp_path_factory.mktemp("cache") / "llm_cache.sqlite")
    first = Runner(ds, llm=LLMConfig(cache_mode="live"), cache=cache).run(question, list(METHODS))
    again = Runner(ds, llm=LLMConfig(cache_mode="live"), cache=cache).run(question, list(METHODS))
    yield ds, question, first, again
    cache.close()


def section(html: str, method: str) -> str:
    """The method's "why" section of the report (empty when it is missing)."""
    m = re.search(rf"<section class='method' id='why-{method}'>(.*?)</section>", html, re.S)
    return m.group(1) if m else ""


def test_the_report_stays_small_and_runs_no_script(runs):
    ds, question, _, again = runs
    html = report_html(ds, question, again)
    assert len(html.encode("utf-8")) <= MAX_BYTES
    assert "<script" not in html.lower()  # no plotly.js (4.7 MB) and nothing to run


def test_the_report_tells_the_story(runs):
    ds, question, _, again = runs
    html = report_html(ds, question, again)
    told = story(question, again, show_truth=True)
    assert f"<p class=\"headline\">{escape(told.headline)}</p>" in html
    for m in told.methods:
        assert escape(m.sentence) in html


def test_each_method_has_its_why_with_facts_from_its_trace(runs):
    ds, question, _, again = runs
    html = report_html(ds, question, again)
    missing = [m for m in METHODS if not section(html, m)]
    assert not missing, f"no why-section for {missing}"

    ra = again["ra_rag"].trace
    why = section(html, "ra_rag")
    assert "Votes per answer" in why and "Per-source answers" in why
    for vote in ra.votes:
        score = getattr(vote, ra.variant)
        assert escape(vote.answer) in why and (score is None or f"{score:.3f}" in why)
    for s in ra.sources:
        assert f"{s.weight:.3f}" in why

    astute = again["astute"].trace
    why = section(html, "astute")
    for rnd in astute.rounds:
        assert f"Consolidation round {rnd.round}" in why
        for g in rnd.groups:
            assert f"<td>{escape(g.id)}" in why and (g.answer is None or escape(g.answer) in why)
    assert "★ picked" in why or not astute.final_groups

    madam = again["madam"].trace
    why = section(html, "madam")
    assert f"debated for {madam.stopped_at} of at most {madam.max_rounds} rounds" in why
    for rnd in madam.rounds:
        assert f"<th>round {rnd.round}</th>" in why
    assert all(f"Agent {a.number}" in why for a in madam.agents)

    cf = again["counterfactual"].trace
    why = section(html, "counterfactual")
    assert f"Decision: {cf.decision.upper()}" in why
    assert all(f"<td>{b.scenario}</td>" in why for b in cf.branches)

    bridge = again["bridge"].trace
    why = section(html, "bridge")
    assert f"Leaf {bridge.leaf} (" in why
    path = bridge.cycles[-1].path
    assert " → ".join([f"{n.node} {'yes' if n.result else 'no'}" for n in path] + [bridge.cycles[-1].outcome]) in why
    assert all(f"<td>{s}</td>" in why for s in ("S1", "S2", "S3", "S4"))

    for name in ("no_rag", "vanilla_rag"):
        assert "parsed answer" in section(html, name)


def test_a_cached_run_shows_the_times_recorded_when_the_replies_were_made(runs):
    ds, question, first, again = runs
    html = report_html(ds, question, again)
    for name, r in again.items():
        made = first[name]
        assert made.calls and all(not c.cache_hit for c in made.calls), name
        assert r.calls and all(c.cache_hit for c in r.calls), name
        # each reply keeps the latency of the call that made it, and the run the wall time of the run that made them
        latency = {c.id: c.latency_s for c in made.calls}
        assert {c.id: c.recorded_latency_s for c in r.calls} == latency, name
        assert r.first_run_s == made.wall_s, name
        assert made.first_run_s is None  # a run that made its replies is its own record
        row = re.search(rf"<tr><td>{re.escape(_title_cell(name))}</td>(.*?)</tr>", html, re.S).group(1)
        cells = re.findall(r"<td>(.*?)</td>", row)
        assert duration(made.wall_s) in cells, (name, cells)  # the first run's time, not the cache read
        assert f"{duration(r.wall_s)} (from the reply cache)" in cells
        assert f"the run that made the replies took {duration(made.wall_s)}" in section(html, name)


def _title_cell(name: str) -> str:
    from backend.report.html import _name

    return _name(name)


def test_without_the_truth_no_gold_or_verdict(runs):
    ds, question, _, again = runs
    html = report_html(ds, question, again, include_truth=False)
    assert "Gold answers" not in html and "verdict" not in html and "✓ gold" not in html
    assert "its paper" not in html and "EM (SQuAD)" not in html  # the papers' metrics are truth too
    assert "Gold:" not in html and "(right" not in html and "(wrong" not in html  # the story's truth words


def test_each_method_is_scored_by_its_own_papers_metric_beside_the_lenient_verdict(runs):
    from backend.report.paper import own_metric_cell, own_metric_text
    from backend.scoring import verdict

    ds, question, _, again = runs
    html = report_html(ds, question, again)
    head = re.search(r"<h2>Results</h2>.*?</tr>", html, re.S).group(0)
    assert "<th>verdict (lenient)</th><th>its paper&#x27;s metric</th>" in head
    names = {"ra_rag": "EM (SQuAD)", "bridge": "EM (SQuAD)", "no_rag": "EM (SQuAD)", "vanilla_rag": "EM (SQuAD)",
             "astute": "accuracy (gold in response)", "madam": "accuracy (RAMDocs exact match)",
             "counterfactual": "risk / coverage"}
    for name, r in again.items():
        own = own_metric_text(r, question, name)
        assert own[0] == names[name]
        row = re.search(rf"<tr><td>{re.escape(_title_cell(name))}</td>(.*?)</tr>", html, re.S).group(1)
        cells = re.findall(r"<td>(.*?)</td>", row)
        assert cells[:2] == [escape(verdict(r, question)), escape(own_metric_cell(r, question, name))], (name, cells)
        assert (f"{escape(own[0])} (its paper's metric): <b>{escape(own[1])}</b> · verdict by the project's "
                f"lenient match: {escape(verdict(r, question))}") in section(html, name)


def test_each_section_says_which_decisions_depend_on_the_reader(runs):
    from backend.schema.result import ReadingDifference

    ds, question, _, again = runs
    html = report_html(ds, question, again)
    assert "replies read the tolerant way</p>" in html.split("<h1>")[0]
    for name, r in again.items():
        assert r.decisions_read and not r.reading_differences  # the offline model's replies read alike both ways
        n = r.decisions_read
        quiet = (f"none of this method&#x27;s {n} decisions would be read otherwise" if n > 1 else
                 "this method&#x27;s one decision would not be read otherwise")
        assert f"<p class='muted reading'>Replies read the tolerant way: {quiet} by the paper&#x27;s rule.</p>" in (
            section(html, name)), name
    attack = "<script>alert(1)</script>"
    bridge = again["bridge"].model_copy(update={"decisions_read": 5, "reading_differences": [
        ReadingDifference(step="responder", call_id="c1", what="option", used="D", other="nothing (unreadable)"),
        ReadingDifference(step="<b>step</b>", what="option", used=attack, other="A & B")]})
    html = report_html(ds, question, {**again, "bridge": bridge})
    assert "<script" not in html.lower() and "<b>step</b>" not in html
    why = section(html, "bridge")
    line = ("2 of this method's 5 decisions depend on the tolerant reader: responder: option D (paper: nothing "
            f"(unreadable)); <b>step</b>: option {attack} (paper: A & B)")
    assert f"<p class='reading'>{escape(line)}</p>" in why
    assert "<th>read (tolerant, used)</th><th>read (paper)</th>" in why
    assert f"<td>{escape('<b>step</b>')}</td><td>—</td><td>option</td><td>{escape(attack)}</td>" in why
    paper = again["no_rag"].model_copy(update={"reading": "paper"})
    mixed = report_html(ds, question, {**again, "no_rag": paper})
    assert "replies read as each run says</p>" in mixed.split("<h1>")[0]


def test_untrusted_text_is_escaped(runs):
    ds, question, _, again = runs
    attack = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    hostile_doc = question.documents[0].model_copy(update={"text": attack + question.documents[0].text})
    q = question.model_copy(update={"documents": [hostile_doc, *question.documents[1:]]})
    results = dict(again)
    madam = results["madam"]
    rounds = [r.model_copy(update={"turns": [t.model_copy(update={"answer": attack}) for t in r.turns]})
              for r in madam.trace.rounds]
    results["madam"] = madam.model_copy(update={"trace": madam.trace.model_copy(update={"rounds": rounds}),
                                                "answers": [attack]})
    vanilla = results["vanilla_rag"]
    results["vanilla_rag"] = vanilla.model_copy(update={
        "trace": vanilla.trace.model_copy(update={"parsed_answer": attack, "parse_note": attack})})
    html = report_html(ds, q, results)
    assert "<script" not in html.lower() and "<img" not in html.lower()
    assert escape(attack) in section(html, "madam") and escape(attack) in section(html, "vanilla_rag")
    assert escape(attack) in html.split("<h2>Documents</h2>")[1]


def test_a_cache_written_before_latencies_were_kept_still_answers(tmp_path):
    """An older cache file (no latency column, no runs table) keeps its replies; their first times are unknown, and
    the report says so instead of showing the cache read."""
    import sqlite3

    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE calls (key TEXT PRIMARY KEY, model TEXT NOT NULL, response TEXT NOT NULL, "
               "prompt_tokens INTEGER, completion_tokens INTEGER, created REAL)")
    db.execute("INSERT INTO calls VALUES ('k', 'm', 'reply', 1, 2, 0)")
    db.commit()
    db.close()
    cache = CallCache(path)
    hit = cache.get("k")
    assert hit.response == "reply" and hit.latency_s is None
    assert cache.get_run("nothing") is None
    cache.close()
