"""``impostor export --logs``: schema-valid tables, errored games reported, retry duplicates merged."""

from __future__ import annotations

import contextvars
import copy
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.log import EvalError, read_eval_log, write_eval_log

from impostor_bench.cli import main as cli_main
from impostor_bench.core.errors import ImpostorError
from impostor_bench.export import tables_from_logs
from impostor_bench.core.records import CONTRACT_GAME_COLUMNS, CONTRACT_PLAYER_COLUMNS, GameRow, PlayerRow

import test_sweep_helpers  # noqa: F401 - registers testplayer/


@pytest.fixture(scope="module")
def finished_log(tmp_path_factory):
    """One finished cross-play log of 4 games (untracked)."""
    import os

    from inspect_ai import eval

    from impostor_bench.tasks.impostor import impostor

    d = tmp_path_factory.mktemp("logs")
    old = os.environ.get("IMPOSTOR_MLFLOW")
    os.environ["IMPOSTOR_MLFLOW"] = "0"
    try:
        task = contextvars.Context().run(impostor, mode="cross_play", n_games=4)
        log = eval(task, model="testplayer/a", model_roles={"impostor": "testplayer/b"}, log_dir=str(d),
                   display="none")[0]
    finally:
        if old is None:
            os.environ.pop("IMPOSTOR_MLFLOW")
        else:
            os.environ["IMPOSTOR_MLFLOW"] = old
    assert log.status == "success"
    return Path(log.location.removeprefix("file://"))


def _copy_with(src: Path, dst: Path, edit) -> Path:
    log = read_eval_log(str(src))
    log = copy.deepcopy(log)
    edit(log)
    write_eval_log(log, str(dst))
    return dst


def _errored(sample, message="RuntimeError: provider exploded"):
    sample.error = EvalError(message=message, traceback="tb", traceback_ansi="tb")
    sample.scores = None


def test_export_writes_validated_contract_tables(finished_log, tmp_path, capsys):
    out = tmp_path / "out"
    assert cli_main(["export", "--logs", str(finished_log.parent), "--out", str(out)]) == 0
    games, players = pd.read_parquet(out / "games.parquet"), pd.read_parquet(out / "players.parquet")
    assert len(games) == 4 and len(players) == 16
    assert list(games.columns[: len(CONTRACT_GAME_COLUMNS)]) == CONTRACT_GAME_COLUMNS
    assert list(players.columns[: len(CONTRACT_PLAYER_COLUMNS)]) == CONTRACT_PLAYER_COLUMNS
    for row in games.to_dict("records"):
        GameRow.model_validate(row)
    for row in players.to_dict("records"):
        row["vote"] = None if pd.isna(row["vote"]) else int(row["vote"])
        PlayerRow.model_validate({k: (None if isinstance(v, float) and pd.isna(v) else v) for k, v in row.items()})
    models = pd.read_csv(out / "models.csv")
    assert list(models.columns[:4]) == ["model", "provider", "family", "params_b"]  # contract, then added
    assert list(models.columns[4:]) == ["route", "params_source", "params_note", "active_params_b", "alias", "snapshot",
                                        "snapshot_date"]
    assert set(models["model"]) == {"testplayer/a", "testplayer/b"}
    assert set(models["route"]) == {"testplayer"} and models["provider"].isna().all()  # maker unknown, not the route
    assert not (out / "errors.csv").exists()


def test_errored_games_are_reported_not_dropped(finished_log, tmp_path, capsys):
    d = tmp_path / "logs"
    d.mkdir()

    def edit(log):
        log.status = "error"
        _errored(log.samples[1])
        sc = log.samples[2].scores["impostor_winner"]
        sc.metadata["game"]["impostor_seat"] = 7  # a record that breaks the schema

    _copy_with(finished_log, d / "broken.eval", edit)
    t = tables_from_logs(d)
    assert len(t.games) == 2
    assert len(t.errors) == 2
    reasons = {e.sample_id: e.reason for e in t.errors}
    log = read_eval_log(str(finished_log))
    assert reasons[str(log.samples[1].id)].startswith("RuntimeError: provider exploded")
    assert "invalid game record" in reasons[str(log.samples[2].id)]

    out = tmp_path / "out"
    assert cli_main(["export", "--logs", str(d), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "2 game(s) errored" in err and str(log.samples[1].id) in err and "provider exploded" in err
    errors = pd.read_csv(out / "errors.csv")
    assert len(errors) == 2 and set(errors["kind"]) == {"errored"}


def test_retry_duplicates_are_merged_keeping_the_completed_game(finished_log, tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    # an earlier attempt: game 0 errored, game 3 never ran (log killed), games 1-2 finished
    def first_attempt(log):
        log.status = "started"
        _errored(log.samples[0])
        log.samples = log.samples[:3]
        log.results = None

    _copy_with(finished_log, d / "2026-01-01T00-00-00_attempt1.eval", first_attempt)
    t = tables_from_logs(d)
    assert len(t.games) == 2 and len(t.errors) == 1 and len(t.missing) == 1
    # the retry log holds all four finished games
    (d / "2026-01-02T00-00-00_attempt2.eval").write_bytes(finished_log.read_bytes())
    t = tables_from_logs(d)
    assert len(t.games) == 4 and t.games["game_id"].is_unique
    assert not t.errors and not t.missing
    assert t.duplicates == 2
    ref = tables_from_logs(finished_log)
    pd.testing.assert_frame_equal(t.games, ref.games)
    pd.testing.assert_frame_equal(t.players, ref.players)
    # the sweep's end-of-run summary reads without player rows: same games, duplicates, usage
    lean = tables_from_logs(d, with_players=False)
    pd.testing.assert_frame_equal(lean.games, ref.games)
    assert len(lean.players) == 0 and list(lean.players.columns) == list(ref.players.columns)
    assert lean.duplicates == 2 and lean.usage == t.usage and lean.game_time_s == t.game_time_s


def test_export_errors_are_one_line(tmp_path):
    with pytest.raises(ImpostorError, match="no such file"):
        tables_from_logs(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ImpostorError, match="no readable Inspect logs"):
        tables_from_logs(tmp_path / "empty")
    assert cli_main(["export", "--logs", str(tmp_path / "empty"), "--out", str(tmp_path / "o")]) == 2


def test_unreadable_log_is_reported(finished_log, tmp_path, capsys):
    d = tmp_path / "logs"
    d.mkdir()
    (d / "good.eval").write_bytes(finished_log.read_bytes())
    (d / "2026-01-01T00-00-00_impostor_torn.eval").write_bytes(finished_log.read_bytes()[:300])
    assert cli_main(["export", "--logs", str(d), "--out", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    assert "log skipped" in err and "torn.eval" in err


def test_export_experiment_says_unfinished_for_runs_killed_before_logging(finished_log, tmp_path, capsys,
                                                                            monkeypatch):
    """``export --experiment``: an MLflow run left RUNNING without tables (its sweep killed
    while playing or logging) is reported as an unfinished run, not as errored games; a run
    with tables keeps its errored/missing games apart (tests/reliability/test_crash_safety.py
    checks the same after a real SIGKILL)."""
    from impostor_bench.tracking.logrun import Context, finish_run, start_run
    from impostor_bench.tracking.store import ensure_experiment, get_client

    monkeypatch.setenv("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    client, uri = get_client(uri)
    exp_id = ensure_experiment(client, "killed", uri)
    log = read_eval_log(str(finished_log))
    _errored(log.samples[0])
    log.samples = log.samples[:3]  # the 4th game never finished: missing
    done = start_run(client, exp_id, log.eval, Context(), source="test")
    finish_run(client, done, log, Context())
    killed = copy.deepcopy(log.eval)
    killed.task_id, killed.task_args = "killed-task", {**killed.task_args, "seed": 7}
    running = start_run(client, exp_id, killed, Context(), source="test")  # then the sweep was killed
    out = tmp_path / "out"
    assert cli_main(["export", "--experiment", "killed", "--tracking-uri", uri, "--out", str(out)]) == 0
    said = capsys.readouterr()
    assert "exported 2 games" in said.out
    assert "1 experiment run(s) unfinished" in said.err and f"MLflow run {running} is RUNNING" in said.err
    assert "1 game(s) errored" in said.err and "1 game(s) missing" in said.err
    assert "resume the sweep" in said.err and "impostor sync" in said.err
    kinds = pd.read_csv(out / "errors.csv")["kind"].value_counts().to_dict()
    assert kinds == {"errored": 1, "missing": 1, "unfinished": 1}
    # nothing but the killed run: no games, and the one line says why
    only = ensure_experiment(client, "only-killed", uri)
    start_run(client, only, killed, Context(), source="test")
    assert cli_main(["export", "--experiment", "only-killed", "--tracking-uri", uri, "--out", str(tmp_path / "o2")]) == 2
    err = capsys.readouterr().err
    assert "no finished games to export (1 experiment run(s) unfinished)" in err and "errored" not in err
