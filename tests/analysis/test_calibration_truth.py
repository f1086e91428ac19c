"""Truths of the calibration matrix (``calibration_matrix.summarise``, ``calibration_truth``): no
quantity is scored against the Monte-Carlo mean of its own estimates, bias is reported beside
coverage, and Table 5's pseudo-population truth is the logit of the expected outcomes on the
population baselines."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from impostor_bench.analysis.calibration_matrix import TRUTH_NONE, lose_data, summarise
from impostor_bench.analysis.calibration_truth import opponent_baseline_truth
from impostor_bench.analysis.sim.simulate import simulate_games


def _records(estimates, truth, half=0.1):
    n = len(estimates)
    return pd.DataFrame({"calibration": "headline:imp_win", "quantity": "imp_win:m1", "estimate": estimates,
                         "ci_low": estimates - half, "ci_high": estimates + half, "p": np.nan,
                         "method": "some method", "truth": truth, "rep": np.arange(n)})


def test_a_biased_estimator_without_a_truth_gets_no_coverage_instead_of_a_perfect_one():
    """Estimates centred 0.2 above the truth with intervals of +-0.1: against the Monte-Carlo mean (the
    old fallback) they covered ~95%; with no truth the row reports none, with the truth ~0% and the bias."""
    rng = np.random.default_rng(1)
    est = 0.6 + 0.05 * rng.standard_normal(400)
    s = summarise(_records(est, np.nan), "planted", 120, 40).iloc[0]
    assert np.isnan(s["coverage"]) and np.isnan(s["bias"]) and s["truth"] == TRUTH_NONE and s["n_intervals"] == 0
    s = summarise(_records(est, 0.4), "planted", 120, 40).iloc[0]
    assert s["coverage"] < 0.05 and s["bias"] == pytest.approx(est.mean() - 0.4) and s["truth"] == "design"
    assert s["bias_sd"] == pytest.approx((est.mean() - 0.4) / est.std(ddof=1))
    assert s["coverage_mc_se"] == pytest.approx(np.sqrt(s["coverage"] * (1 - s["coverage"]) / 400))


def test_bias_of_an_odds_ratio_is_on_the_log_scale():
    rng = np.random.default_rng(2)
    est = np.exp(np.log(1.5) + 0.1 * rng.standard_normal(300))
    rec = _records(est, 1.2).assign(calibration="odds_ratios:or", quantity="or:a_vs_b")
    s = summarise(rec, "planted", 120, 40).iloc[0]
    assert s["bias"] == pytest.approx(np.log(est).mean() - np.log(1.2))


def test_opponent_baseline_truth_is_the_logit_slope_of_expected_outcomes_on_population_baselines():
    """Expected outcomes exactly logistic in the population baseline (slope -4 per unit: OR 0.670 per 10 pp)
    with mode effects: every cell's and every pooled row's truth is exp(-0.4)."""
    g, pl, _ = simulate_games(120, 16, design_seed=3, seed=3)
    models = sorted(set(pl["model"].astype(str)))
    acc = pd.Series({(m, d): 0.4 + 0.05 * i + 0.03 * j for i, m in enumerate(models)
                     for j, d in enumerate(["easy", "medium", "hard", "expert"])}, name="accuracy")
    maj = pl[pl["role"] == "majority"].merge(g[["game_id", "difficulty"]], on="game_id")
    base = maj.assign(a=[acc[(m, d)] for m, d in zip(maj["model"], maj["difficulty"])]).groupby("game_id")["a"].mean()
    mode_eff = g["mode"].map({"homogeneous": 0.0, "cross_play": -0.3, "team_blind": 0.2, "team_aware": 0.5,
                              "team_semi_aware": 0.1})
    diff_eff = g["difficulty"].map({"easy": 0.0, "medium": 0.1, "hard": 0.3, "expert": 0.4})
    eta = 1.0 - 4.0 * g["game_id"].map(base) + mode_eff + diff_eff
    g = g.assign(p_design=1 / (1 + np.exp(-eta)))
    truth = opponent_baseline_truth(g, pl, acc)
    assert len(truth) >= 30 and any(k.endswith("/ALL") for k in truth)
    assert np.allclose(list(truth.values()), np.exp(-0.4), rtol=1e-6)


def test_lose_data_drops_games_experiments_and_a_failing_providers_cross_play():
    g, pl, _ = simulate_games(240, 10, design_seed=4, seed=4)
    g2, pl2 = lose_data(g, pl, 0, games_share=0.10, experiments_share=0.05, provider_failure=0.5)
    assert set(pl2["game_id"]) == set(g2["game_id"])
    assert 0.8 < len(g2) / len(g) < 0.9
    first = sorted(set(g["impostor_model"].astype(str)))[0]
    cross = g[g["mode"] == "cross_play"]
    with_first = set(cross["experiment_id"][cross["game_id"].isin(pl.loc[pl["model"] == first, "game_id"])])
    kept = set(g2["experiment_id"]) & with_first
    assert 0.3 < len(kept) / len(with_first) < 0.7


def test_population_accuracy_pools_the_runs_of_one_design(monkeypatch):
    import impostor_bench.analysis.calibration_truth as ct

    monkeypatch.setattr(ct, "POPULATION_RUNS", 3)
    acc = ct.population_accuracy({"pair_effect_sd": 0.5}, 40, 8, 6)
    hits, votes = {}, {}
    for run in range(3):  # the same three runs, counted by hand
        g, pl, _ = simulate_games(40, 8, design_seed=6, seed=10_000_000 + run, pair_effect_sd=0.5)
        imp = dict(zip(g["game_id"], g["impostor_seat"]))
        diff = dict(zip(g["game_id"], g["difficulty"]))
        for r in pl[(pl["role"] == "majority") & pl["vote"].notna()].itertuples():
            k = (r.model, diff[r.game_id])
            votes[k] = votes.get(k, 0) + 1
            hits[k] = hits.get(k, 0) + int(r.vote == imp[r.game_id])
    assert len(acc) == len(votes)
    for k, v in votes.items():
        assert acc[k] == pytest.approx(hits[k] / v)


def test_exchangeable_models_without_an_opponent_effect_have_truth_one(monkeypatch):
    """The global null: identical models, no opponent effect. Every population accuracy at a difficulty is
    the same, so a slope fitted to the pooled runs' noise would be a truth made of noise; the truth is 1."""
    import impostor_bench.analysis.calibration_truth as ct
    from impostor_bench.analysis.calibration_matrix import SCENARIOS

    monkeypatch.setattr(ct, "POPULATION_RUNS", 2)
    g, pl, _ = simulate_games(60, 8, design_seed=1, seed=1, **SCENARIOS["global_null"])
    truth = ct.pseudo_population_truth(SCENARIOS["global_null"], 60, 8, 1, g, pl)
    assert len(truth) >= 9 and set(truth.values()) == {1.0}
    planted = ct.pseudo_population_truth(SCENARIOS["planted"], 60, 8, 1, *simulate_games(60, 8, design_seed=1, seed=1,
                                                                                           **SCENARIOS["planted"])[:2])
    assert len(set(planted.values())) > 1  # a real fit where the models differ


def _outcome_truth(tables, experiments=90, games=24, jitter=False, **effects):
    """Pseudo-population truths of outcome tables on one simulated run with only ``effects`` planted."""
    from impostor_bench.analysis.calibration_matrix import NULL_MODELS
    from impostor_bench.analysis.calibration_truth import outcome_given_position, outcome_table_truth
    from impostor_bench.analysis.stats.config import StatsConfig

    kw = {**dict(models=NULL_MODELS, seat_or=1.0, mode_or=1.0, difficulty_or=1.0, size_or_per_10x=1.0,
                 opponent_or_per_10pp=1.0, position_effect_pp=0.0), **effects}
    g, pl, models = simulate_games(experiments, games, design_seed=5, seed=5, **kw)
    g["p_given_position"] = outcome_given_position(g, kw, experiments, games, 5)
    if jitter:  # +0.05 / -0.05 on the first / second half (by experiment) of games alike in every pooled
        # regressor: X'e = 0 leaves the fit as it was, and the experiments' residuals nonzero (a perfect fit
        # has a degenerate cluster-robust SE, which the tables refuse)
        g = g.sort_values("experiment_id", kind="stable")
        key = [g["mode"], g["difficulty"], g["impostor_model"], g["impostor_speaking_position"]]
        k = g.groupby(key).cumcount().to_numpy()
        size = g.groupby(key)["game_id"].transform("size").to_numpy()
        sign = np.where(k < size // 2, 1.0, -1.0) * (k < size - size % 2)
        g["p_given_position"] += 0.05 * sign
    c = kw["position_effect_pp"] / 100 / (0.45 * 0.55)  # the simulator's position term (logit, +-c)
    return outcome_table_truth(g, pl, models, StatsConfig(bootstrap_reps=50, permutation_reps=20), tables), c


def test_equation1_truth_reproduces_the_planted_position_effect_through_pair_and_experiment_effects():
    """Position planted (+c for positions 2-3, -c for 0-1) on top of strong word-pair and experiment effects,
    which equation (1)'s fixed effects absorb exactly: the truth is the planted OR exp(2c) (1 for position 1)
    and size OR 1, although no game's outcome is logistic in position alone."""
    truth, c = _outcome_truth(["equation1"], position_effect_pp=-3.0, pair_effect_sd=1.0, experiment_effect_sd=0.5)
    for cluster in ("experiment_id", "word_pair"):
        assert truth[("equation1", f"fe_or:pos2_vs_pos0/{cluster}")] == pytest.approx(np.exp(2 * c), rel=1e-5)
        assert truth[("equation1", f"fe_or:pos3_vs_pos0/{cluster}")] == pytest.approx(np.exp(2 * c), rel=1e-5)
        assert truth[("equation1", f"fe_or:pos1_vs_pos0/{cluster}")] == pytest.approx(1.0, rel=1e-5)
        assert truth[("equation1", f"fe_or:size_per_10x/{cluster}")] == pytest.approx(1.0, rel=1e-5)


def test_pooled_tables_truth_reproduces_the_planted_size_and_position_effects():
    """Only size (OR 1.71 per 10x), or only position, planted, no experiment effect: the pooled fits'
    truths are the planted parameters (scaling's overall and within-family slopes, speaking_glm's positions)."""
    size, _ = _outcome_truth(["scaling"], jitter=True, size_or_per_10x=1.71)
    assert len(size) >= 2
    assert np.allclose(list(size.values()), 1.71, rtol=1e-6)
    truth, c = _outcome_truth(["speaking_glm"], jitter=True, position_effect_pp=-3.0)
    assert truth[("speaking_glm", "position_or:pos2_vs_pos0")] == pytest.approx(np.exp(2 * c), rel=1e-5)
    assert truth[("speaking_glm", "position_or:pos1_vs_pos0")] == pytest.approx(1.0, rel=1e-5)


def test_pooled_truth_averages_over_the_experiment_effect_and_the_conditional_does_not():
    """With an experiment effect the pooled fit estimates the population-averaged (attenuated) slope;
    the truth built from outcomes averaged over that effect is attenuated too, by the amount the
    closed form gives (the marginal log-OR of a logistic-normal is ~ beta / sqrt(1 + 0.346 sd^2))."""
    truth, _ = _outcome_truth(["scaling"], jitter=True, size_or_per_10x=1.71, experiment_effect_sd=1.5)
    got = np.log(truth[("scaling", "or_per_10x:overall_no_provider")])
    approx = np.log(1.71) / np.sqrt(1 + 0.346 * 1.5 ** 2)
    assert got == pytest.approx(approx, rel=0.08) and got < 0.9 * np.log(1.71)
