"""``impostor play``: one cross-play game with you in a seat, on a local page.

    impostor play [--model smollm2] [--as impostor|majority] [--participant NAME]
                  [--timeout SECONDS] [--port N] [--difficulty easy] [--seed N] [--log-dir logs]

The short way to what ``inspect eval`` does with ``--model-role <role>=human/web``: the
game is an ordinary Inspect eval (log, MLflow run, tables), the person recorded as
``human/<participant>``.  As the majority you play all three majority seats.
"""

from __future__ import annotations

import math
import secrets
import sys
import time
from typing import Any, Optional

from impostor_bench.commands._args import seconds
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.group import group_problem
from impostor_bench.core.records import DIFFICULTIES, impostor_seat_list, player_label

__all__ = ["register", "outcome_text"]

#: The longest move limit (and page linger) taken: a day; longer is a typo or inf.
MAX_MOVE_SECONDS = 24 * 3600


def register(sub: Any) -> None:
    p = sub.add_parser("play", help="play one game against a model on a local page (you are recorded as human/NAME)",
                       description="Play one cross-play game against a model in your browser.")
    p.add_argument("--model", default="local/smollm2",
                   help="the other side: a model string or registry alias (default local/smollm2, offline)")
    p.add_argument("--as", dest="role", choices=("impostor", "majority"), default="impostor",
                   help="your side (default impostor; as majority you play its three seats)")
    p.add_argument("--participant", default="anon", help="your id in the tables: human/<participant> (default anon)")
    p.add_argument("--timeout", type=seconds(MAX_MOVE_SECONDS), default=0,
                   help="seconds per move; a move not made in time is recorded as missing (default 0: no limit)")
    p.add_argument("--host", default="127.0.0.1", help="address of the page (default 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=0, help="port of the page (default 0: any free port)")
    p.add_argument("--difficulty", choices=DIFFICULTIES, default="easy")
    p.add_argument("--seed", type=int, default=None, help="schedule seed (default: a random one, printed)")
    p.add_argument("--log-dir", default="logs", help="Inspect log directory (default ./logs)")
    p.add_argument("--rounds", type=int, default=1,
                   help="1: the paper's game (default); more: elimination rounds (docs/rules.md, Multi-round games)")
    p.add_argument("--private-notes", action="store_true",
                   help="with --rounds 2 or more: keep a private note between rounds")
    p.add_argument("--players", type=int, default=4, help="players in the game, 4 to 8 (default 4, the paper's)")
    p.add_argument("--impostors", type=int, default=1,
                   help="impostors in the game, a strict minority of the players (default 1, the paper's)")
    p.add_argument("--open", action="store_true", help="open the page in the default browser")
    p.add_argument("--linger", type=seconds(MAX_MOVE_SECONDS), default=60,
                   help="seconds to keep the page up after the game, until it has shown the outcome (default 60)")
    p.set_defaults(func=_cmd_play)


def outcome_text(game: dict[str, Any], players: list[dict[str, Any]], human: str,
                 moves: Optional[list[dict[str, Any]]] = None) -> str:
    """The game's outcome for a person: winner, words, who said and voted what (a multi-round
    game, with ``moves``: round by round)."""
    imps = impostor_seat_list(game["impostor_seat"], game.get("impostor_seats"))
    who = (f"The impostor was Player {player_label(imps[0])}" if len(imps) == 1 else
           "The impostors were Players " + " and ".join(str(player_label(s)) for s in imps))
    lines = [f"Winner: the {game['winner']} ({game['win_condition']}).",
             f"{who} ({game['impostor_model']}) with "
             f"\"{game['impostor_word']}\"; the majority word was \"{game['majority_word']}\".", ""]
    if moves:
        return "\n".join(lines + _rounds_lines(moves, human))
    for p in sorted(players, key=lambda r: r["speaking_position"]):
        you = " (you)" if p["model"] == human else ""
        vote = "no valid vote" if p["vote"] is None else f"voted Player {player_label(p['vote'])}"
        if p["self_declared"]:
            vote += f", self-declared (guess: {p['word_guess'] or 'none'})"
        lines.append(f"Player {player_label(p['seat'])}{you}, {p['role']}: \"{p['description']}\"; {vote}.")
    return "\n".join(lines)


def _rounds_lines(moves: list[dict[str, Any]], human: str) -> list[str]:
    lines = []
    for r in sorted({m["round"] for m in moves}):
        lines.append(f"Round {r}:")
        for m in sorted((m for m in moves if m["round"] == r), key=lambda m: m["speaking_position"]):
            you = " (you)" if m["model"] == human else ""
            vote = "no valid vote" if m["vote"] is None else f"voted Player {player_label(m['vote'])}"
            if m["self_declared"]:
                vote += f", self-declared (guess: {m['word_guess'] or 'none'})"
            out = " Eliminated." if m["eliminated"] else ""
            lines.append(f"  Player {player_label(m['seat'])}{you}, {m['role']}: \"{m['description']}\"; {vote}.{out}")
    return lines


def _cmd_play(args: Any) -> int:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from impostor_bench.tasks.impostor import impostor

    opponent_role = "majority" if args.role == "impostor" else "impostor"
    problem = group_problem(args.players, args.impostors)
    if problem:  # before the opponent is loaded or a page opens
        raise ImpostorError(f"impostor play --players {args.players} --impostors {args.impostors}: {problem}")
    seed = args.seed if args.seed is not None else secrets.randbelow(10**6)
    # The opponent first: an unknown provider, a missing key or model file is one line before the page opens.
    from impostor_bench.preflight import check_models
    from impostor_bench.registry import load_registry

    registry = load_registry()
    entry = registry.entries.get(args.model)
    check_models({args.model: registry.resolve(args.model)}, "--model",
                 model_args={args.model: dict(entry.model_args)} if entry else None)
    # No game time budget: a person's moves have their own --timeout.
    task = impostor(mode="cross_play", n_games=1, difficulty=args.difficulty, seed=seed,
                    models={opponent_role: args.model}, game_time_limit=0,
                    **({"rounds": args.rounds, "private_notes": args.private_notes} if args.rounds != 1 or args.private_notes else {}),
                    **({"players": args.players, "impostors": args.impostors}
                       if (args.players, args.impostors) != (4, 1) else {}))
    try:
        human = get_model("human/web", participant=args.participant, timeout=args.timeout,
                          host=args.host, port=args.port)
    except OSError as e:
        raise ImpostorError(str(e)) from e
    api: Any = human.api
    print(f"impostor play: you are {human} as the {args.role}, against {args.model}; seed {seed} (replay with --seed {seed}); "
          f"open {api.url}", file=sys.stderr, flush=True)
    if args.open:
        import webbrowser

        webbrowser.open(api.url)
    # A person may take longer than a model's attempt timeout: one attempt waits the move's whole limit.
    # (whole seconds: Inspect's attempt_timeout is an int, and --timeout 0.5 is a valid move limit)
    attempt_timeout = math.ceil(args.timeout) + 60 if args.timeout and args.timeout > 0 else 24 * 3600
    [log] = inspect_eval(task, model=human, model_roles={args.role: human}, log_dir=args.log_dir,
                         display="none", attempt_timeout=attempt_timeout)
    print(f"impostor play: log {log.location}", file=sys.stderr)
    if log.status != "success" or not log.samples or not log.samples[0].scores:
        # the game's own error: the eval has none when only the game errored (continue_on_fail)
        failed = log.error or next((s.error for s in log.samples or [] if s.error is not None), None)
        error = failed.message if failed else "the game has no score"
        api.session.finish(f"The game did not finish: {error}")
        raise ImpostorError(f"the game did not finish ({log.status}): {error}; see the log {log.location}")
    md = log.samples[0].scores["impostor_winner"].metadata or {}
    text = outcome_text(md["game"], md["players"], str(human), md.get("moves"))
    print(text)
    api.session.finish(text)
    deadline = time.monotonic() + max(0.0, args.linger)
    while time.monotonic() < deadline and not api.session.finished_seen.wait(0.2):
        pass
    time.sleep(0.3)  # let the page's last request be answered
    return 0
