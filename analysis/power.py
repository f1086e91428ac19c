"""Power analysis: how many games per cell detect a given odds ratio?

Two closed forms for comparing the impostor-win rate of two cells (a base cell
with win probability ``base`` and a contrast cell with odds ratio ``or``):

* ``cohen_h``: two independent proportions via Cohen's h
  (``statsmodels`` ``proportion_effectsize`` + ``NormalIndPower``);
* ``wald_logit``: the Wald test of the log odds ratio of a two-group logit,
  ``n = (z_{1-a/2} + z_{power})^2 (1/(p0 q0) + 1/(p1 q1)) / log(OR)^2`` per cell.

And a simulation check: games drawn with :func:`analysis.simulate.simulate_games`
(homogeneous vs cross-play cells, only the mode effect switched on), a logit of
impostor win on the cell indicator fitted with statsmodels, and the share of
replications whose Wald p-value is below ``alpha``.

Clustering (``clustered_n``, ``clustered_power``): games of one experiment share its
run (an intra-experiment correlation, ICC ``rho``), so a cell of k experiments of m
games carries the information of ``k m / (1 + (m - 1) rho)`` independent games (the
design effect). The report's mode intervals come from the design bootstrap
(``analysis.stats.design_boot``), an experiment-level wild bootstrap whose variance is
that of the cluster sums, so the Wald formula with the design effect is its power:
``Var(log OR) = DE (1/(p0 q0) + 1/(p1 q1)) / (k m)``. ``rho`` is given or estimated
from an export (``design_boot.residual_icc``); ``simulated_power_clustered`` checks the
formula by running the report's bootstrap on simulated designs with that ICC.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["PowerResult", "p_from_or", "closed_form_n", "simulated_power", "power_table", "design_effect",
           "clustered_n", "clustered_power", "sd_for_icc", "simulated_power_clustered", "register"]


def p_from_or(base: float, odds_ratio: float) -> float:
    """The probability whose odds are ``odds_ratio`` times the odds of ``base``."""
    odds = base / (1 - base) * odds_ratio
    return odds / (1 + odds)


def _check(base: float, odds_ratio: float, alpha: float, power: float) -> None:
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

    _check(base, odds_ratio, alpha, power)
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

    from analysis.simulate import SimModel, simulate_games

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

    _check(base, odds_ratio, alpha, 0.5)
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

    from analysis.calibration import analyse_run
    from analysis.sim_design import SimModel, build_design
    from analysis.stats.config import StatsConfig

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


# --------------------------------------------------------------------------- CLI


def register(sub) -> None:
    p = sub.add_parser("power", help="games per cell needed to detect an odds ratio (closed form + simulation)")
    p.add_argument("--or", dest="odds_ratio", type=float, default=0.8, help="odds ratio to detect (default 0.8)")
    p.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")
    p.add_argument("--base", type=float, default=0.45, help="impostor-win rate of the reference cell (default 0.45)")
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided significance level (default 0.05)")
    p.add_argument("--reps", type=int, default=200, help="simulation replications per method (0 = skip; default 200)")
    p.add_argument("--seed", type=int, default=0)
    icc = p.add_mutually_exclusive_group()
    icc.add_argument("--icc", type=float, default=None,
                     help="intra-experiment correlation of game outcomes (default 0 = games independent)")
    icc.add_argument("--parquet", metavar="DIR", default=None,
                     help="estimate the ICC from an export (games.parquet[, players.parquet])")
    p.add_argument("--games-per-experiment", type=int, default=120,
                   help="games per experiment for the clustered sample size (default 120)")
    p.set_defaults(func=_cmd_power)


def _icc_from_export(path: str) -> tuple[float, str]:
    from analysis.io import load_tables
    from analysis.stats._base import prepared
    from analysis.stats.design_boot import residual_icc

    data = load_tables(path)
    est = residual_icc(data, prepared(data))
    return est["icc"], (f"estimated from {path} ({est['n_experiments']} experiments, "
                        f"{est['games_per_experiment']:.0f} games each)")


def _cmd_power(args) -> int:
    from impostor.core.errors import ImpostorError

    try:
        _check(args.base, args.odds_ratio, args.alpha, args.power)
    except ValueError as exc:
        raise ImpostorError(f"impostor power: {exc}; fix: pass --or > 0 (not 1), --base/--alpha/--power in (0, 1)") from exc
    if args.reps < 0:
        raise ImpostorError("impostor power: --reps must be >= 0; fix: pass --reps 0 to skip the simulation")
    table = power_table(args.odds_ratio, args.power, args.base, args.alpha, args.reps, args.seed)
    p1 = table["contrast_pct"].iloc[0]
    print(f"Detect OR={args.odds_ratio:g} (impostor win {args.base * 100:.1f}% vs {p1:.1f}%), "
          f"two-sided alpha={args.alpha:g}, power={args.power:g}:")
    for row in table.itertuples():
        line = f"  {row.method:<11} n = {row.n_per_cell:>6} games per cell ({2 * row.n_per_cell} for two cells)"
        if args.reps > 0:
            line += f"; simulated power at n: {row.simulated_power:.3f} +/- {row.simulated_power_se:.3f} ({row.reps} reps)"
        print(line)
    rec = int(table.loc[table.method == "wald_logit", "n_per_cell"].iloc[0])
    print(f"Recommendation: {rec} games per cell (Wald logit; matches the logit fits of the report).")
    if args.games_per_experiment < 1:
        raise ImpostorError("impostor power: --games-per-experiment must be >= 1")
    if args.parquet:
        try:
            icc, source = _icc_from_export(args.parquet)
        except Exception as exc:  # noqa: BLE001 - one clear line for any unreadable export
            raise ImpostorError(f"impostor power: cannot estimate the ICC from {args.parquet}: {exc}; fix: pass an "
                                "export directory with games.parquet, or give --icc") from exc
    else:
        icc, source = (args.icc or 0.0), ("given" if args.icc is not None else "default: games independent")
    if not 0 <= icc < 1:
        raise ImpostorError("impostor power: --icc must be in [0, 1); fix: pass e.g. --icc 0.02")
    m = args.games_per_experiment
    print(f"Clustering by experiment (ICC {icc:.4f}, {source}); under the design bootstrap the report uses:")
    for mm in sorted({30, 60, 120, 240, m}):
        c = clustered_n(args.odds_ratio, args.power, args.base, args.alpha, icc, mm)
        mark = "  <- --games-per-experiment" if mm == m else ""
        print(f"  {mm:>4} games/experiment: design effect {c['design_effect']:.2f}, "
              f"{c['experiments_per_cell']} experiments = {c['games_per_cell']} games per cell{mark}")
    return 0
