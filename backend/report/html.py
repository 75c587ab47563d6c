"""A self-contained HTML report of one question's inspection (issue 27): the question's story (``backend.story``),
the results with their recorded timings (``backend.report.timing``), who agreed with whom, which documents each
answer rests on, each method's "why" from its trace (``backend.report.why``) and the documents. With the truth, each
method is scored by its own paper's metric under the paper's name beside the project's lenient verdict
(``backend.report.paper``); each method's section says which of its decisions depend on how its replies were read
(``backend.report.reading``: "2 of this method's 9 decisions depend on the tolerant reader: …", with every
difference in a table).

No script and no chart: the tables say what the Inspect page's charts say, and a report of seven methods stays far
under ``MAX_BYTES`` (plotly.js alone is 4.7 MB). Every piece of dataset or model text is HTML-escaped. [ours] The
documents are shown whole up to ``DOC_CHARS`` each and ``DOCS_CHARS`` in all, the rest counted, so a question with
very long documents still gives a report that opens at once.

The report carries a Content-Security-Policy (``CSP``) that allows nothing but its own stylesheet, named by its
SHA-256: no script runs, nothing is fetched (no image, font, frame or form target), whatever text slipped through;
so the one ``<style>`` is the only styling (no ``style=`` attribute: a document's border colour is a class).
"""

from __future__ import annotations

import base64
import hashlib

from backend.agreement import agree
from backend.llm.failures import classify_failure
from backend.methods import SPECS, title
from backend.methods.reading import other
from backend.report import timing
from backend.report.compare import AGREEMENT_MEANING, AGREEMENT_TITLE, OWN_METRIC, SUPPORT_TITLE, tokens
from backend.report.palette import KIND_COLORS, KIND_LABELS
from backend.report.paper import own_metric_cell, own_metric_text
from backend.report.reading import reading_text
from backend.report.text import html_text as _e
from backend.report.why import why_html
from backend.schema import Dataset, MethodResult, Question
from backend.scoring import doc_kind, verdict
from backend.story import StoryContext, story

#: How the report's first line says the replies were read (``backend.methods.reading``).
READ = {"tolerant": "replies read the tolerant way", "paper": "replies read by each paper's own rule"}
#: the issue's budget for one question's report with every method
MAX_BYTES = 1_500_000
DOC_CHARS = 6_000
DOCS_CHARS = 200_000

STYLE = """body{font-family:system-ui,sans-serif;margin:1.5rem auto;max-width:1200px;padding:0 1rem;color:#222;
line-height:1.45}h1{font-size:1.5rem;margin:.2rem 0 .6rem}h2{margin-top:2rem;border-bottom:1px solid #ddd}
h3{margin:1.6rem 0 .3rem}table{border-collapse:collapse;margin:.6rem 0}td,th{border:1px solid #ddd;
padding:.3rem .5rem;text-align:left;vertical-align:top;overflow-wrap:normal}th{background:#f5f5f5}
caption{text-align:left;font-weight:600;padding:.3rem 0;caption-side:top}.scroll{overflow-x:auto}
.muted{color:#666;font-size:.92em}.story{background:#f6f8fb;border-left:4px solid #1565c0;padding:.6rem 1rem}
.story .headline{font-size:1.15rem;font-weight:600;margin:.2rem 0 .5rem}.story li{margin:.25rem 0}
.doc{white-space:pre-wrap;border-left:4px solid #ccc;padding:.3rem .8rem;margin:.6rem 0}
td.agree{background:#c8e6c9}td.differ{background:#f4cccc}td.na{background:#eceff1}td.used{background:#bbdefb;
text-align:center}td.unused{text-align:center;color:#bbb}section.method{border-top:1px solid #eee}
.nw{white-space:nowrap}""" + "".join(f".doc.kind-{kind}{{border-color:{color}}}"
                                       for kind, color in KIND_COLORS.items())

#: Nothing loads or runs but the stylesheet above (a <meta> policy: the report is a file, served by no one).
CSP = ("default-src 'none'; "
       f"style-src 'sha256-{base64.b64encode(hashlib.sha256(STYLE.encode('utf-8')).digest()).decode('ascii')}'; "
       "base-uri 'none'; form-action 'none'")


def _name(method: str) -> str:
    """A method's display name for a table heading: a hyphenated word (RA-RAG) is kept on one line, never broken
    at its hyphen; the name may still wrap between words."""
    return " ".join(f"<span class='nw'>{_e(w)}</span>" if "-" in w else _e(w) for w in title(method).split(" "))


def _row(cells: list[str], tag: str = "td") -> str:
    """One row of cells already escaped by the caller."""
    return "<tr>" + "".join(f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>"


def _results_table(results: dict[str, MethodResult], question: Question, include_truth: bool) -> str:
    head = ["method"] + (["verdict (lenient)", OWN_METRIC] if include_truth else []) + \
        ["answers", "calls (cached)", "tokens", "time", "this run", "error"]
    rows = []
    for name, r in results.items():
        truth = [_e(verdict(r, question)), _e(own_metric_cell(r, question, name))] if include_truth else []
        cells = [_name(name)] + truth + \
            [_e("; ".join(r.answers) or ("abstained" if r.abstained else "—")),
             f"{len(r.calls)} ({timing.cached(r)})", f"{tokens(r):,}", _e(timing.first_run_text(r)),
             _e(timing.run_text(r)), _e(classify_failure(r.error).problem if r.error else "")]
        rows.append(_row(cells))
    scored = ("<p class='muted'>Verdict: the project's lenient match (a gold answer named in any word order, inside "
              "the answer or as a shorter form of exactly one gold answer), none of the papers' rules. Its paper's "
              "metric: the method's own paper's rule on this question, under the paper's name (EM (SQuAD): the "
              "normalised answer equals a gold answer; accuracy (gold in response): a gold answer inside the "
              "response; accuracy (RAMDocs exact match): every gold answer and no wrong one; risk / coverage: "
              "RC-RAG's fold of this question).</p>") if include_truth else ""
    return (f"<div class='scroll'><table>{_row([_e(h) for h in head], 'th')}{''.join(rows)}</table></div>{scored}"
            "<p class='muted'>Time: the wall time of the run that made the replies, as recorded then (a run "
            "answered from the reply cache shows the first run's time, not its cache read). This run: the wall "
            "time of this run.</p>")


def _agreement_table(results: dict[str, MethodResult]) -> str:
    names = list(results)
    words = {True: ("agree", "agree"), False: ("differ", "differ"), None: ("na", "failed")}
    rows = []
    for a in names:
        cells = []
        for b in names:
            cls, word = words[agree(results[a], results[b])]
            cells.append(f"<td class='{cls}'>{word}</td>")
        rows.append(f"<tr><th>{_name(a)}</th>{''.join(cells)}</tr>")
    head = "<tr><th></th>" + "".join(f"<th>{_name(n)}</th>" for n in names) + "</tr>"
    return (f"<h2>{_e(AGREEMENT_TITLE)}</h2><p class='muted'>{_e(AGREEMENT_MEANING)}</p>"
            f"<div class='scroll' id='agreement'><table>{head}{''.join(rows)}</table></div>")


def _support_table(results: dict[str, MethodResult], question: Question, ctx: StoryContext,
                   include_truth: bool) -> str:
    if not question.documents:
        return ""
    names = list(results)
    rows = []
    for d in question.documents:
        label = ctx.doc(d.id) + (f" · {KIND_LABELS[doc_kind(d)]}" if include_truth else "")
        cells = "".join("<td class='used'>●</td>" if any(d.id in ids for ids in results[n].support.values())
                        else "<td class='unused'>·</td>" for n in names)
        rows.append(f"<tr><th>{_e(label)}</th>{cells}</tr>")
    head = "<tr><th>document" + (" · true type" if include_truth else "") + "</th>" + \
        "".join(f"<th>{_name(n)}</th>" for n in names) + "</tr>"
    return f"<h2>{_e(SUPPORT_TITLE)}</h2><div class='scroll' id='support'><table>{head}{''.join(rows)}</table></div>"


def _documents(question: Question, include_truth: bool) -> str:
    docs, left = [], DOCS_CHARS
    for i, d in enumerate(question.documents):
        if left <= 0:
            docs.append(f"<p class='muted'>{len(question.documents) - i} more documents not shown here.</p>")
            break
        kind = doc_kind(d) if include_truth else "unlabelled"
        tag = ""
        if include_truth:
            tag = f" · {KIND_LABELS[kind]}" + (f" → {_e(d.label.answer)}" if d.label and d.label.answer else "")
        text = d.text[:min(DOC_CHARS, left)]
        cut = len(d.text) - len(text)
        left -= len(text)
        more = f"<div class='muted'>… {cut:,} more characters not shown</div>" if cut else ""
        docs.append(f"<div class='doc kind-{_e(kind)}'><div class='muted'>{_e(d.id)} · "
                    f"source {_e(d.source_name)}{tag}</div>{_e(text)}{more}</div>")
    return "<h2>Documents</h2>" + "".join(docs)


def _methods(results: dict[str, MethodResult], told, ctx: StoryContext, question: Question,
             include_truth: bool) -> str:
    parts = ["<h2>Why each method answered as it did</h2>"]
    for name, r in results.items():
        sentence = told.line(name) or ""
        what = SPECS[name].description if name in SPECS else ""
        why = why_html(r, ctx)
        parts.append(f"<section class='method' id='why-{_e(name)}'><h3>{_e(title(name))}</h3>"
                     + (f"<p class='muted'>{_e(what)}</p>" if what else "")
                     + f"<p>{_e(sentence)}</p>" + (_scored(name, r, question) if include_truth else "")
                     + f"<p class='muted'>{_e(timing.timing_sentence(r))}</p>" + _reading(r)
                     + (f"<div class='scroll'>{why}</div>" if why else "") + "</section>")
    return "".join(parts)


def _scored(name: str, result: MethodResult, question: Question) -> str:
    """Its own paper's metric on this question under the paper's name, beside the lenient verdict."""
    own = own_metric_text(result, question, name)
    if own is None:
        return ""
    return (f"<p class='scored'>{_e(own[0])} (its paper's metric): <b>{_e(own[1])}</b> · verdict by the "
            f"project's lenient match: {_e(verdict(result, question))}</p>")


def _reading(result: MethodResult) -> str:
    """Which decisions depend on how the replies were read (``backend.report.reading``): the line, and every
    difference in a table; with none, a quiet line. All model text escaped."""
    line = reading_text(result)
    if line is None:
        return ""
    if not result.reading_differences:
        return f"<p class='muted reading'>{_e(line)}</p>"
    used, unused = f"read ({result.reading}, used)", f"read ({other(result.reading)})"  # type: ignore[arg-type]
    rows = "".join(_row([_e(d.step), _e(d.call_id or "—"), _e(d.what or "—"), _e(d.used), _e(d.other)])
                   for d in result.reading_differences)
    head = _row([_e(h) for h in ("step", "call", "decision", used, unused)], "th")
    return f"<p class='reading'>{_e(line)}</p><div class='scroll'><table>{head}{rows}</table></div>"


def report_html(dataset: Dataset, question: Question, results: dict[str, MethodResult],
                include_truth: bool = True) -> str:
    """The whole report as one HTML string. ``include_truth`` False: no gold answer, verdict or document label."""
    ctx = StoryContext(question.id, {d.id: d.source for d in question.documents},
                       truth=question if include_truth else None)
    told = story(question, results, include_truth)
    truth = ""
    if include_truth:
        truth = (f"<p><b>Gold answers</b> (evaluation only; methods never saw them): "
                 f"{_e('; '.join(question.gold_answers) or '—')}<br><b>Wrong answers</b>: "
                 f"{_e('; '.join(question.wrong_answers) or '—')}</p>")
    models = sorted({c.model for r in results.values() for c in r.calls})
    readings = {r.reading for r in results.values()}
    read = READ.get(readings.pop(), "") if len(readings) == 1 else "replies read as each run says"
    lines = "".join(f"<li>{_e(m.sentence)}</li>" for m in told.methods)
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ConflictLens · {_e(question.id)}</title><style>{STYLE}</style></head><body>
<p class="muted">ConflictLens inspection · dataset {_e(dataset.name)} · question {_e(question.id)} · model \
{_e(', '.join(models) or '—')}{f' · {_e(read)}' if read else ''}</p>
<h1>{_e(question.question)}</h1>{truth}
<div class="story" id="story"><p class="headline">{_e(told.headline)}</p><ul>{lines}</ul></div>
<h2>Results</h2>{_results_table(results, question, include_truth)}
{_agreement_table(results)}
{_support_table(results, question, ctx, include_truth)}
{_methods(results, told, ctx, question, include_truth)}
{_documents(question, include_truth)}
</body></html>"""
