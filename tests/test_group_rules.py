"""The winner logic generalised to N players and K impostors (docs/rules.md, "Group size")."""

import itertools
import random

import pytest

from impostor_bench.core.group import conviction_threshold, group_problem, max_impostors
from impostor_bench.core.rules import Ballot, decide

WORD = "dog"


def ballots(*votes, declared=(), guesses=None):
    guesses = guesses or {}
    return [Ballot(v, s in declared, guesses.get(s)) for s, v in enumerate(votes)]


@pytest.mark.parametrize("players, impostors, threshold", [
    (4, 1, 2),  # the paper's "at least two" of three majority players
    (5, 1, 3), (5, 2, 2), (6, 1, 3), (6, 2, 3), (7, 3, 3), (8, 1, 4), (8, 3, 3),
])
def test_conviction_threshold_is_a_strict_majority_of_the_majority(players, impostors, threshold):
    assert conviction_threshold(players, impostors) == threshold
    majority = players - impostors
    assert threshold > majority / 2 and threshold - 1 <= majority / 2


@pytest.mark.parametrize("players, top", [(4, 1), (5, 2), (6, 2), (7, 3), (8, 3)])
def test_impostors_are_a_strict_minority(players, top):
    assert max_impostors(players) == top
    assert group_problem(players, top) is None
    assert "impostors" in group_problem(players, top + 1)
    assert group_problem(players, 0) is not None


@pytest.mark.parametrize("players, impostors, option", [(3, 1, "players=3"), (9, 1, "players=9"),
                                                        (4, 2, "impostors=2")])
def test_bad_groups_name_the_option_and_the_fix(players, impostors, option):
    problem = group_problem(players, impostors)
    assert problem.startswith(option) and "fix:" in problem and "\n" not in problem


def _paper_rule(b, imp):
    """The paper's A.1 for one impostor in four seats, written from its text, independently."""
    if any(x.self_declared for s, x in enumerate(b) if s != imp):
        return "majority_self_declared"
    if b[imp].self_declared:
        return "impostor_guess_correct" if (b[imp].word_guess or "").strip().lower() == WORD else "impostor_guess_wrong"
    if sum(1 for s, x in enumerate(b) if s != imp and x.vote == imp) >= 2:
        return "conviction"
    valid = [x.vote for x in b if x.vote is not None]
    if valid.count(imp) > len(valid) - valid.count(imp):
        return "strict_plurality"
    counts = [valid.count(s) for s in range(4)]
    return "tie" if valid and counts.count(max(counts)) >= 2 else "no_conviction"


def test_four_players_one_impostor_is_the_papers_rule_on_every_ballot():
    # every vote profile (a self-vote left out as the parser leaves it out), with and without declarations
    for imp in range(4):
        for votes in itertools.product([None, 0, 1, 2, 3], repeat=4):
            votes = tuple(None if v == s else v for s, v in enumerate(votes))
            for declared, guess in [((), None), ((imp,), "dog"), ((imp,), "cat"), (((imp + 1) % 4,), None)]:
                b = ballots(*votes, declared=declared, guesses={imp: guess})
                assert decide(b, imp, WORD).win_condition == _paper_rule(b, imp), (votes, imp, declared)
                assert decide(b, [imp], WORD) == decide(b, imp, WORD)


def test_six_players_two_impostors_convicting_one_impostor_is_a_majority_win():
    # impostors 1 and 4; the four majority players 0, 2, 3, 5
    out = decide(ballots(1, 0, 1, 1, 2, 4), [1, 4], WORD)
    assert (out.winner, out.win_condition, out.votes_on_impostor) == ("majority", "conviction", 4)


def test_split_majority_votes_convict_no_impostor():
    # two votes on each impostor: neither reaches 3 of the 4 majority votes, and the two tie at the top
    out = decide(ballots(1, 2, 1, 4, 3, 4), [1, 4], WORD)
    assert (out.winner, out.win_condition, out.tie_k, out.impostor_in_tie) == ("impostor", "tie", 2, True)
    assert out.p_imp_sym_candidate == 0.0  # both tied seats are impostors: eliminating either convicts


def test_impostor_votes_never_count_towards_a_conviction():
    # seat 1 gets two majority votes and the other impostor's: 3 votes, but only 2 from the majority
    out = decide(ballots(1, 0, 1, 2, 1, 3), [1, 4], WORD)
    assert out.win_condition != "conviction" and out.votes_on_impostor == 2
    assert out.win_condition == "no_conviction" and out.winner == "impostor"  # seat 1 has 3 of 6 votes: not strict


def test_strict_plurality_on_one_of_several_impostors():
    out = decide(ballots(1, None, None, 1, None, None), [1, 4], WORD)  # 2 votes on seat 1, none elsewhere
    assert (out.winner, out.win_condition) == ("majority", "strict_plurality")


@pytest.mark.parametrize("guesses, condition", [
    ({1: "dog", 4: "Dogs"}, "impostor_guess_correct"),  # every declared impostor right
    ({1: "dog", 4: "cat"}, "impostor_guess_wrong"),  # one wrong declaration loses for the side
    ({1: "cat"}, "impostor_guess_wrong"),
])
def test_several_declared_impostors_win_only_if_every_guess_is_right(guesses, condition):
    out = decide(ballots(1, 0, 1, 1, 2, 4, declared=set(guesses), guesses=guesses), [1, 4], WORD)
    assert out.win_condition == condition


def test_a_majority_declaration_beats_every_impostor_declaration():
    out = decide(ballots(1, 0, 1, 1, 2, 4, declared={1, 2}, guesses={1: "dog"}), [1, 4], WORD)
    assert out.win_condition == "majority_self_declared"


def test_sym_candidate_probability_counts_the_impostors_in_the_tie():
    # 3-way tie between seats 0 (majority), 1 and 4 (impostors) with two votes each (8 seats, 3 impostors)
    b = ballots(1, 0, 4, 0, 1, 4, None, None)
    out = decide(b, [1, 4, 6], WORD)
    assert out.tie_k == 3 and out.p_imp_sym_candidate == pytest.approx(1 / 3)
    rng = random.Random(7)
    live = [decide(b, [1, 4, 6], WORD, tie_rule="sym_candidate", rng=rng).winner_live for _ in range(3000)]
    assert live.count("impostor") / len(live) == pytest.approx(1 / 3, abs=0.03)


@pytest.mark.parametrize("n, seats", [(3, [0]), (9, [0]), (4, [0, 1]), (6, [0, 6])])
def test_impossible_games_are_refused(n, seats):
    with pytest.raises(ValueError, match="ballots"):
        decide([Ballot(None)] * n, seats, WORD)
