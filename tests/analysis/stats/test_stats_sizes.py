"""Size fits (Tables 2 and 10) list the models they used and left out, and why; estimated sizes."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from _synth_stats import fast_config, make_logit_games
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats.sizes import ESTIMATED_EXCLUDED, NO_PARAMS, NO_PROVIDER, NOT_IN_MODELS

SLOPE = 0.35
# a1-a3, b1-b2: published sizes; e1: an estimated size; x: no params_b; y: absent from models.csv;
# n: a size but no provider
PARAMS = {"a1": 1.0, "a2": 10.0, "a3": 100.0, "b1": 10.0, "b2": 1000.0, "e1": 300.0, "x": 40.0, "y": 5.0,
          "n": 3.0}
FAMILY = {"a1": "A", "a2": "A", "a3": "A", "b1": "B", "b2": "B", "e1": "B", "x": "A", "y": "A", "n": "C"}
PROVIDER = {m: ("PA" if f == "A" else "PB" if f == "B" else None) for m, f in FAMILY.items()}


def _data() -> AnalysisData:
    d = make_logit_games(n_exp=270, games_per_exp=60, seed=5, size_slope=SLOPE, model_params=PARAMS,
                         provider=[PROVIDER[m] for m in PARAMS], family=[FAMILY[m] for m in PARAMS],
                         mode_lor={"homogeneous": 0.0, "cross_play": -0.2, "team_aware": 0.1})
    meta = d.models.set_index("model")
    meta.loc["x", "params_b"] = np.nan
    meta["params_source"] = ["estimated" if m == "e1" else ("published" if m != "x" else None) for m in meta.index]
    meta["provider"] = meta["provider"].astype(object).where(meta["provider"].notna(), None)
    meta = meta.drop(index="y").reset_index()
    return Analysis(AnalysisData(d.games, None, meta))


@pytest.fixture(scope="module")
def data():
    return _data()


def _members(table: pd.DataFrame, fit: str) -> pd.DataFrame:
    return table[table["fit"] == fit].set_index("model")


def test_each_fit_lists_used_and_left_out_models_with_reasons(data):
    cfg = fast_config()
    members = TABLES["size_fit_models"](data, cfg)
    overall = _members(members, "overall_no_provider")
    assert set(overall.index) == set(PARAMS)  # every impostor model is accounted for
    assert overall.loc["x", "reason"] == NO_PARAMS and not overall.loc["x", "used"]
    assert overall.loc["y", "reason"] == NOT_IN_MODELS and not overall.loc["y", "used"]
    assert overall.loc[["a1", "a2", "a3", "b1", "b2", "e1", "n"], "used"].all()
    assert overall.loc["e1", "params_source"] == "estimated"  # estimated sizes are used by default
    fe = _members(members, "overall_provider_fe")
    assert fe.loc["n", "reason"] == NO_PROVIDER and not fe.loc["n", "used"]
    within_a = _members(members, "within_A")
    assert set(within_a.index) == {"a1", "a2", "a3", "x"}  # y has no family (not in models.csv)
    assert within_a.loc["x", "reason"] == NO_PARAMS
    assert _members(members, "within_C").loc["n", "reason"] == "fit omitted: a single model size"
    # the fits' own rows say the same
    s = TABLES["scaling"](data, cfg).set_index("fit")
    assert "x (no params_b)" in s.loc["overall_no_provider", "models_left_out"]
    assert "y (not in models.csv)" in s.loc["overall_no_provider", "models_left_out"]
    assert "n (no provider)" in s.loc["overall_provider_fe", "models_left_out"]
    assert s.loc["overall_no_provider", "models_estimated"] == "e1"
    assert s.loc["overall_no_provider", "n"] == int(data.games["impostor_model"].isin(
        ["a1", "a2", "a3", "b1", "b2", "e1", "n"]).sum())
    o = TABLES["odds_ratios"](data, cfg).set_index("comparison")
    assert "x (no params_b)" in o.loc["size_per_10x", "models_left_out"]
    assert o.loc["size_per_10x", "models_used"] == s.loc["overall_no_provider", "models_used"]
    assert any("left out" in n and "x (no params_b)" in n for n in data.notes)


def test_excluding_estimated_sizes_refits_without_them(data):
    cfg = dataclasses.replace(fast_config(), estimated_params=False)
    members = _members(TABLES["size_fit_models"](data, cfg), "overall_no_provider")
    assert members.loc["e1", "reason"] == ESTIMATED_EXCLUDED and not members.loc["e1", "used"]
    s = TABLES["scaling"](data, cfg).set_index("fit")
    assert "e1 (estimated params_b excluded" in s.loc["overall_no_provider", "models_left_out"]
    # independent fit on the games of the published-size models (statsmodels, cluster-robust)
    used = ["a1", "a2", "a3", "b1", "b2", "n"]
    g = data.games[data.games["impostor_model"].isin(used)].assign(
        w=lambda d: (d["winner"] == "impostor").astype(int), lp=lambda d: np.log10(d["impostor_model"].map(PARAMS)))
    res = smf.logit("w ~ lp + C(mode) + C(difficulty)", g).fit(
        disp=0, cov_type="cluster", cov_kwds={"groups": pd.factorize(g["experiment_id"])[0]})
    assert s.loc["overall_no_provider", "or_per_10x"] == pytest.approx(math.exp(res.params["lp"]), rel=1e-6)
    assert s.loc["overall_no_provider", "ci_low"] < math.exp(SLOPE) < s.loc["overall_no_provider", "ci_high"]
    o = TABLES["odds_ratios"](data, cfg).set_index("comparison")
    plain = smf.logit("w ~ lp", g).fit(disp=0)
    assert o.loc["size_per_10x", "or"] == pytest.approx(math.exp(plain.params["lp"]), rel=1e-6)


def test_exports_without_params_source_count_sizes_as_published():
    d = _data()
    models = d.models.drop(columns="params_source")
    data = AnalysisData(d.games, None, models)
    cfg = dataclasses.replace(fast_config(), estimated_params=False)
    members = _members(TABLES["size_fit_models"](data, cfg), "overall_no_provider")
    assert members.loc["e1", "used"] and members.loc["e1", "params_source"] == "published"
