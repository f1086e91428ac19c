"""Every option of a game, defined once: its type, default, bounds, help and fix.

``tasks/impostor.py`` validates its ``-T`` options with :class:`GameOptions`; a sweep config
(``impostor_bench.sweep.config``) takes the options an experiment does not vary from the same field
definitions (:data:`SHARED_OPTIONS`) and hands each experiment's task a ``GameOptions`` dump; the
solvers receive the model itself.  A new option is one field here (docs/architecture.md).

Every field is strict: Inspect passes ``-T`` values as YAML scalars, so ``-T n_games=abc`` arrives
as a string and must be refused, not coerced.  :func:`problem_of` turns one pydantic error into
the field's one-line fix, which the task (``-T name=value ...``) and the sweep config (``file:
field: problem; fix``) word in their own styles.

Plain Python (pydantic): no Inspect, MLflow or pandas import.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Optional, Union, get_args, get_origin

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, field_validator
from pydantic.json_schema import JsonDict
from pydantic_core import ErrorDetails

from impostor_bench.core import call_limits
from impostor_bench.core.languages import DEFAULT_LANGUAGE, LANGUAGES, shipped_languages
from impostor_bench.core.model_text import MAX_DESCRIPTION_CHARS
from impostor_bench.core.group import MAX_PLAYERS, MIN_PLAYERS, PAPER_IMPOSTORS, PAPER_PLAYERS, max_impostors
from impostor_bench.core.modes import mode_spec
from impostor_bench.core.records import Difficulty, Mode, TieRule
from impostor_bench.core.schedule import MAX_GAMES, MAX_SEED

def _exponent_number(value: Any) -> Any:
    """``1e-3`` as the number it is: YAML 1.1 (PyYAML, which reads ``-T`` values and sweep configs)
    takes a float only with a dot and a signed exponent, so ``1e-3`` arrives as text.  Only that
    shape is read; any other text stays text and is refused by the strict field."""
    if isinstance(value, str) and _EXPONENT_NUMBER.fullmatch(value.strip()):
        return float(value)
    return value


_EXPONENT_NUMBER = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][-+]?[0-9]+")
#: A temperature: a number in [0, 2], written as YAML reads it or in exponent form (``1e-3``).
Temperature = Annotated[float, BeforeValidator(_exponent_number)]

#: One experiment's number of games (the task's ``n_games``, a sweep's ``games_per_experiment``).
GameCount = Annotated[int, Field(strict=True, ge=1, le=MAX_GAMES)]
#: A schedule seed (the task's ``seed``, each of a sweep's ``seeds``): stored as a 64-bit integer.
Seed = Annotated[int, Field(strict=True, ge=0, le=MAX_SEED)]
SEED_FIX = f"use a whole number from 0 to 2^63-1 ({MAX_SEED})"


def _option(default: Any, help: str, fix: Optional[str] = None, *, omit_default: bool = False, strict: bool = True,
            **bounds: Any) -> Any:
    """A strict option field; ``fix`` says what a valid value is, ``omit_default`` keeps the option
    out of task arguments and the sweep hash while it has its default (options added after logs
    and sweeps existed: old ones keep their identity; the task metadata records every option)."""
    extra: JsonDict = {"fix": fix, "omit_default": omit_default}
    if strict:
        bounds["strict"] = True
    return Field(default, description=help, json_schema_extra=extra, **bounds)


class GameOptions(BaseModel):
    """The options of one experiment (``-T`` options of ``tasks/impostor.py``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Field order is the order of a sweep's task arguments, which Inspect hashes into each
    # task's identity (eval_set's resume): new options go last.

    mode: Mode = _option("homogeneous", "homogeneous, cross_play, team_blind, team_aware or team_semi_aware",
                         strict=False)  # a Literal is exact already
    difficulty: Difficulty = _option("easy", "easy, medium, hard or expert (word-pair tier)", strict=False)
    n_games: GameCount = _option(8, "games in this experiment (one sample each)",
                                 f"play 1 to {MAX_GAMES:,} games per experiment")
    seed: Seed = _option(0, "schedule seed; same seed and parameters give identical games", f"fix: {SEED_FIX}")
    tie_rule: TieRule = _option("default", "default (paper), sym_candidate or sym_side (Appendix F, played live)",
                               strict=False)
    temperature: Optional[Temperature] = _option(None, "description temperature; default: the alias's, else 0.7 (A.3)",
                                           "use a value in [0, 2]", ge=0.0, le=2.0, allow_inf_nan=False)
    max_tokens: Optional[int] = _option(None, "per call; default: the alias's, else 150 (A.3)",
                                        "use 1 to 100,000", ge=1, le=100_000)
    vote_temperature: Optional[Temperature] = _option(
        None, "for every seat; default per seat: the alias's, else max(0.3, T - 0.4) on OpenAI/OpenRouter-"
        "compatible backends and T on Anthropic's (A.3; docs/rules.md, 'Generation settings')",
        "use a value in [0, 2]", ge=0.0, le=2.0, allow_inf_nan=False)
    structured_votes: bool = _option(False, "ask providers for JSON-schema structured ballots")
    constrained_votes: Optional[bool] = _option(
        None, "per-game schema with an enum of the other players; default on for local/ models only")
    # Inspect counts the sample time limit in a task's identity: a sweep that changed it would replay
    # every game, so its manifest refuses the change (impostor_bench.sweep.run).
    game_time_limit: Optional[int] = _option(
        None, f"seconds one game may take (Inspect's sample time limit; 0 for none); default "
        f"{call_limits.GAME_TIME_LIMIT}, none when a local/ engine plays", "use seconds per game (0 for no limit)",
        ge=0)
    models: Optional[Union[str, dict]] = _option(
        None, "registry aliases (or model strings) the task binds to the roles: one name for homogeneous, "
        "else a mapping role -> name; an alias brings its model_args and defaults (docs/models.md)",
        strict=False)  # a union of text and mapping: neither coerces a number
    word_pairs: Optional[str] = _option(None, "path to a word-pair JSON (default configs/word_pairs.json)",
                                        omit_default=True)
    experiment_id: Optional[str] = _option(
        None, "label for the tables; default derived from mode, difficulty, models and seed", omit_default=True)
    first_game: int = _option(0, "skip games before this index (sharding a long experiment)", ge=0,
                              omit_default=True)
    # Multi-round games (paper O.3): validated and carried here; played by the rounds engine.
    rounds: int = _option(1, "rounds of descriptions and votes per game (O.3)", "use 1 to 10", ge=1, le=10,
                          omit_default=True)
    private_notes: bool = _option(False, "each player keeps private notes between rounds (O.3)", omit_default=True)
    # Length and decoding ablations (O.2): each keeps today's game while unset.
    length_budget: Optional[int] = _option(
        None, "characters a description may have, under the paper's 750 (counted as the 750-character rule "
        "counts; enforced with its re-prompt, which names the budget); default: the 750-character rule only",
        f"use 1 to {MAX_DESCRIPTION_CHARS} characters (the paper's rule caps every description at "
        f"{MAX_DESCRIPTION_CHARS}), or leave it out", ge=1, le=MAX_DESCRIPTION_CHARS, omit_default=True)
    truncate_to: Optional[int] = _option(
        None, "verbosity-matched ablation: the others see each valid description cut to this many characters "
        "(the original is recorded beside it); default: shown whole", f"use 1 to {MAX_DESCRIPTION_CHARS} "
        "characters, e.g. the reference experiment's median length, or leave it out", ge=1,
        le=MAX_DESCRIPTION_CHARS, omit_default=True)
    top_p: Optional[Temperature] = _option(
        None, "nucleus sampling of every call; default: the alias's, else not sent (the provider's own)",
        "use a value in (0, 1], or leave it out", gt=0.0, le=1.0, allow_inf_nan=False, omit_default=True)
    # Group size (O.2): the paper's four players with one impostor by default (impostor_bench.core.group).
    players: int = _option(PAPER_PLAYERS, f"players in every game, {MIN_PLAYERS} to {MAX_PLAYERS} (the paper's: "
                           f"{PAPER_PLAYERS})", f"use {MIN_PLAYERS} to {MAX_PLAYERS} players (the paper's game has "
                           f"{PAPER_PLAYERS})", ge=MIN_PLAYERS, le=MAX_PLAYERS, omit_default=True)
    impostors: int = _option(PAPER_IMPOSTORS, "impostors in every game, a strict minority of the players (the "
                             "paper's: 1); they share the impostor word", "use 1 up to a minority of the players "
                             "(1 with 4 players, 2 with 5-6, 3 with 7-8)", ge=1, le=max_impostors(MAX_PLAYERS),
                             omit_default=True)
    language: str = _option(DEFAULT_LANGUAGE, "the game's language: its prompts, word-pair file and word rules "
                            f"({shipped_languages()}; docs/rules.md, 'Languages')",
                            f"use one of the shipped languages: {shipped_languages()}", omit_default=True)

    @field_validator("first_game")
    @classmethod
    def _inside_the_experiment(cls, v: int, info: ValidationInfo) -> int:
        n = info.data.get("n_games")
        if n is not None and v >= n:
            raise ValueError(f"use 0 to n_games - 1 ({n - 1})")
        return v

    @field_validator("language")
    @classmethod
    def _shipped(cls, v: str) -> str:
        if v not in LANGUAGES:
            raise ValueError(f"use one of the shipped languages: {shipped_languages()}")
        return v

    @field_validator("players")
    @classmethod
    def _team_modes_seat_four(cls, v: int, info: ValidationInfo) -> int:
        mode = info.data.get("mode")
        if v != PAPER_PLAYERS and mode is not None and mode_spec(mode).teams:
            raise ValueError(f"mode={mode} is two teams of two: use players={PAPER_PLAYERS}, or mode=homogeneous "
                             f"or cross_play")
        return v

    @field_validator("impostors")
    @classmethod
    def _a_minority(cls, v: int, info: ValidationInfo) -> int:
        n = info.data.get("players", PAPER_PLAYERS)
        if v > max_impostors(n):
            top = max_impostors(n)
            raise ValueError(f"impostors must be a strict minority of the players: with players={n} use "
                             f"{'impostors=1' if top == 1 else f'1 to {top} impostors'}, or players={2 * v + 1} or more")
        mode = info.data.get("mode")
        if v != PAPER_IMPOSTORS and mode is not None and mode_spec(mode).teams:
            raise ValueError(f"mode={mode} has one impostor: use impostors=1, or mode=homogeneous or cross_play")
        if v != PAPER_IMPOSTORS and info.data.get("rounds", 1) != 1:
            raise ValueError("multi-round games have one impostor: use impostors=1 with rounds > 1")
        return v

    def task_args(self) -> dict[str, Any]:
        """The options as task arguments: those added since logs existed only when set."""
        return {k: v for k, v in self.model_dump().items() if not _omitted(type(self), k, v)}


#: Options an experiment of a sweep varies or a sweep sets per experiment; every other option is
#: *shared*: one value for the whole sweep, a field of its config with this field's definition.
PER_EXPERIMENT = ("mode", "difficulty", "n_games", "seed", "first_game", "experiment_id", "models", "players",
                  "impostors",  # a sweep's group sizes are grid axes (impostor_bench.sweep.config)
                  "length_budget", "truncate_to",  # and its length controls (impostor_bench.sweep.ablations)
                  "language")  # and its languages (a grid axis too)


def shared_options(options: type[GameOptions] = GameOptions) -> tuple[str, ...]:
    return tuple(k for k in options.model_fields if k not in PER_EXPERIMENT)


SHARED_OPTIONS = shared_options()


def _extra(options: type[BaseModel], name: str) -> dict[str, Any]:
    field = options.model_fields.get(name)
    extra = field.json_schema_extra if field is not None else None
    return extra if isinstance(extra, dict) else {}


def is_option(model: type[BaseModel], name: Any) -> bool:
    """Whether ``model``'s field ``name`` is a game option (defined by this module)."""
    return "omit_default" in _extra(model, str(name))


def _omitted(options: type[BaseModel], name: str, value: Any) -> bool:
    return bool(_extra(options, name).get("omit_default")) and value == options.model_fields[name].default


def omitted_defaults(options: type[BaseModel], values: dict[str, Any]) -> set[str]:
    """The option names in ``values`` that stay out of records while they have their defaults."""
    return {k for k, v in values.items() if k in options.model_fields and _omitted(options, k, v)}


# ------------------------------------------------------------------ one-line problems

_TYPE_WORDS = {int: "a whole number", float: "a number", bool: "true or false", str: "text",
               dict: "a mapping", list: "a list"}


def _kind_words(annotation: Any) -> str:
    """``Optional[int]`` -> "a whole number (or leave it out)"; Literal types list their values."""
    args = [a for a in get_args(annotation) if a is not type(None)] if get_origin(annotation) is Union else [annotation]
    optional = " (or leave it out)" if get_origin(annotation) is Union and type(None) in get_args(annotation) else ""
    words = []
    for a in args:
        a = get_args(a)[0] if get_origin(a) is Annotated else a
        words.append(_TYPE_WORDS.get(get_origin(a) or a, "one of: " + ", ".join(map(str, get_args(a)))))
    return " or ".join(words) + optional


def problem_of(options: type[BaseModel], error: ErrorDetails) -> tuple[str, str, bool]:
    """(option name, what a valid value is, whether the value had the wrong type) for one error
    of validating ``options``; the text reads after "is not valid; "."""
    name = str(error["loc"][0]) if error["loc"] else ""
    field = options.model_fields.get(name)
    if field is None:
        return name, "", False
    if error["type"] == "literal_error":
        return name, "use one of: " + ", ".join(map(str, get_args(field.annotation))), False
    if error["type"].endswith(("_type", "_parsing")) or error["type"] in ("is_instance_of", "union_tag_invalid"):
        return name, f"it must be {_kind_words(field.annotation)}", True
    if error["type"] == "value_error":
        return name, error["msg"].removeprefix("Value error, "), False
    return name, _extra(options, name).get("fix") or error["msg"], False


def task_option_message(options: type[BaseModel], error: ErrorDetails) -> str:
    """``-T name=value is not valid; fix`` (the task's style)."""
    name, fix, _ = problem_of(options, error)
    return f"-T {name}={error['input']!r} is not valid; {fix}"
