"""A scripted reader for the what-if tests: it answers the city most passages name (ties: "I don't know")."""

import re
from collections import Counter

from backend.llm.client import LLMConfig
from backend.runner import Runner
from backend.schema import Dataset, DocLabel, Document, Question


def majority_reader(fields) -> str:
    cities = [m.group(1) for p in fields.get("passages") or [] if (m := re.search(r"is (\w+)\.", p["text"]))]
    ranked = Counter(cities).most_common()
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return "I don't know"
    return ranked[0][0]


def first_reader(fields) -> str:
    passages = fields.get("passages") or []
    m = re.search(r"is (\w+)\.", passages[0]["text"]) if passages else None
    return m.group(1) if m else "I don't know"


def city_question(qid: str, cities: list[str], gold: str = "Paris", wrong: str = "Lyon") -> Question:
    return Question(id=qid, question=f"What is the capital of {qid}?", gold_answers=[gold], wrong_answers=[wrong],
                    documents=[Document(id=f"{qid}-d{i}", text=f"The capital of {qid} is {c}.",
                                        label=DocLabel(type="correct" if c == gold else "misinfo", answer=c))
                               for i, c in enumerate(cities, start=1)])


def scripted_runner(questions: list[Question]) -> Runner:
    return Runner(Dataset(name="cities", path="cities", questions=questions),
                  llm=LLMConfig(model="scripted/reader", cache_mode="off"))
