"""``impostor compare --log-run``: the head-to-head as an MLflow run (impostor_bench.tracking.comparerun)."""

from __future__ import annotations

import pandas as pd

from impostor_bench.analysis.stats.paired import COLUMNS


def test_compare_run_holds_rounded_metrics_and_the_table(tmp_path):
    from mlflow import MlflowClient

    from impostor_bench.tracking.comparerun import COMPARE_KIND, log_compare_run

    table = pd.DataFrame([["impostor_win", "bot/a", "bot/b", 47.91666, 37.5, 9.069940, -5.0998, 23.2397, 0.192587,
                           16, 96, 96, "unresolved (the interval holds 0)", 52.0, 884.0]], columns=COLUMNS)
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'm.db'}")
    line = log_compare_run(table, "cmp", "out/tables", client=client)
    exp = client.get_experiment_by_name("cmp")
    [run] = client.search_runs([exp.experiment_id])
    assert run.info.run_id in line and run.info.status == "FINISHED"
    assert run.data.tags["impostor.kind"] == COMPARE_KIND and run.data.params["model_a"] == "bot/a"
    m = run.data.metrics
    assert m["impostor_win.diff_pp"] == 9.1 and m["impostor_win.ci_low"] == -5.1 and m["impostor_win.p"] == 0.1926
    assert m["impostor_win.n_pairs"] == 16 and m["impostor_win.more_games"] == 884
