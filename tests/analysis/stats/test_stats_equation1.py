"""Issue 43: equation (1) of B.3 with FE_experiment and FE_word_pair recovers a planted position
effect on data with strong experiment and word-pair effects (where a fit without them is
attenuated), absorbs mode and difficulty, and its CR1 test holds its size under the null."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from _synth_stats import fast_config
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.stats import TABLES

MODES = ("homogeneous", "cross_play", "team_aware")
DIFFS = ("easy", "hard")


def _games(beta_pos=(0.0, -0.3, -0.6, -0.9), exp_sd=1.0, pair_sd=1.0, n_exp=60, games=60, n_pairs=30, seed=0):
    """Games drawn from equation (1) itself: logit = a + mode + difficulty + pos + u_experiment + v_pair.
    Pairs are shared across experiments (game i plays pair i mod n_pairs within a tier)."""
    rng = np.random.default_rng(seed)
    u = rng.normal(0, exp_sd, n_exp)
    v = rng.normal(0, pair_sd, n_pairs * len(DIFFS))
    rows = []
    for e in range(n_exp):
        mode, diff = MODES[e % len(MODES)], DIFFS[(e // len(MODES)) % len(DIFFS)]
        d = DIFFS.index(diff)
        pos = rng.integers(0, 4, games)
        pair = d * n_pairs + (np.arange(games) % n_pairs)
        eta = -0.2 + 0.3 * MODES.index(mode) - 0.4 * d + np.asarray(beta_pos)[pos] + u[e] + v[pair]
        win = rng.random(games) < 1 / (1 + np.exp(-eta))
        for i in range(games):
            rows.append({"experiment_id": f"e{e:03d}", "game_id": f"e{e:03d}-{i:03d}", "game_index": i, "mode": mode,
                         "difficulty": diff, "pair_id": f"p{pair[i]}", "majority_word": "a", "impostor_word": "b",
                         "impostor_seat": int(rng.integers(4)), "impostor_model": "m",
                         "impostor_speaking_position": int(pos[i]), "winner": "impostor" if win[i] else "majority",
                         "win_condition": "x"})
    return pd.DataFrame(rows)


def test_equation1_recovers_a_planted_position_effect():
    games = _games()
    out = TABLES["equation1"](AnalysisData(games, pd.DataFrame()), fast_config())
    exp = out[out["cluster"] == "experiment_id"].set_index("term")
    for k, b in ((1, -0.3), (2, -0.6), (3, -0.9)):
        row = exp.loc[f"pos{k}_vs_pos0"]
        assert row["ci_low"] <= np.exp(b) <= row["ci_high"], (k, row.to_dict())
        assert abs(row["coef"] - b) < 2.5 * row["se"]
    assert exp.loc["pos3_vs_pos0", "p"] < 1e-4 and exp.loc["pos3_vs_pos0", "n_clusters"] == 60
    pair = out[out["cluster"] == "word_pair"].set_index("term")
    assert pair.loc["pos3_vs_pos0", "n_clusters"] == 60 and pair.loc["pos3_vs_pos0", "ci_high"] < 1
    assert np.allclose(pair["coef"], exp["coef"])  # one fit, two clusterings
    absorbed = out[out["term"].isin(["mode", "difficulty"])]
    assert len(absorbed) == 2 and absorbed["or"].isna().all() and absorbed["note"].str.contains("absorbed").all()
    # without the fixed effects the logit is attenuated (non-collapsibility): what (1)'s FEs are for
    import statsmodels.api as sm

    X = sm.add_constant(pd.get_dummies(games["impostor_speaking_position"], prefix="pos", drop_first=True,
                                       dtype=float))
    naive = sm.Logit((games["winner"] == "impostor").astype(float), X).fit(disp=0).params["pos_3"]
    assert abs(naive) < abs(exp.loc["pos3_vs_pos0", "coef"]) - 0.1


@pytest.mark.slow
def test_equation1_cr1_holds_its_size_under_the_null():
    """40 replicates of the null (no position effect, strong experiment and pair effects): the three
    position tests reject at about 5% (binomial bound at 120 tests)."""
    from scipy.stats import binom

    cfg = fast_config()
    p = []
    for rep in range(40):
        out = TABLES["equation1"](AnalysisData(_games(beta_pos=(0, 0, 0, 0), n_exp=40, games=40, seed=100 + rep),
                                               pd.DataFrame()), cfg)
        p += list(out.loc[(out["cluster"] == "experiment_id") & out["term"].str.startswith("pos"), "p"])
    rate = float(np.mean(np.asarray(p) < 0.05))
    assert len(p) == 120 and rate <= binom.ppf(0.99, 120, 0.05) / 120, rate


def _schedule_games(slopes, n_exp=48, games=60, n_pairs=20, seed=0):
    """Games whose impostor-win log-odds change by ``slopes[mode]`` per game index, with experiment and
    word-pair effects (SD 1; pair i mod n_pairs at game i, so pairs recur at three indices)."""
    rng = np.random.default_rng(seed)
    modes = list(slopes)
    u = rng.normal(0, 1.0, n_exp)
    v = rng.normal(0, 1.0, n_pairs)
    rows = []
    for e in range(n_exp):
        mode = modes[e % len(modes)]
        i = np.arange(games)
        pair = i % n_pairs
        eta = -0.2 + slopes[mode] * i + u[e] + v[pair]
        win = rng.random(games) < 1 / (1 + np.exp(-eta))
        for k in range(games):
            rows.append({"experiment_id": f"e{e:03d}", "game_id": f"e{e:03d}-{k:03d}", "game_index": k, "mode": mode,
                         "difficulty": "easy", "pair_id": f"p{pair[k]}", "majority_word": "a", "impostor_word": "b",
                         "impostor_seat": 0, "impostor_model": "m", "impostor_speaking_position": int(k % 4),
                         "winner": "impostor" if win[k] else "majority", "win_condition": "x"})
    return pd.DataFrame(rows)


def test_learning_coefficient_recovers_planted_slopes_per_mode():
    slopes = {"homogeneous": 0.02, "team_aware": -0.02}
    games = _schedule_games(slopes)
    out = TABLES["learning"](AnalysisData(games, pd.DataFrame()), fast_config()).set_index("mode")
    for mode, b in slopes.items():
        row = out.loc[mode]
        assert row["ci_low"] <= b <= row["ci_high"] and bool(row["pair_fe"]), row.to_dict()
        assert np.sign(row["change_30_pct"]) == np.sign(b)
        p0 = (games.loc[games["mode"] == mode, "winner"] == "impostor").mean()  # the definition, by hand
        a = np.log(p0 / (1 - p0))
        assert row["change_30_pct"] == pytest.approx(100 * ((1 + np.exp(-a)) / (1 + np.exp(-(a + 30 * row["learning_coef"])))
                                                              - 1))
        assert row["change_30_ci_low"] <= row["change_30_pct"] <= row["change_30_ci_high"]
    assert out.loc["team_aware", "ci_high"] < 0 < out.loc["homogeneous", "ci_low"]
    # one game per pair and index: the pair effects cannot be told from the index, and the table says so
    few = _schedule_games(slopes, games=20, n_pairs=20, seed=1)
    note = TABLES["learning"](AnalysisData(few, pd.DataFrame()), fast_config()).set_index("mode")
    assert not note["pair_fe"].any() and note["note"].str.contains("includes pair difficulty").all()


def test_the_sparse_fit_of_a_design_above_max_cells_equals_the_dense_statsmodels_fit(monkeypatch):
    """Issue 39 A.4: the paper's 756 x 120 design is above MAX_CELLS dense, so it was refused ("no values
    on simulated games" at that size). Above it the design is now built sparse and fitted by
    ``fit_sparse_logit``; forced here on a small design, it gives statsmodels' GLM + cov_cluster answer."""
    from impostor_bench.analysis.stats import equation1 as eq1

    data = AnalysisData(_games(n_exp=30, games=40, n_pairs=15, seed=3), pd.DataFrame())
    dense = TABLES["equation1"](data, fast_config())
    monkeypatch.setattr(eq1, "MAX_CELLS", 10)
    y, X, names, *_ = eq1.design_equation1(data)
    assert not isinstance(X, np.ndarray) and X.shape[1] == len(names)  # the sparse path
    sparse_out = TABLES["equation1"](data, fast_config())
    num = ["or", "ci_low", "ci_high", "p", "coef", "se"]
    assert dense["term"].tolist() == sparse_out["term"].tolist()
    np.testing.assert_allclose(sparse_out[num].to_numpy(float), dense[num].to_numpy(float), rtol=1e-6, atol=1e-9)
    assert sparse_out["ci_low"].notna().sum() == 6  # three positions x two clusterings


def test_learning_above_max_cells_takes_the_sparse_fit_and_gives_the_dense_answer(monkeypatch):
    """Issue 41: the paper's per-mode learning design (34,560 games x 585 columns) took 12-18 min and
    +1.4 GiB in statsmodels' dense IRLS; above MAX_CELLS it is now built sparse (two_way_dummies'
    sparse form) and fitted by ``fit_sparse_logit``. Forced on a small design, both give one answer."""
    from impostor_bench.analysis.stats import equation1 as eq1

    games = _schedule_games({"homogeneous": 0.02, "team_aware": -0.02})
    dense = TABLES["learning"](AnalysisData(games, pd.DataFrame()), fast_config()).set_index("mode")
    calls = []
    real = eq1.fit_sparse_logit
    monkeypatch.setattr(eq1, "fit_sparse_logit", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(eq1, "MAX_CELLS", 10)
    sparse_out = TABLES["learning"](AnalysisData(games, pd.DataFrame()), fast_config()).set_index("mode")
    assert len(calls) == len(dense.dropna(subset=["learning_coef"]))  # every fitted mode took the sparse path
    num = ["learning_coef", "ci_low", "ci_high", "p", "change_30_pct"]
    np.testing.assert_allclose(sparse_out.loc[dense.index, num].to_numpy(float), dense[num].to_numpy(float),
                               rtol=1e-6, atol=1e-9)
    assert dense["pair_fe"].all()
