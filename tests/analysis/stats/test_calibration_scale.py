"""The calibration matrix compares interval widths with the estimate's SD on the scale the interval
is built on (issue 39 A.3): the log scale for every odds ratio, the natural scale for rates."""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.calibration_matrix import on_log_scale, ratio_keys, summarise

Z = 1.959964


def _records(calibration: str, quantity: str, estimates: np.ndarray, half: np.ndarray, log: bool) -> pd.DataFrame:
    centre = np.log(estimates) if log else estimates
    lo, hi = centre - half, centre + half
    return pd.DataFrame({"calibration": calibration, "quantity": quantity, "estimate": estimates,
                         "ci_low": np.exp(lo) if log else lo, "ci_high": np.exp(hi) if log else hi, "p": np.nan,
                         "method": "some method", "truth": np.nan, "rep": np.arange(len(estimates))})


def test_every_odds_ratio_and_only_odds_ratios_are_on_the_log_scale():
    keys = ratio_keys()
    assert {"odds_ratios:or", "opponent_baseline:or_per_10pp", "scaling:or_per_10x", "cluster_robust:term",
            "speaking_glm:position_or", "equation1:fe_or"} <= keys
    assert not keys & {"headline:imp_win", "balance:p_imp", "bootstrap:quantity", "learning:learning_coef"}
    r = pd.DataFrame({"calibration": ["bootstrap:quantity", "bootstrap:quantity", "headline:imp_win",
                                      "opponent_baseline:or_per_10pp"],
                      "quantity": ["quantity:cross_play_vs_homogeneous_or", "quantity:overall_imp_win_rate",
                                   "imp_win:m1", "or_per_10pp:m1"]})
    assert on_log_scale(r).tolist() == [True, False, False, True]


def test_an_or_interval_at_its_sampling_sd_on_the_log_scale_has_se_ratio_one():
    """Log-OR estimates with SD 1 and intervals theta +- z * 1: on the log scale the printed SE equals the SD
    (ratio 1); on the OR scale (the old mask for opponent_baseline) the same intervals read ~1.4x too wide."""
    rng = np.random.default_rng(5)
    sd = 1.0
    est = np.exp(np.log(1.3) + sd * rng.standard_normal(400))
    rec = pd.concat([_records("opponent_baseline:or_per_10pp", "or_per_10pp:m1", est, np.full(400, Z * sd), True),
                     _records("headline:imp_win", "imp_win:m1", 0.4 + 0.02 * rng.standard_normal(400),
                              np.full(400, Z * 0.02), False)], ignore_index=True)
    s = summarise(rec, "planted", 120, 40)
    s = s[s["method"] == "some method"].set_index("table")
    for t in ("opponent_baseline", "headline"):
        assert 0.93 <= s.loc[t, "se_ratio"] <= 1.07, (t, s.loc[t, "se_ratio"])
        assert 0.93 <= s.loc[t, "width_ratio"] <= 1.07
    linear = (rec["ci_high"] - rec["ci_low"])[:400].mean() / (2 * Z) / est.std(ddof=1)
    assert linear > 1.25  # what the natural-scale comparison of the same intervals reported
