"""The composition-adjusted rate interval written out densely on rows (games, seats or ballots; no
cells), for checking ``rates.RateCells`` independently: statsmodels' GLM for the fit, CR2 blocks,
the Bell-McCaffrey df of the quadratic form and the delta method to the logit."""

from __future__ import annotations

import warnings

import numpy as np
import statsmodels.api as sm
from scipy import stats

from impostor_bench.analysis.stats._marginal import full_rank


def dense_cr2_interval(y, X, exp, inside, alpha=0.05):
    """The interval written out on game rows (no cells): fit, CR2 blocks, BM df, delta method."""
    Xk = full_rank(np.column_stack([X, inside.astype(float)]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = np.asarray(sm.GLM(y, Xk, family=sm.families.Binomial()).fit(tol=1e-12).fittedvalues)
    w = p * (1 - p)
    Xt = Xk * np.sqrt(w)[:, None]
    B = np.linalg.inv(Xt.T @ Xt)
    R = y[inside].mean()
    d = np.where(inside, 1 / (inside.sum() * R * (1 - R)), 0.0) * np.sqrt(w)
    et = (y - p) / np.sqrt(w)
    u, qs = [], []
    for e in np.unique(exp):
        rows = np.flatnonzero(exp == e)
        lam, U = np.linalg.eigh(np.eye(len(rows)) - Xt[rows] @ B @ Xt[rows].T)
        A = (U * np.where(lam > 1e-10, 1 / np.sqrt(np.clip(lam, 1e-10, None)), 0)) @ U.T
        q = np.zeros(len(y))
        q[rows] = A @ d[rows]
        u.append(q[rows] @ et[rows])
        qs.append(q)
    Q = np.array(qs)  # (G, N) whitened influence weights of each experiment
    M = np.eye(len(y)) - Xt @ B @ Xt.T  # residual maker
    omega = Q @ M @ Q.T
    df = np.trace(omega) ** 2 / (omega ** 2).sum()
    se = np.sqrt(np.sum(np.square(u)))
    c = np.log(R / (1 - R))
    t = stats.t.ppf(1 - alpha / 2, df)
    return 1 / (1 + np.exp(-(c - t * se))), 1 / (1 + np.exp(-(c + t * se)))
