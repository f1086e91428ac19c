"""Issue 43: the IV-style sensitivity of B.3 (analysis/stats/iv_sensitivity.py). On planted data with
strong experiment and shared word-pair effects on both stages and a confounder of the regressor and
the outcome: 2SLS recovers the planted effect where OLS does not, equals the dense-dummy 2SLS, and
the Anderson-Rubin test holds its size and its set its coverage, with a strong and with an
irrelevant instrument (where the set must be unbounded, not a narrow interval)."""

from __future__ import annotations

import numpy as np
import pytest

from impostor_bench.analysis.stats.iv_sensitivity import ar_set, demean_two_way, iv_fit


def _planted(beta=0.3, gamma=0.25, n_exp=40, games=40, n_pairs=20, seed=0):
    """Games of two tiers: experiment effects (SD 1) and pair effects (SD 1, pairs
    shared by every experiment of a tier, game i plays pair i mod n_pairs) on x and y; a game-level
    confounder u raises x and lowers y; z randomised within experiments."""
    rng = np.random.default_rng(seed)
    e = np.repeat(np.arange(n_exp), games)
    tier = e % 2
    pair = tier * n_pairs + np.tile(np.arange(games) % n_pairs, n_exp)
    a_e, c_e = rng.normal(0, 1, n_exp), rng.normal(0, 1, n_exp)
    b_p, d_p = rng.normal(0, 1, 2 * n_pairs), rng.normal(0, 1, 2 * n_pairs)
    z = (rng.random(len(e)) < 0.5).astype(float)
    u = rng.normal(0, 1, len(e))
    shock = rng.normal(0, 0.5, n_exp)[e]  # experiment-level dependence in the outcome's error
    x = 0.5 + gamma * z + a_e[e] + b_p[pair] + u + rng.normal(0, 0.5, len(e))
    y = beta * x + c_e[e] + d_p[pair] - u + shock + rng.normal(0, 0.5, len(e))
    return y, x, z, e, pair


def test_demeaning_equals_the_dummy_regression_residual():
    rng = np.random.default_rng(1)
    e, p = rng.integers(0, 7, 300), rng.integers(0, 5, 300)
    v = rng.normal(size=(300, 2))
    D = np.column_stack([np.ones(300), (e[:, None] == np.arange(1, 7)).astype(float),
                         (p[:, None] == np.arange(1, 5)).astype(float)])
    resid = v - D @ np.linalg.lstsq(D, v, rcond=None)[0]
    assert np.allclose(demean_two_way(v, e, p), resid, atol=1e-8)


def test_2sls_recovers_a_planted_effect_that_ols_misses_and_equals_the_dummy_2sls():
    y, x, z, e, pair = _planted()
    fit = iv_fit(y, x, z, e, pair)
    assert fit["first_stage_f"] > 10 and fit["n_clusters"] == 40 and fit["n"] == 1600
    assert abs(fit["iv_coef"] - 0.3) < 3 * fit["iv_se"]
    assert fit["ar_set"] == "interval" and fit["ar_ci_low"] <= 0.3 <= fit["ar_ci_high"]
    # independent computation: 2SLS with every dummy in the design (numpy), the IV formula
    D = np.column_stack([np.ones(len(y)), (e[:, None] == np.arange(1, 40)).astype(float),
                         (pair[:, None] == np.arange(1, 20)).astype(float),
                         (pair[:, None] == np.arange(21, 40)).astype(float)])
    Z, X = np.column_stack([z, D]), np.column_stack([x, D])
    b_iv = np.linalg.lstsq(Z.T @ X, Z.T @ y, rcond=None)[0][0]
    assert fit["iv_coef"] == pytest.approx(b_iv, rel=1e-6)
    b_ols = np.linalg.lstsq(X, y, rcond=None)[0][0]
    assert b_ols < 0.3 - 0.2  # the confounder biases OLS down: what the instrument is for


def test_ar_set_shapes():
    lo, hi, kind = ar_set(1.0, 2.0, 0.01, 0.0, 0.01, 4.0)  # strong first stage: an interval around 0.5
    assert kind == "interval" and lo < 0.5 < hi
    assert ar_set(0.01, 0.01, 1.0, 0.0, 1.0, 4.0)[2] == "whole line"  # no information on either
    lo, hi, kind = ar_set(1.0, 0.1, 0.01, 0.0, 0.01, 4.0)  # weak first stage, clear reduced form
    assert kind == "two rays" and lo < 0 < hi  # b = 0: (1 - 0)^2 > 4 x 0.01, rejected: in the gap
    assert not lo < 10 < hi  # b = 10 = pi_y / pi_x: statistic 0, in a ray


def test_ar_test_size_and_set_coverage_with_strong_and_irrelevant_instruments():
    """200 replicates each (30 experiments x 20 games): AR rejects a true beta at about 5% (binomial
    99% bound) whether the instrument is strong or irrelevant; its set covers the truth >= 93%;
    with an irrelevant instrument the set is unbounded in most runs (never a confident interval)."""
    from scipy.stats import binom

    for gamma in (0.5, 0.0):
        reject, cover, bounded = [], [], []
        for rep in range(200):
            y, x, z, e, pair = _planted(beta=0.3, gamma=gamma, n_exp=30, games=20, n_pairs=10, seed=1000 + rep)
            f = iv_fit(y - 0.3 * x, x, z, e, pair)  # AR of beta = 0.3 is AR of 0 on y - 0.3 x
            reject.append(f["ar_p"] < 0.05)
            g = iv_fit(y, x, z, e, pair)
            inside = (g["ar_ci_low"] <= 0.3 <= g["ar_ci_high"]) if g["ar_set"] in ("interval", "whole line") else (
                not (float(g["ar_set"].split("(-inf, ")[1].split("]")[0]) < 0.3
                     < float(g["ar_set"].split("[")[1].split(",")[0])))
            cover.append(inside)
            bounded.append(g["ar_set"] == "interval")
        assert np.mean(reject) <= binom.ppf(0.99, 200, 0.05) / 200, (gamma, np.mean(reject))
        assert np.mean(cover) >= 0.93, (gamma, np.mean(cover))
        if gamma == 0.0:
            assert np.mean(bounded) < 0.2
        else:
            assert np.mean(bounded) > 0.9


def test_table_on_simulated_games_with_a_planted_position_effect():
    """Through the registered table on the simulator's games (shared pairs, experiment effects, a
    position effect on the win, ballots drawn given the outcome): one row, a relevant instrument
    (centrality follows the outcome, which follows the position), AR and Wald agreeing in sign."""
    from impostor_bench.analysis.data import AnalysisData
    from impostor_bench.analysis.sim.simulate import simulate_games
    from impostor_bench.analysis.stats import TABLES
    from _synth_stats import fast_config

    g, p, m = simulate_games(60, 40, seed=3, position_effect_pp=-8.0, pair_effect_sd=1.0, experiment_effect_sd=0.5)
    out = TABLES["iv_sensitivity"](AnalysisData(games=g, players=p, models=m), fast_config())
    assert len(out) == 1
    row = out.iloc[0]
    assert row["n_clusters"] == 60 and 0.9 * len(g) <= row["n"] <= len(g)
    assert row["reduced_form_coef"] < 0 and row["ar_p"] < 0.05  # speaking late lowers the win (planted)
    assert np.sign(row["iv_coef"]) == np.sign(row["reduced_form_coef"] / row["first_stage_coef"])
    assert "exploratory" in row["note"] and row["method"].startswith("2SLS")


def test_table_refuses_data_without_pairs():
    from impostor_bench.analysis.data import AnalysisData
    from impostor_bench.analysis.sim.simulate import simulate_games
    from impostor_bench.analysis.stats import TABLES
    from _synth_stats import fast_config

    g, p, m = simulate_games(6, 10, seed=1)
    out = TABLES["iv_sensitivity"](AnalysisData(games=g.drop(columns=["pair_id"]), players=p, models=m), fast_config())
    assert len(out) == 0 and list(out.columns[:3]) == ["endogenous", "outcome", "first_stage_coef"]
