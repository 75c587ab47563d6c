"""Regenerate ``sample_data/`` deterministically from the raw files kept in ``sample_data/raw/``.

``python -m backend build-sample [--out DIR]`` calls :func:`build_sample`. Every random choice comes from
a numpy generator with a fixed seed (per question where possible), nothing depends on hash order, time
or the machine, so every run writes byte-identical files. The build reads nothing outside the repository.

Datasets (each a folder with ``questions.jsonl``, a ``README.md`` and, when multi-source, ``sources.json``):

* ``ramdocs_dev``: the 100 RAMDocs dev questions, converted as they are;
* ``multisource`` / ``multisource_beta``: RA-RAG-style 8-source benchmark (``multisource``),
  spammer–hammer and Beta(3, 2) reliability priors over the same question pool;
* ``scenarios``: BRIDGE/TRD-style FA / FI / FE / RA items (``scenarios``);
* ``poisonedrag_nq``: PoisonedRAG's NQ questions as an attack set (``poisonedrag``; not one of the app's bundled
  datasets: ``python -m backend attack --dataset sample_data/poisonedrag_nq``);

and ``vectors/``: the sentence vectors a first look on the bundled datasets needs, computed once
(``backend.sample.vectors``); ``prepared/``: their methods' dataset-level artefacts (RA-RAG's stage 1) with the
default model and settings (``backend.sample.prepared``).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np

from backend.data import BUNDLED, load_dataset, to_jsonl
from backend.paths import SAMPLE_DATA
from backend.sample.multisource import beta_sources, build_multisource, spammer_hammer_sources
from backend.sample.pools import IDK, WrongAnswers, load_candidates
from backend.sample.poisonedrag import poisonedrag_questions
from backend.sample.scenarios import build_scenarios
from backend.schema import DocLabel, Document, Question, Source

RAW = SAMPLE_DATA / "raw"
SEED_WRONG = 1101       # wrong answers per question (shared by every derived dataset)
SEED_MS = 2201          # source assignment, spammer–hammer
SEED_MS_BETA = 2202     # source assignment, Beta prior
SEED_BETA_P = 2203      # the Beta-prior reliabilities p_i
SEED_SCENARIOS = 3301
N_WRONG = 3             # wrong answers per question (RA-RAG uses 9; our pools are smaller)

LICENCE = """## Licence

Derived from data under the MIT licence; the derived data stays under those licences, and the notices
must accompany copies. The original files and their `LICENSE` / `SOURCE.md` notices are in
`sample_data/raw/`:

- RAMDocs (`raw/ramdocs/`): MIT License, Copyright (c) 2025 Han Wang (https://github.com/HanNight/RAMDocs).
- PoisonedRAG adversarial passages as redistributed by TrustRAG (`raw/poisonedrag_adv_targeted/`):
  MIT License, Copyright (c) 2025 Dawn (https://github.com/HuichiZhou/TrustRAG).
"""


# --- datasets -------------------------------------------------------------------------------------

def ramdocs_dev(path: Path) -> list[Question]:
    """RAMDocs dev lines as project questions; each document is its own source (``source`` absent)."""
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        row = json.loads(line)
        qid = f"ramdocs-{n:04d}"
        docs = [Document(id=f"{qid}-d{i}", text=d["text"],
                         label=DocLabel(type=d["type"], answer=None if d["answer"] == "unknown" else d["answer"]))
                for i, d in enumerate(row["documents"], start=1)]
        out.append(Question(id=qid, question=row["question"], documents=docs, gold_answers=row["gold_answers"],
                            wrong_answers=row["wrong_answers"],
                            meta={"disambig_entity": row["disambig_entity"], "origin": f"RAMDocs dev line {n}"}))
    return out


def build_sample(out_dir: Path, vectors: bool = True, prepared: bool = True) -> list[str]:
    """Write every sample dataset under ``out_dir`` and, unless ``vectors`` is False, their shipped sentence vectors
    (``vectors/``, ``backend.sample.vectors``: a minute or two of embedding), unless ``prepared`` is False, their
    methods' dataset-level artefacts (``prepared/``, ``backend.sample.prepared``: RA-RAG's stage 1, ~30 s); return
    one summary line per output."""
    out_dir = Path(out_dir)
    cands = load_candidates(RAW)
    picker = WrongAnswers(cands)
    wrongs = [picker.pick(c, N_WRONG, np.random.default_rng([SEED_WRONG, i])) for i, c in enumerate(cands)]
    paired = list(zip(cands, wrongs))
    sh, beta = spammer_hammer_sources(), beta_sources(SEED_BETA_P)
    built = {
        "ramdocs_dev": (ramdocs_dev(RAW / "ramdocs" / "RAMDocs_dev100.jsonl"), [], _readme_ramdocs),
        "multisource": (build_multisource(paired, sh, SEED_MS), sh, _readme_multisource("spammer–hammer")),
        "multisource_beta": (build_multisource(paired, beta, SEED_MS_BETA), beta, _readme_multisource("beta")),
        "scenarios": (build_scenarios([(c, list(w)) for c, w in paired], SEED_SCENARIOS), [], _readme_scenarios),
        "poisonedrag_nq": (poisonedrag_questions(RAW / "poisonedrag_adv_targeted" / "nq.json"), [],
                           _readme_poisonedrag),
    }
    lines = []
    for name, (questions, sources, readme) in built.items():
        folder = out_dir / name
        folder.mkdir(parents=True, exist_ok=True)
        _write(folder / "questions.jsonl", to_jsonl(questions))  # model field order, None fields left out
        if sources:
            _write(folder / "sources.json", json.dumps([s.model_dump() for s in sources], ensure_ascii=False,
                                                       indent=2) + "\n")
        _write(folder / "README.md", readme(questions, sources))
        n_docs = sum(len(q.documents) for q in questions)
        lines.append(f"{folder}: {len(questions)} questions, {n_docs} documents"
                     + (f", {len(sources)} sources" if sources else ""))
    if vectors:
        from backend.sample.vectors import build_vectors

        # the app's datasets only: a first look opens those (the attack set is a command-line input)
        lines.append(build_vectors(out_dir, [built[name][0] for name in BUNDLED]))
    if prepared:
        from backend.sample.prepared import build_prepared

        # loaded back from the files just written: the artefacts' keys hash the dataset as users load it
        lines.append(build_prepared(out_dir, [load_dataset(out_dir / name) for name in BUNDLED]))
    return lines


def _write(path: Path, text: str) -> None:
    path.write_bytes(text.encode("utf-8"))  # bytes: no platform newline translation


# --- READMEs (statistics computed from the generated questions) ------------------------------------

def _doc_types(questions: list[Question]) -> str:
    counts = Counter(d.label.type for q in questions for d in q.documents if d.label)
    per_q = [len(q.documents) for q in questions]
    return (f"- documents: {sum(per_q)} ({', '.join(f'{t} {counts[t]}' for t in ('correct', 'misinfo', 'noise'))}); "
            f"per question min {min(per_q)}, mean {np.mean(per_q):.2f}, max {max(per_q)}\n")


def _origins(questions: list[Question]) -> str:
    counts = Counter(" ".join(q.meta["origin"].split()[:2]) for q in questions)
    return "- questions by origin: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + "\n"


def _readme_ramdocs(questions: list[Question], _sources: list[Source]) -> str:
    n_gold = Counter(len(q.gold_answers) for q in questions)
    return (
        "# ramdocs_dev\n\nThe 100 RAMDocs development questions (`raw/ramdocs/RAMDocs_dev100.jsonl`: every fifth line "
        "of RAMDocs_test.jsonl) in the project format, unchanged apart from the layout: ids `ramdocs-NNNN` "
        "(line number), documents `ramdocs-NNNN-dK`, each document its own source (no `source`), labels from "
        "RAMDocs' `type`/`answer` (`unknown` -> no answer), `disambig_entity` and the line number in `meta`. "
        "No randomness.\n\n## Statistics\n\n"
        f"- questions: {len(questions)}\n" + _doc_types(questions)
        + "- gold answers per question: " + ", ".join(f"{k}: {n_gold[k]}" for k in sorted(n_gold)) + "\n\n"
        + LICENCE)


def _readme_multisource(prior: str):
    def readme(questions: list[Question], sources: list[Source]) -> str:
        if prior == "beta":
            how = (f"p_i ~ Beta(3, 2) (RA-RAG's Beta prior with mean w̄ = 0.6), drawn once with seed {SEED_BETA_P} "
                   f"and rounded to 3 decimals; assignment seed {SEED_MS_BETA}")
        else:
            how = f"spammer–hammer prior, p_i = 0.1 (spammer) or 0.9 (hammer), fixed; assignment seed {SEED_MS}"
        rows = []
        for s in sources:
            held = [q.meta["assignment"][s.name] for q in questions if q.meta["assignment"][s.name] != "none"]
            n_docs = sum(d.source == s.name for q in questions for d in q.documents)
            frac = sum(a == "correct" for a in held) / len(held) if held else float("nan")
            rows.append(f"| {s.name} | {s.true_reliability} | {s.coverage} | {len(held)} | {frac:.3f} | {n_docs} |")
        kinds = Counter(k for q in questions for k in q.meta["wrong_answer_kinds"].values())
        redrawn = sum(q.meta["coverage_redraws"] > 0 for q in questions)
        return (
            f"# {'multisource_beta' if prior == 'beta' else 'multisource'}\n\n"
            "An RA-RAG-style multi-source benchmark (docs/methods/ra_rag.md §5) over 8 sources `src-1`..`src-8`, "
            "built by "
            "`backend/sample/` from real questions: RAMDocs dev (`raw/ramdocs/`, first gold answer only, its "
            "correct and misinformation documents) and PoisonedRAG NQ / HotpotQA (`raw/poisonedrag_adv_targeted/`, "
            "correct answer, incorrect answer and the adversarial passages).\n\n"
            "Per question there is a pool of factual passages and one pool of misinformation passages per wrong "
            "answer. Answer substitution fills the pools: the gold answer in a factual passage is replaced by a "
            "wrong answer to make misinformation, and PoisonedRAG's incorrect answer in its adversarial passages is "
            "replaced by the correct answer to make factual passages; a substituted passage that still mentions the "
            "replaced answer is dropped. Wrong answers: the dataset's own, then perturbed numbers (numeric answers) "
            f"or answers of other questions with the same wh-phrase or type noun, up to {N_WRONG} (seed {SEED_WRONG}). "
            "A question is kept when it has at least 3 factual passages and a wrong answer with a misinformation "
            "passage. Per question and source: with probability r_i (coverage) the source holds up to 3 passages, "
            "drawn without replacement from the factual pool with probability p_i (true reliability), else from the "
            "pool of one wrong answer chosen uniformly. When no source is relevant the coverage draws are repeated "
            "(`meta.coverage_redraws`). `meta.assignment` records each source's draw.\n\n"
            f"Reliability: {how}.\n\n## Statistics\n\n"
            f"- questions: {len(questions)}\n" + _origins(questions) + _doc_types(questions)
            + f"- wrong answers: {sum(kinds.values())} ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})\n"
            + f"- questions whose coverage draws were repeated: {redrawn}\n\n"
            "| source | true reliability p_i | coverage r_i | questions held | fraction factual | documents |\n"
            "|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n\n" + LICENCE)
    return readme


def _readme_scenarios(questions: list[Question], _sources: list[Source]) -> str:
    cells = Counter((q.meta["scenario"], q.meta["temporal"]) for q in questions)
    with_mem = sum(q.internal_knowledge is not None for q in questions)
    twins = sum(bool(q.meta.get("memory_twin")) for q in questions)
    idk_gold = sum(q.gold_answers == [IDK] for q in questions)
    return (
        "# scenarios\n\nA BRIDGE/TRD-style set (docs/methods/bridge.md §5, \"synthetic mini-TRD\") built by "
        f"`backend/sample/` (seed {SEED_SCENARIOS}) from RAMDocs dev and PoisonedRAG NQ / HotpotQA questions "
        "with real answers. Each item has a simulated memory (`internal_knowledge`, absent for FE/RA perpetuation): "
        "a 1–2 sentence passage in the style of the documents, cut from the same pools and stating the memory's "
        "answer (the true one for FA/FI; for FE/RA evolution an outdated one, swapped in as misinformation is), "
        "with no template words; it is a passage other than the item's documents and their entity-swapped twins "
        "when the pool has one, else such a twin (`meta.memory_twin`). There are 1–2 short external passages "
        "(source `external`; 1–2 "
        "sentences cut from a real passage, entity-substituted where the scenario needs them wrong; every other "
        "item adds a RAMDocs noise passage or a second paraphrase) and 4 shuffled options (gold, two same-type "
        "wrong answers, \"I don't know\"). FA: memory and documents right. FI: memory right, documents wrong. "
        "FE: memory outdated (evolution) or absent (perpetuation), documents right. RA: memory outdated or "
        "absent, documents wrong; the gold is \"I don't know\" and the options hold three wrong answers. "
        "Evolution items carry a recency cue in the question. `meta` holds scenario, temporal, internal / "
        "external / true answer, origin and memory_twin.\n\n## Statistics\n\n"
        f"- questions: {len(questions)}\n" + _origins(questions)
        + "- by scenario: " + ", ".join(f"{s}/{t} {n}" for (s, t), n in cells.items()) + "\n"
        + f"- with internal knowledge: {with_mem} ({twins} a document's passage or its entity-swapped twin); "
        f"gold \"I don't know\": {idk_gold}\n"
        + _doc_types(questions) + "\n" + LICENCE)


def _readme_poisonedrag(questions: list[Question], _sources: list[Source]) -> str:
    clean = Counter(len(q.documents) for q in questions)
    return (
        "# poisonedrag_nq\n\nPoisonedRAG's NQ target questions (`raw/poisonedrag_adv_targeted/nq.json`) as an attack "
        "set for `python -m backend attack --dataset sample_data/poisonedrag_nq`. Gold: PoisonedRAG's correct answer; "
        "attack target: its incorrect answer. Clean documents: PoisonedRAG's own adversarial passages with the correct "
        "answer put back (it ships no clean passages); question i keeps 1 + (i mod 3) of them. The adversarial "
        "passages are kept in `meta.attack` (never shown to a method) and injected by the attack command. Questions "
        "whose answers the passages cannot be swapped in (yes/no, comparisons) are left out. No randomness.\n\n"
        "## Statistics\n\n"
        f"- questions: {len(questions)}\n" + _doc_types(questions)
        + "- clean documents per question: " + ", ".join(f"{k}: {clean[k]}" for k in sorted(clean)) + "\n"
        + f"- adversarial passages: {sum(len(q.meta['attack']['passages']) for q in questions)}\n\n"
        + LICENCE)
