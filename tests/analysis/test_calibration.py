"""Calibration suite, reduced for CI: a paper-sized design (9 models, 5 modes, 4 tiers, 756
experiments) with strong word-pair and experiment effects and few games per experiment,
many independent runs through the real tables. The full version is
``python -m impostor_bench.analysis.calibration`` (figures in docs/analysis.md); the ``heavy`` test below
runs a paper-sized slice of it with ``pytest --heavy``."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from impostor_bench.analysis.calibration import make_scenario, run_scenario, summarise, true_values
from impostor_bench.analysis.stats import StatsConfig

heavy = pytest.mark.heavy  # run only with `pytest --heavy` (tests/conftest.py)


def _row(s: pd.DataFrame, stat: str, method: str) -> pd.Series:
    return s[(s["statistic"] == stat) & (s["method"] == method)].iloc[0]


@pytest.fixture(scope="module")
def null_summary():
    sc = make_scenario("null", games=8)
    cfg = StatsConfig(bootstrap_reps=300, permutation_reps=300, strict=True)
    return sc, summarise(sc, run_scenario(sc, 60, cfg, parts=("speaking", "bootstrap")))


def test_truth_of_the_null_design():
    sc = make_scenario("null", games=8)
    assert sc.truth["itt_pp"] == 0.0
    for k, v in sc.truth.items():
        if k.endswith("_or"):
            assert abs(np.log(v)) < 0.02  # no mode effect: the design's marginal ORs are ~1
    pos = make_scenario("position", games=8)
    assert pos.truth["itt_pp"] == pytest.approx(-1.11, abs=1e-6)
    # the truth is the design's expected value: a large average of runs agrees
    rng = np.random.default_rng(0)
    runs = [pos.design.draw(rng, rng)["imp_wins"] for _ in range(200)]
    model = np.array(pos.design.names, dtype=object)[pos.design.imp_model]
    assert np.mean(runs) == pytest.approx(true_values(pos.design)["overall_imp_win_rate"], abs=0.003)
    sel = model == "gpt-4o"
    assert np.mean([r[sel].mean() for r in runs]) == pytest.approx(pos.truth["imp_win_rate:gpt-4o"], abs=0.006)


@pytest.mark.slow
def test_randomisation_p_values_hold_their_size(null_summary):
    _, s = null_summary
    cells = _row(s, "itt_cells", "p")  # 20 cells x 60 runs
    assert cells["n"] == 1200
    assert cells["simulated"] <= 0.05 + 3 * cells["mc_se"]
    assert cells["ks_p"] > 0.001  # uniform under the null
    for stat in ("itt_pp", "randomization:mid_vs_rand", "randomization:pos3_vs_pos0"):
        assert _row(s, stat, "p")["ks_p"] > 0.001


def test_itt_and_design_bootstrap_intervals_cover(null_summary):
    _, s = null_summary
    assert _row(s, "itt_pp", "design")["simulated"] >= 0.86
    assert _row(s, "itt_cells", "design")["simulated"] >= 0.92
    ors = s[s["statistic"].str.endswith("_or") & (s["method"] == "design")]
    # 60 runs: 0.95 - 3 MC SE ~ 0.87 (the four ORs share the homogeneous arm, so they move together)
    assert len(ors) == 4 and ors["simulated"].mean() >= 0.87
    assert 0.8 <= ors["width_over_true"].mean() <= 1.25  # interval width ~ 2 x 1.96 x the true spread
    rates = s[s["statistic"].str.contains("imp_win_rate") & (s["method"] == "design")]
    assert len(rates) == 10 and rates["simulated"].mean() >= 0.90
    # the paper's bootstrap is no narrower than the design bootstrap for the mode ORs
    paper = s[s["statistic"].str.endswith("_or") & (s["method"] == "paper")]
    assert paper["width_over_true"].mean() >= ors["width_over_true"].mean()


@heavy
def test_paper_sized_calibration():
    cfg = StatsConfig(bootstrap_reps=1000, permutation_reps=1000, strict=True)
    sc = make_scenario("null", games=120)
    s = summarise(sc, run_scenario(sc, 200, cfg, jobs=os.cpu_count() or 1, games=120))
    assert 0.93 <= _row(s, "itt_pp", "design")["simulated"] <= 0.97
    assert _row(s, "itt_pp", "p")["ks_p"] > 0.01
    for stat in [c for c in s["statistic"].unique() if c.endswith("_or")]:
        assert 0.92 <= _row(s, stat, "design")["simulated"] <= 0.98
    pos = make_scenario("position", games=120)
    p = summarise(pos, run_scenario(pos, 200, cfg, parts=("speaking",), jobs=os.cpu_count() or 1, games=120))
    assert _row(p, "itt_pp", "p")["simulated"] > 0.9  # power for the paper's -1.11 pp
