"""Experiment-level intervals for means over any unit (pairs, ballots, descriptions).

The design bootstrap's multipliers (:func:`impostor_bench.analysis.stats.design_boot.multipliers`, one
Rademacher draw per experiment and replicate) perturb each experiment's sum of residuals
about the unit's fitted value: ``mean* = mean + sum_e xi_e r_e / n`` with
``r_e = sum_{i in e} (x_i - fit_i)``. Experiments are the independent units, whatever the
unit of the mean; every column of a table uses the same draw, so differences and ratios
of columns get their intervals from the replicate arrays (:meth:`Wild.diff`, :meth:`Wild.ratio`).

Centring. ``fit_i`` is the least-squares fit ``mu(model x mode) + tau(tier) +
beta . composition`` of the unit's value (:func:`design_fit`): the estimate's own cell, the
difficulty tier of its game and the seats each model holds in it. Every experiment of a tier
plays the same word-pair sequence, so a tier's pairs shift every rate that depends on who wins
(e.g. ``fail_paralysis_pct``: ties are a share of all games, failures of the impostor's wins)
by an amount the design fixes; and which models a model meets (its opponents and teammates in
each experiment) is fixed by the design too. Centred on the cell mean alone, both counted as
noise (the wild SD of ``fail_paralysis_pct`` was 1.47x the true SD on the global null; with the
paper's effects planted, mm-teammate premiums printed intervals 1.38x the SD's width). The
fitted parameters' leverage on a model's units (the trace of the hat matrix over them) is the
K of its ``G/(G-K)`` and ``G - K`` df.

Interval: ``estimate +- t(df) SE`` with ``SE^2 = k v0``: ``v0`` the variance
the estimate would have if its units were independent (``sum (x_i - fit_i)^2 / n^2``, many
degrees of freedom) and ``k`` its design effect, the wild variance ``SD*^2 G/(G-1)`` over
``v0``. A cell's own ``k`` rests on its G experiments (~5 for a model in one team mode at
120 x 40, where t(4) made intervals 1.4x wider than the SD called for), so the cells of one
column (the models of a table) share theirs by empirical Bayes, as limma moderates
gene-wise variances (Smyth 2004, ``squeezeVar``/``fitFDist``): the ``k``s are scaled-F
around a common ``k0`` with prior df ``d0`` estimated from their spread; each cell's
``k~ = (d0 k0 + d k) / (d0 + d)`` on ``d0 + d`` df (d = G - 1). Moderation assumes the models'
design effects are exchangeable, which this design breaks when one model's experiments are
noisier than the rest: squeezed toward the others, such a model covered 81-93% at d = 4-30. So a
cell whose own ``k`` is above ``k0`` (the cells moderation would narrow) gets the wider of its own
t(d) interval and the moderated one; a cell below ``k0`` gets the moderated one (its ``k`` only
raised). Outlying models then cover 94-95% at d = 4-10 (2-8x noisier), the others 96%, at
1.08-1.15x the true SD's width (the own t(4) interval: 1.4x). Design effects that differ between
models give ``d0 ~ 0``, the cell's own t(G-1) interval. NaN below two
experiments, and NaN (not a zero-width interval) when the replicates do not vary: every
experiment's residual is 0, e.g. a rate of 0 or 100% in every experiment, so there is
nothing to estimate the SD from. A mean's interval stays in the range of its
values, a difference's in the range of differences (a teammate premium within [-100, 100] pp).
"""

from __future__ import annotations

import warnings

from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import special, stats

from impostor_bench.analysis.stats._base import note
from impostor_bench.analysis.stats._regress import unique_rows
from impostor_bench.analysis.stats.design_boot import multipliers, t_halfwidth


#: Why an estimate prints no interval (:meth:`Wild.note_not_computed`)
FEW = "too few experiments behind the estimate (G - K < 1: e.g. one or two, with a tier to centre on)"
FLAT = "no variation between experiments (e.g. 0 or 100% in every one)"


class Est(NamedTuple):
    """Estimates (G,), replicates (R, G) and experiments behind each estimate (G,)."""

    est: np.ndarray
    reps: np.ndarray
    n_exp: np.ndarray
    low_bound: float = -np.inf  # the range of the unit values: a mean's interval stays inside it
    high_bound: float = np.inf
    v0: np.ndarray | None = None  # (G,) variance if the units were independent (None: no moderation)
    n_par: np.ndarray | None = None  # (G,) parameters fitted to centre its residuals (None: 1)
    exps: np.ndarray | None = None  # (E, G) bool: the experiments behind each estimate


class Wild:
    """Means per model with replicate arrays; ``models`` fixes the row order."""

    tier: np.ndarray | None = None  # (N,) tier code of each game (None: no tier in the centring)
    comp: np.ndarray | None = None  # (N, models) seats each model holds in each game (None: no composition)

    def __init__(self, data, prep, config, models):
        self.data = data
        self.models = list(models)
        self.index = pd.Index(self.models, dtype=object)  # a model's row, by hashing
        self.M = multipliers(data, prep, config)
        self.E = len(prep.exp_names)
        self.alpha = config.alpha
        if prep.difficulty is not None:
            self.tier = pd.factorize(pd.Series(prep.difficulty, dtype=object).fillna("<NA>"))[0]
        if prep.model is not None and prep.present is not None:
            seat = np.array(prep.model, dtype=object)
            seat[~prep.present] = None  # an absent seat holds no model
            codes, levels = pd.factorize(pd.Series(seat.ravel(), dtype=object))
            codes = codes.reshape(seat.shape)
            self.comp = np.stack([(codes == k).sum(1) for k in range(len(levels))], 1).astype(np.int64)
            self.comp_rows, self.comp_code = unique_rows(self.comp)  # a unit's composition by its game's code

    def mean(self, df: pd.DataFrame, col: str, scale: float = 1.0):
        """(estimate (G,), replicates (R, G)) of ``scale * mean(col)`` per model; NaN rows dropped.

        Residuals are taken about the additive fit of the model's mean within its mode (column
        ``mode``: the mode mix of a model's units is fixed by the design, not sampled), the tier
        and the model composition of the unit's game (column ``gi``; module docstring)."""
        G = len(self.models)
        if len(df) == 0:
            return Est(np.full(G, np.nan), np.full((self.M.shape[0], G), np.nan, np.float32), np.zeros(G))  # no units
        x = pd.to_numeric(df[col], errors="coerce").to_numpy(float) * scale
        # the model and mode columns by their codes: reading them as Python objects made a string per
        # row and call (396,004 in team_ballots alone: 23 MB and most of Wild's time)
        code, levels = pd.factorize(df["model"])
        g = np.r_[self.index.get_indexer(np.asarray(levels, dtype=object)), -1][code].astype(float)
        g[g < 0] = np.nan  # a model outside the table's, or none
        ok = np.isfinite(x) & np.isfinite(g)
        x, g, e = x[ok], g[ok].astype(np.int64), df["exp"].to_numpy(np.int64)[ok]
        n = np.bincount(g, minlength=G).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            est = np.bincount(g, weights=x, minlength=G) / n
        # numbered in order of first appearance among the kept rows, a missing mode its own stratum
        strata = pd.factorize(pd.factorize(df["mode"])[0][ok])[0] if "mode" in df else np.zeros(len(x), np.int64)
        cell = g * (int(strata.max()) + 1 if len(strata) else 1) + strata
        gi = df["gi"].to_numpy(np.int64)[ok] if "gi" in df else None
        tier = self.tier[gi] if self.tier is not None and gi is not None else None
        comp = (self.comp_rows, self.comp_code[gi]) if self.comp is not None and gi is not None else None
        fit, lev = design_fit(x, cell, tier, comp)
        resid = x - fit
        n_par = np.bincount(g, weights=lev, minlength=G)  # K of each model: the trace of the fit's hat matrix
        r = np.bincount(e * G + g, weights=resid, minlength=self.E * G).reshape(self.E, G)
        with np.errstate(invalid="ignore", divide="ignore"):
            reps = est[None, :] + (self.M @ r.astype(np.float32)) / n[None, :]
            v0 = np.bincount(g, weights=resid ** 2, minlength=G) / n ** 2
        if len(x):  # a mean stays within the range of its values (a rate within 0-100)
            reps = np.clip(reps, x.min(), x.max())
        exps = np.bincount(e * G + g, minlength=self.E * G).reshape(self.E, G) > 0
        n_exp = exps.sum(0)
        lo_b, hi_b = (float(x.min()), float(x.max())) if len(x) else (-np.inf, np.inf)
        return Est(est, reps.astype(np.float32), n_exp.astype(float), lo_b, hi_b, v0, n_par, exps)

    @staticmethod
    def diff(a, b):
        """Difference of two means; its interval stays inside the range of differences of their values
        (a difference of two percentages within [-100, 100])."""
        v0 = None if a.v0 is None or b.v0 is None else a.v0 + b.v0  # a scale: k absorbs the covariance
        if a.exps is None or b.exps is None or a.n_par is None or b.n_par is None:
            return Est(a[0] - b[0], a[1] - b[1], np.minimum(a[2], b[2]), a.low_bound - b.high_bound,
                       a.high_bound - b.low_bound, v0)
        # experiments behind the difference: both parts' (the modes of a disclosure effect are disjoint sets of
        # experiments: 5 + 5, not min(5, 5)); the parts' centring parameters add where their experiments differ
        overlap = (a.exps & b.exps).sum(0) / np.maximum(np.minimum(a.n_exp, b.n_exp), 1)
        n_par = np.maximum(a.n_par, b.n_par) + np.minimum(a.n_par, b.n_par) * (1 - overlap)
        exps = a.exps | b.exps
        return Est(a[0] - b[0], a[1] - b[1], exps.sum(0).astype(float), a.low_bound - b.high_bound,
                   a.high_bound - b.low_bound, v0, n_par, exps)

    @staticmethod
    def ratio(a, b):
        with np.errstate(invalid="ignore", divide="ignore"):
            est = np.where(b[0] != 0, a[0] / np.where(b[0] != 0, b[0], 1), np.nan)  # 0 betrayals: undefined
            return Est(est, np.where(b[1] != 0, a[1] / np.where(b[1] != 0, b[1], 1), np.nan), np.minimum(a[2], b[2]))

    @property
    def not_computed(self) -> dict:
        """Intervals left out by :meth:`frame` so far, by reason (for :meth:`note_not_computed`)."""
        if "_not_computed" not in self.__dict__:
            self._not_computed = {FEW: 0, FLAT: 0}
        return self._not_computed

    def note_not_computed(self, table_name: str) -> None:
        """One report note per table: how many estimates print no interval, and why."""
        parts = [f"{k} for {v}" for k, v in self.not_computed.items() if v]
        if parts and getattr(self, "data", None) is not None:
            note(self.data, f"{table_name}: interval not computed ({'; '.join(parts)} estimate(s)); the estimate "
                            "is printed without limits")

    def frame(self, cols: dict) -> pd.DataFrame:
        """Estimates with ``<col>_ci_low``/``<col>_ci_high`` (moderated t interval, module docstring)."""
        out = pd.DataFrame(index=pd.Index(self.models, name="model"))
        for name, e in cols.items():
            est = np.asarray(e.est, float)
            with warnings.catch_warnings():  # a model without units has all-NaN replicates
                warnings.simplefilter("ignore", RuntimeWarning)
                n_par = np.ones(len(est)) if e.n_par is None else e.n_par
                if e.v0 is None:
                    lo, hi = t_interval(est, e.reps, e.n_exp, self.alpha, n_par)
                else:
                    half = moderated_halfwidth(np.nanvar(np.asarray(e.reps, float), axis=0, ddof=1), e.v0,
                                               e.n_exp, self.alpha, n_par=n_par)
                    lo, hi = est - half, est + half
            lo, hi = np.clip(lo, e.low_bound, e.high_bound), np.clip(hi, e.low_bound, e.high_bound)
            # no between-experiment variation behind the estimate (every replicate equal): no interval,
            # not a zero-width one (0.50 [0.50, 0.50] was printed as if exact)
            undefined = ~np.isfinite(est) | ~(hi - lo > 1e-9 * np.maximum(1.0, np.abs(est)))
            few = np.isfinite(est) & (np.asarray(e.n_exp, float) - (1.0 if e.n_par is None else e.n_par) < 1)
            self.not_computed[FEW] += int((undefined & few).sum())
            self.not_computed[FLAT] += int((undefined & ~few & np.isfinite(est)).sum())
            out[name] = est
            out[f"{name}_ci_low"] = np.where(undefined, np.nan, lo)
            out[f"{name}_ci_high"] = np.where(undefined, np.nan, hi)
        return out


def design_fit(x: np.ndarray, cell: np.ndarray, tier: np.ndarray | None = None,
               comp: np.ndarray | tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares fit ``mu[cell] + tau[tier] + comp @ beta`` of ``x`` and each unit's leverage.

    Solved as weighted least squares on the groups of units with equal covariates (a few per
    experiment and cell, so it runs on millions of units): the same fit as on the units. The
    leverages (diagonal of the hat matrix) sum to the parameters fitted; summed over a model's
    units they are the K of its residuals' G/(G - K) and G - K df. Without ``tier`` and ``comp``,
    the cell means (leverage 1/n of the cell). ``comp`` is the (n, M) composition of each unit or
    ``(rows, code)``, its distinct rows (``unique_rows``) and each unit's: the same fit without an
    (n, M) array (memory)."""
    n = len(x)
    if n == 0:
        return x, x
    comp_rows = None
    if isinstance(comp, tuple):
        comp_rows, comp = comp[0], np.asarray(comp[1])[:, None]  # codes in the rows' lexicographic order
    cols = [cell[:, None]]
    if tier is not None:
        cols.append(tier[:, None])
    if comp is not None:
        cols.append(comp)
    keys, inv = unique_rows(np.hstack(cols).astype(np.int64))
    if comp_rows is not None:
        keys = np.hstack([keys[:, :-1], comp_rows[keys[:, -1]]])
    w = np.bincount(inv, minlength=len(keys)).astype(float)
    ybar = np.bincount(inv, weights=x, minlength=len(keys)) / w
    blocks = [np.eye(int(keys[:, 0].max()) + 1)[keys[:, 0]]]
    if tier is not None:
        blocks.append(np.eye(int(keys[:, 1].max()) + 1)[keys[:, 1]][:, 1:])
    if comp is not None:
        blocks.append(keys[:, (2 if tier is not None else 1):].astype(float))
    X = np.hstack(blocks)  # collinear columns (a composition the cells fix) are left to the pseudo-inverse
    P = np.linalg.pinv((X * w[:, None]).T @ X, hermitian=True)
    beta = P @ (X.T @ (w * ybar))
    h = np.einsum("ij,jk,ik->i", X, P, X)  # leverage of one unit of each group
    return (X @ beta)[inv], h[inv]


def fit_f_prior(k: np.ndarray, d: np.ndarray) -> tuple[float, float]:
    """``(k0, d0)`` of the scaled-F prior of variances ``k`` on ``d`` df (limma's ``fitFDist``,
    Smyth 2004, method of moments on log k; written here because no Python library in the
    environment provides it). ``d0 = inf`` when the ``k`` vary no more than their df imply."""
    z = np.log(k)
    e = z - special.digamma(d / 2) + np.log(d / 2)
    emean = float(e.mean())
    evar = float(((e - emean) ** 2).sum() / (len(e) - 1) - special.polygamma(1, d / 2).mean())
    if evar <= 0:
        return float(np.exp(emean)), np.inf
    d0 = 2 * _trigamma_inverse(evar)
    return float(np.exp(emean + special.digamma(d0 / 2) - np.log(d0 / 2))), float(d0)


def _trigamma_inverse(y: float) -> float:
    """``x`` with ``trigamma(x) = y`` (Newton's method on 1/trigamma, as limma's ``trigammaInverse``)."""
    if y > 1e7:
        return 1 / np.sqrt(y)
    if y < 1e-6:
        return 1 / y
    x = 0.5 + 1 / y
    for _ in range(50):
        tri = float(special.polygamma(1, x))
        dif = tri * (1 - tri / y) / float(special.polygamma(2, x))
        x += dif
        if -dif / x < 1e-8:
            break
    return x


def moderated_halfwidth(var_star, v0, n_exp, alpha: float, min_cells: int = 3, n_par=1.0) -> np.ndarray:
    """Half-widths ``t(d0 + d) sqrt(k~ v0)`` of the cells of one column (module docstring).

    ``var_star``: the wild variance of each cell's estimate, ``v0`` its independent-units variance,
    ``n_exp`` its experiments G, ``n_par`` the K parameters its centring fitted (d = G - K df, and the
    residuals' shrinkage undone by G/(G - K)). Cells with d < 1, no variation or no ``v0`` get NaN; with
    fewer than ``min_cells`` usable cells each keeps its own ``k`` on G - K df. A cell whose own ``k``
    is above the prior's ``k0`` keeps at least its own t(d) interval: shrinking it toward the others is
    sound only if the cells' design effects are exchangeable, and an outlying model breaks that."""
    var_star, v0, g = (np.asarray(a, float) for a in (var_star, v0, n_exp))
    d = g - np.broadcast_to(np.asarray(n_par, float), g.shape)
    ok = (d >= 1) & np.isfinite(var_star) & (var_star > 0) & np.isfinite(v0) & (v0 > 0)
    half = np.full(len(g), np.nan)
    if not ok.any():
        return half
    k, dk = var_star[ok] * g[ok] / d[ok] / v0[ok], d[ok]
    own = stats.t.ppf(1 - alpha / 2, dk) * np.sqrt(k * v0[ok])
    if ok.sum() >= min_cells:
        k0, d0 = fit_f_prior(k, dk)
        k_mod = np.full(len(k), k0) if np.isinf(d0) else (d0 * k0 + dk * k) / (d0 + dk)
        moderated = stats.t.ppf(1 - alpha / 2, d0 + dk) * np.sqrt(k_mod * v0[ok])
        half[ok] = np.where(k > k0, np.maximum(own, moderated), moderated)
    else:
        half[ok] = own
    return half


def t_interval(est, reps, n_exp, alpha: float, n_par=1.0):
    """``est +- t(G-K) sqrt(G/(G-K)) SD*`` per column; NaN where G - K < 1."""
    est = np.asarray(est, float)
    half = t_halfwidth(np.nanstd(np.asarray(reps, float), axis=0, ddof=1), n_exp, alpha, n_par)
    return est - half, est + half
