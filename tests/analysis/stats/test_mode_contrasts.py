"""Mode contrasts at the width of their sampling SD (issue 39; ``analysis/stats/_marginal.py``).

1. With the mode dummies as the whole design, the marginal contrast's CR2 SE and
   Bell-McCaffrey df are those of ``_regress.experiment_logit``'s mode coefficient (the
   treatment-coded logit's MLE is the difference of empirical logits, so the two are the
   same estimator): an independent implementation of the same formula.
2. On a fixed design (the same models in the same experiments on every run) with strong
   model effects, word pairs shared across experiments (SD 1.0) and experiment effects
   (SD 0.5), the printed SE matches the SD of the estimate over runs and the intervals cover
   the design's marginal OR, where the mode-only fit's SE is too wide.
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
from impostor_bench.analysis.stats import TABLES, _marginal
from impostor_bench.analysis.stats._base import prepared
from impostor_bench.analysis.stats._regress import experiment_logit, with_intercept
from impostor_bench.analysis.stats.odds import mode_ors
from impostor_bench.analysis.stats.session import Analysis

MODES = ("cross_play", "team_blind", "team_aware", "team_semi_aware")


def _run(rep: int, experiments: int, games: int, scenario: str = "planted"):
    g, pl, models = simulate_games(experiments, games, design_seed=1, seed=7000 + rep, **SCENARIOS[scenario])
    return AnalysisData(games=g, players=pl, models=models), design_truth(g, pl)


def test_mode_only_design_reproduces_the_cr2_fit():
    data, _ = _run(0, 60, 24)
    prep = prepared(Analysis(data, fast_config()))
    keys = pd.Series(prep.mode, dtype=object).to_numpy()
    X, names = with_intercept((np.stack([keys == m for m in MODES], 1), list(MODES)))
    fit = experiment_logit(prep.y, X, names, prep.exp_code, "modes")
    res = _marginal.design_residuals(prep, prep.mode, prep.exp_code, X=X)
    for j, m in enumerate(MODES, start=1):
        theta, se, df = _marginal.marginal_log_or(res, m, "homogeneous")
        assert theta == pytest.approx(fit.coef[j], rel=1e-7)
        assert se == pytest.approx(fit.se[j], rel=1e-6)
        assert df == pytest.approx(fit.df[j], rel=1e-6)
    # a contrast between two non-reference modes: the difference of the two coefficients
    theta, se, _ = _marginal.marginal_log_or(res, "team_aware", "team_blind")
    c = np.zeros(len(names))
    c[names.index("team_aware")], c[names.index("team_blind")] = 1, -1
    assert theta == pytest.approx(c @ fit.coef, rel=1e-7)
    assert se == pytest.approx(np.sqrt(c @ fit.cov @ c), rel=1e-6)


def test_design_matrix_is_full_rank_and_spans_the_modes():
    data, _ = _run(1, 60, 24)
    prep = prepared(Analysis(data, fast_config()))
    X = _marginal.design_matrix(prep)
    assert np.linalg.matrix_rank(X) == X.shape[1]
    assert np.all(X[:, 0] == 1)
    for m in MODES:  # each mode indicator lies in the column space (so the fit's residuals sum to 0 in it)
        ind = (pd.Series(prep.mode, dtype=object) == m).to_numpy(float)
        coef = np.linalg.lstsq(X, ind, rcond=None)[0]
        assert np.abs(X @ coef - ind).max() < 1e-8


@pytest.mark.slow
def test_width_matches_the_sampling_sd_on_a_fixed_design():
    """60 runs of one 120 x 40 design with the paper's planted effects: the mean SE over the SD of
    the estimate, pooled over the five contrasts, in [0.9, 1.15] and no contrast above 1.3;
    pooled coverage >= 90%; the mode-only fit's SE is > 10% larger on the same runs (its excess
    width is the design's composition; the estimates are the same, so this ratio has no Monte-Carlo
    noise from the SD)."""
    reps = 60
    new, old, cover = [], [], []
    for rep in range(reps):
        data, truth = _run(rep, 120, 40)
        cfg = fast_config()
        o = TABLES["odds_ratios"](data, cfg).set_index("comparison")
        o = o[o["method"].str.startswith("marginal")]
        new.append(o[["coef", "se"]].assign(rep=rep))
        cover += [(r.ci_low <= truth[f"or:{c}"] <= r.ci_high) for c, r in o.iterrows()]
        ref = pd.DataFrame(mode_ors(prepared(Analysis(data, cfg)), cfg)).set_index("comparison")
        old.append(ref[["coef", "se"]])
    new_d, old_d = pd.concat(new), pd.concat(old)
    assert set(new_d.index) == {f"{m}_vs_homogeneous" for m in MODES} | {"team_aware_vs_team_blind"}
    ratio = new_d.groupby(level=0)["se"].mean() / new_d.groupby(level=0)["coef"].std()
    assert 0.9 <= ratio.mean() <= 1.15 and (ratio < 1.3).all(), ratio
    vs_hom = [f"{m}_vs_homogeneous" for m in MODES]
    excess = old_d.groupby(level=0)["se"].mean()[vs_hom] / new_d.groupby(level=0)["se"].mean()[vs_hom]
    assert excess.mean() > 1.1, excess
    assert np.mean(cover) >= 0.90
    assert stats.binomtest(int(np.sum(cover)), len(cover), 0.95).pvalue > 0.001


def test_size_slope_with_the_fit_as_the_design_reproduces_the_cr2_fit():
    """The slope machinery (``slope_weights`` + ``linear_se``) with the size-only logit as the design
    gives that logit's coefficient, CR2 SE and Bell-McCaffrey df (``experiment_logit``)."""
    data, _ = _run(2, 60, 24)
    prep = prepared(Analysis(data, fast_config()))
    models = sorted(set(prep.imp_model))
    size = {m: 0.3 * i for i, m in enumerate(models)}
    x = np.array([size[m] for m in prep.imp_model])
    X, names = with_intercept((x, ["size"]))
    fit = experiment_logit(prep.y, X, names, prep.exp_code, "size")
    res = _marginal.design_residuals(prep, prep.imp_model, prep.exp_code, X=X)
    slope, d = _marginal.slope_weights(res, size, models)
    se, df = _marginal.linear_se(res, d)
    assert slope == pytest.approx(fit.coef[1], rel=1e-7)
    assert se == pytest.approx(fit.se[1], rel=1e-6)
    assert df == pytest.approx(fit.df[1], rel=1e-6)


def test_size_row_uses_the_design_residuals():
    data, _ = _run(3, 60, 24)
    o = TABLES["odds_ratios"](data, fast_config()).set_index("comparison")
    assert o.loc["size_per_10x", "method"] == _marginal.METHOD_SLOPE
    assert o.loc["size_per_10x", "ci_low"] < o.loc["size_per_10x", "or"] < o.loc["size_per_10x", "ci_high"]
