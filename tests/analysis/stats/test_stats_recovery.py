"""Issue 43, M.4's recovery mechanisms on hand-made multi-round games with known answers, and on
simulated games (the shares add up, immediate + graduated >= rounds_trust's next-round recovery)."""

from __future__ import annotations

import pandas as pd
import pytest

from _synth_stats import fast_config
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.sim.rounds import simulate_rounds
from impostor_bench.analysis.stats import TABLES, Analysis

# seats 0, 1 = team A (majority), 2 = team B (majority), 3 = team B (impostor); seat 0 betrays seat 1 in
# round 1 of every game; then: a = together in round 2 (immediate), b = apart, then together in round 3
# (graduated), c = apart in rounds 2-4 (severance), d = betrayal in the last round (undetermined)
VOTES = {  # game -> per round, the votes of seats 0-3
    "a": [(1, 3, 3, 0), (3, 3, 3, 0), (3, 3, 3, 0), (3, 3, 3, 0)],
    "b": [(1, 3, 3, 0), (2, 3, 3, 0), (3, 3, 3, 0), (3, 3, 3, 0)],
    "c": [(1, 3, 3, 0), (2, 3, 3, 0), (2, 3, 3, 0), (2, 3, 3, 0)],
    "d": [(3, 3, 3, 0), (3, 3, 3, 0), (3, 3, 3, 0), (1, 3, 3, 0)],
}


def _data() -> AnalysisData:
    games, moves = [], []
    for gid, rounds in VOTES.items():
        games.append({"experiment_id": f"x{gid}", "game_id": gid, "game_index": 0, "mode": "team_aware",
                      "difficulty": "easy", "pair_id": "p", "majority_word": "dog", "impostor_word": "wolf",
                      "impostor_seat": 3, "impostor_model": "m", "impostor_speaking_position": 3,
                      "winner": "impostor", "win_condition": "rounds_exhausted", "max_rounds": 4})
        for r, votes in enumerate(rounds, 1):
            for seat, v in enumerate(votes):
                moves.append({"game_id": gid, "experiment_id": f"x{gid}", "round": r, "seat": seat,
                              "model": "m0" if seat < 2 else "m1", "role": "impostor" if seat == 3 else "majority",
                              "team": "A" if seat < 2 else "B", "speaking_position": seat, "description": "d",
                              "description_valid": True, "description_error": None, "vote": v,
                              "ballot_class": "valid", "confidence": 0.5, "reasoning": "r", "self_declared": False,
                              "word_guess": None, "eliminated": False, "note": None, "input_tokens": None,
                              "output_tokens": None})
    mv = pd.DataFrame(moves)
    mv["vote"] = mv["vote"].astype("Int64")
    players = mv[mv["round"] == 4].drop(columns=["round", "eliminated", "note"]).copy()
    return AnalysisData(pd.DataFrame(games), players, moves=mv)


def test_mechanisms_of_hand_made_games():
    t = TABLES["rounds_recovery"](_data(), fast_config()).set_index("model")
    row = t.loc["m0"]
    assert row["n_betrayals"] == 3 and row["n_undetermined"] == 1  # game d: no round after the betrayal
    assert row["immediate_pct"] == pytest.approx(100 / 3) == row["graduated_pct"] == row["severance_pct"]
    assert "m1" not in t.index  # seat 2 naming its impostor teammate is detection, not betrayal


def test_shares_on_simulated_rounds_add_up_and_contain_next_round_recovery():
    g, p, mv, m = simulate_rounds(30, 12, 4, seed=5)
    data = Analysis(AnalysisData(g, p, m, moves=mv))
    t = TABLES["rounds_recovery"](data, fast_config()).set_index("model")
    rt = TABLES["rounds_trust"](data, fast_config()).set_index("model")
    assert t.loc["ALL", "n_betrayals"] > 20
    shares = t[["immediate_pct", "graduated_pct", "severance_pct"]].dropna()
    assert ((shares.sum(axis=1) - 100).abs() < 1e-9).all()
    # immediate = recovery in the next round among betrayals observed later; rounds_trust's recovery
    # counts the same event among betrayals with both ballots in the next round (a subset): equal or larger
    assert t.loc["ALL", "immediate_pct"] <= rt.loc["ALL", "recovery_pct"] + 1e-9
    assert t.loc["ALL", "graduated_pct"] > 0
