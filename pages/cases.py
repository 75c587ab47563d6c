"""Cases: the questions worth a look, by kind (only one method right, all wrong, debate talked an agent out of the
right answer, the attack fooled every method, the methods split by source), each opening in Inspect. From the
latest evaluation of the sidebar's dataset, else found on the fly for a small dataset with the offline model."""

import streamlit as st

from backend.cases import KINDS, TRUTH_KINDS, by_kind, find_cases
from backend.report.text import plural
from components.safe import md
from components.session import cases as source
from components.session import present
from components.session.navigation import ensure_navigation
from components.session.progress import follow
from components.session.state import key, require_selection

PAGE = "cases"
#: Cases listed per kind before "and N more".
SHOWN = 10
ensure_navigation()
st.title("Cases")
selection = require_selection(model_note=False)
ds = selection.dataset
show_truth = present.truth_toggle(help="Who was right comes from the gold answers: for the analyst, never shown to "
                                       "a method. Off: only the cases that need no truth (the methods split by "
                                       "source). The same setting on every page.")
if show_truth:
    st.caption("This view uses the ground truth (gold answers) to say who was right.")
else:
    st.caption("Turn on Show ground truth for the kinds that need it: "
               + ", ".join(KINDS[k].lower() for k in KINDS if k in TRUTH_KINDS) + ".")

job = source.current_job()
if job is not None and job.running:
    follow(job, "Finding cases", note="It goes on while you look at other pages; the cases will be here.")
    st.stop()
if job is not None and job.error:
    st.error(md(f"Finding cases failed: {job.error}"), icon=":material/error:")

found = source.latest_evaluation(ds) or source.found(ds)
small = len(ds.questions) <= source.MAX_ON_THE_FLY
if found is None:
    if not small:
        st.info(f"{md(ds.name)} has {len(ds.questions):,} questions: run an evaluation on the Evaluate page, and its "
                "cases will be listed here.")
        st.stop()
    st.info(f"No evaluation of {md(ds.name)} yet. Find cases runs every method on its "
            f"{plural(len(ds.questions), 'question')} with the offline model ({source.OFFLINE.model}: no cost; "
            "answers are cached).")
    if st.button("Find cases", type="primary", key=key(PAGE, "find")):
        source.start_find(selection)
        st.rerun()
    st.stop()

attack_rows = source.latest_attack_rows(ds) if show_truth else []
questions = {q.id: q for q in ds.questions}
cases = [c for c in find_cases(ds.questions, found.results, attack_rows) if show_truth or c.kind not in TRUTH_KINDS]
st.caption(f"From {md(found.label)}" + (f" (model {md(found.model)})" if found.model else "") +
           f" · {plural(len(found.results), 'question')}"
           + ("" if attack_rows else " · no attack of this dataset yet (Evaluate › Attack a dataset)"))
grouped = by_kind(cases)
if not grouped:
    st.info("No telling case among these questions: the methods agree, and are right, on every one.")


def _open(qid: str) -> None:
    st.session_state["app.question"] = qid  # the sidebar's question picker (components.session.sidebar)


for kind, label in KINDS.items():
    if kind not in grouped or (not show_truth and kind in TRUTH_KINDS):
        continue
    listed = grouped[kind]
    st.subheader(f"{label} ({len(listed)})")
    for case in listed[:SHOWN]:
        q = questions[case.question_id]
        box = st.container(border=True)
        box.markdown(f"**{md(q.id)}** · {md(q.question)}")
        right = ""  # who was right, where the why does not say it
        if show_truth and case.kind in ("talked_out", "source_split"):
            right = f" · right: {', '.join(present.title(m) for m in case.right) or 'none'} (of {len(case.scored)})"
        box.caption(md(case.why + right))
        # under the text, not in a narrow column: the label stays whole at 1024 px
        if box.button("Open in Inspect", key=key(PAGE, f"open.{kind}.{q.id}"), on_click=_open, args=(q.id,),
                      icon=":material/compare:"):
            st.switch_page("pages/inspect.py")
    if len(listed) > SHOWN:
        st.caption(f"and {len(listed) - SHOWN} more")
