"""Evaluate: methods over a whole dataset. Run them now on the sidebar's dataset (a batch evaluation on a worker
thread, with progress), or open the results.jsonl of an earlier run (e.g. the CLI's `evaluate`); then the summary
per method, charts, the questions with each method's verdict, and exports. A second tab attacks the dataset
(PoisonedRAG-style passages for a wrong answer, k of them per question) and shows, per method and k, how often the
attack succeeded (the CLI's `attack`)."""

import streamlit as st

from backend import outputs
from backend.data import bundled_datasets
from backend.llm.pricing import is_free
from backend.methods import METHODS
from backend.methods.reading import other
from components import attack as attack_view
from components import evaluate as view
from components.failures import render_failure
from components.reading import read_phrase
from components.safe import md
from components.session import attacks, evaluations, resources
from components.session.cost import confirmed
from components.session.navigation import ensure_navigation
from components.session.present import title
from components.session.progress import follow
from components.session.state import init_page_state, key, require_selection

PAGE = "evaluate"
SOURCES = {"run": "Run now", "open": "Open results"}
TABS = ["Evaluate methods", "Attack a dataset"]
ATTACK_SOURCES = {"run": "Run an attack", "open": "Open an attack"}
AVAILABLE = list(METHODS)
ensure_navigation()
init_page_state(PAGE, {"source": "run", "methods": AVAILABLE, "limit": 20, "max_cost": 0.0, "other_reading": True,
                       "path": "", "filter": "all",
                       "tab": TABS[0], "attack_source": "run", "attack_methods": AVAILABLE, "attack_ks": [1, 3, 5],
                       "attack_limit": 20, "attack_placement": "spread", "attack_source_name": "",
                       "attack_path": ""})
st.title("Evaluate")
selection = require_selection()
ds = selection.dataset
evaluate_tab, attack_tab = st.tabs(TABS, key=key(PAGE, "tab"), on_change="rerun")  # only the open tab runs


def _attack_run(shown: dict) -> None:
    choice = attack_view.render_controls(st, PAGE, AVAILABLE, len(ds.questions), selection.model.model)
    wanted = attack_view.wanted_settings(ds.name, selection.model.model, choice.ks, choice.placement, choice.source,
                                         choice.limit)
    earlier = (attack_view.resumable(outputs.find_attacks(attacks.attacks_root(), ds.name), wanted)
               if choice.ks else None)
    job = attacks.current()
    busy = job is not None and job.running
    # a hosted model: the estimate over every attacked question, and always a confirmation
    agreed = not choice.ready or confirmed(selection, choice.methods, PAGE, "attack", always=True,
                                           questions=attacks.attacked(selection, choice))
    cols = st.columns([1, 5], vertical_alignment="center")
    if cols[0].button("Run", type="primary", key=key(PAGE, "attack_run"),
                      disabled=busy or not choice.ready or not agreed):
        job = attacks.start(selection, **choice.settings())
    if earlier is not None and cols[1].button(
            f"Resume {earlier.name} ({outputs.rows_written(earlier):,} rows written)",
            key=key(PAGE, "attack_resume"), disabled=busy or not choice.ready or not agreed,
            help="An earlier attack of this dataset with these settings: run only its missing rows (the methods "
                 "it lacks included), then show it"):
        job = attacks.start(selection, **choice.settings(), resume_from=earlier)
    if job is None:
        return
    if job.running:
        follow(job, "Starting the attack",
               note=f"Writing to {md(str(job.about.out_dir))}. The attack goes on while you look at other pages.")
        st.stop()  # earlier results would be stale beside an attack in progress
    if job.error:
        shown.pop("run", None)  # an earlier attack's results beside this failure would read as its own
        st.error(md(f"The attack failed: {job.error}"), icon=":material/error:")
    elif job.value is not None:
        shown["run"] = job.value


def _attack_section() -> None:
    st.caption(attack_view.INTRO)
    shown = st.session_state.setdefault(key(PAGE, "attack_shown"), {})  # source -> the Attack it shows
    source = st.radio("attack", list(ATTACK_SOURCES), format_func=ATTACK_SOURCES.get, horizontal=True,
                      key=key(PAGE, "attack_source"), label_visibility="collapsed")
    if source == "run":
        _attack_run(shown)
    else:
        attack_view.render_open(st, PAGE, outputs.find_attacks(attacks.attacks_root()), shown, attacks.open_folder)
    if (attack := shown.get(source)) is None:
        st.info("Choose methods, k and the number of questions, then press Run; the attack runs in the background "
                "and can be resumed." if source == "run" else "Pick an attack folder and press Open.")
        return
    st.header("Attack results")
    attack_view.render_attack(st, attack, PAGE)


shown = st.session_state.setdefault(key(PAGE, "shown"), {})  # source -> the Evaluation it shows, for the session


def _run_now() -> None:
    st.caption(f"Dataset {md(ds.name)} (pick another in the sidebar) · model {md(selection.model.model)} · replies "
               f"{read_phrase(selection.model.reading)} (Model → Reading of replies)")
    n = len(ds.questions)
    if st.session_state[key(PAGE, "limit")] > n:
        st.session_state[key(PAGE, "limit")] = n
    cols = st.columns([5, 2, 2, 1.5], vertical_alignment="bottom")  # Run fits at 1024 px
    methods = cols[0].multiselect("methods", AVAILABLE, key=key(PAGE, "methods"), format_func=title)
    limit = cols[1].number_input(f"questions (the first N of {n})", 1, n, step=1, key=key(PAGE, "limit"))
    max_cost = cols[2].number_input("stop at US$ (0: no limit)", min_value=0.0, step=0.5, format="%.2f",
                                    key=key(PAGE, "max_cost"), disabled=is_free(selection.model.model),
                                    help="The run stops cleanly once its calls have cost this much: the rows written "
                                         "are kept and the summary says why it stopped. Needs a model whose price "
                                         "litellm's map knows.")
    both = st.checkbox(f"Also read the replies the {other(selection.model.reading)} way", key=key(PAGE, "other_reading"),
                       help="Every pair is run again with the other reading of replies, from the reply cache: no new "
                            "model call (a reply that reading would need and nobody asked for is not requested; the "
                            "offline models answer it). The summary then shows each method's metrics both ways.")
    job = evaluations.current()
    busy = job is not None and job.running
    agreed = confirmed(selection, methods, PAGE, "evaluate", questions=ds.questions[:int(limit)])
    if cols[3].button("Run", type="primary", key=key(PAGE, "run"), disabled=busy or not methods or not agreed):
        job = evaluations.start(selection, methods, int(limit), max_cost=max_cost or None, other_reading=both)
    if job is None:
        return
    if job.running:
        follow(job, "Starting the evaluation",
               note=f"Writing to {md(str(job.about.out_dir))}. The run goes on while you look at other pages.")
        st.stop()  # the previous results would be stale beside a run in progress
    if job.error:
        render_failure(st, "The evaluation failed:", job.error)
    elif job.value is not None:
        shown["run"] = job.value


def _find_dataset(name: str):
    """The dataset the rows name: the sidebar's when it is that one, else a bundled one; None when not loaded."""
    if name == ds.name:
        return ds
    bundled = bundled_datasets()
    return resources.dataset(bundled[name], name=name) if name in bundled else None


def _open_results() -> None:
    cols = st.columns([6, 1], vertical_alignment="bottom")
    path = cols[0].text_input("results.jsonl, or the folder holding it", key=key(PAGE, "path"),
                              placeholder="/path/to/out/results.jsonl",
                              help="Written by `python -m backend evaluate --out DIR` or by Run now (under the "
                                   "cache folder's evaluations/). The file is only read, never changed.")
    if cols[1].button("Open", type="primary", key=key(PAGE, "open")):
        try:
            ev = outputs.open_evaluation(path, _find_dataset, confined=True)  # the open folders only
            shown["open"] = ev  # with its other reading's metrics, when it ran one (backend.outputs rebuilds them)
            st.session_state[key(PAGE, "open_error")] = None
        except outputs.ResultsError as err:
            shown.pop("open", None)
            st.session_state[key(PAGE, "open_error")] = str(err)
    if error := st.session_state.get(key(PAGE, "open_error")):
        st.error(md(error), icon=":material/error:")


def _evaluation_section() -> None:
    source = st.radio("results", list(SOURCES), format_func=SOURCES.get, horizontal=True, key=key(PAGE, "source"),
                      label_visibility="collapsed")
    if source == "run":
        _run_now()
    else:
        _open_results()
    ev = shown.get(source)
    if ev is None:
        st.info("Choose methods and the number of questions, then press Run: every method answers every question "
                "(results are cached, so running again costs no model calls)." if source == "run" else
                "Enter the path of a results.jsonl (or its folder) and press Open.")
        return
    view.render_notes(st, ev)
    st.header("Summary")
    view.render_summary(st, ev, PAGE)
    st.header("Questions")
    link = view.dataset_param(ev.dataset, bundled_datasets()) if ev.dataset is not None else None
    frame = view.render_questions(st, ev, PAGE, link)
    if frame is None:
        st.info("Pick the dataset these results belong to in the sidebar to see each question's verdicts.")
    st.subheader("Export")
    view.render_exports(st, ev, frame, PAGE)


if attack_tab.open:
    with attack_tab:
        _attack_section()
else:
    with evaluate_tab:
        _evaluation_section()
