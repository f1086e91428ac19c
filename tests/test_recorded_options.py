"""The options of an experiment are recorded from ``GameOptions`` itself: the task metadata and the
MLflow params of its run hold exactly its fields (as played), beside a named list of facts that
are not options (``tasks.impostor.RECORDS``, ``tracking.logrun.RUN_PARAMS``, the sweep run's
``SWEEP_RUN_PARAMS``), each listed once."""

from __future__ import annotations

import json

import pytest

from impostor_bench.core.options import GameOptions, omitted_defaults

OPTIONS = set(GameOptions.model_fields)


def test_the_non_option_lists_name_no_option():
    from impostor_bench.sweep.tracking import SWEEP_RUN_PARAMS
    from impostor_bench.tasks.impostor import RECORDS
    from impostor_bench.tracking.logrun import RUN_PARAM_PREFIXES, RUN_PARAMS

    for names in (RECORDS, RUN_PARAMS, SWEEP_RUN_PARAMS):
        assert len(set(names)) == len(names) and not set(names) & OPTIONS
    assert not [k for k in OPTIONS if k.startswith(RUN_PARAM_PREFIXES)]


def test_task_metadata_is_every_option_as_played(tmp_path, monkeypatch):
    from impostor_bench.tasks.impostor import RECORDS, impostor

    monkeypatch.chdir(tmp_path)
    task = impostor(n_games=3, seed=5, first_game=1, tie_rule="sym_side", temperature=0.2, rounds=2,
                    private_notes=True, experiment_id="x")
    md = task.metadata
    assert set(md) == OPTIONS | set(RECORDS)
    played = {k: md[k] for k in OPTIONS}
    assert played == GameOptions(**{k: v for k, v in played.items()}).model_dump()  # valid options, as dumped
    assert (played["n_games"], played["seed"], played["first_game"], played["tie_rule"], played["temperature"],
            played["rounds"], played["private_notes"], played["experiment_id"]) == (3, 5, 1, "sym_side", 0.2, 2, True, "x")
    # the options a log records only when set (omit_default) are recorded here whatever their value
    default = impostor(n_games=1).metadata
    assert set(default) == OPTIONS | set(RECORDS) and omitted_defaults(GameOptions, default) >= {"rounds", "word_pairs"}


def _recorded_params(tmp_path, monkeypatch, play, kind: str | None = None) -> dict[str, str]:
    """The MLflow params of the one run (tagged ``impostor.kind`` = ``kind``, if given) that ``play()``
    logs with tracking on by default, as a user's first run in an empty folder: the store ./mlruns."""
    from mlflow.tracking import MlflowClient

    for k in ("IMPOSTOR_MLFLOW", "MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_NAME", "IMPOSTOR_MLFLOW_EXPERIMENT"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    monkeypatch.chdir(tmp_path)
    play()
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    [run] = client.search_runs([e.experiment_id for e in client.search_experiments()],
                               filter_string=f"tags.`impostor.kind` = '{kind}'" if kind else "")
    return run.data.params


@pytest.mark.slow
def test_run_params_are_every_option_and_the_named_records(tmp_path, monkeypatch):
    from inspect_ai import eval as inspect_eval

    from impostor_bench.tasks.impostor import impostor
    from impostor_bench.tracking.logrun import RUN_PARAM_PREFIXES, RUN_PARAMS

    def play():
        [log] = inspect_eval(impostor(mode="cross_play", n_games=2, seed=3, max_tokens=99), model="bot/random",
                             model_roles={"impostor": "bot/embedding"}, log_dir="logs", display="none")
        assert log.status == "success"

    params = _recorded_params(tmp_path, monkeypatch, play)
    assert OPTIONS <= set(params)
    others = {k for k in params if k not in OPTIONS}
    assert {k for k in others if k not in RUN_PARAMS and not k.startswith(RUN_PARAM_PREFIXES)} == set()
    assert {"task", "model", "impostor_model", "majority_model", "word_pairs_file"} <= others
    assert (params["n_games"], params["seed"], params["max_tokens"], params["mode"]) == ("2", "3", "99", "cross_play")
    assert params["rounds"] == "1" and params["first_game"] == "0"  # recorded even at their defaults


@pytest.mark.slow
def test_sweep_run_params_are_its_game_fields_and_the_named_records(tmp_path, monkeypatch):
    from impostor_bench.commands.sweep import run_sweep
    from impostor_bench.sweep.config import GAME_FIELDS
    from impostor_bench.sweep.tracking import SWEEP_RUN_PARAMS

    from test_sweep_helpers import write_config

    def play():
        cfg = write_config(tmp_path / "s.yaml", modes=["homogeneous"], models=["testplayer/a"], max_tokens=77)
        assert run_sweep(str(cfg), log_dir=str(tmp_path / "logs"), display="none") == 0

    params = _recorded_params(tmp_path, monkeypatch, play, kind="sweep")
    assert set(params) == set(GAME_FIELDS) | set(SWEEP_RUN_PARAMS)
    assert OPTIONS - set(GAME_FIELDS) == {"mode", "difficulty", "n_games", "seed", "first_game", "experiment_id"}
    assert params["max_tokens"] == "77" and json.loads(params["models"]) == ["testplayer/a"]
