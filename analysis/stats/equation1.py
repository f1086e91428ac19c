"""Equation (1) of Appendix B.3 as the paper writes it (issue 43):

    logit Pr(impostor win) = a + b_mode + b_pos + b_size log10(params) + g_difficulty
                             + FE_experiment + FE_word_pair

fitted on games (statsmodels GLM, binomial, logit link) with one dummy per experiment and one
per word pair (both sets of fixed effects), impostor speaking position as indicators (ref.
position 0). What the fixed effects leave identified: an experiment has one mode and one
difficulty, so ``b_mode`` and ``g_difficulty`` are absorbed by FE_experiment (rows say so, no
number); ``b_size`` is identified only where the impostor's model varies within an experiment
(cross-play and team modes) and only when every impostor model has a size in models.csv;
``b_pos`` is identified by the within-game randomisation of speaking order.

Inference: cluster-robust (CR1: statsmodels' ``sandwich_covariance.cov_cluster`` on the one
fit, with its small-sample correction) with t(G-1) intervals, by experiment_id and, as the paper's robustness check, by
word pair (``cluster`` column). CR2 (the report's other fits, ``_regress.experiment_logit``)
is not used: with a dummy per cluster the G - K rule it applies cannot hold (K > G). CR1 with
experiment fixed effects held its size for the position terms in the simulation of
tests/analysis/stats/test_stats_equation1.py (position is randomised within experiments, so
the experiment effects that break CR1 elsewhere are in the fixed effects here). With ~120
games an experiment the incidental-parameter bias of the unconditional fixed-effects logit is
small (the planted-effect test bounds it). Above ``MAX_CELLS`` dense cells (the paper's full
90,720-game design is: ~1,060 columns, 0.8 GB dense) the design is built sparse and fitted by
``fit_sparse_logit`` (Newton-Raphson on the sparse design, the same CR1 sandwich):
statsmodels' GLM needs a dense design. (Before issue 39 part A the table refused that size,
so the calibration matrix printed "no values on simulated games" at 756 x 120.)
"""

from __future__ import annotations

import gc
import warnings

import numpy as np
import pandas as pd
import statsmodels.api as sm

from impostor_bench.analysis.stats._base import StatsUnavailable, design_codes, models_meta, prepared, table
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats._regress import Fit
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.session import Analysis

#: largest dense design (games x columns) fitted by statsmodels; above it the design is sparse and
#: fitted by ``fit_sparse_logit``. Statsmodels' IRLS solves a dense least-squares problem per
#: iteration and holds ~9 copies of the design: on the paper's per-mode ``learning`` design
#: (34,560 games x 585 columns) that was 12-18 min of a report and +1.44 GiB (issue 41); the sparse
#: Newton fit of the same design is seconds. 2M cells keeps the small designs of the tests on
#: statsmodels (the two fits agree to 1e-8: test_stats_equation1.py).
MAX_CELLS = 2_000_000
METHOD = "logit with FE_experiment + FE_word_pair, CR1 by {cluster}, t(G-1)"
ABSORBED = "absorbed by FE_experiment (one value per experiment): not identified in equation (1)"
COLUMNS = ["term", "cluster", "or", "ci_low", "ci_high", "p", "coef", "se", "df", "n", "n_clusters", "method",
           "note"]


def _size(data: Analysis, prep, ok: np.ndarray):
    """(log10 params of each game's impostor model, None) or (None, why the term is left out)."""
    try:
        meta = models_meta(data)
    except StatsUnavailable as e:
        return None, f"size term left out: {e}"
    params = meta["params_b"].reindex(pd.Series(prep.imp_model[ok], dtype=object)).to_numpy(float)
    if not np.isfinite(params).all():
        missing = sorted({str(m) for m, p in zip(prep.imp_model[ok], params) if not np.isfinite(p)})
        return None, f"size term left out: no params_b for {', '.join(missing)}"
    x = np.log10(params)
    within = pd.Series(x).groupby(prep.exp_code[ok]).nunique()
    if (within <= 1).all():
        return None, "size term left out: the impostor's model never varies within an experiment (absorbed by FE)"
    return x - x.mean(), None


def fit_equation1(y, X: np.ndarray, names: list[str], clusterings: dict[str, np.ndarray], what: str,
                  terms: tuple[str, ...] = ()) -> dict[str, Fit]:
    """One GLM fit; per clustering its cluster-robust covariance (statsmodels' ``cov_cluster``,
    CR1 with the G/(G-1) (N-1)/(N-K) correction) and t(G-1) degrees of freedom. A reported
    ``terms`` coefficient or SE beyond 25 on the logit scale is (quasi-)separation: refused."""
    from scipy import sparse
    from statsmodels.stats.sandwich_covariance import cov_cluster

    if len(y) <= X.shape[1]:  # the CR1 correction (N-1)/(N-K) and any residual need N > K
        raise StatsUnavailable(f"{what}: {len(y)} games for {X.shape[1]} parameters (experiment and pair effects)")
    if sparse.issparse(X):
        return fit_sparse_logit(y, X, names, clusterings, what, terms)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sm.GLM(np.asarray(y, float), X, family=sm.families.Binomial()).fit()
    coef = np.asarray(res.params)
    if not res.converged or not np.all(np.isfinite(coef)):
        raise StatsUnavailable(f"{what}: fit did not converge")

    def cov_of(codes: np.ndarray, G: int, fitted=res) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(cov_cluster(fitted, codes))

    fits = _cluster_fits(coef, cov_of, names, len(y), clusterings, what, terms)
    # memory (issue 41): statsmodels' results hold the design several times over (whitened, pinv)
    # in a reference cycle, kept until a full collection; learning's five fits held 2 GB at once
    del res, cov_of
    gc.collect()
    return fits


def fit_sparse_logit(y, X, names: list[str], clusterings: dict[str, np.ndarray], what: str,
                     terms: tuple[str, ...] = ()) -> dict[str, Fit]:
    """``fit_equation1`` on a sparse design (scipy.sparse): the logit MLE by Newton-Raphson and,
    per clustering, the CR1 sandwich ``c (X'WX)^-1 (sum_g s_g s_g') (X'WX)^-1`` with statsmodels'
    ``cov_cluster`` factor ``c = G/(G-1) (N-1)/(N-K)`` (s_g: the cluster's score sum). Written here
    because statsmodels' GLM and ``cov_cluster`` need a dense design; the test checks it against
    them on a design small enough for both."""
    from scipy import sparse

    y = np.asarray(y, float)
    X = sparse.csr_matrix(X, dtype=float)
    n, k = X.shape
    beta = np.zeros(k)
    converged = False
    for _ in range(100):
        mu = 1 / (1 + np.exp(-np.clip(X @ beta, -30, 30)))
        H = np.asarray((X.T @ X.multiply((mu * (1 - mu))[:, None])).todense())
        try:
            step = np.linalg.solve(H, X.T @ (y - mu))
        except np.linalg.LinAlgError:
            raise StatsUnavailable(f"{what}: singular information (rank-deficient design)") from None
        beta += step
        if np.max(np.abs(step)) < 1e-9:
            converged = True
            break
    mu = 1 / (1 + np.exp(-np.clip(X @ beta, -30, 30)))
    if not converged or not np.all(np.isfinite(beta)):
        raise StatsUnavailable(f"{what}: fit did not converge")
    bread = np.linalg.inv(np.asarray((X.T @ X.multiply((mu * (1 - mu))[:, None])).todense()))
    scores = sparse.csr_matrix(X.multiply((y - mu)[:, None]))

    def cov_of(codes: np.ndarray, G: int) -> np.ndarray:
        member = sparse.csr_matrix((np.ones(n), (codes, np.arange(n))), shape=(G, n))
        S = np.asarray((member @ scores).todense())
        return (G / (G - 1)) * ((n - 1) / (n - k)) * bread @ (S.T @ S) @ bread

    return _cluster_fits(beta, cov_of, names, n, clusterings, what, terms)


def _cluster_fits(coef: np.ndarray, cov_of, names: list[str], n: int, clusterings: dict[str, np.ndarray],
                  what: str, terms: tuple[str, ...]) -> dict[str, Fit]:
    """Per clustering: its CR1 covariance ``cov_of(codes, G)``, t(G-1) df, and the refusal of a
    reported ``terms`` coefficient or SE beyond 25 on the logit scale ((quasi-)separation);
    shared by the dense (statsmodels) and sparse fits."""
    fits = {}
    for name, groups in clusterings.items():
        codes = pd.factorize(groups)[0]
        G = int(codes.max()) + 1
        if G < 3:
            raise StatsUnavailable(f"{what}: {G} {name} clusters; need at least 3")
        cov = cov_of(codes, G)
        se = np.sqrt(np.clip(np.diag(cov), 0, None))
        bad = [t for t in terms if abs(coef[names.index(t)]) > 25 or not se[names.index(t)] < 25]
        if bad:
            raise StatsUnavailable(f"{what}: (quasi-)separation or no information for {', '.join(bad)}")
        fits[name] = Fit(list(names), coef.copy(), se, n, G, np.full(len(names), float(G - 1)),
                         METHOD.format(cluster=name), cov)
    return fits


def two_way_dummies(exp: np.ndarray, pair: np.ndarray, as_sparse: bool = False):
    """Dummies of experiments (first dropped: the intercept) and word pairs with one pair dropped
    per connected component of the experiment-pair graph: a tier's experiments and pairs form
    their own component (pairs are played within a tier), and each component's experiment and
    pair dummies sum to the same indicator, so one pair per component is the reference. Without
    it the design is rank-deficient and the fit returns nonsense (coefficients of 1e15)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    e, ne = pd.factorize(pd.Series(exp, dtype=object))[0], len(pd.unique(pd.Series(exp, dtype=object)))
    q, npair = pd.factorize(pd.Series(pair, dtype=object))[0], len(pd.unique(pd.Series(pair, dtype=object)))
    graph = coo_matrix((np.ones(len(e)), (e, ne + q)), shape=(ne + npair, ne + npair))
    _, comp = connected_components(graph, directed=False)
    ref = {comp[ne + j]: j for j in range(npair - 1, -1, -1)}  # the first pair of each component
    keep_pairs = [j for j in range(npair) if ref[comp[ne + j]] != j]
    if as_sparse:
        from scipy import sparse

        col_of_pair = np.full(npair, -1)
        col_of_pair[keep_pairs] = np.arange(len(keep_pairs))
        rows = np.arange(len(e))
        fe_e_s = sparse.csr_matrix((np.ones(int((e > 0).sum())), (rows[e > 0], e[e > 0] - 1)), shape=(len(e), ne - 1))
        cp = col_of_pair[q]
        fe_p_s = sparse.csr_matrix((np.ones(int((cp >= 0).sum())), (rows[cp >= 0], cp[cp >= 0])),
                                   shape=(len(e), len(keep_pairs)))
        return sparse.hstack([fe_e_s, fe_p_s], format="csr")
    fe_e = (e[:, None] == np.arange(1, ne)[None, :]).astype(float)
    fe_p = (q[:, None] == np.asarray(keep_pairs)[None, :]).astype(float)
    return np.hstack([fe_e, fe_p])


def design_equation1(data: Analysis):
    """(y, X, names, experiment codes, pair codes, notes) of equation (1) on the games with a position."""
    prep = prepared(data)
    ok = prep.imp_pos >= 0
    if not ok.any():
        raise StatsUnavailable("no game has an impostor_speaking_position in 0-3")
    if "pair_id" not in prep.games.columns:
        raise StatsUnavailable("games table has no pair_id: FE_word_pair needs it")
    pair = prep.games["pair_id"].astype(object).to_numpy()[ok]
    exp = prep.exp_code[ok]
    pos, pos_names = design_codes(prep.imp_pos[ok], ref=0, levels=[0, 1, 2, 3])
    blocks, names = [pos], [f"pos{k}_vs_pos0" for k in pos_names]
    size, why = _size(data, prep, ok)
    if size is not None:
        blocks.append(size[:, None])
        names.append("size_per_10x")
    n_cols = 1 + len(names) + len(np.unique(exp)) - 1 + len(pd.unique(pair)) - 1
    big = ok.sum() * n_cols > MAX_CELLS  # dense would not fit: sparse design, fit_sparse_logit
    fe = two_way_dummies(exp, pair, as_sparse=big)
    if big:
        from scipy import sparse

        X = sparse.hstack([sparse.csr_matrix(np.column_stack([np.ones(ok.sum()), *blocks])), fe], format="csr")
    else:
        X = np.hstack([np.ones((ok.sum(), 1)), *blocks, fe])
    all_names = ["const", *names] + [f"fe:{i}" for i in range(fe.shape[1])]
    notes = [why] if why else []
    return prep.y[ok], X, all_names, names, exp, pair, notes


@table("equation1", columns=COLUMNS,
    title=("Equation (1) of B.3 as written: position (and size) odds ratios with FE_experiment and FE_word_pair, "
           "CR1 by experiment and by word pair"),
    section="robustness",
    inference=(infer("fe_or", ("term", "cluster"), "or", ("ci_low", "ci_high"), "p", method="method"),),
)
def equation1(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Equation (1) with both fixed effects: position (and size) odds ratios, by two clusterings."""
    y, X, all_names, terms, exp, pair, notes = design_equation1(data)
    rows = []
    fits = fit_equation1(y, X, all_names, {"experiment_id": exp, "word_pair": pair}, "equation1", tuple(terms))
    for cluster, fit in fits.items():
        for t in terms:
            w = fit.wald(t, config.alpha)
            j = all_names.index(t)
            rows.append({"term": t, "cluster": cluster, **w, "coef": fit.coef[j], "se": fit.se[j], "n": fit.n,
                         "n_clusters": fit.n_clusters, "method": fit.method, "note": "; ".join(notes)})
    for t in ("mode", "difficulty"):
        rows.append({"term": t, "cluster": "", "note": ABSORBED})
    return pd.DataFrame(rows)
