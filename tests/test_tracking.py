"""MLflow tracking against a REAL tracking server and the default local SQLite store.

A sweep with offline players is logged through the Inspect hooks; the test
reads the runs back (params, metrics, tags, artifacts, dataset input), exports
the tables from MLflow and from the logs, greps everything for fake secrets,
and checks that a down server leaves a log that ``impostor sync`` uploads once.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from impostor_bench.cli import main as cli_main
from impostor_bench.export import tables_from_logs

from test_sweep_helpers import all_bytes_under, free_port, mlflow_server, write_config

FAKE_ENV_KEY = "sk-test-FAKEENVKEY-0123456789"
FAKE_ARG_KEY = "sk-test-FAKEARGKEY-9876543210"
FAKE_ARG_TOKEN = "tok-test-FAKEARGTOKEN-55555"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with mlflow_server(tmp_path_factory.mktemp("mlflow")) as uri:
        yield uri


@pytest.fixture
def tracked(monkeypatch):
    monkeypatch.delenv("IMPOSTOR_MLFLOW", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    monkeypatch.delenv("IMPOSTOR_MLFLOW_EXPERIMENT", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_ENV_KEY)
    monkeypatch.setenv("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")


def fresh(fn, *args, **kwargs):
    """Build a task outside the context an earlier in-process eval leaves behind (its active model)."""
    import contextvars

    return contextvars.Context().run(fn, *args, **kwargs)


def _runs(client, name):
    exp = client.get_experiment_by_name(name)
    assert exp is not None, f"no MLflow experiment {name}"
    return client.search_runs([exp.experiment_id], max_results=1000)


def _artifacts(client, run_id, path=None):
    out = []
    for a in client.list_artifacts(run_id, path):
        out += _artifacts(client, run_id, a.path) if a.is_dir else [a.path]
    return out


@pytest.mark.slow
def test_sweep_logs_to_tracking_server(server, tracked, tmp_path, monkeypatch):
    from mlflow.tracking import MlflowClient

    from impostor_bench.commands.sweep import run_sweep

    uri = server
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.chdir(tmp_path)
    cfg = write_config(tmp_path / "sweep.yaml", name="srv", modes=["homogeneous", "cross_play", "team_blind"],
                       games_per_experiment=3, tracking={"experiment": "impostor-srv"})
    log_dir = tmp_path / "logs"
    assert run_sweep(str(cfg), log_dir=str(log_dir), display="none") == 0
    assert not (tmp_path / "mlruns").exists()  # the server, not the local default, got the runs

    client = MlflowClient(uri)
    runs = _runs(client, "impostor-srv")
    parents = [r for r in runs if r.data.tags.get("impostor.kind") == "sweep"]
    children = [r for r in runs if r.data.tags.get("impostor.kind") == "experiment"]
    assert len(parents) == 1 and len(children) == 5  # 2 homogeneous + 2 cross-play + 1 team
    parent = parents[0]
    assert parent.info.status == "FINISHED"
    assert parent.data.metrics["games_completed"] == 15 and parent.data.metrics["experiments_completed"] == 5
    assert parent.data.params["games_per_experiment"] == "3"

    modes = sorted(r.data.params["mode"] for r in children)
    assert modes == ["cross_play", "cross_play", "homogeneous", "homogeneous", "team_blind"]
    for r in children:
        p, m, t = r.data.params, r.data.metrics, r.data.tags
        assert r.info.status == "FINISHED"
        assert t["mlflow.parentRunId"] == parent.info.run_id
        assert t["impostor.sweep_id"] == parent.data.tags["impostor.sweep_id"]
        assert t["impostor.experiment_id"] == p["experiment_id"] == r.info.run_name
        # params: design, models per role, seeds, temperatures, tokens, tie rule, word pairs, versions, git
        for k in ("difficulty", "n_games", "seed", "temperature", "vote_temperature", "max_tokens", "tie_rule",
                  "word_pairs_sha256", "version.inspect_ai", "version.mlflow", "version.impostor-bench"):
            assert p[k] not in ("", None), k
        assert p["n_games"] == "3" and p["temperature"] == "0.7" and p["vote_temperature"] == "0.3"
        assert len(p["word_pairs_sha256"]) == 64
        roles = {"homogeneous": ["model.all"], "cross_play": ["model.impostor", "model.majority"],
                 "team_blind": ["model.team_a", "model.team_b"]}[p["mode"]]
        assert all(p[k].startswith("testplayer/") for k in roles)
        assert "git.commit" in p
        # metrics: task metrics, win conditions, invalid counts, tokens per role, wall time
        assert m["games_completed"] == 3 and m["games_errored"] == 0
        assert 0 <= m["impostor_win_rate"] <= 1 and "detection_accuracy" in m
        assert sum(v for k, v in m.items() if k.startswith("win_condition/")) == 3
        assert m["wins/impostor"] + m["wins/majority"] == 3
        assert m["invalid_ballots"] == 0 and "invalid_descriptions" in m
        role_keys = [k for k in m if k.startswith("tokens/") and k.endswith("/total") and not k.startswith("tokens/total/")]
        assert sorted(k.split("/")[1] for k in role_keys) == sorted(x.split(".")[1] for x in roles)
        # 3 games x 4 seats x (description + ballot) x 15 tokens
        assert m["tokens/total/total"] == 3 * 4 * 2 * 15
        assert m["wall_time_s"] > 0
        # artifacts at the exact paths the report command downloads
        arts = _artifacts(client, r.info.run_id)
        for a in ("tables/games.parquet", "tables/players.parquet", "tables/models.csv", "config/resolved.json"):
            assert a in arts, arts
        assert any(a.startswith("inspect_log/") and a.endswith(".eval") for a in arts)
        # word pairs as a dataset input
        ds = client.get_run(r.info.run_id).inputs.dataset_inputs
        assert [d.dataset.name for d in ds] == ["word_pairs"], t.get("impostor.word_pairs_dataset_error")
        assert ds[0].dataset.digest == p["word_pairs_sha256"][:16]

    # export from MLflow == export from the logs, schema-valid for the report
    out_m, out_l = tmp_path / "from_mlflow", tmp_path / "from_logs"
    assert cli_main(["export", "--experiment", "impostor-srv", "--out", str(out_m)]) == 0
    assert cli_main(["export", "--logs", str(log_dir), "--out", str(out_l)]) == 0
    for f in ("games.parquet", "players.parquet"):
        a, b = pd.read_parquet(out_m / f), pd.read_parquet(out_l / f)
        pd.testing.assert_frame_equal(a, b)
    g = pd.read_parquet(out_m / "games.parquet")
    assert len(g) == 15 and g["game_id"].is_unique
    assert set(pd.read_csv(out_m / "models.csv")["model"]) == {"testplayer/a", "testplayer/b"}
    from impostor_bench.analysis.io import load_tables

    data = load_tables(out_m)
    assert len(data.games) == 15 and len(data.players) == 60

    # re-running the finished sweep changes nothing: no new runs
    before = len(_runs(client, "impostor-srv"))  # 5 experiments, the sweep, its per-model summaries (issue 44)
    assert run_sweep(str(cfg), log_dir=str(log_dir), display="none") == 0
    assert len(_runs(client, "impostor-srv")) == before


@pytest.mark.slow
def test_plain_eval_default_sqlite_store_no_secrets(tracked, tmp_path, monkeypatch):
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate
    from mlflow.tracking import MlflowClient

    from impostor_bench.tasks.impostor import impostor

    monkeypatch.chdir(tmp_path)
    logs = eval(fresh(impostor, mode="cross_play", n_games=2), model="testplayer/a",
                model_args={"api_key": FAKE_ARG_KEY, "auth_token": FAKE_ARG_TOKEN},
                model_roles={"impostor": "testplayer/b"}, log_dir="logs", display="none")
    assert logs[0].status == "success"
    db = tmp_path / "mlruns" / "mlflow.db"
    assert db.exists() and (tmp_path / "mlruns" / "artifacts").is_dir()
    client = MlflowClient(f"sqlite:///{db}")
    runs = _runs(client, "impostor")
    assert len(runs) == 1
    run = runs[0]
    assert run.data.tags.get("mlflow.parentRunId") is None
    assert run.data.params["model.impostor"] == "testplayer/b" and run.data.params["model.majority"] == "testplayer/a"
    assert run.data.params["model_args.auth_token"] == "***REDACTED***"
    art = Path(client.download_artifacts(run.info.run_id, "tables", str(tmp_path / "dl")))
    assert len(pd.read_parquet(art / "games.parquet")) == 2
    assert Path(run.info.artifact_uri.removeprefix("file://")).is_relative_to(tmp_path / "mlruns" / "artifacts")
    # the live series (throttled while it runs) ends at the last game, on the final rate
    done = client.get_metric_history(run.info.run_id, "live/games_done")
    rate = client.get_metric_history(run.info.run_id, "live/impostor_win_rate")
    assert done[-1].value == 2 and done[-1].step == 2
    assert rate[-1].value == pytest.approx(run.data.metrics["impostor_win_rate"])

    # other tasks are not tracked; IMPOSTOR_MLFLOW=0 switches tracking off
    other = Task(dataset=[Sample(input="hello")], solver=generate(), name="other_task")
    assert eval(other, model="testplayer/a", log_dir="logs", display="none")[0].status == "success"
    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    assert eval(fresh(impostor, n_games=1), model="testplayer/a", log_dir="logs", display="none")[0].status == "success"
    assert len(_runs(client, "impostor")) == 1
    assert sum(len(client.search_runs([e.experiment_id])) for e in client.search_experiments()) == 1

    # the Inspect log keeps a non-api_key arg; what we logged to MLflow must not
    assert any(FAKE_ARG_TOKEN.encode() in data for _, data in all_bytes_under(tmp_path / "logs"))
    for path, data in all_bytes_under(tmp_path / "mlruns"):
        for secret in (FAKE_ENV_KEY, FAKE_ARG_KEY, FAKE_ARG_TOKEN):
            assert secret.encode() not in data, f"{secret} leaked into {path}"


def test_server_down_then_sync(server, tracked, tmp_path, monkeypatch, capsys):
    """The server is down during the sweep: games run, the user is told; `impostor sync` uploads once it is up."""
    from mlflow.tracking import MlflowClient

    from impostor_bench.commands.sweep import run_sweep

    down = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    monkeypatch.setenv("MLFLOW_TRACKING_URI", down)
    monkeypatch.chdir(tmp_path)
    cfg = write_config(tmp_path / "sweep.yaml", name="down", modes=["homogeneous"], games_per_experiment=2)
    log_dir = tmp_path / "logs"
    assert run_sweep(str(cfg), log_dir=str(log_dir), display="none") == 0  # the games do not need MLflow
    out = capsys.readouterr()
    assert "not reachable" in out.err and f"impostor sync {log_dir}" in out.err + out.out
    assert len(tables_from_logs(log_dir).games) == 4
    assert not (tmp_path / "mlruns").exists()

    # a plain eval with the server down is told the exact log to sync
    from inspect_ai import eval

    from impostor_bench.tasks.impostor import impostor

    log = eval(fresh(impostor, n_games=1), model="testplayer/a", log_dir=str(tmp_path / "plain"), display="none")[0]
    assert log.status == "success"
    assert "impostor sync" in capsys.readouterr().err

    # the server is back (here: the module's server)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", server)
    assert cli_main(["sync", str(log_dir), "--tracking-uri", down]) == 2  # still down: one clear error
    assert "not reachable" in capsys.readouterr().err
    assert cli_main(["sync", str(log_dir)]) == 0
    assert "synced 2 eval(s)" in capsys.readouterr().out
    assert cli_main(["sync", str(log_dir)]) == 0  # idempotent
    assert "synced 0 eval(s), 2 already up to date" in capsys.readouterr().out
    client = MlflowClient(server)
    runs = _runs(client, "down")
    kinds = sorted(r.data.tags["impostor.kind"] for r in runs)
    assert kinds == ["experiment", "experiment", "sweep"]
    parent = next(r for r in runs if r.data.tags["impostor.kind"] == "sweep")
    children = [r for r in runs if r.data.tags["impostor.kind"] == "experiment"]
    assert all(r.data.tags.get("mlflow.parentRunId") == parent.info.run_id for r in children)
    assert all(r.data.tags.get("impostor.source") == "sync" and r.info.status == "FINISHED" for r in children)
    assert cli_main(["export", "--experiment", "down", "--out", str(tmp_path / "x")]) == 0
    assert len(pd.read_parquet(tmp_path / "x" / "games.parquet")) == 4
    # the plain eval's single log syncs into the default experiment
    assert cli_main(["sync", str(tmp_path / "plain")]) == 0
    plain = [r for r in _runs(client, "impostor") if r.data.tags.get("impostor.eval_id") == log.eval.eval_id]
    assert len(plain) == 1 and plain[0].data.metrics["games_completed"] == 1


@pytest.mark.slow
def test_plain_inspect_eval_cli_is_tracked(tmp_path):
    """`inspect eval tasks/impostor.py ...` (a subprocess: hooks come from the entry point) makes one run."""
    import os
    import subprocess
    import sys

    from mlflow.tracking import MlflowClient

    from test_sweep_helpers import REPO, cli_env

    inspect_exe = Path(sys.executable).parent / "inspect"
    task = os.path.relpath(REPO / "tasks" / "impostor.py", tmp_path)  # Inspect wants a relative path
    env = cli_env(OPENAI_API_KEY=FAKE_ENV_KEY)
    env.pop("IMPOSTOR_MLFLOW", None)
    r = subprocess.run([str(inspect_exe), "eval", task, "--model", "bot/random", "--model-role", "impostor=bot/embedding",
                        "-T", "mode=cross_play", "-T", "n_games=2", "--log-dir", "logs", "--display", "none"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-2000:]
    client = MlflowClient(f"sqlite:///{tmp_path}/mlruns/mlflow.db")
    runs = _runs(client, "impostor")
    assert len(runs) == 1 and runs[0].info.status == "FINISHED"
    assert runs[0].data.params["model.impostor"] == "bot/embedding"
    assert runs[0].data.metrics["games_completed"] == 2
    assert "tables/games.parquet" in _artifacts(client, runs[0].info.run_id)
    for path, data in all_bytes_under(tmp_path / "mlruns"):
        assert FAKE_ENV_KEY.encode() not in data, path
