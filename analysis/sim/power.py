"""Power analysis: how many games per cell detect a given odds ratio?

Two closed forms for comparing the impostor-win rate of two cells (a base cell
with win probability ``base`` and a contrast cell with odds ratio ``or``):

* ``cohen_h``: two independent proportions via Cohen's h
  (``statsmodels`` ``proportion_effectsize`` + ``NormalIndPower``);
* ``wald_logit``: the Wald test of the log odds ratio of a two-group logit,
  ``n = (z_{1-a/2} + z_{power})^2 (1/(p0 q0) + 1/(p1 q1)) / log(OR)^2`` per cell.

And a simulation check: games drawn with :func:`impostor_bench.analysis.sim.simulate.simulate_games`
(homogeneous vs cross-play cells, only the mode effect switched on), a logit of
impostor win on the cell indicator fitted with statsmodels, and the share of
replications whose Wald p-value is below ``alpha``.

Clustering (``clustered_n``, ``clustered_power``): games of one experiment share its
run (an intra-experiment correlation, ICC ``rho``), so a cell of k experiments of m
games carries the information of ``k m / (1 + (m - 1) rho)`` independent games (the
design effect). The report's mode intervals come from the design bootstrap
(``impostor_bench.analysis.stats.design_boot``), an experiment-level wild bootstrap whose variance is
that of the cluster sums, so the Wald formula with the design effect is its power:
``Var(log OR) = DE (1/(p0 q0) + 1/(p1 q1)) / (k m)``. ``rho`` is given or estimated
from an export (``design_boot.residual_icc``); ``simulated_power_clustered`` checks the
formula by running the report's bootstrap on simulated designs with that ICC.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["PowerResult", "p_from_or", "closed_form_n", "simulated_power", "power_table", "design_effect",
           "clustered_n", "clustered_power", "sd_for_icc", "simulated_power_clustered", "check_inputs"]


def p_from_or(base: float, odds_ratio: float) -> float:
    """The probability whose odds are ``odds_ratio`` times the odds of ``base``."""
    odds = base / (1 - base) * odds_ratio
    return odds / (1 + odds)


def check_inputs(base: float, odds_ratio: float, alpha: float, power: float) -> None:
    if not 0 < base < 1:
        raise ValueError("base must be in (0, 1)")
    if odds_ratio <= 0 or odds_ratio == 1:
        raise ValueError("the odds ratio must be positive and not 1")
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError("alpha and power must be in (0, 1)")


@dataclass(frozen=True)
class PowerResult:
    method: str
    n_per_cell: int  # games per cell (rounded up)
    n_exact: float
    p0: float
    p1: float


def closed_form_n(odds_ratio: float = 0.8, power: float = 0.8, base: float = 0.45, alpha: float = 0.05) -> dict[str, PowerResult]:
    """Games per cell for a two-sided test at ``alpha`` with ``power``, both closed forms."""
    from scipy import stats
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    check_inputs(base, odds_ratio, alpha, power)
    p0, p1 = base, p_from_or(base, odds_ratio)
    h = proportion_effectsize(p1, p0)
    n_h = NormalIndPower().solve_power(effect_size=abs(h), alpha=alpha, power=power, ratio=1.0, alternative="two-sided")
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    n_w = z**2 * (1 / (p0 * (1 - p0)) + 1 / (p1 * (1 - p1))) / math.log(odds_ratio) ** 2
    return {
        "cohen_h": PowerResult("cohen_h", math.ceil(n_h), float(n_h), p0, p1),
        "wald_logit": PowerResult("wald_logit", math.ceil(n_w), float(n_w), p0, p1),
    }


def simulated_power(
    n_per_cell: int,
    odds_ratio: float = 0.8,
    base: float = 0.45,
    alpha: float = 0.05,
    reps: int = 200,
    seed: int = 0,
) -> tuple[float, float]:
    """(power, Monte-Carlo standard error) of the logit Wald test at ``n_per_cell`` games per cell."""
    import statsmodels.api as sm

    from impostor_bench.analysis.sim.simulate import SimModel, simulate_games

    models = [SimModel("model-a", det=0.6, self_decl=0.2), SimModel("model-b", det=0.6, self_decl=0.2)]
    # 2 homogeneous + 2 cross-play experiments; each cell gets n_per_cell games (rounded up to even).
    per_exp = max(1, math.ceil(n_per_cell / 2))
    hits = 0
    for r in range(reps):
        games, _, _ = simulate_games(
            4, per_exp, models=models, modes=["homogeneous", "cross_play"], difficulties=["medium"],
            base_imp_win=base, seat_or=1.0, mode_or={"cross_play": odds_ratio}, difficulty_or=None,
            size_or_per_10x=1.0, position_effect_pp=0.0, opponent_or_per_10pp=1.0, seed=seed * 100_003 + r,
        )
        y = (games["winner"] == "impostor").to_numpy(dtype=float)
        x = (games["mode"] == "cross_play").to_numpy(dtype=float)
        fit = sm.Logit(y, sm.add_constant(x)).fit(disp=0)
        hits += bool(fit.pvalues[1] < alpha)
    pw = hits / reps
    return pw, math.sqrt(max(pw * (1 - pw), 1e-12) / reps)


def power_table(odds_ratio: float = 0.8, power: float = 0.8, base: float = 0.45, alpha: float = 0.05,
                reps: int = 200, seed: int = 0):
    """One row per closed form (a DataFrame), with the simulated power at its n."""
    import pandas as pd

    rows = []
    for res in closed_form_n(odds_ratio, power, base, alpha).values():
        row = {"method": res.method, "or": odds_ratio, "base_pct": 100 * res.p0, "contrast_pct": 100 * res.p1,
               "alpha": alpha, "target_power": power, "n_per_cell": res.n_per_cell, "n_exact": res.n_exact}
        if reps > 0:
            pw, se = simulated_power(res.n_per_cell, odds_ratio, base, alpha, reps, seed)
            row.update({"simulated_power": pw, "simulated_power_se": se, "reps": reps})
        rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- clustering


def design_effect(icc: float, games_per_experiment: float) -> float:
    """Variance inflation of a cell mean whose games come in experiments of m games."""
    return 1.0 + (games_per_experiment - 1.0) * icc


def _check_cluster(icc: float, m: int) -> None:
    if not 0 <= icc < 1:
        raise ValueError("icc must be in [0, 1)")
    if m < 1:
        raise ValueError("games per experiment must be >= 1")


def clustered_power(experiments_per_cell: int, games_per_experiment: int, odds_ratio: float = 0.8,
                    base: float = 0.45, alpha: float = 0.05, icc: float = 0.0) -> float:
    """Power of the two-sided test of a mode OR (cell vs base cell) under the design bootstrap."""
    from scipy import stats

    check_inputs(base, odds_ratio, alpha, 0.5)
    _check_cluster(icc, games_per_experiment)
    p0, p1 = base, p_from_or(base, odds_ratio)
    n = experiments_per_cell * games_per_experiment
    se = math.sqrt(design_effect(icc, games_per_experiment) * (1 / (p0 * (1 - p0)) + 1 / (p1 * (1 - p1))) / n)
    z, za = abs(math.log(odds_ratio)) / se, stats.norm.ppf(1 - alpha / 2)
    return float(stats.norm.cdf(z - za) + stats.norm.cdf(-z - za))


def clustered_n(odds_ratio: float = 0.8, power: float = 0.8, base: float = 0.45, alpha: float = 0.05,
                icc: float = 0.0, games_per_experiment: int = 120) -> dict:
    """Experiments (of ``games_per_experiment`` games) and games per cell for ``power``."""
    _check_cluster(icc, games_per_experiment)
    n_w = closed_form_n(odds_ratio, power, base, alpha)["wald_logit"].n_exact
    de = design_effect(icc, games_per_experiment)
    k = math.ceil(n_w * de / games_per_experiment)
    return {"icc": icc, "games_per_experiment": games_per_experiment, "design_effect": de,
            "experiments_per_cell": k, "games_per_cell": k * games_per_experiment, "n_exact": n_w * de,
            "power_at_k": clustered_power(k, games_per_experiment, odds_ratio, base, alpha, icc)}


def sd_for_icc(icc: float, base: float = 0.45) -> float:
    """The SD (logit scale) of a normal experiment effect that gives ``icc`` at win rate ``base``
    (ICC = Var_u P(win | u) / (pbar (1 - pbar)), the definition ``residual_icc`` estimates)."""
    import numpy as np
    from scipy import optimize

    if icc <= 0:
        return 0.0
    x, w = np.polynomial.hermite_e.hermegauss(60)
    w = w / w.sum()
    eta = math.log(base / (1 - base))

    def f(sd):
        p = 1 / (1 + np.exp(-(eta + sd * x)))
        m = (w * p).sum()
        return (w * (p - m) ** 2).sum() / (m * (1 - m)) - icc

    return float(optimize.brentq(f, 1e-9, 20.0))


def simulated_power_clustered(experiments_per_cell: int, games_per_experiment: int, odds_ratio: float = 0.8,
                              base: float = 0.45, alpha: float = 0.05, icc: float = 0.0, reps: int = 200,
                              seed: int = 0, bootstrap_reps: int = 999) -> tuple[float, float]:
    """(power, MC SE): share of simulated designs (homogeneous vs cross-play cells of
    ``experiments_per_cell`` experiments, experiment effects giving ``icc``) whose design-bootstrap
    CI of the cross-play OR (the report's ``bootstrap`` table) excludes 1."""
    import numpy as np

    from impostor_bench.analysis.calibration import analyse_run
    from impostor_bench.analysis.sim.design import build_design
    from impostor_bench.analysis.sim.effects import SimModel
    from impostor_bench.analysis.stats.config import StatsConfig

    if experiments_per_cell < 2 or experiments_per_cell % 2:
        raise ValueError("experiments_per_cell must be even and >= 2 (two models per mode)")
    models = [SimModel("model-a"), SimModel("model-b")]
    design = build_design(2 * experiments_per_cell, games_per_experiment, models=models,
                          modes=["homogeneous", "cross_play"], difficulties=["medium"], base_imp_win=base,
                          seat_or=1.0, mode_or={"cross_play": odds_ratio}, difficulty_or=None, size_or_per_10x=1.0,
                          position_effect_pp=0.0, opponent_or_per_10pp=1.0,
                          experiment_effect_sd=sd_for_icc(icc, base), design_seed=seed)
    config = StatsConfig(seed=seed, bootstrap_reps=bootstrap_reps, alpha=alpha, strict=True)
    hits = 0
    for r in range(reps):  # each replicate is a full analysis; its bootstrap is vectorised
        ro, rw = (np.random.default_rng(s) for s in np.random.SeedSequence([seed, r]).spawn(2))
        lo, hi = analyse_run(design, design.draw(ro, rw), config, parts=("bootstrap",))[
            "cross_play_vs_homogeneous_or|design"]
        hits += bool(hi < 1 or lo > 1)
    pw = hits / reps
    return pw, math.sqrt(max(pw * (1 - pw), 1e-12) / reps)
