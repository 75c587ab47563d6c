"""The layout rules every chart shares (backend/report/layout.py), on small hand-built figures."""

import html

import plotly.graph_objects as go
import pytest

from backend.report.layout import (LABEL_CHARS, LEGEND_ROW_PX, NO_DATA, TITLE_PX, count_axis, legend_above,
                                   legend_rows, no_data, tick_text)


@pytest.mark.parametrize("largest, step", [(0, 1), (1, 1), (3, 1), (6, 1), (7, 2), (12, 2), (30, 5), (163, 50),
                                           (1000, 200)])
def test_count_axes_tick_whole_numbers_only(largest, step):
    axis = count_axis(largest)
    assert axis["dtick"] == step and isinstance(axis["dtick"], int) and axis["tick0"] == 0
    assert axis["tickformat"] == "d" and axis["tickmode"] == "linear" and axis["rangemode"] == "tozero"
    assert "rangemode" not in count_axis(largest, from_zero=False)  # iterations start at 1, not 0


def test_tick_text_cuts_long_labels_without_splitting_markup():
    assert tick_text("short") == "short"
    cut = tick_text(html.escape("a" * (LABEL_CHARS - 3) + "<b>&</b> and more"))
    assert html.unescape(cut) == "a" * (LABEL_CHARS - 3) + "<b…" and cut.endswith("&lt;b…")  # no half entity


def _bars(*names) -> go.Figure:
    fig = go.Figure()
    for n in names:
        fig.add_bar(name=n, x=["a"], y=[1])
    return fig


def test_legend_rows_follow_plotlys_layout():
    assert legend_rows(_bars("one")) == 0  # plotly draws no legend for a single trace
    assert legend_rows(_bars("a", "b")) == 1
    assert legend_rows(_bars(*[f"source-{i}" for i in range(40)])) > 5
    titled = _bars("a", "b")
    titled.update_layout(legend_title="kind")
    assert legend_rows(titled) == 2  # the title takes a row of its own


def test_the_legend_sits_between_title_and_plot_and_the_figure_grows_for_it():
    fig = _bars(*[f"source-{i}" for i in range(12)])
    fig.update_layout(height=400)
    legend_above(fig)
    assert_legend_clear_of_axis_titles(fig)
    assert fig.layout.height == 400 + LEGEND_ROW_PX * legend_rows(fig)  # the plot keeps its own height


def test_no_data_is_a_message_not_empty_axes():
    fig = no_data("Votes", "nothing was voted on <b>")
    assert not fig.data and fig.layout.title.text == "Votes"
    assert fig.layout.annotations[0].text == f"{NO_DATA}: nothing was voted on &lt;b&gt;"
    assert fig.layout.xaxis.visible is False and fig.layout.yaxis.visible is False


def assert_legend_clear_of_axis_titles(fig: go.Figure) -> None:
    """The legend lies in the top margin, between the title and the plot: never beside a y axis's title (right or
    left) nor under the plot where the x axis's title is."""
    legend, height = fig.layout.legend, fig.layout.height
    assert legend.orientation == "h" and legend.yref == "container" and legend.yanchor == "top"
    top = round((1 - legend.y) * height, 6)  # pixels, back from a fraction of the height
    assert top == pytest.approx(TITLE_PX) and top + LEGEND_ROW_PX * legend_rows(fig) <= fig.layout.margin.t
