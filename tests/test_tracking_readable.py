"""MLflow as a researcher meets it: each run says in one line what it found (its description),
the experiment's runs table has a direct address, and a local store keeps working after
``mlruns/`` is moved or copied (export and report read it in place; ``impostor relocate`` and
every writer re-point it for ``mlflow ui``)."""

from __future__ import annotations

import contextlib
import hashlib
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from impostor_bench.cli import main as cli_main
from impostor_bench.tracking.runnote import NOTE_TAG, experiment_note, sweep_note

EXPERIMENT = "impostor"  # a plain eval's experiment


def _eval(folder: Path, n_games: int = 4) -> None:
    """One tracked cross-play eval into ``folder``'s default store (./mlruns), traces inline."""
    import contextvars

    from inspect_ai import eval as inspect_eval

    from impostor_bench.tasks.impostor import impostor

    with contextlib.chdir(folder):
        task = contextvars.Context().run(impostor, mode="cross_play", n_games=n_games)
        [log] = inspect_eval(task, model="bot/random", model_roles={"impostor": "bot/embedding"}, log_dir="logs",
                             display="none")
    assert log.status == "success", log.error


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A folder holding the store of one tracked eval (the original; tests copy it)."""
    mp = pytest.MonkeyPatch()
    for var in ("IMPOSTOR_MLFLOW", "MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_NAME", "IMPOSTOR_MLFLOW_EXPERIMENT"):
        mp.delenv(var, raising=False)
    mp.setenv("IMPOSTOR_MLFLOW_TRACES", "inline")
    mp.setenv("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    folder = tmp_path_factory.mktemp("orig")
    _eval(folder)
    yield folder
    mp.undo()


def _client(folder: Path):
    from mlflow.tracking import MlflowClient

    return MlflowClient(f"sqlite:///{folder / 'mlruns' / 'mlflow.db'}")


def _run(folder: Path):
    client = _client(folder)
    [run] = client.search_runs([client.get_experiment_by_name(EXPERIMENT).experiment_id])
    return client, run


def test_run_description_states_the_result(store, tmp_path):
    client, run = _run(store)
    tables = Path(client.download_artifacts(run.info.run_id, "tables", str(tmp_path)))
    games, players = pd.read_parquet(tables / "games.parquet"), pd.read_parquet(tables / "players.parquet")
    # independent of the scorer's metrics: from the exported rows
    won = round(100 * (games["winner"] == "impostor").mean())
    seat = players["game_id"].map(games.set_index("game_id")["impostor_seat"])
    legal = players[(players["role"] == "majority") & players["ballot_class"].isin(["valid", "self_vote"])]
    caught = round(100 * (legal["vote"] == seat[legal.index]).sum() / len(legal))
    assert run.data.tags[NOTE_TAG] == (f"{len(games)} games, impostor won {won}%, detection {caught}% · "
                                       f"cross_play, easy · impostor bot/embedding vs majority bot/random")


def test_notes_of_partial_and_empty_runs():
    m = {"games_completed": 3.0, "games_scheduled": 4.0, "impostor_win_rate": 2 / 3, "games_errored": 1.0}
    assert experiment_note(m, {"mode": "team_aware", "difficulty": "hard"}, {"team_a": "x/a", "team_b": "x/b"}) == (
        "3 of 4 games, impostor won 67%, detection n/a, 1 errored · team_aware, hard · team_a x/a vs team_b x/b")
    assert experiment_note({"games_completed": 1.0, "games_scheduled": 1.0, "impostor_win_rate": 0.0,
                            "detection_accuracy": math.nan}, {}, {"model": "m"}) == (
        "1 game, impostor won 0%, detection n/a · homogeneous, easy · m")
    assert sweep_note({"experiments_planned": 5, "experiments_completed": 4, "games_planned": 20,
                       "games_completed": 16, "wins/impostor": 4}) == (
        "4 of 5 experiments, 16 of 20 games, impostor won 25%")
    assert sweep_note({"experiments_planned": 1, "experiments_completed": 0, "games_planned": 4,
                       "games_completed": 0}).endswith("0 of 4 games, impostor won n/a")
    shard = {"experiments_planned": 2, "experiments_completed": 2, "games_planned": 8, "games_completed": 8,
             "wins/impostor": 2}
    assert sweep_note({f"shard_2_of_3/{k}": v for k, v in shard.items()}) == (
        "shard 2/3: 2 of 2 experiments, 8 games, impostor won 25%")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_copy_written_to_writes_beside_itself_not_into_the_original(store, tmp_path, monkeypatch):
    """cp -r with the original kept: a new eval into the copy re-points it first."""
    copy = tmp_path / "copy"
    shutil.copytree(store, copy)
    original_runs = sorted(p.name for p in (store / "mlruns" / "artifacts" / EXPERIMENT).iterdir())
    for var in ("IMPOSTOR_MLFLOW", "MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_NAME", "IMPOSTOR_MLFLOW_EXPERIMENT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("IMPOSTOR_MLFLOW_TRACES", "0")
    _eval(copy, n_games=1)
    assert sorted(p.name for p in (store / "mlruns" / "artifacts" / EXPERIMENT).iterdir()) == original_runs
    client = _client(copy)
    runs = client.search_runs([client.get_experiment_by_name(EXPERIMENT).experiment_id])
    assert len(runs) == 2
    for run in runs:
        assert run.info.artifact_uri.startswith((copy / "mlruns").as_uri())
        assert client.list_artifacts(run.info.run_id, "tables")


def test_moved_store_is_read_in_place_then_relocated(store, tmp_path, monkeypatch, capsys):
    """cp -r the project elsewhere, delete the original (the module's store: this test runs last)."""
    from impostor_bench.tracking.relocate import map_uri, store_moves

    orig = store
    _, before = _run(orig)
    moved = tmp_path / "elsewhere" / "project"
    shutil.copytree(orig, moved)
    monkeypatch.chdir(moved)
    shutil.rmtree(orig)
    db = moved / "mlruns" / "mlflow.db"
    client, run = _run(moved)
    assert run.info.artifact_uri.startswith((orig / "mlruns").as_uri())  # what MLflow recorded: the old place
    assert client.list_artifacts(run.info.run_id, "tables") == []  # ...so MLflow alone finds nothing there
    assert store_moves(db) == {orig / "mlruns": moved / "mlruns"}

    # reading commands work in place and write nothing
    digest = _sha(db)
    assert cli_main(["export", "--experiment", EXPERIMENT, "--out", str(tmp_path / "tables")]) == 0
    assert len(pd.read_parquet(tmp_path / "tables" / "games.parquet")) == 4
    assert _sha(db) == digest
    assert cli_main(["relocate", "--dry-run"]) == 0 and _sha(db) == digest
    assert "dry run: nothing changed" in capsys.readouterr().out

    # relocate: what mlflow ui reads (the run's and the traces' artifact URIs) points into the move
    assert cli_main(["relocate", "mlruns"]) == 0
    assert "artifact location(s) re-pointed" in capsys.readouterr().out
    client, run = _run(moved)
    assert run.info.artifact_uri == map_uri(before.info.artifact_uri, {orig / "mlruns": moved / "mlruns"})
    assert sorted(Path(a.path).name for a in client.list_artifacts(run.info.run_id, "tables")) == [
        "games.parquet", "models.csv", "moves.parquet", "players.parquet"]
    exp = client.get_experiment_by_name(EXPERIMENT)
    assert exp.artifact_location == (moved / "mlruns" / "artifacts" / EXPERIMENT).as_uri()
    traces = client.search_traces(locations=[exp.experiment_id])
    assert len(traces) == 4
    assert all(t.info.tags["mlflow.artifactLocation"].startswith((moved / "mlruns").as_uri()) for t in traces)
    assert cli_main(["relocate", "mlruns"]) == 0 and "nothing to do" in capsys.readouterr().out


def test_relocate_without_a_store_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli_main(["relocate"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no MLflow store at mlruns/mlflow.db" in err and "fix:" in err
    assert list(tmp_path.iterdir()) == []


def test_runs_page_address_opens_the_runs_table():
    """MLflow 3 opens an experiment on its GenAI overview unless the address asks for the runs
    (scripts/mlflow_runs_screenshot.py checks it in Chromium); the sweep prints this address."""
    from impostor_bench.tracking.store import runs_page

    assert runs_page("7") == "http://127.0.0.1:5000/#/experiments/7/runs?workflowType=machine_learning"
    assert runs_page("7", "http://host:5000/").startswith("http://host:5000/#/experiments/7/runs?")
