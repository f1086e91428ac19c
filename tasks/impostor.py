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
from inspect_ai.model import GenerateConfig, get_model, model_roles
from inspect_ai.viewer import TaskSamplesColumn, TaskSamplesView, ViewerConfig
from pydantic import ValidationError

from impostor_bench import LAUNCH_DIR
from impostor_bench.inspect_compat import UserInputError, building_task_for_eval, eval_models
from impostor_bench.model_credentials import model_credential_problem

from impostor_bench.core import call_limits, options as game_options
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.records import Difficulty, Mode
from impostor_bench.gc_tuning import tune_gc
from impostor_bench.core.schedule import PairRef, build_schedule
from impostor_bench.core.wordpairs import load_word_pairs, word_pairs_file, word_pairs_sha256
from impostor_bench.scorers.winner import impostor_winner
from impostor_bench.core.generation import UNANNEALED_BACKENDS, seat_settings
from impostor_bench.solvers.bound_models import bind_models
from impostor_bench.solvers.game import impostor_game
from impostor_bench.solvers.seating import check_roles


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


def _playing(bound: Any) -> list[str]:
    """The model strings that play the task's games, as far as they are known when it is built:
    those it binds, the eval's model roles and (built by Inspect for an eval) its ``--model``."""
    models = ([bound.model] if bound.model is not None else []) + list(bound.roles.values())
    models += list(model_roles().values())
    if building_task_for_eval():
        try:
            models.append(get_model())
        except Exception:  # noqa: BLE001 - no model (yet): the default limit
            pass
    return [str(m) for m in models]


def _user_path(path: Optional[str]) -> Optional[str]:
    """A relative path as the user meant it: ``inspect eval`` builds the task with the task
    file's folder as working directory, so also try the launch directory and the shell's."""
    if path is None or Path(path).is_absolute() or Path(path).exists():
        return path
    for base in (LAUNCH_DIR, os.environ.get("PWD")):
        if base and (Path(base) / path).exists():
            return str(Path(base) / path)
    return path


#: Options Inspect may pass along that are not game options.
_NOT_OPTIONS = ("model",)
#: What the task metadata holds beside the options (every ``GameOptions`` field, as played):
#: facts the options do not say.  Listed once; ``tests/test_recorded_options.py`` holds the metadata to it.
RECORDS = ("generation", "word_pairs_file", "word_pairs_sha256")


def validated_options(values: dict[str, Any]) -> game_options.GameOptions:
    """The -T options as ``GameOptions`` (``impostor_bench.core.options``), or a one-line error:
    unknown options listed with the known ones, else the first bad value with its fix."""
    model = game_options.GameOptions  # looked up per call: the one place a new option is added
    values = {k: v for k, v in values.items() if k not in _NOT_OPTIONS}
    unknown = sorted(k for k in values if k not in model.model_fields)
    if unknown:  # a misspelt -T option would otherwise be ignored and the defaults played
        names = ", ".join(f"-T {k}" for k in unknown)
        raise ImpostorError(f"unknown task option(s) {names}; the options are: {', '.join(model.model_fields)}")
    try:
        return model(**values)
    except ValidationError as exc:
        raise ImpostorError(game_options.task_option_message(model, exc.errors()[0])) from None


def _generation_record(bound: Any, opts: game_options.GameOptions) -> dict[str, Any]:
    """What the task metadata says about the settings: the rule, and each bound role's resolved values
    (every seat's own values are in the players table: temperature, vote_temperature)."""
    roles = {role: seat_settings(str(m), temperature=opts.temperature, max_tokens=opts.max_tokens,
                                 vote_temperature=opts.vote_temperature, alias_defaults=bound.defaults.get(role),
                                 top_p=opts.top_p).as_dict()
             for role, m in ({"model": bound.model} if "model" in bound.names else bound.roles).items()}
    return {"precedence": "task option > alias defaults > paper", "unannealed_backends": sorted(UNANNEALED_BACKENDS),
            "vote_rule": "max(0.3, T - 0.4), T on unannealed backends", "roles": roles}


def game_samples(
    mode: Mode, difficulty: Difficulty, n_games: int, seed: int, word_pairs: Optional[str], experiment_id: Optional[str],
    first_game: int = 0, rounds: int = 1, private_notes: bool = False, players: int = 4, impostors: int = 1,
    language: str = "en", lengths: Optional[dict[str, Optional[int]]] = None,
) -> list[Sample]:
    """The experiment's schedule as Inspect samples (stable ids, full spec in metadata)."""
    tiers = load_word_pairs(word_pairs, require_full=word_pairs is None, language=language)
    if difficulty not in tiers:
        raise ImpostorError(f"{word_pairs}: has no tier {difficulty!r}; add it or pick -T difficulty=...")
    pairs = [PairRef(p.pair_id, p.majority, p.impostor) for p in tiers[difficulty]]
    samples = []
    for spec in build_schedule(mode, difficulty, pairs, n_games, seed, players=players, impostors=impostors)[first_game:]:
        md = spec.to_metadata() | {"seed": seed, "experiment_id": experiment_id}
        if rounds > 1:  # part of the experiment's identity (the paper's game: as before)
            md |= {"rounds": rounds, "private_notes": private_notes}
        if language != "en":  # likewise: the game's language (the English game's metadata as before)
            md |= {"language": language}
        md |= {k: v for k, v in (lengths or {}).items() if v is not None}  # -T length_budget / truncate_to, when set
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


_DEFAULT = game_options.GameOptions()


def _refuse_logged_credentials(bound: Any) -> None:
    """Refuse a model whose base URL or model args hold a credential Inspect would write into
    the .eval log's header (impostor_bench.model_credentials)."""
    models: dict[str, Any] = dict(eval_models()) if building_task_for_eval() else {}
    if bound.model is not None and "model" in bound.names:
        models[f"-T models ({bound.names['model']})"] = bound.model
    models |= {f"-T models {role} ({bound.names.get(role, role)})": m for role, m in bound.roles.items()}
    for where, model in models.items():
        problem = model_credential_problem(where, model)
        if problem:
            raise ImpostorError(problem)


@task
def impostor(
    mode: str = _DEFAULT.mode,
    difficulty: str = _DEFAULT.difficulty,
    n_games: int = _DEFAULT.n_games,
    seed: int = _DEFAULT.seed,
    tie_rule: str = _DEFAULT.tie_rule,
    temperature: Optional[float] = _DEFAULT.temperature,
    max_tokens: Optional[int] = _DEFAULT.max_tokens,
    vote_temperature: Optional[float] = _DEFAULT.vote_temperature,
    structured_votes: bool = _DEFAULT.structured_votes,
    constrained_votes: Optional[bool] = _DEFAULT.constrained_votes,
    word_pairs: Optional[str] = _DEFAULT.word_pairs,
    experiment_id: Optional[str] = _DEFAULT.experiment_id,
    first_game: int = _DEFAULT.first_game,
    models: Optional[Union[str, dict]] = _DEFAULT.models,
    game_time_limit: Optional[int] = _DEFAULT.game_time_limit,
    **more_options: Any,
) -> Task:
    """Four-player Impostor Game: one sample per game.

    Every option (its meaning, default and bounds) is a field of
    ``impostor_bench.core.options.GameOptions``; the named parameters are the options that
    logs recorded before newer ones, which arrive in ``more_options`` and are validated
    the same way (a log's ``task_args`` keeps its shape).
    """
    try:
        opts = validated_options({k: v for k, v in locals().items() if k != "more_options"} | more_options)
        if opts.private_notes and opts.rounds == 1:
            raise ImpostorError("-T private_notes=true needs -T rounds=2 or more (notes are kept between rounds)")
        roles = set(model_roles())
        bound = bind_models(opts.models, opts.mode)
        if roles & set(bound.roles):
            raise ImpostorError(f"-T models and --model-role both set {', '.join(sorted(roles & set(bound.roles)))}; "
                                f"fix: name each role once")
        roles |= set(bound.roles)
        if roles or building_task_for_eval():  # refuse a contradictory mode/role set before any game
            check_roles(opts.mode, roles)
        _refuse_logged_credentials(bound)
        opts = opts.model_copy(update={"word_pairs": _user_path(opts.word_pairs),
                                       "game_time_limit": call_limits.game_time_limit(opts.game_time_limit,
                                                                                      _playing(bound))})
        samples = game_samples(opts.mode, opts.difficulty, opts.n_games, opts.seed, opts.word_pairs,
                               opts.experiment_id, opts.first_game, opts.rounds, opts.private_notes, opts.players,
                               opts.impostors, opts.language,
                               {"length_budget": opts.length_budget, "truncate_to": opts.truncate_to})
        tune_gc()  # after the schedule exists: it is part of the heap the collector can skip
        from impostor_bench.tracking.hooks import quiet_inspect_mlflow

        quiet_inspect_mlflow()  # our MLflow run per experiment, not a second one by inspect-mlflow
    except ImpostorError as exc:
        raise TaskOptionError.of(exc) from None
    # every option as played (a relative word-pair path resolved, the game time limit chosen; the
    # models as given: their model_args are in the log's model config, no secrets here)
    records = {"generation": _generation_record(bound, opts),
               "word_pairs_file": word_pairs_file(opts.word_pairs, opts.language),
               "word_pairs_sha256": word_pairs_sha256(opts.word_pairs, opts.language)}
    metadata = opts.model_dump() | records
    return Task(
        dataset=MemoryDataset(samples, name=f"impostor-{opts.difficulty}"),
        # one game loop for every game: the paper's is its one-round case (-T rounds=1)
        solver=impostor_game(options=opts, role_defaults=bound.defaults),
        model=bound.model,
        model_roles=bound.roles or None,
        # Bounded model calls (impostor_bench.core.call_limits); --max-retries / --timeout / --attempt-timeout override.
        config=GenerateConfig(max_retries=call_limits.MAX_RETRIES, timeout=call_limits.TIMEOUT,
                              attempt_timeout=call_limits.ATTEMPT_TIMEOUT),
        # A game past its time budget is an errored game naming the cause (impostor_bench.scorers.winner), never scored.
        time_limit=opts.game_time_limit or None,
        # One game's error (a timed-out game above all) does not stop the others: each errored game
        # is kept in the log with its error and a warning line; the log still ends
        # 'error' under --fail-on-error's threshold, so eval-retry and sweep resumes re-play it.
        continue_on_fail=True,
        scorer=impostor_winner(tie_rule=opts.tie_rule),
        # No epoch reductions: with one epoch they repeat every game's score, game record
        # included, in the log header (~0.75 MB per 120 games), which eval_set reads back
        # for every log of a sweep and keeps for every finished experiment (docs/tracking.md).
        epochs=Epochs(1, reducer=[]),
        viewer=GAMES_VIEW,
        metadata=metadata,
    )
