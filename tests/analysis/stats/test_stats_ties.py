"""Ties and symmetric tie-breakers (Tables 7-9) against the game engine's per-game decision."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

from _synth_stats import fast_config, make_ballot_games, shared_ballot
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.stats import TABLES, Analysis, game_ties
from impostor_bench.analysis.stats._base import prepared
from impostor_bench.core.rules import Ballot, decide


def engine_outcomes(data) -> pd.DataFrame:
    """impostor_bench.core.rules.decide on every game (an independent, per-game implementation)."""
    rng = random.Random(0)
    rows = []
    by_game = {gid: r.sort_values("seat") for gid, r in data.players.groupby("game_id")}
    for g in data.games.itertuples():
        r = by_game[g.game_id]
        ballots = [Ballot(None if pd.isna(v) else int(v), bool(sd), None if pd.isna(w) else w)
                   for v, sd, w in zip(r["vote"], r["self_declared"], r["word_guess"])]
        o = decide(ballots, g.impostor_seat, g.majority_word, rng=rng)
        rows.append({"mode": g.mode, "difficulty": g.difficulty, "tie": o.win_condition == "tie",
                     "k": o.tie_k if o.win_condition == "tie" else 0,
                     "in_tie": o.impostor_in_tie and o.win_condition == "tie",
                     "d": o.p_imp_default, "c": o.p_imp_sym_candidate, "s": o.p_imp_sym_side})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def engine():
    return engine_outcomes(shared_ballot())


def test_per_game_ties_match_engine(engine):
    t = game_ties(prepared(shared_ballot(), need_players=True))
    assert t["tie"].sum() > 50
    np.testing.assert_array_equal(t["tie"].to_numpy(), engine["tie"].to_numpy())
    np.testing.assert_array_equal(t["k"].to_numpy(), engine["k"].to_numpy())
    np.testing.assert_array_equal(t["impostor_in_tie"].to_numpy(), engine["in_tie"].to_numpy())
    np.testing.assert_allclose(t["p_default"], engine["d"])
    np.testing.assert_allclose(t["p_sym_cand"], engine["c"])
    np.testing.assert_allclose(t["p_sym_side"], engine["s"])


def test_tables_aggregate_engine(engine):
    data = shared_ballot()
    ts = TABLES["tie_sizes"](data, fast_config()).set_index("mode")
    tm = TABLES["tiebreak_mode"](data, fast_config()).set_index("mode")
    for mode, e in list(engine.groupby("mode")) + [("ALL", engine)]:
        ties = e[e["tie"]]
        assert ts.loc[mode, "ties"] == len(ties)
        assert [ts.loc[mode, f"k{k}"] for k in (2, 3, 4)] == [(ties["k"] == k).sum() for k in (2, 3, 4)]
        assert ts.loc[mode, "impostor_in_tie_pct"] == pytest.approx(100 * ties["in_tie"].mean())
        assert tm.loc[mode, "default"] == pytest.approx(100 * e["d"].mean())
        assert tm.loc[mode, "sym_cand"] == pytest.approx(100 * e["c"].mean())
        assert tm.loc[mode, "sym_side"] == pytest.approx(100 * e["s"].mean())
        assert tm.loc[mode, "delta_cand"] == pytest.approx(100 * (e["c"].mean() - e["d"].mean()))
        assert tm.loc[mode, "delta_side"] == pytest.approx(100 * (e["s"].mean() - e["d"].mean()))
        assert tm.loc[mode, "ties"] == len(ties)
    tmd = TABLES["tiebreak_mode_difficulty"](data, fast_config()).set_index(["mode", "difficulty"])
    for (mode, diff), e in engine.groupby(["mode", "difficulty"]):
        assert tmd.loc[(mode, diff), "sym_cand"] == pytest.approx(100 * e["c"].mean())
        assert tmd.loc[(mode, diff), "ties"] == e["tie"].sum()
    assert (tm["delta_cand"] <= 0).all() and (tm["delta_side"] <= 0).all()


def _one_game(votes, imp=0, decl=(False,) * 4, winner="impostor"):
    games = pd.DataFrame({"experiment_id": ["e"], "game_id": ["g"], "game_index": [0], "mode": ["homogeneous"],
                          "difficulty": ["easy"], "pair_id": ["p"], "majority_word": ["cat"],
                          "impostor_word": ["dog"], "impostor_seat": [imp], "impostor_model": ["a"],
                          "impostor_speaking_position": [0], "winner": [winner], "win_condition": ["x"]})
    players = pd.DataFrame({"game_id": "g", "seat": range(4), "model": "a",
                            "role": ["impostor" if s == imp else "majority" for s in range(4)],
                            "vote": pd.array(votes, dtype="Int64"), "self_declared": list(decl)})
    return AnalysisData(games, players)


@pytest.mark.parametrize("votes,imp,decl,winner,k,in_tie,p_cand", [
    ([0, 0, 1, 1], 0, (False,) * 4, "impostor", 2, True, 0.5),  # 2-2 tie incl. impostor (self-vote + 1 on imp)
    ([1, 0, 0, 1], 0, (False,) * 4, "majority", 0, False, 0.0),  # 2 non-impostor votes: conviction, no tie
    ([1, 2, 3, 0], 0, (False,) * 4, "impostor", 4, True, 0.75),  # 1-1-1-1
    ([1, 2, 1, 2], 0, (False,) * 4, "impostor", 2, False, 1.0),  # tie without the impostor
    ([1, 0, 0, 0], 0, (False,) * 4, "majority", 0, False, 0.0),  # conviction
    ([1, 0, 2, 2], 0, (False,) * 4, "impostor", 0, False, 1.0),  # seat 2 strictly on top: no tie
    ([1, 0, 0, 1], 0, (False, True, False, False), "majority", 0, False, 0.0),  # self-declaration
    ([None, None, None, None], 0, (False,) * 4, "impostor", 0, False, 1.0),  # no valid ballots
    ([2, None, 1, None], 0, (False,) * 4, "impostor", 2, False, 1.0),  # invalid ballots excluded
])
def test_hand_made_games(votes, imp, decl, winner, k, in_tie, p_cand):
    t = game_ties(prepared(_one_game(votes, imp, decl, winner), need_players=True)).iloc[0]
    assert (t["k"], bool(t["impostor_in_tie"])) == (k, in_tie)
    assert t["p_sym_cand"] == pytest.approx(p_cand)
    assert t["p_sym_side"] == pytest.approx(0.5 if k else (1.0 if winner == "impostor" else 0.0))


def test_tie_rates_rise_when_detection_falls():
    lo = make_ballot_games(n_models=3, games_per_exp=8, seed=1, det=[0.2, 0.2, 0.2])
    hi = make_ballot_games(n_models=3, games_per_exp=8, seed=1, det=[0.9, 0.9, 0.9])
    t_lo = TABLES["tiebreak_mode"](lo, fast_config()).set_index("mode").loc["ALL"]
    t_hi = TABLES["tiebreak_mode"](hi, fast_config()).set_index("mode").loc["ALL"]
    assert t_lo["ties"] > t_hi["ties"]
    assert t_lo["delta_side"] < 0 and t_lo["delta_cand"] < 0


@pytest.fixture(scope="module")
def three_rounds():
    from impostor_bench.analysis.sim.rounds import simulate_rounds

    g, p, mv, m = simulate_rounds(48, 12, 3, seed=7)
    return AnalysisData(g, p, m, moves=mv)


def test_multi_round_games_enter_by_their_first_round_under_every_policy(three_rounds):
    """A multi-round game's winner is the whole game's while its players rows are round 1: Default,
    Sym-candidate and Sym-side must all be the first round decided by the one-round rules, so they
    equal the engine's decide() on those ballots, game by game."""
    data = three_rounds
    assert (data.games["max_rounds"] > 1).all()
    rng = random.Random(0)
    by_game = {gid: r.sort_values("seat") for gid, r in data.players.groupby("game_id")}
    want = []
    for g in data.games.itertuples():
        r = by_game[g.game_id]
        ballots = [Ballot(None if pd.isna(v) else int(v), bool(sd), None if pd.isna(w) else w)
                   for v, sd, w in zip(r["vote"], r["self_declared"], r["word_guess"])]
        o = decide(ballots, g.impostor_seat, g.majority_word, rng=rng)
        # a round-1 self-declaration ends the multi-round game: its logged winner is round 1's
        d = o.p_imp_default if not r["self_declared"].any() else float(g.winner == "impostor")
        want.append((d, o.p_imp_sym_candidate if not r["self_declared"].any() else d))
    t = game_ties(prepared(Analysis(data), need_players=True))
    assert t["first_round_only"].all() and t["tie"].sum() > 20
    np.testing.assert_allclose(t["p_default"], [w[0] for w in want])
    np.testing.assert_allclose(t["p_sym_cand"], [w[1] for w in want])
    # the logged (final) winner differs from round 1's in many games: the old mix is not this
    assert (t["p_default"] != (data.games["winner"] == "impostor").to_numpy()).sum() > 20


def test_no_symmetric_rule_raises_the_impostor_win_on_three_round_games(three_rounds):
    data = Analysis(three_rounds)
    tm = TABLES["tiebreak_mode"](data, fast_config())
    tmd = TABLES["tiebreak_mode_difficulty"](data, fast_config())
    for t in (tm, tmd):
        assert (t["delta_cand"] <= 1e-12).all() and (t["delta_side"] <= 1e-12).all()
        assert (t["first_round_only"] == t["games"]).all()
    assert tm.set_index("mode").loc["ALL", "delta_cand"] < 0
    assert any("enter by their first round only" in n for n in data.notes)
