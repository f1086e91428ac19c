"""Per-condition results and ranking persistence (``condition_results``, ``ranking_persistence``) on
simulated studies with planted conditions (``impostor_bench.analysis.sim.conditions``), checked
against independent computations (pandas group rates, scipy's Kendall tau, the wild bootstrap's
empirical variance) and planted truths (a rank reversal found; none found where rankings agree)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.sim.conditions import ConditionPlan, parse_plan
from impostor_bench.analysis.sim.effects import SimModel
from impostor_bench.analysis.sim.simulate import simulate_games
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.persistence import (condition_rates, contrast_se, holm, study_conditions,
                                                       varying_factors)
from impostor_bench.analysis.stats.persistence_tests import kendall_tau
from impostor_bench.analysis.stats._base import prepared
from impostor_bench.analysis.stats.session import Analysis

CFG = StatsConfig(bootstrap_reps=400, strict=True)
MODELS = tuple(SimModel(f"m{i}", odds=float(np.exp(0.6 * (i - 2))), det=0.6, self_decl=0.2) for i in range(5))


def _study(reversal=None, seed=0, replicates=4, games=30, factor="language", levels=("en", "es", "de"), ors=None):
    plan = ConditionPlan(factor, levels, ors or {}, reversal=reversal)
    E = len(MODELS) * 4 * replicates * len(levels)
    g, p, m = simulate_games(E, games, seed=seed, design_seed=1, models=MODELS, modes=["homogeneous"],
                             size_or_per_10x=1.0, opponent_or_per_10pp=1.0, conditions=plan,
                             pair_effect_sd=0.5, experiment_effect_sd=0.3)
    return g, p, AnalysisData(games=g, players=p, models=m)


def test_one_condition_is_listed_as_not_shown():
    g, p, _ = _study()
    one = g.drop(columns=["language"])  # an older export: no language column reads as "en" everywhere
    a = Analysis(AnalysisData(games=one, players=p), CFG)
    for name in ("condition_results", "ranking_persistence"):
        assert len(a.table(name)) == 0
    assert any(n.startswith("condition_results: not computed: the study holds one condition") for n in a.notes)


def test_absent_columns_read_as_defaults_and_decoding_from_players():
    g, p, d = _study()
    a = Analysis(d, CFG)
    cond = study_conditions(a, prepared(a, need_players=True))
    assert set(cond["group_size"]) == {"4 players, 1 impostor"} and set(cond["length_budget"]) == {"none"}
    assert set(cond["decoding"]) == {"T=recorded"}
    p2 = p.copy()
    p2["temperature"] = np.where(p2["model"] == "m0", 0.2, 0.7)
    p2["top_p"] = np.where(p2["model"] == "m0", 0.9, np.nan)
    a2 = Analysis(AnalysisData(games=g, players=p2), CFG)
    fac = varying_factors(a2, prepared(a2, need_players=True))
    assert set(fac["decoding"][1]) == {"T=0.2, top_p=0.9", "T=0.7"} and fac["language"][1][0] == "en"
    first = p2["game_id"] == g["game_id"].iloc[0]  # one game whose seats differ: both settings, joined
    p2.loc[first & (p2["seat"] == 0), "temperature"] = 1.3
    p2.loc[first, "top_p"] = np.nan
    a3 = Analysis(AnalysisData(games=g, players=p2), CFG)
    mixed = study_conditions(a3, prepared(a3, need_players=True))["decoding"][0]
    assert mixed == "T=0.2 | T=1.3" if g["impostor_model"].iloc[0] == "m0" else mixed == "T=0.7 | T=1.3"


def test_rates_match_group_means_and_tau_matches_scipy():
    g, p, d = _study(reversal=("m1", "m3", "de"))
    res = TABLES["condition_results"](d, CFG)
    direct = g.assign(w=(g["winner"] == "impostor")).groupby(["language", "impostor_model"])["w"].mean() * 100
    got = res.set_index(["condition", "model"])["imp_win_pct"]
    pd.testing.assert_series_equal(got.sort_index(), direct.rename_axis(["condition", "model"]).sort_index(),
                                   check_names=False)
    per = TABLES["ranking_persistence"](d, CFG).set_index(["measure", "condition"])
    wide = res.pivot(index="model", columns="condition", values="imp_win_pct")
    assert per.loc[("imp_win", "de"), "kendall_tau"] == pytest.approx(stats.kendalltau(wide["de"], wide["en"])[0])
    x, y = np.random.default_rng(3).normal(size=(2, 12))
    assert kendall_tau(x, y)[0] == pytest.approx(stats.kendalltau(x, y)[0])
    from statsmodels.stats.multitest import multipletests

    p = np.random.default_rng(4).uniform(0, 0.08, size=15)
    rej, adj, _, _ = multipletests(p, alpha=0.05, method="holm")
    assert np.array_equal(holm(p, 0.05)[0], rej) and np.allclose(holm(p, 0.05)[1], adj)


def test_contrast_variance_is_the_wild_bootstrap_variance():
    """The exact variance sum_e (IF_e d)^2 equals the variance of Rademacher replicates (drawn here)."""
    _, _, d = _study()
    a = Analysis(d, CFG)
    prep = prepared(a, need_players=True)
    lab, levels = varying_factors(a, prep)["language"]
    cr = condition_rates(a, prep, "language", lab, levels)
    dvec = np.zeros(cr.IF["imp_win"].shape[1])
    dvec[cr.cell(0, 1)], dvec[cr.cell(4, 1)] = 1.0, -1.0
    se, df = contrast_se(cr.IF["imp_win"], dvec)
    xi = np.random.default_rng(5).choice([-1.0, 1.0], size=(40_000, cr.IF["imp_win"].shape[0]))
    boot_sd = (xi @ (cr.IF["imp_win"] @ dvec)).std()
    assert se == pytest.approx(boot_sd * np.sqrt((df + 1) / df), rel=0.02)


def test_planted_reversal_is_found_and_tau_drops():
    g, _, d = _study(reversal=("m0", "m4", "de"), ors={"es": 0.8})
    per = TABLES["ranking_persistence"](d, CFG).set_index(["measure", "condition"])
    assert "m0 <> m4" in per.loc[("imp_win", "de"), "reversed"]
    assert per.loc[("imp_win", "de"), "p_reversal"] < 0.05
    assert per.loc[("imp_win", "es"), "n_reversed"] == 0  # a main effect does not reorder
    # m0 and m4 swapped among five: 7 of 10 pairs discordant, true tau -0.4; the paper-like es keeps tau 1
    assert per.loc[("imp_win", "de"), "tau_ci_low"] <= -0.4 <= per.loc[("imp_win", "de"), "tau_ci_high"] < 0.5
    assert per.loc[("imp_win", "es"), "tau_ci_high"] == 1.0
    res = TABLES["condition_results"](d, CFG).set_index(["condition", "model"])
    assert res.loc[("en", "m4"), "imp_rank_low"] == 1 and res.loc[("de", "m0"), "imp_rank_low"] == 1


@pytest.mark.slow
def test_no_reversal_is_reported_when_rankings_agree():
    """Rankings equal across languages (main effects only): across 12 studies and 4 comparisons each,
    false reversals are rare (Holm over pairs: at most 5% per comparison; 5 or more of 48 would be
    a binomial tail below 0.5% at 2.5%)."""
    found = 0
    for seed in range(12):
        _, _, d = _study(seed=100 + seed, replicates=2, games=20, ors={"es": 0.7, "de": 1.3})
        per = TABLES["ranking_persistence"](d, CFG)
        found += int((per["n_reversed"] > 0).sum())
    assert found <= 4


def test_plan_writes_every_factor_and_refuses_bad_input():
    for factor, levels, col in (("group_size", ("4x1", "6x2"), "n_players"), ("length_budget", ("none", "400"), "length_budget"),
                                ("decoding", ("0.7", "1.0/0.9"), "temperature")):
        plan = ConditionPlan(factor, levels)
        g, p, _ = simulate_games(40, 4, seed=1, models=MODELS[:2], modes=["homogeneous"], conditions=plan)
        frame = p if factor == "decoding" else g
        assert frame[col].nunique(dropna=False) == 2
    with pytest.raises(ValueError, match="unknown level"):
        ConditionPlan("language", ("en", "es"), {"fr": 0.5})
    with pytest.raises(ValueError, match="FACTOR=LEVEL"):
        parse_plan("language")
    with pytest.raises(ValueError, match="two different simulated models"):
        simulate_games(40, 4, seed=1, models=MODELS[:2], modes=["homogeneous"],
                       conditions=ConditionPlan("language", ("en", "es"), reversal=("m0", "zz", "es")))


def test_group_sizes_count_every_majority_seat():
    """Six-player, two-impostor games: the majority rates count all four majority seats of a game
    (the players table's rows), not only the four seats of the paper's game."""
    plan = ConditionPlan("group_size", ("4x1", "6x2"), {"6x2": 1.3})
    g, p, m = simulate_games(len(MODELS[:3]) * 4 * 2 * 2, 8, seed=2, models=MODELS[:3], modes=["homogeneous"],
                             conditions=plan, size_or_per_10x=1.0, opponent_or_per_10pp=1.0)
    res = TABLES["condition_results"](AnalysisData(games=g, players=p, models=m), CFG)
    size = g.set_index("game_id")["n_players"]
    maj = p[p["role"] == "majority"]
    direct = maj.groupby([maj["game_id"].map(size).to_numpy(), maj["model"].to_numpy()]).size()
    got = res.set_index(["condition", "model"])["n_maj_seats"]
    assert got[("6 players, 2 impostors", "m0")] == direct[(6, "m0")] == 4 * (g["n_players"] == 6).sum() / 3
    assert got[("4 players, 1 impostor", "m1")] == direct[(4, "m1")]


def test_a_rate_on_fewer_experiments_than_calibrated_prints_alone():
    """Intervals only where the calibration ran (16 experiments per model and condition): a cell of
    a smaller study keeps its rate and loses its interval; the calibrated size keeps both."""
    _g, _p, small = _study(replicates=1, games=30)  # 4 experiments per model and condition
    res = TABLES["condition_results"](small, CFG)
    assert res["imp_win_pct"].notna().all()
    assert res["imp_win_ci_low"].isna().all() and res["imp_win_ci_high"].isna().all()
    _g, _p, full = _study(replicates=4, games=30)
    assert TABLES["condition_results"](full, CFG)["imp_win_ci_low"].notna().all()
