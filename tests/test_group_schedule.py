"""Seating balance and speaking order for N players and K impostors (docs/rules.md, "Group size")."""

from collections import Counter

import pytest

from impostor_bench.core.schedule import GameSpec, PairRef, build_schedule

PAIRS = [PairRef(f"p{i}", f"m{i}", f"i{i}") for i in range(7)]


def _games(players, impostors, n_games=48, mode="homogeneous", exp="homogeneous|easy|x|s0|p6k2"):
    return build_schedule(mode, "easy", PAIRS, n_games, 0, exp, players=players, impostors=impostors)


@pytest.mark.parametrize("players, impostors", [(5, 1), (6, 2), (7, 3), (8, 3)])
def test_every_seat_is_an_impostor_k_times_a_block(players, impostors):
    games = _games(players, impostors, n_games=players * 6)
    for b in range(6):
        block = games[b * players:(b + 1) * players]
        counts = Counter(s for g in block for s in g.impostors)
        assert counts == {s: impostors for s in range(players)}
    for g in games:
        assert len(set(g.impostors)) == impostors and g.impostor_seat == min(g.impostors)
        assert g.impostors == tuple(sorted(g.impostors))


def test_speaking_order_is_a_uniform_permutation_of_the_seats():
    games = _games(6, 2, n_games=1200)
    assert all(sorted(g.speaking_order) == list(range(6)) for g in games)
    first = Counter(g.speaking_order[0] for g in games)
    assert set(first) == set(range(6)) and max(first.values()) - min(first.values()) < 90  # ~200 each
    # the impostor's speaking position is not tied to its seat
    pos = Counter(g.speaking_order.index(g.impostor_seat) for g in games)
    assert len(pos) == 6


def test_the_word_pairs_are_the_same_design_for_every_group_size():
    assert [g.pair for g in _games(6, 2)] == [g.pair for g in _games(4, 1)]


def test_metadata_round_trips_and_the_papers_game_keeps_its_keys():
    g = _games(7, 2)[3]
    md = g.to_metadata()
    assert (md["players"], md["impostors"], md["impostor_seats"]) == (7, 2, list(g.impostors))
    assert GameSpec.from_metadata(md) == g
    paper = _games(4, 1)[3]
    assert not {"players", "impostors", "impostor_seats"} & set(paper.to_metadata())
    back = GameSpec.from_metadata(paper.to_metadata())
    assert back == paper and back.impostors == (paper.impostor_seat,) and back.n_players == 4


def test_the_draws_depend_on_the_experiment():
    a, b = _games(6, 2, exp="e1"), _games(6, 2, exp="e2")
    assert [g.impostors for g in a] != [g.impostors for g in b]


@pytest.mark.parametrize("players, impostors, words", [(3, 1, "players=3"), (4, 2, "impostors=2"),
                                                       (9, 1, "players=9")])
def test_bad_groups_are_refused(players, impostors, words):
    with pytest.raises(ValueError, match=words):
        _games(players, impostors)


def test_team_modes_are_the_four_player_game_only():
    with pytest.raises(ValueError, match="mode=team_aware is defined for the four-player"):
        _games(6, 1, mode="team_aware")


def test_cross_play_seats_every_impostor_with_the_impostor_model():
    from impostor_bench.core.modes import mode_spec

    roles = mode_spec("cross_play").seat_roles(1, players=6, impostor_seats=(1, 4))
    assert roles == ["majority", "impostor", "majority", "majority", "impostor", "majority"]
    assert mode_spec("homogeneous").seat_roles(0, players=7) == ["model"] * 7
    assert mode_spec("cross_play").seat_roles(2) == ["majority", "majority", "impostor", "majority"]
