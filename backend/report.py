"""Terminal rendering of results for the CLI (rich tables); no logic beyond formatting."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from backend.schema import MethodResult, Question


def print_inspect(question: Question, results: dict[str, MethodResult]) -> None:
    console = Console()
    console.print(f"[bold]{question.id}[/bold]: {question.question}", markup=True, highlight=False)
    table = Table("method", "answers", "abstained", "calls (cached)", "wall s", "error")
    for name, r in results.items():
        cached = sum(c.cache_hit for c in r.calls)
        table.add_row(name, "; ".join(r.answers) or "—", "yes" if r.abstained else "no",
                      f"{len(r.calls)} ({cached})", f"{r.wall_s:.2f}", r.error or "")
    console.print(table)
