"""The IV-style sensitivity of Appendix B.3, as the paper describes it (line ~622):

    "First stage: regress vote-network centrality (or influence reach) on indicators for later
    speaking positions (2/3 vs 0/1) with FE_experiment and FE_word_pair; report instrument
    relevance (F-statistic). Second stage: regress coalition conversion (or impostor win) on
    predicted centrality with cluster-robust SEs by experiment; use Anderson-Rubin/CLR tests
    for weak-IV robustness."

Defined here (the paper gives no numbers, unit or scale): one game is one unit; the instrument
z = 1 when the impostor speaks third or fourth (positions 2/3, randomised within the game);
the endogenous regressor x = the impostor's degree centrality in the game's vote network
(``network.game_metrics``: 2 k / (|V| - 1), k = players who voted for the impostor's target;
reach = centrality / 2 exactly on this graph, so a reach row would be the same test with the
coefficient doubled); the outcome y = impostor win. Linear models (2SLS), both fixed effects
partialled out (Frisch-Waugh: alternating within-transformations; no library here absorbs two
non-nested sets of effects, and a dense dummy design of the paper's 90,720 games is ~1 GB).
With one instrument and one regressor, 2SLS is the ratio of the reduced form to the first
stage, beta = pi_y / pi_x; its CR1 covariance by experiment (pi_y, pi_x jointly, t(G-1))
gives the first-stage F (= t^2 of pi_x), the Wald SE of beta (delta method: printed, not an
interval, since it fails under weak instruments) and the Anderson-Rubin test of beta = b:
(pi_y - b pi_x)^2 / Var(pi_y - b pi_x) ~ F(1, G-1). Its inversion (a quadratic in b) is the
AR confidence set: an interval, the whole line (instrument too weak to bound beta), or two rays
(``ar_set`` says which; ci columns empty then). Just identified, the CLR test equals AR.

Coalition conversion is not an outcome here: its paper definition (CoalEff) conditions on the
impostor being in a coalition, i.e. on centrality > 0, the regressor itself, and its
unconditional form (in a coalition and winning) is zero whenever centrality is, so either
version builds the regressor into the outcome. Exclusion is doubtful, as the paper says:
position moves the win through the descriptions the impostor has heard, not only through
centrality, and centrality is itself an effect of the outcome (a convicted impostor's ballot
is rarely shared). Read the 2SLS number as a ratio of two randomised contrasts, not a causal
effect of centrality.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from impostor_bench.analysis.stats._base import StatsUnavailable, prepared, table
from impostor_bench.analysis.stats._separation import constant_outcome
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats.network import game_metrics
from impostor_bench.analysis.stats.session import Analysis

COLUMNS = ["endogenous", "outcome", "first_stage_coef", "first_stage_f", "reduced_form_coef", "iv_coef", "iv_se",
           "ar_p", "ar_ci_low", "ar_ci_high", "ar_set", "n", "n_clusters", "method", "note"]
METHOD = "2SLS with FE_experiment + FE_word_pair, CR1 by experiment, Anderson-Rubin F(1, G-1)"


def demean_two_way(cols: np.ndarray, a: np.ndarray, b: np.ndarray, tol: float = 1e-10,
                   max_iter: int = 10_000) -> np.ndarray:
    """``cols`` (n, k) with the effects of two factors (integer codes ``a``, ``b``) projected out:
    alternating group demeaning, which converges to the residual of a regression on both sets
    of dummies (Guimaraes & Portugal 2010)."""
    out = np.asarray(cols, float).copy()
    na, nb = int(a.max()) + 1, int(b.max()) + 1
    ca, cb = np.bincount(a, minlength=na), np.bincount(b, minlength=nb)
    for _ in range(max_iter):
        before = out.copy()
        for codes, counts, n in ((a, ca, na), (b, cb, nb)):
            means = np.stack([np.bincount(codes, out[:, j], minlength=n) for j in range(out.shape[1])], 1)
            out -= (means / counts[:, None])[codes]
        if np.max(np.abs(out - before)) < tol * (1 + np.max(np.abs(out))):
            return out
    raise StatsUnavailable("iv_sensitivity: the two-way within transformation did not converge")


def n_pair_effects(a: np.ndarray, b: np.ndarray) -> int:
    """Word-pair effects identified beside the experiment effects: pairs minus connected
    components of the experiment-pair graph (the parameters the CR1 correction counts; the
    experiment effects are nested in the clusters and, as usual, not counted)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    na, nb = int(a.max()) + 1, int(b.max()) + 1
    graph = coo_matrix((np.ones(len(a)), (a, na + b)), shape=(na + nb, na + nb))
    n_comp = connected_components(graph, directed=False)[0]
    return nb - n_comp


def ar_set(pi_y: float, pi_x: float, v_yy: float, v_xy: float, v_xx: float, crit: float) -> tuple[float, float, str]:
    """The Anderson-Rubin confidence set {b: (pi_y - b pi_x)^2 <= crit Var(pi_y - b pi_x)} as
    (low, high, kind): kind "interval" [low, high]; "whole line" (-inf, inf); "two rays"
    (-inf, low] U [high, inf) (low/high returned, the printed interval columns left empty)."""
    a = pi_x ** 2 - crit * v_xx
    bq = -2 * (pi_x * pi_y - crit * v_xy)
    c = pi_y ** 2 - crit * v_yy
    disc = bq ** 2 - 4 * a * c
    if a > 0:  # bounded: the set holds the ratio pi_y / pi_x, so disc >= 0
        r = np.sqrt(max(disc, 0.0))
        return (-bq - r) / (2 * a), (-bq + r) / (2 * a), "interval"
    if disc <= 0 or a == 0:
        return -np.inf, np.inf, "whole line"
    r = np.sqrt(disc)
    lo, hi = sorted(((-bq - r) / (2 * a), (-bq + r) / (2 * a)))
    return lo, hi, "two rays"


def iv_fit(y: np.ndarray, x: np.ndarray, z: np.ndarray, experiment: np.ndarray, pair: np.ndarray,
           alpha: float = 0.05) -> dict:
    """Just-identified 2SLS of ``y`` on ``x`` instrumented by ``z`` with two-way fixed effects,
    CR1 by experiment: first stage, reduced form, beta, its Wald SE, the AR test of beta = 0
    and the AR set (module docstring)."""
    e = pd.factorize(pd.Series(experiment, dtype=object))[0]
    q = pd.factorize(pd.Series(pair, dtype=object))[0]
    G = int(e.max()) + 1
    if G < 3:
        raise StatsUnavailable(f"iv_sensitivity: {G} experiments; need at least 3")
    zt, xt, yt = demean_two_way(np.column_stack([z, x, y]), e, q).T
    szz = float(zt @ zt)
    if szz < 1e-12 * len(z):
        raise StatsUnavailable("iv_sensitivity: the instrument does not vary within experiments and pairs")
    pi_x, pi_y = float(zt @ xt) / szz, float(zt @ yt) / szz
    scores = np.column_stack([zt * (yt - pi_y * zt), zt * (xt - pi_x * zt)]) / szz
    s = np.stack([np.bincount(e, scores[:, j], minlength=G) for j in range(2)], 1)
    n, k = len(y), 1 + n_pair_effects(e, q)
    if n <= k + 1:
        raise StatsUnavailable(f"iv_sensitivity: {n} games for {k} parameters")
    V = (G / (G - 1)) * ((n - 1) / (n - k)) * (s.T @ s)
    v_yy, v_xy, v_xx = float(V[0, 0]), float(V[0, 1]), float(V[1, 1])
    crit = float(stats.f.ppf(1 - alpha, 1, G - 1))
    first_f = pi_x ** 2 / v_xx if v_xx > 0 else np.nan
    beta = pi_y / pi_x if pi_x != 0 else np.nan
    var_beta = (v_yy - 2 * beta * v_xy + beta ** 2 * v_xx) / pi_x ** 2 if pi_x != 0 else np.nan
    ar0 = pi_y ** 2 / v_yy if v_yy > 0 else np.nan
    if float(yt @ yt) < 1e-12 * len(y):  # a constant outcome: pi_y = 0 with variance 0, not an estimate
        return {"first_stage_coef": pi_x, "first_stage_f": first_f, "reduced_form_coef": np.nan, "iv_coef": np.nan,
                "iv_se": np.nan, "ar_p": np.nan, "ar_ci_low": np.nan, "ar_ci_high": np.nan, "ar_set": "",
                "n": n, "n_clusters": G,
                "why": constant_outcome(y) or "not estimable: the outcome does not vary within experiments and word "
                                              "pairs (reduced form, 2SLS and AR test have nothing to measure)"}
    lo, hi, kind = ar_set(pi_y, pi_x, v_yy, v_xy, v_xx, crit)
    return {"first_stage_coef": pi_x, "first_stage_f": first_f, "reduced_form_coef": pi_y, "iv_coef": beta,
            "iv_se": float(np.sqrt(var_beta)) if np.isfinite(var_beta) and var_beta >= 0 else np.nan,
            "ar_p": float(stats.f.sf(ar0, 1, G - 1)) if np.isfinite(ar0) else np.nan,
            "ar_ci_low": lo if kind != "two rays" else np.nan, "ar_ci_high": hi if kind != "two rays" else np.nan,
            "ar_set": kind if kind != "two rays" else f"two rays: (-inf, {lo:.4g}] U [{hi:.4g}, inf)",
            "n": n, "n_clusters": G}


@table("iv_sensitivity", columns=COLUMNS,
    title=("IV-style sensitivity (B.3): impostor win on its vote-network centrality, instrumented by speaking "
           "late (positions 2/3 vs 0/1), FE_experiment + FE_word_pair, Anderson-Rubin set"),
    section="robustness",
    inference=(infer("iv_ar", ("endogenous", "outcome"), "iv_coef", ("ar_ci_low", "ar_ci_high"), "ar_p",
                     method="method"),),
)
def iv_sensitivity(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """One row: the first stage (F), the reduced form, 2SLS and its Anderson-Rubin test and set."""
    prep = prepared(data, need_players=True)
    if "pair_id" not in prep.games.columns:
        raise StatsUnavailable("games table has no pair_id: FE_word_pair needs it")
    centrality = game_metrics(prep)["centrality"][np.arange(prep.n), prep.imp_seat]
    ok = (prep.imp_pos >= 0) & np.isfinite(centrality) & prep.games["pair_id"].notna().to_numpy()
    dropped = int(prep.n - ok.sum())
    z = (prep.imp_pos[ok] >= 2).astype(float)
    fit = iv_fit(prep.y[ok].astype(float), centrality[ok], z, prep.exp_code[ok],
                 prep.games["pair_id"].astype(object).to_numpy()[ok], config.alpha)
    why = fit.pop("why", "")
    notes = [why] if why else []
    notes += ["exploratory: the exclusion restriction (position moves the win only through centrality) is doubtful "
             "and centrality also follows the outcome (docs/analysis.md)"]
    if dropped:
        notes.append(f"{dropped} game(s) left out: no counted impostor ballot (no centrality) or no position/pair")
    if np.isfinite(fit["first_stage_f"]) and fit["first_stage_f"] < 10:
        notes.append(f"weak instrument (first-stage F = {fit['first_stage_f']:.2f} < 10): read the AR set, not iv_se")
    return pd.DataFrame([{"endogenous": "centrality", "outcome": "imp_win", **fit, "method": METHOD,
                          "note": "; ".join(notes)}])
