"""Reports of runs, outside the app: rich tables on the terminal (``console``), a self-contained HTML page
(``html``), and the pieces they share with the dashboard (``compare``: the side-by-side comparison; ``palette``:
the colours).

The names below load their module on first use: ``html`` imports plotly and ``console`` rich, and light modules of
this package (``text``, used by ``validate``) must not pay for that."""

from importlib import import_module

_MODULES = {"print_evaluation": "console", "print_inspect": "console", "print_reliability": "console",
            "print_risk": "console", "report_html": "html"}
__all__ = list(_MODULES)


def __getattr__(name: str):
    if name in _MODULES:
        return getattr(import_module(f"backend.report.{_MODULES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
