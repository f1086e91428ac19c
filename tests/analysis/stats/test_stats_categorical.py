"""Chi-squared tests and Cramér's V (Table 3) against a hand computation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from _synth_stats import fast_config, shared_ballot
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats.categorical import magnitude


def chi2_by_hand(a, b):
    t = pd.crosstab(pd.Series(list(a)), pd.Series(list(b))).to_numpy(float)
    n = t.sum()
    exp = np.outer(t.sum(1), t.sum(0)) / n
    x2 = float(((t - exp) ** 2 / exp).sum())
    df = (t.shape[0] - 1) * (t.shape[1] - 1)
    v = math.sqrt(x2 / (n * (min(t.shape) - 1)))
    return x2, df, float(stats.chi2.sf(x2, df)), v


def test_chi2_table_against_hand_computation():
    data = shared_ballot()
    c = TABLES["chi2"](data, fast_config(paper_methods=True)).set_index("test")  # the paper's Pearson p
    g = data.games
    y = g["winner"]
    imp_rows = data.players[data.players["role"] == "impostor"].set_index("game_id")
    sd = imp_rows.loc[g["game_id"], "self_declared"].to_numpy()
    cases = {
        "model_x_outcome": (g["impostor_model"], y), "mode_x_outcome": (g["mode"], y),
        "difficulty_x_outcome": (g["difficulty"], y), "seat_x_outcome": (g["impostor_seat"], y),
        "selfdecl_x_model": (sd, g["impostor_model"]),
    }
    for test, (a, b) in cases.items():
        x2, df, p, v = chi2_by_hand(a, b)
        assert c.loc[test, "chi2"] == pytest.approx(x2, rel=1e-9)
        assert c.loc[test, "df"] == df
        assert c.loc[test, "p"] == pytest.approx(p, rel=1e-6)
        assert c.loc[test, "cramers_v"] == pytest.approx(v, rel=1e-9)
        assert c.loc[test, "magnitude"] == magnitude(v, (2, 2) if min(pd.Series(list(a)).nunique(),
                                                                       pd.Series(list(b)).nunique()) == 2 else (4, 4))


@pytest.mark.parametrize("v,shape,label", [
    (0.247, (9, 2), "small"), (0.034, (5, 2), "negligible"), (0.112, (4, 2), "small"),
    (0.045, (4, 2), "negligible"), (0.330, (2, 9), "medium"), (0.5, (2, 2), "large"),
    (0.08, (3, 3), "small"), (0.06, (3, 3), "negligible"), (0.22, (3, 3), "medium"), (0.36, (3, 3), "large"),
    (0.175, (4, 4), "medium"), (0.17, (4, 4), "small"), (0.29, (4, 4), "large"),
])
def test_magnitude_labels_cohen_by_df(v, shape, label):
    assert magnitude(v, shape) == label


def test_chi2_detects_generated_difficulty_effect():
    data = shared_ballot()
    c = TABLES["chi2"](data, fast_config()).set_index("test")
    # p: cluster-robust joint Wald by experiment (220 experiments)
    assert c.loc["mode_x_outcome", "p_method"] == "logit, CR2 by experiment, Wald F(q, G-1)"
    assert c.loc["mode_x_outcome", "wald_df2"] == 219
    # difficulty: two-way by experiment and word pair (issue 39; tests/analysis/stats/test_difficulty_tests.py);
    # self-declaration x model: over its level in the calibration matrix (issue 26), so no p, and the reason
    assert "word pair" in c.loc["difficulty_x_outcome", "p_method"] and c.loc["difficulty_x_outcome", "p"] < 0.05
    assert c.loc["difficulty_x_outcome", "cramers_v"] > 0.1  # detection depends strongly on difficulty
    assert np.isnan(c.loc["selfdecl_x_model", "p"])
    assert "calibration" in c.loc["selfdecl_x_model", "p_method"]
    # seats shared across experiments (old schedule): no seat p
    assert np.isnan(c.loc["seat_x_outcome", "p"])
    assert "schedule before per-experiment seats" in c.loc["seat_x_outcome", "p_method"]
    paper = TABLES["chi2"](shared_ballot(), fast_config(paper_methods=True)).set_index("test")
    assert paper.loc["selfdecl_x_model", "p"] < 1e-6  # the paper's Pearson p
    assert paper["p_method"].str.startswith("paper (Pearson chi2").all()
    assert "p_pearson" not in c.columns  # no game-level p in the default table


def test_two_by_two_uses_pearson_without_yates():
    from impostor_bench.analysis.stats.categorical import chi2_test
    a = ["x"] * 30 + ["y"] * 30
    b = ["w"] * 20 + ["l"] * 10 + ["w"] * 10 + ["l"] * 20
    x2, df, p, v = chi2_by_hand(a, b)
    r = chi2_test(a, b)
    assert (r["chi2"], r["df"], r["p"], r["cramers_v"]) == pytest.approx((x2, df, p, v))
    assert x2 == pytest.approx(60 * (20 * 20 - 10 * 10) ** 2 / (30 * 30 * 30 * 30))


def test_description_length_cohens_d():
    from _synth_stats import make_ballot_games
    data = make_ballot_games(n_models=2, games_per_exp=8, seed=4)
    p = data.players.copy()
    p["description"] = p["description"] + pd.Series([" aa" * (i % 3) for i in range(len(p))], index=p.index)
    # impostor descriptions get two extra words
    p.loc[p["role"] == "impostor", "description"] = p.loc[p["role"] == "impostor", "description"] + " aa bb"
    data.players = p
    d = TABLES["description_effect"](data, fast_config()).set_index("measure")
    imp = p[p["role"] == "impostor"]["description"].str.split().str.len()
    maj = p[p["role"] == "majority"]["description"].str.split().str.len()
    sp = math.sqrt(((len(imp) - 1) * imp.var() + (len(maj) - 1) * maj.var()) / (len(imp) + len(maj) - 2))
    assert d.loc["words", "cohen_d"] == pytest.approx((imp.mean() - maj.mean()) / sp)
    assert d.loc["words", "mean_impostor"] - d.loc["words", "mean_majority"] == pytest.approx(
        imp.mean() - maj.mean())
    assert d.loc["words", "cohen_d"] > 1 and d.loc["chars", "cohen_d"] > 1
