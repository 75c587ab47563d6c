"""How a large dataset feels: 10,000 documents (1,000 questions × 10, 20 sources) and one 1 MB document.

    .venv/bin/python benchmarks/large_dataset.py [--out DIR]

Writes both datasets (deterministic), then for each (and, as the baseline, the bundled 48-question ``scenarios``)
prints: ``python -m backend validate`` (wall time, interpreter
start and imports included), loading in-process, and, in Debian's Chromium against a fresh app server (warmed up on
a bundled question first, so the embedding model is loaded), the first render of Inspect on the first question with
the cheap methods (no_rag, vanilla_rag: run by the offline model, cache empty) and of the Dataset page after it.
The LAST line printed is one JSON object. Timings depend on what else the machine runs.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CHEAP = ["no_rag", "vanilla_rag"]
NAMES = ["Ann", "Bob", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun"]
WORDS = ("archive report river council harbour museum treaty bridge station library orchard festival mill garden "
         "tower market chapel school canal theatre").split()


def write_many_documents(folder: Path, questions: int = 1_000, per_question: int = 10, sources: int = 20) -> Path:
    """A project-format folder with ``questions × per_question`` documents from ``sources`` named sources."""
    rng = random.Random(0)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "questions.jsonl", "w") as f:
        for q in range(1, questions + 1):
            thing = f"the {rng.choice(WORDS)} of {rng.choice(WORDS).title()}ville {q}"
            gold, wrong = rng.sample(NAMES, 2)
            docs = [{"id": f"q{q:04d}-d{d}", "source": f"src-{rng.randrange(sources):02d}",
                     "text": f"{gold if d % 3 else wrong} founded {thing} in {1800 + rng.randrange(200)}. "
                             f"Records of the {rng.choice(WORDS)} mention it {d} times."}
                    for d in range(1, per_question + 1)]
            f.write(json.dumps({"id": f"q{q:04d}", "question": f"Who founded {thing}?", "gold_answers": [gold],
                                "wrong_answers": [wrong], "documents": docs}) + "\n")
    return folder


def write_big_document(folder: Path, chars: int = 1_048_576) -> Path:
    """One question whose first document is ``chars`` characters of varied sentences (the answer in one of them)."""
    rng = random.Random(1)
    folder.mkdir(parents=True, exist_ok=True)
    sentences, size = [], 0
    while size < chars:
        s = f"The {rng.choice(WORDS)} near the {rng.choice(WORDS)} was repaired in {1800 + rng.randrange(200)}. "
        sentences.append(s)
        size += len(s)
    sentences.insert(len(sentences) // 2, "Ann wrote the town chronicle in 1921. ")
    row = {"id": "big", "question": "Who wrote the town chronicle?", "gold_answers": ["Ann"],
           "documents": [{"id": "big-d1", "source": "archive", "text": "".join(sentences)},
                         {"id": "big-d2", "source": "press", "text": "Bob wrote the town chronicle, says one paper."}]}
    (folder / "questions.jsonl").write_text(json.dumps(row) + "\n")
    return folder


def validate(path: Path) -> tuple[float, str]:
    """``python -m backend validate``: seconds and its output; raises if the dataset is refused."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "backend", "validate", str(path)], capture_output=True, text=True,
                          cwd=ROOT)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"validate refused {path}: {proc.stderr[-2000:]}")
    return seconds, proc.stdout.strip()


def load_seconds(path: Path) -> float:
    from backend.data import load_dataset

    start = time.perf_counter()
    load_dataset(path)
    return time.perf_counter() - start


def inspect_url(app_url: str, path: Path, methods=CHEAP) -> str:
    return f"{app_url}/?dataset={quote('file:' + str(path))}&methods={','.join(methods)}"


def first_renders(page, app_url: str, path: Path) -> dict[str, float]:
    """Seconds from opening the link to Inspect's results (and from clicking Dataset to that page), all drawn."""
    from tests.browser.walk import DRAWN_LAST, settle, show, wait_until

    start = time.perf_counter()
    page.goto(inspect_url(app_url, path), timeout=600_000)
    wait_until(page, DRAWN_LAST["Inspect"])
    settle(page)
    inspect_s = time.perf_counter() - start
    start = time.perf_counter()
    show(page, "Dataset")
    settle(page)
    return {"inspect_first_render_s": round(inspect_s, 2), "dataset_page_s": round(time.perf_counter() - start, 2)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=None, help="where to write the datasets (default: a temporary folder)")
    a = p.parse_args()
    out = Path(a.out or tempfile.mkdtemp(prefix="conflictlens-large-"))
    from backend.paths import SAMPLE_DATA

    datasets = {"10,000 documents": write_many_documents(out / "many"), "1 MB document": write_big_document(out / "big"),
                "baseline: scenarios (65 documents)": SAMPLE_DATA / "scenarios"}
    report = {}
    for label, path in datasets.items():
        seconds, said = validate(path)
        report[label] = {"validate_s": round(seconds, 2), "load_s": round(load_seconds(path), 3)}
        print(f"{label}: validate {seconds:.2f} s ({said}); load in-process {report[label]['load_s']:.3f} s",
              flush=True)

    import os
    import shutil

    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM_ARGS, app_server
    from tests.browser.walk import DRAWN_LAST, VIEWPORT, settle, wait_until

    env = dict(os.environ, CONFLICTLENS_CACHE_DIR=str(out / "cache"))  # cache empty: the methods really run
    with app_server(env) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(f"{url}/?dataset=ramdocs_dev&methods={','.join(CHEAP)}", timeout=600_000)  # loads the reader's model
        wait_until(page, DRAWN_LAST["Inspect"])
        settle(page)
        for label, path in datasets.items():
            page = browser.new_page(viewport=VIEWPORT)
            report[label] |= first_renders(page, url, path)
            print(f"{label}: first Inspect render ({', '.join(CHEAP)}) {report[label]['inspect_first_render_s']:.2f} s;"
                  f" Dataset page {report[label]['dataset_page_s']:.2f} s", flush=True)
            page.close()
        browser.close()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
