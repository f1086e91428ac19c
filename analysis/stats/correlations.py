"""Sections 3.2-3.3: cross-model correlations of the model-level headline metrics.

Pearson r and Spearman rho (scipy.stats, what pingouin.corr calls: the same bits); with the
paper's methods, Pearson's p and Fisher-z CI from pingouin.corr and pingouin.compute_esci
(unrounded; pingouin.corr rounds its CI to 2 decimals). pingouin is imported only then: with
seaborn, xarray and matplotlib behind it, it held 47 MB of the report's peak.
With a handful of models the asymptotic p-values are wrong (rho = 1 among 6 models
came out as p = 0.0), so ``spearman_p`` (and the extra ``pearson_p_perm``) are
permutation p-values (:func:`permutation_p`): exact enumeration of all n! pairings
for n <= EXACT_MAX_N, else ``config.permutation_reps`` seeded draws with
``scipy.stats.permutation_test`` (``p_method`` says which); ``spearman_p_asymptotic``
keeps the old t-approximation. ``pearson_p`` stays the t-test p (exact under normality).
Extra columns: OLS slope / intercept of y on x (x, y in the table's units), and the
top-half minus bottom-half difference in mean y when models are split at the median
of x (3.2's "+8.6 pp"; the middle model of an odd count is left out).

**No p-values or intervals by default.** The model-level metrics of different
models are computed from shared games (a homogeneous game gives one model both its
impostor win and its majority ballots; a cross-play game gives two models opposite
outcomes), so across models they are correlated by construction even when every model
is identical: in the calibration matrix's global null (nine identical models, 120
experiments x 40 games) the permutation Spearman p rejected in 29% of runs. Neither the
permutation of model labels nor the Fisher-z interval (models as an iid sample) holds
under this design, so ``pearson_ci_low/high`` and every p column are left empty and
``inference`` says why; r, rho, the slope and the half split are descriptive.
``StatsConfig.paper_methods`` restores the paper's p-values and Fisher-z intervals,
labelled as the paper's.
Measures that are positive affine transforms of each other across models (centrality,
reach and brokerage are proportional) give identical rows: one row is kept, under the
first measure, and ``x_equivalent`` names the others. With nine models these are
descriptive only.
"""

from __future__ import annotations

import functools
import itertools
import warnings

import numpy as np
import pandas as pd
from scipy import stats

from impostor_bench.analysis.stats._base import StatsUnavailable, note, table
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats.coordination import coordination
from impostor_bench.analysis.stats.headline import headline
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig

PAIRS = [
    ("centrality", "coal_eff_pct"),
    ("reach", "coal_eff_pct"),
    ("brokerage", "coal_eff_pct"),
    ("det_acc_pct", "imp_win_pct"),
    ("det_acc_pct", "maj_win_pct"),
    ("det_acc_pct", "maj_win_games_pct"),  # Table 1's Maj Win as the paper defines it (over games)
]

NO_INFERENCE = ("not computed: models share games, so their metrics are correlated by construction "
                "(29% false positives under a global null); descriptive only")

#: Largest n whose n! pairings are enumerated exactly (9! = 362,880).
EXACT_MAX_N = 9


def _abs_pearson(x, y, axis=-1):
    xc = x - x.mean(axis=axis, keepdims=True)
    yc = y - y.mean(axis=axis, keepdims=True)
    return np.abs((xc * yc).sum(axis=axis)) / np.sqrt((xc * xc).sum(axis=axis) * (yc * yc).sum(axis=axis))


@functools.lru_cache(maxsize=2)
def _all_permutations(n: int) -> np.ndarray:
    """Every permutation of range(n), one per row (n! x n; 3 MB at n = 9)."""
    return np.array(list(itertools.permutations(range(n))), dtype=np.int8)


def permutation_p(x, y, rank: bool, reps: int = 9_999, seed: int = 0) -> tuple[float, str]:
    """Two-sided permutation p, P(|r*| >= |r|), of Pearson r (``rank=False``) or Spearman rho
    (``rank=True``, average ranks for ties). Returns (p, method).

    n <= EXACT_MAX_N: all n! pairings enumerated (numpy; scipy's exact enumeration takes
    minutes at n = 7-9). Larger n: ``reps`` seeded draws, scipy.stats.permutation_test on |r|,
    p = (1 + #{|r*| >= |r|}) / (1 + reps).
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if rank:
        x, y = stats.rankdata(x), stats.rankdata(y)
    n = len(x)
    if n > EXACT_MAX_N:
        res = stats.permutation_test((x, y), _abs_pearson, permutation_type="pairings", vectorized=True,
                                     alternative="greater", n_resamples=reps,
                                     random_state=np.random.default_rng(seed))
        return float(res.pvalue), f"monte_carlo_{reps}"
    xc, yc = x - x.mean(), y - y.mean()
    obs = abs(float(xc @ yc))
    null = np.abs(yc[_all_permutations(n)] @ xc)  # the numerator of r; its denominator is invariant
    tol = 1e-9 * float(np.sqrt((xc @ xc) * (yc @ yc)))
    return float(np.mean(null >= obs - tol)), "exact"


def correlate(x, y, alpha: float = 0.05, reps: int = 9_999, seed: int = 0, inference: bool = True) -> dict:
    """r, rho, the OLS line, the half split and the p-value method; with ``inference`` also the
    p-values and Pearson's Fisher-z interval (pingouin)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    n = int(len(x))
    row: dict[str, object] = {"n": n}
    if n < 4 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return row
    slope, intercept = np.polyfit(x, y, 1)
    order = np.argsort(x, kind="stable")
    h = n // 2
    top_bottom = float(y[order[n - h:]].mean() - y[order[:h]].mean())
    sp_p, method = permutation_p(x, y, rank=True, reps=reps, seed=seed)
    row.update({"pearson_r": float(stats.pearsonr(x, y).statistic), "pearson_ci_low": np.nan,
                "pearson_ci_high": np.nan, "spearman_rho": float(stats.spearmanr(x, y).statistic),
                "spearman_p": np.nan, "pearson_p": np.nan, "pearson_p_perm": np.nan, "p_method": method,
                "spearman_p_asymptotic": np.nan, "ols_slope": float(slope), "ols_intercept": float(intercept),
                "top_minus_bottom_half": top_bottom})
    if inference:
        import pingouin as pg

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pe = pg.corr(x, y, method="pearson")
            sp = pg.corr(x, y, method="spearman")
        lo, hi = pg.compute_esci(stat=row["pearson_r"], nx=n, ny=n, eftype="r", confidence=1 - alpha, decimals=12)
        row.update({"pearson_ci_low": float(lo), "pearson_ci_high": float(hi), "spearman_p": sp_p,
                    "pearson_p": float(pe["p_val"].iloc[0]),
                    "pearson_p_perm": permutation_p(x, y, rank=False, reps=reps, seed=seed)[0],
                    "spearman_p_asymptotic": float(sp["p_val"].iloc[0])})
    return row


def _affine_same(a, b) -> bool:
    """True when b = c + k a with k > 0 over the models (then every row with the same y is identical)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if not np.array_equal(np.isfinite(a), np.isfinite(b)):
        return False
    ok = np.isfinite(a)
    a, b = a[ok], b[ok]
    if len(a) < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return False  # degenerate: no correlation is computed for either, nothing to fold
    return bool(np.corrcoef(a, b)[0, 1] > 1 - 1e-12)


@table("correlations",
    title="Cross-model correlations (Sections 3.2-3.3)",
    section="robustness",
    inference=(
        infer("pearson", ("x", "y"), "pearson_r", ("pearson_ci_low", "pearson_ci_high"),
          method="inference"),
        infer("spearman", ("x", "y"), "spearman_rho", p="spearman_p", method="inference"),
    ),
)
def correlations(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    h = headline(data, config)
    if len(h) == 0:
        raise StatsUnavailable("headline table is empty")
    c = coordination(data, config)
    if len(c):
        h = h.drop(columns=[x for x in ("brokerage",) if x in h.columns]).merge(
            c[["model", "brokerage"]], on="model", how="left")
    rows: list[dict] = []
    reps = max(int(config.permutation_reps), 999)
    for x, y in PAIRS:
        if x not in h.columns or y not in h.columns:
            continue
        same = next((r for r in rows if r["y"] == y and _affine_same(h[r["x"]], h[x])), None)
        if same is not None:
            same["x_equivalent"] = ", ".join(filter(None, [same.get("x_equivalent"), x]))
            continue
        paper = bool(getattr(config, "paper_methods", False))
        r = correlate(h[x], h[y], config.alpha, reps=reps, seed=config.seed, inference=paper)
        if "pearson_r" not in r:
            note(data, f"correlations: {x} vs {y} needs >= 4 models with varying values (have {r['n']})")
        elif paper:
            r["inference"] = "paper (models as independent units; does not hold under this design)"
        else:
            r["inference"] = NO_INFERENCE
        rows.append({"x": x, "y": y, **r, "x_equivalent": None})
    folded = [r for r in rows if r.get("x_equivalent")]
    for r in folded:
        note(data, f"correlations: {r['x_equivalent']} equal(s) {r['x']} up to a positive scale across models "
                   f"(identical correlations with {r['y']}); reported once, in the {r['x']} row")
    return pd.DataFrame(rows)
