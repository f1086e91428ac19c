"""The tracking server is down when an eval starts and back before it ends (a restart during a
long sweep, issue 18): the hook logs the whole run at the end, once, instead of leaving it to
``impostor sync`` after the last experiment of the shard."""

from __future__ import annotations

import socket

import pytest
from inspect_ai import eval as inspect_eval

from impostor_bench.tasks.impostor import impostor

from . import scripted


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_run_logged_at_the_end_when_the_server_comes_back(tmp_path, monkeypatch, capsys):
    from mlflow.tracking import MlflowClient

    store = f"sqlite:///{tmp_path}/mlruns/mlflow.db"
    monkeypatch.setenv("IMPOSTOR_MLFLOW", "1")
    monkeypatch.setenv("IMPOSTOR_MLFLOW_TRACES", "0")
    monkeypatch.setenv("IMPOSTOR_MLFLOW_EXPERIMENT", "outage")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{_free_port()}")  # nothing listens: down

    def back_on_first_call(call: scripted.Call) -> str:
        monkeypatch.setenv("MLFLOW_TRACKING_URI", store)  # the server is back while the games run
        return scripted.honest(call)

    scripted.SCRIPTS["outage"] = back_on_first_call
    log = inspect_eval(impostor(n_games=3), model="reliability/outage", log_dir=str(tmp_path / "logs"),
                       display="none")[0]
    assert log.status == "success"
    err = capsys.readouterr().err
    assert "not reachable" in err  # told at the start
    assert "impostor sync" not in err.split("not reachable", 1)[1].split("\n", 1)[1]  # nothing left to sync

    client = MlflowClient(store)
    exp = client.get_experiment_by_name("outage")
    runs = client.search_runs([exp.experiment_id])
    assert len(runs) == 1
    run = runs[0]
    assert run.info.status == "FINISHED"
    assert run.data.tags["impostor.source"] == "hook" and run.data.tags["impostor.tables_logged"] == "1"
    assert run.data.tags["impostor.eval_id"] == log.eval.eval_id
    assert run.data.metrics["games_completed"] == 3


def test_still_down_at_the_end_says_sync(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("IMPOSTOR_MLFLOW", "1")
    monkeypatch.setenv("IMPOSTOR_MLFLOW_TRACES", "0")
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{_free_port()}")
    scripted.SCRIPTS["outage2"] = scripted.honest
    log = inspect_eval(impostor(n_games=1), model="reliability/outage2", log_dir=str(tmp_path / "logs"),
                       display="none")[0]
    assert log.status == "success"
    err = capsys.readouterr().err
    assert f"impostor sync {str(log.location).removeprefix('file://')}" in err


def test_sweep_end_waits_for_the_server(tmp_path, monkeypatch, capsys):
    """A shard that ends while the server is down waits for it (bounded), then syncs once."""
    from types import SimpleNamespace

    import impostor_bench.tracking.sync as sync_mod
    from impostor_bench.sweep import tracking as sweep_tracking

    calls = []

    def flaky(ld, experiment=None, tracking_uri=None):
        calls.append(ld)
        if len(calls) < 3:
            raise RuntimeError("MLflow tracking server http://x is not reachable (ConnectError)")
        return SimpleNamespace(synced=["a.eval", "b.eval"])

    monkeypatch.setattr(sync_mod, "sync", flaky)
    ctx = SimpleNamespace(experiment="e", tracking_uri="http://x")
    sweep_tracking.complete_unfinished_runs(tmp_path, ctx, wait_s=5, poll_s=0.01)
    err = capsys.readouterr().err
    assert len(calls) == 3
    assert "waiting up to 5s" in err and "completed 2 run(s)" in err and "run: impostor sync" in err

    calls.clear()
    monkeypatch.setattr(sync_mod, "sync", lambda *a, **k: calls.append(1) or (_ for _ in ()).throw(RuntimeError("down")))
    sweep_tracking.complete_unfinished_runs(tmp_path, ctx, wait_s=0.05, poll_s=0.01)
    err = capsys.readouterr().err
    assert len(calls) >= 2 and err.rstrip().endswith(f"run: impostor sync {tmp_path}")


if __name__ == "__main__":
    pytest.main([__file__])
