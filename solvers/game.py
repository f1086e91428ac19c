"""The game loop as one Inspect solver step, ``impostor_game``: rounds of descriptions, then simultaneous votes.

The paper's game is its one-round case (``-T rounds=1``); a longer game (``-T rounds=N``,
Appendix O.3) plays more rounds on the seats still in, each prompt carrying the round's
rules, the public record of earlier rounds and, with ``-T private_notes``, the seat's own
notes.  The rules live in ``impostor_bench.core`` (pure): after each round the one decider
(``core.rules.decide_played_round``) decides it, and the loop stores that decision for the
scorer.  These adapters only call models, apply the rules to what comes back and keep the
record in the sample store (also when a phase fails, so an errored game keeps what it had).
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Optional, Sequence

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ResponseSchema,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import JSONSchema

from impostor_bench.core import prompts
from impostor_bench.core.generation import SeatSettings, seat_roles, seat_settings
from impostor_bench.core.options import GameOptions
from impostor_bench.core.parsing import MAX_DESCRIPTION_CHARS, description_violation, one_line, parse_vote, vote_json_schema
from impostor_bench.core.records import player_label
from impostor_bench.core.descriptions import DescriptionViolation
from impostor_bench.core.rounds import (NOTE_MAX_CHARS, RoundView, clip_note, public_transcript, repeat_violation,
                                        round_ballot_class, speaking_order_of_round)
from impostor_bench.core.rules import Ballot, RoundResult, counted_vote, decide_played_round
from impostor_bench.core.schedule import GameSpec, call_seed
from impostor_bench.core.seat import SeatRecord
from impostor_bench.core.verbosity import description_limit, truncated
from impostor_bench.solvers.game_store import save_ballots, save_decisions, save_rounds, save_seats
from impostor_bench.solvers.seating import experiment_id_for, model_name, seat_models
from impostor_bench.solvers.usage import count_in_task, counting
from impostor_bench.solvers.vote_format import VoteFormats, answer_of, call_config, with_call_limits

CONSTRAINED_REASONING_MAX = 200


async def ask_model(model: Model, messages: list[ChatMessage], config: GenerateConfig) -> str:
    output = await model.generate(messages, config=with_call_limits(model, config))
    return answer_of(output)


def show_phase(state: TaskState, lines: list[str]) -> None:
    """Mirror a phase into the sample's messages so ``inspect view`` reads like a game
    (one message per phase: each message is a node Inspect snapshots and diffs)."""
    if lines:
        state.messages.append(ChatMessageAssistant(content="\n".join(lines)))


def shown_descriptions(spec: GameSpec, seats: list[SeatRecord],
                       remaining: Optional[Sequence[int]] = None) -> list[tuple[int, str]]:
    """What every player saw of a description phase: (player label, text) in speaking order
    (of the ``remaining`` seats; default: every seat)."""
    assert spec.speaking_order is not None, "the game's draws are made first"
    order = spec.speaking_order if remaining is None else speaking_order_of_round(spec.speaking_order, remaining)
    return [(player_label(seat), seats[seat].description) for seat in order]


RoundContext = Callable[[int], str]  # seat -> a longer game's prompt block (prompts.round_context)


async def describe_all(
    state: TaskState, spec: GameSpec, models: list[Model], seats: list[SeatRecord],
    settings: list[SeatSettings], max_chars: int, *, order: Sequence[int],
    context: Optional[RoundContext] = None, earlier: Optional[Callable[[int], list[str]]] = None,
    round_no: int = 1, language: str = "en", truncate_to: Optional[int] = None,
) -> None:
    """The description phase on ``seats`` (filled in place) in the round's speaking ``order``,
    each seat at its own ``settings``.  A longer game passes each seat's prompt ``context``;
    ``earlier`` gives a seat's shown descriptions of earlier rounds (a repeat is a violation).
    ``truncate_to``: the others see each valid description cut to that many characters
    (``core.verbosity``), the seat keeps the whole text as ``description_full``."""
    shown: list[tuple[int, str]] = []

    def violation_of(text: str, word: str, seat: int) -> Optional[DescriptionViolation]:
        broken = description_violation(text, word, max_chars, language)
        if broken is None and earlier is not None:
            repeat = repeat_violation(one_line(text), earlier(seat))
            broken = None if repeat is None else DescriptionViolation("other", repeat)  # class "other" in the tables
        return broken

    assert spec.impostor_seat is not None, "the game's draws are made first"
    for seat in order:
        word = spec.pair.impostor if spec.is_impostor(seat) else spec.pair.majority
        mate = spec.teammate(seat)
        user = prompts.description_prompt(
            mode=spec.mode, word=word, player_label=player_label(seat), previous=shown,
            players=spec.n_players, impostors=spec.n_impostors,
            teammate_label=None if mate is None else player_label(mate),
            context=None if context is None else context(seat), language=language,
        )
        messages: list[ChatMessage] = [
            ChatMessageSystem(content=prompts.texts(language)["DESCRIPTION_SYSTEM"]), ChatMessageUser(content=user)
        ]
        config = call_config(
            models[seat], temperature=settings[seat].temperature, max_tokens=settings[seat].max_tokens,
            top_p=settings[seat].top_p, seed=call_seed(spec.game_seed, "describe", seat, round_no),
        )
        record = seats[seat]
        record.model = model_name(models[seat])
        record.temperature, record.top_p = settings[seat].temperature, settings[seat].top_p
        with counting(record, "describe"):
            text = await ask_model(models[seat], messages, config)
            record.description_raw.append(text)
            violation = violation_of(text, word, seat)
            if violation is not None:
                messages += [
                    ChatMessageAssistant(content=text),
                    ChatMessageUser(content=prompts.description_retry(violation.message, max_chars, language)),
                ]
                text = await ask_model(models[seat], messages, config)
                record.description_raw.append(text)
                violation = violation_of(text, word, seat)
        record.description_valid = violation is None
        record.description_error = None if violation is None else violation.message
        record.description_class = None if violation is None else violation.kind
        record.description = one_line(text) if violation is None else prompts.INVALID_DESCRIPTION_PLACEHOLDER
        if truncate_to is not None and violation is None:
            record.description_full, record.description = record.description, truncated(record.description, truncate_to)
        shown.append((player_label(seat), record.description))
    show_phase(state, [f"Player {label} (speaks {i + 1}): {text}" for i, (label, text) in enumerate(shown)])


def start_game(state: TaskState, options: GameOptions) -> tuple[GameSpec, list[Model]]:
    """The game and its seats' models.  On a game's first phase, the experiment's own
    draws (impostor seat, teams, speaking order, game seed) are made from its identity, which needs the models
    of this eval, and kept in the sample metadata (the scorer and the log read them there)."""
    spec = GameSpec.from_metadata(state.metadata)
    if not spec.drawn or not state.metadata.get("experiment_id"):
        identity = experiment_id_for(options)
        if not state.metadata.get("experiment_id"):
            state.metadata["experiment_id"] = identity
        if not spec.drawn:
            spec = spec.for_experiment(identity)
            state.metadata.update({k: v for k, v in spec.to_metadata().items()
                                   if k in ("impostor_seat", "impostor_seats", "team_assignment", "speaking_order", "game_seed",
                                            "schedule")})
    assert spec.impostor_seat is not None
    models = seat_models(spec.mode, spec.impostor_seat, spec.team_assignment, players=spec.n_players,
                         impostor_seats=spec.impostors)
    return spec, models


def game_settings(spec: GameSpec, models: list[Model], options: GameOptions,
                  role_defaults: Optional[dict[str, dict[str, Any]]]) -> list[SeatSettings]:
    """Each seat's settings: explicit option > its role's registry-alias defaults > the paper's (by route)."""
    assert spec.impostor_seat is not None, "the game's draws are made first"
    roles = seat_roles(spec.mode, spec.impostor_seat, spec.team_assignment, players=spec.n_players,
                       impostor_seats=spec.impostors)
    return [seat_settings(model_name(models[s]), temperature=options.temperature, max_tokens=options.max_tokens,
                          vote_temperature=options.vote_temperature, alias_defaults=(role_defaults or {}).get(roles[s]),
                          top_p=options.top_p)
            for s in range(len(models))]


def _vote_schema(seat: int, constrained: bool, structured: bool,
                 candidates: Optional[Sequence[int]] = None) -> tuple[Optional[ResponseSchema], str]:
    if constrained:
        schema = vote_json_schema(seat, reasoning_max=CONSTRAINED_REASONING_MAX, candidates=candidates)
        return ResponseSchema(name="ballot", json_schema=JSONSchema.model_validate(schema)), "constrained"
    if structured:
        return ResponseSchema(name="ballot", json_schema=JSONSchema.model_validate(vote_json_schema())), "structured"
    return None, "free"


def wants_constrained(model: Model, constrained_votes: Optional[bool]) -> bool:
    """Constrained voting: on by default for the embedded local player only (A.3 setting for APIs)."""
    if constrained_votes is not None:
        return constrained_votes
    return model_name(model).startswith("local/")


async def vote_all(
    state: TaskState, spec: GameSpec, models: list[Model], seats: list[SeatRecord],
    shown: list[tuple[int, str]], settings: list[SeatSettings],
    options: GameOptions, formats: Optional[VoteFormats] = None,
    *, voters: Sequence[int], context: Optional[RoundContext] = None, round_no: int = 1,
) -> None:
    """The voting round on ``seats`` (filled in place): the ``voters``' concurrent ballots on ``shown``,
    each at its seat's vote temperature (``settings``).  A structured ballot a server refuses
    falls back to a weaker form (``formats``, ``impostor_bench.solvers.vote_format``); the seat records the
    form it used (``vote_mode``) and, if weaker than asked, ``vote_fallback``."""
    formats = formats or VoteFormats()

    async def ask(seat: int, messages: list[ChatMessage], config: GenerateConfig, asked: str) -> str:
        if config.response_schema is None:
            return await ask_model(models[seat], messages, config)
        text, form = await formats.generate(models[seat], messages, config, state.metadata)
        used = {"json_schema": asked, "json_object": "json_object", "prompt": "free"}[form]
        seats[seat].vote_mode, seats[seat].vote_fallback = used, (None if used == asked else f"{asked}->{used}")
        return text

    async def vote(seat: int) -> None:
        word = spec.pair.impostor if spec.is_impostor(seat) else spec.pair.majority
        mate = spec.teammate(seat)
        user = prompts.voting_prompt(
            mode=spec.mode, word=word, player_label=player_label(seat), descriptions=shown,
            impostors=spec.n_impostors,
            teammate_label=None if mate is None else player_label(mate),
            context=None if context is None else context(seat), language=options.language,
        )
        schema, vote_mode = _vote_schema(seat, wants_constrained(models[seat], options.constrained_votes),
                                         options.structured_votes, voters)
        config = call_config(
            models[seat], temperature=settings[seat].vote_temperature, max_tokens=settings[seat].max_tokens,
            top_p=settings[seat].top_p, response_schema=schema, seed=call_seed(spec.game_seed, "vote", seat, round_no),
        )
        messages: list[ChatMessage] = [
            ChatMessageSystem(content=prompts.texts(options.language)["VOTING_SYSTEM"]), ChatMessageUser(content=user)
        ]
        record = seats[seat]
        count_in_task(record, "vote")  # a task of its own (gather below): its ballot calls count here
        record.vote_mode = vote_mode
        record.vote_temperature = settings[seat].vote_temperature
        text = await ask(seat, messages, config, vote_mode)
        record.vote_raw.append(text)
        parsed = parse_vote(text, seat, spec.n_players)
        if parsed.error is not None and parsed.retry:
            messages += [
                ChatMessageAssistant(content=text),
                ChatMessageUser(content=prompts.voting_retry(parsed.error, options.language)),
            ]
            text = await ask(seat, messages, config, vote_mode)
            record.vote_raw.append(text)
            parsed = parse_vote(text, seat, spec.n_players)
        record.vote, record.confidence, record.reasoning = parsed.vote, parsed.confidence, parsed.reasoning
        record.self_declared, record.word_guess = parsed.self_declared, parsed.word_guess
        record.ballot_error, record.ballot_class = parsed.error, parsed.ballot_class

    await asyncio.gather(*(vote(seat) for seat in voters))
    lines = []
    for seat in voters:
        r = seats[seat]
        target = f"Player {player_label(r.vote)}" if r.vote is not None else (
            "itself" if r.ballot_class == "self_vote" else f"invalid ({r.ballot_class})")
        extra = f", self-declares, guesses {r.word_guess!r}" if r.self_declared else ""
        lines.append(f"Player {player_label(seat)} votes {target}{extra}")
    show_phase(state, lines)



async def write_notes(spec: GameSpec, models: list[Model], seats: list[SeatRecord], settings: list[SeatSettings],
                      writers: Sequence[int], context: RoundContext, round_no: int,
                      language: str = "en") -> dict[int, str]:
    """Each of the ``writers``' private note after a round (counted in that round's tokens)."""

    async def note(seat: int) -> tuple[int, str]:
        word = spec.pair.impostor if spec.is_impostor(seat) else spec.pair.majority
        user = prompts.note_prompt(word=word, player_label=player_label(seat), context=context(seat),
                                   max_chars=NOTE_MAX_CHARS, language=language)
        config = call_config(models[seat], temperature=settings[seat].temperature, max_tokens=settings[seat].max_tokens,
                             top_p=settings[seat].top_p, seed=call_seed(spec.game_seed, "note", seat, round_no))
        with counting(seats[seat], "describe"):
            text = await ask_model(models[seat], [ChatMessageSystem(content=prompts.texts(language)["NOTE_SYSTEM"]),
                                                  ChatMessageUser(content=user)], config)
        return seat, clip_note(text)

    return dict(await asyncio.gather(*(note(s) for s in writers)))


async def play_game(state: TaskState, options: GameOptions, role_defaults: Optional[dict[str, dict[str, Any]]],
                    formats: VoteFormats, max_chars: int = MAX_DESCRIPTION_CHARS) -> None:
    """Play one game, round after round, until the core decides it (the paper's game: one round).

    A round: the remaining seats describe in the game's speaking order, then vote at once; the
    core decides the round (``decide_played_round``) and the decisions so far are stored
    (``game_store.save_decisions``) for the scorer.  Round 1's seat records go where the
    paper's game keeps them (the players table); a longer game also keeps every round, its
    records and notes, under ``impostor:rounds`` (the moves table).
    """
    spec, models = start_game(state, options)
    assert spec.speaking_order is not None and spec.impostor_seat is not None  # drawn by start_game
    max_chars = min(max_chars, description_limit(options.length_budget))  # -T length_budget tightens the 750 rule
    max_rounds, private_notes, language = options.rounds, options.private_notes, options.language
    longer = max_rounds > 1  # the paper's game shows no round headers and keeps no rounds record
    settings = game_settings(spec, models, options, role_defaults)
    remaining = list(range(len(models)))  # the seat list; a longer game removes the seats voted out
    history: list[RoundView] = []
    notes: dict[int, list[str]] = {s: [] for s in remaining}
    said: dict[int, list[str]] = {s: [] for s in remaining}
    decisions: list[RoundResult] = []
    kept: list[dict[str, Any]] = []
    record = {"max_rounds": max_rounds, "private_notes": private_notes, "tie_rule": options.tie_rule, "rounds": kept}

    def context_of(seats_in: list[int], history_text: str, this_round: int) -> RoundContext:
        """Each seat's prompt block in a longer game: the round, the seats still in, the public record, its notes."""
        labels = [player_label(s) for s in sorted(seats_in)]
        return lambda seat: prompts.round_context(round_no=this_round, max_rounds=max_rounds, remaining_labels=labels,
                                                  history=history_text, notes=notes[seat] if private_notes else (),
                                                  language=language)

    for round_no in range(1, max_rounds + 1):
        seats = [SeatRecord(model=model_name(m)) for m in models]
        order = speaking_order_of_round(spec.speaking_order, remaining)
        voters = sorted(remaining)
        context = context_of(remaining, public_transcript(history, language), round_no) if longer else None
        entry: dict[str, Any] = {"round": round_no, "remaining": list(remaining), "order": list(order),
                                 "seats": {}, "notes": {}}
        if longer:
            kept.append(entry)
            show_phase(state, [f"Round {round_no} of at most {max_rounds}: players "
                               + ", ".join(str(player_label(s)) for s in voters)])
        try:
            await describe_all(state, spec, models, seats, settings, max_chars, order=order, context=context,
                               earlier=lambda s: said[s], round_no=round_no, language=language,
                               truncate_to=options.truncate_to)
        finally:
            if round_no == 1:
                save_seats(state.store, seats)
        try:
            await vote_all(state, spec, models, seats, shown_descriptions(spec, seats, remaining), settings, options,
                           formats, voters=voters, context=context, round_no=round_no)
        finally:
            for s in voters:
                seats[s].ballot_class = round_ballot_class(seats[s].vote, seats[s].ballot_class or "missing",
                                                           s, remaining)
            if round_no == 1:
                save_ballots(state.store, seats)
            if longer:
                entry["seats"] = {str(s): seats[s].to_dict() for s in voters}
                save_rounds(state.store, record)
        ballots = {s: Ballot(counted_vote(seats[s].vote, s, remaining), bool(seats[s].self_declared),
                             seats[s].word_guess) for s in voters}
        result = decide_played_round(ballots, remaining, spec.impostors, spec.pair.majority, round_no=round_no,
                                     max_rounds=max_rounds, tie_rule=options.tie_rule, game_seed=spec.game_seed,
                                     language=language)
        decisions.append(result)
        save_decisions(state.store, decisions)
        if result.winner is not None and not longer:
            return
        history.append(RoundView(round_no, tuple((s, seats[s].description) for s in order),
                                 tuple((s, ballots[s].vote) for s in voters), result.eliminated))
        for s in voters:
            if seats[s].description_valid:
                said[s].append(seats[s].description_full or seats[s].description)  # as written, before a cut
        out = "nobody" if result.eliminated is None else f"Player {player_label(result.eliminated)}"
        show_phase(state, [f"Round {round_no}: {out} eliminated"
                           + (f"; the {result.winner} wins ({result.win_condition})" if result.winner else "")])
        if result.winner is not None:
            return
        if result.eliminated is not None:
            remaining.remove(result.eliminated)
        if private_notes:
            written = await write_notes(spec, models, seats, settings, remaining,
                                        context_of(remaining, public_transcript(history, language), round_no), round_no,
                                        language)
            for s, text in written.items():
                notes[s].append(text)
            entry["seats"] = {str(s): seats[s].to_dict() for s in entry["remaining"]}
            entry["notes"] = {str(s): t for s, t in written.items()}
            save_rounds(state.store, record)


@solver
def impostor_game(options: Optional[GameOptions] = None,
                  role_defaults: Optional[dict[str, dict[str, Any]]] = None) -> Solver:
    """One game, every round of it, as one solver step (``play_game``).

    Inspect wraps every solver step in a span, snapshots the whole sample state
    before and after it and logs the difference; one step per game instead of one
    per phase saves ~2.5 M instructions a game, 3% of a game against an instant
    provider (``benchmarks/RESULTS.md``).  The transcript message of each phase
    still marks where one ends and the next begins.

    Vote temperature per seat (``impostor_bench.core.generation``): ``vote_temperature`` if given,
    else the seat's alias default, else max(0.3, T - 0.4) on OpenAI/OpenRouter-compatible
    backends and T on Anthropic's (A.3).  A description that leaks the word, is empty or too
    long is re-prompted once with the violation, then shown as a neutral placeholder; an
    unreadable ballot is re-prompted once for valid JSON, then the vote is null.
    """
    formats = VoteFormats()  # per task: the ballot form each model takes (impostor_bench.solvers.vote_format)
    opts = options or GameOptions()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await play_game(state, opts, role_defaults, formats)
        return state

    return solve
