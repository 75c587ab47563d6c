"""backend.imports: a package's optional imports refused in one thread only; ROUGE-L unchanged without nltk's extras."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest

from backend.imports import without_optional
from tests.conftest import ROOT


@pytest.fixture
def fake_package(tmp_path, monkeypatch):
    """A package ``cl_fake_optional`` that no test has imported yet."""
    (tmp_path / "cl_fake_optional").mkdir()
    (tmp_path / "cl_fake_optional" / "__init__.py").write_text("VALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "cl_fake_optional"
    sys.modules.pop("cl_fake_optional", None)


def test_refused_in_this_thread_only_and_only_inside_the_block(fake_package):
    other: dict[str, object] = {}
    inside, done = threading.Event(), threading.Event()

    def import_elsewhere() -> None:
        inside.wait(10)
        try:
            other["value"] = __import__(fake_package).VALUE
        except ImportError as exc:  # pragma: no cover - the failure this test looks for
            other["value"] = exc
        done.set()

    thread = threading.Thread(target=import_elsewhere)
    thread.start()
    with without_optional(fake_package):
        with pytest.raises(ModuleNotFoundError, match=fake_package):
            __import__(fake_package)
        inside.set()
        assert done.wait(10)
    thread.join(10)
    assert other["value"] == 42  # another thread imported it while this one refused it
    assert __import__(fake_package).VALUE == 42  # after the block, this thread too


def test_already_loaded_packages_stay_importable(fake_package):
    __import__(fake_package)
    with without_optional(fake_package):
        assert __import__(fake_package).VALUE == 42


_ROUGE = """
import json, sys
PAIRS = [("The players were playing", "he played"), ("Paris is the capital", "capital of France: Paris"),
         ("running runners ran", "the runner runs"), ("3,559 people", "10,000 people"), ("generously", "generous")]
if sys.argv[1] == "ours":
    from backend.methods.counterfactual.parse import rouge_l_recall
    scores = [rouge_l_recall(p, r) for p, r in PAIRS]
    assert "scipy" not in sys.modules and "sklearn" not in sys.modules, "nltk's extras were loaded"
else:
    from rouge_score import rouge_scorer
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    scores = [scorer.score(r, p)["rougeL"].recall for p, r in PAIRS]
    assert "scipy" in sys.modules, "this reference run loads nltk with its extras"
print(json.dumps(scores))
"""


def test_rouge_without_nltk_extras_scores_as_rouge_score_with_them():
    """Each in a fresh interpreter: ours loads nltk without SciPy / scikit-learn, the reference with them."""
    def scores(which: str) -> list[float]:
        out = subprocess.run([sys.executable, "-c", _ROUGE, which], cwd=ROOT, capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    ours, reference = scores("ours"), scores("reference")
    assert ours == reference and 0 < min(ours) and max(ours) == 1.0
