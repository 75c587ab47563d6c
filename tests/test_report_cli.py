"""The CLI's terminal output treats dataset and model text as text, never as rich markup."""

import json
import subprocess
import sys

from tests.conftest import ROOT


def test_inspect_table_survives_markup_like_text(tmp_path):
    data = tmp_path / "q.jsonl"
    data.write_text(json.dumps({"id": "q[/0]", "question": "Who wrote [/0] and [red]this[/red]?",
                                "documents": [{"text": "[bold]Ann[/bold] wrote [/0] in 1900."}]}) + "\n")
    proc = subprocess.run([sys.executable, "-m", "backend", "inspect", "--dataset", str(data), "--question", "@1",
                           "--methods", "no_rag", "--cache-dir", str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "q[/0]" in proc.stdout and "[red]this[/red]" in proc.stdout
