"""Marginal contrasts of fixed design factors at the width of their sampling SD.

A mode OR (``odds_ratios``' ``<mode>_vs_homogeneous``) is the ratio of two groups' win odds,
``theta = logit(S_a / n_a) - logit(S_b / n_b)`` with S the win totals. The design fixes which
models play in every experiment of a mode (its composition), so the between-model spread of
win rates is not sampling error. A logit with only the mode dummies, clustered by experiment,
puts that spread into its cluster residuals: on the fixed design its SE was 1.4-1.5x the true
sampling SD. Here the residuals come instead from the additive logit of the design
factors that vary between experiments (mode, difficulty, impostor model and the majority
seats' model composition; ``design_boot``'s fit without the per-game seat and position):

* ``r_c = s_c - n_c p_c`` on experiment x covariate cells (the cells ``_regress.aggregate``
  builds), scaled as in CR2 (Bell & McCaffrey 2002; for GLMs as R's clubSandwich) by
  ``(I - H_ee)^-1/2`` of each experiment's block, so that fitting ~K parameters on G
  experiments does not shrink them;
* ``theta``'s influence per experiment ``u_e = sum_{c in e} d_c r_c`` with the delta-method
  weight ``d_c = 1[c in a] / (n_a p_a q_a) - 1[c in b] / (n_b p_b q_b)``;
* ``SE^2 = sum_e u_e^2`` and a t test on the Bell-McCaffrey (Satterthwaite) degrees of freedom
  of that quadratic form (``df = tr(Omega)^2 / ||Omega||_F^2``, ``Omega = P'MP``, P the
  whitened ``u_e`` weights of each experiment, M the residual maker).

This is the linearisation of ``design_boot``'s wild bootstrap (same residuals, same variance
``sum_e r_e r_e'``) with CR2's leverage correction instead of its sqrt(G/(G-1)) factor. The
estimand is the same marginal OR as before, conditional on the design (these models, these
word pairs, this schedule). Interactions the additive fit misses (model x mode) stay in
``r_c`` as noise: conservative, never anti-conservative. With fewer than
``min_resid_clusters`` experiments beyond the fit's parameters the caller falls back to the
mode-only CR2 fit (wider, still valid).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import pandas as pd
from scipy import linalg, stats

from impostor_bench.analysis.stats._base import Prepared, StatsUnavailable, majority_models
from impostor_bench.analysis.stats._regress import aggregate, unique_rows

METHOD = "marginal log-OR, CR2 residuals of the design logit (composition-adjusted) by experiment, t(Bell-McCaffrey df)"
METHOD_SLOPE = ("logit slope, CR2 residuals of the design logit (composition-adjusted) by experiment, "
                "t(Bell-McCaffrey df)")


def _dummies(values) -> np.ndarray:
    codes = pd.factorize(pd.Series(values, dtype=object).fillna("<NA>"), sort=True)[0]
    return np.eye(int(codes.max()) + 1)[codes][:, 1:] if len(codes) else np.zeros((0, 0))


@dataclass
class RowDesign:
    """A design matrix stored as its distinct rows and each row's index into them (a game's design
    row is one of a few thousand): ``matrix()`` is the (n, K) matrix, ``take(i)`` the rows of the
    units at game positions ``i`` (seats, ballots, pairs) without an (n, K) copy."""

    rows: np.ndarray  # (U, K) distinct rows, in lexicographic order
    code: np.ndarray  # (n,) each unit's row

    @classmethod
    def of(cls, X: np.ndarray) -> "RowDesign":
        rows, code = unique_rows(np.asarray(X, float))
        return cls(rows, code)

    def take(self, i) -> "RowDesign":
        return RowDesign(self.rows, self.code[np.asarray(i, np.int64)])

    def matrix(self) -> np.ndarray:
        return self.rows[self.code]

    def __len__(self) -> int:
        return len(self.code)


def design_index(prep: Prepared) -> RowDesign:
    """``design_matrix(prep)`` as a ``RowDesign``, computed once per prepared data."""
    if "design" not in prep.derived:
        prep.derived["design"] = RowDesign.of(_design_matrix(prep))
    return prep.derived["design"]


def design_matrix(prep: Prepared) -> np.ndarray:
    """(N, K) full-rank design of the between-experiment factors, intercept first."""
    return design_index(prep).matrix()


def _design_matrix(prep: Prepared) -> np.ndarray:
    blocks = [np.ones((prep.n, 1)), _dummies(prep.mode), _dummies(prep.difficulty), _dummies(prep.imp_model)]
    if prep.has_players and prep.model is not None:
        maj = majority_models(prep)
        levels = sorted({m for m in maj.ravel() if m is not None}, key=str)
        blocks += [(maj == m).sum(1)[:, None].astype(float) for m in levels[1:]]
    return full_rank(np.hstack(blocks))


def full_rank(X: np.ndarray) -> np.ndarray:
    """``X`` without the columns that are linear combinations of earlier ones (pivoted QR; the
    intercept, column 0, always kept): e.g. the homogeneous seats' model counts."""
    X = np.asarray(X, float)
    if X.shape[0] == 0:
        return X
    return X[:, full_rank_columns(X)]


def full_rank_columns(X: np.ndarray, row_weights: Optional[np.ndarray] = None) -> np.ndarray:
    """The columns ``full_rank`` keeps (indices, ascending); with ``row_weights`` those of the
    matrix whose rows are ``X``'s rows repeated (weight = sqrt of the repeat count)."""
    X = np.asarray(X, float)
    _, r, piv = linalg.qr(X if row_weights is None else X * np.asarray(row_weights, float)[:, None],
                          mode="economic", pivoting=True)
    d = np.abs(np.diag(r))
    rank = int((d > 1e-9 * d[0]).sum()) if len(d) else 0
    keep = np.sort(piv[:rank])
    if 0 not in keep:
        keep = np.sort(np.concatenate([[0], keep[:-1]]))
    return keep


@dataclass
class DesignResiduals:
    """CR2-adjusted residuals of the design logit on experiment x covariate cells."""

    cell_group: np.ndarray  # (C,) experiment code of each cell (0..G-1)
    cell_key: np.ndarray  # (C,) key of the contrast group of each cell (e.g. mode)
    succ: np.ndarray
    trials: np.ndarray
    sw: np.ndarray  # sqrt(n p q) of each cell under the fit
    Xt: np.ndarray  # whitened design of the cells
    B: np.ndarray  # (X~'X~)^-1
    et: np.ndarray  # whitened residuals
    G: int
    K: int
    _adj: dict = field(default_factory=dict, repr=False)

    def adjustment(self, e: int) -> tuple[np.ndarray, np.ndarray]:
        """(cells of experiment ``e``, A_e = (I - H_ee)^-1/2 in whitened units), computed once."""
        if e not in self._adj:
            rows = np.flatnonzero(self.cell_group == e)
            Xe = self.Xt[rows]
            lam, U = np.linalg.eigh(np.eye(len(rows)) - Xe @ self.B @ Xe.T)
            inv = np.where(lam > 1e-10, 1 / np.sqrt(np.clip(lam, 1e-10, None)), 0.0)
            self._adj[e] = (rows, (U * inv) @ U.T)
        return self._adj[e]


def design_residuals(prep: Prepared, key: np.ndarray, groups: np.ndarray,
                     X: Optional[np.ndarray] = None) -> DesignResiduals:
    """Fit the design logit (``X``, default ``design_matrix(prep)``; it must span ``key``'s
    groups) on cells of (experiment, design, ``key``) and keep what CR2 needs."""
    X = design_matrix(prep) if X is None else np.asarray(X, float)
    codes, levels = pd.factorize(pd.Series(key, dtype=object), sort=True)
    Xk = np.column_stack([X, codes.astype(float)])
    succ, trials, Xc_k, gc = aggregate(prep.y, Xk, groups)
    Xc, cell_key = Xc_k[:, :-1], np.asarray(levels, dtype=object)[Xc_k[:, -1].astype(int)]
    return cell_residuals(succ, trials, Xc, gc, cell_key)


def cell_residuals(succ: np.ndarray, trials: np.ndarray, Xc: np.ndarray, gc: np.ndarray,
                   cell_key: np.ndarray) -> DesignResiduals:
    """Fit the binomial logit ``Xc`` (full rank) on cells with ``succ`` of ``trials`` (experiment
    codes ``gc``, 0..G-1) and keep what CR2 needs. Raises ``StatsUnavailable`` when the fit
    separates (a fitted probability at 0 or 1)."""
    from impostor_bench.analysis.stats.design_boot import irls_logit

    G, K = int(gc.max()) + 1, Xc.shape[1]
    fitted = irls_logit(succ, trials, Xc)
    if np.any((fitted < 1e-8) | (fitted > 1 - 1e-8)):
        raise StatsUnavailable("design logit separates (a design cell with all or no wins)")
    sw = np.sqrt(trials * fitted * (1 - fitted))
    Xt = Xc * sw[:, None]
    et = (succ - trials * fitted) / sw
    B = np.linalg.pinv(Xt.T @ Xt, hermitian=True)
    return DesignResiduals(gc, cell_key, succ, trials, sw, Xt, B, et, G, K)


def marginal_log_or(res: DesignResiduals, a, b) -> tuple[float, float, float]:
    """(log OR of winning in group ``a`` vs ``b``, its CR2 SE, Bell-McCaffrey df)."""
    ina, inb = res.cell_key == a, res.cell_key == b
    Sa, na, Sb, nb = res.succ[ina].sum(), res.trials[ina].sum(), res.succ[inb].sum(), res.trials[inb].sum()
    if min(na, nb) == 0:
        raise StatsUnavailable(f"no games of {a if na == 0 else b}")
    pa, pb = Sa / na, Sb / nb
    if pa in (0.0, 1.0) or pb in (0.0, 1.0):
        raise StatsUnavailable(f"{a} vs {b}: a win rate of 0 or 1 (the OR is unbounded)")
    d = np.where(ina, 1 / (na * pa * (1 - pa)), 0.0) - np.where(inb, 1 / (nb * pb * (1 - pb)), 0.0)
    se, df = linear_se(res, d)
    return float(np.log(pa / (1 - pa)) - np.log(pb / (1 - pb))), se, df


def linear_se(res: DesignResiduals, d: np.ndarray) -> tuple[float, float]:
    """CR2 SE and Bell-McCaffrey df of an estimator whose influence is ``sum_c d_c (s_c - n_c p_c)``
    over the cells (``d``: the delta-method weight of each cell's win total). Only the experiments
    with a non-zero weight enter (the others' influence and df terms are zero)."""
    dt = np.asarray(d, float) * res.sw  # whitened weights
    exps = np.unique(res.cell_group[dt != 0])
    u = np.zeros(len(exps))  # influence of each experiment
    norms = np.zeros(len(exps))
    Z = np.zeros((len(exps), res.K))
    for i, e in enumerate(exps):
        rows, A = res.adjustment(int(e))
        q = A @ dt[rows]
        u[i] = q @ res.et[rows]
        norms[i] = q @ q
        Z[i] = res.Xt[rows].T @ q
    var = float((u ** 2).sum())
    omega = np.diag(norms) - Z @ res.B @ Z.T
    df = float(np.trace(omega) ** 2 / (omega ** 2).sum()) if var > 0 else np.nan
    return float(np.sqrt(var)), df


def slope_weights(res: DesignResiduals, x_of_key: dict, selected) -> tuple[float, np.ndarray]:
    """Slope of the logit of win on a key-level covariate (e.g. log10 size of the impostor model) over
    the cells whose key is in ``selected``, and the cells' delta-method weights for ``linear_se``.

    The MLE of ``logit p = a + b x`` with x constant within a key depends on the data only through the
    keys' win totals; its influence is ``(B X'(s - n p))_b`` with B the inverse information of that fit,
    so the design logit's residuals (the composition fixed) replace the fit's own (which also hold the
    keys' departures from the line, fixed by the design)."""
    sel = np.isin(res.cell_key, list(selected))
    keys = [k for k in x_of_key if k in set(res.cell_key[sel])]
    S = np.array([res.succ[res.cell_key == k].sum() for k in keys])
    n = np.array([res.trials[res.cell_key == k].sum() for k in keys])
    x = np.array([x_of_key[k] for k in keys], float)
    if len(keys) < 3 or np.ptp(x) == 0:
        raise StatsUnavailable("fewer than three levels of the covariate")
    X = np.column_stack([np.ones(len(keys)), x])
    beta = np.zeros(2)
    for _ in range(100):  # Newton-Raphson on the keys' totals
        p = 1 / (1 + np.exp(-X @ beta))
        step = np.linalg.solve(X.T @ (X * (n * p * (1 - p))[:, None]), X.T @ (S - n * p))
        beta += step
        if np.max(np.abs(step)) < 1e-10:
            break
    p = 1 / (1 + np.exp(-X @ beta))
    B = np.linalg.inv(X.T @ (X * (n * p * (1 - p))[:, None]))
    w_key = dict(zip(keys, (B @ X.T)[1]))  # influence of one more win of each key on the slope
    d = np.array([w_key.get(k, 0.0) if s else 0.0 for k, s in zip(res.cell_key, sel)])
    return float(beta[1]), d


def wald_row(theta: float, se: float, df: float, alpha: float) -> dict:
    """OR, t(df) CI and two-sided p of a log-OR (the columns ``_regress.Fit.wald`` returns)."""
    if not (np.isfinite(se) and se > 0 and np.isfinite(df) and df > 0):
        raise StatsUnavailable("SE degenerate (no between-experiment variation behind the contrast)")
    crit = stats.t.ppf(1 - alpha / 2, df)
    return {"or": float(np.exp(theta)), "ci_low": float(np.exp(theta - crit * se)),
            "ci_high": float(np.exp(theta + crit * se)), "p": float(2 * stats.t.sf(abs(theta / se), df)),
            "coef": theta, "se": se, "df": df}
