"""The Soft Bias Allocator's demonstration pool (docs/methods/bridge.md §3 Step 1, ICL form; §8.18) [ours].

The paper retrieves k = 5 demonstrations from TRD's train set, labelled with pseudo soft labels: FA/FI questions
"retrieve 10% / answer directly 90%", FE/RA questions "90% / 10%". TRD is not available here, so the pool is
this hand-written set in the same two classes: stable facts a pre-trained model knows (10%) and questions that
need up-to-date, new or specialised information (90%). None of them is a question of a bundled dataset, so no
demonstration carries an evaluated question's label.
"""

from __future__ import annotations

#: (question, percent "retrieving external knowledge")
DEMOS: tuple[tuple[str, int], ...] = (
    ("Who wrote the novel Pride and Prejudice?", 10),
    ("What is the capital city of Australia?", 10),
    ("Who painted the ceiling of the Sistine Chapel?", 10),
    ("In which year did the Berlin Wall fall?", 10),
    ("Which element has the chemical symbol Fe?", 10),
    ("Who composed the opera The Magic Flute?", 10),
    ("What is the longest river in South America?", 10),
    ("Which band released the album Abbey Road?", 10),
    ("Who was the first person to walk on the Moon?", 10),
    ("Which country hosted the 1998 FIFA World Cup?", 10),
    ("Who directed the film Jaws?", 10),
    ("What language is spoken in Brazil?", 10),
    ("Who is the current chief executive of the largest social media company?", 90),
    ("Which team won the most recent Champions League final?", 90),
    ("What is the latest population estimate for Lagos?", 90),
    ("Who won the 2024 Booker Prize?", 90),
    ("Which film won best picture at the most recent Academy Awards?", 90),
    ("Who currently holds the world record in the men's marathon?", 90),
    ("Who directed the 2024 horror film about a family estate in Portugal?", 90),
    ("What is the current interest rate set by the European Central Bank?", 90),
    ("Who is the newest member of the band after the 2023 line-up change?", 90),
    ("Which company acquired the start-up announced last month?", 90),
    ("What dosage of the new 2023 antiviral is recommended for adults?", 90),
    ("Who was elected mayor of the city in the most recent election?", 90),
)
