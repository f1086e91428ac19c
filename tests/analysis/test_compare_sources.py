"""``impostor compare`` reads an MLflow experiment like ``impostor report`` (``--experiment``, shared
code in impostor_bench.commands._source) and says what its difference is, run from an empty folder."""

from __future__ import annotations

import pandas as pd
import pytest

from impostor_bench.analysis.stats.paired import head_to_head
from impostor_bench.cli import main


@pytest.fixture(scope="module")
def store(sim_export, tmp_path_factory) -> str:
    """A sqlite tracking store whose experiment 'sim' has one run holding the export's tables."""
    from mlflow.tracking import MlflowClient

    root = tmp_path_factory.mktemp("compare_store")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=uri)
    exp = client.create_experiment("sim", artifact_location=(root / "artifacts").as_uri())
    run = client.create_run(exp, run_name="sweep-child")
    for f in ("games.parquet", "players.parquet", "models.csv"):
        client.log_artifact(run.info.run_id, str(sim_export / f), artifact_path="tables")
    client.set_terminated(run.info.run_id)
    return uri


def _models(sim_export) -> tuple[str, str]:
    a, b = sorted(pd.read_parquet(sim_export / "players.parquet")["model"].unique())[:2]
    return a, b


def test_compare_reads_an_experiment_as_it_reads_the_export(store, sim_export, tmp_path, monkeypatch, capsys):
    a, b = _models(sim_export)
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    assert main(["compare", a, b, "--parquet", str(sim_export)]) == 0
    from_export = capsys.readouterr().out
    assert main(["compare", a, b, "--experiment", "sim", "--tracking-uri", store, "--out", str(tmp_path / "o")]) == 0
    from_mlflow = capsys.readouterr().out
    assert from_mlflow.splitlines()[:6] == from_export.splitlines()[:6]  # the same comparison, line for line
    games = pd.read_parquet(sim_export / "games.parquet")
    players = pd.read_parquet(sim_export / "players.parquet")
    expected = head_to_head(games, players, a, b)
    assert pd.read_csv(tmp_path / "o" / "compare.csv")["diff_pp"].tolist() == pytest.approx(expected["diff_pp"].tolist())
    assert list(empty.iterdir()) == []  # a reading command writes nothing where it runs


def test_compare_says_its_difference_is_a_mean_over_pairs_not_the_gap_of_the_rates(sim_export, capsys):
    """The printed rates pool games; the difference averages pair-level differences. With unequal
    games per pair the two disagree, and the output says which is which."""
    a, b = _models(sim_export)
    assert main(["compare", a, b, "--parquet", str(sim_export)]) == 0
    out = capsys.readouterr().out
    assert "each rate pools every game of that model on those pairs" in out
    assert "the mean over the pairs of A's rate minus B's on the same pair" in out
    games = pd.read_parquet(sim_export / "games.parquet")
    players = pd.read_parquet(sim_export / "players.parquet")
    row = head_to_head(games, players, a, b).set_index("metric").loc["detection"]
    assert row["diff_pp"] != pytest.approx(row["rate_a_pct"] - row["rate_b_pct"], abs=0.05)  # why the line is needed


def test_compare_from_a_folder_without_a_store_says_how_to_name_one(sim_export, tmp_path, tmp_path_factory,
                                                                  monkeypatch, capsys):
    from impostor_bench.tracking import store

    a, b = _models(sim_export)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    # nor a checkout store holding the experiment (this checkout's mlruns/ holds impostor-demo once the
    # README's demo has run there, and is then read instead: tests/test_checkout_store.py)
    bare = tmp_path_factory.mktemp("checkout_without_store")
    monkeypatch.setattr(store, "_checkout_root", lambda: bare)
    assert main(["compare", a, b, "--experiment", "impostor-demo"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no tracking store at" in err and "--tracking-uri" in err
    assert list(tmp_path.iterdir()) == []  # MLflow did not create an empty store here
    with pytest.raises(SystemExit) as exit_:
        main(["compare", a, b, "--parquet", str(sim_export), "--experiment", "sim"])
    assert exit_.value.code == 2 and "not allowed with argument" in capsys.readouterr().err
