"""A label writer in its own process, for the concurrency and crash tests:
``python -m tests.labels.writer STORE N ANALYST`` saves N labels over 50 questions, printing each one's uid
(flushed) once its transaction has committed."""

import sys

from backend.labels import ANY, LabelDraft, LabelStore

#: A dataset identity (name@content hash, backend.labels.identity) no dataset is needed for.
DATASET = "load@000000000000"


def main(where: str, n: int, analyst: str) -> None:
    store = LabelStore(where)
    for i in range(n):
        label = store.save(LabelDraft(dataset=DATASET, question_id=f"q{i % 50:02d}", answers=[f"{analyst} {i}"],
                                      analyst=analyst, note="n" * 200), expected=ANY)
        print(label.uid, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
