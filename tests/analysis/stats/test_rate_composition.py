"""Composition-adjusted rate intervals (issue 39 A.1; ``rates.RateCells``).

1. Independent computation: on game rows, statsmodels' GLM of the design plus the rate's group
   indicator, CR2 (I - H_ee)^-1/2 blocks and the Bell-McCaffrey df written out densely, the delta
   method to the logit and back: the same interval as ``RateCells`` on its cells.
2. Fallbacks: too few experiments beyond the fit's parameters gives today's CR1 interval, named.
3. On a fixed simulated design (the same models in the same experiments every run) with word pairs
   shared across experiments (SD 1.0) and experiment effects (SD 0.5), the printed SE of the
   game- and seat-level rates (SE of the logit, before the t quantile) matches the SD of the
   logit of the estimate over runs (CR1's is wider) and the intervals cover the design's expected rate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from _synth_stats import fast_config
from impostor_bench.analysis.calibration_matrix import SCENARIOS, design_truth
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.sim.simulate import simulate_games
from impostor_bench.analysis.stats._base import prepared
from impostor_bench.analysis.stats._marginal import design_matrix
from impostor_bench.analysis.stats.headline import _seat_frame
from _dense_rates import dense_cr2_interval
from impostor_bench.analysis.stats.rates import METHOD, RateCells, cluster_rate, rate_columns
from impostor_bench.analysis.stats.session import Analysis

def _prep(rep: int, experiments: int, games: int, scenario: str = "planted"):
    g, pl, models = simulate_games(experiments, games, design_seed=1, seed=9000 + rep, **SCENARIOS[scenario])
    return prepared(Analysis(AnalysisData(games=g, players=pl, models=models), fast_config())), design_truth(g, pl)


def test_interval_equals_a_dense_game_level_computation():
    prep, _ = _prep(0, 48, 8)
    X = design_matrix(prep)
    cells = RateCells(prep.y, np.ones(prep.n), prep.exp_code, prep.imp_model, X, min_resid_clusters=6)
    models = list(cells.levels)
    for m in models[:3]:
        inside = prep.imp_model == m
        est = prep.y[inside].mean()
        lo, hi = cells.interval(models.index(m), est, 0.05)
        dlo, dhi = dense_cr2_interval(prep.y, X, prep.exp_code, inside)
        assert (lo, hi) == pytest.approx((dlo, dhi), rel=1e-6)
        assert 0 < lo < est < hi < 1


def test_too_few_experiments_for_the_design_logit_fall_back_to_cr1_named():
    prep, _ = _prep(0, 24, 10)
    r = rate_columns("imp_win", prep.y, np.ones(prep.n), prep.exp_code, prep.imp_model, 0.05, design_matrix(prep))
    ok = r[r["imp_win_ci_method"].str.startswith(METHOD)]
    assert len(ok) and ok["imp_win_ci_method"].str.contains("fallback from the composition-adjusted interval: "
                                                            r"24 experiments for the design logit's \d+ parameters",
                                                            regex=True).all()
    m = ok.index[0]
    cr1 = cluster_rate(prep.y[prep.imp_model == m], np.ones((prep.imp_model == m).sum()),
                       prep.exp_code[prep.imp_model == m])
    assert (ok.loc[m, "imp_win_ci_low"], ok.loc[m, "imp_win_ci_high"]) == pytest.approx(
        (100 * cr1["ci_low"], 100 * cr1["ci_high"]))


def _rate_rows(prep):
    """(name, outcome, experiment, key, game row) of impostor win, majority win and detection accuracy
    per model (headline's rows and denominators)."""
    s = _seat_frame(prep)
    maj = s[s["majority"]]
    det = maj[maj["valid"]]
    return (("imp_win", prep.y, prep.exp_code, prep.imp_model, np.arange(prep.n)),
            ("maj_win", maj["won"].to_numpy(float), maj["exp"].to_numpy(), maj["model"].to_numpy(), maj["gi"].to_numpy()),
            ("det_acc", det["correct"].to_numpy(float), det["exp"].to_numpy(), det["model"].to_numpy(),
             det["gi"].to_numpy()))


def _logit(p):
    return np.log(p / (1 - p))


@pytest.mark.slow
def test_se_matches_the_sampling_sd_and_covers_on_a_fixed_design():
    """40 runs of one 120 x 40 design with the paper's planted effects. Per rate (9 models x impostor and
    majority win, the rates the tables print with this interval; detection accuracy stays on CR1), the
    mean composition-adjusted SE of logit(rate) over the SD of logit(rate) across runs: pooled in
    [0.9, 1.15]; CR1's SE (from its interval and t(G-1)) on the same runs is > 10% larger (its excess
    is the design's composition); pooled coverage of the design's expected rate >= 93%."""
    reps = 40
    rows = []
    for rep in range(reps):
        prep, truth = _prep(rep, 120, 40)
        X = design_matrix(prep)
        for name, y, exp, key, gi in _rate_rows(prep)[:2]:
            cells = RateCells(y, np.ones(len(y)), exp, key, X[gi])
            for k, m in enumerate(cells.levels):
                inside = key == m
                est = y[inside].mean()
                se, df = cells.se_df(k, est)
                lo, hi = cells.interval(k, est, 0.05)
                cr1 = cluster_rate(y[inside], np.ones(inside.sum()), exp[inside])
                assert cr1["method"] == METHOD
                se_cr1 = (_logit(cr1["ci_high"]) - _logit(cr1["ci_low"])) / (
                    2 * stats.t.ppf(0.975, cr1["n_clusters"] - 1))
                rows.append({"q": f"{name}:{m}", "est": est, "se": se, "se_cr1": se_cr1, "lo": lo, "hi": hi,
                             "truth": truth.get(f"{name}:{m}", np.nan)})
    d = pd.DataFrame(rows)
    d["logit"] = _logit(d["est"])
    by = d.groupby("q")
    ratio = by["se"].mean() / by["logit"].std()
    assert 0.9 <= ratio.mean() <= 1.15 and (ratio < 1.4).all(), ratio.describe()
    assert (by["se_cr1"].mean() / by["se"].mean()).mean() > 1.1
    assert d["truth"].notna().all()
    assert ((d["lo"] <= d["truth"]) & (d["truth"] <= d["hi"])).mean() >= 0.93
