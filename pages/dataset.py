"""Dataset: questions, the selected question's documents by source, sources and document types."""

from contextlib import nullcontext

import streamlit as st

from backend.report.text import plural
from backend import steps
from backend.retrieval import RetrievalError
from backend.runner import INDEX_STAGE, build_published, index_step
from components import dataset as view
from components.dataset import hits_frame
from components.documents import render_document
from components.safe import md
from components.session import progress, resources
from components.session.present import truth_toggle
from components.session.navigation import ensure_navigation
from components.session.state import init_page_state, key, require_selection

ensure_navigation()

PAGE = "dataset"
st.title("Dataset")
selection = require_selection(model_note=False)

ds, question = selection.dataset, selection.question
n_docs = sum(len(q.documents) for q in ds.questions)
cols = st.columns(4)
cols[0].metric("questions", len(ds.questions))
cols[1].metric("documents", n_docs)
cols[2].metric("named sources", len(ds.source_names()) if ds.multi_source else "—",
               help=None if ds.multi_source else "Documents name no source: each document is its own source.")
cols[3].metric("format", ds.format)
for note in ds.notes:
    st.caption(f"Note: {md(note)}")

show_truth = truth_toggle(st, help="Overlay document labels, gold/wrong answers and true source reliability. "
                                   "Methods never see these.")

st.subheader("Selected question")
st.text(question.question)
st.caption(f"{md(question.id)} · {plural(len(question.documents), 'document')}")
if show_truth:
    truth = st.columns(2)
    truth[0].markdown("**Gold answers**")
    truth[0].text("; ".join(question.gold_answers) or "—")
    truth[1].markdown("**Wrong answers**")
    truth[1].text("; ".join(question.wrong_answers) or "—")
if question.internal_knowledge:
    with st.expander("What the simulated model remembers (internal knowledge)"):
        st.text(question.internal_knowledge)

st.subheader("Documents by source")
groups = view.documents_by_source(question) if ds.multi_source else {"each document is its own source":
                                                                     question.documents}
for source, docs in groups.items():
    with st.expander(f"{md(source)} · {len(docs)} document{'s' * (len(docs) != 1)}", expanded=len(groups) <= 3):
        for doc in docs:
            render_document(st, doc, show_truth, key_prefix=PAGE)

st.subheader("Sources")
if ds.multi_source:
    st.dataframe(view.source_table(ds, show_truth), hide_index=True)
else:
    st.caption("This dataset's documents name no source, so each document is treated as its own source.")
st.plotly_chart(view.docs_per_type_figure(ds, show_truth))

st.subheader("All questions")
st.dataframe(view.question_table(ds), hide_index=True, height=300)

st.subheader("Retrieval preview")
try:
    retriever = resources.retriever(ds.path, ds.name, selection.chroma_url)
except RetrievalError as err:  # e.g. the sidebar's chroma server does not answer
    st.error(f"The retrieval index cannot be opened: {md(str(err))}", icon="⚠️")
    st.stop()
st.caption("Top-k documents for the selected question over the whole corpus (dense retrieval with the bundled "
           f"all-MiniLM-L6-v2; the index, in {md(retriever.location)}, is updated incrementally).")
build = st.empty()  # the button goes as soon as the index is built, not on the next rerun
if retriever.count() < n_docs and not build.button(f"Build the retrieval index ({plural(n_docs, 'document')})",
                                                   key=key(PAGE, "build_index")):
    st.stop()
build.empty()
controls = st.columns(2)
k = controls[0].slider("k", 1, 10, 3, key=key(PAGE, "k"))
only = controls[1].selectbox("restrict to source", ["(all sources)"] + ds.source_names(),
                             key=key(PAGE, "source"), disabled=not ds.multi_source)
if retriever.count() < n_docs:  # published as a step: a run waiting for this index shows the same build
    slot = st.empty()
    with st.spinner("Waiting for the build of this index another page started…") if steps.current(
            index_step(retriever)) else nullcontext():
        build_published(retriever, INDEX_STAGE, lambda: retriever.count() >= n_docs,
                        progress.bar(slot, "Embedding documents", unit="document"))
    slot.empty()
with st.spinner("Loading the embedding model…"):
    hits = retriever.search(question.question, k=k, source=None if only == "(all sources)" else only)
docs_by_id = {d.id: d for _, d in ds.documents()}
st.dataframe(hits_frame(hits, question, docs_by_id, show_truth), hide_index=True)
