"""A multi-round game (-T rounds=N > 1) as one solver step: the per-round loop.

Each round runs the same description and voting phases as the paper's game
(``impostor_bench.solvers.game``) on the remaining seats, with a prompt block carrying the round's
rules, the public record of earlier rounds and, with ``-T private_notes``, the seat's
own notes; the core (``impostor_bench.core.rounds``) decides who is eliminated and whether
the game is over.  Round 1's seat records go where the one-round game keeps them (the
players table's first-round values); every round is kept under ``impostor:rounds``.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Optional

from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.solver import Generate, Solver, TaskState, solver

from impostor_bench.core import prompts
from impostor_bench.core.options import GameOptions
from impostor_bench.core.parsing import MAX_DESCRIPTION_CHARS
from impostor_bench.core.records import player_label
from impostor_bench.core.rounds import (NOTE_MAX_CHARS, RoundView, clip_note, counted_vote, decide_round,
                                  public_transcript, round_ballot_class, round_rng, speaking_order_of_round)
from impostor_bench.core.rules import Ballot
from impostor_bench.core.seat import SeatRecord
from impostor_bench.solvers.game import ask_model, call_seed, describe_all, game_settings, show_phase, start_game, vote_all
from impostor_bench.solvers.game_store import save_ballots, save_rounds, save_seats
from impostor_bench.solvers.seating import model_name
from impostor_bench.solvers.usage import counting
from impostor_bench.solvers.vote_format import VoteFormats, call_config


async def _write_notes(spec: Any, models: list, seats: list[SeatRecord], settings: list, remaining: list[int],
                       context: Any, round_no: int) -> dict[int, str]:
    """Each remaining seat's private note after a round (counted in that round's tokens)."""

    async def note(seat: int) -> tuple[int, str]:
        word = spec.pair.impostor if seat == spec.impostor_seat else spec.pair.majority
        user = prompts.note_prompt(word=word, player_label=player_label(seat), context=context(seat),
                                   max_chars=NOTE_MAX_CHARS)
        config = call_config(models[seat], temperature=settings[seat].temperature, max_tokens=settings[seat].max_tokens,
                             top_p=settings[seat].top_p, seed=call_seed(spec, "note", seat, round_no))
        with counting(seats[seat], "describe"):
            text = await ask_model(models[seat], [ChatMessageSystem(content=prompts.NOTE_SYSTEM),
                                             ChatMessageUser(content=user)], config)
        return seat, clip_note(text)

    return dict(await asyncio.gather(*(note(s) for s in remaining)))


async def play_multi_round(state: TaskState, options: GameOptions, role_defaults: Optional[dict[str, dict[str, Any]]],
                           formats: VoteFormats, max_chars: int = MAX_DESCRIPTION_CHARS) -> TaskState:
    """Play the rounds of ``options.rounds`` until the core decides the game (``decide_round``)."""
    rounds, private_notes, tie_rule = options.rounds, options.private_notes, options.tie_rule
    spec, models = start_game(state)
    assert spec.speaking_order is not None and spec.impostor_seat is not None  # drawn by start_game
    settings = game_settings(spec, models, options, role_defaults)
    remaining = list(range(4))
    history: list[RoundView] = []
    notes: dict[int, list[str]] = {s: [] for s in range(4)}
    said: dict[int, list[str]] = {s: [] for s in range(4)}
    kept: list[dict[str, Any]] = []
    record = {"max_rounds": rounds, "private_notes": private_notes, "tie_rule": tie_rule, "rounds": kept}
    for round_no in range(1, rounds + 1):
        seats = [SeatRecord(model=model_name(models[s])) for s in range(4)]
        order = speaking_order_of_round(spec.speaking_order, remaining)
        labels = [player_label(s) for s in sorted(remaining)]

        def context_of(seats_in: list[int], history_text: str, this_round: int = round_no) -> Callable[[int], str]:
            """Each seat's prompt block: the round, the seats still in, the public record, its notes."""
            labels = [player_label(s) for s in sorted(seats_in)]
            return lambda seat: prompts.round_context(round_no=this_round, max_rounds=rounds, remaining_labels=labels,
                                                      history=history_text, notes=notes[seat] if private_notes else ())

        context = context_of(remaining, public_transcript(history))

        entry: dict[str, Any] = {"round": round_no, "remaining": list(remaining), "order": list(order),
                                 "seats": {}, "notes": {}}
        kept.append(entry)
        show_phase(state, [f"Round {round_no} of at most {rounds}: players {', '.join(map(str, labels))}"])
        try:
            await describe_all(state, spec, models, seats, settings, max_chars, order=order, context=context,
                               earlier=lambda s: said[s], round_no=round_no)
            shown = [(player_label(s), seats[s].description) for s in order]
            await vote_all(state, spec, models, seats, shown, settings, options, formats,
                           voters=sorted(remaining), context=context, round_no=round_no)
        finally:
            for s in remaining:
                seats[s].ballot_class = round_ballot_class(seats[s].vote, seats[s].ballot_class or "missing",
                                                           s, remaining)
            if round_no == 1:
                save_seats(state.store, seats)
                save_ballots(state.store, seats)
            entry["seats"] = {str(s): seats[s].to_dict() for s in remaining}
            save_rounds(state.store, record)
        ballots = {s: Ballot(counted_vote(seats[s].vote, s, remaining), bool(seats[s].self_declared),
                             seats[s].word_guess) for s in remaining}
        result = decide_round(ballots, remaining, spec.impostor_seat, spec.pair.majority, round_no=round_no,
                              max_rounds=rounds, tie_rule=tie_rule, rng=round_rng(spec.game_seed, tie_rule, round_no))
        history.append(RoundView(round_no, tuple((s, seats[s].description) for s in order),
                                 tuple((s, ballots[s].vote) for s in sorted(remaining)), result.eliminated))
        for s in remaining:
            if seats[s].description_valid:
                said[s].append(seats[s].description)
        out = "nobody" if result.eliminated is None else f"Player {player_label(result.eliminated)}"
        show_phase(state, [f"Round {round_no}: {out} eliminated"
                            + (f"; the {result.winner} wins ({result.win_condition})" if result.winner else "")])
        if result.winner is not None:
            break
        if result.eliminated is not None:
            remaining.remove(result.eliminated)
        if private_notes:
            written = await _write_notes(spec, models, seats, settings, remaining,
                                         context_of(remaining, public_transcript(history)), round_no)
            for s, text in written.items():
                notes[s].append(text)
            entry["seats"] = {str(s): seats[s].to_dict() for s in entry["remaining"]}
            entry["notes"] = {str(s): t for s, t in written.items()}
            save_rounds(state.store, record)
    return state


@solver
def impostor_rounds_game(options: GameOptions, role_defaults: Optional[dict[str, dict[str, Any]]] = None) -> Solver:
    """A multi-round game (``options.rounds`` > 1) as one solver step (the task uses
    ``impostor_bench.solvers.game.impostor_game`` for rounds=1, so the paper's game logs as before)."""
    formats = VoteFormats()  # per task, as in voting_phase

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await play_multi_round(state, options, role_defaults, formats)

    return solve
