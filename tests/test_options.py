"""Game options defined once (issue 31): ``impostor_bench.core.options.GameOptions`` is what the task
validates, what a sweep config's shared fields are and what a sweep hands each task."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from impostor_bench.core import options as game_options
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.options import GameOptions, _option, omitted_defaults
from impostor_bench.sweep import config as sweep_config
from impostor_bench.sweep.config import GAME_FIELDS, game_fields, load_config, sweep_config_model
from impostor_bench.sweep.plan import experiments, task_spec

# The task arguments and hashed fields of every sweep started before rounds/private_notes:
# their order is part of each task's identity in Inspect's eval_set (resume), the hash's keys
# part of the sweep's (impostor_bench.sweep.config.config_hash).
LEGACY_TASK_ARGS = ["mode", "difficulty", "n_games", "seed", "tie_rule", "temperature", "max_tokens",
                    "vote_temperature", "structured_votes", "constrained_votes", "game_time_limit", "models"]
LEGACY_HASHED = {"models", "modes", "difficulties", "games_per_experiment", "seeds", "tie_rule", "temperature",
                 "max_tokens", "vote_temperature", "structured_votes", "constrained_votes", "word_pairs",
                 "game_time_limit"}


class WithEncore(GameOptions):
    """A new option, added the one way the architecture says: a field of GameOptions."""

    encore: int = _option(1, "extra descriptions per player", "use 1 to 3", ge=1, le=3)


def _sweep_yaml(tmp_path: Path, **fields) -> Path:
    p = tmp_path / "s.yaml"
    p.write_text(yaml.safe_dump({"name": "s", "models": ["bot/random"], "modes": ["homogeneous"],
                                 "difficulties": ["easy"], "games_per_experiment": 2, **fields}))
    return p


def test_a_new_option_is_added_in_one_place(tmp_path, monkeypatch):
    """One field on GameOptions: the task takes it as -T and the sweep config as a field, both
    refuse a bad value with its fix, and a sweep passes it to every experiment's task."""
    from impostor_bench.tasks.impostor import TaskOptionError, impostor

    monkeypatch.setattr(game_options, "GameOptions", WithEncore)
    task = impostor(n_games=1, encore=2)
    assert task.metadata["encore"] == 2
    with pytest.raises(TaskOptionError, match=r"^-T encore=7 is not valid; use 1 to 3$"):
        impostor(n_games=1, encore=7)
    with pytest.raises(TaskOptionError, match=r"-T encore='two' is not valid; it must be a whole number"):
        impostor(n_games=1, encore="two")

    monkeypatch.setattr(sweep_config, "SweepConfig", sweep_config_model(WithEncore))
    cfg = load_config(_sweep_yaml(tmp_path, encore=3))
    assert cfg.encore == 3
    with pytest.raises(ImpostorError, match=r"s\.yaml: field 'encore': .*; fix: use 1 to 3 \(got 9\)"):
        load_config(_sweep_yaml(tmp_path, encore=9))


def test_shared_bounds_are_the_tasks(tmp_path):
    """max_tokens was bounded in the sweep only: the same bound now refuses it in both."""
    from impostor_bench.tasks.impostor import TaskOptionError, impostor

    with pytest.raises(TaskOptionError, match=r"-T max_tokens=100001 is not valid; use 1 to 100,000"):
        impostor(n_games=1, max_tokens=100_001)
    with pytest.raises(ImpostorError, match=r"field 'max_tokens': .*fix: use 1 to 100,000 \(got 100001\)"):
        load_config(_sweep_yaml(tmp_path, max_tokens=100_001))
    assert load_config(_sweep_yaml(tmp_path, max_tokens=100_000)).max_tokens == 100_000


@pytest.mark.parametrize("value, problem", [
    ("abc", "-T n_games='abc' is not valid; it must be a whole number"),
    (True, "-T n_games=True is not valid; it must be a whole number"),
    (0, "-T n_games=0 is not valid; play 1 to 100,000 games per experiment"),
])
def test_task_values_are_strict(value, problem):
    """-T values arrive as YAML scalars: a text or a boolean is refused, never coerced."""
    from impostor_bench.tasks.impostor import validated_options

    with pytest.raises(ImpostorError) as err:
        validated_options({"n_games": value})
    assert str(err.value) == problem


def test_first_game_inside_the_experiment():
    from impostor_bench.tasks.impostor import validated_options

    assert validated_options({"n_games": 4, "first_game": 3}).first_game == 3
    with pytest.raises(ImpostorError, match=r"^-T first_game=4 is not valid; use 0 to n_games - 1 \(3\)$"):
        validated_options({"n_games": 4, "first_game": 4})


def test_new_options_stay_out_of_old_records_until_set(tmp_path):
    """rounds/private_notes: accepted by task and sweep, in task args and sweep hashes only when
    they differ from their defaults, so old logs and sweeps keep their identity (the task metadata,
    no part of a task's identity, records every option)."""
    from impostor_bench.tasks.impostor import impostor

    assert list(GameOptions().task_args()) == LEGACY_TASK_ARGS
    assert GameOptions(rounds=3, private_notes=True).task_args() == {
        **GameOptions().task_args(), "rounds": 3, "private_notes": True}
    assert "rounds" not in GameOptions(n_games=1).task_args() and impostor(n_games=1).metadata["rounds"] == 1
    assert impostor(n_games=1, rounds=2, private_notes=True).metadata.items() >= {"rounds": 2, "private_notes": True}.items()

    path = _sweep_yaml(tmp_path)
    cfg = load_config(path)
    assert set(game_fields(cfg, path)) == LEGACY_HASHED
    [exp] = experiments(cfg)
    assert list(task_spec(exp, cfg, path, {})["task_args"]) == LEGACY_TASK_ARGS

    path = _sweep_yaml(tmp_path, rounds=4, private_notes=True)
    cfg = load_config(path)
    assert game_fields(cfg, path).items() >= {"rounds": 4, "private_notes": True}.items()
    [exp] = experiments(cfg)
    args = task_spec(exp, cfg, path, {})["task_args"]
    assert list(args) == LEGACY_TASK_ARGS + ["rounds", "private_notes"] and args["rounds"] == 4
    newer = set(GAME_FIELDS) - LEGACY_HASHED  # options and axes added since: hashed only when set
    assert newer >= {"rounds", "private_notes"} and all(_omits_default(k) for k in newer - {"decoding"})


def test_task_signature_defaults_are_the_options():
    """The task's named parameters (kept for the shape of old logs' task_args) take their
    defaults from GameOptions, and every option the task lacks a parameter for is newer."""
    import inspect

    from impostor_bench.tasks.impostor import impostor

    params = {k: p.default for k, p in inspect.signature(impostor).parameters.items()
              if p.kind is not p.VAR_KEYWORD}
    defaults = GameOptions()
    assert params == {k: getattr(defaults, k) for k in params}
    newer = set(GameOptions.model_fields) - set(params)
    assert newer >= {"rounds", "private_notes"} and all(_omits_default(k) for k in newer)


def _omits_default(name: str) -> bool:
    """Whether an option stays out of task arguments and the sweep hash at its default."""
    return omitted_defaults(GameOptions, {name: GameOptions.model_fields[name].default}) == {name}


def test_options_validate_a_sweeps_experiments(tmp_path):
    """Every experiment of a config is a valid GameOptions (what the task will accept)."""
    path = _sweep_yaml(tmp_path, modes=["homogeneous", "cross_play", "team_aware"], models=["bot/random", "bot/vague"],
                       seeds=[0, 5], temperature=1)
    cfg = load_config(path)
    for exp in experiments(cfg):
        args = task_spec(exp, cfg, path, {})["task_args"]
        opts = GameOptions(**args)
        assert (opts.mode, opts.seed, opts.n_games, opts.temperature) == (exp.mode, exp.seed, 2, 1.0)


def test_unknown_option_lists_the_options():
    from impostor_bench.tasks.impostor import validated_options

    with pytest.raises(ImpostorError) as err:
        validated_options({"n_gamez": 3})
    assert str(err.value).startswith("unknown task option(s) -T n_gamez; the options are: mode, difficulty, n_games")
    assert "rounds" in str(err.value)
    assert validated_options({"model": "ignored"}) == GameOptions()  # Inspect may pass the model along


@pytest.mark.parametrize("text, value", [("1e-3", 0.001), ("2E-1", 0.2), ("1.5e0", 1.5), ("5e-1", 0.5)])
def test_a_temperature_in_exponent_form_is_a_number(text, value):
    """``-T temperature=1e-3`` arrives as text (YAML 1.1 needs a dot and a signed exponent): it is
    the number it reads as, for both temperatures, and still bounded."""
    from impostor_bench.tasks.impostor import validated_options

    assert yaml.safe_load(text) == text  # what Inspect hands the task
    opts = validated_options({"temperature": text, "vote_temperature": text})
    assert opts.temperature == pytest.approx(value) and opts.vote_temperature == pytest.approx(value)


@pytest.mark.parametrize("text, problem", [
    ("3e0", "-T temperature='3e0' is not valid; use a value in [0, 2]"),
    ("abc", "-T temperature='abc' is not valid; it must be a number (or leave it out)"),
    ("1e-3x", "-T temperature='1e-3x' is not valid; it must be a number (or leave it out)"),
])
def test_other_texts_are_still_refused(text, problem):
    from impostor_bench.tasks.impostor import validated_options

    with pytest.raises(ImpostorError) as err:
        validated_options({"temperature": text})
    assert str(err.value) == problem
