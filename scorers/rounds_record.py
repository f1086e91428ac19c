"""The contract rows of a multi-round game: games and players rows, plus its ``moves`` rows.

The players rows keep their meaning (first-round values, from ``impostor_bench.scorers.winner.build_record``,
which the scorer passes in) and gain
the round each seat was eliminated; the game row's ballot counts (``n_valid_votes``,
``votes_on_impostor``, ``tie_k`` ...) describe the first round like the players rows,
while the winner, win condition, rounds played and elimination order are the whole
game's, replayed from the stored ballots by the core (docs/rules.md "Multi-round games").
"""

from __future__ import annotations

from typing import Any

from impostor_bench.core.records import GameRow, MoveRow, PlayerRow
from impostor_bench.core.rounds import counted_vote, play_rounds, round_rng
from impostor_bench.core.rules import Ballot
from impostor_bench.core.schedule import GameSpec
from impostor_bench.core.seat import SeatRecord


def build_rounds_record(spec: GameSpec, game: GameRow, players: list[PlayerRow], record: dict[str, Any], *,
                        tie_rule: str) -> tuple[GameRow, list[PlayerRow], list[MoveRow]]:
    """The rows of a finished multi-round game from its first round's rows (``game``, ``players``)
    and its rounds (``record``: ``impostor_bench.solvers.game_store.load_rounds``)."""
    assert spec.impostor_seat is not None, "the game's draws are made first"
    experiment_id = game.experiment_id
    rounds = record["rounds"]
    ballots = [{s: Ballot(counted_vote(r.vote, s, entry["remaining"]), bool(r.self_declared), r.word_guess)
                for s, r in entry["seats"].items()} for entry in rounds]
    result = play_rounds(ballots, spec.impostor_seat, spec.pair.majority, max_rounds=record["max_rounds"],
                         tie_rule=tie_rule, rng_for=lambda i: round_rng(spec.game_seed, tie_rule, i))
    out_round = {r.eliminated: r.round for r in result.rounds if r.eliminated is not None}
    p_imp = 1.0 if result.winner == "impostor" else 0.0
    game = game.model_copy(update=dict(
        winner=result.winner, winner_live=result.winner, win_condition=result.win_condition,
        p_imp_default=p_imp, p_imp_sym_candidate=p_imp, p_imp_sym_side=p_imp,
        rounds_played=len(rounds), max_rounds=record["max_rounds"],
        elimination_order=",".join(str(s) for s in result.elimination_order),
        private_notes=bool(record["private_notes"])))
    players = [p.model_copy(update={"eliminated_round": out_round.get(p.seat)}) for p in players]
    moves = []
    for entry, decided in zip(rounds, result.rounds):
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
