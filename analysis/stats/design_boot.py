"""The design bootstrap: an experiment-level wild (multiplier) bootstrap.

Estimand. Inference is conditional on the design: the fixed list of models, the word
list and the schedule the run's seed fixes (which pair and impostor seat game *i* of each
experiment gets). What varies on a re-run is (a) each game's outcome, (b) a run-level
deviation of each experiment (an "experiment effect": API drift, sampling, the run's
state) and (c) the speaking order, drawn per game. Experiments are therefore
independent units, but not exchangeable ones: every experiment is a unique design point
(mode x difficulty x model assignment; the homogeneous cell of a model and tier is a
single experiment). Resampling experiments within mode x difficulty (the paper's
bootstrap, ``resampling.bootstrap_weights``) swaps models in and out of each mode and so
adds the between-model spread of win rates to the variance of every pooled quantity
(mode ORs, the overall win rate), which is fixed by the design and not sampling error.

The wild bootstrap (Liu 1988; Mammen 1993; for clusters Cameron, Gelbach & Miller 2008)
is the resampling scheme for independent, non-identically distributed units: each
experiment keeps its design point, and only its deviation from its expected totals is
perturbed,  ``S* = S + sum_e xi_e r_e``  with Rademacher ``xi_e`` (one draw per experiment,
shared by every quantity, so all intervals come from one coherent draw), where
``r_e = sum_{g in e} x_g (y_g - p_g)`` and ``p_g`` is the fitted probability of an additive
logit of the design factors (mode, difficulty, impostor model, impostor seat, impostor
speaking position and the majority seats' model composition). ``Var*(S*) = sum_e r_e r_e'``
estimates the sum of the experiments' variances, experiment effects included (they sit in
``r_e``). Game counts are design quantities (speaking-position counts are conditioned on,
as ancillary) and are not perturbed. Interactions the additive fit misses (e.g. model x
mode) enter ``r_e`` as noise, so the intervals are then conservative, not anti-conservative.
Word pairs are shared across experiments at the same game index; their effects are fixed
under this estimand (and mostly absorbed by the difficulty effect, since every experiment
of a difficulty plays the same pair sequence).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from impostor_bench.analysis.stats._base import Prepared, majority_models, memo, note
from impostor_bench.analysis.stats._regress import unique_rows
from impostor_bench.analysis.stats.config import StatsConfig


def _codes(values) -> np.ndarray:
    return pd.factorize(pd.Series(values, dtype=object).fillna("<NA>"), sort=True)[0]


def _dummies(codes: np.ndarray) -> np.ndarray:
    k = int(codes.max()) + 1 if len(codes) else 0
    return np.eye(max(k, 1))[codes][:, 1:]


def _covariates(prep: Prepared) -> np.ndarray:
    """Integer-coded design factors of each game (one column per factor)."""
    cols = [_codes(prep.mode), _codes(prep.difficulty), _codes(prep.imp_model), prep.imp_seat,
            prep.imp_pos + 1]
    if prep.has_players and prep.model is not None:
        maj_models = majority_models(prep)
        levels = sorted({m for m in maj_models.ravel() if m is not None}, key=str)
        for m in levels[1:]:  # majority composition: seats held by each model (one level dropped)
            cols.append((maj_models == m).sum(1))
    return np.column_stack(cols).astype(np.int64)


def _fit_probs(data, prep: Prepared) -> np.ndarray:
    cov = _covariates(prep)
    uniq, inv = unique_rows(cov)
    wins = np.bincount(inv, weights=prep.y, minlength=len(uniq))
    n = np.bincount(inv, minlength=len(uniq)).astype(float)
    n_cat = 5
    blocks = [np.ones((len(uniq), 1))] + [_dummies(uniq[:, j]) for j in range(n_cat)] + [uniq[:, n_cat:].astype(float)]
    X = np.hstack(blocks)
    try:
        p = irls_logit(wins, n, X)
    except (np.linalg.LinAlgError, FloatingPointError, ValueError) as e:  # fall back to cell means
        note(data, f"design bootstrap: additive logit failed ({type(e).__name__}); experiments are centred on "
                   "mode x difficulty x impostor-model means instead")
        _, inv2 = unique_rows(cov[:, :3])
        rate = np.bincount(inv2, weights=prep.y) / np.bincount(inv2)
        return rate[inv2]
    return p[inv]


def irls_logit(wins: np.ndarray, n: np.ndarray, X: np.ndarray, tol: float = 1e-9, max_iter: int = 100):
    """Fitted probabilities of a grouped binomial logit (Newton-Raphson on the k x k normal
    equations, pseudo-inverse for collinear columns; linear predictor clipped at +-30 so a
    separated cell converges to its 0/1 rate). Same fit as statsmodels' GLM, much faster
    on many rows (test_calibration checks the two agree)."""
    beta = np.zeros(X.shape[1])
    for _ in range(max_iter):
        mu = 1.0 / (1.0 + np.exp(-np.clip(X @ beta, -30, 30)))
        grad = X.T @ (wins - n * mu)
        H = X.T @ (X * (n * mu * (1 - mu))[:, None])
        step = np.linalg.pinv(H, hermitian=True) @ grad
        beta += step
        if np.max(np.abs(step)) < tol:
            break
    p = 1.0 / (1.0 + np.exp(-np.clip(X @ beta, -30, 30)))
    if not np.all(np.isfinite(p)):
        raise ValueError("non-finite fitted values")
    return p


def fitted_win_prob(data, prep: Prepared) -> np.ndarray:
    """(N,) fitted P(impostor wins) of each game under the additive design logit (memoised)."""
    return memo(data, ("fitted_win_prob",), lambda: _fit_probs(data, prep))


def multipliers(data, prep: Prepared, config: StatsConfig) -> np.ndarray:
    """(R, E) float32 Rademacher multipliers, one per experiment and replicate (memoised)."""

    def make():
        rng = np.random.default_rng([config.seed, 11])
        E = len(prep.exp_names)
        m = rng.integers(0, 2, size=(config.bootstrap_reps, E), dtype=np.int8).astype(np.float32)
        m *= 2.0  # in place: no float64 (R, E) temporaries (605 MB each at 10x the paper), same values
        m -= 1.0
        return m

    return memo(data, ("wild_multipliers", config.seed, config.bootstrap_reps), make)


def residual_icc(data, prep: Prepared) -> dict:
    """Intra-experiment correlation of game outcomes beyond the design factors.

    Moment (ANOVA-type) estimator on the experiment sums of residuals ``R_e = sum (y - p)``,
    p from the additive design fit: with s2 the between-experiment variance of the win
    probability, ``E[R_e^2] ~ sum p (1 - p) - m_e s2 + m_e^2 s2``, so
    ``s2 = sum (R_e^2 - V_e) / sum (m_e^2 - m_e)`` (clipped at 0) and
    ``icc = s2 / mean p (1 - p)``: the share of a game outcome's variance that is shared by
    its experiment, which makes ``1 + (m - 1) icc`` the design effect of m games.
    """
    p = fitted_win_prob(data, prep)
    E = len(prep.exp_names)
    r = np.bincount(prep.exp_code, weights=prep.y - p, minlength=E)
    v = np.bincount(prep.exp_code, weights=p * (1 - p), minlength=E)
    m = np.bincount(prep.exp_code, minlength=E).astype(float)
    den = float((m ** 2 - m).sum())
    s2 = max(0.0, float((r ** 2 - v).sum() / den)) if den > 0 else 0.0
    vbar = float((p * (1 - p)).mean())
    return {"icc": min(1.0, s2 / vbar) if vbar > 0 else 0.0, "between_var": s2, "mean_var": vbar,
            "n_experiments": E, "games_per_experiment": float(m.mean())}


def t_halfwidth(sd, n_exp, alpha: float, n_params: float | np.ndarray = 1) -> np.ndarray:
    """Half-width ``t(G-K) sqrt(G/(G-K)) SD*`` of a design-bootstrap interval.

    ``SD*`` is the replicates' SD of the estimate, G the experiments behind it and K the
    parameters fitted to centre the residuals (1 for a mean or rate): the residuals shrink by
    about (G-K)/G, hence the CR1-type factor, and a variance from G units calls for t(G-K)
    instead of the percentile of 2^G sign patterns. NaN where G - K < 1."""
    sd, g = np.asarray(sd, float), np.asarray(n_exp, float)
    df = g - n_params
    ok = df >= 1
    safe = np.where(ok, df, 1.0)
    return np.where(ok, stats.t.ppf(1 - alpha / 2, safe) * np.sqrt(np.where(ok, g, 2.0) / safe) * sd, np.nan)
