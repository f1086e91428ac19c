"""Cross-model correlations (Appendix M.2, M.4, M.5) with a design-bootstrap interval.

Estimand. Pearson r among *these* models' true per-model values: the correlation, across the
fixed list of models, of the values each per-model quantity would take on the expected outcomes
of this design (its pseudo-population), conditional on the models, the word list and the
schedule (``design_boot``'s estimand). What varies on a re-run is each model's measurement error,
and the errors of different models and of different quantities are dependent: models share games
(a team game seats four of them) and experiments, and two quantities of one model are computed
from the same games.

Resampling. Each per-model quantity is a ``_wild.Est``: its replicates come from the design
bootstrap's multipliers (one Rademacher draw per experiment and replicate, shared by every
quantity and model), so a replicate recomputes every model's values from one coherent draw of
the experiments' deviations and r is recomputed across models within it. A replicate's
deviation is scaled by ``sqrt(G/(G-K))`` per model (the residuals about the K-parameter design
fit shrink by about (G-K)/G: ``design_boot.t_halfwidth``), and by t(df)/z with df the models' median G - K
(the per-model intervals' t(G - K)), since the variance rests on few experiments.

Interval: test inversion (Carpenter 1999) on Fisher's z. Measurement error attenuates r toward the
errors' own correlation, by an amount that depends on the true r, so r's distribution is not a
shift of one shape and a basic or percentile interval misses on the side of |r| = 1 (84% coverage
at a true r of -0.88, the plain basic interval). A bootstrap world is built for each candidate c:
true values with the spread the models' values have net of error (the observed across-model
variance less the replicates' mean across-model variance of the deviations) and correlation c,
plus each replicate's deviations; c is in the interval when the observed z(r) lies within the
central 1 - alpha of that world's z(r*). Calibration (``analysis/calibration_corr.py``,
``benchmarks/model_corr_calibration.py``, docs/analysis.md): coverage, bias and width at nine models
on the design's real units, a null and a planted strong correlation. The interval is printed at the
number of models it was calibrated at (``CALIBRATED_MODELS``); with fewer, r alone with the reason.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

from impostor_bench.analysis.stats._base import StatsUnavailable, memo, prepared, table
from impostor_bench.analysis.stats._wild import Est, Wild
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats.judge_labels import strategy_measures
from impostor_bench.analysis.stats.language import language_measures
from impostor_bench.analysis.stats.rounds import round_moves
from impostor_bench.analysis.stats.rounds_trust import recovery_units
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.team_ballots import ballot_measures

METHOD = ("design bootstrap (experiment-level wild multipliers, every model's value recomputed per replicate), "
          "test inversion on Fisher's z with the models' error-free spread")
#: fewest models with both values for an interval (r over three points has one degree of freedom)
MIN_MODELS = 5
_CLIP = 1 - 1e-9


class Corr(NamedTuple):
    r: float
    ci_low: float
    ci_high: float
    n: int
    reason: str  # why there is no interval ("" when there is one)


def scaled_reps(e: Est) -> np.ndarray:
    """(R, G) replicates with each model's deviation scaled by sqrt(G/(G-K)); NaN columns where G - K < 1."""
    est = np.asarray(e.est, float)
    reps = np.asarray(e.reps, float)
    g = np.asarray(e.n_exp, float)
    k = np.ones(len(est)) if e.n_par is None else np.asarray(e.n_par, float)
    df = g - k
    with np.errstate(invalid="ignore", divide="ignore"):
        f = np.where(df >= 1, np.sqrt(g / np.where(df >= 1, df, 1.0)), np.nan)
    return est[None, :] + (reps - est[None, :]) * f[None, :]


def pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r of each row pair of (R, n) arrays."""
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (xc * yc).sum(1) / np.sqrt((xc * xc).sum(1) * (yc * yc).sum(1))


def corr_interval(x: Est, y: Est, alpha: float, min_models: int = MIN_MODELS, corrected: bool = True) -> Corr:
    """r across the models with both estimates, and its design-bootstrap interval (module docstring)."""
    ex, ey = np.asarray(x.est, float), np.asarray(y.est, float)
    ok = np.isfinite(ex) & np.isfinite(ey)
    n = int(ok.sum())
    if n < 3 or np.ptp(ex[ok]) == 0 or np.ptp(ey[ok]) == 0:
        return Corr(np.nan, np.nan, np.nan, n, f"needs >= 3 models with both values varying (have {n})")
    r = float(np.corrcoef(ex[ok], ey[ok])[0, 1])
    if n < min_models:
        return Corr(r, np.nan, np.nan, n, f"no interval below {min_models} models (have {n})")
    rx, ry = scaled_reps(x)[:, ok], scaled_reps(y)[:, ok]
    if not len(rx) or not len(ry):
        return Corr(r, np.nan, np.nan, n, "no interval: no bootstrap replicates (--bootstrap-reps 0)")
    if not (np.isfinite(rx).all() and np.isfinite(ry).all()):
        return Corr(r, np.nan, np.nan, n, "no interval: a model's value rests on too few experiments to resample")
    if not (np.ptp(rx, axis=0).any() and np.ptp(ry, axis=0).any()):
        return Corr(r, np.nan, np.nan, n, "no interval: no variation between experiments (nothing to resample)")
    # a variance from G - K experiments: the replicates' spread widened by t(df)/z, df the models' median G - K
    # (the per-model intervals use t(G - K): ``design_boot.t_halfwidth``)
    df = float(np.median(np.concatenate([_df(x)[ok], _df(y)[ok]])))
    kappa = float(stats.t.ppf(1 - alpha / 2, df) / stats.norm.ppf(1 - alpha / 2))
    rx = ex[ok][None, :] + kappa * (rx - ex[ok][None, :])
    ry = ey[ok][None, :] + kappa * (ry - ey[ok][None, :])
    return _interval(r, ex[ok], ey[ok], rx, ry, alpha, n, corrected)


def _df(e: Est) -> np.ndarray:
    return np.asarray(e.n_exp, float) - (1.0 if e.n_par is None else np.asarray(e.n_par, float))


def _cov_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Across-model sample covariance of each row pair of (R, n) arrays."""
    return ((x - x.mean(1, keepdims=True)) * (y - y.mean(1, keepdims=True))).sum(1) / (x.shape[1] - 1)


def _interval(r, ex, ey, rx, ry, alpha, n, corrected) -> Corr:
    dx, dy = rx - ex[None, :], ry - ey[None, :]
    z = np.arctanh(np.clip(r, -_CLIP, _CLIP))
    if not corrected:  # the plain basic interval (kept for the calibration study's comparison)
        rs = pearson_rows(rx, ry)
        rs = rs[np.isfinite(rs)]
        if len(rs) < 20:
            return Corr(r, np.nan, np.nan, n, "no interval: the replicates leave a value constant across models")
        q_lo, q_hi = np.quantile(np.arctanh(np.clip(rs, -_CLIP, _CLIP)), [alpha / 2, 1 - alpha / 2])
        return Corr(r, float(np.tanh(2 * z - q_hi)), float(np.tanh(2 * z - q_lo)), n, "")
    # test inversion: the bootstrap world's truth has the models' true spread (the observed spread less
    # the errors' share) and correlation c; c is in the interval when r is inside the central 1 - alpha
    # of the r that world's replicates give
    tx, ty = _denoised(ex, dx), _denoised(ey, dy)
    if np.ptp(tx) == 0 or np.ptp(ty) == 0:
        return Corr(r, np.nan, np.nan, n, "no interval: the models' values differ no more than their measurement error")
    a = (tx - tx.mean()) / tx.std()
    res = ty - ty.mean()
    res = res - (res @ a) / (a @ a) * a
    b = res / res.std() if res.std() > 0 else np.zeros_like(a)
    grid = np.tanh(_GRID)
    zs = np.arctanh(np.clip(_world_r(tx, dx, ty.std() * a, ty.std() * b, dy, grid), -_CLIP, _CLIP))  # (R, C)
    q_lo, q_hi = np.nanquantile(zs, [alpha / 2, 1 - alpha / 2], axis=0)
    # margin of z inside the world's central range (>= 0: c is in the interval)
    margin = np.where(np.isfinite(zs).sum(0) >= 20, np.minimum(z - q_lo, q_hi - z), -np.inf)
    inside = np.flatnonzero(margin >= 0)
    if not len(inside):
        return Corr(r, np.nan, np.nan, n, "no interval: no correlation of the true values reproduces r")
    return Corr(r, float(np.tanh(_edge(margin, inside[0], -1))), float(np.tanh(_edge(margin, inside[-1], 1))), n, "")


def _edge(margin: np.ndarray, i: int, step: int) -> float:
    """Fisher z where the margin crosses 0 between grid point i (inside) and its outer neighbour,
    by linear interpolation (the grid's edge where there is no neighbour): a bound at the last grid
    point inside would narrow the interval by half a grid step on each side on average."""
    j = i + step
    if j < 0 or j >= len(margin) or not np.isfinite(margin[j]):
        return float(_GRID[i])
    t = margin[i] / (margin[i] - margin[j])
    return float(_GRID[i] + t * (_GRID[j] - _GRID[i]))


def _world_r(tx, dx, sa, sb, dy, grid) -> np.ndarray:
    """(R, C) r of each replicate in the world with correlation c of each ``grid`` entry, where
    X* = tx + dx and Y*(c) = c sa + sqrt(1 - c^2) sb + dy (the mean drops out of r): the across-model
    moments are bilinear in c, so every c comes from the replicates' moments at once."""
    X = tx[None, :] + dx
    cov = lambda u, v: _cov_rows(np.broadcast_to(u, dx.shape), np.broadcast_to(v, dx.shape))  # noqa: E731
    c, s = grid[None, :], np.sqrt(1 - grid * grid)[None, :]
    sxy = c * cov(X, sa)[:, None] + s * cov(X, sb)[:, None] + cov(X, dy)[:, None]
    vy = (c * c * cov(sa, sa)[:, None] + s * s * cov(sb, sb)[:, None] + cov(dy, dy)[:, None]
          + 2 * c * s * cov(sa, sb)[:, None] + 2 * c * cov(sa, dy)[:, None] + 2 * s * cov(sb, dy)[:, None])
    with np.errstate(invalid="ignore", divide="ignore"):
        return sxy / np.sqrt(cov(X, X)[:, None] * vy)


#: correlations tried by the test inversion, every 0.02 on Fisher's z (r from -0.999 to 0.999)
_GRID = np.linspace(-3.8, 3.8, 381)


def _denoised(e: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``e`` shrunk about its mean so its across-model variance is the observed less the errors' share."""
    s2 = float(np.var(e, ddof=1))
    m2 = float(_cov_rows(d, d).mean())
    lam = np.sqrt(max(0.0, s2 - m2) / s2) if s2 > 0 else 0.0
    return e.mean() + lam * (e - e.mean())


def fisher_naive(r: float, n: int, alpha: float) -> tuple[float, float]:
    """The i.i.d. Fisher-z interval (models as a random sample, values measured without error):
    the comparison the calibration study shows failing under this design."""
    if n <= 3 or not np.isfinite(r):
        return np.nan, np.nan
    h = stats.norm.ppf(1 - alpha / 2) / np.sqrt(n - 3)
    z = np.arctanh(np.clip(r, -_CLIP, _CLIP))
    return float(np.tanh(z - h)), float(np.tanh(z + h))


# ---------------------------------------------------------------------------------------------- the table

#: (item, section, quantity, x, y): Pearson r across models of two per-model columns (Table 1 / Table 12)
CORRELATIONS = [
    ("corr_betrayal_capability", "M.4", "r(Betrayal Rate, capability = Table 1 Imp Win) across models",
     "betrayal_pct", "imp_win_pct"),
    ("corr_recovery_trust", "M.4", "r(Trust Recovery, Trust Form.) across models",
     "trust_recovery_pct", "trust_form_pct"),
    ("corr_recovery_betrayal", "M.4", "r(Trust Recovery, Betrayal Rate) across models",
     "trust_recovery_pct", "betrayal_pct"),
    ("corr_gap_trust", "M.2", "r(Coord. Gap, Trust Form.) across models", "coord_gap_paper_pp", "trust_form_pct"),
    ("corr_convergence_collab", "M.5", "r(convergence efficiency, Collab. Success) across models",
     "convergence_eff_pct", "collab_success_pct"),
]
#: the number of models the interval was calibrated at (benchmarks/model_corr_calibration.md); fewer: r only
CALIBRATED_MODELS = 9
COLUMNS = ["item", "section", "quantity", "x", "y", "r", "ci_low", "ci_high", "n", "method", "reason"]


def model_estimates(data, config) -> dict:
    """Each per-model quantity of ``CORRELATIONS`` as a ``_wild.Est`` over one draw of multipliers (memoised)."""
    return memo(data, ("model_corr_estimates", config.seed, config.bootstrap_reps), lambda: _estimates(data, config),
                per_table=True)


def _estimates(data, config) -> dict:
    prep = prepared(data, need_players=True)
    assert prep.model is not None
    models = sorted(set(prep.model[prep.present]) - {None}, key=str)  # team_dynamics' rows
    w = Wild(data, prep, config, models)
    out = dict(ballot_measures(data, config, models)[1])
    out.update(language_measures(data, config, models)[1])
    games = pd.DataFrame({"gi": np.arange(prep.n), "model": prep.imp_model, "mode": prep.mode,
                          "exp": prep.exp_code, "y": prep.y})
    out["imp_win_pct"] = w.mean(games, "y", 100)
    try:
        units = recovery_units(round_moves(data))
        gi = pd.Index(prep.games["game_id"].astype(object)).get_indexer(units["game_id"].astype(object))
        units = units[gi >= 0].assign(gi=gi[gi >= 0])
        units["exp"] = prep.exp_code[units["gi"].to_numpy()]
        out["trust_recovery_pct"] = w.mean(units, "recovered", 100)
    except StatsUnavailable:
        pass
    strat = strategy_measures(data, prep, w, out.get("collab_success_pct"))
    if "strategy_align_pct" in strat and "lsm_seen_pct" in out:
        a, b = strat["strategy_align_pct"], out["lsm_seen_pct"]
        n_par = None if a.n_par is None or b.n_par is None else np.maximum(a.n_par, b.n_par)
        out["convergence_eff_pct"] = Est((a.est + b.est) / 2, (a.reps + b.reps) / 2, np.minimum(a.n_exp, b.n_exp),
                                         n_par=n_par)
    return {"models": models, **out}


def correlation_rows(data, config) -> list[dict]:
    """One row per ``CORRELATIONS`` entry: r over the models with both values and, at the calibrated
    number of models, its interval (module docstring); otherwise the reason there is none."""
    est = model_estimates(data, config)
    rows = []
    for item, sec, qty, x, y in CORRELATIONS:
        row = {"item": item, "section": sec, "quantity": qty, "x": x, "y": y, "r": np.nan, "ci_low": np.nan,
               "ci_high": np.nan, "n": 0, "method": "", "reason": ""}
        if x not in est or y not in est:
            row["reason"] = f"{x if x not in est else y} is not in these data"
            rows.append(row)
            continue
        c = corr_interval(est[x], est[y], config.alpha, min_models=CALIBRATED_MODELS)
        row.update(r=c.r, ci_low=c.ci_low, ci_high=c.ci_high, n=c.n)
        if np.isfinite(c.ci_low):
            row["method"] = METHOD + f"; {c.n} models"
            row["reason"] = (f"r is descriptive; the interval is for r among these {c.n} models' true values "
                             f"(rests on {c.n} points)")
        elif np.isfinite(c.r):
            row["method"] = "not computed: " + c.reason.removeprefix("no interval: ")
            few = c.n < CALIBRATED_MODELS
            row["reason"] = (f"no interval: calibrated at {CALIBRATED_MODELS} models, these data have {c.n} (models "
                             "share games, so no i.i.d. interval holds); r is descriptive" if few else c.reason)
        else:
            empty = [v for v in (x, y) if not np.isfinite(np.asarray(est[v].est, float)).any()]
            row["reason"] = f"{' and '.join(empty)} has no value in these data" if empty else c.reason
        rows.append(row)
    return rows


@table("model_correlations", columns=COLUMNS,
    title=("Cross-model correlations of Appendix M (M.2, M.4, M.5): Pearson r over the models (n = how few points "
           "it rests on) and, at the calibrated nine models, a design-bootstrap interval for r among these models' "
           "true values"),
    section="beyond",
    inference=(infer("corr", ("item",), "r", ("ci_low", "ci_high"), method="method"),),
)
def model_correlations(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """One row per cross-model correlation the paper reports."""
    return pd.DataFrame(correlation_rows(data, config), columns=COLUMNS)
