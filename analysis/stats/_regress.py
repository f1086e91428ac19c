"""Logistic-regression helpers (statsmodels) used by odds, scaling, speaking, recognition.

* ``grouped_logit`` fits a binomial GLM on aggregated (successes, trials) rows. For
  categorical regressors it is the same likelihood as the game-level logit, so the
  Wald estimates and CIs are identical, but it is orders of magnitude faster.
* ``cluster_logit`` fits a game-level logit with cluster-robust (sandwich) standard
  errors; statsmodels' default small-sample factor G/(G-1) * (N-1)/(N-K) is used.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats

from analysis.stats._base import StatsUnavailable


@dataclass
class Fit:
    names: list[str]
    coef: np.ndarray
    se: np.ndarray
    n: int
    n_clusters: int | None = None

    def wald(self, name: str, alpha: float = 0.05, scale: float = 1.0) -> dict:
        """OR of ``scale`` units of ``name`` with its Wald CI and two-sided p."""
        j = self.names.index(name)
        return wald_or(self.coef[j], self.se[j], alpha, scale)


def wald_or(beta: float, se: float, alpha: float = 0.05, scale: float = 1.0) -> dict:
    z = stats.norm.ppf(1 - alpha / 2)
    b, s = beta * scale, se * abs(scale)
    if not (np.isfinite(b) and np.isfinite(s) and s > 0):
        return {"or": np.nan, "ci_low": np.nan, "ci_high": np.nan, "p": np.nan, "coef": b, "se": s}
    return {"or": float(np.exp(b)), "ci_low": float(np.exp(b - z * s)), "ci_high": float(np.exp(b + z * s)),
            "p": float(2 * stats.norm.sf(abs(b / s))), "coef": float(b), "se": float(s)}


def _check_rank(X: np.ndarray, names: list[str], what: str) -> None:
    if np.linalg.matrix_rank(X) < X.shape[1]:
        raise StatsUnavailable(f"{what}: design is rank deficient (collinear terms among {', '.join(names[1:])})")


def grouped_logit(successes, trials, X: np.ndarray, names: list[str], what: str) -> Fit:
    """Binomial GLM on aggregated rows; X must include the intercept column."""
    successes = np.asarray(successes, float)
    trials = np.asarray(trials, float)
    keep = trials > 0
    successes, trials, X = successes[keep], trials[keep], X[keep]
    _check_rank(X, names, what)
    endog = np.column_stack([successes, trials - successes])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sm.GLM(endog, X, family=sm.families.Binomial()).fit()
    coef, se = np.asarray(res.params), np.asarray(res.bse)
    fitted = np.asarray(res.predict())
    if not np.all(np.isfinite(se)) or np.any((fitted < 1e-8) | (fitted > 1 - 1e-8)):
        raise StatsUnavailable(f"{what}: fit did not converge ((quasi-)separation: a cell with all or no wins?)")
    return Fit(names, coef, se, int(trials.sum()))


def cluster_logit(y, X: np.ndarray, names: list[str], groups, what: str, min_clusters: int = 3) -> Fit:
    """Game-level logit with cluster-robust SEs by ``groups``; X includes the intercept."""
    y = np.asarray(y, float)
    groups = np.asarray(groups)
    if groups.dtype.kind in "iu":  # the same codes as np.unique's inverse, by hashing instead of a sort
        g_codes = pd.factorize(groups, sort=True)[0].astype(np.intp)
    else:
        g_codes = np.unique(groups, return_inverse=True)[1]
    n_cl = int(g_codes.max()) + 1 if len(g_codes) else 0
    if n_cl < min_clusters:
        raise StatsUnavailable(f"{what}: only {n_cl} clusters (need >= {min_clusters})")
    if y.min() == y.max():
        raise StatsUnavailable(f"{what}: outcome does not vary")
    _check_rank(X, names, what)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sm.Logit(y, X).fit(disp=0, method="newton", maxiter=100, cov_type="cluster",
                                 cov_kwds={"groups": g_codes})
    coef, se = np.asarray(res.params), np.asarray(res.bse)
    fitted = np.asarray(res.predict())
    if (not res.mle_retvals.get("converged", True) or not np.all(np.isfinite(se))
            or np.any((fitted < 1e-8) | (fitted > 1 - 1e-8))):
        raise StatsUnavailable(f"{what}: fit did not converge ((quasi-)separation)")
    return Fit(names, coef, se, len(y), n_cl)


def with_intercept(*blocks: tuple[np.ndarray, list[str]]):
    """Stack design blocks after an intercept -> (X, names)."""
    n = blocks[0][0].shape[0]
    mats, names = [np.ones((n, 1))], ["const"]
    for mat, nm in blocks:
        mat = np.asarray(mat, float)
        if mat.ndim == 1:
            mat = mat[:, None]
        mats.append(mat)
        names += list(nm)
    return np.hstack(mats), names
