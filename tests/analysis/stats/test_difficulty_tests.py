"""Difficulty tests (Table 3's difficulty x outcome, detection by tier; issue 39): two-way
cluster-robust by experiment and word pair (``_regress.two_way_logit``).

1. The covariance equals a hand-written Cameron-Gelbach-Miller two-way sandwich
   (V_exp + V_pair - V_game, each with the CR1 factor G/(G-1) (N-1)/(N-K)).
2. Size on fresh null studies in which the word pairs (and their effects, SD 1.0) are redrawn for
   every study (the estimand is over a population of pairs of each tier), experiment effects
   SD 0.5: rejections <= the 99.5% binomial limit, where clustering by experiment alone (the
   first version, refused since issue 26) fails the same runs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from _synth_stats import fast_config, shared_ballot
from impostor_bench.analysis.calibration_matrix import SCENARIOS
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.sim.simulate import simulate_games
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats._regress import experiment_logit, two_way_logit, with_intercept


def _cr1_meat(X, resid, groups, K):
    codes = pd.factorize(pd.Series(groups))[0]
    G = codes.max() + 1
    S = np.zeros((G, X.shape[1]))
    np.add.at(S, codes, X * resid[:, None])
    N = len(resid)
    return S.T @ S * (G / (G - 1)) * ((N - 1) / (N - K))


def test_two_way_covariance_against_hand_sandwich():
    rng = np.random.default_rng(3)
    n_exp, n_pair = 30, 20
    e = np.repeat(np.arange(n_exp), n_pair)
    pr = np.tile(np.arange(n_pair), n_exp)
    tier = pr % 4
    eta = -0.2 + 0.3 * (tier == 1) + rng.normal(0, 0.5, n_exp)[e] + rng.normal(0, 0.8, n_pair)[pr]
    y = (rng.random(len(e)) < 1 / (1 + np.exp(-eta))).astype(float)
    X, names = with_intercept((np.stack([tier == k for k in (1, 2, 3)], 1), ["t1", "t2", "t3"]))
    fit = two_way_logit(y, X, names, e, pr, "test")
    p = 1 / (1 + np.exp(-X @ fit.coef))
    bread = np.linalg.inv(X.T @ (X * (p * (1 - p))[:, None]))
    K = X.shape[1]
    meat = (_cr1_meat(X, y - p, e, K) + _cr1_meat(X, y - p, pr, K) - _cr1_meat(X, y - p, np.arange(len(y)), K))
    np.testing.assert_allclose(fit.cov, bread @ meat @ bread, rtol=1e-6)
    assert fit.n_clusters == n_pair and np.all(fit.df == n_pair - 1)
    j = fit.joint(names[1:])
    assert j["df2"] == n_pair - 1


def test_difficulty_rows_have_a_p_and_detect_a_strong_effect():
    c = TABLES["chi2"](shared_ballot(), fast_config()).set_index("test")
    for row in ("difficulty_x_outcome", "difficulty_x_detection"):
        assert c.loc[row, "p_method"].startswith("logit, two-way cluster-robust by experiment and word pair")
        assert c.loc[row, "p"] < 0.01  # the ballot fixture's detection falls steeply with difficulty


def test_difficulty_refused_without_pair_ids():
    data = shared_ballot()
    games = data.data.games.drop(columns="pair_id") if hasattr(data, "data") else data.games.drop(columns="pair_id")
    players = data.data.players if hasattr(data, "data") else data.players
    d = AnalysisData(games=games, players=players, models=None)
    c = TABLES["chi2"](d, fast_config(strict=False)).set_index("test")
    assert np.isnan(c.loc["difficulty_x_outcome", "p"]) and "pair_id" in c.loc["difficulty_x_outcome", "p_method"]


@pytest.mark.slow
def test_difficulty_tests_hold_their_size_over_fresh_word_pairs():
    reps = 100
    two_way, exp_only = [], []
    for rep in range(reps):
        g, pl, models = simulate_games(60, 24, design_seed=400 + rep, seed=rep, **SCENARIOS["global_null"])
        c = TABLES["chi2"](AnalysisData(games=g, players=pl, models=models), fast_config()).set_index("test")
        two_way.append(c.loc[["difficulty_x_outcome", "difficulty_x_detection"], "p"].to_numpy(float))
        X, names = with_intercept((np.stack([g["difficulty"].astype(str) == d for d in ("medium", "hard", "expert")],
                                            1), ["m", "h", "x"]))
        yy = (g["winner"] == "impostor").to_numpy(float)
        exp_only.append(experiment_logit(yy, X, names, g["experiment_id"].astype(str).to_numpy(), "d")
                        .joint(names[1:])["p"])
    limit = stats.binom.ppf(0.995, reps, 0.05) / reps
    rates = (np.array(two_way) < 0.05).mean(0)
    assert (rates <= limit).all(), rates
    assert (np.array(exp_only) < 0.05).mean() > limit  # the experiment-only test fails the same runs


def test_calibration_matrix_reports_no_size_for_pair_population_tests_on_one_design():
    """On the matrix's global null the design (and its word pairs) is fixed, so a test whose estimand is
    over a population of pairs has no null there; its size comes from fresh_pairs_null (a new design per run)."""
    from impostor_bench.analysis.calibration_matrix import summarise

    q = ["factor:difficulty_x_outcome", "factor:mode_x_outcome"] * 10
    rec = pd.DataFrame({"calibration": "chi2:factor", "quantity": q,
                        "estimate": 1.0, "ci_low": np.nan, "ci_high": np.nan, "p": [0.01, 0.5] * 10,
                        "method": ["logit, two-way cluster-robust by experiment and word pair (CR1 each), Wald F",
                                   "logit, CR2 by experiment, Wald F(q, G-1)"] * 10,
                        "truth": np.nan, "rep": np.repeat(np.arange(10), 2)})
    fixed = summarise(rec, "global_null", 60, 24).set_index("method")
    fresh = summarise(rec, "fresh_pairs_null", 60, 24).set_index("method")
    two_way = [m for m in fixed.index if "word pair" in m][0]
    cr2 = [m for m in fixed.index if "CR2" in m][0]
    assert np.isnan(fixed.loc[two_way, "size"]) and fixed.loc[two_way, "rejection_rate"] == 1.0
    assert fixed.loc[cr2, "size"] == 0.0
    assert fresh.loc[two_way, "size"] == 1.0 and fresh.loc[cr2, "size"] == 0.0
