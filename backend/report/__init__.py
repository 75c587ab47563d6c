"""Reports of runs, outside the app: rich tables on the terminal (``console``), a self-contained HTML page
(``html``), and the pieces they share with the dashboard (``compare``: the side-by-side comparison; ``palette``:
the colours)."""

from backend.report.console import print_evaluation, print_inspect, print_reliability, print_risk
from backend.report.html import report_html

__all__ = ["print_evaluation", "print_inspect", "print_reliability", "print_risk", "report_html"]
