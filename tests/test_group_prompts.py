"""Prompts for N players and K impostors; the paper's group gets A.2 verbatim (docs/rules.md, "Group size")."""

import pytest

from impostor_bench.core import prompts


def test_the_papers_group_is_the_paper_text():
    assert prompts.description_intro(4, 1) == prompts.DESCRIPTION_INTRO
    assert prompts.voting_intro(1) == prompts.VOTING_INTRO
    assert prompts.description_prompt(mode="homogeneous", word="dog", player_label=2, previous=[]) == \
        prompts.description_prompt(mode="homogeneous", word="dog", player_label=2, previous=[], players=4, impostors=1)


@pytest.mark.parametrize("players, impostors, counts", [
    (6, 2, ("You and 5 other players", "Four players (the majority)", "two players (the impostors) share")),
    (5, 1, ("You and 4 other players", "Four players (the majority)", "one player (the impostor) has")),
    (8, 3, ("You and 7 other players", "Five players (the majority)", "three players (the impostors) share")),
])
def test_the_counts_follow_the_group(players, impostors, counts):
    text = prompts.description_prompt(mode="cross_play", word="dog", player_label=1, previous=[],
                                      players=players, impostors=impostors)
    for phrase in counts:
        assert phrase in text
    assert "3 other players" not in text and "Three players" not in text
    assert ("identify an impostor" in text) == (impostors > 1)


def test_the_ballot_asks_for_one_of_several_impostors():
    text = prompts.voting_prompt(mode="homogeneous", word="dog", player_label=1,
                                 descriptions=[(n, "x") for n in range(1, 7)], impostors=2)
    assert text.startswith("Based on the descriptions below, identify one of the players who have the different")
    assert "Player 6: x" in text


def test_a_ballot_may_name_any_player_of_the_game():
    from impostor_bench.core.parsing import parse_vote

    ballot = '{"suspected_impostor_id": "6", "confidence": 0.5, "reasoning": "x", "self_declaration": false}'
    assert parse_vote(ballot, 0, players=6).vote == 5
    assert parse_vote(ballot, 0).ballot_class == "names_no_player"  # the paper's four players
    assert parse_vote(ballot.replace('"6"', '"7"'), 0, players=6).error == "there is no Player 7 (players are 1-6)"
