"""Speaking-order pseudo-arm ITT (Table 6), randomisation tests and the position GLM."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from _synth_stats import expit, fast_config, make_logit_games, shared_ballot
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats.speaking import itt_from_counts

POS_LOR = (0.0, 0.0, -0.3, -0.3)


@pytest.fixture(scope="module")
def pos_effect():
    return make_logit_games(n_exp=240, games_per_exp=100, seed=7, pos_lor=POS_LOR, re_sd=0.3,
                            mode_lor={"homogeneous": 0.0, "cross_play": -0.2, "team_aware": -0.3})


def true_itt_pp(data) -> float:
    eta = data.games.attrs["eta_without_pos"]
    p = [expit(eta + POS_LOR[j]).mean() for j in range(4)]
    return 100 * (np.mean(p[2:]) - np.mean(p))


def test_itt_formula_by_hand():
    wins = np.array([50, 40, 30, 20])
    n = np.array([100, 100, 100, 100])
    # mean(p2, p3) - mean(p0..p3) = 0.25 - 0.35
    assert float(itt_from_counts(wins, n)) == pytest.approx(-10.0)
    wins2 = np.array([10, 30, 30, 30])
    n2 = np.array([20, 100, 60, 50])
    p = wins2 / n2
    assert float(itt_from_counts(wins2, n2)) == pytest.approx(100 * ((p[2] + p[3]) / 2 - p.mean()))


def test_cells_and_pooled_row_against_groupby():
    data = shared_ballot()
    s = TABLES["speaking_itt"](data, fast_config())
    g = data.games.assign(y=data.games["winner"] == "impostor")
    assert ((s["mode"] == "ALL") & (s["difficulty"] == "ALL")).sum() == 1
    for r in s.itertuples():
        sub = g if r.mode == "ALL" else g[(g["mode"] == r.mode) & (g["difficulty"] == r.difficulty)]
        p = sub.groupby("impostor_speaking_position")["y"].mean().reindex(range(4))
        assert r.n == len(sub)
        assert r.n_mid == sub["impostor_speaking_position"].isin([2, 3]).sum()
        assert r.mid_rand_pp == pytest.approx(100 * (p[[2, 3]].mean() - p.mean()))
        assert r.ci_low <= r.mid_rand_pp <= r.ci_high or np.isnan(r.ci_low)


def test_recovers_known_itt_and_position_ors(pos_effect):
    s = TABLES["speaking_itt"](pos_effect, fast_config()).set_index(["mode", "difficulty"])
    pooled = s.loc[("ALL", "ALL")]
    truth = true_itt_pp(pos_effect)
    assert truth < -3
    assert pooled["ci_low"] < truth < pooled["ci_high"]
    assert pooled["p"] == pooled["p_randomization"] < 0.01  # p is the randomisation p
    assert pooled["p_boot_normal"] < 1e-3
    glm = TABLES["speaking_glm"](pos_effect, fast_config()).set_index("term")
    for k, lor in zip((1, 2, 3), POS_LOR[1:]):
        assert glm.loc[f"pos{k}_vs_pos0", "ci_low"] < math.exp(lor) < glm.loc[f"pos{k}_vs_pos0", "ci_high"]
    r = TABLES["speaking_randomization"](pos_effect, fast_config()).set_index(["scope", "contrast"])
    assert r.loc[("ALL", "pos3_vs_pos0"), "p"] < 0.01 and r.loc[("ALL", "pos3_vs_pos0"), "observed_pp"] < 0
    assert r.loc[("ALL", "pos1_vs_pos0"), "p"] > 0.01


def test_null_position_effect_ci_covers_zero():
    data = make_logit_games(n_exp=120, games_per_exp=100, seed=8, re_sd=0.3)
    s = TABLES["speaking_itt"](data, fast_config()).set_index(["mode", "difficulty"]).loc[("ALL", "ALL")]
    assert s["ci_low"] < 0 < s["ci_high"] and s["p"] > 0.05 and s["p_randomization"] > 0.05


def test_block_bootstrap_matches_an_explicit_resampling_loop(pos_effect):
    """The vectorised stratified block bootstrap (the paper's) agrees with a loop that resamples experiments."""
    cfg = fast_config(bootstrap_reps=2000, bootstrap="paper")
    s = TABLES["speaking_itt"](pos_effect, cfg).set_index(["mode", "difficulty"]).loc[("ALL", "ALL")]
    g = pos_effect.games.assign(y=pos_effect.games["winner"] == "impostor")
    per_exp = g.groupby(["experiment_id", "impostor_speaking_position"])["y"].agg(["sum", "size"]).unstack(
        fill_value=0)
    cell = g.groupby("experiment_id")[["mode", "difficulty"]].first()
    wins, n = per_exp["sum"].to_numpy(float), per_exp["size"].to_numpy(float)
    strata = [np.nonzero(((cell["mode"] == m) & (cell["difficulty"] == d)).to_numpy())[0]
              for (m, d) in cell.drop_duplicates().itertuples(index=False)]
    rng = np.random.default_rng(123)
    boots = []
    for _ in range(2000):
        idx = np.concatenate([rng.choice(ix, len(ix), replace=True) for ix in strata])
        w, t = wins[idx].sum(0), n[idx].sum(0)
        p = w / t
        boots.append(100 * (p[2:].mean() - p.mean()))
    lo, hi = np.percentile(boots, [2.5, 97.5])
    width = hi - lo
    assert s["ci_low_paper"] == pytest.approx(lo, abs=0.15 * width)
    assert s["ci_high_paper"] == pytest.approx(hi, abs=0.15 * width)
    assert s["se_boot"] == pytest.approx(np.std(boots, ddof=1), rel=0.1)
    assert s["bootstrap"] == "paper"


def test_randomization_p_matches_brute_force_reshuffling():
    """Two-multinomial shortcut vs re-drawing every game's impostor position (loop over reps)."""
    data = make_logit_games(n_exp=40, games_per_exp=50, seed=9, pos_lor=(0, 0.1, 0.15, -0.2))
    cfg = fast_config(permutation_reps=2000)
    r = TABLES["speaking_randomization"](data, cfg).set_index(["scope", "contrast"])
    y = (data.games["winner"] == "impostor").to_numpy()
    pos = data.games["impostor_speaking_position"].to_numpy()
    rng = np.random.default_rng(5)

    def stat(pp):
        p = np.array([y[pp == j].mean() for j in range(4)])
        return 100 * (p[3] - p[0]), 100 * (p[2:].mean() - p.mean())

    obs = stat(pos)
    null = np.array([stat(rng.integers(0, 4, len(y))) for _ in range(2000)])
    for j, key in enumerate([("ALL", "pos3_vs_pos0"), ("ALL", "mid_vs_rand")]):
        p_brute = (1 + (np.abs(null[:, j]) >= abs(obs[j]) - 1e-12).sum()) / 2001
        assert r.loc[key, "observed_pp"] == pytest.approx(obs[j])
        assert r.loc[key, "p"] == pytest.approx(p_brute, abs=0.035)


def test_position_without_a_win_gives_undefined_log_or_quietly():
    """Tiny runs (the README demo): a position where the impostor never won has infinite log
    odds; the log OR is reported as undefined (NaN), not +-inf, and numpy warns nothing."""
    import warnings

    data = make_logit_games(n_exp=4, games_per_exp=20, seed=3)
    g = data.games
    g.loc[g["impostor_speaking_position"] == 0, "winner"] = "majority"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = TABLES["speaking_randomization"](data, fast_config(permutation_reps=200)).set_index(["scope", "contrast"])
    for k in (1, 2, 3):
        row = r.loc[("ALL", f"pos{k}_vs_pos0")]
        assert math.isnan(row["log_or"]) and math.isnan(row["p_log_or"])
        assert np.isfinite(row["observed_pp"]) and 0 < row["p"] <= 1  # the difference in pp is still tested


def test_bh_family_uses_the_randomisation_p():
    data, cfg = shared_ballot(), fast_config()
    s = TABLES["speaking_itt"](data, cfg)
    s = s[s["mode"] != "ALL"].dropna(subset=["p"])
    assert len(s) > 5
    mc = TABLES["multiple_comparisons"](data, cfg)
    fam = mc[mc["family"] == "speaking_itt"].set_index("hypothesis")["p"]
    want = pd.Series(s["p_randomization"].to_numpy(), index=s["mode"] + "/" + s["difficulty"])
    pd.testing.assert_series_equal(fam.sort_index(), want.sort_index(), check_names=False)


def test_speaking_glm_is_cr2_with_small_sample_t(pos_effect):
    """issue 39: CR2 by experiment with t on Bell-McCaffrey df (CR1 / normal z covered 90% at 120 x 40);
    the paper's CR1 / normal fit under paper_methods. Same ORs, CR2 SEs are the larger."""
    glm = TABLES["speaking_glm"](pos_effect, fast_config()).set_index("term")
    paper = TABLES["speaking_glm"](pos_effect, fast_config(paper_methods=True)).set_index("term")
    assert (glm["method"] == "logit, CR2 by experiment, t(Bell-McCaffrey df)").all()
    assert paper["method"].str.startswith("paper").all()
    assert np.allclose(glm["or"], paper["or"], rtol=1e-6)
    assert (glm["df"] > 10).all() and (glm["df"] < glm["n_clusters"]).all()
    assert (glm["se"] >= paper["se"] * 0.99).all()


def test_cell_intervals_invert_the_randomisation_test(pos_effect):
    """issue 39: every cell's CI excludes 0 exactly when its randomisation p < alpha."""
    s = TABLES["speaking_itt"](pos_effect, fast_config()).dropna(subset=["p"])
    assert len(s) > 5 and (s["ci_method"] == "inverted speaking-order randomisation test (location shift)").all()
    excludes = (s["ci_low"] > 0) | (s["ci_high"] < 0)
    assert (excludes == (s["p"] < 0.05)).all()
    assert excludes.any() and (~excludes).any()  # both kinds of cell are present, so the check has teeth


def test_inverted_halfwidth_against_a_brute_force_inversion():
    from impostor_bench.analysis.stats.resampling import perm_pvalue
    from impostor_bench.analysis.stats.speaking import inverted_halfwidth

    rng = np.random.default_rng(4)
    null = rng.normal(0, 2.0, 499)
    c = inverted_halfwidth(null, 0.05)
    for est in (-7.0, 0.3, 4.1):  # the set of shifts d with p(est - d) >= alpha is [est - c, est + c]
        grid = np.linspace(est - 10, est + 10, 4001)
        keep = grid[[perm_pvalue(est - d, null[:, None])[0] >= 0.05 for d in grid]]
        assert keep.min() == pytest.approx(est - c, abs=0.006) and keep.max() == pytest.approx(est + c, abs=0.006)
