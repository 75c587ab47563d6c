"""A self-contained HTML report of one question's inspection: plotly.js inlined, no network needed.

Every piece of dataset or model text is HTML-escaped; figures carry their data as JSON.
"""

from __future__ import annotations

from html import escape

import plotly.io as pio
from plotly.offline import get_plotlyjs

from backend.report import compare as view
from backend.report.palette import KIND_COLORS, KIND_LABELS
from backend.schema import Dataset, MethodResult, Question
from backend.scoring import doc_kind

STYLE = """body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1200px;color:#222}
table{border-collapse:collapse;width:100%;margin:1rem 0}td,th{border:1px solid #ddd;padding:.35rem .5rem;
text-align:left;vertical-align:top}th{background:#f5f5f5}.muted{color:#777;font-size:.9em}
.doc{white-space:pre-wrap;border-left:4px solid #ccc;padding:.3rem .8rem;margin:.6rem 0}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:1rem;align-items:start}"""


def _figure(fig) -> str:
    return pio.to_html(fig, full_html=False, include_plotlyjs=False, config={"displaylogo": False})


def _row(cells: list[str], tag: str = "td") -> str:
    return "<tr>" + "".join(f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>"


def report_html(dataset: Dataset, question: Question, results: dict[str, MethodResult],
                include_truth: bool = True) -> str:
    """The whole report as one HTML string."""
    e = escape
    head = ["method", "answers", "abstained", "error", "calls", "uncached", "tokens", "wall s"]
    if include_truth:
        head.append("verdict")
    rows = []
    for name, r in results.items():
        cells = [e(name), e("; ".join(r.answers) or "—"), "yes" if r.abstained else "no", e(r.error or ""),
                 str(len(r.calls)), str(sum(not c.cache_hit for c in r.calls)), str(view.tokens(r)),
                 f"{r.wall_s:.2f}"]
        if include_truth:
            cells.append(e(view.verdict(r, question)))
        rows.append(_row(cells))
    docs = []
    for d in question.documents:
        kind = doc_kind(d) if include_truth else "unlabelled"
        tag = f" · {KIND_LABELS[kind]}" + (f" → {e(d.label.answer)}" if include_truth and d.label and d.label.answer else "")
        docs.append(f"<div class='doc' style='border-color:{KIND_COLORS[kind]}'><div class='muted'>{e(d.id)} · "
                    f"source {e(d.source_name)}{tag if include_truth else ''}</div>{e(d.text)}</div>")
    truth = ""
    if include_truth:
        truth = (f"<p><b>Gold answers</b> (evaluation only; methods never saw them): "
                 f"{e('; '.join(question.gold_answers) or '—')}<br><b>Wrong answers</b>: "
                 f"{e('; '.join(question.wrong_answers) or '—')}</p>")
    models = sorted({c.model for r in results.values() for c in r.calls})
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>ConflictLens · {e(question.id)}</title><style>{STYLE}</style>
<script type="text/javascript">{get_plotlyjs()}</script></head><body>
<h1>ConflictLens inspection</h1>
<p class="muted">dataset {e(dataset.name)} · question {e(question.id)} · model {e(', '.join(models) or '—')}</p>
<h2>{e(question.question)}</h2>{truth}
<table>{_row([e(h) for h in head], "th")}{''.join(rows)}</table>
<div class="grid"><div>{_figure(view.agreement_figure(results))}</div>
<div>{_figure(view.support_figure(results, question, include_truth))}</div></div>
<h2>Documents</h2>{''.join(docs)}
</body></html>"""
