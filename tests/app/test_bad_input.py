"""Every malformed dataset of tests/fixtures/bad, typed into the sidebar's own-file picker: the sidebar says which
file, line and field is wrong and what is wrong with it; the page asks for a dataset; nothing raises."""

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import FIXTURES, ROOT
from tests.test_data import BAD, EXPECTED

APP = str(ROOT / "app.py")
#: Beside the fixtures: a path that is not there and a folder without questions.jsonl (line 0: the file itself).
NOT_DATASETS = {"no_such_file.jsonl": (0, "(file)", "no such file or folder"),
                "good": (0, "(folder)", "no questions.jsonl in this folder")}


@pytest.fixture(scope="module")
def picker():
    """One app session opened on "Your own file…" by a link (so no bundled question runs by itself first)."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["dataset"] = f"file:{BAD / 'empty.jsonl'}"
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="app.dataset").value == "Your own file…"
    return at


@pytest.mark.parametrize("name", sorted(EXPECTED) + sorted(NOT_DATASETS))
def test_bad_own_file_names_file_line_and_field(picker, name):
    path = (FIXTURES / name) if name in NOT_DATASETS else (BAD / name)
    line, field, words = NOT_DATASETS.get(name) or EXPECTED[name]
    at = picker
    at.text_input(key="app.own_path").input(str(path)).run()
    assert not at.exception, at.exception
    assert [e.value for e in at.sidebar.error] == ["This dataset cannot be loaded:"]
    shown = [c.value for c in at.sidebar.code]
    assert len(shown) == 1
    lines = shown[0].splitlines()
    assert any(ln.startswith(str(path)) and f":{line}: {field}: " in ln and words in ln for ln in lines), lines
    assert "Traceback" not in shown[0]
    # the main pane too: the first problem, every problem when there are more, and what to do (issue 27)
    main_errors = [e.value.replace("\\", "") for e in at.main.error]  # Markdown-escaped (components.safe.md)
    assert len(main_errors) == 1 and main_errors[0].startswith("This dataset cannot be loaded: "), main_errors
    assert str(path) in main_errors[0]
    assert [c.value for c in at.main.code] == ([shown[0]] if len(lines) > 1 else [])
    assert [i.value for i in at.main.info] == [
        "Fix the file and press R to load it again, or pick another dataset in the sidebar."]
