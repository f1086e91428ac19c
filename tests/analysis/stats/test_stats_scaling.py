"""Scaling (Table 10): provider FE and within-family slopes recover a known within-family slope."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from _synth_stats import fast_config, make_logit_games
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.stats import TABLES

SLOPE = 0.4  # log-odds per 10x parameters within a family
PARAMS = {"a1": 1.0, "a2": 10.0, "a3": 100.0, "b1": 10.0, "b2": 1000.0, "c1": 50.0}
PROVIDER = {"a1": "PA", "a2": "PA", "a3": "PA", "b1": "PB", "b2": "PB", "c1": "PC"}
FAMILY = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "b2": "B", "c1": "C"}
PROVIDER_LOR = {"PA": 0.0, "PB": 0.9, "PC": -0.5}  # confounds size across providers


@pytest.fixture(scope="module")
def confounded():
    models = list(PARAMS)
    return Analysis(make_logit_games(n_exp=360, games_per_exp=80, seed=11, size_slope=SLOPE, model_params=PARAMS,
                                     model_lor={m: PROVIDER_LOR[PROVIDER[m]] for m in models}, b0=-0.8, re_sd=0.2,
                                     provider=[PROVIDER[m] for m in models], family=[FAMILY[m] for m in models],
                                     mode_lor={"homogeneous": 0.0, "cross_play": -0.2, "team_aware": -0.3}))


def test_provider_fe_and_within_family_recover_slope(confounded):
    s = TABLES["scaling"](confounded, fast_config()).set_index("fit")
    truth = math.exp(SLOPE)
    assert s.loc["overall_provider_fe", "ci_low"] < truth < s.loc["overall_provider_fe", "ci_high"]
    assert s.loc["within_A", "ci_low"] < truth < s.loc["within_A", "ci_high"]
    assert s.loc["within_B", "ci_low"] < truth < s.loc["within_B", "ci_high"]
    # without provider FE the provider confound inflates the slope
    assert s.loc["overall_no_provider", "or_per_10x"] > s.loc["overall_provider_fe", "or_per_10x"]
    assert not (s.loc["overall_no_provider", "ci_low"] < truth < s.loc["overall_no_provider", "ci_high"])
    assert "within_C" not in s.index
    assert any("family C omitted" in n for n in confounded.notes)


def test_within_family_point_estimate_matches_formula_fit(confounded):
    s = TABLES["scaling"](confounded, fast_config()).set_index("fit")
    g = confounded.games
    g = g[g["impostor_model"].map(FAMILY) == "A"].assign(
        y=lambda x: (x["winner"] == "impostor").astype(int), lp=lambda x: np.log10(x["impostor_model"].map(PARAMS)))
    res = smf.logit("y ~ lp + C(mode) + C(difficulty)", g).fit(
        disp=0, cov_type="cluster", cov_kwds={"groups": pd.factorize(g["experiment_id"])[0]})
    assert s.loc["within_A", "or_per_10x"] == pytest.approx(math.exp(res.params["lp"]), rel=1e-6)
    assert s.loc["within_A", "p"] == pytest.approx(res.pvalues["lp"], rel=1e-4)


def test_single_size_everywhere_gives_empty_table_with_note():
    d = make_logit_games(n_exp=20, games_per_exp=20, seed=1, model_params={"x": 7.0})
    data = Analysis(AnalysisData(d.games, None, d.models))
    out = TABLES["scaling"](data, fast_config(strict=False))
    assert len(out) == 0 and any("size" in n for n in data.notes)
