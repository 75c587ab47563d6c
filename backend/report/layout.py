"""Layout rules every chart follows, in the HTML report and in the app (components import this module): heat maps
sized to their rows with every row labelled, count axes with whole-number ticks, legends clear of axis titles, and
a message instead of an empty frame.

Sizes are set explicitly rather than left to templates: the app's plotly template (Streamlit's) turns automargin
off, the report's (plotly's own) turns it on, and a chart must read the same in both.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence

import plotly.graph_objects as go

CHAR_PX = 7            # one tick-label character at plotly's 12 px font, rounded up (digits and capitals are wide)
LABEL_CHARS = 40       # longer labels are cut on the axis; the hover keeps the whole text
TITLE_PX = 50          # the chart title above the plot
AXIS_TITLE_PX = 40     # an axis title beside its tick labels, standoff included
STANDOFF_PX = 8        # between tick labels and the axis title
LEGEND_ROW_PX = 22     # one row of a horizontal legend
LEGEND_WIDTH_PX = 800  # a plot across the app's main column; a legend wider than estimated pushes the plot down
MIN_HEIGHT = 260       # below this a one-row chart is mostly title and axis titles
HEATMAP_CHART_PX = 540  # a heat map's whole width in half the report's page (the app's columns at 1,400 px too)
NO_DATA = "No data"


def tick_text(label: str, limit: int = LABEL_CHARS) -> str:
    """An (already escaped) label cut to ``limit`` characters for an axis. The text is cut, never the markup:
    unescape first so an entity such as ``&amp;`` is not split in half."""
    text = html.unescape(label)
    return label if len(text) <= limit else html.escape(text[:limit - 1] + "…")


def label_px(labels: Iterable[str]) -> int:
    """Width of the longest tick label, as shown on the axis (cut, unescaped)."""
    return CHAR_PX * max((len(html.unescape(tick_text(str(v)))) for v in labels), default=0)


def every_category(values: Sequence[str]) -> dict:
    """Axis settings that label every category: left alone, plotly drops labels when categories are dense."""
    values = [str(v) for v in values]
    return dict(type="category", tickmode="array", tickvals=values, ticktext=[tick_text(v) for v in values],
                automargin=True)


def size_heatmap(fig: go.Figure, row_px: int) -> go.Figure:
    """Sizes a one-trace heat map for its rows: the height grows with them (never below ``MIN_HEIGHT``), the left
    margin fits the longest row label plus the axis title, and every row and column carries its label."""
    heat = fig.data[0]
    rows, cols = list(heat.y), list(heat.x)
    left = label_px(rows) + AXIS_TITLE_PX
    plot_px = max(HEATMAP_CHART_PX - left - 10, 100)  # long row labels leave the columns less room
    slanted = len(cols) * (label_px(cols) + 16) > plot_px  # column labels that would collide: slant them
    bottom = AXIS_TITLE_PX + (int(0.75 * label_px(cols)) if slanted else 20)
    fig.update_layout(height=max(MIN_HEIGHT, TITLE_PX + bottom + row_px * len(rows)),
                      margin=dict(t=TITLE_PX, b=bottom, l=left, r=10))
    fig.update_yaxes(autorange="reversed", title_standoff=STANDOFF_PX, **every_category(rows))
    fig.update_xaxes(tickangle=-45 if slanted else 0, title_standoff=STANDOFF_PX, **every_category(cols))
    return fig


def count_axis(largest: float, ticks: int = 6, from_zero: bool = True) -> dict:
    """Axis settings for a count: ticks on whole numbers only (a step of 1, 2, 5, 10, 20, ...), never 0.5."""
    target = max(largest, 1) / ticks
    magnitude = 10 ** math.floor(math.log10(target)) if target >= 1 else 1
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= target)
    axis = dict(tickmode="linear", tick0=0, dtick=max(1, int(step)), tickformat="d")
    return axis | (dict(rangemode="tozero") if from_zero else {})


def legend_rows(fig: go.Figure, width_px: int = LEGEND_WIDTH_PX) -> int:
    """Rows a horizontal legend takes (none when hidden): one if every entry fits side by side, else plotly's
    grid of equal columns as wide as the widest entry; plus one for the legend's title."""
    names = [t.name or "" for t in fig.data if t.showlegend is not False]
    if fig.layout.showlegend is False or (fig.layout.showlegend is None and len(names) < 2):
        return 0  # plotly draws no legend for a single trace unless asked
    widths = [CHAR_PX * len(html.unescape(n)) + 40 for n in names]  # 40 px: the symbol and the gap after it
    per_row = max(1, width_px // max(widths, default=1))
    rows = 1 if sum(widths) <= width_px else math.ceil(len(widths) / per_row)
    return rows + bool(fig.layout.legend.title.text)


def legend_above(fig: go.Figure) -> go.Figure:
    """A horizontal legend under the title and above the plot, where it cannot cover an axis title (a legend on
    the right sits on a secondary y axis's title; one below, on the x axis's). The figure grows by the legend's
    rows, so the plot keeps its height; the legend hangs from just under the title, so one taller than estimated
    pushes the plot down instead of climbing into the title."""
    room = LEGEND_ROW_PX * legend_rows(fig)
    height = (fig.layout.height or 450) + room  # 450: plotly's default height
    fig.update_layout(legend=dict(orientation="h", x=0, xanchor="left", yref="container", y=1 - TITLE_PX / height,
                                  yanchor="top", title_side="top"),
                      title=dict(yref="container", y=1, yanchor="top", pad_t=14), margin_t=TITLE_PX + room,
                      height=height)
    return fig


def no_data(title: str, why: str, height: int = MIN_HEIGHT) -> go.Figure:
    """A chart with nothing to draw: its title and a sentence saying why, instead of empty axes."""
    fig = go.Figure()
    fig.add_annotation(text=f"{NO_DATA}: {html.escape(why)}", x=0.5, y=0.5, xref="paper", yref="paper",
                       showarrow=False, font=dict(size=14))
    fig.update_layout(title=title, height=height, margin=dict(t=TITLE_PX, b=20, l=20, r=20),
                      plot_bgcolor="rgba(0,0,0,0)")  # no grey plot area: there is no plot
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig
