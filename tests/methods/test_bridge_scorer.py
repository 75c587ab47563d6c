"""BRIDGE's Knowledge Scorer (docs/methods/bridge.md §3 Step 3) on the real MiniLM: identical / paraphrase /
entity swap / unrelated, components in [0, 1], the weights applied exactly, "I don't know" and empty inputs, long texts,
one embedding pass per distinct text, determinism and symmetry."""

import pytest
from pydantic import ValidationError

from backend.methods.bridge.scorer import KnowledgeScorer, PairScore, ScorerWeights

WIN = "Bianca Ryan won the first season of America's Got Talent."
PARAPHRASE = "The first season of America's Got Talent was won by Bianca Ryan."
SWAP = "Vicky Binns won the first season of America's Got Talent."
UNRELATED = "Photosynthesis converts light energy into chemical energy in plants."
BULLS = "The Chicago Bulls play at the United Center."
TEXTS = [WIN, PARAPHRASE, SWAP, UNRELATED, BULLS]
FIELDS = ("sparse", "dense", "colbert", "total")


@pytest.fixture(scope="module")
def scorer():
    s = KnowledgeScorer()
    s.prepare(TEXTS)
    return s


def test_identical_texts_score_near_one(scorer):
    s = scorer.score(WIN, WIN)
    assert s.total >= 0.95 and s.sparse == pytest.approx(1.0) and s.dense == pytest.approx(1.0, abs=1e-5)
    assert s.colbert == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("x, y", [(WIN, UNRELATED), (WIN, BULLS), (UNRELATED, BULLS)])
def test_unrelated_texts_score_near_zero(scorer, x, y):
    s = scorer.score(x, y)
    assert s.total <= 0.25 and s.sparse == 0.0


def test_a_paraphrase_scores_between_unrelated_and_identical(scorer):
    para = scorer.score(WIN, PARAPHRASE).total
    assert scorer.score(WIN, UNRELATED).total < para < scorer.score(WIN, WIN).total
    assert para >= 0.8


def test_an_entity_swap_scores_below_the_identical_text_and_the_paraphrase(scorer):
    swap = scorer.score(WIN, SWAP)
    assert swap.total < scorer.score(WIN, WIN).total - 0.1
    assert swap.total < scorer.score(WIN, PARAPHRASE).total
    assert swap.total > scorer.score(WIN, UNRELATED).total  # most words are still shared


def test_every_component_lies_in_0_1_and_the_score_is_symmetric(scorer):
    for x in TEXTS:
        for y in TEXTS:
            s = scorer.score(x, y)
            assert all(0.0 <= getattr(s, f) <= 1.0 for f in FIELDS)
            back = scorer.score(y, x)  # equal up to float rounding: the embedding's thread pool may sum in any order
            assert all(getattr(s, f) == pytest.approx(getattr(back, f), abs=1e-6) for f in FIELDS)
            assert s.pairs == back.pairs


@pytest.mark.parametrize("weights", [(0.2, 0.4, 0.4), (1.0, 0.0, 0.0), (0.5, 0.3, 0.2), (0.0, 0.0, 1.0)])
def test_the_weights_are_applied_exactly(scorer, weights):
    w = KnowledgeScorer(weights)
    w.prepare(TEXTS)
    for x, y in [(WIN, PARAPHRASE), (WIN, SWAP), (WIN, UNRELATED)]:
        s = w.score(x, y)
        assert s.total == pytest.approx(min(1.0, weights[0] * s.sparse + weights[1] * s.dense + weights[2] * s.colbert))
        assert (s.sparse, s.dense, s.colbert) == pytest.approx(
            (scorer.score(x, y).sparse, scorer.score(x, y).dense, scorer.score(x, y).colbert))


def test_the_default_weights_are_the_papers_and_named():
    assert KnowledgeScorer().weights == ScorerWeights(sparse=0.2, dense=0.4, colbert=0.4)


def test_a_total_above_one_is_clamped():
    s = KnowledgeScorer((1.0, 1.0, 1.0)).score(WIN, WIN)
    assert s.total == 1.0


@pytest.mark.parametrize("weights", [(-0.1, 0.5, 0.6), (float("nan"), 0.4, 0.4)])
def test_bad_weights_are_refused(weights):
    with pytest.raises(ValueError):
        KnowledgeScorer(weights)


def test_one_sentence_pass_and_one_token_pass_per_distinct_text():
    s = KnowledgeScorer()
    four = [WIN, PARAPHRASE, SWAP, UNRELATED]
    s.prepare(four + [WIN, "I don't know", ""])  # a duplicate and two empty-of-knowledge texts
    pairs = [(a, b) for i, a in enumerate(four) for b in four[i + 1:]]
    assert len(pairs) == 6
    for a, b in pairs:
        s.score(a, b)
    assert (s.sentence_passes, s.token_passes, s.texts_embedded) == (1, 1, 4)
    s.prepare(four)
    s.mean_pairs(four, four)
    assert (s.sentence_passes, s.token_passes, s.texts_embedded) == (1, 1, 4)
    s.score(WIN, BULLS)  # an unprepared text: one more pass, over that text only
    assert (s.sentence_passes, s.token_passes, s.texts_embedded) == (2, 2, 5)
    assert s.texts == four + [BULLS]


def test_scores_are_deterministic_across_scorers_and_calls(scorer):
    other = KnowledgeScorer()
    other.prepare(TEXTS)
    for x, y in [(WIN, PARAPHRASE), (WIN, SWAP), (BULLS, UNRELATED)]:
        assert other.score(x, y) == scorer.score(x, y) == scorer.score(x, y)


@pytest.mark.parametrize("idk", ["I don't know", "None", "", "   ", "unknown", "I don't know."])
def test_an_i_dont_know_text_scores_zero_and_is_never_embedded(idk):
    s = KnowledgeScorer()
    assert s.score(idk, WIN) == s.score(WIN, idk) == s.score(idk, idk) == PairScore(
        sparse=0, dense=0, colbert=0, total=0)
    assert s.texts_embedded == 0


def test_an_i_dont_know_pair_counts_as_zero_in_a_mean(scorer):
    m = scorer.mean_score([WIN, "I don't know"], WIN)
    assert m.pairs == 2 and m.total == pytest.approx(scorer.score(WIN, WIN).total / 2)


def test_means_are_field_wise_over_all_pairs(scorer):
    xs, ys = [WIN, SWAP], [PARAPHRASE, UNRELATED, BULLS]
    m = scorer.mean_pairs(xs, ys)
    every = [scorer.score(x, y) for x in xs for y in ys]
    assert m.pairs == 6
    for f in FIELDS:
        assert getattr(m, f) == pytest.approx(sum(getattr(s, f) for s in every) / 6)
    one = scorer.mean_score([PARAPHRASE, SWAP], WIN)
    assert one.total == pytest.approx((scorer.score(PARAPHRASE, WIN).total + scorer.score(SWAP, WIN).total) / 2)


@pytest.mark.parametrize("xs, ys", [([], [WIN]), ([WIN], []), ([], [])])
def test_an_empty_mean_is_zero_with_no_pairs(scorer, xs, ys):
    assert scorer.mean_pairs(xs, ys) == PairScore(sparse=0, dense=0, colbert=0, total=0, pairs=0)
    assert scorer.mean_score([], WIN).pairs == 0


def test_a_text_of_stopwords_only_has_no_lexical_score():
    alone = KnowledgeScorer().score("It was in the.", "It was in the.")  # a corpus with no content word at all
    assert alone.sparse == 0.0 and alone.dense == pytest.approx(1.0, abs=1e-5)
    s = KnowledgeScorer()
    s.prepare(["It was in the.", WIN])
    assert s.score("It was in the.", "It was in the.").sparse == 0.0 and s.score(WIN, WIN).sparse == 1.0


def test_a_long_text_is_truncated_for_the_embeddings_only():
    long = " ".join([WIN] * 60)  # ~900 word pieces, above MiniLM's 256
    s = KnowledgeScorer()
    s.prepare([long, WIN])
    assert s.texts_truncated == 1
    score = s.score(long, WIN)
    assert all(0.0 <= getattr(score, f) <= 1.0 for f in FIELDS) and score.total > 0.8


def test_pair_scores_are_validated_and_round_trip_through_json(scorer):
    s = scorer.score(WIN, SWAP)
    assert PairScore.model_validate_json(s.model_dump_json()) == s
    with pytest.raises(ValidationError):
        PairScore(sparse=1.2, dense=0, colbert=0, total=0)
    with pytest.raises(ValidationError):
        PairScore(sparse=0, dense=0, colbert=0, total=0, extra=1)
