"""``impostor report``, ``impostor simulate`` and ``impostor power``.

    impostor report (--parquet DIR | --experiment NAME [--tracking-uri URI]) --out OUT
                    [--seed 0] [--bootstrap-reps 10000] [--bootstrap design|paper] [--permutation-reps N]
                    [--alpha 0.05] [--no-figures]
    impostor simulate --out DIR [--experiments 756] [--games 120] [--seat-or 1.12,1.26,1.22] [--mode-or 0.8]
                      [--size-or 1.71] [--position-pp -1.11] [--tie-rate 0.117] [--base 0.45] [--seed 0] ...
    impostor power [--or 0.8] [--power 0.8] [--base 0.45] [--alpha 0.05] [--reps 200]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from impostor.core.errors import ImpostorError

__all__ = ["register"]


def register(sub) -> None:
    _register_report(sub)
    _register_simulate(sub)
    from analysis.power import register as register_power

    register_power(sub)


# --------------------------------------------------------------------------- report


def _register_report(sub) -> None:
    p = sub.add_parser("report", help="compute every table and figure into a report bundle",
                       description="Compute the statistics tables and figures of the paper from exported games "
                                   "(Parquet) or an MLflow experiment, and write the report bundle to OUT.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--parquet", metavar="DIR", help="export directory with games.parquet, players.parquet[, models.csv]")
    src.add_argument("--experiment", metavar="NAME", help="MLflow experiment whose runs hold tables/*.parquet artifacts")
    p.add_argument("--tracking-uri", metavar="URI", help="MLflow tracking URI (default: MLFLOW_TRACKING_URI)")
    p.add_argument("--out", required=True, metavar="OUT", help="bundle directory (new, empty, or a previous bundle)")
    p.add_argument("--seed", type=int, default=0, help="seed of every resampling (default 0)")
    p.add_argument("--bootstrap-reps", type=int, default=10_000, help="bootstrap replicates (default 10000)")
    p.add_argument("--bootstrap", choices=("design", "paper"), default="design",
                   help="bootstrap of the main CI columns: design (default) or paper (Appendix B.2, for reproduction)")
    p.add_argument("--permutation-reps", type=int, default=None, help="permutation replicates (default: the stats default)")
    p.add_argument("--alpha", type=float, default=None, help="two-sided level (default 0.05)")
    p.add_argument("--no-figures", action="store_true", help="skip the figures")
    p.add_argument("--exclude-estimated-params", action="store_true",
                   help="size fits use published parameter counts only (models.csv params_source)")
    p.set_defaults(func=_cmd_report)


def _progress(msg: str) -> None:
    print(f"impostor report: {msg}", file=sys.stderr, flush=True)


def _cmd_report(args) -> int:
    from analysis.io import load_from_mlflow, load_tables
    from analysis.report import _load_stats, build_report

    if args.tracking_uri and not args.experiment:
        raise ImpostorError("--tracking-uri: only used with --experiment; fix: drop it or pass --experiment NAME")
    if args.bootstrap_reps < 0 or (args.permutation_reps is not None and args.permutation_reps < 0):
        raise ImpostorError("--bootstrap-reps/--permutation-reps: must be >= 0; fix: pass a non-negative count")
    if args.alpha is not None and not 0 < args.alpha < 1:
        raise ImpostorError("--alpha: must be in (0, 1); fix: e.g. --alpha 0.05")
    t0 = time.perf_counter()
    _, StatsConfig = _load_stats()
    kw = {"seed": args.seed, "bootstrap_reps": args.bootstrap_reps, "bootstrap": args.bootstrap}
    if args.permutation_reps is not None:
        kw["permutation_reps"] = args.permutation_reps
    if args.alpha is not None:
        kw["alpha"] = args.alpha
    if getattr(args, "exclude_estimated_params", False):
        kw["estimated_params"] = False
    cfg = StatsConfig(**kw)
    t_load = time.perf_counter()
    if args.parquet:
        _progress(f"reading {args.parquet}")
        data = load_tables(args.parquet)
        source = {"kind": "parquet", "parquet": str(Path(args.parquet).absolute())}
    else:
        _progress(f"reading MLflow experiment '{args.experiment}'")
        data = load_from_mlflow(args.experiment, args.tracking_uri)
        source = {"kind": "mlflow", "experiment": args.experiment, "tracking_uri": args.tracking_uri}
    _progress(f"{len(data.games):,} games, {data.games['experiment_id'].nunique():,} experiments loaded "
              f"in {time.perf_counter() - t_load:.1f} s")
    manifest = build_report(data, args.out, cfg, source=source, progress=_progress, figures=not args.no_figures)
    out = Path(args.out).absolute()
    for err in manifest["errors"]:
        _progress(f"WARNING: {err}")
    _progress(f"done in {time.perf_counter() - t0:.1f} s: {len(manifest['tables'])} tables, "
              f"{len(manifest['figures'])} figures, {len(manifest['notes'])} notes")
    print(out / "report.html")
    return 1 if manifest["errors"] else 0


# --------------------------------------------------------------------------- simulate


def _floats(text: str, what: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise ImpostorError(f"{what}: '{text}' is not a number or comma-separated numbers; fix: e.g. {what} 0.8") from exc


def _register_simulate(sub) -> None:
    p = sub.add_parser("simulate", help="write synthetic games with known effects (games/players.parquet, models.csv)",
                       description="Simulate games in the data-contract format with chosen true effects.")
    p.add_argument("--out", required=True, metavar="DIR", help="directory to write games.parquet, players.parquet, models.csv")
    p.add_argument("--experiments", type=int, default=756, help="experiments (default 756 = the paper's design)")
    p.add_argument("--games", type=int, default=120, help="games per experiment (default 120)")
    p.add_argument("--base", type=float, default=0.45, help="impostor-win probability of the reference game")
    p.add_argument("--seat-or", default="1.12,1.26,1.22", help="OR of seats 1,2,3 vs 0 (one value or three)")
    p.add_argument("--mode-or", default=None, help="OR of every non-homogeneous mode vs homogeneous (default: paper's)")
    p.add_argument("--size-or", type=float, default=1.71, help="OR per 10x parameters of the impostor model")
    p.add_argument("--position-pp", type=float, default=-1.11, help="true pseudo-arm ITT (pp) of speaking 2nd/3rd")
    p.add_argument("--opponent-or", type=float, default=0.8, help="OR per +10pp of the opponents' detection")
    p.add_argument("--tie-rate", type=float, default=0.117, help="share of games ending in a top-of-ballot tie")
    p.add_argument("--invalid-vote-rate", type=float, default=0.02, help="share of invalid ballots")
    p.add_argument("--self-decl-rate", type=float, default=None, help="impostor self-declaration rate (default: per model)")
    p.add_argument("--models", default=None, help="comma-separated model names (default: nine paper-like models)")
    p.add_argument("--pair-effect-sd", type=float, default=0.0,
                   help="SD (logit) of word-pair effects, shared by every experiment playing the pair (default 0)")
    p.add_argument("--experiment-effect-sd", type=float, default=0.0,
                   help="SD (logit) of per-experiment random effects (default 0)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=_cmd_simulate)


def _cmd_simulate(args) -> int:
    from analysis.io import write_tables
    from analysis.simulate import simulate_games

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ImpostorError(f"--out {out}: exists and is not a directory; fix: choose a directory")
    seat = _floats(args.seat_or, "--seat-or")
    if len(seat) not in (1, 3):
        raise ImpostorError("--seat-or: give one OR or three (seats 1,2,3 vs seat 0); fix: e.g. --seat-or 0.8")
    kw = dict(
        models=[m.strip() for m in args.models.split(",") if m.strip()] if args.models else None,
        base_imp_win=args.base, seat_or=seat[0] if len(seat) == 1 else seat,
        size_or_per_10x=args.size_or, position_effect_pp=args.position_pp, opponent_or_per_10pp=args.opponent_or,
        tie_rate=args.tie_rate, invalid_vote_rate=args.invalid_vote_rate, self_decl_rate=args.self_decl_rate,
        pair_effect_sd=args.pair_effect_sd, experiment_effect_sd=args.experiment_effect_sd, seed=args.seed,
    )
    if args.mode_or is not None:
        kw["mode_or"] = _floats(args.mode_or, "--mode-or")[0]
    t0 = time.perf_counter()
    try:
        games, players, models = simulate_games(args.experiments, args.games, **kw)
    except (ValueError, TypeError) as exc:
        raise ImpostorError(f"impostor simulate: {exc}; fix: adjust the option named") from exc
    paths = write_tables(out, games, players, models)
    print(f"impostor simulate: {len(games):,} games ({args.experiments} experiments x {args.games}) "
          f"in {time.perf_counter() - t0:.1f} s; impostor win {100 * (games['winner'] == 'impostor').mean():.1f}%",
          file=sys.stderr)
    for pth in paths:
        print(pth)
    return 0
