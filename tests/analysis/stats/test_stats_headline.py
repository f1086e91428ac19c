"""Headline (Table 1), balance and per-model win tables against explicit loops / closed forms."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from _dense_rates import dense_cr2_interval
from _synth_stats import fast_config, shared_ballot
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats._base import prepared
from impostor_bench.analysis.stats._marginal import design_matrix
from impostor_bench.analysis.stats.rates import METHOD, METHOD_COMPOSITION


def cluster_halfwidth_pct(per_exp: dict, alpha: float = 0.05):
    """Closed-form design-based interval of a ratio of totals (independent of statsmodels):
    per-experiment (successes, trials); linearised CR1 variance G/(G-1) sum (a - R b)^2 / B^2,
    on the logit scale, t with G - 1 df. Returns (half-width pp, low %, high %)."""
    a = np.array([v[0] for v in per_exp.values()], float)
    b = np.array([v[1] for v in per_exp.values()], float)
    keep = b > 0
    a, b = a[keep], b[keep]
    g, r = len(a), a.sum() / b.sum()
    se = math.sqrt(g / (g - 1) * ((a - r * b) ** 2).sum()) / b.sum() / (r * (1 - r))
    t = stats.t.ppf(1 - alpha / 2, g - 1)
    lo, hi = (1 / (1 + math.exp(-(math.log(r / (1 - r)) + s * t * se))) for s in (-1, 1))
    return 50 * (hi - lo), 100 * lo, 100 * hi


def _dense_pct(prep, col: str, model: str):
    """(half-width, low, high) in % of the composition-adjusted interval, from ``dense_cr2_interval`` on
    the rate's rows: games (imp_win), majority seats (maj_win), their legal ballots (det_acc)."""
    X = design_matrix(prep)
    gi, seat = np.nonzero(prep.present & ~prep.is_imp)
    if col == "imp_win":
        y, rows, key = prep.y, np.arange(prep.n), prep.imp_model
    else:
        if col == "det_acc":
            legal = ~np.isnan(prep.vote[gi, seat]) | (prep.ballot_class[gi, seat] == "self_vote")
            gi, seat = gi[legal], seat[legal]
        y = (prep.y[gi] == 0) if col == "maj_win" else (prep.vote[gi, seat] == prep.imp_seat[gi])
        rows, key = gi, prep.model[gi, seat]
    lo, hi = dense_cr2_interval(np.asarray(y, float), X[rows], prep.exp_code[rows], key == model)
    return 50 * (hi - lo), 100 * lo, 100 * hi


def test_headline_against_loops():
    data = shared_ballot()
    h = TABLES["headline"](data, fast_config()).set_index("model")
    prep = prepared(data)
    games = data.games.set_index("game_id")
    # per model, per experiment: [successes, trials]
    imp = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    maj = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    det = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for g in games.itertuples():
        imp[g.impostor_model][g.experiment_id][0] += g.winner == "impostor"
        imp[g.impostor_model][g.experiment_id][1] += 1
    for r in data.players.itertuples():
        g = games.loc[r.game_id]
        if r.role == "majority":
            maj[r.model][g.experiment_id][0] += g.winner == "majority"
            maj[r.model][g.experiment_id][1] += 1
            if not pd.isna(r.vote):
                det[r.model][g.experiment_id][0] += int(r.vote) == g.impostor_seat
                det[r.model][g.experiment_id][1] += 1
    total = lambda d: [sum(v[0] for v in d.values()), sum(v[1] for v in d.values())]  # noqa: E731
    for m in h.index:
        for col, d in (("imp_win", imp), ("maj_win", maj), ("det_acc", det)):
            k, n = total(d[m])
            assert h.loc[m, f"{col}_pct"] == pytest.approx(100 * k / n)
            if h.loc[m, f"{col}_ci_method"] == METHOD_COMPOSITION:  # issue 39: written out densely on the rows
                half, lo, hi = _dense_pct(prep, col, m)
            else:  # CR1 fallback (named in the method)
                assert h.loc[m, f"{col}_ci_method"].startswith(METHOD)
                half, lo, hi = cluster_halfwidth_pct(d[m])
            assert h.loc[m, f"{col}_ci"] == pytest.approx(half, rel=1e-6)
            assert h.loc[m, f"{col}_ci_low"] == pytest.approx(lo, rel=1e-6)
            assert h.loc[m, f"{col}_ci_high"] == pytest.approx(hi, rel=1e-6)
            assert h.loc[m, f"{col}_n_exp"] == sum(1 for v in d[m].values() if v[1] > 0)
        assert h.loc[m, "n_imp_games"] == total(imp[m])[1]
        assert h.loc[m, "n_maj_seats"] == total(maj[m])[1]


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
    from impostor_bench.analysis.stats.balance import balance_index
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


def test_majority_win_over_games_as_table_1_defines_it():
    """Table 1's Maj Win is over the games in which the model is in the majority (a homogeneous game once),
    against a loop over the players rows; the per-seat rate stays beside it and differs where a model
    holds several majority seats of one game."""
    data = shared_ballot()
    h = TABLES["headline"](data, fast_config()).set_index("model")
    g = data.games.set_index("game_id")
    won, seats = defaultdict(list), defaultdict(list)
    for gid, rows in data.players[data.players["role"] == "majority"].groupby("game_id"):
        maj = g.at[gid, "winner"] == "majority"
        for m in set(rows["model"]):
            won[m].append(maj)
        for m in rows["model"]:
            seats[m].append(maj)
    for m in won:
        assert h.loc[m, "maj_win_games_pct"] == pytest.approx(100 * np.mean(won[m]))
        assert h.loc[m, "n_maj_games"] == len(won[m])
        assert h.loc[m, "maj_win_pct"] == pytest.approx(100 * np.mean(seats[m]))
        assert h.loc[m, "maj_win_games_ci_low"] < h.loc[m, "maj_win_games_pct"] < h.loc[m, "maj_win_games_ci_high"]
    assert any(len(won[m]) < len(seats[m]) for m in won)
