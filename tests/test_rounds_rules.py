"""The pure rules of multi-round games (impostor_bench.core.rules.decide_round, impostor_bench.core.rounds;
docs/rules.md "Multi-round games")."""

from __future__ import annotations

import random

import pytest

from impostor_bench.core import prompts
from impostor_bench.core.records import MoveRow, PlayerRow, moves_of_player_rows, moves_of_players
from impostor_bench.core.rounds import (NOTE_MAX_CHARS, RoundView, clip_note, public_transcript, repeat_violation,
                                        round_ballot_class, speaking_order_of_round)
from impostor_bench.core.rules import Ballot, counted_vote, decide_round

IMP = 2
WORD = "apple"


def votes(*targets, declared=(), guess=None):
    """Ballots of seats 0..n-1 (a target None: no counted vote)."""
    return {seat: Ballot(t, seat in declared, guess if seat in declared else None) for seat, t in enumerate(targets)}


def decide(ballots, remaining=(0, 1, 2, 3), round_no=1, max_rounds=3, tie_rule="default", rng=None):
    return decide_round(ballots, remaining, IMP, WORD, round_no=round_no, max_rounds=max_rounds,
                        tie_rule=tie_rule, rng=rng)


def test_unique_top_on_impostor_eliminates_it_and_majority_wins():
    r = decide(votes(2, 2, 0, 2))
    assert (r.eliminated, r.winner, r.win_condition) == (2, "majority", "eliminated")
    assert r.votes == {2: 3, 0: 1}


def test_a_majority_seat_eliminated_in_round_one_goes_on():
    r = decide(votes(1, 0, 1, 1))
    assert (r.eliminated, r.winner, r.win_condition) == (1, None, None)


def test_second_majority_elimination_leaves_two_and_the_impostor_wins():
    r = decide({0: Ballot(3), 2: Ballot(3), 3: Ballot(0)}, remaining=(0, 2, 3), round_no=2)
    assert (r.eliminated, r.winner, r.win_condition) == (3, "impostor", "two_left")


def test_tie_eliminates_nobody_under_the_default_rule():
    r = decide(votes(1, 0, 1, 0))
    assert (r.eliminated, r.winner, r.tie_k, r.impostor_in_tie) == (None, None, 2, False)


def test_tie_in_the_last_round_is_rounds_exhausted():
    r = decide(votes(2, 2, 0, 0), round_no=3, max_rounds=3)
    assert (r.eliminated, r.winner, r.win_condition, r.impostor_in_tie) == (None, "impostor", "rounds_exhausted", True)


def test_majority_seat_eliminated_in_the_last_round_is_rounds_exhausted():
    r = decide(votes(1, 0, 1, 1), round_no=2, max_rounds=2)
    assert (r.eliminated, r.win_condition) == (1, "rounds_exhausted")


def test_no_counted_votes_eliminates_nobody():
    r = decide(votes(None, None, None, None))
    assert (r.eliminated, r.winner, r.tie_k) == (None, None, 0)


def test_sym_candidate_draws_one_tied_seat_with_the_seeded_rng():
    drawn = {decide(votes(1, 0, 1, 0), tie_rule="sym_candidate", rng=random.Random(s)).eliminated for s in range(40)}
    assert drawn == {0, 1}
    again = [decide(votes(1, 0, 1, 0), tie_rule="sym_candidate", rng=random.Random(7)).eliminated for _ in range(3)]
    assert len(set(again)) == 1


def test_sym_side_eliminates_the_impostor_or_a_tied_majority_seat():
    outcomes = {decide(votes(2, 2, 0, 0), tie_rule="sym_side", rng=random.Random(s)).eliminated for s in range(40)}
    assert outcomes == {0, 2}


def test_symmetric_rules_need_an_rng():
    with pytest.raises(ValueError, match="rng"):
        decide(votes(1, 0, 1, 0), tie_rule="sym_candidate")


def test_majority_self_declaration_comes_first():
    r = decide(votes(2, 2, 0, 2, declared=(0,)))
    assert (r.eliminated, r.winner, r.win_condition) == (None, "majority", "majority_self_declared")


@pytest.mark.parametrize("guess,winner,cond", [("Apples", "impostor", "impostor_guess_correct"),
                                               ("pear", "majority", "impostor_guess_wrong")])
def test_impostor_self_declaration_is_decided_by_its_guess(guess, winner, cond):
    r = decide(votes(2, 2, 0, 2, declared=(IMP,), guess=guess))
    assert (r.eliminated, r.winner, r.win_condition) == (None, winner, cond)


def test_votes_for_an_eliminated_seat_or_oneself_do_not_count():
    remaining = (0, 2, 3)
    assert counted_vote(1, 0, remaining) is None
    assert counted_vote(0, 0, remaining) is None
    assert counted_vote(3, 0, remaining) == 3
    # two of three votes land on the eliminated seat 1: only seat 3's vote for 0 counts
    r = decide({0: Ballot(1), 2: Ballot(1), 3: Ballot(0)}, remaining=remaining, round_no=2)
    assert r.votes == {0: 1} and r.eliminated == 0 and r.win_condition == "two_left"
    assert round_ballot_class(1, "valid", 0, remaining) == "eliminated_seat"
    assert round_ballot_class(3, "valid", 0, remaining) == "valid"
    assert round_ballot_class(None, "unparseable", 0, remaining) == "unparseable"


def test_a_round_needs_exactly_the_remaining_seats_ballots():
    with pytest.raises(ValueError, match="one ballot per remaining seat"):
        decide(votes(1, 0, 1, 1), remaining=(0, 2, 3))
    with pytest.raises(ValueError, match="not among the remaining"):
        decide({0: Ballot(1), 1: Ballot(0), 3: Ballot(0)}, remaining=(0, 1, 3))


def play(rounds, max_rounds):
    """Decide a game round after round as the solver's loop does (the seats voted out leave)."""
    remaining, results = [0, 1, 2, 3], []
    for i, ballots in enumerate(rounds, start=1):
        results.append(decide_round(ballots, remaining, IMP, WORD, round_no=i, max_rounds=max_rounds))
        if results[-1].winner is not None:
            break
        if results[-1].eliminated is not None:
            remaining.remove(results[-1].eliminated)
    return results


def test_three_rounds_tie_then_a_majority_seat_then_the_impostor():
    rounds = [votes(1, 0, 1, 0),  # tie: nobody
              votes(1, 0, 1, 1),  # seat 1 out
              {0: Ballot(2), 2: Ballot(0), 3: Ballot(2)}]  # impostor out
    results = play(rounds, max_rounds=3)
    assert (results[-1].winner, results[-1].win_condition) == ("majority", "eliminated")
    assert [r.eliminated for r in results] == [None, 1, 2]
    assert [r.remaining for r in results] == [(0, 1, 2, 3), (0, 1, 2, 3), (0, 2, 3)]
    assert [r.winner for r in results[:2]] == [None, None]


def test_exhaustion_after_only_ties():
    results = play([votes(1, 0, 1, 0)] * 2, max_rounds=2)
    assert [(r.winner, r.win_condition, r.eliminated) for r in results] == [
        (None, None, None), ("impostor", "rounds_exhausted", None)]


def test_speaking_order_restricted_to_remaining_seats():
    assert speaking_order_of_round((3, 1, 0, 2), (0, 2, 3)) == (3, 0, 2)


def test_a_repeat_of_ones_own_description_is_invalid():
    assert repeat_violation("It is red, and sweet!", ["it is RED and sweet"]) == (
        "it repeats your description from round 1; give a new one")
    assert repeat_violation("It grows on trees.", ["It is red and sweet."]) is None
    assert repeat_violation("anything", []) is None


@pytest.mark.parametrize("again", [
    "It is red \u0430nd sweet.",  # one Cyrillic a
    "\uff29\uff54 is red and sweet.",  # a fullwidth I
    "It is r\u200bed and sweet.",  # a zero-width space inside a word
    "It is r\u0435d and sw\u0435\u0435t.",  # Cyrillic e
])
def test_a_repeat_read_as_the_leak_rule_reads_text_is_a_repeat(again):
    """A look-alike letter or an invisible character does not make a description new."""
    assert repeat_violation(again, ["It is red and sweet."]) == "it repeats your description from round 1; give a new one"
    assert repeat_violation("It is r\u0435d and sour.", ["It is red and sweet."]) is None


def test_notes_are_one_line_and_bounded():
    assert clip_note("a\n b   c") == "a b c"
    assert len(clip_note("x" * 1000)) == NOTE_MAX_CHARS


def test_public_transcript_names_descriptions_votes_and_eliminations():
    text = public_transcript([RoundView(1, ((1, "red fruit"), (0, "keeps doctors away")),
                                        ((0, 1), (1, None)), 1)])
    assert "Round 1 descriptions:\nPlayer 2: red fruit\nPlayer 1: keeps doctors away" in text
    assert "Player 1 voted Player 2; Player 2 voted no valid vote." in text
    assert "Player 2 was eliminated" in text
    assert "nobody was eliminated" in public_transcript([RoundView(1, (), (), None)])


def test_round_context_enters_both_prompts_and_keeps_the_paper_prompts_without_it():
    ctx = prompts.round_context(round_no=2, max_rounds=3, remaining_labels=[1, 3, 4], history="Round 1 ...",
                                notes=["watch Player 2"])
    assert "round 2 of at most 3" in ctx and "Player 1, Player 3, Player 4" in ctx
    assert "After round 1: watch Player 2" in ctx
    plain = prompts.description_prompt(mode="homogeneous", word="apple", player_label=1, previous=[])
    with_ctx = prompts.description_prompt(mode="homogeneous", word="apple", player_label=1, previous=[], context=ctx)
    assert ctx not in plain and ctx in with_ctx and with_ctx.replace(ctx + "\n\n", "") == plain
    vote = prompts.voting_prompt(mode="homogeneous", word="apple", player_label=1, descriptions=[(1, "x")],
                                 context=ctx)
    assert vote.index(ctx) < vote.index("All descriptions:")


def test_one_round_moves_are_the_players_rows():
    p = PlayerRow(game_id="e/g0", seat=1, model="bot/random", role="majority", speaking_position=2,
                  description="red", description_valid=True, vote=2, confidence=0.5, self_declared=False,
                  experiment_id="e", word="apple", input_tokens=10, output_tokens=3).model_dump()
    (m,) = moves_of_players([p])
    assert MoveRow.model_validate(m).round == 1
    assert (m["vote"], m["speaking_position"], m["eliminated"], m["note"], m["input_tokens"]) == (2, 2, False, None, 10)


def test_moves_of_validated_player_rows_are_the_validated_moves():
    """The exporter's shortcut for rows it has just validated gives what validating each move does."""
    import itertools

    rows = []
    for i, (vote, conf, team, tokens, out, ballot) in enumerate(itertools.product(
            (None, 0, 3), (None, 0.0, 1.0), (None, "B"), (None, 0, 7), (None, 2), (None, "unparseable"))):
        extra = {"ballot_class": ballot, "ballot_valid": False, "ballot_error": "no number"} if ballot else {}
        rows.append(PlayerRow(game_id="e/g0", seat=i % 4, model="m/x", role=("majority", "impostor")[i % 2],
                              team=team, speaking_position=(i + 1) % 4, description=f"d{i}",
                              description_valid=bool(i % 3), vote=vote, confidence=conf, self_declared=bool(i % 5 == 0),
                              word_guess="pear" if i % 7 == 0 else None, experiment_id="e", word="apple",
                              description_error=None if i % 3 else "empty", reasoning="r" if i % 2 else None,
                              input_tokens=tokens, output_tokens=tokens, eliminated_round=out, **extra).model_dump())
    assert moves_of_player_rows(rows) == moves_of_players(rows)
    assert [list(m) for m in moves_of_player_rows(rows)] == [list(m) for m in moves_of_players(rows)]  # column order


def test_multi_round_game_reads_round_by_round_in_the_summary():
    """The scorer's multi-round rows (impostor_bench.scorers.rounds_record, from the stored decisions) through the
    summary's answer and explanation."""
    from impostor_bench.core.schedule import GameSpec, PairRef
    from impostor_bench.core.seat import SeatRecord
    from impostor_bench.core.summary import answer_line, explanation
    from impostor_bench.scorers.rounds_record import build_rounds_record
    from impostor_bench.scorers.winner import build_record

    spec = GameSpec(game_index=0, sample_id="g0", game_seed=7, mode="homogeneous", difficulty="easy",
                    pair=PairRef("easy-001", "tiger", "lion"), impostor_seat=IMP, speaking_order=(1, 0, 3, 2),
                    team_assignment=None)

    def seat(vote, text):
        return SeatRecord(model="bot/x", description=text, description_valid=True, vote=vote, ballot_class="valid",
                          vote_raw=["{}"], description_raw=[text])

    r1 = {s: seat(v, f"r1 clue {s}") for s, v in enumerate([1, 0, 1, 1])}  # Player 2 out
    r2 = {s: seat(v, f"r2 clue {s}") for s, v in zip((0, 2, 3), (2, 0, 2))}  # the impostor out
    record = {"max_rounds": 3, "private_notes": True, "tie_rule": "default", "rounds": [
        {"round": 1, "remaining": [0, 1, 2, 3], "order": [1, 0, 3, 2], "seats": r1, "notes": {0: "watch P3"}},
        {"round": 2, "remaining": [0, 2, 3], "order": [0, 3, 2], "seats": r2, "notes": {}}]}
    decisions = [decide_round({s: Ballot(counted_vote(r.vote, s, rem), False, None) for s, r in seats.items()}, rem,
                              IMP, "tiger", round_no=i, max_rounds=3)
                 for i, (seats, rem) in enumerate([(r1, (0, 1, 2, 3)), (r2, (0, 2, 3))], start=1)]
    first = build_record(spec, [r1[s] for s in range(4)], decisions, experiment_id="e", seed=0, tie_rule="default")
    game, players, moves = build_rounds_record(spec, *first, record, decisions)
    assert (game.winner, game.win_condition, game.rounds_played, game.elimination_order) == (
        "majority", "eliminated", 2, "1,2")
    assert [p.eliminated_round for p in players] == [None, 1, 2, None]
    assert [(m.round, m.seat, m.speaking_position, m.eliminated) for m in moves if m.round == 2] == [
        (2, 0, 0, False), (2, 2, 2, True), (2, 3, 1, False)]
    assert moves[0].note == "watch P3"
    line = answer_line(game, players, moves)
    assert line.startswith("Majority wins (eliminated) · 2 of 3 rounds, out: P2, P3") and "P1→P3" in line
    text = explanation(game, players, moves)
    assert "voted Player 3, the impostor, out in round 2" in text
    assert text.index("**Round 1**") < text.index("**Round 2**") and "watch P3" in text
    assert text.count("**eliminated**") == 2
