"""What a sweep will cost, stated with its plan before the first game.

Per model: the calls it makes (a description and a ballot per seat and game; re-prompts
not counted), the tokens (input from the real prompts of impostor_bench.core.prompts, each
earlier description taken as ``max_tokens`` long; output ``max_tokens`` per call, so
both are upper bounds), and dollars from impostor_bench.pricing (configs/models.yaml
``price:``, bots 0, litellm's offline price map), "unknown" where no price is known.
Tokens are counted as characters / 4, the usual rule of thumb for English text.
Games of several rounds (``rounds:``) count every round for every seat (as if nobody were
eliminated), each prompt of round r carrying the r - 1 earlier rounds' descriptions at their
longest and the seat's note, and with ``private_notes`` one note call per seat and round but
the last: still upper bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from impostor_bench.core.generation import PAPER_MAX_TOKENS
from impostor_bench.core.prompts import DESCRIPTION_SYSTEM, VOTING_SYSTEM, description_prompt, voting_prompt
from impostor_bench.core.modes import mode_spec
from impostor_bench.core.records import N_SEATS
from impostor_bench.core.rounds import NOTE_MAX_CHARS

__all__ = ["CHARS_PER_TOKEN", "ModelCost", "seats_per_game", "seat_tokens", "game_seat_load", "estimate_costs",
           "cost_table"]

CHARS_PER_TOKEN = 4
_EXAMPLE_WORD = "lighthouse"


@dataclass
class ModelCost:
    alias: str
    model: str
    max_tokens: int
    seat_games: int = 0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    usd: Optional[float] = None  # None: price unknown (never 0 for unknown)
    price_source: str = "unknown"


def seats_per_game(mode: str, roles: dict[str, str], players: int = N_SEATS, impostors: int = 1) -> dict[str, int]:
    """Seats each model (alias) plays in one game of an experiment (A.3: 2 + 2 in team modes; in
    cross-play the impostor model plays every impostor seat)."""
    out: dict[str, int] = {}
    for role in mode_spec(mode).seat_roles(0, ("A", "B") * (N_SEATS // 2), players=players,
                                           impostor_seats=tuple(range(impostors))):  # any seats and teams
        out[roles[role]] = out.get(roles[role], 0) + 1
    return out


def _tokens(*texts: str) -> int:
    return math.ceil(sum(len(t) for t in texts) / CHARS_PER_TOKEN)


def seat_tokens(mode: str, max_tokens: int, players: int = N_SEATS) -> tuple[int, int]:
    """(input, output) tokens of one seat in one game, averaged over the speaking positions (four in
    the paper's game)."""
    earlier = "x" * (CHARS_PER_TOKEN * max_tokens)  # a description as long as it may be
    mate = 2 if mode_spec(mode).teammate_view == "named" else None
    desc = [_tokens(DESCRIPTION_SYSTEM, description_prompt(mode=mode, word=_EXAMPLE_WORD, player_label=k + 1,
                                                           previous=[(i + 1, earlier) for i in range(k)],
                                                           teammate_label=mate)) for k in range(players)]
    vote = _tokens(VOTING_SYSTEM, voting_prompt(mode=mode, word=_EXAMPLE_WORD, player_label=1,
                                                descriptions=[(i + 1, earlier) for i in range(players)],
                                                teammate_label=mate))
    return round(sum(desc) / players) + vote, 2 * max_tokens


def game_seat_load(mode: str, max_tokens: int, rounds: int = 1, private_notes: bool = False,
                   players: int = N_SEATS) -> tuple[int, int, int]:
    """(calls, input tokens, output tokens) of one seat in one game of ``rounds`` rounds (upper bounds)."""
    tok_in, tok_out = seat_tokens(mode, max_tokens, players)
    if rounds == 1:
        return 2, tok_in, tok_out
    earlier_round = players * max_tokens + _tokens("x" * NOTE_MAX_CHARS)  # descriptions at their longest, the note
    notes = rounds - 1 if private_notes else 0
    calls = 2 * rounds + notes
    extra_in = sum(2 * (r - 1) * earlier_round for r in range(1, rounds + 1))  # description + ballot prompt
    note_in = sum(tok_in // 2 + r * earlier_round for r in range(1, notes + 1))  # a note prompt sees its round
    return calls, rounds * tok_in + extra_in + note_in, rounds * tok_out + notes * max_tokens


def _max_tokens(alias: str, configured: Optional[int]) -> int:
    if configured:
        return configured
    try:
        from impostor_bench.registry import load_registry

        return load_registry().defaults(alias).max_tokens or PAPER_MAX_TOKENS
    except Exception:  # noqa: BLE001 - not an alias: the paper's default applies
        return PAPER_MAX_TOKENS


def estimate_costs(pl) -> list[ModelCost]:
    """One ``ModelCost`` per model of the plan (``impostor_bench.sweep.plan.Plan``), in config order."""
    from impostor_bench.pricing import price_of

    costs: dict[str, ModelCost] = {}
    for alias in pl.config.models:
        costs[alias] = ModelCost(alias, pl.resolved.get(alias, alias), _max_tokens(alias, pl.config.max_tokens))
    for e in pl.experiments:
        for alias, seats in seats_per_game(e.mode, dict(e.roles), e.players, e.impostors).items():
            c = costs[alias]
            calls, tok_in, tok_out = game_seat_load(e.mode, c.max_tokens, e.rounds, e.private_notes, e.players)
            c.seat_games += seats * e.n_games
            c.calls += calls * seats * e.n_games
            c.input_tokens += tok_in * seats * e.n_games
            c.output_tokens += tok_out * seats * e.n_games
    for c in costs.values():
        price = price_of(c.model)
        if price is not None:
            c.usd = c.input_tokens * price.input_per_token + c.output_tokens * price.output_per_token
            c.price_source = price.source
    return list(costs.values())


def _usd(x: Optional[float]) -> str:
    return "unknown" if x is None else f"${x:,.2f}"


def cost_table(pl) -> str:
    """The plan's cost lines: per model and in total (total "unknown" part named)."""
    rows = estimate_costs(pl)
    names = [c.alias if c.alias == c.model else f"{c.alias} ({c.model})" for c in rows]
    w = max([20] + [len(n) + 2 for n in names])
    lines = ["estimated cost (upper bound: every description and ballot max_tokens long, ~4 characters a "
             "token, re-prompts not counted):",
             f"  {'model':<{w}}{'calls':>12}{'input tokens':>16}{'output tokens':>16}{'USD':>14}  price"]
    for name, c in zip(names, rows):
        lines.append(f"  {name:<{w}}{c.calls:>12,}{c.input_tokens:>16,}{c.output_tokens:>16,}{_usd(c.usd):>14}"
                     f"  {c.price_source}")
    known = [c.usd for c in rows if c.usd is not None]
    unknown = [c.alias for c in rows if c.usd is None]
    total = _usd(sum(known)) if known else "unknown"
    lines.append(f"  {'total':<{w}}{sum(c.calls for c in rows):>12,}{sum(c.input_tokens for c in rows):>16,}"
                 f"{sum(c.output_tokens for c in rows):>16,}{total:>14}"
                 + (f"  + unknown for {', '.join(unknown)}" if unknown and known else ""))
    return "\n".join(lines)
