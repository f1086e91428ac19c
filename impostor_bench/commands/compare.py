"""``impostor compare A B (--parquet DIR | --experiment NAME)``: a paired head-to-head of two
models on the word pairs both played (``impostor_bench.analysis.stats.paired``): impostor win and
detection differences with paired t intervals over pairs, and how many more games would resolve
an open one. The games come from an export or an MLflow experiment, as for ``impostor report``.

    impostor compare bot/embedding bot/random (--parquet out/tables | --experiment NAME [--tracking-uri URI])
                     [--out DIR] [--log-run]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from impostor_bench.commands._args import finite_float
from impostor_bench.commands._source import add_source_args, check_source_args, read_experiment
from impostor_bench.core.errors import ImpostorError

__all__ = ["register"]


def register(sub: Any) -> None:
    p = sub.add_parser("compare", help="paired head-to-head of two models on the word pairs both played",
                       description=__doc__.splitlines()[0])
    p.add_argument("model_a", help="a model of the export (model string, or a registry alias such as embedding)")
    p.add_argument("model_b", help="the model to compare it with")
    add_source_args(p, required=True)
    p.add_argument("--out", metavar="DIR", help="also write DIR/compare.csv")
    p.add_argument("--alpha", type=finite_float, default=0.05, help="two-sided level of the intervals (default 0.05)")
    p.add_argument("--power", type=finite_float, default=0.8,
                   help="power at which 'more games' would resolve an open difference (default 0.8)")
    p.add_argument("--log-run", action="store_true",
                   help="log the comparison as an MLflow run (tag impostor.kind=compare) in the experiment read "
                        "(--experiment), or in impostor-compare (--parquet)")
    p.set_defaults(func=_cmd)


def _model_name(name: str, known: set[str], flag: str, where: str = "this export") -> str:
    """``name`` as the export spells it: itself, or the model string of a registry alias."""
    if name in known:
        return name
    try:
        from impostor_bench.registry import load_registry

        entry = load_registry().entries.get(name)
    except ImpostorError:
        entry = None
    if entry is not None and entry.model in known:
        return entry.model
    raise ImpostorError(f"{flag} {name!r} played no game in {where} (models: {', '.join(sorted(known))}); "
                        f"fix: pass one of those")


def _check(args: argparse.Namespace) -> None:
    from impostor_bench.core.records import GAMES_FILE, PLAYERS_FILE

    if not 0 < args.alpha < 1 or not 0 < args.power < 1:
        raise ImpostorError("--alpha and --power must be in (0, 1); fix: e.g. --alpha 0.05 --power 0.8")
    check_source_args(args)
    if not args.parquet:
        return
    d = Path(args.parquet)
    missing = [f for f in (GAMES_FILE, PLAYERS_FILE) if not (d / f).is_file()]
    if not d.is_dir() or missing:
        raise ImpostorError(f"--parquet {args.parquet}: {'not a directory' if not d.is_dir() else 'no ' + missing[0]}; "
                            f"fix: pass the directory `impostor export` wrote")


def _fmt(v: float, spec: str = ".1f") -> str:
    import math

    return "-" if v != v or math.isinf(v) else format(v, spec)


def lines(table: Any, alpha: float) -> list[str]:
    """The comparison as text: one block per metric."""
    out = []
    a, b = table["model_a"].iloc[0], table["model_b"].iloc[0]
    out.append(f"{a} vs {b}, paired over the word pairs both played ({100 * (1 - alpha):g}% paired t intervals):")
    out.append("  (each rate pools every game of that model on those pairs; the difference is the mean over the pairs of "
               "A's rate minus B's on the same pair, every pair counted once, so a pair's difficulty cancels and the "
               "difference need not equal the gap between the two rates)")
    names = {"impostor_win": ("impostor win", "impostor games"), "detection": ("detection", "valid majority ballots")}
    for r in table.itertuples():
        label, unit = names.get(r.metric, (r.metric, "n"))
        out.append(f"  {label:<13} {_fmt(r.rate_a_pct)}% vs {_fmt(r.rate_b_pct)}%: difference {_fmt(r.diff_pp, '+.1f')} pp "
                   f"[{_fmt(r.ci_low, '+.1f')}, {_fmt(r.ci_high, '+.1f')}], p {_fmt(r.p, '.3g')}; {r.n_pairs} pairs, "
                   f"{r.n_a} / {r.n_b} {unit}")
        more = ("" if r.more_games == 0 else
                f"; about {int(r.more_pairs)} more pairs ({int(r.more_games):,} more games) would resolve it at the "
                f"same per-pair design" if r.more_games == r.more_games else "; no finite number of games resolves a 0 difference")
        out.append(f"  {'':<13} -> {r.verdict}{more}")
    return out


def _games_and_players(args: argparse.Namespace) -> tuple[Any, Any, str]:
    """The games and players tables of ``--parquet`` or ``--experiment``, and the source's name."""
    if args.experiment:
        data, _ = read_experiment(args.experiment, args.tracking_uri,
                                  lambda msg: print(f"impostor compare: {msg}", file=sys.stderr, flush=True))
        return data.games, data.players, f"experiment {args.experiment}"
    import pandas as pd

    from impostor_bench.core.records import GAMES_FILE, PLAYERS_FILE

    d = Path(args.parquet)
    games = pd.read_parquet(d / GAMES_FILE, columns=["game_id", "pair_id", "impostor_model", "impostor_seat", "winner"])
    players = pd.read_parquet(d / PLAYERS_FILE, columns=["game_id", "model", "role", "vote"])
    return games, players, str(d)


def _cmd(args: argparse.Namespace) -> int:
    _check(args)  # paths and numbers before any reading
    from impostor_bench.analysis.stats.paired import head_to_head

    games, players, source = _games_and_players(args)
    known = set(players["model"].unique())
    where = f"experiment '{args.experiment}'" if args.experiment else "this export"
    a = _model_name(args.model_a, known, "model_a", where)
    b = _model_name(args.model_b, known, "model_b", where)
    if a == b:
        raise ImpostorError(f"model_a and model_b are both {a}; fix: name two different models")
    table = head_to_head(games, players, a, b, args.alpha, args.power)
    print("\n".join(lines(table, args.alpha)))
    if args.out:
        from impostor_bench.outdir import make_dir

        out = make_dir(Path(args.out), "--out")
        from impostor_bench.core.output_files import write_file

        write_file(Path(out) / "compare.csv", lambda p: table.to_csv(p, index=False))
        print(f"table: {Path(out) / 'compare.csv'}")
    if args.log_run:
        from impostor_bench.tracking.comparerun import log_compare_run

        print(log_compare_run(table, args.experiment, source, tracking_uri=args.tracking_uri))
    return 0
