"""Layout that fits the screen it is on (a 1024 px laptop as well as a wide monitor): the app's shared layout CSS
(``assets/layout.css``: badges and labels that wrap instead of being cut, words that break only between words)
and rows of columns that wrap onto more rows where they would not fit. Streamlit knows nothing of the browser's
width on the server, so how many columns fit per row is left to the browser (a CSS grid)."""

from __future__ import annotations

from pathlib import Path

CSS = Path(__file__).resolve().parent / "assets" / "layout.css"


def inject(st) -> None:
    """The layout CSS, once per script run: ``st.html`` given a CSS file's path wraps it in a style tag itself and
    puts it where it takes no space on the page."""
    st.html(CSS)


def card_columns(parent, n: int, key: str) -> list:
    """``n`` columns for one card each (a method's result), wrapping onto a new row when a card would be narrower
    than ~9.5rem; ``key``: unique on the page (it names the row for the CSS)."""
    return parent.container(key=f"cl-cards-{key}").columns(max(n, 1))


def chart_columns(parent, n: int, key: str) -> list:
    """``n`` columns for one chart each, stacked when a chart would be narrower than ~28rem (its title cut)."""
    return parent.container(key=f"cl-charts-{key}").columns(max(n, 1))
