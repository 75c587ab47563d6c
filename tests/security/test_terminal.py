"""Finding 6 (terminals): the command line printed terminal escape sequences from dataset text and model replies (a
reply set the window title and cleared the screen). Now everything it prints goes through ``backend.terminal``: the
text stays, the control sequences do not, and ``--json`` keeps every value exactly (escaped).

The hostile reply comes from a real serve-model on loopback (``reply_text``); the CLI runs as a subprocess, as a user
runs it."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

import pytest

from backend.llm.server import running_server
from backend.terminal import clean, console, json_text, write_data
from tests.conftest import ROOT

TITLE = "\x1b]0;pwned\x07"          # sets the window title
CLEAR = "\x1b[2J"                    # clears the screen
LINK = "\x1b]8;;http://127.0.0.1:9/x\x1b\\click\x1b]8;;\x1b\\"  # a hyperlink (OSC 8)
C1 = "\x9b31m"                      # CSI in its 8-bit form
HOSTILE = f"Who{TITLE} designed{CLEAR} the{LINK} bridge{C1}?\rX"
#: what a terminal acts on: ESC, BEL, CR, the C1 controls
CONTROLS = ["\x1b", "\x07", "\r", "\x9b", "\x9d", "\x90"]


def _controls_in(text: str) -> list[str]:
    return [repr(c) for c in CONTROLS if c in text]


@pytest.mark.parametrize("text, expected", [
    (HOSTILE, "Who designed theclick bridge?X"),
    ("plain text\twith a tab\nand a newline", "plain text\twith a tab\nand a newline"),
    ("colour \x1b[1;31mred\x1b[0m", "colour red"),
    ("unterminated \x1b]0;title words after", "unterminated  words after"),  # the text after it stays
    ("bell\x07 backspace\x08 nul\x00 del\x7f", "bell backspace nul del"),
    ("8-bit OSC \x9d0;t\x9c done", "8-bit OSC  done"),
    ("DCS \x1bPq#0;2\x1b\\ done", "DCS  done"),
])
def test_clean_strips_sequences_and_keeps_the_text(text, expected):
    assert clean(text) == expected


def test_json_text_escapes_what_clean_would_drop_and_keeps_the_values():
    value = {"answer": HOSTILE, "del": "\x7f"}
    text = json_text(value)
    assert not _controls_in(text) and "\x7f" not in text
    assert json.loads(text) == value


def test_a_rich_console_prints_tables_without_sequences_and_keeps_its_own_colours():
    from rich.table import Table
    from rich.text import Text

    buf = io.StringIO()
    out = console(60, file=buf, force_terminal=True)
    table = Table("method", "answers")
    table.add_row("no_rag", Text(HOSTILE))
    out.print(table)
    out.print(Text(HOSTILE), "plain " + HOSTILE)
    printed = buf.getvalue()
    assert "\x1b[1m" in printed  # rich's own bold header is still drawn
    # rich's own styles are SGR sequences (HOSTILE holds none): nothing else may be left
    assert not _controls_in(re.sub(r"\x1b\[[0-9;]*m", "", printed)), repr(printed)
    assert "Who designed" in printed and "bridge?X" in printed


def test_an_export_to_a_terminal_is_cleaned_and_to_a_file_exact():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty, pipe = Tty(), io.StringIO()
    write_data(HOSTILE, tty)
    write_data(HOSTILE, pipe)
    assert not _controls_in(tty.getvalue()) and pipe.getvalue() == HOSTILE


def _hostile_dataset(tmp_path):
    data = tmp_path / f"data{TITLE}.jsonl"  # a file name from data is printed too (validate)
    data.write_text(json.dumps({"id": "q1", "question": HOSTILE,
                                "documents": [{"text": f"Ann{CLEAR} designed it."}]}) + "\n")
    return data


def _cli(*args: str, tmp_path) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "backend", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=300)


def test_inspect_prints_a_hostile_reply_and_question_without_sequences(tmp_path):
    data = _hostile_dataset(tmp_path)
    reply = f"Answer: Paris{TITLE}{CLEAR}{C1}"
    with running_server(reply_text=reply) as model:
        proc = _cli("inspect", "--dataset", str(data), "--question", "@1", "--methods", "no_rag",
                    "--model", "openai/reader", "--api-base", model.base_url, "--yes", "--cache-mode", "off",
                    "--cache-dir", str(tmp_path), tmp_path=tmp_path)
        assert model.stats["requests"] >= 1  # the hostile reply was really sent
        assert proc.returncode == 0, proc.stderr
        assert not _controls_in(proc.stdout + proc.stderr), proc.stdout
        assert "Paris" in proc.stdout and "Who designed the" in proc.stdout

        as_json = _cli("inspect", "--dataset", str(data), "--question", "@1", "--methods", "no_rag",
                       "--model", "openai/reader", "--api-base", model.base_url, "--yes", "--cache-mode", "off",
                       "--cache-dir", str(tmp_path), "--json", tmp_path=tmp_path)
    assert as_json.returncode == 0, as_json.stderr
    assert not _controls_in(as_json.stdout)
    shown = json.loads(as_json.stdout)  # the values themselves are kept, escaped
    assert shown["question"]["question"] == HOSTILE
    assert shown["results"]["no_rag"]["trace"]["raw_answer"] == reply


def test_validate_prints_problems_and_names_from_data_without_sequences(tmp_path):
    data = tmp_path / f"bad{TITLE}.jsonl"
    data.write_text(json.dumps({"id": "q1", "question": "ok?", "documents": [{"text": "x"}],
                                f"field{CLEAR}": 1}) + "\n")
    proc = _cli("validate", str(data), tmp_path=tmp_path)
    assert proc.returncode == 2
    assert not _controls_in(proc.stdout + proc.stderr), proc.stderr
    assert "unknown field" in proc.stderr and "Traceback" not in proc.stderr
