"""Skill ratings: each model's impostor skill and majority (detection) skill, with CIs.

Model (a Bradley-Terry / logistic model of the game outcome; docs/analysis.md "Ratings")::

    logit P(impostor wins game g) = b0 + a[impostor model]
                                    - mean over the majority seats s of d[model of s]
                                    + mode[g] + difficulty[g] + seat[impostor seat]

so every game of every mode contributes: a homogeneous game pits a model against itself,
a cross-play game one model's impostor against another's majority, a team game a model
against a 1:2 or 2:1 mix. ``a`` (impostor skill) and ``d`` (detection skill) are log-odds:
a model with ``a = +0.3`` wins ``exp(0.3)`` times the impostor-win odds of the average
impostor facing the same opponents; ``d = +0.3`` cuts the impostor's odds by ``exp(-0.3)``
against an all-such majority. Identification: sum-to-zero (effect) coding, ``sum a = 0``
and ``sum d = 0`` over the rated models, so each skill is relative to the average model
and the intercept carries the overall level. The impostor seat enters as a nuisance term
(the schedule balances it, but a logit's coefficients shift when a real effect is left
out). With only homogeneous games ``a`` and ``d`` are not separately identified; the
table then gives one ``net`` skill ``a - d`` per model (role ``net``: the model's self-play
impostor log-odds relative to the average model) and says so.

Fit: statsmodels' binomial GLM on the games grouped by their covariate pattern (the same
likelihood as the game-level logit). CIs: the experiment-level bootstrap of the report
(``StatsConfig.bootstrap``), as a score (one-step) bootstrap: replicate ``r`` moves the
estimate by ``H^-1 sum_e w_re s_e``, ``s_e`` experiment e's score contribution
``X_e'(y_e - p_e)`` and ``H`` the Fisher information; ``w_re`` the design bootstrap's
Rademacher multipliers (``design_boot.multipliers``), or the paper bootstrap's resampling
counts minus one (``resampling.bootstrap_weights``). One matrix product for all replicates
(Kline & Santos 2012); its variance is the cluster-robust sandwich by experiment.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import statsmodels.api as sm

from impostor_bench.analysis.stats._base import (DIFFICULTIES, MODES, Prepared, StatsUnavailable, design_codes, majority_models,
                                  memo, note, ordered_levels, prepared, table)
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats.design_boot import t_halfwidth
from impostor_bench.analysis.stats.resampling import exp_sums, percentile_ci
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig

COLUMNS = ["model", "role", "skill", "ci_low", "ci_high", "rank", "n_games"]
ROLES = ("impostor", "majority")


def _effect_coding(codes: np.ndarray, k: int) -> np.ndarray:
    """(n, k-1) sum-to-zero coding of integer codes 0..k-1 (the last level is minus the sum)."""
    out = np.zeros((len(codes), k - 1))
    rows = codes < k - 1
    out[np.nonzero(rows)[0], codes[rows]] = 1.0
    out[codes == k - 1] = -1.0
    return out


def _contrast(k: int) -> np.ndarray:
    """(k, k-1) map from the k-1 free parameters to the k sum-to-zero skills."""
    return np.vstack([np.eye(k - 1), -np.ones((1, k - 1))])


def firth_logit(wins: np.ndarray, n: np.ndarray, X: np.ndarray, max_iter: int = 200, tol: float = 1e-8):
    """Firth's bias-reduced logit (Jeffreys-prior penalty) on grouped binomial rows, by its
    pseudo-data form: each IRLS step fits statsmodels' binomial GLM to ``wins + h/2`` successes
    of ``n + h`` trials, h the rows' leverages at the current fit (Firth 1993; Heinze &
    Schemper 2002). Finite estimates under separation, where the plain MLE diverges (a model
    that always or never wins in a small sweep). statsmodels has no Firth option; this is the
    standard algorithm, checked against separation-free data in the tests. Returns
    (coef, inverse Fisher information, fitted probabilities)."""
    coef = np.zeros(X.shape[1])
    for _ in range(max_iter):
        p = 1 / (1 + np.exp(-np.clip(X @ coef, -30, 30)))
        w = n * p * (1 - p)
        xw = X * np.sqrt(w)[:, None]
        h = np.einsum("ij,jk,ik->i", xw, np.linalg.pinv(xw.T @ xw), xw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = sm.GLM(np.column_stack([wins + h / 2, n - wins + h / 2]), X, family=sm.families.Binomial()).fit(
                start_params=coef)
        new = np.asarray(res.params)
        done = np.max(np.abs(new - coef)) < tol
        coef = new
        if done:
            break
    p = 1 / (1 + np.exp(-np.clip(X @ coef, -30, 30)))
    info = X.T @ (X * (n * p * (1 - p))[:, None])
    return coef, np.linalg.pinv(info), p


class RatingFit:
    """The fitted rating model: design, estimates, Fisher information and per-game residuals."""

    # (M,) games each model played as impostor / with at least one majority seat (set by fit_ratings)
    n_imp: np.ndarray
    n_maj: np.ndarray

    def __init__(self, prep, keep: np.ndarray, models: list[str], X: np.ndarray, names: list[str], net: bool,
                 inv: np.ndarray):
        self.prep, self.keep, self.models, self.X, self.names, self.net = prep, keep, models, X, names, net
        y = prep.y[keep].astype(float)
        first = np.unique(inv, return_index=True)[1]
        uniq = X[first]
        wins = np.bincount(inv, weights=y, minlength=len(uniq))
        n = np.bincount(inv, minlength=len(uniq)).astype(float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = sm.GLM(np.column_stack([wins, n - wins]), uniq, family=sm.families.Binomial()).fit()
        self.coef = np.asarray(res.params)
        self.cov = np.asarray(res.cov_params())  # H^-1 (Fisher information of the grouped = game-level likelihood)
        fitted = np.asarray(res.predict())
        self.firth = not np.all(np.isfinite(self.coef)) or bool(np.any((fitted < 1e-6) | (fitted > 1 - 1e-6)))
        if self.firth:  # (quasi-)separation: a model that always or never wins
            self.coef, self.cov, fitted = firth_logit(wins, n, uniq)
        self.p = fitted[inv]
        self.resid = y - self.p

    def block(self, role: str) -> np.ndarray:
        """(K,) -> (M,) skill map of one role: the rows of ``contrast @ selector``."""
        M = len(self.models)
        sel = np.zeros((M - 1, len(self.coef)))
        start = 1 + (0 if role in ("impostor", "net") else M - 1)
        sel[:, start:start + M - 1] = np.eye(M - 1)
        return _contrast(M) @ sel

    def scores(self) -> np.ndarray:
        """(E, K) per-experiment score contributions X_e'(y_e - p_e) (sum to ~0 at the MLE)."""
        full = np.zeros((self.prep.n, self.X.shape[1]))
        full[self.keep] = self.X * self.resid[:, None]
        return exp_sums(self.prep, full)


def _majority_mix(prep: Prepared, models: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(N, M) share of each model among a game's majority seats with a known model; (N,) seats counted."""
    maj = majority_models(prep)
    counts = np.column_stack([(maj == m).sum(1) for m in models]).astype(float)
    n_known = counts.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return counts / n_known[:, None], n_known


def _nuisance(prep, keep) -> tuple[list[np.ndarray], list[str]]:
    blocks, names = [], []
    for vals, pref, tag in ((prep.mode[keep], MODES, "mode"), (prep.difficulty[keep], DIFFICULTIES, "difficulty"),
                            (prep.imp_seat[keep].astype(object), [0, 1, 2, 3], "seat")):
        lv = ordered_levels(vals, pref)
        if len(lv) > 1:
            mat, nm = design_codes(vals, levels=lv)
            blocks.append(mat)
            names += [f"{tag}:{x}" for x in nm]
    return blocks, names


def fit_ratings(data, prep) -> RatingFit:
    """The rating model on every game whose players are known (memoised per data)."""

    def make():
        models = sorted({m for m in prep.imp_model if m is not None}
                        | {m for m in prep.model.ravel() if m is not None}, key=str)
        if len(models) < 2:
            raise StatsUnavailable("fewer than two models: nothing to rate")
        idx = {m: i for i, m in enumerate(models)}
        mix, n_known = _majority_mix(prep, models)
        keep = np.array([m is not None for m in prep.imp_model]) & (n_known > 0)
        if (~keep).any():
            note(data, f"ratings: {int((~keep).sum())} games without a known impostor model or majority model "
                       "are left out")
        imp_code = np.array([idx[m] for m in prep.imp_model[keep]])
        A = _effect_coding(imp_code, len(models))
        D = mix[keep] @ _contrast(len(models))
        blocks, nuis = _nuisance(prep, keep)
        # covariate pattern of each game (hash grouping: np.unique(X, axis=0) is slow on 90k rows)
        pattern = pd.DataFrame({"imp": imp_code, "mode": prep.mode[keep], "diff": prep.difficulty[keep],
                                "seat": prep.imp_seat[keep], **{f"m{j}": mix[keep, j] for j in range(len(models))}})
        inv = pattern.groupby(list(pattern.columns), sort=True, dropna=False).ngroup().to_numpy()
        first = np.unique(inv, return_index=True)[1]
        ones = np.ones((int(keep.sum()), 1))
        free = [f"{m}" for m in models[:-1]]
        X = np.hstack([ones, A, -D, *blocks])
        names = ["const"] + [f"imp:{m}" for m in free] + [f"det:{m}" for m in free] + nuis
        net = np.linalg.matrix_rank(X[first]) < X.shape[1]
        if net:  # e.g. homogeneous games only: a game's model plays both sides, so only a - d enters
            X = np.hstack([ones, A, *blocks])
            names = ["const"] + [f"net:{m}" for m in free] + nuis
            if np.linalg.matrix_rank(X[first]) < X.shape[1]:
                raise StatsUnavailable("the design is rank deficient (a model never plays or the factors are "
                                       "collinear)")
            note(data, "ratings: impostor and majority skills are not separately identified (no game pits one "
                       "model's impostor against another's majority: no cross_play or team games); one net skill "
                       "(impostor minus detection) per model is given, role 'net'")
        fit = RatingFit(prep, keep, models, X, names, net, inv)
        if fit.firth:
            note(data, "ratings: a model always or never wins in some role (separation): the skills are Firth's "
                       "bias-reduced (penalised) estimates, finite where plain maximum likelihood diverges")
        fit.n_imp = np.bincount(imp_code, minlength=len(models))
        fit.n_maj = (mix[keep] > 0).sum(0)
        return fit

    fit = memo(data, ("ratings_fit",), lambda: _try(make), per_table=True)  # only the ratings table fits it
    if isinstance(fit, StatsUnavailable):
        raise fit
    return fit


def _try(fn):
    try:
        return fn()
    except StatsUnavailable as e:
        return e


def replicate_coefs(data, fit: RatingFit, config, method: str) -> np.ndarray:
    """(R, K) bootstrap replicates of the coefficients (one-step score bootstrap, see module doc)."""
    if method == "design":
        from impostor_bench.analysis.stats.design_boot import multipliers

        w, shift = multipliers(data, fit.prep, config), 0.0
    elif method == "paper":
        from impostor_bench.analysis.stats.resampling import bootstrap_weights

        w, shift = bootstrap_weights(data, fit.prep, config), -1.0
    else:
        raise ValueError(f"unknown bootstrap {method!r}; use design or paper")
    from impostor_bench.analysis.stats.resampling import replicate_matmul

    return fit.coef[None, :] + replicate_matmul(w, fit.scores(), shift=shift) @ fit.cov  # no float64 copy of w


#: Fewest experiments beyond the fit's parameters for a design interval of the ratings.
MIN_DF = 5


def _design_interval(skill: np.ndarray, sd: np.ndarray, n_exp: int, k: int, alpha: float):
    """skill +- t(G-K) sqrt(G/(G-K)) SD*: the score bootstrap's variance is the CR0 sandwich by
    experiment, whose residuals a K-parameter fit shrinks by about (G-K)/G; the percentile
    interval covered 90% at 120 experiments x 40 games. NaN when G - K < MIN_DF."""
    if n_exp - k < MIN_DF:
        return np.full(len(skill), np.nan), np.full(len(skill), np.nan)
    half = t_halfwidth(sd, n_exp, alpha, n_params=k)
    return skill - half, skill + half


def _n_games(fit: RatingFit, role: str) -> np.ndarray:
    """Games each model played in the role (majority: with at least one majority seat)."""
    return {"impostor": fit.n_imp, "majority": fit.n_maj, "net": fit.n_imp}[role]


@table("ratings", columns=COLUMNS,
    title=("Skill ratings: impostor and detection skill per model (log-odds, sum to zero per role) from a "
           "logistic model of every game, CIs from the bootstrap named in `bootstrap` (docs/analysis.md)"),
    section="beyond",
    inference=(
        infer("skill", ("model", "role"), "skill", ("ci_low", "ci_high"), method="method"),
    ),
    figures={"ratings": "beyond"},
)
def ratings(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Impostor and detection skill per model (log-odds, sum-to-zero) with bootstrap CIs."""
    prep = prepared(data, need_players=True)
    fit = fit_ratings(data, prep)
    reps = {m: replicate_coefs(data, fit, config, m) for m in ("design", "paper")}
    rows = []
    for role in (("net",) if fit.net else ROLES):
        L = fit.block(role)
        skill = L @ fit.coef
        se_model = np.sqrt(np.einsum("ij,jk,ik->i", L, fit.cov, L))
        out = pd.DataFrame({"model": fit.models, "role": role, "skill": skill, "n_games": _n_games(fit, role),
                            "se_model": se_model})
        n_exp, k = int(len(np.unique(fit.prep.exp_code[fit.keep]))), fit.X.shape[1]
        for m, R in reps.items():
            sk = R @ L.T
            if m == "design":  # t(G-K) x sqrt(G/(G-K)) x replicate SD: see _design_interval
                lo, hi = _design_interval(skill, sk.std(0, ddof=1), n_exp, k, config.alpha)
            else:
                lo, hi = percentile_ci(sk, config.alpha)
            out[f"ci_low_{m}"], out[f"ci_high_{m}"], out[f"se_{m}"] = lo, hi, sk.std(0, ddof=1)
        out["ci_low"], out["ci_high"] = out[f"ci_low_{config.bootstrap}"], out[f"ci_high_{config.bootstrap}"]
        out["rank"] = out["skill"].rank(ascending=False, method="min").astype(int)
        out["bootstrap"] = config.bootstrap
        out["method"] = (("design bootstrap (score, by experiment) SE; sqrt(G/(G-K)) factor, t(G-K)"
                          if n_exp - k >= MIN_DF else f"not computed: {n_exp} experiments for {k} parameters")
                         if config.bootstrap == "design" else "paper bootstrap (score), percentile"
                         ) + ("; Firth-penalised fit (separation)" if fit.firth else "")
        out["reps"] = config.bootstrap_reps
        rows.append(out.sort_values("skill", ascending=False))
    return pd.concat(rows, ignore_index=True)
