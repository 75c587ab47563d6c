"""A method added by one ``MethodSpec`` (plus its trace and offline handler: ``tests/methods/toy_method.py``) exists
everywhere with no other file edited: ``resolve("all")``, the contract test, ``evaluate --methods all``, Inspect's
columns and the app's navigation, with a working generic page."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

from backend.llm.offline.registry import HANDLERS, forget_handler
from backend.llm.tasks import TASKS
from backend.methods import METHODS, SPECS, resolve, unregister
from backend.schema.trace import Trace, forget_kind
from tests.app.conftest import wait_for_runs
from tests.conftest import ROOT

TOY = "tests.methods.toy_method"


@pytest.fixture
def toy():
    module = importlib.reload(importlib.import_module(TOY))  # registers (again, after an earlier test's cleanup)
    yield module
    unregister(module.NAME)
    forget_kind("toy")
    forget_handler(module.TASK)


def test_the_toy_is_registered_everywhere_it_is_read(toy):
    assert "toy" in resolve("all") and resolve("all") == list(METHODS) == list(SPECS)
    assert resolve("all").index("toy") < resolve("all").index("no_rag")  # after the papers' methods, before baselines
    assert TASKS[toy.TASK].reader is toy.parse_short_answer and HANDLERS[toy.TASK] is toy.last_word
    assert Trace.kinds["toy"] is toy.ToyTrace
    assert SPECS["toy"].role("read") == "read the first passage"


def test_unregistering_removes_every_trace_of_it(toy):
    unregister("toy")
    assert "toy" not in resolve("all") and toy.TASK not in TASKS
    importlib.reload(toy)  # for the fixture's cleanup


@pytest.mark.slow
def test_the_contract_test_covers_the_toy():
    """The contract test, loaded with the toy as a plugin (as a third-party method would be imported), collects and
    passes every one of its checks for it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", TOY, "tests/methods/test_contract.py", "-k", "toy",
                           "-q", "-p", "no:cacheprovider", "--no-header", "-o", "addopts="],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    summary = proc.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "deselected" in summary and "failed" not in summary, summary
    assert int(summary.split(" passed")[0].split()[-1]) >= 10, summary  # every parametrised check, not one


def test_evaluate_methods_all_runs_the_toy(toy, tmp_path):
    from backend.cli import main

    out = tmp_path / "eval"
    rc = main(["evaluate", "--dataset", str(ROOT / "sample_data" / "ramdocs_dev"), "--methods", "all", "--limit", "2",
               "--out", str(out), "--cache-dir", str(tmp_path / "cache")])
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["methods"]) == list(SPECS) and summary["methods"]["toy"]["n"] == 2
    assert summary["methods"]["toy"]["errors"] == 0
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sum(r["method"] == "toy" for r in rows) == 2


def test_inspect_shows_a_toy_column_and_the_menu_a_generic_page(toy):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params.update(methods="toy,vanilla_rag", question="ramdocs-0001")  # not the featured case
    at = wait_for_runs(at.run())
    assert not at.exception, at.exception
    frame = next(f.value for f in at.dataframe if "method" in f.value.columns)
    titles = [SPECS["toy"].title, SPECS["vanilla_rag"].title]  # Inspect names methods by their display names
    assert list(frame["method"]) == titles and not any(frame["error"])
    assert titles[0] in {m.value.strip("*") for m in at.markdown}

    from components.views import views

    generic = next(v for v in views() if v.method == "toy")
    assert generic.page is None and generic.url_path == "toy" and generic.section == "Methods"
    at._page_hash = calc_hash(generic.url_path)  # AppTest.switch_page takes page files only; the toy's is a function
    at = wait_for_runs(at.run())
    assert not at.exception, at.exception
    assert at.title[0].value == "Toy method"
    assert "1888" in [t.value for t in at.text]  # its answer (the first question's first passage), as text
    facts = next(f.value for f in at.dataframe if "fact" in f.value.columns)
    assert dict(zip(facts["fact"], facts["value"]))["document read"].endswith("-d1")
    calls = next(f.value for f in at.dataframe if "role" in f.value.columns)
    assert list(calls["role"]) == ["read the first passage"]
