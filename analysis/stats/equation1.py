"""Equation (1) of Appendix B.3 as the paper writes it:

    logit Pr(impostor win) = a + b_mode + b_pos + b_size log10(params) + g_difficulty
                             + FE_experiment + FE_word_pair

fitted on games (statsmodels GLM, binomial, logit link) with one dummy per experiment and one
per word pair (both sets of fixed effects), impostor speaking position as indicators (ref.
position 0). What the fixed effects leave identified: an experiment has one mode and one
difficulty, so ``b_mode`` and ``g_difficulty`` are absorbed by FE_experiment (rows say so, no
number); ``b_size`` is identified only where the impostor's model varies within an experiment
(cross-play and team modes) and only when every impostor model has a size in models.csv;
``b_pos`` is identified by the within-game randomisation of speaking order.

Games of an experiment or word pair whose outcome is constant are dropped first, until none is
left (``_separation.drop_flat_groups``: their fixed effects are infinite and carry no
information, as in conditional logit), and the ``note`` says how many; a reported term that
still diverges is refused as separation, by name.

Inference: cluster-robust CR2 with a t on Bell-McCaffrey degrees of freedom per term
(``_regress.cr2_games``), by experiment_id and, as the paper's robustness check, by word pair
(``cluster`` column). The leverage adjustment takes a generalised inverse where an experiment's
own dummy makes ``I - H_jj`` singular (Pustejovsky & Tipton 2018; R's clubSandwich). At the
demo's 6-12 experiments of 8 games it rejected true nulls at 3.8% (slopes) and 6.0% (positions)
(tests/analysis/stats/test_stats_equation1.py; docs/analysis.md). A clustering with a cluster
over ``_regress.CR2_MAX_CLUSTER`` games, or more than ``CR2_MAX_CLUSTERS`` clusters (the paper's
756 experiments: CR2 and CR1 agree to O(1/G) there), gets CR1 with t(G-1) (``method`` says which). With ~120 games an
experiment the incidental-parameter bias of the unconditional fixed-effects logit is small (the
planted-effect test bounds it). Above ``MAX_CELLS`` dense cells (the paper's full 90,720-game
design is: ~1,060 columns, 0.8 GB dense) the design is built sparse and fitted by
``fit_sparse_logit`` (Newton-Raphson on the sparse design; the same covariance code):
statsmodels' GLM needs a dense design.
"""

from __future__ import annotations

import gc
import warnings

import numpy as np
import pandas as pd
import statsmodels.api as sm

from impostor_bench.analysis.stats._base import StatsUnavailable, design_codes, models_meta, prepared, table
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats._regress import CR2_MAX_CLUSTER, CR2_MAX_CLUSTERS, Fit, cr2_games
from impostor_bench.analysis.stats._separation import constant_outcome, drop_flat_groups, flat_note
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.session import Analysis

#: largest dense design (games x columns) fitted by statsmodels; above it the design is sparse and
#: fitted by ``fit_sparse_logit``. Statsmodels' IRLS solves a dense least-squares problem per
#: iteration and holds ~9 copies of the design: on the paper's per-mode ``learning`` design
#: (34,560 games x 585 columns) that was 12-18 min of a report and +1.44 GiB; the sparse
#: Newton fit of the same design is seconds. 2M cells keeps the small designs of the tests on
#: statsmodels (the two fits agree to 1e-8: test_stats_equation1.py).
MAX_CELLS = 2_000_000
#: a dense design below this size is not worth a full garbage collection after its fit
SMALL_DESIGN_BYTES = 16 * 2 ** 20
MODEL = "logit with FE_experiment + FE_word_pair"
INFER_CR2 = "CR2 by {cluster}, t(Bell-McCaffrey df)"
INFER_CR1 = "CR1 by {cluster}, t(G-1)"
METHOD = f"{MODEL}, {INFER_CR2}"
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


def fit_equation1(y, X, names: list[str], clusterings: dict[str, np.ndarray], what: str,
                  terms: tuple[str, ...] = (), model: str = MODEL) -> dict[str, Fit]:
    """One logit fit (statsmodels' GLM; ``fit_sparse_logit`` on a sparse design) and per clustering
    its CR2 covariance with Bell-McCaffrey df (``_cluster_fits``). The caller has dropped the
    fixed-effect levels with a constant outcome (``_separation.drop_flat_groups``); a reported
    ``terms`` coefficient that still diverges is separation in that term, refused by name."""
    from scipy import sparse

    why = constant_outcome(y)
    if why:
        raise StatsUnavailable(f"{what}: {why}")
    if len(y) <= X.shape[1]:  # the CR1 correction (N-1)/(N-K) and any residual need N > K
        raise StatsUnavailable(f"{what}: {len(y)} games for {X.shape[1]} parameters (experiment and pair effects)")
    if sparse.issparse(X):
        return fit_sparse_logit(y, X, names, clusterings, what, terms, model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sm.GLM(np.asarray(y, float), X, family=sm.families.Binomial()).fit()
    coef, converged = np.asarray(res.params), bool(res.converged)  # IRLS stops on the deviance
    # memory: statsmodels' results hold the design several times over (whitened, pinv)
    # in a reference cycle, kept until a full collection; learning's five fits held 2 GB at once.
    # A full collection costs ~0.5 s on a report's heap: for a small design, the youngest generation
    # (where the fit's objects are) is enough
    del res
    gc.collect(2 if X.nbytes > SMALL_DESIGN_BYTES else 0)
    return _cluster_fits(y, X, coef, converged, names, clusterings, what, terms, model)


def _deviance(y: np.ndarray, eta: np.ndarray) -> float:
    return float(2 * np.sum(np.logaddexp(0, eta) - y * eta))


def fit_sparse_logit(y, X, names: list[str], clusterings: dict[str, np.ndarray], what: str,
                     terms: tuple[str, ...] = (), model: str = MODEL) -> dict[str, Fit]:
    """``fit_equation1`` on a sparse design (scipy.sparse): the logit MLE by Newton-Raphson with
    step halving, converged when the deviance changes by < 1e-10 (relative) and the reported
    ``terms`` by < 1e-8, as statsmodels' IRLS judges the dense fit (a nuisance effect still
    drifting towards an infinite limit does not move them). Written here because statsmodels'
    GLM needs a dense design; the test checks both paths give one answer."""
    from scipy import sparse

    y = np.asarray(y, float)
    X = sparse.csr_matrix(X, dtype=float)
    k = X.shape[1]
    idx = [names.index(t) for t in terms]
    beta = np.zeros(k)
    dev = _deviance(y, X @ beta)
    converged = False
    for _ in range(200):
        eta = X @ beta
        mu = 1 / (1 + np.exp(-np.clip(eta, -30, 30)))
        H = np.asarray((X.T @ X.multiply((mu * (1 - mu))[:, None])).todense())
        try:
            step = np.linalg.solve(H, X.T @ (y - mu))
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(H, X.T @ (y - mu), rcond=None)[0]
        t = 1.0
        while True:  # halve until the deviance does not rise (Newton can overshoot near separation)
            new = beta + t * step
            new_dev = _deviance(y, X @ new)
            if new_dev <= dev + 1e-12 * (abs(dev) + 1) or t < 1e-6:
                break
            t /= 2
        moved = np.abs(new[idx] - beta[idx]).max(initial=0.0)
        beta, change, dev = new, abs(dev - new_dev) / (abs(new_dev) + 0.1), new_dev
        if change < 1e-10 and moved < 1e-8:
            converged = True
            break
    return _cluster_fits(y, X, beta, converged, names, clusterings, what, terms, model)


def _cluster_fits(y, X, coef: np.ndarray, converged: bool, names: list[str], clusterings: dict[str, np.ndarray],
                  what: str, terms: tuple[str, ...], model: str = MODEL) -> dict[str, Fit]:
    """Per clustering: the CR2 covariance and Bell-McCaffrey df of the reported ``terms``
    (``_regress.cr2_games``: a t on the df the clusters behind each term support), or CR1 with
    t(G-1) above ``CR2_MAX_CLUSTERS`` clusters (where the two agree to O(1/G)) or where a cluster is
    too large for CR2's leverage blocks (``CR2_MAX_CLUSTER``); the refusal, by name, of a reported term that diverges (separation). Shared by
    the dense (statsmodels) and sparse fits, so both give one answer."""
    from scipy import sparse

    idx = [names.index(t) for t in terms]
    if not np.all(np.isfinite(coef)):
        raise StatsUnavailable(f"{what}: fit did not converge")
    sep = [t for t, j in zip(terms, idx) if abs(coef[j]) > 25]
    if sep:
        raise StatsUnavailable(f"{what}: separation in {', '.join(sep)} (a level with all or no impostor wins "
                               "given the fixed effects): its odds ratio is not estimable")
    if not converged:
        raise StatsUnavailable(f"{what}: fit did not converge (deviance still changing)")
    y = np.asarray(y, float)
    n, k = X.shape
    eta = np.asarray(X @ coef).ravel()
    mu = 1 / (1 + np.exp(-np.clip(eta, -30, 30)))
    sw = np.sqrt(np.clip(mu * (1 - mu), 1e-300, None))
    Xt = sparse.csr_matrix(X.multiply(sw[:, None])) if sparse.issparse(X) else X * sw[:, None]
    et = (y - mu) / sw
    info = Xt.T @ Xt
    B = np.linalg.inv(np.asarray(info.todense()) if sparse.issparse(info) else info)
    fits = {}
    for name, groups in clusterings.items():
        codes = pd.factorize(pd.Series(groups, dtype=object))[0]
        G = int(codes.max()) + 1
        if G < 3:
            raise StatsUnavailable(f"{what}: {G} {name} clusters; need at least 3")
        df = np.full(k, np.nan)
        if G <= CR2_MAX_CLUSTERS and np.bincount(codes).max() <= CR2_MAX_CLUSTER:
            cov, df_t = cr2_games(Xt, et, B, codes, idx)
            df[idx] = df_t
            method = f"{model}, {INFER_CR2.format(cluster=name)}"
        else:  # statsmodels' cov_cluster (CR1): c B (sum_g s_g s_g') B, c = G/(G-1) (N-1)/(N-K)
            member = sparse.csr_matrix((np.ones(n), (codes, np.arange(n))), shape=(G, n))
            S = member @ (sparse.csr_matrix(Xt.multiply(et[:, None])) if sparse.issparse(Xt) else Xt * et[:, None])
            S = S.toarray() if sparse.issparse(S) else np.asarray(S)
            cov = (G / (G - 1)) * ((n - 1) / (n - k)) * B @ (S.T @ S) @ B
            df[idx] = G - 1
            method = f"{model}, {INFER_CR1.format(cluster=name)}"
        se = np.sqrt(np.clip(np.diag(cov), 0, None))
        bad = [t for t, j in zip(terms, idx) if not (se[j] < 25 and se[j] > 0 and df[j] > 0)]
        if bad:
            raise StatsUnavailable(f"{what}: no information on {', '.join(bad)} by {name} (standard error "
                                   "degenerate: separation or too few clusters behind it)")
        fits[name] = Fit(list(names), coef.copy(), se, n, G, df, method, cov)
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
    constant = constant_outcome(prep.y[ok])
    if constant:
        raise StatsUnavailable(constant)
    pair_all = prep.games["pair_id"].astype(object).to_numpy()
    kept, dropped = drop_flat_groups(prep.y, {"experiment": prep.exp_names[prep.exp_code], "word pair": pair_all}, ok)
    if not kept.any():
        raise StatsUnavailable("not estimable: every experiment or word pair has a constant outcome (no game is "
                               "informative once the fixed effects are in)")
    flat = flat_note(dropped, int(ok.sum() - kept.sum()))
    ok = kept
    pair = pair_all[ok]
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
    notes = [n for n in (why, flat) if n]
    return prep.y[ok], X, all_names, names, exp, pair, notes


@table("equation1", columns=COLUMNS,
    title=("Equation (1) of B.3 as written: position (and size) odds ratios with FE_experiment and FE_word_pair, "
           "CR2 by experiment and by word pair"),
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
