"""RC-RAG's prompts (docs/methods/counterfactual.md §4; paper App. C): our own wording in the structure and output
formats of the paper's RAG, CF-quality, CF-usage, direct-selection and probability prompts. Chat messages with no system
message; every prompt but the fusion ones ends with ``"\\nAnswer: "`` (the released code, counterfactual.md §3.0)."""

from __future__ import annotations

from backend.schema import CFPassage

TAIL = "\nAnswer: "

RAG = ("Answer the following question from the given passages in one or a few words. At the end of your reply, give "
       "your evidence between two ## marks: the passage ids, or your internal knowledge. For example, reply "
       "\"Answer: apple. Evidence: ## Passage-0, Passage-1 ##.\" when Passage-0 and Passage-1 give the answer "
       "\"apple\". If the passages hold no information about it, answer from your own knowledge.\n"
       "Question: {question}\nPassages: {passages}")

#: The two counterfactual scenarios (§4, C.2): each names one latent factor of RAG risk.
CF = {
    "quality": ("Assume that your answer is wrong because the passages you referred to are of poor quality. Select "
                "the passages again, and regenerate the answer in one or a few words with the ids of the passages you "
                "refer to as evidence."),
    "usage": ("Assume that your answer is wrong because you used the retrieved passages improperly. Read the given "
              "passages carefully and regenerate the answer in one or a few words."),
}

#: Direct selection (C.3), asked in the branch that said discard; its reason is that branch's factor.
DIRECT = {
    "quality": ("Your answer is likely to be wrong because the retrieved passages are of poor quality. Choose whether "
                "to keep or discard this output: generate $$ keep $$ to keep the answer, otherwise generate "
                "$$ discard $$."),
    "usage": ("Your answer is likely to be wrong because the retrieved passages were used improperly. Choose whether "
              "to keep or discard this output: generate $$ keep $$ to keep the answer, otherwise generate "
              "$$ discard $$."),
}

PROBABILITY = ("Give the probability that your regenerated answer is correct. Give ONLY the probability, no other "
               "words or explanation.\n\nFor example:\n\nProbability: <the probability, between 0.0 and 1.0, that "
               "your answer is correct, with nothing else at all>\n")


def render_passages(passages: list[CFPassage]) -> str:
    """``Passage-{i}: text`` lines, ids from 0 as in the paper's example (docs/methods/counterfactual.md §8.12)."""
    return "\n".join(f"Passage-{p.number}: {p.text}" for p in passages)


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, str]:
    return {"role": "assistant", "content": text}


def rag_messages(question: str, passages: list[CFPassage]) -> list[dict[str, str]]:
    return [user(RAG.format(question=question, passages=render_passages(passages)) + TAIL)]
