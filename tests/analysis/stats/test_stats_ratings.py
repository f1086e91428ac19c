"""Skill ratings (analysis/stats/ratings.py): planted skills recovered at the paper's size,
the fit equal to an independent game-level statsmodels fit, the score bootstrap equal to the
cluster-robust sandwich and to full refits, CI coverage, and the degenerate mode mixes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy.stats import spearmanr

from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.sim.simulate import SimModel, simulate_games
from impostor_bench.analysis.stats import TABLES, StatsConfig
from impostor_bench.analysis.stats._base import prepared
from impostor_bench.analysis.stats.ratings import fit_ratings, replicate_coefs

NAMES = [f"m{i}" for i in range(9)]
_DET = np.linspace(0.4, 0.8, 9)[np.random.default_rng(3).permutation(9)]  # detection unrelated to impostor skill
_ODDS = np.exp(np.linspace(-0.6, 0.6, 9))
MODELS = [SimModel(n, det=float(d), odds=float(o), self_decl=0.2) for n, d, o in zip(NAMES, _DET, _ODDS)]
# the simulator's truth in the rating's scale: a = log odds (centred); d = -log(opponent OR per 10pp) * 10 * det (centred)
TRUE = {"impostor": np.log(_ODDS) - np.log(_ODDS).mean(), "majority": -np.log(0.8) * 10 * (_DET - _DET.mean())}


def _sim(n_exp, games, seed, **kw):
    g, p, m = simulate_games(n_exp, games, models=MODELS, size_or_per_10x=1.0, seed=seed, **kw)
    return Analysis(AnalysisData(games=g, players=p, models=m))


def _by_model(r: pd.DataFrame, role: str) -> pd.DataFrame:
    return r[r["role"] == role].set_index("model").loc[NAMES]


@pytest.fixture(scope="module")
def paper_sized():
    """9 models x 5 modes x 4 difficulties = 756 experiments x 120 games (90,720 games)."""
    data = _sim(756, 120, seed=1, experiment_effect_sd=0.2)
    return data, TABLES["ratings"](data, StatsConfig(strict=True, bootstrap_reps=2000))


def test_planted_skills_recovered_at_paper_size(paper_sized):
    _, r = paper_sized
    for role, truth in TRUE.items():
        x = _by_model(r, role)
        assert spearmanr(x["skill"], truth).statistic >= 0.9
        assert np.abs(x["skill"] - truth).max() < 0.08  # levels (sum-to-zero scale)
        gaps, true_gaps = np.subtract.outer(x["skill"].to_numpy(), x["skill"].to_numpy()), np.subtract.outer(truth, truth)
        assert np.abs(gaps - true_gaps).max() < 0.15  # every pairwise gap
        assert (x["ci_low"] < x["skill"]).all() and (x["skill"] < x["ci_high"]).all()
        assert sorted(x["rank"]) == list(range(1, 10))
        assert x["skill"].sum() == pytest.approx(0, abs=1e-9)  # the identifying constraint
    assert set(r["bootstrap"]) == {"design"} and (r["ci_low"] == r["ci_low_design"]).all()
    assert (_by_model(r, "impostor")["n_games"] == 756 * 120 / 9).all()


def _game_level_design(data: AnalysisData):
    """The rating design built independently from the tables with pandas (effect coding by hand)."""
    g, p = data.games, data.players
    maj = p[p["role"] == "majority"]
    share = pd.crosstab(maj["game_id"], maj["model"], normalize="index").reindex(index=g["game_id"], columns=NAMES,
                                                                                   fill_value=0)
    imp = pd.get_dummies(g["impostor_model"]).reindex(columns=NAMES, fill_value=0).astype(float).to_numpy()
    eff = lambda M: M[:, :-1] - M[:, -1:]  # sum-to-zero coding: last level = minus the others
    fe = pd.get_dummies(g[["mode", "difficulty"]].assign(seat=g["impostor_seat"].astype(str)), drop_first=True)
    X = np.column_stack([np.ones(len(g)), eff(imp), -eff(share.to_numpy()), fe.astype(float).to_numpy()])
    return X, (g["winner"] == "impostor").to_numpy(float), g["experiment_id"].to_numpy()


def test_fit_and_score_bootstrap_match_statsmodels_game_level():
    data = _sim(252, 40, seed=4, experiment_effect_sd=0.4)
    cfg = StatsConfig(strict=True, bootstrap_reps=4000)
    r = TABLES["ratings"](data, cfg)
    X, y, exp = _game_level_design(data)
    res = sm.GLM(y, X, family=sm.families.Binomial()).fit(
        cov_type="cluster", cov_kwds={"groups": pd.factorize(exp)[0], "use_correction": False})
    C = np.vstack([np.eye(8), -np.ones((1, 8))])
    for role, sl in (("impostor", slice(1, 9)), ("majority", slice(9, 17))):
        x = _by_model(r, role)
        np.testing.assert_allclose(x["skill"], C @ res.params[sl], atol=1e-6)
        V = C @ res.cov_params()[sl, sl] @ C.T
        # Var* of the wild score bootstrap = the cluster sandwich, up to Monte-Carlo error
        np.testing.assert_allclose(x["se_design"], np.sqrt(np.diag(V)), rtol=0.06)


def test_one_step_replicates_track_full_refits():
    """The score bootstrap's replicate = one Newton step; a full weighted refit lands close."""
    data = _sim(252, 30, seed=6)
    cfg = StatsConfig(strict=True, bootstrap_reps=40)
    prep = prepared(data, need_players=True)
    fit = fit_ratings(data, prep)
    one_step = replicate_coefs(data, fit, cfg, "paper")
    from impostor_bench.analysis.stats.resampling import bootstrap_weights

    W = bootstrap_weights(data, prep, cfg)
    full = np.array([sm.GLM(prep.y, fit.X, family=sm.families.Binomial(), freq_weights=W[r, prep.exp_code])
                     .fit().params for r in range(cfg.bootstrap_reps)])
    d_one, d_full = (one_step - fit.coef)[:, 1:17], (full - fit.coef)[:, 1:17]
    assert np.corrcoef(d_one.ravel(), d_full.ravel())[0, 1] > 0.93  # replicate by replicate
    assert 0.9 < np.sqrt((d_one ** 2).mean() / (d_full ** 2).mean()) < 1.1  # the spread the CIs come from


@pytest.mark.slow
def test_ci_coverage_small_simulation():
    """Reduced coverage simulation (docs/analysis.md gives the 100-run figures)."""
    hits = {"design": [], "paper": []}
    for s in range(12):
        data = _sim(756, 10, seed=100 + s, design_seed=5, experiment_effect_sd=0.3)
        r = TABLES["ratings"](data, StatsConfig(strict=True, bootstrap_reps=1000, seed=s))
        for role, truth in TRUE.items():
            x = _by_model(r, role)
            for b in hits:
                hits[b] += list((x[f"ci_low_{b}"] <= truth) & (truth <= x[f"ci_high_{b}"]))
    for b, h in hits.items():
        assert 0.88 <= np.mean(h) <= 0.995, (b, np.mean(h))


def test_homogeneous_only_gives_net_skill_with_note():
    data = _sim(36, 240, seed=2, modes=["homogeneous"])
    r = TABLES["ratings"](data, StatsConfig(strict=True, bootstrap_reps=200))
    assert set(r["role"]) == {"net"} and len(r) == 9
    assert any("not separately identified" in n for n in data.notes)
    truth = TRUE["impostor"] - TRUE["majority"]
    x = _by_model(r, "net")
    assert spearmanr(x["skill"], truth - truth.mean()).statistic > 0.8
    assert ((x["ci_low"] <= truth - truth.mean()) & (truth - truth.mean() <= x["ci_high"])).sum() >= 7


def test_one_model_gives_empty_table_with_reason():
    g, p, m = simulate_games(4, 20, models=MODELS[:1], modes=["homogeneous"], seed=1)
    data = Analysis(AnalysisData(games=g, players=p, models=m))
    r = TABLES["ratings"](data, StatsConfig(bootstrap_reps=50))
    assert len(r) == 0 and list(r.columns[:7]) == ["model", "role", "skill", "ci_low", "ci_high", "rank", "n_games"]
    assert any(n.startswith("ratings: not computed: fewer than two models") for n in data.notes)


def _penalised_optimum(wins, n, X):
    """Firth's estimate by direct maximisation of l(b) + 0.5 log det I(b) (scipy; an independent
    algorithm from the pseudo-data IRLS under test)."""
    from scipy.optimize import minimize

    def negpen(b):
        eta = X @ b
        ll = (wins * eta - n * np.logaddexp(0, eta)).sum()
        p = 1 / (1 + np.exp(-eta))
        info = X.T @ (X * (n * p * (1 - p))[:, None])
        return -(ll + 0.5 * np.linalg.slogdet(info)[1])

    return minimize(negpen, np.zeros(X.shape[1]), method="BFGS", options={"gtol": 1e-9}).x


def test_firth_matches_direct_penalised_likelihood_with_and_without_separation():
    from impostor_bench.analysis.stats.ratings import firth_logit

    X = np.column_stack([np.ones(6), [0, 0, 1, 1, 2, 2], [0, 1, 0, 1, 0, 1]]).astype(float)
    n = np.array([5, 7, 6, 4, 8, 5], float)
    for wins in (np.array([1, 3, 2, 3, 5, 4], float), np.array([0, 0, 2, 3, 8, 5], float)):  # second: separated
        coef, cov, p = firth_logit(wins, n, X)
        assert np.all(np.isfinite(coef)) and np.all((p > 0) & (p < 1))
        assert coef == pytest.approx(_penalised_optimum(wins, n, X), abs=1e-4)


def test_separation_gives_firth_ratings_instead_of_an_empty_table():
    """Issue 26: a small sweep where one model never wins as impostor used to leave the table empty."""
    g, p, m = simulate_games(24, 8, models=MODELS[:3], modes=["homogeneous", "cross_play"], seed=4,
                             size_or_per_10x=1.0)
    g = g.copy()
    g.loc[g["impostor_model"] == "m0", "winner"] = "majority"  # m0 never wins as the impostor
    data = Analysis(AnalysisData(games=g, players=p, models=m))
    r = TABLES["ratings"](data, StatsConfig(strict=True, bootstrap_reps=200))
    imp = r[r["role"] == "impostor"].set_index("model")
    assert len(imp) == 3 and np.isfinite(imp["skill"]).all()
    assert imp["skill"].idxmin() == "m0" and imp.loc["m0", "rank"] == 3
    assert (imp["ci_low"] <= imp["skill"]).all() and (imp["skill"] <= imp["ci_high"]).all()
    assert imp["method"].str.contains("Firth").all()
    assert any("Firth" in n for n in data.notes)
