"""The two phases of a game as Inspect solvers: descriptions, then simultaneous votes.

The rules live in ``impostor`` (pure); these adapters only call models, apply
the rules to what comes back, and keep the record in the sample store (also
when a phase fails, so an errored game keeps what it had).  The task runs both
phases as one solver step, ``impostor_game``.
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
from impostor_bench.core.records import N_SEATS, player_label
from impostor_bench.core.descriptions import DescriptionViolation
from impostor_bench.core.rounds import repeat_violation
from impostor_bench.core.schedule import GameSpec, derive_seed
from impostor_bench.core.seat import SeatRecord
from impostor_bench.solvers.game_store import load_seats, save_ballots, save_seats
from impostor_bench.solvers.seating import experiment_id_for, model_name, seat_models
from impostor_bench.solvers.usage import count_in_task, counting
from impostor_bench.solvers.vote_format import VoteFormats, answer_of, call_config, with_call_limits

CONSTRAINED_REASONING_MAX = 200


def _seat_records(state: TaskState) -> list[SeatRecord]:
    seats = load_seats(state.store)
    if seats is None:
        seats = [SeatRecord() for _ in range(N_SEATS)]
    return seats


async def ask_model(model: Model, messages: list[ChatMessage], config: GenerateConfig) -> str:
    output = await model.generate(messages, config=with_call_limits(model, config))
    return answer_of(output)


def show_phase(state: TaskState, lines: list[str]) -> None:
    """Mirror a phase into the sample's messages so ``inspect view`` reads like a game
    (one message per phase: each message is a node Inspect snapshots and diffs)."""
    if lines:
        state.messages.append(ChatMessageAssistant(content="\n".join(lines)))


def shown_descriptions(spec: GameSpec, seats: list[SeatRecord]) -> list[tuple[int, str]]:
    """What every player saw of the description phase: (player label, text) in speaking order."""
    assert spec.speaking_order is not None, "the game's draws are made first"
    return [(player_label(seat), seats[seat].description) for seat in spec.speaking_order]


RoundContext = Callable[[int], str]  # seat -> a multi-round game's prompt block (impostor_bench.solvers.rounds)


def call_seed(spec: GameSpec, phase: str, seat: int, round_no: int) -> int:
    """A call's seed; a later round's calls get their own (round 1: the paper's game's seeds)."""
    parts: tuple = (spec.game_seed, phase, seat) if round_no == 1 else (spec.game_seed, phase, seat, "round", round_no)
    return derive_seed(*parts) % 2**31


async def describe_all(
    state: TaskState, spec: GameSpec, models: list[Model], seats: list[SeatRecord],
    settings: list[SeatSettings], max_chars: int, *, order: Optional[Sequence[int]] = None,
    context: Optional[RoundContext] = None, earlier: Optional[Callable[[int], list[str]]] = None,
    round_no: int = 1,
) -> None:
    """The description phase on ``seats`` (filled in place), each seat at its own ``settings``.
    A multi-round game passes the round's ``order`` (remaining seats), each seat's prompt
    ``context`` and its ``earlier`` descriptions (a repeat is a violation)."""
    shown: list[tuple[int, str]] = []

    def violation_of(text: str, word: str, seat: int) -> Optional[DescriptionViolation]:
        broken = description_violation(text, word, max_chars)
        if broken is None and earlier is not None:
            repeat = repeat_violation(one_line(text), earlier(seat))
            broken = None if repeat is None else DescriptionViolation("other", repeat)  # class "other" in the tables
        return broken

    speakers = spec.speaking_order if order is None else order
    assert speakers is not None and spec.impostor_seat is not None, "the game's draws are made first"
    for seat in speakers:
        word = spec.pair.impostor if seat == spec.impostor_seat else spec.pair.majority
        mate = spec.teammate(seat)
        user = prompts.description_prompt(
            mode=spec.mode, word=word, player_label=player_label(seat), previous=shown,
            teammate_label=None if mate is None else player_label(mate),
            context=None if context is None else context(seat),
        )
        messages: list[ChatMessage] = [
            ChatMessageSystem(content=prompts.DESCRIPTION_SYSTEM), ChatMessageUser(content=user)
        ]
        config = call_config(
            models[seat], temperature=settings[seat].temperature, max_tokens=settings[seat].max_tokens,
            top_p=settings[seat].top_p, seed=call_seed(spec, "describe", seat, round_no),
        )
        record = seats[seat]
        record.model = model_name(models[seat])
        record.temperature = settings[seat].temperature
        with counting(record, "describe"):
            text = await ask_model(models[seat], messages, config)
            record.description_raw.append(text)
            violation = violation_of(text, word, seat)
            if violation is not None:
                messages += [
                    ChatMessageAssistant(content=text),
                    ChatMessageUser(content=prompts.DESCRIPTION_RETRY.format(violation=violation.message, max_chars=max_chars)),
                ]
                text = await ask_model(models[seat], messages, config)
                record.description_raw.append(text)
                violation = violation_of(text, word, seat)
        record.description_valid = violation is None
        record.description_error = None if violation is None else violation.message
        record.description_class = None if violation is None else violation.kind
        record.description = one_line(text) if violation is None else prompts.INVALID_DESCRIPTION_PLACEHOLDER
        shown.append((player_label(seat), record.description))
    show_phase(state, [f"Player {label} (speaks {i + 1}): {text}" for i, (label, text) in enumerate(shown)])


def start_game(state: TaskState) -> tuple[GameSpec, list[Model]]:
    """The game and its seats' models.  On a game's first phase, the experiment's own
    draws (impostor seat, teams, speaking order, game seed) are made from its identity, which needs the models
    of this eval, and kept in the sample metadata (the scorer and the log read them there)."""
    spec = GameSpec.from_metadata(state.metadata)
    if not spec.drawn or not state.metadata.get("experiment_id"):
        identity = experiment_id_for(spec.mode, spec.difficulty, state.metadata["seed"],
                                     state.metadata.get("rounds", 1), state.metadata.get("private_notes", False))
        if not state.metadata.get("experiment_id"):
            state.metadata["experiment_id"] = identity
        if not spec.drawn:
            spec = spec.for_experiment(identity)
            state.metadata.update({k: v for k, v in spec.to_metadata().items()
                                   if k in ("impostor_seat", "team_assignment", "speaking_order", "game_seed", "schedule")})
    assert spec.impostor_seat is not None
    models = seat_models(spec.mode, spec.impostor_seat, spec.team_assignment)
    return spec, models


def game_settings(spec: GameSpec, models: list[Model], options: GameOptions,
                  role_defaults: Optional[dict[str, dict[str, Any]]]) -> list[SeatSettings]:
    """Each seat's settings: explicit option > its role's registry-alias defaults > the paper's (by route)."""
    assert spec.impostor_seat is not None, "the game's draws are made first"
    roles = seat_roles(spec.mode, spec.impostor_seat, spec.team_assignment)
    return [seat_settings(model_name(models[s]), temperature=options.temperature, max_tokens=options.max_tokens,
                          vote_temperature=options.vote_temperature, alias_defaults=(role_defaults or {}).get(roles[s]))
            for s in range(N_SEATS)]


async def play_descriptions(state: TaskState, spec: GameSpec, models: list[Model], seats: list[SeatRecord],
                            options: GameOptions, role_defaults: Optional[dict[str, dict[str, Any]]],
                            max_chars: int) -> list[SeatSettings]:
    """The description phase on ``seats``, stored also when it fails; the seats' settings."""
    try:
        settings = game_settings(spec, models, options, role_defaults)
        await describe_all(state, spec, models, seats, settings, max_chars)
    finally:
        save_seats(state.store, seats)
    return settings


@solver
def description_phase(options: Optional[GameOptions] = None, max_chars: int = MAX_DESCRIPTION_CHARS,
                      role_defaults: Optional[dict[str, dict[str, Any]]] = None) -> Solver:
    """Each seat, in the game's speaking order, describes its word seeing earlier descriptions.

    A description that leaks the word, is empty or too long is re-prompted once
    with the violation; if it fails again the others see a neutral placeholder.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        spec, models = start_game(state)
        await play_descriptions(state, spec, models, _seat_records(state), options or GameOptions(), role_defaults,
                                max_chars)
        return state

    return solve


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
    *, voters: Sequence[int] = range(N_SEATS), context: Optional[RoundContext] = None, round_no: int = 1,
) -> None:
    """The voting round on ``seats`` (filled in place): four concurrent ballots on ``shown``,
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
        word = spec.pair.impostor if seat == spec.impostor_seat else spec.pair.majority
        mate = spec.teammate(seat)
        user = prompts.voting_prompt(
            mode=spec.mode, word=word, player_label=player_label(seat), descriptions=shown,
            teammate_label=None if mate is None else player_label(mate),
            context=None if context is None else context(seat),
        )
        schema, vote_mode = _vote_schema(seat, wants_constrained(models[seat], options.constrained_votes),
                                         options.structured_votes, None if context is None else voters)
        config = call_config(
            models[seat], temperature=settings[seat].vote_temperature, max_tokens=settings[seat].max_tokens,
            top_p=settings[seat].top_p, response_schema=schema, seed=call_seed(spec, "vote", seat, round_no),
        )
        messages: list[ChatMessage] = [
            ChatMessageSystem(content=prompts.VOTING_SYSTEM), ChatMessageUser(content=user)
        ]
        record = seats[seat]
        count_in_task(record, "vote")  # a task of its own (gather below): its ballot calls count here
        record.vote_mode = vote_mode
        record.vote_temperature = settings[seat].vote_temperature
        text = await ask(seat, messages, config, vote_mode)
        record.vote_raw.append(text)
        parsed = parse_vote(text, seat)
        if parsed.error is not None and parsed.retry:
            messages += [
                ChatMessageAssistant(content=text),
                ChatMessageUser(content=prompts.VOTING_RETRY.format(error=parsed.error)),
            ]
            text = await ask(seat, messages, config, vote_mode)
            record.vote_raw.append(text)
            parsed = parse_vote(text, seat)
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


@solver
def voting_phase(options: Optional[GameOptions] = None,
                 role_defaults: Optional[dict[str, dict[str, Any]]] = None) -> Solver:
    """All four seats vote at once, each seeing every description (A.2.2).

    Vote temperature per seat (``impostor_bench.core.generation``): ``vote_temperature`` if given,
    else the seat's alias default, else max(0.3, T - 0.4) on OpenAI/OpenRouter-compatible
    backends and T on Anthropic's (A.3).  An unreadable ballot is re-prompted once for
    valid JSON; if still unreadable the vote is null.
    """
    formats = VoteFormats()  # per task: the ballot form each model takes (impostor_bench.solvers.vote_format)
    opts = options or GameOptions()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        spec, models = start_game(state)
        await play_ballots(state, spec, models, _seat_records(state), None, opts, role_defaults, formats)
        return state

    return solve


async def play_ballots(state: TaskState, spec: GameSpec, models: list[Model], seats: list[SeatRecord],
                       settings: Optional[list[SeatSettings]], options: GameOptions,
                       role_defaults: Optional[dict[str, dict[str, Any]]], formats: VoteFormats) -> None:
    """The voting phase on ``seats`` (at ``settings``, resolved here when None), stored also when it fails."""
    try:
        if settings is None:
            settings = game_settings(spec, models, options, role_defaults)
        await vote_all(state, spec, models, seats, shown_descriptions(spec, seats), settings, options, formats)
    finally:
        save_ballots(state.store, seats)


@solver
def impostor_game(options: Optional[GameOptions] = None,
                  role_defaults: Optional[dict[str, dict[str, Any]]] = None) -> Solver:
    """One game as one solver step: ``description_phase``, then ``voting_phase``.

    Inspect wraps every solver step in a span, snapshots the whole sample state
    before and after it and logs the difference; one step per game instead of two
    saves ~2.5 M instructions a game, 3% of a game against an instant provider
    (``benchmarks/RESULTS.md``).  The transcript message of each phase still
    marks where one ends and the next begins.  The voting phase goes on from the
    description phase's game, models, settings and records (what it would read back
    from the metadata and the store: the same values).
    """
    formats = VoteFormats()  # per task, as in voting_phase
    opts = options or GameOptions()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        spec, models = start_game(state)
        seats = _seat_records(state)
        settings = await play_descriptions(state, spec, models, seats, opts, role_defaults, MAX_DESCRIPTION_CHARS)
        await play_ballots(state, spec, models, seats, settings, opts, role_defaults, formats)
        return state

    return solve
