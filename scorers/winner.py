"""Scorer: the paper's winner logic over the recorded ballots, plus game metrics.

One sample is one game.  The score value is 1 when the impostor wins (under the
tie rule the game was played with), and the score metadata holds the full game
record: ``{"game": GameRow, "players": [PlayerRow x 4]}``.  The answer is the game
in one line and the explanation the game in full (``impostor_bench.core.summary``), so
``inspect view`` shows them in the samples list and the Scores tab.
"""

from __future__ import annotations

import math
from typing import Callable, Optional, Sequence, cast

from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    metric,
    scorer,
    stderr,
)
from inspect_ai.event import ModelEvent
from inspect_ai.log import transcript
from inspect_ai.solver import TaskState
from inspect_ai.util import sample_limits

from impostor_bench.core.records import (BALLOT_CLASSES, BallotClass, Team, INVALID_BALLOT_CLASSES, LEGAL_BALLOT_CLASSES, GameRow, PlayerRow,
                              Side, TieRule, derive_ballot_class, impostor_seat_list, row_dict)
from impostor_bench.core.rules import RoundResult
from impostor_bench.core.schedule import GameSpec
from impostor_bench.core.seat import SeatRecord
from impostor_bench.core.summary import answer_line, explanation
from impostor_bench.scorers.rounds_record import build_rounds_record
from impostor_bench.solvers.game_store import load_decisions, load_rounds, load_seats


def live_winner(decisions: Sequence[RoundResult], tie_rule: TieRule, game: str) -> Side:
    """The winner under ``tie_rule`` as the solver decided it: the rule played, or in the paper's
    game any rule (its decision holds each rule's own draw); a longer game only re-scores under
    the rule it was played with, since its later rounds followed from it."""
    last = decisions[-1]
    live = last.winner_live if tie_rule == last.tie_rule else last.winner_live_by_rule.get(tie_rule)
    if live is None:
        raise ValueError(f"game {game} was played under tie rule {last.tie_rule!r} over {len(decisions)} rounds; "
                         f"score it with tie_rule={last.tie_rule!r}")
    return live


def build_record(spec: GameSpec, seats: list[SeatRecord], decisions: Sequence[RoundResult], *, experiment_id: str,
                 seed: int, tie_rule: TieRule, language: str = "en", length_budget: Optional[int] = None,
                 truncate_to: Optional[int] = None) -> tuple[GameRow, list[PlayerRow]]:
    """The contract rows of one finished game from its round-1 ``seats`` and the core's ``decisions``
    (one per round played, as the solver stored them), pure; also used by tests.  The ballot
    counts describe round 1, like the players rows; the winner is the last round's."""
    assert spec.impostor_seat is not None and spec.speaking_order is not None, "the game's draws are made first"
    first, last = decisions[0], decisions[-1]
    p_default, p_candidate, p_side = last.p_imp_default, last.p_imp_sym_candidate, last.p_imp_sym_side
    assert last.winner is not None and last.win_condition is not None, "a scored game is decided"
    assert p_default is not None and p_candidate is not None and p_side is not None, "a decided round has them"
    game_id = f"{experiment_id}/{spec.sample_id}"
    position = {seat: pos for pos, seat in enumerate(spec.speaking_order)}
    players = []
    for seat, s in enumerate(seats):
        imp = spec.is_impostor(seat)
        # Stores written before the class existed: derived from what the ballot recorded.
        ballot_class = s.ballot_class or derive_ballot_class(
            s.vote, seat, s.ballot_error, bool(s.self_declared), None, len(s.vote_raw))
        input_tokens, output_tokens = s.tokens()
        players.append(PlayerRow(
            game_id=game_id, seat=seat, model=s.model, role="impostor" if imp else "majority",
            team=None if spec.team_assignment is None else cast(Team, spec.team_assignment[seat]),
            speaking_position=position[seat], description=s.description,
            description_valid=bool(s.description_valid), vote=s.vote, confidence=s.confidence,
            self_declared=bool(s.self_declared), word_guess=s.word_guess,
            experiment_id=experiment_id, word=spec.pair.impostor if imp else spec.pair.majority,
            description_raw=(s.description_raw or [""])[-1], description_attempts=len(s.description_raw),
            description_error=s.description_error, description_class=s.description_class, ballot_valid=ballot_class in LEGAL_BALLOT_CLASSES,
            ballot_error=s.ballot_error, ballot_attempts=len(s.vote_raw),
            vote_raw=(s.vote_raw or [""])[-1], reasoning=s.reasoning, ballot_class=cast(BallotClass, ballot_class),
            temperature=s.temperature, top_p=s.top_p, vote_temperature=s.vote_temperature,
            description_full=s.description_full, vote_mode=s.vote_mode, vote_fallback=s.vote_fallback,
            input_tokens=input_tokens, output_tokens=output_tokens, served_model=s.served(),
        ))
    vote_modes = sorted({s.vote_mode for s in seats})
    game = GameRow(
        experiment_id=experiment_id, game_id=game_id, game_index=spec.game_index, mode=spec.mode,
        difficulty=spec.difficulty, pair_id=spec.pair.pair_id, majority_word=spec.pair.majority,
        impostor_word=spec.pair.impostor, impostor_seat=spec.impostor_seat,
        impostor_model=seats[spec.impostor_seat].model,
        impostor_speaking_position=position[spec.impostor_seat], winner=last.winner,
        win_condition=last.win_condition, seed=seed, tie_rule=tie_rule,
        winner_live=live_winner(decisions, tie_rule, game_id),
        tie_k=first.tie_k, impostor_in_tie=first.impostor_in_tie, p_imp_default=p_default,
        p_imp_sym_candidate=p_candidate, p_imp_sym_side=p_side,
        n_valid_votes=first.n_valid_votes, n_invalid_ballots=sum(p.ballot_class in INVALID_BALLOT_CLASSES for p in players),
        n_invalid_descriptions=sum(not p.description_valid for p in players),
        votes_on_impostor=first.votes_on_impostor,
        team_assignment=None if spec.team_assignment is None else "".join(spec.team_assignment),
        speaking_order="".join(str(s) for s in spec.speaking_order),
        n_players=spec.n_players, n_impostors=spec.n_impostors,
        impostor_seats=None if spec.n_impostors == 1 else ",".join(map(str, spec.impostors)),
        vote_mode=vote_modes[0] if len(vote_modes) == 1 else "mixed", language=language,
        length_budget=length_budget, truncate_to=truncate_to,
    )
    return game, players


# ---------------------------------------------------------------- metrics


GameFn = Callable[[dict, list[dict]], float]


def _ratio(num: GameFn, den: GameFn) -> Metric:
    """A metric: sum of num over sum of den across games; NaN (not 0) when there is nothing to count."""

    def compute(scores: list[SampleScore]) -> float:
        n = d = 0.0
        for s in scores:
            md = s.score.metadata or {}
            if "game" not in md:
                continue
            n += num(md["game"], md["players"])
            d += den(md["game"], md["players"])
        return n / d if d else math.nan

    return compute


@metric
def impostor_win_rate() -> Metric:
    """Share of games the impostor wins under the default rule (A.1)."""
    return _ratio(lambda g, p: g["winner"] == "impostor", lambda g, p: 1)


def _legal(r: dict) -> bool:
    """A legal ballot (``valid`` or ``self_vote``; rows without a class: a counted vote)."""
    cls = r.get("ballot_class")
    return r["vote"] is not None if cls is None else cls in LEGAL_BALLOT_CLASSES


def _invalid(r: dict) -> bool:
    cls = r.get("ballot_class")
    return r["vote"] is None if cls is None else cls in INVALID_BALLOT_CLASSES


def _impostor_seats(g: dict) -> list[int]:
    """The game's impostor seats (one in the paper's game; a record without the column: its ``impostor_seat``)."""
    return impostor_seat_list(g["impostor_seat"], g.get("impostor_seats"))


@metric
def detection_accuracy() -> Metric:
    """Majority-seat ballots that name the impostor, over the legal majority-seat ballots
    (a majority player's self-vote is legal and names no impostor: a miss)."""
    return _ratio(lambda g, p: sum(1 for r in p if r["role"] == "majority" and r["vote"] in _impostor_seats(g)),
        lambda g, p: sum(1 for r in p if r["role"] == "majority" and _legal(r)),
    )


@metric
def self_declaration_rate() -> Metric:
    """Share of seats that self-declare."""
    return _ratio(lambda g, p: sum(r["self_declared"] for r in p), lambda g, p: len(p))


@metric
def invalid_ballot_rate() -> Metric:
    """Share of invalid ballots (unparseable, names no player, missing); a self-vote is legal."""
    return _ratio(lambda g, p: g["n_invalid_ballots"], lambda g, p: len(p))


@metric
def invalid_description_rate() -> Metric:
    """Share of descriptions that failed enforcement twice."""
    return _ratio(lambda g, p: g["n_invalid_descriptions"], lambda g, p: len(p))


@metric
def invalid_rates_by_model() -> Metric:
    """Invalid ballot and description rates of each model over the seats it played, as
    ``invalid_ballot_rate/<model>`` and ``invalid_description_rate/<model>`` (Inspect
    flattens the dict into one metric per key)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        seats: dict[str, list[int]] = {}  # model -> [seats, invalid ballots, invalid descriptions]
        for s in scores:
            md = s.score.metadata or {}
            for p in md.get("players", []):
                n = seats.setdefault(p["model"], [0, 0, 0])
                n[0] += 1
                n[1] += _invalid(p)
                n[2] += not p["description_valid"]
        out: dict[str, float] = {}
        for model, (n_seats, ballots, descriptions) in sorted(seats.items()):
            out[f"invalid_ballot_rate/{model}"] = ballots / n_seats
            out[f"invalid_description_rate/{model}"] = descriptions / n_seats
        return out

    return compute


@metric
def rates_by_model() -> Metric:
    """The headline rates of each model over the games it played, whatever the mode, so runs
    of all modes compare by model (MLflow): ``impostor_win_rate/<model>`` over the games it
    played the impostor, ``majority_win_rate/<model>`` over its majority seats,
    ``detection_accuracy/<model>`` over its majority seats' legal ballots (the definitions of
    the run-wide metrics above, restricted to the model), and the counts behind them
    (``impostor_games/<model>``, ``majority_seats/<model>``)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        # model -> [impostor games, impostor wins, majority seats, majority wins, legal ballots, hits]
        n: dict[str, list[int]] = {}
        for s in scores:
            md = s.score.metadata or {}
            g = md.get("game")
            if not g:
                continue
            for p in md.get("players", []):
                c = n.setdefault(p["model"], [0] * 6)
                if p["role"] == "impostor":
                    c[0] += 1
                    c[1] += g["winner"] == "impostor"
                else:
                    c[2] += 1
                    c[3] += g["winner"] == "majority"
                    c[4] += _legal(p)
                    c[5] += p["vote"] in _impostor_seats(g)
        out: dict[str, float] = {}
        for model, (ig, iw, ms, mw, legal, hits) in sorted(n.items()):
            out[f"impostor_games/{model}"], out[f"majority_seats/{model}"] = ig, ms
            if ig:
                out[f"impostor_win_rate/{model}"] = iw / ig
            if ms:
                out[f"majority_win_rate/{model}"] = mw / ms
            if legal:
                out[f"detection_accuracy/{model}"] = hits / legal
        return out

    return compute


@metric
def ballot_class_rates() -> Metric:
    """Share of all ballots in each class of ``impostor_bench.core.records.BALLOT_CLASSES``, as
    ``ballot_class_rate/<class>`` (the invalid ones sum to ``invalid_ballot_rate``)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        counts = dict.fromkeys(BALLOT_CLASSES, 0)
        n = 0
        for s in scores:
            for p in (s.score.metadata or {}).get("players", []):
                counts[p["ballot_class"]] += 1
                n += 1
        return {f"ballot_class_rate/{c}": (k / n if n else math.nan) for c, k in counts.items()}

    return compute


@metric
def vote_fallbacks() -> Metric:
    """Ballots cast in a weaker form than asked because the server refused it
    (``impostor_bench.solvers.vote_format``): ``vote_fallback_count`` and ``vote_fallback_count/<model>``."""

    def compute(scores: list[SampleScore]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for s in scores:
            for p in (s.score.metadata or {}).get("players", []):
                if p.get("vote_fallback"):
                    counts[p["model"]] = counts.get(p["model"], 0) + 1
        return {"vote_fallback_count": sum(counts.values())} | {
            f"vote_fallback_count/{m}": n for m, n in sorted(counts.items())}

    return compute


@metric
def tie_rate() -> Metric:
    """Share of games decided by a top-of-ballot tie."""
    return _ratio(lambda g, p: g["win_condition"] == "tie", lambda g, p: 1)


GAME_METRICS = [
    impostor_win_rate(), stderr(), detection_accuracy(), self_declaration_rate(),
    invalid_ballot_rate(), invalid_description_rate(), tie_rate(), invalid_rates_by_model(), rates_by_model(),
    ballot_class_rates(),
    vote_fallbacks(),
]


class GameTimeLimitError(RuntimeError):
    """A game cut short by its time budget: an errored game (retried by ``eval_retry``), never scored.

    The task sets ``continue_on_fail``, so the other games play on and the log ends ``error``
    with this game kept (its transcript, store and this message)."""


def likely_cause(errors: list[str]) -> str | None:
    """The model-call error most likely to explain a game cut off by its time limit (``errors`` in
    the order they happened): the last one, unless it is the call the time limit itself cancelled,
    which says nothing of the cause; then the provider's last error before it."""
    real = [x for x in errors if not _cancelled(x)]
    return real[-1] if real else (errors[-1] if errors else None)


def _cancelled(error: object) -> bool:
    return "model call cancelled" in str(error)


def time_limit_problem(game: str) -> str | None:
    """Why the game stopped unfinished, if Inspect's sample time limit (-T game_time_limit) stopped it.

    Inspect scores a sample that hit a limit from whatever state it reached; a game cut off
    mid-phase has missing descriptions or ballots that would read as a real (impostor) win.
    The message names the last failed model call, usually the cause (a dead provider retried
    with backoff), since Inspect logs retries below the console's level.
    """
    try:
        clock = sample_limits().time
    except RuntimeError:  # scored outside a running sample (tests, inspect score)
        return None
    if clock.limit is None or clock.usage < clock.limit:
        return None
    error = likely_cause([e.error for e in transcript().events if isinstance(e, ModelEvent) and e.error])
    if error is None:
        cause = "no model call failed: the game is slow;"
    elif _cancelled(error):  # only the call the limit cancelled: it was still waiting for an answer
        cause = "a model call was still waiting for its answer (a slow or hung provider): check the provider or"
    else:
        cause = (f"the last model call failed with: {' '.join(str(error).split())[:300]}; fix the provider (key, "
                 f"URL, network) or")
    return (f"game {game} stopped unfinished by its time limit of {clock.limit:.0f} s (-T game_time_limit); "
            f"{cause} raise -T game_time_limit (0: no limit)")


@scorer(metrics=GAME_METRICS)
def impostor_winner(tie_rule: TieRule = "default", experiment_id: str | None = None) -> Scorer:
    """The game record from what the solver stored: its seats' records and the core's decision of
    each round (``game_store.load_decisions``); nothing is decided again here."""

    async def score(state: TaskState, target: Target) -> Score:
        spec = GameSpec.from_metadata(state.metadata)
        problem = time_limit_problem(spec.sample_id)
        if problem:
            raise GameTimeLimitError(problem)
        seats = load_seats(state.store)
        assert seats is not None, "a scored game has its seats in the store"
        exp = experiment_id or state.metadata["experiment_id"]
        decisions = load_decisions(state.store)
        if not decisions:
            raise ValueError(f"game {spec.sample_id} has no stored decision (a log written before the solver stored "
                             f"its decisions); play it again to score it")
        rounds = load_rounds(state.store)
        moves = None
        game, players = build_record(spec, seats, decisions, experiment_id=exp, seed=state.metadata["seed"],
                                     tie_rule=tie_rule, language=state.metadata.get("language", "en"),
                                     length_budget=state.metadata.get("length_budget"),
                                     truncate_to=state.metadata.get("truncate_to"))
        if rounds is not None:  # a longer game (-T rounds > 1): its rows and its moves
            game, players, moves = build_rounds_record(spec, game, players, rounds, decisions)
        metadata = {"game": row_dict(game), "players": [row_dict(p) for p in players]}
        if moves is not None:
            metadata["moves"] = [m.model_dump() for m in moves]
        return Score(
            value=1.0 if game.winner_live == "impostor" else 0.0,
            answer=answer_line(game, players, moves),  # inspect view's samples list and sample header
            explanation=explanation(game, players, moves),  # the Scores tab: verdict, rule, every player's text
            metadata=metadata,
        )

    return score
