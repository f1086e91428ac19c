"""Every winner path and label of A.1/A.3, and the tie rules of Appendix F."""

import random
from collections import Counter

import pytest

from impostor_bench.core.rules import Ballot, decide, guess_matches, normalize_guess, top_tie

IMP = 2  # impostor seat in these tests
WORD = "dog"


def ballots(*votes, declared=(), guesses=None):
    guesses = guesses or {}
    return [Ballot(v, s in declared, guesses.get(s)) for s, v in enumerate(votes)]


@pytest.mark.parametrize(
    "b, winner, condition",
    [
        (ballots(2, 2, 0, 2), "majority", "conviction"),  # three correct votes
        (ballots(2, 2, 0, 0), "majority", "conviction"),  # exactly two correct votes
        (ballots(2, 0, 1, 1), "impostor", "no_conviction"),  # one correct vote, seat 1 is top
        (ballots(1, 0, 1, 1), "impostor", "no_conviction"),  # majority player convicted wrongly
        (ballots(2, None, None, None), "majority", "strict_plurality"),  # 1 vote vs 0 others
        (ballots(2, 0, 0, 1), "impostor", "no_conviction"),  # seat 0 is the single top (2 votes)
        (ballots(2, 0, 1, None), "impostor", "tie"),  # seats 2, 0, 1 one vote each
        (ballots(3, 3, 0, 0), "impostor", "tie"),  # seats 3 and 0 two votes each
        (ballots(2, 2, 0, 2, declared={0}), "majority", "majority_self_declared"),
        (ballots(1, 0, 1, 1, declared={3}), "majority", "majority_self_declared"),
        (ballots(1, 0, None, 1, declared={2}, guesses={2: "Dogs"}), "impostor", "impostor_guess_correct"),
        (ballots(2, 2, None, 2, declared={2}, guesses={2: " the DOG "}), "impostor", "impostor_guess_correct"),
        (ballots(1, 0, None, 1, declared={2}, guesses={2: "cat"}), "majority", "impostor_guess_wrong"),
        (ballots(1, 0, None, 1, declared={2}), "majority", "impostor_guess_wrong"),  # no guess
        (ballots(None, None, None, None), "impostor", "no_conviction"),  # all ballots invalid
        (ballots(2, 0, 0, 0), "impostor", "no_conviction"),  # seat 0 has 3 votes, impostor 1
    ],
)
def test_winner_paths(b, winner, condition):
    out = decide(b, IMP, WORD)
    assert (out.winner, out.win_condition) == (winner, condition)
    assert out.winner_live == out.winner


def test_top_tie_between_impostor_and_other():
    out = decide(ballots(2, 3, 0, 2), IMP, WORD)  # seats 0 and 3 name the impostor: conviction, not a tie
    assert out.win_condition == "conviction"
    out = decide(ballots(2, 3, 1, 0), IMP, WORD)  # each of seats 2,3,1,0 one vote: 4-way tie
    assert (out.winner, out.win_condition, out.tie_k, out.impostor_in_tie) == ("impostor", "tie", 4, True)
    out = decide(ballots(3, 3, 0, 0), IMP, WORD)  # seats 3 and 0 two votes each: 2-way tie without impostor
    assert (out.win_condition, out.tie_k, out.impostor_in_tie) == ("tie", 2, False)


def test_own_vote_never_counts_for_conviction():
    # Only one non-impostor names the impostor; the impostor's own seat cannot add a vote
    # (own-seat votes are invalid and recorded as vote=None by the parser).
    out = decide(ballots(2, 0, None, 1), IMP, WORD)
    assert out.votes_on_impostor == 1 and out.win_condition == "tie"  # seats 2, 0, 1 one vote each


def test_non_impostor_self_declaration_beats_correct_impostor_guess():
    b = ballots(2, 2, None, 2, declared={0, 2}, guesses={2: "dog"})
    assert decide(b, IMP, WORD).win_condition == "majority_self_declared"


def test_self_declaration_is_checked_before_conviction():
    # Documented order: a self-declared impostor with the right guess wins even when convicted.
    b = ballots(2, 2, None, 2, declared={2}, guesses={2: "dog"})
    assert decide(b, IMP, WORD).winner == "impostor"


@pytest.mark.parametrize(
    "guess, ok",
    [("dog", True), ("DOG", True), ("  dog  ", True), ("the dog", True), ("a dog", True), ("dogs", True),
     ('"dog".', True), ("do g", False), ("cat", False), ("", False), (None, False), ("hotdog", False)],
)
def test_guess_matching(guess, ok):
    assert guess_matches(guess, "dog") is ok


def test_guess_plural_forms():
    assert guess_matches("berries", "berry") and guess_matches("boxes", "box") and guess_matches("glass", "glass")
    assert not guess_matches("glas", "glass")
    assert normalize_guess("  An   Apple! ") == "apple"


def test_tie_probabilities_match_appendix_f():
    for votes, k, in_tie in [((3, 2, 1, 0), 4, True), ((3, 3, 0, 0), 2, False), ((1, 2, 1, 2), 2, True)]:
        b = ballots(*votes)
        assert top_tie(b)[0] == k
        out = decide(b, IMP, WORD)
        if out.win_condition == "conviction":
            continue
        assert out.win_condition == "tie"
        assert out.p_imp_default == 1.0
        assert out.p_imp_sym_candidate == pytest.approx((1 - 1 / k) if in_tie else 1.0)
        assert out.p_imp_sym_side == 0.5


def test_non_tie_games_are_unaffected_by_symmetric_rules():
    for b in (ballots(2, 2, 0, 0), ballots(1, 0, None, 1, declared={2}, guesses={2: "dog"}), ballots(0, 0, 0, 1)):
        out = decide(b, IMP, WORD, tie_rule="sym_side", rng=random.Random(1))
        assert out.p_imp_default == out.p_imp_sym_candidate == out.p_imp_sym_side
        assert out.winner_live == out.winner


@pytest.mark.parametrize("rule, votes, expected_imp", [
    ("sym_candidate", (3, 2, 1, 0), 3 / 4),  # 4-way tie with the impostor: majority wins 1/4
    ("sym_candidate", (3, 3, 0, 0), 1.0),  # impostor not in the tie: never eliminated
    ("sym_side", (3, 2, 1, 0), 1 / 2),
    ("sym_side", (3, 3, 0, 0), 1 / 2),
])
def test_live_tie_rules_play_the_exact_probabilities(rule, votes, expected_imp):
    rng = random.Random(1234)
    n = 20_000
    wins = Counter(decide(ballots(*votes), IMP, WORD, tie_rule=rule, rng=rng).winner_live for _ in range(n))
    p = wins["impostor"] / n
    se = max((expected_imp * (1 - expected_imp) / n) ** 0.5, 1e-9)
    assert abs(p - expected_imp) <= 4 * se + 1e-12
    # the default-rule label never changes
    assert decide(ballots(*votes), IMP, WORD, tie_rule=rule, rng=rng).winner == "impostor"


def test_live_tie_rule_is_seeded():
    def draw(seed):
        rng = random.Random(seed)
        return [decide(ballots(3, 2, 1, 0), IMP, WORD, tie_rule="sym_candidate", rng=rng).winner_live for _ in range(50)]

    assert draw(7) == draw(7)
    assert draw(7) != draw(8)


def test_bad_arguments():
    with pytest.raises(ValueError, match="tie_rule"):
        decide(ballots(0, 0, 0, 0), IMP, WORD, tie_rule="coin")
    with pytest.raises(ValueError, match="4 ballots"):
        decide([Ballot(1)], IMP, WORD)
    with pytest.raises(ValueError, match="seeded rng"):
        decide(ballots(3, 2, 1, 0), IMP, WORD, tie_rule="sym_side")


@pytest.mark.parametrize("guess, word", [
    ("tomatoes", "tomato"), ("volcanoes", "volcano"), ("wolves", "wolf"), ("buses", "bus"), ("knives", "knife"),
    ("cities", "city"), ("quizzes", "quiz"), ("the Wolves!", "wolf"),
    # read as the leak rule reads text: fullwidth, accents, look-alike letters, invisible characters
    ("\uff43\uff41\uff54", "cat"), ("caf\u00e9", "cafe"), ("cafe\u0301", "cafe"), ("\u0441\u0430t", "cat"),
    ("c\u200bat", "cat"), ("\U0001d41c\U0001d41a\U0001d42d", "cat"), ("\uff54\uff4f\uff4d\uff41\uff54\uff4f\uff45\uff53", "tomato"),
])
def test_guess_is_the_word_or_a_regular_plural_as_read(guess, word):
    assert guess_matches(guess, word)


@pytest.mark.parametrize("guess, word", [
    # nothing is taken off the majority word: a cut-off stem is not the word
    ("cactu", "cactus"), ("octopu", "octopus"), ("tenni", "tennis"), ("mathematic", "mathematics"),
    ("glas", "glass"), ("bu", "bus"),
    # other inflections and derivations are other words; so are look-alikes of other letters
    ("baking", "bake"), ("happiest", "happy"), ("catlike", "cat"), ("\u03c3at", "sat"), ("c a t", "cat"),
])
def test_guess_that_is_not_the_word(guess, word):
    assert not guess_matches(guess, word)
