"""``impostor report --experiment X --log-run`` logs the report as a run of its own in X
(impostor_bench/tracking/reportrun.py): the ratings as metrics per role and model (names
sanitised, equal to the bundle's ratings.csv), the ratings table through log_table, the
ratings figure and the pages as artifacts; a later report skips that run; --log-run
without --experiment is a one-line error."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from impostor_bench.cli import main as cli_main


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """SQLite store, experiment 'rep': two experiment runs holding simulated tables."""
    from impostor_bench.analysis.io import write_tables
    from impostor_bench.analysis.sim.simulate import simulate_games
    from impostor_bench.tracking.store import get_client

    root = tmp_path_factory.mktemp("store")
    games, players, models = simulate_games(16, 30, seed=11)
    client, uri = get_client(f"sqlite:///{root}/mlflow.db")
    exp = client.create_experiment("rep", artifact_location=str(root / "art"))
    ids = sorted(games["experiment_id"].unique())
    for half in (ids[:8], ids[8:]):
        g = games[games["experiment_id"].isin(half)]
        d = Path(tempfile.mkdtemp(dir=root)) / "tables"
        write_tables(d, g, players[players["game_id"].isin(g["game_id"])], models)
        run = client.create_run(exp, tags={"impostor.kind": "experiment", "impostor.tables_logged": "1"})
        client.log_artifacts(run.info.run_id, str(d), "tables")
        client.set_terminated(run.info.run_id)
    return client, uri, exp, len(games)


def _report(uri, out, *extra):
    return cli_main(["report", "--experiment", "rep", "--tracking-uri", uri, "--out", str(out), "--no-figures",
                     "--bootstrap-reps", "40", "--permutation-reps", "20", *extra])


@pytest.mark.slow
def test_report_run_holds_the_ratings(store, tmp_path, capsys):
    client, uri, exp, n_games = store
    assert _report(uri, tmp_path / "r1", "--log-run") in (0, 1)
    [run] = client.search_runs([exp], filter_string="tags.`impostor.kind` = 'report'")
    assert run.info.status == "FINISHED" and run.info.run_id in capsys.readouterr().err
    ratings = pd.read_csv(tmp_path / "r1" / "tables" / "ratings.csv")
    assert len(ratings) >= 4 and set(ratings["role"]) <= {"impostor", "majority", "net"}
    m = run.data.metrics
    for row in ratings.itertuples():
        key = str(row.model).replace("/", "_").replace(":", "_")
        assert m[f"rating_{row.role}.{key}"] == pytest.approx(row.skill)
        if np.isfinite(row.ci_low):
            assert m[f"rating_{row.role}_ci_low.{key}"] == pytest.approx(row.ci_low)
        else:  # too few experiments for the fit's parameters: no interval, so no metric (issue 26)
            assert f"rating_{row.role}_ci_low.{key}" not in m
        assert m[f"rating_{row.role}_rank.{key}"] == row.rank
    assert run.data.params["n_games"] == str(n_games) and run.data.params["source_experiment"] == "rep"
    logged = client.download_artifacts(run.info.run_id, "report", str(tmp_path / "dl"))
    table = json.loads(Path(logged, "ratings.json").read_text())  # mlflow.log_table's format
    assert table["columns"][:3] == ["model", "role", "skill"] and len(table["data"]) == len(ratings)
    assert {"report.html", "manifest.json"} <= {p.name for p in Path(logged).iterdir()}
    assert (Path(logged) / "tables" / "ratings.csv").read_text() == (tmp_path / "r1" / "tables" / "ratings.csv").read_text()

    # the next report reads the same games: the report run is no input (no "skipped" note for it)
    from impostor_bench.commands.report import load_from_mlflow

    data = load_from_mlflow("rep", uri)
    assert len(data.games) == n_games and not any("without tables" in note for note in data.notes)


def test_figure_and_sanitised_names(store, tmp_path):
    """The adapter on a hand-made bundle: the figure is uploaded, odd model names are sanitised."""
    from impostor_bench.tracking.reportrun import log_report_run, rating_metrics

    frame = pd.DataFrame({"model": ["openai/gpt-4o", "openai_gpt-4o", "ollama/qwen:7b@q4"], "role": "impostor",
                          "skill": [0.5, -0.1, -0.4], "ci_low": [0.1, float("nan"), -0.9], "ci_high": [0.9, 0.3, 0.1],
                          "rank": [1, 2, 3]})
    metrics = rating_metrics(frame)
    assert metrics["rating_impostor.openai_gpt-4o"] == 0.5 and metrics["rating_impostor.openai_gpt-4o_2"] == -0.1
    assert metrics["rating_impostor.ollama_qwen_7b_q4"] == -0.4
    assert "rating_impostor_ci_low.openai_gpt-4o_2" not in metrics  # NaN left out
    bundle = tmp_path / "bundle"
    (bundle / "tables").mkdir(parents=True)
    (bundle / "figures").mkdir()
    frame.to_csv(bundle / "tables" / "ratings.csv", index=False)
    (bundle / "figures" / "ratings.png").write_bytes(b"\x89PNG fake")
    client = store[0]
    exp = client.create_experiment("x")
    run_id = log_report_run(client, exp, bundle, {"source": {"experiment": "x"}, "data": {"games": 3}})
    assert [a.path for a in client.list_artifacts(run_id, "report/figures")] == ["report/figures/ratings.png"]
    assert client.get_run(run_id).data.metrics == metrics


def test_log_run_needs_experiment(tmp_path, capsys):
    assert cli_main(["report", "--parquet", str(tmp_path), "--out", str(tmp_path / "o"), "--log-run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--log-run" in err[0] and "fix:" in err[0]
