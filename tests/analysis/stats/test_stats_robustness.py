"""Block bootstrap, permutation tests, cluster-robust GLM and multiple comparisons (sensitivity and
negative controls: test_stats_controls.py), each against an independent computation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from _synth_stats import fast_config, make_ballot_games, make_logit_games, shared_ballot
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats._base import prepared
from impostor_bench.analysis.stats.resampling import bootstrap_weights, hypergeom_within


@pytest.fixture(scope="module")
def clustered():
    return make_logit_games(n_exp=160, games_per_exp=60, seed=3, re_sd=0.5, seat_lor=(0, 0.25, 0, 0),
                            mode_lor={"homogeneous": 0.0, "cross_play": -0.25, "team_aware": 0.0,
                                      "team_blind": 0.1}, seats="per_experiment")


def test_bootstrap_weights_resample_within_cells(clustered):
    prep = prepared(clustered)
    W = bootstrap_weights(clustered, prep, fast_config())
    cells = pd.Series(list(zip(prep.exp_mode, prep.exp_difficulty)))
    for idx in cells.groupby(cells).groups.values():
        assert np.all(W[:, list(idx)].sum(1) == len(idx))


def test_bootstrap_weights_are_small_integers_and_allow_no_replicates(clustered):
    prep = prepared(clustered)
    W = bootstrap_weights(clustered, prep, fast_config(bootstrap_reps=300))
    assert W.dtype == np.uint8 and W.shape == (300, len(prep.exp_names))  # a quarter of float32's memory
    assert W.sum() == 300 * len(prep.exp_names)  # each replicate draws as many experiments as there are
    empty = bootstrap_weights(clustered, prep, fast_config(bootstrap_reps=0))  # --bootstrap-reps 0
    assert empty.shape == (0, len(prep.exp_names))


def test_bootstrap_se_matches_linearised_cluster_variance(clustered):
    """Stratified cluster bootstrap of a ratio: Var = sum_s sum_e (z_e - zbar_s)^2 / N^2, z = w - R n."""
    b = TABLES["bootstrap"](clustered, fast_config(bootstrap_reps=4000, bootstrap="paper")).set_index("quantity")
    g = clustered.games.assign(y=clustered.games["winner"] == "impostor")
    e = g.groupby("experiment_id").agg(w=("y", "sum"), n=("y", "size"), mode=("mode", "first"),
                                       d=("difficulty", "first"))
    R = e["w"].sum() / e["n"].sum()
    e["z"] = e["w"] - R * e["n"]
    var = sum(((s["z"] - s["z"].mean()) ** 2).sum() for _, s in e.groupby(["mode", "d"])) / e["n"].sum() ** 2
    row = b.loc["overall_imp_win_rate"]
    assert row["estimate"] == pytest.approx(R)
    assert row["se"] == pytest.approx(math.sqrt(var), rel=0.1)
    assert row["ci_low"] < R < row["ci_high"]
    # with between-experiment heterogeneity the block CI is wider than the binomial one
    assert row["ci_high"] - row["ci_low"] > 2 * 1.96 * math.sqrt(R * (1 - R) / len(g))


def test_bootstrap_mode_or_ci_covers_truth_and_is_wider_than_wald(clustered):
    b = TABLES["bootstrap"](clustered, fast_config()).set_index("quantity")
    o = TABLES["odds_ratios"](clustered, fast_config(paper_methods=True)).set_index("comparison")  # Wald
    row = b.loc["cross_play_vs_homogeneous_or"]
    assert row["estimate"] == pytest.approx(o.loc["cross_play_vs_homogeneous", "or"])
    assert row["ci_low"] < math.exp(-0.25) < row["ci_high"]
    assert (row["ci_high"] / row["ci_low"]) > (o.loc["cross_play_vs_homogeneous", "ci_high"]
                                               / o.loc["cross_play_vs_homogeneous", "ci_low"])


def test_hypergeometric_permutation_matches_brute_force_shuffles():
    rng = np.random.default_rng(0)
    B = 30
    seats = [rng.integers(0, 4, 24) for _ in range(B)]
    ys = [rng.random(24) < 0.4 for _ in range(B)]
    sizes = np.array([[np.sum(s == k) for k in range(4)] for s in seats])
    wins = np.array([y.sum() for y in ys])
    fast = hypergeom_within(np.random.default_rng(1), sizes, wins, 2000)
    brute = np.zeros((2000, 4))
    for r in range(2000):
        for s, y in zip(seats, ys):
            ps = rng.permutation(s)
            brute[r] += [y[ps == k].sum() for k in range(4)]
    assert fast.mean(0) == pytest.approx(brute.mean(0), rel=0.01)
    assert fast.std(0) == pytest.approx(brute.std(0), rel=0.08)
    assert np.all(fast.sum(1) == wins.sum())


def test_permutation_tests_detect_seat_and_mode_effects(clustered):
    p = TABLES["permutation"](clustered, fast_config(permutation_reps=1000)).set_index("contrast")
    g = clustered.games.assign(y=clustered.games["winner"] == "impostor")
    rate = g.groupby("impostor_seat")["y"].mean()
    assert p.loc["seat1_vs_seat0", "observed"] == pytest.approx(rate[1] - rate[0])
    assert p.loc["seat1_vs_seat0", "p"] < 0.05
    assert p.loc["seat2_vs_seat0", "p"] > 0.01
    assert "cross_play_vs_homogeneous" not in p.index  # game-level mode labels: paper_methods only
    paper = TABLES["permutation"](clustered, fast_config(permutation_reps=1000, paper_methods=True))
    paper = paper.set_index("contrast")
    assert paper.loc["cross_play_vs_homogeneous", "p"] < 0.05
    # the experiment-level permutation honours the clustering, so it is less extreme
    assert p.loc["cross_play_vs_homogeneous_experiment_level", "p"] >= paper.loc["cross_play_vs_homogeneous", "p"]
    assert set(p["reps"]) == {1000}


def test_seat_permutation_refused_when_seats_shared_across_experiments():
    old = Analysis(make_logit_games(n_exp=40, games_per_exp=20, seed=3))  # game i has seat i mod 4 everywhere
    p = TABLES["permutation"](old, fast_config(permutation_reps=200))
    assert not p["contrast"].str.startswith("seat").any()
    assert any("seat contrasts not computed: impostor seat shared with the word pairs" in n for n in old.notes)


def manual_cluster_se(y, X, groups):
    res = sm.Logit(y, X).fit(disp=0)
    beta = res.params
    pr = 1 / (1 + np.exp(-X @ beta))
    bread = np.linalg.inv((X * (pr * (1 - pr))[:, None]).T @ X)
    scores = X * (y - pr)[:, None]
    G = pd.DataFrame(scores).groupby(groups).sum().to_numpy()
    meat = G.T @ G
    n, k, g = len(y), X.shape[1], len(np.unique(groups))
    cov = (g / (g - 1)) * ((n - 1) / (n - k)) * bread @ meat @ bread
    return beta, np.sqrt(np.diag(cov))


def test_cluster_robust_se_matches_manual_sandwich(clustered):
    """paper_methods: CR1 by experiment and by pair_id, as the paper; default: CR2 by experiment only."""
    c = TABLES["cluster_robust"](clustered, fast_config(paper_methods=True))
    g = clustered.games
    y = (g["winner"] == "impostor").to_numpy(float)
    d = pd.get_dummies(g[["difficulty", "mode"]], drop_first=False).astype(float)
    cols = [c_ for c_ in d.columns if c_ not in ("difficulty_easy", "mode_homogeneous")]
    X = np.column_stack([np.ones(len(g)), g["impostor_seat"].to_numpy(float), d[cols].to_numpy()])
    for cname, groups in (("experiment_id", g["experiment_id"]), ("pair_id", g["pair_id"])):
        beta, se = manual_cluster_se(y, X, groups.to_numpy())
        row = c[(c["cluster"] == cname) & (c["term"] == "seat_index")].iloc[0]
        assert row["coef"] == pytest.approx(beta[1], rel=1e-6)
        assert row["se"] == pytest.approx(se[1], rel=1e-6)
    d2 = TABLES["cluster_robust"](clustered, fast_config())
    assert set(d2["cluster"]) == {"experiment_id"}
    row = d2[d2["term"] == "seat_index"].iloc[0]
    assert row["coef"] == pytest.approx(beta[1], rel=1e-6)
    assert row["method"] == "logit, CR2 by experiment, t(Bell-McCaffrey df)" and row["n_clusters"] == 160


def test_cluster_robust_difficulty_terms_cluster_two_way_by_experiment_and_word_pair(clustered):
    """Issue 39 A.4: the difficulty terms printed "not computed: games lack pair_id" at every size even when
    the games had pair_id. Now the same logit's difficulty SEs come from statsmodels' two-way cluster-robust
    covariance by experiment and pair (computed here independently); without pair_id they are refused."""
    d = TABLES["cluster_robust"](clustered, fast_config())
    diff = d[d["term"].str.startswith("difficulty:")].set_index("term")
    assert len(diff) >= 1 and diff["p"].notna().all() and (diff["ci_high"] > diff["ci_low"]).all()
    g = clustered.games
    y = (g["winner"] == "impostor").to_numpy(float)
    dm = pd.get_dummies(g[["impostor_model", "difficulty", "mode"]].astype(str), drop_first=True, dtype=float)
    X = np.column_stack([np.ones(len(g)), g["impostor_seat"].to_numpy(float), dm.to_numpy()])
    groups = np.column_stack([pd.factorize(g["experiment_id"])[0], pd.factorize(g["pair_id"])[0]])
    res = sm.GLM(y, X, family=sm.families.Binomial()).fit(cov_type="cluster", cov_kwds={"groups": groups})
    for t, row in diff.iterrows():
        j = 2 + list(dm.columns).index(f"difficulty_{t.split(':', 1)[1]}")
        assert row["coef"] == pytest.approx(res.params[j], rel=1e-6)
        assert row["se"] == pytest.approx(res.bse[j], rel=1e-6)
        assert "two-way cluster-robust by experiment and word pair" in row["method"]
    no_pairs = Analysis(type(clustered)(clustered.games.drop(columns="pair_id"), clustered.players), fast_config())
    d2 = TABLES["cluster_robust"](no_pairs, fast_config())
    d2 = d2[d2["term"].str.startswith("difficulty:")]
    assert d2["p"].isna().all() and d2["method"].str.contains("games lack pair_id").all()


def bh(p):
    p = np.asarray(p, float)
    m = len(p)
    order = np.argsort(p)
    adj = np.minimum.accumulate((p[order] * m / np.arange(1, m + 1))[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adj, 1)
    return out


def holm(p):
    p = np.asarray(p, float)
    m = len(p)
    order = np.argsort(p)
    adj = np.maximum.accumulate(p[order] * (m - np.arange(m)))
    out = np.empty(m)
    out[order] = np.minimum(adj, 1)
    return out


def test_multiple_comparisons_against_hand_procedures():
    data = shared_ballot()
    mc = TABLES["multiple_comparisons"](data, fast_config())
    assert {"primary", "permutation", "speaking_itt", "opponent_baseline"} <= set(mc["family"])
    for _fam, f in mc.groupby("family"):
        np.testing.assert_allclose(f["p_bh"], bh(f["p"]), rtol=1e-10)
        np.testing.assert_allclose(f["p_holm"], holm(f["p"]), rtol=1e-10)
        np.testing.assert_allclose(f["p_bonferroni"], np.minimum(f["p"] * len(f), 1), rtol=1e-10)
    prim = mc[mc["family"] == "primary"]
    c, o = TABLES["chi2"](data, fast_config()), TABLES["odds_ratios"](data, fast_config())
    assert len(prim) == c["p"].notna().sum() + o["p"].notna().sum()
    ob = TABLES["opponent_baseline"](data, fast_config()).dropna(subset=["p"])
    fam = mc[mc["family"] == "opponent_baseline"]
    np.testing.assert_allclose(np.sort(fam["p_bh"]), np.sort(ob["q"]), rtol=1e-10)


def test_each_contrast_counted_once_per_family():
    """The game-level and the experiment-level permutation test of one mode contrast are two tests of
    one hypothesis: the family keeps the experiment-level one (mode is assigned per experiment)."""
    data = shared_ballot()
    cfg = fast_config()
    mc = TABLES["multiple_comparisons"](data, cfg)
    pm = TABLES["permutation"](data, cfg)
    assert set(pm["level"]) == {"experiment"}  # game-level mode labels only with paper_methods
    assert {"game", "experiment"} <= set(TABLES["permutation"](data, fast_config(paper_methods=True))["level"])
    fam = mc[mc["family"] == "permutation"].assign(
        hypothesis=lambda f: f["hypothesis"].str.removeprefix("contrast:")).set_index("hypothesis")
    kept = pm[pm["level"] != "game"].set_index("contrast")
    assert sorted(fam.index) == sorted(kept.index)
    np.testing.assert_allclose(fam.loc[kept.index, "p"], kept["p"])
    contrast = fam.index.str.removesuffix("_experiment_level")
    assert not contrast.duplicated().any()
    assert (fam["family_size"] == len(kept)).all()
    for _, f in mc.groupby("family"):
        assert not f["hypothesis"].duplicated().any()


def test_multiple_comparisons_skips_a_family_whose_table_is_empty(monkeypatch):
    """An empty source table (e.g. opponent_baseline without a players table) drops its family;
    the other families are adjusted as before (it raised KeyError 'p' under strict=True)."""
    import impostor_bench.analysis.stats.multiple as multiple
    from impostor_bench.analysis.stats._base import REGISTRY

    data = shared_ballot()
    full = TABLES["multiple_comparisons"](data, fast_config())
    def empty(data, config):
        return pd.DataFrame()

    empty.spec = REGISTRY["opponent_baseline"].spec  # type: ignore[attr-defined] - its declaration (issue 41)
    monkeypatch.setitem(REGISTRY, "opponent_baseline", empty)
    mc = multiple.multiple_comparisons(make_ballot_games(n_models=5, games_per_exp=8, seed=0),
                                       fast_config())  # fresh data: tables are memoised on it
    assert "opponent_baseline" not in set(mc["family"])
    keep = full[full["family"] != "opponent_baseline"].reset_index(drop=True)
    pd.testing.assert_frame_equal(mc.reset_index(drop=True), keep)
