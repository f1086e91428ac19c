"""impostor_bench.analysis.stats.controls: the sensitivity analyses against hand computations, the negative
controls null under no effect and detecting a planted seat-parity effect."""

from __future__ import annotations

import numpy as np
import pytest

from _synth_stats import fast_config, make_logit_games, shared_ballot
from impostor_bench.analysis.stats import TABLES


def test_sensitivity_against_hand_computation():
    data = shared_ballot()
    s = TABLES["sensitivity"](data, fast_config()).set_index(["analysis", "quantity"])
    g = data.games.assign(y=data.games["winner"] == "impostor")
    rates = np.sort(g.groupby("experiment_id")["y"].mean().to_numpy())
    for cut in (5, 10):
        k = int(cut / 100 * len(rates))
        assert s.loc[(f"trim_{cut}pct", "mean_experiment_imp_win_rate"), "estimate"] == pytest.approx(
            rates[k:len(rates) - k].mean())
    first = g[g["game_index"] < 4]["y"].mean()  # 8 games per experiment
    assert s.loc[("first_half", "imp_win_rate"), "estimate"] == pytest.approx(first)
    # invalid ballot = no counted vote, except a self-declaring seat's (a legal self-vote;
    # contract-only data, docs/rules.md "Ballot classes")
    p = data.players
    clean = (p["vote"].notna() | p["self_declared"]).groupby(p["game_id"]).all()
    gg = g[g["game_id"].map(clean)]
    a = gg[gg["mode"] == "team_aware"]["y"]
    h = gg[gg["mode"] == "homogeneous"]["y"]
    or_clean = (a.mean() / (1 - a.mean())) / (h.mean() / (1 - h.mean()))
    assert s.loc[("exclude_invalid_ballots", "team_aware_vs_homogeneous_or"), "estimate"] == pytest.approx(or_clean)


def test_negative_controls_null_and_detected():
    null = make_logit_games(n_exp=100, games_per_exp=40, seed=4, re_sd=0.3, seats="per_experiment")
    nc = TABLES["negative_controls"](null, fast_config()).set_index("control")
    assert nc.loc["impostor_seat_parity", "p"] > 0.05 and nc.loc["game_index_parity", "p"] > 0.05
    parity = make_logit_games(n_exp=100, games_per_exp=40, seed=4, seat_lor=(0, 0.5, 0, 0.5), seats="per_experiment")
    nc2 = TABLES["negative_controls"](parity, fast_config()).set_index("control")
    assert nc2.loc["impostor_seat_parity", "p"] < 0.01 and nc2.loc["impostor_seat_parity", "estimate"] > 0
