"""Length-normalised outcomes: a planted model effect behind a length effect is recovered with the
length controlled, the raw comparison is not, and the adjusted test holds its size when models
differ only in verbosity (docs/analysis.md, "Length-normalised outcomes")."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from _synth_stats import fast_config
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats.length_normalised import LENGTH_TERM
from impostor_bench.analysis.stats.session import Analysis

DIFFS = ("easy", "medium", "hard", "expert")
#: Median characters of each model's descriptions: "a" is verbose, "c" terse.
VERBOSITY = {"a": 300.0, "b": 150.0, "c": 60.0}


def length_games(model_lor: dict, length_lor: float, n_exp: int = 90, games: int = 40, seed: int = 0,
                 re_sd: float = 0.3, b0: float = -0.2) -> AnalysisData:
    """Homogeneous experiments (one model each, tiers cycling); every seat writes a description of
    lognormal length about its model's ``VERBOSITY``; the impostor wins with
    expit(b0 + model_lor[m] + length_lor * (log(1 + chars) - log(1 + 150)) + u_experiment)."""
    rng = np.random.default_rng(seed)
    models = list(VERBOSITY)
    exp_model = np.array(models, dtype=object)[np.arange(n_exp) % len(models)]
    exp_diff = np.array(DIFFS, dtype=object)[(np.arange(n_exp) // len(models)) % len(DIFFS)]
    e = np.repeat(np.arange(n_exp), games)
    n = len(e)
    mdl = exp_model[e]
    chars = np.maximum(1, np.round(np.exp(np.log(np.array([VERBOSITY[m] for m in mdl]))[:, None]
                                          + rng.normal(0, 0.5, (n, 4))))).astype(int)
    imp_seat = rng.integers(0, 4, n)
    imp_chars = chars[np.arange(n), imp_seat]
    eta = (b0 + np.array([model_lor[m] for m in mdl]) + length_lor * (np.log1p(imp_chars) - np.log1p(150))
           + rng.normal(0, re_sd, n_exp)[e])
    y = rng.random(n) < 1 / (1 + np.exp(-eta))
    gid = np.array([f"g{i:06d}" for i in range(n)], dtype=object)
    games_df = pd.DataFrame({
        "experiment_id": [f"homogeneous|{exp_diff[i]}|{exp_model[i]}|e{i}" for i in e], "game_id": gid,
        "game_index": np.tile(np.arange(games), n_exp), "mode": "homogeneous", "difficulty": exp_diff[e],
        "pair_id": [f"p{i:02d}" for i in rng.integers(0, 40, n)], "majority_word": "x", "impostor_word": "y",
        "impostor_seat": imp_seat, "impostor_model": mdl, "impostor_speaking_position": rng.integers(0, 4, n),
        "winner": np.where(y, "impostor", "majority"), "win_condition": np.where(y, "no_conviction", "conviction")})
    seat = np.tile(np.arange(4), n)
    players = pd.DataFrame({
        "game_id": np.repeat(gid, 4), "seat": seat, "model": np.repeat(mdl, 4),
        "role": np.where(seat == np.repeat(imp_seat, 4), "impostor", "majority"),
        "description": ["w" * c for c in chars.ravel()], "description_valid": True})
    meta = pd.DataFrame({"model": models, "provider": "P", "family": "F", "params_b": [10.0, 20.0, 30.0]})
    return AnalysisData(games=games_df, players=players, models=meta)


def _table(data: AnalysisData) -> pd.DataFrame:
    return TABLES["length_normalised"](Analysis(data), fast_config()).set_index("model")


def test_recovers_the_planted_model_effect_behind_a_length_effect():
    true = {"a": 0.0, "b": math.log(1.5), "c": math.log(0.8)}
    t = _table(length_games(true, length_lor=-0.8, n_exp=150, games=60, seed=3))
    for m in ("b", "c"):
        assert t.loc[m, "ci_low"] < math.exp(true[m]) < t.loc[m, "ci_high"], (m, t.loc[m].to_dict())
        assert "CR2 by experiment" in t.loc[m, "method"]
    # the raw comparison ranks verbosity: terse "c" looks strong, far from its planted 0.8
    assert t.loc["c", "or_raw"] > 2.0 and t.loc["c", "or_adj"] == pytest.approx(0.8, abs=0.2)
    # the length term itself: a doubling of the impostor's description multiplies the odds by 2^-0.8
    assert t.loc[LENGTH_TERM, "ci_low"] < 2 ** -0.8 < t.loc[LENGTH_TERM, "ci_high"]
    # medians: the truncate_to target of each model, and the reference row
    assert t.loc["a", "median_chars"] == pytest.approx(300, rel=0.06)
    assert t.loc["c", "median_chars"] == pytest.approx(60, rel=0.08)
    assert t.loc["a", "or_adj"] == 1.0 and np.isnan(t.loc["a", "ci_low"])
    # length bins: within a bin, the models' raw win rates are far closer than overall
    assert abs(t.loc["c", "imp_win_pct"] - t.loc["a", "imp_win_pct"]) > 15


def test_bins_and_medians_match_an_independent_count():
    data = length_games({"a": 0.0, "b": 0.0, "c": 0.0}, length_lor=-0.5, n_exp=30, games=20, seed=1)
    t = _table(data)
    p, g = data.players, data.games.set_index("game_id")
    imp = p[p["role"] == "impostor"].assign(c=lambda d: d["description"].str.len()).set_index("game_id")["c"]
    cut = imp.median()
    for m in VERBOSITY:
        ids = g.index[g["impostor_model"] == m]
        win = (g.loc[ids, "winner"] == "impostor")
        short = imp.loc[ids] <= cut
        assert t.loc[m, "imp_win_short_pct"] == pytest.approx(100 * win[short.to_numpy()].mean())
        assert t.loc[m, "imp_win_long_pct"] == pytest.approx(100 * win[~short.to_numpy()].mean())
        assert t.loc[m, "median_chars"] == pytest.approx(p[p["model"] == m]["description"].str.len().median())


@pytest.mark.slow
def test_adjusted_test_holds_its_size_when_models_differ_only_in_verbosity():
    """200 replicates, models equal at equal length, length effect -0.8: the rejection rate of the
    adjusted model test at 5% is its size (the raw odds ratios of such data sit far from 1)."""
    p = []
    for rep in range(200):
        t = _table(length_games({"a": 0.0, "b": 0.0, "c": 0.0}, length_lor=-0.8, n_exp=45, games=30, seed=100 + rep))
        p += [t.loc["b", "p"], t.loc["c", "p"]]
    p = np.array(p)
    assert np.isfinite(p).all()
    assert (p < 0.05).mean() <= 0.08, (p < 0.05).mean()
