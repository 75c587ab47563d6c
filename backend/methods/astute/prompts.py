"""Astute RAG's prompt templates and context rendering (docs/methods/astute.md §4; paper App. A, MADAM-RAG App. E).

Our own wording, in the structure and output format of the paper's three prompts: ``p_gen`` (one passage,
or "I don't know"), ``p_con`` (Initial Context + Last Context -> New Context) and ``p_ans`` (Step 1
consolidate, Step 2 answers with confidence, Step 3 ``<ANSWER>``). Each call is one user message, zero-shot.
"""

from __future__ import annotations

from backend.schema import AstutePassage

GEN = ("Write a passage with accurate information that is relevant to answering the question below. If the "
       "information is unclear or you are not certain of it, say 'I don't know' instead, so that you do not "
       "make anything up.\n\nQuestion: {question}\nPassage:")
#: m̂ > 1: the paper prints no prompt (docs/methods/astute.md P3); this suffix asks for <DOC> blocks.
GEN_MANY = ("\n\nWrite at most {m_hat} passages, each covering different information, each between a <DOC> line "
            "and a </DOC> line. If you have no more reliable information, stop.")

_CONSOLIDATE = ("* Cluster the documents that give consistent information and summarise their key details in one "
                "concise new document.\n"
                "* Keep conflicting information apart, in separate new documents, so that each one captures a single "
                "perspective or value.\n"
                "* Leave out any information that is irrelevant to the question.\n"
                "For every new document, state clearly:\n"
                "* whether its source is memory or external retrieval;\n"
                "* the numbers of the original documents it comes from.")

CON = ("Task: Consolidate the information from your own memorized documents and the externally retrieved "
       "documents for the question below.\n\n" + _CONSOLIDATE +
       "\n\nInitial Context:\n{context_init}\nLast Context:\n{context}\nQuestion: {question}\nNew Context:")

_STEP3 = {
    "single": ("Step 3: Select the final answer\nAfter evaluating every group, select the most accurate and best "
               "supported answer. Put your exact answer inside <ANSWER> your answer </ANSWER>."),
    # MADAM-RAG App. E's adaptation for questions with several valid answers (docs/methods/astute.md §4, P16)
    "multi": ("Step 3: Select all correct answers\nAfter evaluating every group, select all accurate and well "
              "supported answers. Put each answer inside its own <ANSWER> answer </ANSWER> tag."),
}

ANS = ("Task: Answer the question using both your own memorized documents and the externally retrieved "
       "documents.\n\nStep 1: Consolidate the information\n" + _CONSOLIDATE +
       "\n\nStep 2: Propose answers and assign confidence\nFor each group of documents, propose one possible "
       "answer and give it a confidence score based on how credible the information is and how well the "
       "documents agree.\n\n{step3}\n\nInitial Context:\n{context_init}\n{consolidated}Question: {question}\n"
       "Answer:")

#: ``prompt_mode="structured"`` (ours, docs/methods/astute.md §3.6): the paper's prompt plus an explicit output format.
STRUCTURED_GROUPS = ('\n\nOutput format: write every new document as <GROUP id="G1" source="memory|external|both" '
                     'docs="1,4">summary</GROUP> and list the irrelevant original documents as '
                     '<EXCLUDED>2,3</EXCLUDED>.')
STRUCTURED_ANSWER = (STRUCTURED_GROUPS[:-1] + '; write every proposed answer as <CANDIDATE group="G1" '
                     'confidence="0.0-1.0">answer</CANDIDATE>; keep the final answer in <ANSWER>...</ANSWER>.')


def render_context(passages: list[AstutePassage], source_detail: bool = False) -> str:
    """``Document k (source: external retrieval[, detail]): text`` / ``Document k (source: memory): text``."""
    lines = []
    for p in passages:
        label = "memory" if p.origin == "internal" else "external retrieval"
        if source_detail and p.origin == "external" and p.source:
            label += f", {p.source}"
        lines.append(f"Document {p.number} (source: {label}): {p.text}")
    return "\n".join(lines)


def gen_messages(question: str, m_hat: int) -> list[dict[str, str]]:
    text = GEN.format(question=question)
    if m_hat > 1:
        text = text.removesuffix("\nPassage:") + GEN_MANY.format(m_hat=m_hat) + "\nPassages:"
    return [{"role": "user", "content": text}]


def con_messages(question: str, context_init: str, last: str, structured: bool) -> list[dict[str, str]]:
    text = CON.format(question=question, context_init=context_init, context=last)
    if structured:
        text = text.replace("\n\nInitial Context:", STRUCTURED_GROUPS + "\n\nInitial Context:", 1)
    return [{"role": "user", "content": text}]


def ans_messages(question: str, context_init: str, consolidated: str | None, answer_mode: str,
                 structured: bool) -> list[dict[str, str]]:
    """The merged consolidation + answer prompt; the Consolidated Context line only when t > 1."""
    block = f"Consolidated Context:\n{consolidated}\n" if consolidated is not None else ""
    step3 = _STEP3[answer_mode] + (STRUCTURED_ANSWER if structured else "")
    text = ANS.format(step3=step3, context_init=context_init, consolidated=block, question=question)
    return [{"role": "user", "content": text}]
