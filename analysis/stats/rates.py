"""Design-based intervals of rates (Table 1, balance, win rates by model x mode / difficulty).

A rate here is a ratio of totals, ``R = sum a / sum b`` over the games (or seats, or
ballots) of a model, where the experiments are the independent units of the design: the
games of an experiment share its experiment effect, and a homogeneous game's three
majority seats share one outcome. Games are not independent, so the Wilson interval of
the old Table 1 (games as Bernoulli trials) covered 60-91% under the design's dependence.

The interval printed where the design allows it (``rate_columns`` with ``design``) is
composition-adjusted (model-assisted, as a GREG variance): the design fixes which models, mode
and tier every experiment has, so the between-experiment spread that composition explains is
not sampling error, yet CR1's ratio residuals ``a_e - R b_e`` count it (1.2-1.6x too wide at
120 x 40 in the planted calibration). ``RateCells`` fits the design logit (mode, tier, impostor
model, majority composition: ``_marginal.design_matrix``) plus the rate's group indicator on
experiment x design x key cells of the rate's outcome (games, seats, ballots or pairs, each on
its game's design row; a homogeneous game's three majority seats are one cell of three trials),
so the residuals of the group sum to zero as CR1's do; the rate's influence per experiment is
its cells' residuals over ``n R (1 - R)`` (logit scale), CR2-scaled, with a t on the
Bell-McCaffrey df (``_marginal.linear_se``), mapped back through the logit (inside [0, 1]).
Interactions the additive design misses stay in the residuals (conservative). With fewer than
``min_resid_clusters`` experiments beyond the fit's parameters, a separating fit (e.g. a rare
outcome such as majority self-declaration) or a degenerate SE, it falls back to the CR1
interval below and its method says so ("fallback from the composition-adjusted interval: why").

The fallback is the cluster-robust (CR1, experiments as clusters) interval of a binomial
GLM with an intercept only, fitted by statsmodels on experiment totals, on the logit
scale with a t distribution of G - 1 degrees of freedom (G = experiments behind the
rate), then mapped back: it stays inside [0, 1] and widens when few experiments carry
the rate. Its variance, ``G/(G-1) sum_e (a_e - R b_e)^2 / (sum b)^2``, is the textbook
linearised variance of a ratio estimator under cluster sampling. When ``R`` is 0 or 1 the
logit is undefined; the interval is then Clopper-Pearson's for G trials (each
experiment's rate lies in [0, 1] with mean R, so P(all G rates are 0) <= (1 - R)^G: the
bound holds however many games an experiment has). With one experiment, or when every
experiment has the same rate (the CR1 variance is then 0: a zero-width
interval such as 0.50 [0.50, 0.50] would read as exact), there is no estimate of the between-experiment
variation and no interval is printed ("not computed: ..." in the method column). With two
experiments an interval on t(1) (or Clopper-Pearson for 2 trials) spans about 0-100%: none is
printed either (a cross-play or team cell of the README demo has two), rather than a number
that says nothing.

The estimand is conditional on the design (the word list and schedule the seed fixes);
the calibration (``analysis/calibration.py``, docs/analysis.md) measures coverage of the
design's expected rate.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from impostor_bench.analysis.stats._base import StatsUnavailable

METHOD = "ratio of totals; CR1 by experiment, logit scale, t(G-1)"
METHOD_COMPOSITION = ("ratio of totals, composition-adjusted; CR2 residuals of the design logit by experiment, "
                      "logit scale, t(Bell-McCaffrey df)")
METHOD_EXTREME = "Clopper-Pearson over G experiments (rate 0 or 1)"
#: fewest experiments beyond the design logit's parameters (as ``StatsConfig.min_resid_clusters``)
MIN_RESID_CLUSTERS = 6


def cluster_rate(num, den, groups, alpha: float = 0.05) -> dict:
    """Estimate and interval of ``sum num / sum den`` with experiments ``groups`` as clusters.

    ``num``/``den`` are per-row numerators and denominators (e.g. wins and 1 per game), and
    ``groups`` the integer experiment code of each row. Returns ``estimate``, ``ci_low``,
    ``ci_high``, ``n_clusters`` and ``method`` (NaN limits with ``method`` naming why when no
    interval can be given)."""
    num, den, groups = np.asarray(num, float), np.asarray(den, float), np.asarray(groups, np.int64)
    if len(groups) == 0:
        return _row(np.nan, np.nan, np.nan, 0, "no data")
    a = np.bincount(groups, weights=num)
    b = np.bincount(groups, weights=den)
    keep = b > 0
    a, b = a[keep], b[keep]
    g = int(keep.sum())
    if g == 0:
        return _row(np.nan, np.nan, np.nan, 0, "no data")
    est = float(a.sum() / b.sum())
    if g < 2:
        return _row(est, np.nan, np.nan, g, "not computed: one experiment (no between-experiment variation)")
    if g < 3:  # t(1) (or Clopper-Pearson on 2 units): an interval of about 0-100%, which says nothing
        return _row(est, np.nan, np.nan, g, "not computed: two experiments (an interval on 1 df spans about "
                                            "0-100%: too few experiments to bound the rate)")
    if est <= 0.0 or est >= 1.0:
        lo, hi = proportion_confint(g if est >= 1 else 0, g, alpha=alpha, method="beta")
        return _row(est, float(lo), float(hi), g, METHOD_EXTREME)
    if np.allclose(a, est * b, rtol=0, atol=1e-9 * max(1.0, float(b.max()))):
        return _row(est, np.nan, np.nan, g, "not computed: every experiment has the same rate (no between-experiment "
                                            "variation to estimate the SE from)")
    lo, hi = logit_cluster_ci(a, b, alpha)
    return _row(est, lo, hi, g, METHOD)


def logit_cluster_ci(a: np.ndarray, b: np.ndarray, alpha: float) -> tuple[float, float]:
    """CR1 / t(G-1) interval of the rate from per-experiment totals (successes ``a`` of ``b``),
    by statsmodels' binomial GLM (one row per experiment, each its own cluster)."""
    g = len(a)
    endog = np.column_stack([a, b - a])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sm.GLM(endog, np.ones((g, 1)), family=sm.families.Binomial()).fit(
            cov_type="cluster", cov_kwds={"groups": np.arange(g), "df_correction": True}, use_t=True)
    lo, hi = np.asarray(res.conf_int(alpha=alpha))[0]
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return np.nan, np.nan
    return float(1 / (1 + np.exp(-lo))), float(1 / (1 + np.exp(-hi)))


def _row(est, lo, hi, g, method) -> dict:
    return {"estimate": est, "ci_low": lo, "ci_high": hi, "n_clusters": g, "method": method}


class RateCells:
    """Experiment x design x key cells of one outcome, for the composition-adjusted interval.

    Rows (games, seats, ballots, pairs) carry ``num`` successes of ``den`` trials, their
    experiment, their game's design row (``_marginal.design_matrix``) and their key (the rate's
    group). The rate of key k is ``S_k / n_k``; its influence per experiment is the sum of k's
    cell residuals ``s_c - n_c p_c`` under the design logit plus an indicator of k (so k's residuals
    sum to zero: the fit reproduces the rate, as the intercept does in CR1's ratio residuals
    ``a_e - R b_e``), divided by ``n_k R (1 - R)`` on the logit scale; CR2-scaled, t on the
    Bell-McCaffrey df (``_marginal.linear_se``)."""

    def __init__(self, num, den, groups, keys, design, min_resid_clusters: int = MIN_RESID_CLUSTERS):
        from impostor_bench.analysis.stats._marginal import RowDesign, full_rank_columns
        from impostor_bench.analysis.stats._regress import unique_rows

        g = pd.factorize(pd.Series(np.asarray(groups)), sort=True)[0]
        kc, self.levels = pd.factorize(pd.Series(keys, dtype=object), sort=False)
        d = design if isinstance(design, RowDesign) else RowDesign.of(np.asarray(design, float))
        # the design's full-rank columns over every row (the distinct rows weighted by sqrt(count): the
        # Gram matrix, so the pivots, of the (n, K) matrix), and its distinct rows in their order then
        count = np.bincount(d.code, minlength=len(d.rows))
        used = np.flatnonzero(count)
        reduced = d.rows[:, full_rank_columns(d.rows[used], np.sqrt(count[used]))]
        rows, order = unique_rows(reduced[used])
        code = np.full(len(d.rows), -1, np.int64)
        code[used] = order
        den = np.asarray(den, float)
        keep = den > 0
        cells, inv = unique_rows(np.column_stack([g, kc, code[d.code]])[keep])
        self.succ = np.bincount(inv, weights=np.asarray(num, float)[keep], minlength=len(cells))
        self.trials = np.bincount(inv, weights=den[keep], minlength=len(cells))
        self.gc = pd.factorize(cells[:, 0], sort=True)[0]
        self.kc = cells[:, 1].astype(np.int64)
        self.X = rows[cells[:, 2]]
        self.xrow = unique_rows(self.X)[1]  # the cells' distinct design rows (for the rank check per key)
        self.min_resid = min_resid_clusters

    def _design_of(self, inside: np.ndarray) -> np.ndarray:
        """The cells' design plus the key's indicator, less the columns that are linear combinations of
        earlier ones: ``full_rank`` of the distinct rows, each weighted by the square root of how many
        cells share it (the same Gram matrix, so the same pivots, as the pivoted QR of every cell;
        the fit needs only the span), instead of a QR of every cell for every key."""
        from impostor_bench.analysis.stats._marginal import full_rank_columns

        Xk = np.column_stack([self.X, inside.astype(float)])
        _, first, count = np.unique(self.xrow * 2 + inside, return_index=True, return_counts=True)
        return Xk[:, full_rank_columns(Xk[first], np.sqrt(count))]

    def se_df(self, k: int, est: float) -> tuple[float, float]:
        """(SE of logit(``est``), Bell-McCaffrey df) of the rate of the key with code ``k`` (its position
        in ``levels``); ``StatsUnavailable`` with the reason when the design logit cannot give them."""
        from impostor_bench.analysis.stats._marginal import cell_residuals, linear_se

        inside = self.kc == k
        Xk = self._design_of(inside)
        G, K = int(self.gc.max()) + 1, Xk.shape[1]
        if G - K < self.min_resid:
            raise StatsUnavailable(f"{G} experiments for the design logit's {K} parameters "
                                   f"(G - K < {self.min_resid})")
        res = cell_residuals(self.succ, self.trials, Xk, self.gc, self.kc)
        n_k = float(self.trials[inside].sum())
        se, df = linear_se(res, np.where(inside, 1.0 / (n_k * est * (1 - est)), 0.0))
        if not (np.isfinite(se) and se > 0 and np.isfinite(df) and df > 0):
            raise StatsUnavailable("degenerate SE of the design logit's residuals")
        return se, df

    def interval(self, k: int, est: float, alpha: float) -> tuple[float, float]:
        """Composition-adjusted (lo, hi) of the rate ``est`` (0 < est < 1) of the key with code ``k``:
        logit(est) -+ t(df) SE, mapped back."""
        se, df = self.se_df(k, est)
        crit = stats.t.ppf(1 - alpha / 2, df)
        centre = np.log(est / (1 - est))
        return float(1 / (1 + np.exp(-(centre - crit * se)))), float(1 / (1 + np.exp(-(centre + crit * se))))


def rate_columns(prefix: str, num, den, groups, keys, alpha: float, design=None,
                 min_resid_clusters: int = MIN_RESID_CLUSTERS) -> pd.DataFrame:
    """Per key: ``<prefix>_pct``, ``_ci`` (half-width, pp), ``_ci_low``/``_ci_high`` (%),
    ``_n_exp`` and ``_ci_method`` of the design-based rate interval: composition-adjusted
    (``RateCells``) when ``design`` (each row's design row: an (n, K) array or a ``_marginal.RowDesign``) is given and the design logit allows it,
    else (and with ``method`` saying why) ``cluster_rate``'s CR1 interval."""
    frame = pd.DataFrame({"k": pd.Series(keys, dtype=object), "num": np.asarray(num, float),
                          "den": np.asarray(den, float), "g": np.asarray(groups)})
    cells = None
    if design is not None and len(frame):
        cells = RateCells(frame["num"], frame["den"], frame["g"], frame["k"], design, min_resid_clusters)
        code = {k: i for i, k in enumerate(cells.levels)}
    rows = {}
    for k, part in frame.groupby("k", sort=False):
        r = cluster_rate(part["num"].to_numpy(), part["den"].to_numpy(), part["g"].to_numpy(), alpha)
        if cells is not None and r["method"] == METHOD:
            try:
                r["ci_low"], r["ci_high"] = cells.interval(code[k], r["estimate"], alpha)
                r["method"] = METHOD_COMPOSITION
            except StatsUnavailable as why:
                r["method"] = f"{METHOD} (fallback from the composition-adjusted interval: {why})"
        rows[k] = {f"{prefix}_pct": 100 * r["estimate"], f"{prefix}_ci": 50 * (r["ci_high"] - r["ci_low"]),
                   f"{prefix}_ci_low": 100 * r["ci_low"], f"{prefix}_ci_high": 100 * r["ci_high"],
                   f"{prefix}_n_exp": r["n_clusters"], f"{prefix}_ci_method": r["method"]}
    return pd.DataFrame.from_dict(rows, orient="index")
