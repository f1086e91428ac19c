"""``impostor power``: games per cell needed to detect an odds ratio (closed form + simulation),
with the experiments per cell under clustering (``impostor_bench.analysis.sim.power`` computes; this wires the CLI).

    impostor power [--or 0.8] [--power 0.8] [--base 0.45] [--alpha 0.05] [--reps 200]
                   [--icc RHO | --parquet DIR] [--games-per-experiment 120]
"""

from __future__ import annotations

from impostor_bench.analysis.sim.power import check_inputs, clustered_n, power_table
from impostor_bench.commands._args import finite_float, whole
from impostor_bench.core.errors import ImpostorError

__all__ = ["register"]


def register(sub) -> None:
    p = sub.add_parser("power", help="games per cell needed to detect an odds ratio (closed form + simulation)")
    p.add_argument("--or", dest="odds_ratio", type=finite_float, default=0.8, help="odds ratio to detect (default 0.8)")
    p.add_argument("--power", type=finite_float, default=0.8, help="target power (default 0.8)")
    p.add_argument("--base", type=finite_float, default=0.45, help="impostor-win rate of the reference cell (default 0.45)")
    p.add_argument("--alpha", type=finite_float, default=0.05, help="two-sided significance level (default 0.05)")
    p.add_argument("--reps", type=whole(0, 1_000_000), default=200, help="simulation replications per method (0 = skip; default 200)")
    p.add_argument("--seed", type=int, default=0)
    icc = p.add_mutually_exclusive_group()
    icc.add_argument("--icc", type=finite_float, default=None,
                     help="intra-experiment correlation of game outcomes (default 0 = games independent)")
    icc.add_argument("--parquet", metavar="DIR", default=None,
                     help="estimate the ICC from an export (games.parquet[, players.parquet])")
    p.add_argument("--games-per-experiment", type=whole(1, 100_000), default=120,
                   help="games per experiment for the clustered sample size (default 120)")
    p.set_defaults(func=_cmd_power)


#: Fewer experiments than this give an ICC estimate too noisy to size a design on: the
#: between-experiment variance is estimated from E - 1 degrees of freedom, so with E = 20 its
#: relative standard error is about sqrt(2 / 19) = 32%, and an estimate of 0 (truncated) is common
#: even where the true ICC is not 0.
MIN_ICC_EXPERIMENTS = 20


def _check_export(path: str) -> None:
    """The export directory is there and holds games.parquet: checked before any computation."""
    from pathlib import Path

    from impostor_bench.core.records import GAMES_FILE

    d = Path(path)
    if not d.is_dir():
        raise ImpostorError(f"--parquet {path}: not a directory; fix: pass the directory `impostor export` wrote "
                            f"(with {GAMES_FILE}), or give --icc")
    if not (d / GAMES_FILE).is_file():
        raise ImpostorError(f"--parquet {path}: no {GAMES_FILE} there; fix: pass the directory `impostor export` "
                            f"wrote, or give --icc")


def _icc_from_export(path: str) -> tuple[float, str, int]:
    """(ICC, where it came from, experiments it was estimated from)."""
    from impostor_bench.analysis.io import load_tables
    from impostor_bench.analysis.stats import prepared
    from impostor_bench.analysis.stats.design_boot import residual_icc
    from impostor_bench.analysis.stats.session import Analysis

    data = Analysis(load_tables(path))  # an unreadable export: load_tables' own one line (file, fix)
    est = residual_icc(data, prepared(data))
    return est["icc"], (f"estimated from {path} ({est['n_experiments']} experiments, "
                        f"{est['games_per_experiment']:.0f} games each)"), int(est["n_experiments"])


def _check_args(args) -> None:
    try:
        check_inputs(args.base, args.odds_ratio, args.alpha, args.power)
    except ValueError as exc:
        raise ImpostorError(f"{exc}; fix: pass --or > 0 (not 1), --base/--alpha/--power in (0, 1)") from exc
    if args.reps < 0:
        raise ImpostorError("--reps must be >= 0; fix: pass --reps 0 to skip the simulation")
    if args.games_per_experiment < 1:
        raise ImpostorError("--games-per-experiment must be >= 1; fix: pass e.g. --games-per-experiment 120")
    if args.icc is not None and not 0 <= args.icc < 1:
        raise ImpostorError("--icc must be in [0, 1); fix: pass e.g. --icc 0.02")
    if args.parquet:
        _check_export(args.parquet)


def _icc(args) -> tuple[float, str, list[str]]:
    """(ICC, its source, warnings about it)."""
    if not args.parquet:
        return (args.icc or 0.0), ("given" if args.icc is not None else "default: games independent"), []
    icc, source, n_exp = _icc_from_export(args.parquet)
    warnings = []
    if n_exp < MIN_ICC_EXPERIMENTS:
        warnings.append(f"warning: the ICC is estimated from only {n_exp} experiment(s) (fewer than "
                        f"{MIN_ICC_EXPERIMENTS}): too noisy to size a design on (an estimate of 0 is common even when "
                        f"games of one experiment are correlated); give --icc from a larger export or a prior study")
    if icc >= 1:
        icc = 0.99
        warnings.append("warning: the estimated ICC is 1 (every experiment's games alike); 0.99 is used")
    return icc, source, warnings


def _below_target(pw: float, se: float, target: float) -> str:
    """What to say when a simulated power falls short of the target ('' when it does not)."""
    if pw >= target:
        return ""
    within = pw + 2 * se >= target
    return (f"below the requested {target:g}" + (" (within 2 Monte-Carlo SE: the closed form may be exact; more --reps "
                                                 "tell)" if within else " (beyond Monte-Carlo error)"))


def _cmd_power(args) -> int:
    _check_args(args)  # every input, the export's path included, before any computation
    icc, source, icc_warnings = _icc(args)
    table = power_table(args.odds_ratio, args.power, args.base, args.alpha, args.reps, args.seed)
    p1 = table["contrast_pct"].iloc[0]
    print(f"Detect OR={args.odds_ratio:g} (impostor win {args.base * 100:.1f}% vs {p1:.1f}%), "
          f"two-sided alpha={args.alpha:g}, power={args.power:g}:")
    for row in table.itertuples():
        line = f"  {row.method:<11} n = {row.n_per_cell:>6} games per cell ({2 * row.n_per_cell} for two cells)"
        if args.reps > 0:
            line += f"; simulated power at n: {row.simulated_power:.3f} +/- {row.simulated_power_se:.3f} ({row.reps} reps)"
            short = _below_target(row.simulated_power, row.simulated_power_se, args.power)
            line += f", {short}" if short else ""
        print(line)
    wald = table.loc[table.method == "wald_logit"].iloc[0]
    rec = int(wald["n_per_cell"])
    print(f"Recommendation: {rec} games per cell (Wald logit; matches the logit fits of the report).")
    if args.reps > 0 and (short := _below_target(wald["simulated_power"], wald["simulated_power_se"], args.power)):
        # never a design below the requested power without saying so
        print(f"  note: its simulated power, {wald['simulated_power']:.3f} +/- {wald['simulated_power_se']:.3f}, is "
              f"{short}; for a margin ask for more games, e.g. --power {min(0.99, args.power + 0.05):g}")
    m = args.games_per_experiment
    print(f"Clustering by experiment (ICC {icc:.4f}, {source}); under the design bootstrap the report uses:")
    for w in icc_warnings:
        print(f"  {w}")
    for mm in sorted({30, 60, 120, 240, m}):
        c = clustered_n(args.odds_ratio, args.power, args.base, args.alpha, icc, mm)
        mark = "  <- --games-per-experiment" if mm == m else ""
        below = "" if c["power_at_k"] >= args.power else f" (power {c['power_at_k']:.3f}: below the requested {args.power:g})"
        print(f"  {mm:>4} games/experiment: design effect {c['design_effect']:.2f}, "
              f"{c['experiments_per_cell']} experiments = {c['games_per_cell']} games per cell{below}{mark}")
    return 0
