"""The contract rows of a longer game (-T rounds > 1): games and players rows, plus its ``moves`` rows.

The players rows keep their meaning (first-round values, from ``impostor_bench.scorers.winner.build_record``,
which the scorer passes in) and gain the round each seat was eliminated; the game row's
ballot counts (``n_valid_votes``, ``votes_on_impostor``, ``tie_k`` ...) describe the first
round like the players rows, while the winner, win condition, rounds played and elimination
order are the whole game's, as the solver's stored decisions say (docs/rules.md "Multi-round games").
"""

from __future__ import annotations

from typing import Any, Sequence

from impostor_bench.core.records import GameRow, MoveRow, PlayerRow
from impostor_bench.core.rules import RoundResult, counted_vote
from impostor_bench.core.schedule import GameSpec
from impostor_bench.core.seat import SeatRecord


def build_rounds_record(spec: GameSpec, game: GameRow, players: list[PlayerRow], record: dict[str, Any],
                        decisions: Sequence[RoundResult]) -> tuple[GameRow, list[PlayerRow], list[MoveRow]]:
    """The rows of a finished longer game from its rows so far (``game``, ``players``: the
    winner already the last decision's, the rest round 1's), its rounds (``record``:
    ``impostor_bench.solvers.game_store.load_rounds``) and each round's stored decision."""
    assert spec.impostor_seat is not None, "the game's draws are made first"
    experiment_id = game.experiment_id
    rounds = record["rounds"]
    if len(decisions) != len(rounds):
        raise ValueError(f"game {game.game_id} stored {len(rounds)} rounds but {len(decisions)} decisions")
    out_round = {d.eliminated: d.round for d in decisions if d.eliminated is not None}
    game = game.model_copy(update=dict(
        rounds_played=len(rounds), max_rounds=record["max_rounds"],
        elimination_order=",".join(str(d.eliminated) for d in decisions if d.eliminated is not None),
        private_notes=bool(record["private_notes"])))
    players = [p.model_copy(update={"eliminated_round": out_round.get(p.seat)}) for p in players]
    moves = []
    for entry, decided in zip(rounds, decisions):
        position = {seat: pos for pos, seat in enumerate(entry["order"])}
        for seat in sorted(entry["seats"]):
            r: SeatRecord = entry["seats"][seat]
            inp, out = r.tokens()
            moves.append(MoveRow(
                game_id=game.game_id, experiment_id=experiment_id, round=entry["round"], seat=seat, model=r.model,
                role="impostor" if seat == spec.impostor_seat else "majority",
                team=None if spec.team_assignment is None else spec.team_assignment[seat],
                speaking_position=position[seat], description=r.description,
                description_valid=bool(r.description_valid), description_error=r.description_error,
                description_class=r.description_class,
                vote=counted_vote(r.vote, seat, entry["remaining"]), ballot_class=r.ballot_class or "missing",
                confidence=r.confidence, reasoning=r.reasoning, self_declared=bool(r.self_declared),
                word_guess=r.word_guess, eliminated=decided.eliminated == seat, note=entry["notes"].get(seat),
                input_tokens=inp, output_tokens=out))
    return game, players, moves
