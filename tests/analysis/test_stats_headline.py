"""Headline (Table 1), balance and per-model win tables against explicit loops / closed forms."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from _synth_stats import fast_config, shared_ballot
from analysis.stats import TABLES


def wilson_halfwidth_pct(k, n, z=stats.norm.ppf(0.975)):
    """Closed-form Wilson score interval, half-width in pp (independent of statsmodels)."""
    p = k / n
    denom = 1 + z * z / n
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return 100 * half


def test_headline_against_loops():
    data = shared_ballot()
    h = TABLES["headline"](data, fast_config()).set_index("model")
    games = data.games.set_index("game_id")
    imp = defaultdict(lambda: [0, 0])
    maj = defaultdict(lambda: [0, 0])
    det = defaultdict(lambda: [0, 0])
    for g in games.itertuples():
        imp[g.impostor_model][0] += g.winner == "impostor"
        imp[g.impostor_model][1] += 1
    for r in data.players.itertuples():
        g = games.loc[r.game_id]
        if r.role == "majority":
            maj[r.model][0] += g.winner == "majority"
            maj[r.model][1] += 1
            if not pd.isna(r.vote):
                det[r.model][0] += int(r.vote) == g.impostor_seat
                det[r.model][1] += 1
    for m in h.index:
        for col, d in (("imp_win", imp), ("maj_win", maj), ("det_acc", det)):
            k, n = d[m]
            assert h.loc[m, f"{col}_pct"] == pytest.approx(100 * k / n)
            assert h.loc[m, f"{col}_ci"] == pytest.approx(wilson_halfwidth_pct(k, n), rel=1e-9)
        assert h.loc[m, "n_imp_games"] == imp[m][1]
        assert h.loc[m, "n_maj_seats"] == maj[m][1]


def test_detection_tracks_generating_probability():
    """Models generated with higher detection probability get higher detection accuracy."""
    h = TABLES["headline"](shared_ballot(), fast_config()).sort_values("model")
    assert np.all(np.diff(h["det_acc_pct"].to_numpy()) > 0)


def test_balance_closed_form():
    data = shared_ballot()
    b = TABLES["balance"](data, fast_config()).set_index("mode")
    for mode, s in data.games.groupby("mode"):
        p = (s["winner"] == "impostor").mean()
        assert b.loc[mode, "p_imp"] == pytest.approx(p)
        assert b.loc[mode, "balance"] == pytest.approx(1 - abs(2 * p - 1))
        assert b.loc[mode, "balance_ci_low"] <= b.loc[mode, "balance"] <= b.loc[mode, "balance_ci_high"]
    p_all = (data.games["winner"] == "impostor").mean()
    assert b.loc["ALL", "balance"] == pytest.approx(1 - abs(2 * p_all - 1))


def test_balance_paper_examples():
    from analysis.stats.balance import balance_index
    assert balance_index(0.5) == 1.0
    assert balance_index([0.489, 0.3, 0.8]) == pytest.approx([0.978, 0.6, 0.4])


def test_win_by_model_mode_and_difficulty():
    data = shared_ballot()
    wm = TABLES["win_by_model_mode"](data, fast_config())
    ref = data.games.assign(y=data.games["winner"] == "impostor").groupby(["impostor_model", "mode"])["y"].agg(
        ["mean", "size"])
    for r in wm.itertuples():
        assert r.imp_win_pct == pytest.approx(100 * ref.loc[(r.model, r.mode), "mean"])
        assert r.n == ref.loc[(r.model, r.mode), "size"]
    wd = TABLES["win_by_model_difficulty"](data, fast_config())
    assert wd["n"].sum() == len(data.games)
