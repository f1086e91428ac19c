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


def _icc_from_export(path: str) -> tuple[float, str]:
    from impostor_bench.analysis.io import load_tables
    from impostor_bench.analysis.stats import prepared
    from impostor_bench.analysis.stats.design_boot import residual_icc
    from impostor_bench.analysis.stats.session import Analysis

    data = Analysis(load_tables(path))
    est = residual_icc(data, prepared(data))
    return est["icc"], (f"estimated from {path} ({est['n_experiments']} experiments, "
                        f"{est['games_per_experiment']:.0f} games each)")


def _cmd_power(args) -> int:
    try:
        check_inputs(args.base, args.odds_ratio, args.alpha, args.power)
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
