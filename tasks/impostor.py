"""The Impostor Game as an Inspect task: one sample per game (Appendix A).

    inspect eval tasks/impostor.py --model bot/embedding \\
        --model-role impostor=bot/random -T mode=cross_play -T n_games=40

Modes map onto model roles: ``homogeneous`` (``--model``), ``cross_play``
(roles ``impostor``/``majority``), ``team_blind``/``team_aware``/
``team_semi_aware`` (roles ``team_a``/``team_b``, two seats each).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional, Union

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig, model_roles
from inspect_ai.viewer import TaskSamplesColumn, TaskSamplesView, ViewerConfig
from pydantic import TypeAdapter, ValidationError

from impostor import LAUNCH_DIR
from impostor.inspect_compat import UserInputError, building_task_for_eval

from impostor.core import call_limits
from impostor.core.errors import ImpostorError
from impostor.gc_tuning import tune_gc
from impostor.core.records import DIFFICULTIES, MODES, TIE_RULES
from impostor.core.rounds import MAX_ROUNDS
from impostor.core.schedule import MAX_GAMES, PairRef, build_schedule, seed_problem
from impostor.core.wordpairs import load_word_pairs, word_pairs_file, word_pairs_sha256
from scorers.winner import impostor_winner
from impostor.core.generation import UNANNEALED_BACKENDS, seat_settings
from solvers.bound_models import bind_models
from solvers.game import impostor_game
from solvers.rounds import impostor_rounds_game
from solvers.seating import check_roles


#: inspect view's samples list for games: the game (words, impostor seat), its one-line outcome
#: (the Score's answer), whether the impostor won, tokens and time; the target (the majority
#: word, already in the input) hidden.  The per-player text is in the Scores tab (explanation).
GAMES_VIEW = ViewerConfig(task_samples_view=TaskSamplesView(
    name="games", multiline=True, score_labels={"impostor_winner": "impostor won"},
    columns=[TaskSamplesColumn(id=c) for c in ("sampleStatus", "sampleId", "input", "answer")]
    + [TaskSamplesColumn.score("impostor_winner")]
    + [TaskSamplesColumn(id=c) for c in ("tokens", "duration")] + [TaskSamplesColumn(id="target", visible=False)],
))


class TaskOptionError(UserInputError):
    """A bad -T option, role or word-pair file, printed by ``inspect eval`` without a traceback."""


def _user_path(path: Optional[str]) -> Optional[str]:
    """A relative path as the user meant it: ``inspect eval`` builds the task with the task
    file's folder as working directory, so also try the launch directory and the shell's."""
    if path is None or Path(path).is_absolute() or Path(path).exists():
        return path
    for base in (LAUNCH_DIR, os.environ.get("PWD")):
        if base and (Path(base) / path).exists():
            return str(Path(base) / path)
    return path


def _check(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ImpostorError(f"-T {name}={value!r} is not valid; use one of: {', '.join(allowed)}")


#: The type of each -T option (checked before anything else: Inspect passes -T values as
#: YAML scalars, so ``-T n_games=abc`` arrives as a string).
OPTION_TYPES: dict[str, Any] = {
    "mode": str, "difficulty": str, "n_games": int, "seed": int, "tie_rule": str, "temperature": Optional[float],
    "max_tokens": Optional[int], "vote_temperature": Optional[float], "structured_votes": bool,
    "constrained_votes": Optional[bool], "word_pairs": Optional[str], "experiment_id": Optional[str],
    "first_game": int, "models": Optional[Union[str, dict]], "game_time_limit": int,
    "rounds": int, "private_notes": bool,
}
_TYPE_WORDS = {int: "a whole number", float: "a number", bool: "true or false", str: "text"}


def _check_unknown(options: dict[str, Any]) -> None:
    """A misspelt -T option would otherwise be ignored and the defaults played."""
    options = {k: v for k, v in options.items() if k != "model"}  # Inspect may pass the model along
    if options:
        names = ", ".join(f"-T {k}" for k in sorted(options))
        raise ImpostorError(f"unknown task option(s) {names}; the options are: {', '.join(OPTION_TYPES)}")


def _check_types(values: dict[str, Any]) -> None:
    for name, kind in OPTION_TYPES.items():
        try:
            TypeAdapter(kind).validate_python(values[name], strict=True)
        except ValidationError:
            base = next((t for t in getattr(kind, "__args__", (kind,)) if t is not type(None)), kind)
            optional = " (or leave it out)" if kind is not base else ""
            raise ImpostorError(f"-T {name}={values[name]!r} is not valid; it must be {_TYPE_WORDS[base]}{optional}") from None


def _generation_record(bound: Any, temperature: Optional[float], max_tokens: Optional[int],
                       vote_temperature: Optional[float]) -> dict[str, Any]:
    """What the task metadata says about the settings: the rule, and each bound role's resolved values
    (every seat's own values are in the players table: temperature, vote_temperature)."""
    roles = {role: seat_settings(str(m), temperature=temperature, max_tokens=max_tokens,
                                 vote_temperature=vote_temperature, alias_defaults=bound.defaults.get(role)).as_dict()
             for role, m in ({"model": bound.model} if "model" in bound.names else bound.roles).items()}
    return {"precedence": "task option > alias defaults > paper", "unannealed_backends": sorted(UNANNEALED_BACKENDS),
            "vote_rule": "max(0.3, T - 0.4), T on unannealed backends", "roles": roles}


def game_samples(
    mode: str, difficulty: str, n_games: int, seed: int, word_pairs: Optional[str], experiment_id: Optional[str],
    first_game: int = 0, rounds: int = 1, private_notes: bool = False,
) -> list[Sample]:
    """The experiment's schedule as Inspect samples (stable ids, full spec in metadata)."""
    tiers = load_word_pairs(word_pairs, require_full=word_pairs is None)
    if difficulty not in tiers:
        raise ImpostorError(f"{word_pairs}: has no tier {difficulty!r}; add it or pick -T difficulty=...")
    pairs = [PairRef(p.pair_id, p.majority, p.impostor) for p in tiers[difficulty]]
    samples = []
    for spec in build_schedule(mode, difficulty, pairs, n_games, seed)[first_game:]:
        md = spec.to_metadata() | {"seed": seed, "experiment_id": experiment_id}
        if rounds > 1:  # part of the experiment's identity (the paper's game: as before)
            md |= {"rounds": rounds, "private_notes": private_notes}
        samples.append(Sample(
            id=spec.sample_id,
            # What inspect view's samples list shows of a game before its outcome (the models never see it).
            input=(f"Impostor game {spec.game_index} ({mode}, {difficulty}, pair {spec.pair.pair_id}): "
                   f"majority “{spec.pair.majority}”, impostor “{spec.pair.impostor}” (the impostor's seat is "
                   f"drawn per experiment when the game starts; the answer names it)"),
            target=spec.pair.majority,
            metadata=md,
        ))
    return samples


@task
def impostor(
    mode: str = "homogeneous",
    difficulty: str = "easy",
    n_games: int = 8,
    seed: int = 0,
    tie_rule: str = "default",
    temperature: Optional[float] = None,
    max_tokens: Optional[int] = None,
    vote_temperature: Optional[float] = None,
    structured_votes: bool = False,
    constrained_votes: Optional[bool] = None,
    word_pairs: Optional[str] = None,
    experiment_id: Optional[str] = None,
    first_game: int = 0,
    models: Optional[Union[str, dict]] = None,
    game_time_limit: int = call_limits.GAME_TIME_LIMIT,
    rounds: int = 1,
    private_notes: bool = False,
    **unknown_options: Any,
) -> Task:
    """Four-player Impostor Game.

    Args:
      mode: homogeneous, cross_play, team_blind, team_aware or team_semi_aware.
      difficulty: easy, medium, hard or expert (word-pair tier).
      n_games: games in this experiment (one sample each).
      seed: schedule seed; same seed and parameters give identical games.
      tie_rule: default (paper), sym_candidate or sym_side (Appendix F, played live).
      temperature: description temperature; default: the alias's, else 0.7 (A.3).
      max_tokens: per call; default: the alias's, else 150 (A.3).
      vote_temperature: for every seat; default per seat: the alias's, else
        max(0.3, T - 0.4) on OpenAI/OpenRouter-compatible backends and T on
        Anthropic's (A.3; docs/rules.md, "Generation settings").
      structured_votes: ask providers for JSON-schema structured ballots.
      constrained_votes: per-game schema with an enum of the other players;
        default on for local/ models only.
      word_pairs: path to a word-pair JSON (default configs/word_pairs.json).
      experiment_id: label for the tables; default derived from mode,
        difficulty, models and seed.
      first_game: skip games before this index (sharding a long experiment).
      models: registry aliases (or model strings) the task binds to the roles:
        one name for homogeneous, else a mapping role -> name; an alias brings
        its model_args and defaults (docs/models.md).
      game_time_limit: seconds one game may take (Inspect's sample time limit;
        0 for none); a game past it errors with the cause, so a dead provider
        fails the eval in minutes instead of retrying for most of an hour.
      rounds: 1 (the paper's game) or up to 10 elimination rounds (docs/rules.md,
        "Multi-round games").
      private_notes: with rounds > 1, each remaining player keeps a private note
        between rounds (Appendix O.3).
    """
    try:
        _check_unknown(unknown_options)
        _check_types(locals())
        _check("mode", mode, MODES)
        _check("difficulty", difficulty, DIFFICULTIES)
        _check("tie_rule", tie_rule, TIE_RULES)
        if not 1 <= n_games <= MAX_GAMES:
            raise ImpostorError(f"-T n_games={n_games} is not valid; play 1 to {MAX_GAMES:,} games per experiment")
        if seed_problem(seed):
            raise ImpostorError(f"-T {seed_problem(seed)}")
        if not 0 <= first_game < n_games:
            raise ImpostorError(f"-T first_game={first_game} is not valid; use 0 to n_games - 1 ({n_games - 1})")
        if temperature is not None and not 0.0 <= temperature <= 2.0:
            raise ImpostorError(f"-T temperature={temperature} is not valid; use a value in [0, 2]")
        if vote_temperature is not None and not 0.0 <= vote_temperature <= 2.0:
            raise ImpostorError(f"-T vote_temperature={vote_temperature} is not valid; use a value in [0, 2]")
        if max_tokens is not None and max_tokens < 1:
            raise ImpostorError(f"-T max_tokens={max_tokens} is not valid; use at least 1")
        if not 1 <= rounds <= MAX_ROUNDS:
            raise ImpostorError(f"-T rounds={rounds} is not valid; use 1 (the paper's game) to {MAX_ROUNDS}")
        if private_notes and rounds == 1:
            raise ImpostorError("-T private_notes=true needs -T rounds=2 or more (notes are kept between rounds)")
        if game_time_limit < 0:
            raise ImpostorError(f"-T game_time_limit={game_time_limit} is not valid; use seconds per game (0 for no limit)")
        roles = set(model_roles())
        bound = bind_models(models, mode)
        if roles & set(bound.roles):
            raise ImpostorError(f"-T models and --model-role both set {', '.join(sorted(roles & set(bound.roles)))}; "
                                f"fix: name each role once")
        roles |= set(bound.roles)
        if roles or building_task_for_eval():  # refuse a contradictory mode/role set before any game
            check_roles(mode, roles)
        word_pairs = _user_path(word_pairs)
        samples = game_samples(mode, difficulty, n_games, seed, word_pairs, experiment_id, first_game, rounds,
                               private_notes)
        tune_gc()  # after the schedule exists: it is part of the heap the collector can skip
    except ImpostorError as exc:
        raise TaskOptionError.of(exc) from None
    generation: dict[str, Any] = dict(
        temperature=temperature, max_tokens=max_tokens, vote_temperature=vote_temperature,
        structured_votes=structured_votes, constrained_votes=constrained_votes, role_defaults=bound.defaults)
    # The paper's game (rounds=1) logs its solver exactly as before the option existed.
    play = (impostor_rounds_game(rounds, private_notes, tie_rule, **generation) if rounds > 1
            else impostor_game(**generation))
    return Task(
        dataset=MemoryDataset(samples, name=f"impostor-{difficulty}"),
        solver=play,
        model=bound.model,
        model_roles=bound.roles or None,
        # Bounded model calls (impostor.core.call_limits); --max-retries / --timeout / --attempt-timeout override.
        config=GenerateConfig(max_retries=call_limits.MAX_RETRIES, timeout=call_limits.TIMEOUT,
                              attempt_timeout=call_limits.ATTEMPT_TIMEOUT),
        # A game past its time budget is an errored game naming the cause (scorers.winner), never scored.
        time_limit=game_time_limit or None,
        scorer=impostor_winner(tie_rule=tie_rule),
        # No epoch reductions: with one epoch they repeat every game's score, game record
        # included, in the log header (~0.75 MB per 120 games), which eval_set reads back
        # for every log of a sweep and keeps for every finished experiment (docs/tracking.md).
        epochs=Epochs(1, reducer=[]),
        viewer=GAMES_VIEW,
        metadata={
            "mode": mode, "difficulty": difficulty, "seed": seed, "tie_rule": tie_rule,
            "temperature": temperature, "max_tokens": max_tokens, "vote_temperature": vote_temperature,
            "models": bound.names or None,  # model_args: in the log's model config (no secrets here)
            "generation": _generation_record(bound, temperature, max_tokens, vote_temperature),
            "structured_votes": structured_votes, "constrained_votes": constrained_votes,
            "word_pairs_file": word_pairs_file(word_pairs), "word_pairs_sha256": word_pairs_sha256(word_pairs),
            "experiment_id": experiment_id, "game_time_limit": game_time_limit or None,
        } | ({"rounds": rounds, "private_notes": private_notes} if rounds > 1 else {}),
    )
