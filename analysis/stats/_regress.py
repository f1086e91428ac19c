"""Logistic-regression helpers (statsmodels) used by odds, categorical, robustness,
recognition, scaling and speaking.

* ``experiment_logit`` -- THE inference fit of the report: a binomial logit
  (statsmodels GLM) with cluster-robust covariance by experiment, CR2 (Bell & McCaffrey
  2002) with a t test on Bell-McCaffrey (Satterthwaite) degrees of freedom per coefficient,
  joint tests as Wald F(q, G-1). Experiments are the independent units of the design
  (docs/analysis.md, "Bootstraps and the estimand"); games of an experiment share its
  effect. CR1 with t(G-1) (statsmodels' cluster sandwich) is ``cov_type="CR1"``: with few
  clusters or high-leverage experiments it rejects true nulls at 12-24% (docs/analysis.md,
  "Regression inference"). Games are aggregated to experiment x covariate cells before
  fitting (same likelihood, same cluster scores: the same estimates and covariance as a
  game-level fit; tests/analysis/stats/test_stats_regress.py checks CR1 against statsmodels'
  game-level ``Logit(..., cov_type="cluster")`` and CR2 against a game-level CR2). It refuses
  (``StatsUnavailable``, printed as "not computed: <reason>") when G - K is below
  ``MIN_RESID_CLUSTERS``, when the cluster-robust covariance is degenerate (an SE near
  zero, non-finite, or far below the model-based one: the meat has too few clusters
  behind a direction) and on (quasi-)separation.
* ``grouped_logit`` / ``cluster_logit`` -- the paper's procedures (game-level Wald;
  cluster-robust Wald with the normal and >= 3 clusters), reachable through
  ``StatsConfig.paper_methods`` for reproduction only: neither holds its size under
  experiment clustering with shared word pairs.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats

from impostor_bench.analysis.stats._base import StatsUnavailable

# Smallest G - K (experiment clusters minus parameters) of a fit. CR2 with Bell-McCaffrey df
# held its size at every G - K from 2 to 30 in the leverage-heavy simulation of
# docs/analysis.md ("Regression inference": 2.2-5.4%; CR1 with t(G-1): 12-24%), but below
# 6 its df fall under ~3 and the intervals say little: "not computed" is more honest.
MIN_RESID_CLUSTERS = 6
METHOD = "logit, CR2 by experiment, t(Bell-McCaffrey df)"
METHOD_CR1 = "logit, CR1 by experiment, t(G-1)"
METHOD_JOINT = "logit, CR2 by experiment, Wald F(q, G-1)"
PAPER_WALD = "paper (game-level Wald; does not hold under experiment clustering)"
PAPER_CLUSTER = "paper (cluster-robust Wald, normal, >= 3 clusters; does not hold with few clusters)"
PAPER_CHI2 = "paper (Pearson chi2 over games; does not hold under experiment clustering)"


@dataclass
class Fit:
    names: list[str]
    coef: np.ndarray
    se: np.ndarray
    n: int
    n_clusters: Optional[int] = None
    df: Optional[np.ndarray] = None  # t degrees of freedom of each coefficient; None = normal
    method: str = ""
    cov: Optional[np.ndarray] = None

    def wald(self, name: str, alpha: float = 0.05, scale: float = 1.0) -> dict:
        """OR of ``scale`` units of ``name`` with its CI and two-sided p (t(df) or normal)."""
        j = self.names.index(name)
        out = wald_or(self.coef[j], self.se[j], alpha, scale, None if self.df is None else float(self.df[j]))
        if self.df is not None:
            out["df"] = float(self.df[j])
        return out

    def joint(self, terms: Sequence[str]) -> dict:
        """Wald test that every coefficient in ``terms`` is 0: F(q, df) (chi2(q) when df is None)."""
        idx = [self.names.index(t) for t in terms]
        assert self.cov is not None, "every fit of this module keeps its covariance"
        b, V = self.coef[idx], self.cov[np.ix_(idx, idx)]
        q = len(idx)
        # A two-way covariance with clipped negative eigenvalues can be singular in the tested block:
        # the data then carry no information on some combination of the terms, and no F test over
        # all of them exists (a generalised inverse would test a smaller hypothesis under this name).
        lam = np.linalg.eigvalsh(V)
        if not np.all(np.isfinite(lam)) or lam.min() <= 1e-12 * max(lam.max(), 1e-300):
            raise StatsUnavailable(f"joint test of {', '.join(terms)}: their covariance is singular "
                                   "(a clipped two-way covariance with too few clusters in some direction)")
        w = float(b @ np.linalg.solve(V, b))
        if self.df is None:
            return {"stat": w, "df1": q, "df2": np.nan, "p": float(stats.chi2.sf(w, q))}
        assert self.n_clusters is not None, "t/F degrees of freedom come from clustered fits"
        df2 = self.n_clusters - 1
        return {"stat": w / q, "df1": q, "df2": df2, "p": float(stats.f.sf(w / q, q, df2))}


def wald_or(beta: float, se: float, alpha: float = 0.05, scale: float = 1.0, df: Optional[float] = None) -> dict:
    crit = stats.norm.ppf(1 - alpha / 2) if df is None else stats.t.ppf(1 - alpha / 2, df)
    b, s = beta * scale, se * abs(scale)
    if not (np.isfinite(b) and np.isfinite(s) and s > 0):
        return {"or": np.nan, "ci_low": np.nan, "ci_high": np.nan, "p": np.nan, "coef": b, "se": s}
    tail = stats.norm.sf(abs(b / s)) if df is None else stats.t.sf(abs(b / s), df)
    return {"or": float(np.exp(b)), "ci_low": float(np.exp(b - crit * s)), "ci_high": float(np.exp(b + crit * s)),
            "p": float(2 * tail), "coef": float(b), "se": float(s)}


def _check_rank(X: np.ndarray, names: list[str], what: str) -> None:
    if np.linalg.matrix_rank(X) < X.shape[1]:
        raise StatsUnavailable(f"{what}: design is rank deficient (collinear terms among {', '.join(names[1:])})")


def _codes(groups) -> np.ndarray:
    groups = np.asarray(groups)
    if groups.dtype.kind in "iu":  # the same codes as np.unique's inverse, by hashing instead of a sort
        return pd.factorize(groups, sort=True)[0].astype(np.intp)
    return np.unique(groups.astype(str) if groups.dtype == object else groups, return_inverse=True)[1]


def unique_rows(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(A, axis=0, return_inverse=True)`` (the distinct rows in lexicographic order, and each
    row's index into them), from one int64 key per row that sorts as the rows do: the row's own
    mixed-radix number for a non-negative int matrix, else each column's sorted codes combined. The
    same arrays, without sorting the rows as structured records (~15 s on 907,200 games; 3-10x), and the
    keys by hashing (``pd.factorize(sort=True)`` sorts only the distinct keys)."""
    A = np.asarray(A)
    if A.ndim == 2 and A.size and A.dtype.kind in "iu" and A.min() >= 0:
        radix = A.max(axis=0).astype(np.int64) + 1
        if float(np.prod(radix.astype(float))) < 2.0 ** 62:
            mult = np.cumprod(np.concatenate([radix[1:], [1]])[::-1])[::-1]  # weight of each column
            inv, keys = pd.factorize(A.astype(np.int64) @ mult, sort=True)  # np.unique's, by hashing: 10-20x
            return ((keys[:, None] // mult[None, :]) % radix[None, :]).astype(A.dtype), inv.astype(np.intp)
    if A.ndim != 2 or A.shape[0] == 0 or A.shape[1] == 0 or (A.dtype.kind == "f" and np.isnan(A).any()):
        # numpy keeps every row with a NaN distinct: left to it
        rows, inv = np.unique(A, axis=0, return_inverse=True)
        return rows, inv.ravel()
    key = np.zeros(A.shape[0], np.int64)
    for j in range(A.shape[1]):
        codes, levels = pd.factorize(A[:, j], sort=True, use_na_sentinel=False)
        if (int(key.max()) + 1) * len(levels) >= 2 ** 62:  # keep the key dense (order-preserving)
            key = np.unique(key, return_inverse=True)[1].ravel().astype(np.int64)
        key = key * len(levels) + codes
    inv, distinct = pd.factorize(key, sort=True)
    first = np.full(len(distinct), len(key), np.intp)
    np.minimum.at(first, inv, np.arange(len(key)))  # each distinct key's first row, as np.unique's return_index
    return A[first], inv.astype(np.intp)


def aggregate(y, X: np.ndarray, groups: np.ndarray):
    """Game rows -> experiment x covariate cells: (successes, trials, X_cells, group codes of cells)."""
    g = _codes(groups)
    key = np.column_stack([g.astype(float), np.asarray(X, float)])
    cells, inv = unique_rows(key)
    succ = np.bincount(inv, weights=np.asarray(y, float), minlength=len(cells))
    trials = np.bincount(inv, minlength=len(cells)).astype(float)
    return succ, trials, cells[:, 1:], cells[:, 0].astype(np.intp)


def cr2(Xc: np.ndarray, succ: np.ndarray, trials: np.ndarray, fitted: np.ndarray, gc: np.ndarray,
        terms: Sequence[int]):
    """CR2 (Bell-McCaffrey) cluster-robust covariance of a binomial logit on aggregated cells, and the
    Bell-McCaffrey (Satterthwaite) degrees of freedom of each coefficient in ``terms``.

    Whitened design X~ = W^1/2 X and residuals e~ = W^-1/2 (s - n p), W = n p (1 - p). Cluster j's
    residuals are scaled by (I - H_jj)^-1/2, H_jj = X~_j (X~'X~)^-1 X~_j' (Bell & McCaffrey 2002;
    for GLMs as in R's clubSandwich, Pustejovsky & Tipton 2018). Both only involve X~_j'X~_j and the
    cluster score, so cells give the same answer as games.
    """
    w = trials * fitted * (1 - fitted)
    sw = np.sqrt(w)
    Xt = Xc * sw[:, None]
    et = (succ - trials * fitted) / sw
    B = np.linalg.inv(Xt.T @ Xt)
    vals, vecs = np.linalg.eigh(B)
    Bh = (vecs * np.sqrt(np.clip(vals, 0, None))) @ vecs.T
    K = Xc.shape[1]
    terms = list(terms)
    G = int(gc.max()) + 1
    meat = np.zeros((K, K))
    aa = np.zeros((G, len(terms)))
    R = np.zeros((G, K, len(terms)))
    order = np.argsort(gc, kind="stable")
    sizes = np.bincount(gc, minlength=G)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    # optimize=True: numpy contracts pairwise through BLAS (20x at 756 clusters of 120 games; the
    # naive three-operand loop took 8 s of the 90,720-game report); results equal to round-off
    for c in np.unique(sizes):  # clusters with c cells, batched: (n, c, K)
        cl = np.flatnonzero(sizes == c)
        rows = order[starts[cl][:, None] + np.arange(c)[None, :]]
        Xj, ej = Xt[rows], et[rows]
        H = np.einsum("nck,kl,ndl->ncd", Xj, B, Xj, optimize=True)
        lam, U = np.linalg.eigh(np.eye(c)[None] - H)
        inv_sqrt = np.where(lam > 1e-10, 1 / np.sqrt(np.clip(lam, 1e-10, None)), 0.0)
        A = np.einsum("ncm,nm,ndm->ncd", U, inv_sqrt, U, optimize=True)
        u = np.einsum("nck,ncd,nd->nk", Xj, A, ej, optimize=True)
        meat += u.T @ u
        AXB = np.einsum("ncd,ndk,kt->nct", A, Xj, B[:, terms], optimize=True)  # a_j of each tested coefficient
        aa[cl] = (AXB ** 2).sum(1)
        R[cl] = np.einsum("kl,ncl,nct->nkt", Bh, Xj, AXB, optimize=True)  # r_j
    cov = B @ meat @ B
    r2 = (R ** 2).sum(1)  # (G, terms)
    tr = aa.sum(0) - r2.sum(0)
    RtR = np.einsum("gkt,glt->tkl", R, R, optimize=True)
    tr2 = (aa ** 2).sum(0) - 2 * (aa * r2).sum(0) + (RtR ** 2).sum((1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        df = tr ** 2 / tr2
    return cov, df


#: Largest cluster (games) whose CR2 leverage block ``cr2_games`` forms (c x c dense, an eigen-
#: decomposition each); a clustering with a larger one gets CR1 (clusters that large come with
#: many of them, where CR1 holds).
CR2_MAX_CLUSTER = 3_000
#: Most clusters for which ``cr2_games`` is run: CR2's leverage correction and the Bell-McCaffrey
#: df differ from CR1's G/(G-1) factor and t(G-1) by O(1/G) (at the paper's 756 experiments the SEs
#: agree to 0.4%), while its cost grows with every cluster (32 s of the paper-size equation (1)).
CR2_MAX_CLUSTERS = 100


def cr2_games(Xt, et: np.ndarray, B: np.ndarray, codes: np.ndarray, terms: Sequence[int]):
    """``cr2`` on a game-level whitened design (``Xt = W^1/2 X``, dense or scipy.sparse; ``et`` the
    whitened residuals; ``B = (Xt'Xt)^-1``), one cluster at a time: the covariance and the Bell-
    McCaffrey df of ``terms``. Why a second form: ``cr2`` batches dense cell blocks, which a
    fixed-effects design (hundreds of dummy columns, sparse above ``equation1.MAX_CELLS``) cannot
    afford. With a fixed effect nested in a cluster, ``I - H_jj`` is singular along that effect's
    column; the Moore-Penrose inverse square root is taken there, as R's clubSandwich does
    (Pustejovsky & Tipton 2018), so absorbing the effect or not gives one answer."""
    codes = np.asarray(codes)
    G, K = int(codes.max()) + 1, B.shape[0]
    terms = list(terms)
    vals, vecs = np.linalg.eigh(B)
    Bh = (vecs * np.sqrt(np.clip(vals, 0, None))) @ vecs.T
    order = np.argsort(codes, kind="stable")
    ends = np.cumsum(np.bincount(codes, minlength=G))
    U = np.zeros((G, K))
    aa = np.zeros((G, len(terms)))
    R = np.zeros((G, K, len(terms)))
    for j in range(G):
        rows = order[(ends[j - 1] if j else 0):ends[j]]
        Xj = Xt[rows]
        XjB = np.asarray(Xj @ B)
        H = np.asarray(Xj @ XjB.T)
        lam, V = np.linalg.eigh(np.eye(len(rows)) - (H + H.T) / 2)
        A = (V * np.where(lam > 1e-8, 1 / np.sqrt(np.clip(lam, 1e-8, None)), 0.0)) @ V.T
        U[j] = np.asarray(Xj.T @ (A @ et[rows])).ravel()
        AXB = A @ XjB[:, terms]
        aa[j] = (AXB ** 2).sum(0)
        R[j] = Bh @ np.asarray(Xj.T @ AXB)
    cov = B @ (U.T @ U) @ B
    r2 = (R ** 2).sum(1)
    tr = aa.sum(0) - r2.sum(0)
    cross = np.array([float((np.square(R[:, :, t] @ R[:, :, t].T)).sum()) for t in range(len(terms))])
    tr2 = (aa ** 2).sum(0) - 2 * (aa * r2).sum(0) + cross
    with np.errstate(invalid="ignore", divide="ignore"):
        df = tr ** 2 / tr2
    return cov, df


def experiment_logit(y, X: np.ndarray, names: list[str], groups, what: str,
                     min_resid_clusters: int = MIN_RESID_CLUSTERS, terms: Optional[Sequence[str]] = None,
                     cov_type: str = "CR2") -> Fit:
    """Binomial logit of game outcomes ``y`` on ``X`` (intercept included), cluster-robust by
    ``groups`` (experiments); refuses with the reason when it cannot hold its level.

    ``terms``: the coefficients the caller reports (default all but the intercept): the SE checks
    and the degrees of freedom are theirs. ``cov_type``: "CR2" (default; Bell-McCaffrey df per
    term) or "CR1" (statsmodels' cluster sandwich with G/(G-1) (N-1)/(N-K), N = games; t(G-1)).
    """
    y = np.asarray(y, float)
    X = np.asarray(X, float)
    if len(y) == 0:
        raise StatsUnavailable(f"{what}: no games")
    if y.min() == y.max():
        raise StatsUnavailable(f"{what}: outcome does not vary")
    succ, trials, Xc, gc = aggregate(y, X, groups)
    G, K, N = int(gc.max()) + 1, X.shape[1], len(y)
    if G - K < min_resid_clusters:
        raise StatsUnavailable(f"{what}: {G} experiment clusters for {K} parameters (G - K = {G - K} < "
                               f"{min_resid_clusters}): too few independent units for a cluster-robust test")
    _check_rank(Xc, names, what)
    endog = np.column_stack([succ, trials - succ])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = sm.GLM(endog, Xc, family=sm.families.Binomial())
        res = model.fit(cov_type="cluster", cov_kwds={"groups": gc, "use_correction": False})
    fitted = np.asarray(res.predict())
    coef = np.asarray(res.params)
    if (not res.converged or not np.all(np.isfinite(coef))
            or np.any((fitted < 1e-8) | (fitted > 1 - 1e-8)) or np.max(np.abs(coef)) > 25):
        raise StatsUnavailable(f"{what}: fit did not converge ((quasi-)separation: a level with all or no wins?)")
    idx = [names.index(t) for t in terms] if terms is not None else list(range(1, K)) or [0]
    if cov_type == "CR1":
        cov = np.asarray(res.cov_params()) * (G / (G - 1)) * ((N - 1) / (N - K))
        df = np.full(K, float(G - 1))
        method = METHOD_CR1
    else:
        cov, df_t = cr2(Xc, succ, trials, fitted, gc, idx)
        df = np.full(K, np.nan)
        df[idx] = df_t
        method = METHOD
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    w = trials * fitted * (1 - fitted)
    se_model = np.sqrt(np.diag(np.linalg.pinv((Xc * w[:, None]).T @ Xc)))
    bad = ~np.isfinite(se[idx]) | (se[idx] < 1e-8) | (se[idx] < 1e-3 * se_model[idx]) | ~(df[idx] > 0)
    if bad.any():
        raise StatsUnavailable(f"{what}: cluster-robust SE degenerate (near zero or non-finite; too few clusters "
                               f"behind {', '.join(names[i] for i, b in zip(idx, bad) if b)})")
    return Fit(list(names), coef, se, N, G, df, method, cov)


METHOD_TWO_WAY = "logit, two-way cluster-robust by experiment and word pair (CR1 each), Wald F(q, min(G)-1)"


def two_way_logit(y, X: np.ndarray, names: list[str], exp_groups, pair_groups, what: str,
                  min_resid_clusters: int = MIN_RESID_CLUSTERS,
                  behind: Optional[dict[str, np.ndarray]] = None, terms: Optional[Sequence[str]] = None,
                  cov_type: str = "CR1") -> Fit:
    """Game-level binomial logit with two-way cluster-robust covariance by experiment and word
    pair (Cameron, Gelbach & Miller 2011: V_exp + V_pair - V_game, each with statsmodels' CR1
    factor), for terms carried by the word pairs (difficulty: every experiment of a tier plays
    the same pairs, so the tier contrast has pairs as well as experiments as its units).
    t / F on min(G_exp, G_pair) - 1 degrees of freedom; ``behind`` maps a term to the games its
    contrast rests on (a tier against the reference tier: their pairs, a fraction of all), whose
    min(G_exp, G_pair) - 1 are that term's t df. The sum of three sandwiches is not positive
    semi-definite in general (refused for that, the difficulty terms were lost in 82 of 100 studies
    of the demo's size); as Cameron, Gelbach & Miller (2011, section 2.3) advise, its negative
    eigenvalues are set to zero. Refuses like ``experiment_logit``;
    ``terms`` (default all but the intercept) are the coefficients whose SEs must not be degenerate.
    ``cov_type="CR2"``: each sandwich with the CR2 leverage correction instead (``two_way_cr2``)
    where both clusterings have at most ``CR2_MAX_CLUSTERS`` clusters; CR1 above (``method`` says)."""
    y = np.asarray(y, float)
    X = np.asarray(X, float)
    if len(y) == 0 or y.min() == y.max():
        raise StatsUnavailable(f"{what}: outcome does not vary")
    ge, gp = _codes(exp_groups), _codes(pair_groups)
    G = min(int(ge.max()) + 1, int(gp.max()) + 1)
    K = X.shape[1]
    if G - K < min_resid_clusters:
        raise StatsUnavailable(f"{what}: {G} clusters (fewer of experiments and word pairs) for {K} parameters "
                               f"(G - K = {G - K} < {min_resid_clusters})")
    _check_rank(X, names, what)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Logit by Newton, not the binomial GLM: the same fit and two-way sandwich (to 1e-15 on
        # 90,720 games) in a fifth of the memory (20 vs 107 MiB at K = 12)
        res = sm.Logit(y, X).fit(disp=0, method="newton", maxiter=100, cov_type="cluster",
                                 cov_kwds={"groups": np.column_stack([ge, gp])})
    fitted = np.asarray(res.predict())
    coef = np.asarray(res.params)
    if (not res.mle_retvals.get("converged", True) or not np.all(np.isfinite(coef))
            or np.any((fitted < 1e-8) | (fitted > 1 - 1e-8)) or np.max(np.abs(coef)) > 25):
        raise StatsUnavailable(f"{what}: fit did not converge ((quasi-)separation: a level with all or no events?)")
    idx = [names.index(t) for t in terms] if terms is not None else list(range(1, K))
    method = METHOD_TWO_WAY
    if cov_type == "CR2" and _cr2_affordable(ge) and _cr2_affordable(gp):
        cov = psd_clipped(two_way_cr2(X, y, fitted, ge, gp))
        method = METHOD_TWO_WAY_CR2
    else:
        cov = psd_clipped(np.asarray(res.cov_params()))
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    if np.any(~np.isfinite(se[idx]) | (se[idx] < 1e-8)):
        raise StatsUnavailable(f"{what}: two-way cluster-robust covariance degenerate (a zero variance once "
                               "its negative eigenvalues are clipped)")
    df = np.full(K, float(G - 1))
    for term, rows in (behind or {}).items():
        g_t = min(len(np.unique(ge[rows])), len(np.unique(gp[rows])))
        df[names.index(term)] = float(g_t - 1) if g_t > 1 else np.nan
    return Fit(list(names), coef, se, len(y), G, df, method, cov)


METHOD_TWO_WAY_CR2 = "logit, two-way cluster-robust by experiment and word pair (CR2 each), Wald F(q, min(G)-1)"


def _cr2_affordable(codes: np.ndarray) -> bool:
    sizes = np.bincount(codes)
    return len(sizes) <= CR2_MAX_CLUSTERS and int(sizes.max()) <= CR2_MAX_CLUSTER


def two_way_cr2(X: np.ndarray, y: np.ndarray, fitted: np.ndarray, ge: np.ndarray, gp: np.ndarray) -> np.ndarray:
    """V_exp + V_pair - V_game of a game-level logit with every sandwich leverage-corrected: CR2 by
    experiment and by pair (``cr2_games``) and HC2 by game (the CR2 of one-game clusters), not
    PSD-clipped. Why not CR1: with the demo's 6-10 experiments a tier and model and mode terms
    beside it, CR1's G/(G-1) factor under-corrects the residuals' shrinkage where leverage is
    high (difficulty terms rejected a true null in 6.0% of 9,000 p-values, CR2 in 3.8% of 3,000:
    benchmarks/RESULTS.md, "Small-sample size at the demo's design")."""
    w = fitted * (1 - fitted)
    sw = np.sqrt(w)
    Xt = X * sw[:, None]
    et = (y - fitted) / sw
    B = np.linalg.inv(Xt.T @ Xt)
    v_exp, _ = cr2_games(Xt, et, B, ge, [])
    v_pair, _ = cr2_games(Xt, et, B, gp, [])
    h = np.einsum("ik,kl,il->i", Xt, B, Xt, optimize=True)
    # the generalised inverse where a game's own leverage is 1, as cr2_games does for a cluster
    s = Xt * (et * np.where(1 - h > 1e-8, 1 / np.sqrt(np.clip(1 - h, 1e-8, None)), 0.0))[:, None]
    v_game = B @ (s.T @ s) @ B
    return v_exp + v_pair - v_game


def psd_clipped(cov: np.ndarray) -> np.ndarray:
    """``cov`` with its negative eigenvalues set to zero (the nearest positive semi-definite matrix in
    Frobenius norm): what Cameron, Gelbach & Miller (2011) advise for a multi-way sandwich."""
    vals, vecs = np.linalg.eigh((cov + cov.T) / 2)
    if vals.min() >= 0:
        return cov
    return (vecs * np.clip(vals, 0, None)) @ vecs.T


def grouped_logit(successes, trials, X: np.ndarray, names: list[str], what: str) -> Fit:
    """Binomial GLM on aggregated rows, model-based (game-level Wald) SEs; X includes the intercept.
    The paper's procedure (``StatsConfig.paper_methods``)."""
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
    return Fit(names, coef, se, int(trials.sum()), method=PAPER_WALD, cov=np.asarray(res.cov_params()))


def game_logit(y, X: np.ndarray, names: list[str], what: str) -> Fit:
    """The paper's game-level Wald fit of game rows (aggregated to covariate cells first)."""
    succ, trials, Xc, _ = aggregate(y, X, np.zeros(len(y), np.int64))
    return grouped_logit(succ, trials, Xc, names, what)


def cluster_logit(y, X: np.ndarray, names: list[str], groups, what: str, min_clusters: int = 3) -> Fit:
    """Game-level logit with cluster-robust SEs by ``groups`` and normal inference; X includes the
    intercept. The paper's procedure (``StatsConfig.paper_methods``)."""
    y = np.asarray(y, float)
    g_codes = _codes(groups)
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
    return Fit(names, coef, se, len(y), n_cl, method=PAPER_CLUSTER, cov=np.asarray(res.cov_params()))


def inference_fit(y, X: np.ndarray, names: list[str], groups, what: str, config, paper: str = "wald",
                  terms: Optional[Sequence[str]] = None) -> Fit:
    """The fit a table prints: ``experiment_logit``, or with ``config.paper_methods`` the paper's
    procedure (``paper``: "wald" = game-level Wald, "cluster" = cluster-robust Wald, normal)."""
    if getattr(config, "paper_methods", False):
        if paper == "cluster":
            return cluster_logit(y, X, names, groups, what, config.min_clusters)
        return game_logit(y, X, names, what)
    return experiment_logit(y, X, names, groups, what, config.min_resid_clusters, terms=terms)


def fit_columns(fit: Fit) -> dict:
    """The ``method`` and ``n_clusters`` columns of a result row."""
    return {"method": fit.method, "n_clusters": fit.n_clusters if fit.n_clusters is not None else np.nan}


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
