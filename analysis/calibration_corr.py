"""Calibration of the cross-model correlation interval (``stats.model_corr``) on the design's real units.

Why a study of its own: r across nine models rests on nine points whose errors are dependent
(models share games and experiments; two quantities of a model share its games), so neither the
i.i.d. Fisher-z interval nor a permutation of model labels holds, and the calibration matrix's
scenarios plant no between-model correlation to cover.

Set-up. ``simulate_games`` builds a design (experiments, schedule, seats, teams) and its games;
the units of two per-model quantities are taken from it as the report takes them: X on teammate
pairs with two counted ballots (as Vote Coord.), Y on team-mode ballots (as Betrayal Rate). Each
unit's value is Bernoulli with ``logit p = a[model] + f[tier, game index] + u[experiment] + w[game]``:
``a`` the models' levels (planted across models with an exact sample correlation ``rho``),
``f`` the word pairs' fixed effects (part of the design), ``u`` and ``w`` the experiment's and
the game's random effects, shared by every model seated there and correlated between X and Y
(``err_corr``). The estimator is ``Wild.mean`` (the report's per-model mean) and the interval
``model_corr.corr_interval`` with fresh multipliers per run.

Truth: the estimator applied to the design's expected outcomes (its pseudo-population): each
unit's E[p] over the random effects (Gauss-Hermite), averaged per model as the estimator
averages units, and r of those across models; never the Monte-Carlo mean of the estimates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.sim.simulate import simulate_games
from impostor_bench.analysis.stats import Prepared, prepared
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.model_corr import Wild, corr_interval, fisher_naive  # Wild: the report's per-model mean
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.team_ballots import ballots_frame, seat_pairs


@dataclass
class Units:
    """The design and the units of the two quantities (frames with gi, model, mode, exp)."""

    data: Analysis
    prep: Prepared
    models: list
    x: pd.DataFrame
    y: pd.DataFrame
    n_games: int
    n_exp: int


def design_units(experiments: int, games: int, seed: int = 0, reps: int = 999) -> Units:
    """The simulated design's teammate-pair (X) and ballot (Y) units."""
    g, p, m = simulate_games(experiments, games, seed=seed)
    data = Analysis(AnalysisData(games=g, players=p, models=m), StatsConfig(seed=seed, bootstrap_reps=reps))
    prep = prepared(data, need_players=True)
    sp = seat_pairs(prep)
    x = sp[sp["mate"].astype(bool) & sp["both_valid"].astype(bool)][["gi", "model", "mode", "exp"]]
    b = ballots_frame(prep)
    y = b[b["voter"].astype(str) != "majority_with_impostor"][["gi", "model", "mode", "exp"]]
    models = sorted(set(x["model"].astype(str)) & set(y["model"].astype(str)))
    return Units(data, prep, models, x.reset_index(drop=True), y.reset_index(drop=True), prep.n, len(prep.exp_names))


def planted_levels(n: int, rho: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two standardised vectors of length n whose sample correlation is exactly ``rho``."""
    a, b = rng.normal(size=n), rng.normal(size=n)
    a = (a - a.mean()) / a.std()
    b = b - b.mean()
    b -= (b @ a) / (a @ a) * a
    b /= b.std()
    return a, rho * a + np.sqrt(1 - rho ** 2) * b


@dataclass(frozen=True)
class Scenario:
    name: str
    rho: float  # planted correlation of the models' logit levels
    base_x: float = 0.45  # mean rate of X (teammate alignment-like)
    base_y: float = 0.15  # mean rate of Y (betrayal-like)
    spread: float = 0.35  # SD of the models' logit levels
    sd_exp: float = 0.3  # experiment effect (logit SD)
    sd_game: float = 0.6  # game effect (logit SD)
    sd_pair: float = 0.3  # word-pair fixed effect (logit SD), drawn once with the design
    err_corr: float = 0.7  # correlation of X's and Y's experiment and game effects
    same_units: bool = False  # Y measured on X's units (two features of one teammate pair)
    sd_unit: float = 0.0  # a unit's own effect (logit SD), shared by its X and Y when same_units


def _expected(eta: np.ndarray, sd: float) -> np.ndarray:
    """E[logistic(eta + N(0, sd^2))] by 40-point Gauss-Hermite quadrature."""
    t, w = np.polynomial.hermite.hermgauss(40)
    return (special.expit(eta[:, None] + np.sqrt(2) * sd * t[None, :]) * w[None, :]).sum(1) / np.sqrt(np.pi)


def run_scenario(u: Units, sc: Scenario, sims: int, seed: int = 0, alpha: float = 0.05) -> pd.DataFrame:
    """One row per simulated run: r, our interval, the i.i.d. Fisher-z interval and the truth."""
    rng = np.random.default_rng([seed, 17])
    G = len(u.models)
    za, zb = planted_levels(G, sc.rho, rng)
    ax = special.logit(sc.base_x) + sc.spread * za
    ay = special.logit(sc.base_y) + sc.spread * zb
    tier = pd.factorize(pd.Series(u.prep.difficulty, dtype=object))[0]
    gidx = u.prep.games.index.to_numpy() % max(1, int(np.bincount(u.prep.exp_code).max()))
    f = rng.normal(0, sc.sd_pair, size=(tier.max() + 1, gidx.max() + 1))[tier, gidx]  # (N,) fixed by the design
    code = {m: i for i, m in enumerate(u.models)}
    parts = {}
    for name, df, a in (("x", u.x, ax), ("y", u.x if sc.same_units else u.y, ay)):
        mi = df["model"].astype(str).map(code).to_numpy()
        keep = ~pd.isna(mi)
        d = df[keep].reset_index(drop=True)
        eta = a[mi[keep].astype(int)] + f[d["gi"].to_numpy()]
        parts[name] = (d, eta)
    truth = {}
    for name, (d, eta) in parts.items():
        ep = _expected(eta, float(np.sqrt(sc.sd_exp ** 2 + sc.sd_game ** 2 + sc.sd_unit ** 2)))
        truth[name] = pd.Series(ep).groupby(d["model"].astype(str).to_numpy()).mean().reindex(u.models).to_numpy()
    r_true = float(np.corrcoef(truth["x"], truth["y"])[0, 1])
    w = Wild(u.data, u.prep, u.data.config, u.models)
    R = w.M.shape[0]
    L = np.linalg.cholesky(np.array([[1.0, sc.err_corr], [sc.err_corr, 1.0]]))
    rows = []
    for s in range(sims):
        ue = rng.normal(size=(u.n_exp, 2)) @ L.T * sc.sd_exp
        wg = rng.normal(size=(u.n_games, 2)) @ L.T * sc.sd_game
        w.M = (rng.integers(0, 2, size=(R, u.n_exp)) * 2 - 1).astype(np.float32)
        est = {}
        vu = rng.normal(0, sc.sd_unit, size=len(parts["x"][0]))  # X's units; Y's own draw unless same_units
        for k, (name, (d, eta)) in enumerate(parts.items()):
            gi = d["gi"].to_numpy()
            v = vu if (k == 0 or sc.same_units) else rng.normal(0, sc.sd_unit, size=len(d))
            p = special.expit(eta + ue[d["exp"].to_numpy(), k] + wg[gi, k] + v)
            est[name] = w.mean(d.assign(v=(rng.random(len(p)) < p).astype(float)), "v", 100)
        c = corr_interval(est["x"], est["y"], alpha)
        b = corr_interval(est["x"], est["y"], alpha, corrected=False)
        nlo, nhi = fisher_naive(c.r, c.n, alpha)
        rows.append({"scenario": sc.name, "sim": s, "r_true": r_true, "r": c.r, "ci_low": c.ci_low,
                     "ci_high": c.ci_high, "naive_low": nlo, "naive_high": nhi,
                     "basic_low": b.ci_low, "basic_high": b.ci_high, "n_models": c.n})
    return pd.DataFrame(rows)


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    """Coverage, bias of r, mean width and mean true r per scenario, ours and the i.i.d. Fisher-z interval's."""
    out = []
    for name, g in runs.groupby("scenario", sort=False):
        ok = g["ci_low"].notna()
        out.append({
            "scenario": name, "sims": len(g), "n_models": int(g["n_models"].median()), "r_true": g["r_true"].mean(),
            "mean_r": g["r"].mean(), "bias_r": (g["r"] - g["r_true"]).mean(),
            "coverage": ((g["ci_low"] <= g["r_true"]) & (g["r_true"] <= g["ci_high"]))[ok].mean(),
            "width": (g["ci_high"] - g["ci_low"])[ok].mean(), "printed": ok.mean(),
            "naive_coverage": ((g["naive_low"] <= g["r_true"]) & (g["r_true"] <= g["naive_high"])).mean(),
            "naive_width": (g["naive_high"] - g["naive_low"]).mean(),
            "basic_coverage": ((g["basic_low"] <= g["r_true"]) & (g["r_true"] <= g["basic_high"])).mean(),
            "basic_width": (g["basic_high"] - g["basic_low"]).mean(),
        })
    return pd.DataFrame(out)
