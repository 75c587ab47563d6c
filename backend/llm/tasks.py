"""The task contract between methods and models.

Every model call names a ``task``. The method renders a full prompt (all a hosted model needs) and also
passes the task's structured fields as call metadata; the offline model reads those fields instead of
parsing prose. A hosted model never sees the metadata. The fields never carry ground truth: only the
question, passages with their source labels, the simulated memory (``internal_knowledge``) and what
earlier calls produced.

``output`` names the parser in ``backend.llm.formats`` that reads the reply; the offline model must emit
exactly that format, and a test checks every task round-trips.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskSpec:
    name: str
    fields: tuple[str, ...]   # metadata keys besides "task" and "question"
    output: str               # parser name in backend.llm.formats.PARSERS
    used_by: str
    summary: str


#: passages are ``[{"id": str, "source": str, "text": str}, ...]`` in prompt order (numbered from 1)
TASKS: dict[str, TaskSpec] = {t.name: t for t in [
    TaskSpec("ping", (), "short_answer", "client (test connection)", "reply with the single word 'ready'"),
    TaskSpec("closed_book", ("memory",), "short_answer", "no_rag, counterfactual",
             "answer from memory only; 'I don't know' without memory"),
    TaskSpec("keyword_answer", ("passages",), "short_answer", "ra_rag, vanilla_rag, bridge (no options)",
             "essential keywords from the passages, or 'I don't know'"),
    TaskSpec("entailment", ("premise", "hypothesis"), "yes_no", "ra_rag (App. I clustering)",
             "does answer A entail answer B for the question"),
    TaskSpec("generate_passage", ("memory", "max_passages"), "passages", "astute, bridge (K_int)",
             "write passages from memory, or 'I don't know'"),
    TaskSpec("consolidate", ("passages", "round", "prompt_mode"), "groups", "astute",
             "group passages by the answer they support, tagging memory/external sources"),
    TaskSpec("consolidate_answer", ("passages", "answer_mode", "prompt_mode"), "tagged_answers", "astute",
             "groups, candidate answers with confidence, final <ANSWER> tag(s)"),
    TaskSpec("debate_turn", ("passages", "round", "history"), "agent_response", "madam",
             "'Answer: X. Explanation: Y' from one document, revised against others' answers"),
    TaskSpec("aggregate", ("responses",), "all_correct_answers", "madam",
             "'All Correct Answers: [...]. Explanation: ...' over agents' responses"),
    TaskSpec("cf_answer", ("passages",), "answer_evidence", "counterfactual",
             "'Answer: X.' plus 'Evidence: ## Passage-i ##'"),
    TaskSpec("cf_quality", ("passages", "previous_answer", "previous_evidence"), "answer_evidence",
             "counterfactual", "re-answer assuming the cited passage was of poor quality"),
    TaskSpec("cf_usage", ("passages", "previous_answer"), "short_answer", "counterfactual",
             "re-answer assuming the passages were used improperly"),
    TaskSpec("cf_judge", ("passages", "previous_answer", "kind"), "keep_discard", "counterfactual",
             "'$$ keep $$' or '$$ discard $$' for the original answer"),
    TaskSpec("cf_probability", ("passages", "previous_answer"), "probability", "counterfactual",
             "'Probability: 0.xx' that the answer is right"),
    TaskSpec("soft_bias", ("memory",), "soft_bias", "bridge",
             "analysis, then probabilities of retrieving vs answering directly"),
    TaskSpec("sub_queries", ("n",), "numbered_list", "bridge", "n numbered paraphrases of the question"),
    TaskSpec("multi_answer", ("sub_queries", "memory"), "numbered_list", "bridge",
             "one numbered answer per sub-query, from memory"),
    TaskSpec("reflect", ("sub_queries", "answers", "passages", "n"), "numbered_list", "bridge",
             "a short contradiction analysis, then n new numbered questions"),
    TaskSpec("select_option", ("options", "passages"), "option", "bridge", "'Correct Option: X'"),
]}

#: Metadata keys that may never reach a model (a test asserts the client refuses them).
FORBIDDEN_FIELDS = frozenset({"gold_answers", "wrong_answers", "label", "labels", "true_reliability",
                              "coverage", "meta", "scenario", "gold", "true_answer"})
