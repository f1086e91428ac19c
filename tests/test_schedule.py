"""Schedules (A.3): block properties, determinism, stable ids."""

from collections import Counter

import pytest

from impostor.schedule import PairRef, build_schedule, derive_seed, impostor_seats
from impostor.wordpairs import load_word_pairs

PAIRS = [PairRef(f"easy-{i:03d}", f"m{i}", f"i{i}") for i in range(1, 11)]


def test_default_rotation_cycles_seats():
    assert [s for s, _ in impostor_seats("homogeneous", 9, 0)] == [0, 1, 2, 3, 0, 1, 2, 3, 0]


def test_cross_play_blocks_cover_every_seat_once():
    seats = [s for s, _ in impostor_seats("cross_play", 40, 5)]
    blocks = [seats[i : i + 4] for i in range(0, 40, 4)]
    assert all(sorted(b) == [0, 1, 2, 3] for b in blocks)
    assert len({tuple(b) for b in blocks}) > 1  # order is shuffled within blocks


@pytest.mark.parametrize("mode", ["team_blind", "team_aware", "team_semi_aware"])
def test_team_blocks(mode):
    games = impostor_seats(mode, 24, 3)
    for start in range(0, 24, 8):
        block = games[start : start + 8]
        for half, host in ((block[:4], "A"), (block[4:], "B")):
            assert sorted(s for s, _ in half) == [0, 1, 2, 3]
            for seat, teams in half:
                assert teams[seat] == host
                assert Counter(teams) == Counter({"A": 2, "B": 2})


def test_schedule_is_deterministic_and_seed_sensitive():
    a = build_schedule("team_aware", "easy", PAIRS, 16, seed=11)
    b = build_schedule("team_aware", "easy", PAIRS, 16, seed=11)
    c = build_schedule("team_aware", "easy", PAIRS, 16, seed=12)
    assert a == b
    assert [g.speaking_order for g in a] != [g.speaking_order for g in c]


def test_derive_seed_is_stable_across_processes():
    # a fixed value: guards against accidental use of Python's randomised hash()
    assert derive_seed(0, "easy", "order", 0) == derive_seed(0, "easy", "order", 0)
    assert derive_seed(1, 2) != derive_seed(12)
    assert derive_seed("x") == 0x2D711642B726B044 >> 1  # sha256("x")[:8]


def test_pairs_cycle_without_repeats_within_a_cycle():
    games = build_schedule("homogeneous", "easy", PAIRS, 25, seed=1)
    ids = [g.pair.pair_id for g in games]
    assert len(set(ids[:10])) == 10 and len(set(ids[10:20])) == 10


def test_sample_ids_unique_and_derived_from_seed_pair_seat():
    games = build_schedule("cross_play", "easy", PAIRS, 40, seed=9)
    ids = [g.sample_id for g in games]
    assert len(set(ids)) == 40
    g = games[7]
    assert g.pair.pair_id in g.sample_id and f"imp{g.impostor_seat}" in g.sample_id and g.sample_id.endswith("-s9")


def test_speaking_order_is_uniform():
    pairs = load_word_pairs()["easy"]
    refs = [PairRef(p.pair_id, p.majority, p.impostor) for p in pairs]
    games = build_schedule("homogeneous", "easy", refs, 4000, seed=0)
    first = Counter(g.speaking_order[0] for g in games)
    assert all(abs(first[s] - 1000) < 4 * (4000 * 0.25 * 0.75) ** 0.5 for s in range(4))
    assert all(sorted(g.speaking_order) == [0, 1, 2, 3] for g in games)


def test_metadata_round_trip():
    for g in build_schedule("team_semi_aware", "easy", PAIRS, 8, seed=2):
        assert type(g).from_metadata(g.to_metadata()) == g


def test_teammate():
    g = build_schedule("team_aware", "easy", PAIRS, 8, seed=2)[0]
    mates = {s: g.teammate(s) for s in range(4)}
    assert all(mates[mates[s]] == s and g.team_assignment[s] == g.team_assignment[mates[s]] for s in range(4))
    assert build_schedule("homogeneous", "easy", PAIRS, 1, seed=2)[0].teammate(0) is None


@pytest.mark.parametrize("args, msg", [
    (("duel", "easy", PAIRS, 4, 0), "mode must be"),
    (("homogeneous", "trivial", PAIRS, 4, 0), "difficulty must be"),
    (("homogeneous", "easy", PAIRS, 0, 0), "n_games"),
    (("homogeneous", "easy", [], 4, 0), "no word pairs"),
])
def test_bad_schedule_arguments(args, msg):
    with pytest.raises(ValueError, match=msg):
        build_schedule(*args)
