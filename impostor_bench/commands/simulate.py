"""``impostor simulate``: write synthetic games with known effects in the data-contract format.

    impostor simulate --out DIR [--experiments 756] [--games 120] [--seat-or 1.12,1.26,1.22] [--mode-or 0.8]
                      [--size-or 1.71] [--position-pp -1.11] [--tie-rate 0.117] [--base 0.45] [--seed 0] ...
                      [--rounds N [--det-gain 0.3] [--private-notes]]   (N > 1: impostor_bench.analysis.sim.rounds, writes moves.parquet)
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from impostor_bench.commands._args import finite_float, whole
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.output_files import write_text

__all__ = ["register"]


def register(sub: Any) -> None:
    _register_simulate(sub)


#: Games one simulate call may write (~5.5x the paper's 90,720; about 5 KB of memory a game).
MAX_SIMULATED_GAMES = 500_000


def _floats(text: str, what: str) -> list[float]:
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise ImpostorError(f"{what}: '{text}' is not a number or comma-separated numbers; fix: e.g. {what} 0.8") from exc
    if not all(math.isfinite(v) for v in values):
        raise ImpostorError(f"{what}: '{text}' holds a value that is not a finite number; fix: e.g. {what} 0.8")
    return values


def _register_simulate(sub) -> None:
    p = sub.add_parser("simulate", help="write synthetic games with known effects (games/players.parquet, models.csv)",
                       description="Simulate games in the data-contract format with chosen true effects.")
    p.add_argument("--out", required=True, metavar="DIR", help="directory to write games.parquet, players.parquet, models.csv")
    p.add_argument("--experiments", type=whole(1, 100_000), default=756, help="experiments (default 756 = the paper's design)")
    p.add_argument("--games", type=whole(1, 100_000), default=120, help="games per experiment (default 120)")
    p.add_argument("--base", type=finite_float, default=0.45, help="impostor-win probability of the reference game")
    p.add_argument("--seat-or", default="1.12,1.26,1.22", help="OR of seats 1,2,3 vs 0 (one value or three)")
    p.add_argument("--mode-or", default=None, help="OR of every non-homogeneous mode vs homogeneous (default: paper's)")
    p.add_argument("--size-or", type=finite_float, default=1.71, help="OR per 10x parameters of the impostor model")
    p.add_argument("--position-pp", type=finite_float, default=-1.11, help="true pseudo-arm ITT (pp): impostor speaking at 0-based positions 2/3 (the 3rd and 4th speakers, the paper's {2,3} arm) vs the uniform mix")
    p.add_argument("--opponent-or", type=finite_float, default=0.8, help="OR per +10pp of the opponents' detection")
    p.add_argument("--tie-rate", type=finite_float, default=0.117, help="share of games ending in a top-of-ballot tie")
    p.add_argument("--invalid-vote-rate", type=finite_float, default=0.02, help="share of invalid ballots")
    p.add_argument("--self-decl-rate", type=finite_float, default=None, help="impostor self-declaration rate (default: per model)")
    p.add_argument("--models", default=None, help="comma-separated model names (default: nine paper-like models)")
    p.add_argument("--pair-effect-sd", type=finite_float, default=0.0,
                   help="SD (logit) of word-pair effects, shared by every experiment playing the pair (default 0)")
    p.add_argument("--experiment-effect-sd", type=finite_float, default=0.0,
                   help="SD (logit) of per-experiment random effects (default 0)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rounds", type=whole(1, 50), default=1,
                   help="rounds per game (default 1 = the paper's game; N > 1 also writes moves.parquet)")
    p.add_argument("--det-gain", type=finite_float, default=0.3,
                   help="with --rounds N > 1: logit gain per round of a majority ballot naming the impostor")
    p.add_argument("--private-notes", action="store_true",
                   help="with --rounds N > 1: mark the games as played with private notes (no effect on simulated play)")
    p.add_argument("--condition", default=None, metavar="FACTOR=L1,L2,...",
                   help="run the design under each level of a study factor (group_size 4x1,6x2; language en,es; "
                        "length_budget none,400; decoding 0.7,1.0/0.9; mode): one block of experiments per level, "
                        "the first the reference (impostor_bench.analysis.sim.conditions)")
    p.add_argument("--condition-or", default=None, metavar="L=OR,...",
                   help="with --condition: impostor-win OR of a level against the reference")
    p.add_argument("--rank-reversal", default=None, metavar="MODEL_A,MODEL_B@LEVEL",
                   help="with --condition: the two models swap their impostor strength in LEVEL")
    p.add_argument("--force", action="store_true",
                   help="write into --out even when it holds files that simulate did not write")
    p.set_defaults(func=_cmd_simulate)


# Written last into every folder simulate fills: a folder holding it is simulate's own, and a
# re-run may replace its tables; any other non-empty folder (a real export) is refused.
MARKER = "simulated.json"


def _check_out(out: Path, force: bool) -> None:
    """Refuse ``out`` when it is a file, or a non-empty folder that simulate did not write."""
    if out.exists() and not out.is_dir():
        raise ImpostorError(f"--out {out}: exists and is not a directory; fix: choose a directory")
    if force or not out.is_dir() or (out / MARKER).is_file():
        return
    held = sorted(p.name for p in out.iterdir())
    if held:
        shown = ", ".join(held[:3]) + (f" and {len(held) - 3} more" if len(held) > 3 else "")
        raise ImpostorError(f"--out {out}: holds {shown}, not written by `impostor simulate` (no {MARKER}); "
                            f"fix: choose an empty or new folder, or add --force to overwrite")


def _cmd_simulate(args) -> int:
    from impostor_bench.analysis.io import write_tables
    from impostor_bench.analysis.sim.simulate import simulate_games

    from impostor_bench.core.schedule import seed_problem

    if args.experiments * args.games > MAX_SIMULATED_GAMES:
        raise ImpostorError(f"--experiments {args.experiments:,} x --games {args.games:,} = "
                            f"{args.experiments * args.games:,} games; fix: simulate at most {MAX_SIMULATED_GAMES:,} "
                            f"at once (several --seed runs for more)")
    out = Path(args.out)
    _check_out(out, args.force)
    if seed_problem(args.seed):
        raise ImpostorError(f"--{seed_problem(args.seed)}")
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
    if args.condition or args.condition_or or args.rank_reversal:
        kw["conditions"] = _condition_plan(args)
    t0 = time.perf_counter()
    moves = None
    try:
        if args.rounds > 1:
            games, players, moves, models = _simulate_rounds(args, kw)
        else:
            games, players, models = simulate_games(args.experiments, args.games, **kw)
    except (ValueError, TypeError) as exc:
        raise ImpostorError(f"impostor simulate: {exc}; fix: adjust the option named") from exc
    paths = write_tables(out, games, players, models, moves)
    write_text(out / MARKER, json.dumps({"written_by": "impostor simulate", "args": {
        k: v for k, v in vars(args).items() if k not in {"func", "command", "force"}}}, indent=2, default=str))
    print(f"impostor simulate: {len(games):,} games ({args.experiments} experiments x {args.games}) "
          f"in {time.perf_counter() - t0:.1f} s; impostor win {100 * (games['winner'] == 'impostor').mean():.1f}%",
          file=sys.stderr)
    for pth in paths:
        print(pth)
    return 0


def _condition_plan(args):
    """The planted study conditions of --condition / --condition-or / --rank-reversal."""
    from impostor_bench.analysis.sim.conditions import parse_plan

    if not args.condition:
        raise ImpostorError("--condition-or / --rank-reversal need --condition FACTOR=L1,L2; fix: add e.g. "
                            "--condition language=en,es")
    if args.rounds > 1:
        raise ImpostorError("--condition: planted conditions are one-round games; fix: drop --rounds")
    try:
        return parse_plan(args.condition, args.condition_or, args.rank_reversal)
    except ValueError as exc:
        raise ImpostorError(f"impostor simulate: {exc}; fix: e.g. --condition language=en,es --condition-or es=0.8 "
                            f"--rank-reversal MODEL_A,MODEL_B@es") from exc


def _simulate_rounds(args, kw: dict):
    """Multi-round games (impostor_bench.analysis.sim.rounds): the one-round ballot options (--tie-rate,
    --position-pp) have no counterpart there; the self-declaration rate is per round."""
    from impostor_bench.analysis.sim.rounds import simulate_rounds

    for drop in ("tie_rate", "position_effect_pp"):
        kw.pop(drop, None)
    if kw.get("self_decl_rate") is None:
        kw.pop("self_decl_rate", None)
    kw.pop("base_imp_win", None)
    games, players, moves, models = simulate_rounds(args.experiments, args.games, args.rounds, base_imp_win=args.base,
                                                    det_gain_per_round=args.det_gain, **kw)
    games["private_notes"] = bool(args.private_notes)
    return games, players, moves, models
