"""The shared sidebar: dataset, question and model pickers. Mirrors dataset + question into the URL."""

from __future__ import annotations

import os

import streamlit as st

from backend import deployment, uploads
from backend.cases import featured_question, mark
from backend.cost import DEFAULT_THRESHOLD_USD
from backend.data import DatasetError, bundled_datasets
from backend.llm.structured import supports_json_schema, unsupported_note
from backend.llm.urls import problem as url_problem
from backend.methods.reading import DEFAULT_READING, READING_HELP, READINGS
from backend.paths import CHROMA_URL_ENV
from components.dataset import question_label
from components.failures import render_failure
from components.models import LOCAL_CHOICE, LOCAL_HELP, local_missing
from components.safe import md
from components.session import apikey, present, resources, upload
from components.session.state import DEFAULT_MODEL, SELECTION_KEY, ModelChoice, Selection, init_page_state, key

PAGE = "app"
OWN_FILE = "Your own file…"
#: A dataset given by path in a link: ``?dataset=file:/path/to/questions.jsonl``.
FILE_PREFIX = "file:"
#: What the first page load's link asked for, checked once against what exists (then dropped).
LINK_KEY = "app.link"
#: The key of .streamlit/secrets.toml naming a chroma server for the retrieval index.
CHROMA_SECRET = "chroma_url"


def _init_from_url() -> None:
    params = st.query_params
    if key(PAGE, "dataset") not in st.session_state:  # the first run of this session: the link decides
        st.session_state[LINK_KEY] = {"dataset": params.get("dataset"), "question": params.get("question")}
        for what, asked, shown in present.read_link(params):  # truth, presentation mode, Inspect's methods
            _link_notice(what, asked, shown)
    wanted, own, uploaded = params.get("dataset", "ramdocs_dev"), "", ""
    if wanted.startswith(FILE_PREFIX):
        wanted, own = OWN_FILE, wanted[len(FILE_PREFIX):]
    elif wanted.startswith(uploads.PREFIX):  # an uploaded file, named by its content hash (components.session.upload)
        wanted, uploaded = OWN_FILE, wanted[len(uploads.PREFIX):]
    init_page_state(PAGE, {"dataset": wanted, "own_path": own, "upload": uploaded,
                           "question": params.get("question"), "model": DEFAULT_MODEL, "api_base": "",
                           "structured_output": False, "reading": DEFAULT_READING,
                           "cost_threshold": DEFAULT_THRESHOLD_USD, "chroma_url": default_chroma_url()})


NOTICES_KEY = "app.link_notices"


def _link_notice(what: str, asked: str | None, shown: str) -> None:
    """Note that a link named something that is not there; shown until the user picks another one."""
    text = f"The link names the {what} {md(asked)}, which does not exist here; showing {md(shown)}."
    st.session_state.setdefault(NOTICES_KEY, {})[what.split()[0]] = (text, shown)


def _show_notices(current: dict[str, str]) -> None:
    notices = st.session_state.get(NOTICES_KEY, {})
    for what, (text, shown) in list(notices.items()):
        if current.get(what) == shown:
            st.warning(text)  # above the page, not at the foot of the sidebar: the link brought the user here
        else:
            del notices[what]  # the user moved on


def first_problem(err: DatasetError) -> str:
    """One line for the main pane: the first problem (a refused file without its ``:0: (file)``), and how many
    more are listed below it."""
    first = err.problems[0]
    line = f"{first.file}: {first.message}" if first.line == 0 else str(first)
    more = len(err.problems) - 1
    return line + (f" (and {more} more, listed below)" if more else "")


#: Set while the sidebar's dataset cannot be loaded: the page says so instead of "Pick a dataset".
LOAD_FAILED = "app.load_failed"


def _cannot_load(err: DatasetError) -> None:
    """A dataset that cannot be loaded, in the main pane (the first problem, then every problem) and the sidebar."""
    st.error(md(f"This dataset cannot be loaded: {first_problem(err)}"), icon=":material/error:")
    listing = "\n".join(str(p) for p in err.problems)
    if len(err.problems) > 1:
        st.code(listing, language=None, wrap_lines=True)
    st.sidebar.error("This dataset cannot be loaded:")
    st.sidebar.code(listing, language=None, wrap_lines=True)
    st.session_state[LOAD_FAILED] = True


def _pick_dataset():
    bundled = bundled_datasets()
    options = list(bundled) + [OWN_FILE]
    k = key(PAGE, "dataset")
    if st.session_state.get(k) not in options:
        asked = (st.session_state.get(LINK_KEY) or {}).get("dataset")
        st.session_state[k] = options[0]
        if asked:
            _link_notice("dataset", asked, options[0])
    upload.check_link(k, options[0], (st.session_state.get(LINK_KEY) or {}).get("dataset"), _link_notice)
    choice = st.sidebar.selectbox("Dataset", options, key=k,
                                  help="Bundled sample datasets, or your own JSONL file: uploaded, or a path.")
    st.session_state[LOAD_FAILED] = False
    try:
        if choice == OWN_FILE:
            return _own_file()
        return resources.dataset(bundled[choice], name=choice)
    except DatasetError as err:
        _cannot_load(err)
        return None


def _own_file():
    """An uploaded file (``components.session.upload``), else a typed path; None with a hint when neither."""
    uploaded = upload.render(key(PAGE, "upload"), key(PAGE, "own_path"))
    if uploaded is not None:
        return uploaded
    path = st.sidebar.text_input("Path to a .jsonl file or dataset folder",
                                 key=key(PAGE, "own_path"), placeholder="/path/to/questions.jsonl",
                                 on_change=upload.forget, args=(key(PAGE, "upload"),))
    if not path.strip():
        st.sidebar.info("Upload a .jsonl file or enter a path to load your own dataset.")
        return None
    # typed, or from a link: only inside the deployment's open folders, only regular files
    return resources.dataset(path.strip(), confined=True)


def _pick_question(ds):
    ids = [q.id for q in ds.questions]
    by_id = {q.id: q for q in ds.questions}
    k = key(PAGE, "question")
    if st.session_state.get(k) not in by_id:
        asked = (st.session_state.get(LINK_KEY) or {}).get("question")
        first = featured_question(ds.name) if ds.name in bundled_datasets() else None  # a telling case
        first = first if first in by_id else ids[0]
        if asked and st.session_state.get(k) == asked:
            _link_notice(f"question (in {ds.name})", asked, first)
        st.session_state[k] = first
    marks = question_marks(ds)  # from results already computed: never starts a run
    qid = st.sidebar.selectbox(f"Question ({len(ids)})", ids, key=k,
                               format_func=lambda i: question_label(by_id[i], marks.get(i, "")),
                               help="Type to search by id or by words of the question. " + MARKS_HELP)
    return by_id[qid]


#: What the picker's marks mean (its help).
MARKS_HELP = ("≠3: the methods gave 3 different answers (an abstention counts as one); ✓ 2/7 (with ground truth "
              "on): 2 of 7 methods right. From this session's runs and the dataset's latest evaluation.")


def question_marks(ds) -> dict[str, str]:
    """Per question id, its mark (``backend.cases.mark``) from the results known without running anything."""
    from components.session import cases, present

    state = st.session_state  # the model settings as they stand (their widgets are drawn below the picker)
    selection = Selection(dataset=ds, question=ds.questions[0], chroma_url=state.get(key(PAGE, "chroma_url")) or None,
                          model=ModelChoice(model=(state.get(key(PAGE, "model")) or "").strip() or DEFAULT_MODEL,
                                            api_base=(state.get(key(PAGE, "api_base")) or "").strip() or None,
                                            structured_output=bool(state.get(key(PAGE, "structured_output"))),
                                            reading=reading_setting()))

    truth = present.truth()
    known = cases.known_results(selection)
    return {q.id: m for q in ds.questions if (rs := known.get(q.id)) and (m := mark(q, rs, truth))}


#: The built-in offline models, one click away: (model, what it is).
OFFLINE_VOICES = (("offline/reader", "the plain voice: replies exactly in each task's format"),
                  ("offline/chatty", "the chatty voice: the same replies dressed as chat models write them "
                                     "(preambles, Markdown, Q1: lists, 80% / .8, JSON, refusals in words)"))


def local_problem() -> str | None:
    """What the one-click local model lacks (its weights, llama.cpp's server), checked without starting anything:
    one line with what to install, or None."""
    from backend.llm.local.serve import server_installed
    from backend.llm.local.weights import bundled_path

    return local_missing(weights=bundled_path() is not None, server=server_installed())


def _use_model(model: str) -> None:
    """Pick a built-in model (a button's callback: it runs before the widgets are drawn again)."""
    st.session_state[key(PAGE, "model")], st.session_state[key(PAGE, "api_base")] = model, ""
    apikey.forget()


#: The reading setting's help (``backend.methods.reading.READING_HELP``, one line per reading).
READING_SETTING_HELP = ("How the methods read the model's replies at each decision (an option, keep or discard, an "
                        "agent's answer). " + " ".join(f"**{r}**: {READING_HELP[r]}." for r in READINGS)
                        + " Every reply is read both ways (no extra model call): each method's page and Inspect say "
                          "which decisions the other reading would have read differently. Results under the two "
                          "readings are kept apart.")


def reading_setting() -> str:
    """The sidebar's reading of replies as it stands ("tolerant" unless set to a known other)."""
    value = st.session_state.get(key(PAGE, "reading"))
    return value if value in READINGS else DEFAULT_READING


def _pick_model() -> ModelChoice:
    with st.sidebar.expander("Model", expanded=False):
        row = st.container(horizontal=True)  # the buttons wrap onto two rows where a narrow sidebar has no room
        for column, (name, what) in zip([row] * len(OFFLINE_VOICES), OFFLINE_VOICES):
            column.button(name, key=key(PAGE, f"use_{name}"), help=f"Use {name}, {what}. No network, no key.",
                          on_click=_use_model, args=(name,))
        local, local_title = LOCAL_CHOICE  # a real language model on this CPU, beside the offline voices
        missing = local_problem()
        row.button(local_title, key=key(PAGE, "use_local"), help=LOCAL_HELP, on_click=_use_model, args=(local,),
                   disabled=missing is not None)
        if missing:
            st.caption(missing)
        model = st.text_input("litellm model", key=key(PAGE, "model"),
                              help="Any litellm model string, e.g. openai/gpt-4o-mini or ollama/llama3. "
                                   "The default offline/reader is the built-in deterministic heuristic "
                                   "reader, not a language model: no network, no key. offline/chatty gives the "
                                   "same replies dressed as chat models write them (Markdown, preambles, "
                                   f"percentages, JSON...). {local} is a real language model (SmolLM2-135M-Instruct) "
                                   "running on this CPU through llama.cpp: free, seconds per call.")
        api_base = st.text_input("api_base (optional)", key=key(PAGE, "api_base"),
                                 placeholder="http://localhost:11434", on_change=apikey.forget)
        if api_base.strip() and (refused := url_problem(api_base.strip())):  # said before a run, sent nowhere
            st.error(md(refused), icon=":material/error:")
        elif apikey.needed(api_base.strip()):
            st.text_input("API key for this api_base", key=apikey.KEY, type="password", autocomplete="off",
                          help="Sent only to this api_base, with this session's calls; kept in this browser "
                               "session only (never in the link, results, caches or logs). Forgotten when the "
                               "api_base changes. A local server (vLLM, Ollama) needs none.")
            st.caption("This server's API keys are not sent to this api_base (the deployment setting "
                       "key_endpoints): only a key typed here.")
        else:
            st.caption("This server's API keys (environment or .streamlit/secrets.toml) go only to their provider's "
                       "own endpoint or an api_base this server allows; they are never shown or stored.")
        structured = st.toggle("Structured output (JSON schema)", key=key(PAGE, "structured_output"),
                               help="Ask each task for its JSON schema, where the model supports JSON-schema "
                                    "responses (litellm's model map, or an openai/ model with an api_base: vLLM, "
                                    "Ollama, serve-model). Off: the papers' reply formats, as the methods were "
                                    "published.")
        if st.session_state.get(key(PAGE, "reading")) not in READINGS:
            st.session_state[key(PAGE, "reading")] = DEFAULT_READING
        reading = st.radio("Reading of replies", READINGS, key=key(PAGE, "reading"), horizontal=True,
                           help=READING_SETTING_HELP)
        st.number_input("Ask before spending more than (US$)", min_value=0.0, step=0.25, format="%.2f",
                        key=key(PAGE, "cost_threshold"),
                        help="Before a run with a hosted model, the pages estimate its calls, tokens and price "
                             "(litellm's model price map) and ask you to confirm above this amount, or when the price "
                             "is unknown. Influence and dataset attacks always ask. The offline models and the "
                             "local model (on this CPU) cost $0: the local model's estimate gives its time instead.")
        choice = ModelChoice(model=model.strip() or DEFAULT_MODEL, api_base=api_base.strip() or None,
                             structured_output=structured, reading=reading)
        if st.button("Test connection", key=key(PAGE, "test_connection")):
            _test_connection(choice)
    if structured and not supports_json_schema(choice.model, choice.api_base):  # outside the expander: always seen
        st.sidebar.warning(md(unsupported_note(choice.model)), icon=":material/warning:")
    if reading != DEFAULT_READING:  # outside the expander too: every result on every page is read this way
        st.sidebar.caption("Replies are read by each paper's own rule (Model → Reading of replies: paper).")
    if choice.model == LOCAL_CHOICE[0] and missing:  # typed or from a link: said before a run, not as its errors
        st.sidebar.warning(missing, icon=":material/warning:")
    return choice


def default_chroma_url() -> str:
    """``chroma_url`` in .streamlit/secrets.toml, else ``$CONFLICTLENS_CHROMA_URL``, else "" (the embedded index)."""
    try:
        secret = st.secrets.get(CHROMA_SECRET)
    except Exception:  # noqa: BLE001 - no secrets file is the normal case
        secret = None
    for value in (secret, os.environ.get(CHROMA_URL_ENV)):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _pick_index() -> str | None:
    with st.sidebar.expander("Retrieval index", expanded=False):
        url = st.text_input("chroma server (optional)", key=key(PAGE, "chroma_url"),
                            placeholder="http://127.0.0.1:8000",
                            help="A chroma server (`chroma run --path DIR --port 8000`) that holds the retrieval "
                                 "index for a team. Empty: the embedded index in the cache folder. Default: "
                                 f"`{CHROMA_SECRET}` in .streamlit/secrets.toml, else ${CHROMA_URL_ENV}; "
                                 "others only as this server's settings allow (`chroma_urls`).")
        if not deployment.current().allows_chroma(url, default_chroma_url()):  # checked before any connection
            st.error(CHROMA_REFUSED)
            return None
    return url.strip() or None


#: Shown instead of connecting to a chroma server the settings do not name (the embedded index is used meanwhile).
CHROMA_REFUSED = ("That address is not a chroma server this server may connect to (the deployment setting "
                  "chroma_urls); the embedded index is used.")


def _test_connection(choice: ModelChoice) -> None:
    from backend.llm.client import LLMClient, LLMConfig
    from components.session.runs import secrets_to_env

    secrets_to_env()
    with st.spinner(f"Calling {md(choice.model)}…"):  # spinner text is Markdown
        ok, message, seconds = LLMClient(LLMConfig(model=choice.model, api_base=choice.api_base,
                                                   cache_mode="off", timeout_s=20),
                                         api_key=apikey.typed()).test_connection()
    if ok:
        st.success(f"Connected in {seconds:.1f} s", icon="✅")
        st.text(message)
    else:  # the same short message, with what to do, as the pages give
        render_failure(st, f"Failed in {seconds:.1f} s", message, model=choice.model)


def render() -> Selection | None:
    """Draw the sidebar and store the selection in session state (``None`` when nothing is loaded)."""
    _init_from_url()
    st.sidebar.title("ConflictLens")
    ds = _pick_dataset()
    if ds is None:
        st.session_state[SELECTION_KEY] = None
        return None
    question = _pick_question(ds)
    model = _pick_model()
    chroma_url = _pick_index()
    st.session_state.pop(LINK_KEY, None)  # checked: later changes are the user's own
    _show_notices({"dataset": st.session_state[key(PAGE, "dataset")], "question": question.id, **present.shown()})
    choice = st.session_state[key(PAGE, "dataset")]
    own = st.session_state.get(key(PAGE, "own_path"), "").strip()
    uploaded = st.session_state.get(key(PAGE, "upload"), "")
    own = uploads.PREFIX + uploaded if uploaded else FILE_PREFIX + own
    st.query_params.update({"dataset": choice if choice != OWN_FILE else own, "question": question.id})
    selection = Selection(dataset=ds, question=question, model=model, chroma_url=chroma_url)
    st.session_state[SELECTION_KEY] = selection
    return selection
