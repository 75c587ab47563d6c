"""BRIDGE's prompts (docs/methods/bridge.md §4; paper App.): our own wording in the structure and output formats of the
paper's Allocator (ICL), Sub-query Generation, Multi-query Generator, Reflection and Responder prompts, plus the
internal-knowledge passage the paper takes from TRD (here the model writes it, closed book). One user message
each."""

from __future__ import annotations

ALLOCATOR = ("Task Description:\nJudge how likely the question below needs external knowledge to be answered, "
             "versus how likely it can be answered directly [10%-90%]. Give the results in this format:\n"
             "Analysis: (your analysis)\n"
             "Probability of retrieving external knowledge: (does the question need up-to-date data, specialised "
             "knowledge or dynamic content?)\n"
             "Probability of answering directly: (can pre-trained knowledge or reasoning answer it?)\n"
             "Examples:\n{examples}\nEvaluate the following question: {question}")
DEMO = ("Question: {question}\nProbability of retrieving external knowledge: {r}%\n"
        "Probability of answering directly: {g}%")

INTERNAL = ("Write a short passage with what you know that answers the question, without looking anything up. If "
            "you do not know, reply None.\nQuestion: {question}\nPassage:")

SUB_QUERIES = ("Write {number} new, widely different questions, in different words, that have the same answer as "
               "the original question. Requirements:\n1. Use different sentence structures.\n2. Give each question "
               "its own interrogative word (how / which / why ...).\n3. Cover several dimensions of the problem.\n"
               "4. Rank the questions by importance, most important first.\nOriginal question: {question}\n"
               "New questions:\n1. [new question 1]\n2. [new question 2]\n...\n{number}. [new question {number}]")

GENERATOR = ("Analyse each of the following questions before answering it. If you are not sure of an answer or do "
             "not know it, answer 'I don't know' for that question. Do not guess or make anything up. Answer in a "
             "numbered list, one line per question.\nQuestions:\n{queries}\nAnswers:")

RESPONDER = ("Answer the question by choosing the most accurate option based on the document below. Return only the "
             "upper-case letter of the correct option, in exactly this format:\nCorrect Option: [Letter]\n"
             "Example: Correct Option: B.\nDocument: {knowledge}\nQuestion: {question}\nOptions: {options}")
#: Datasets without options (ours): a short free-form answer from the same knowledge.
RESPONDER_FREE = ("Answer the question from the document below with only the essential keywords. If the document does "
                  "not say, reply \"I don't know\".\nDocument: {knowledge}\nQuestion: {question}\nAnswer:")

REFLECT = ("==Input data==\nOriginal question: {question}\nKnowledge:\nInternal knowledge: {internal}\n"
           "External knowledge: {external}\nGenerated knowledge: {generated}\nRetrieved knowledge: {retrieved}\n"
           "Phase 1: analyse the contradictions in the knowledge\n"
           "1. Is the internal knowledge consistent with the generated knowledge?\n"
           "2. Is the external knowledge consistent with the retrieved knowledge?\n"
           "3. Mark the specific contradictions between internal and external knowledge.\n"
           "Classify them (factual / timeliness / perspective / integrity) and name the likely cause (model "
           "knowledge limits, external knowledge bias, retrieval mismatch, generated hallucination).\n"
           "Phase 2: rebuild the question\nWrite {number} new, widely different questions, in different words, that "
           "have the same answer as the original question: different sentence structures, a different "
           "interrogative word each, several dimensions of the problem, ranked by importance, and checking the "
           "contradictions found.\nOutput format:\nAnalysis: [main contradiction, its type, its possible cause]\n"
           "New questions:\n1. [new question 1]\n...\n{number}. [new question {number}]")


def numbered(items: list[str]) -> str:
    return "\n".join(f"{k}. {item}" for k, item in enumerate(items, start=1))


def options_text(options: list[str]) -> str:
    return " ".join(f"{'ABCDEFGH'[k]}. {o}" for k, o in enumerate(options))
