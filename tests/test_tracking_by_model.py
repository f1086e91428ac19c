"""MLflow answers "which model is the best impostor across modes" (issue 29): every experiment run
of every mode carries its impostor and majority models (tags and params) and per-model rates as
metrics; the printed runs-table addresses open views of the experiment runs only (no sweep or
report run) with the key metric columns, one grouped by impostor model; a resumed sweep
estimates only what it will play. A real sweep through the command line into a local store."""

from __future__ import annotations

import json
import re

import pytest
from mlflow.tracking import MlflowClient

from test_sweep_helpers import cli_env, run_cli, write_config

MODELS = ["bot/random", "bot/embedding"]


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bymodel")
    cfg = write_config(tmp / "s.yaml", name="bymodel", models=MODELS, modes=["homogeneous", "cross_play", "team_blind"],
                       imports=[], tracking={"experiment": "bymodel"})
    env = cli_env()
    env.pop("IMPOSTOR_MLFLOW", None)
    r = run_cli(["sweep", str(cfg), "--display", "none"], cwd=tmp, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    client = MlflowClient(f"sqlite:///{tmp}/mlruns/mlflow.db")
    return tmp, cfg, env, r, client, client.get_experiment_by_name("bymodel")


@pytest.mark.slow
def test_every_mode_names_its_models_by_side_and_logs_per_model_rates(swept):
    *_, client, exp = swept
    runs = client.search_runs([exp.experiment_id], filter_string="tags.`impostor.kind` = 'experiment'")
    assert sorted(r.data.tags["impostor.mode"] for r in runs) == ["cross_play", "cross_play", "homogeneous",
                                                                  "homogeneous", "team_blind"]
    for r in runs:
        t, p, m = r.data.tags, r.data.params, r.data.metrics
        mode = t["impostor.mode"]
        if mode == "homogeneous":
            want_imp = want_maj = t["impostor.model.all"]
        elif mode == "cross_play":
            want_imp, want_maj = t["impostor.model.impostor"], t["impostor.model.majority"]
        else:  # the impostor's team alternates: both team models play both sides
            want_imp = want_maj = ", ".join(sorted({t["impostor.model.team_a"], t["impostor.model.team_b"]}))
        assert t["impostor.impostor_model"] == p["impostor_model"] == want_imp, mode
        assert t["impostor.majority_model"] == p["majority_model"] == want_maj, mode
        # per-model metrics: the games each model played as impostor add up to the run's games
        per_model = {k.split("/", 1)[1]: v for k, v in m.items() if k.startswith("impostor_games/")}
        assert sum(per_model.values()) == m["games_completed"] == 2
        assert set(per_model) <= set(MODELS) and set(want_imp.split(", ")) <= set(per_model)
        won = sum(m.get(f"impostor_win_rate/{k}", 0) * n for k, n in per_model.items())
        assert won == pytest.approx(m["impostor_win_rate"] * 2)
        seats = {k.split("/", 1)[1]: v for k, v in m.items() if k.startswith("majority_seats/")}
        assert sum(seats.values()) == 6


def test_printed_addresses_open_views_of_the_experiment_runs(swept):
    _, _, _, r, client, exp = swept
    urls = re.findall(r"http://127\.0\.0\.1:5000/#/experiments/\S+", r.stderr)
    keys = [u.split("viewStateShareKey=")[1] for u in urls]
    assert keys == ["impostor-runs", "impostor-by-model"]
    assert "mlflow ui --backend-store-uri" in r.stderr
    tags = client.get_experiment(exp.experiment_id).tags
    runs_view = json.loads(tags["mlflow.sharedViewState.impostor-runs"])
    by_model = json.loads(tags["mlflow.sharedViewState.impostor-by-model"])
    assert runs_view["groupBy"] is None and by_model["groupBy"] is None
    for col in ("tags.`impostor.impostor_model`", "metrics.`impostor_win_rate`", "metrics.`detection_accuracy`"):
        assert col in runs_view["selectedColumns"]
    # the view's filter keeps the sweep's parent run (and any report run) out
    shown = client.search_runs([exp.experiment_id], filter_string=runs_view["searchFilter"])
    everything = client.search_runs([exp.experiment_id])
    assert len(shown) == 5 and len(everything) == 6 + len(MODELS)
    assert {r.data.tags["impostor.kind"] for r in everything} == {"experiment", "sweep", "model_summary"}


def test_one_row_per_model_with_rates_pooled_over_games(swept):
    """The by-model view: one run per model, its impostor and majority win pooled over the games
    of every mode (checked against the experiment runs' per-model rates weighted by their counts)."""
    _, _, _, r, client, exp = swept
    view = json.loads(client.get_experiment(exp.experiment_id).tags["mlflow.sharedViewState.impostor-by-model"])
    rows = client.search_runs([exp.experiment_id], filter_string=view["searchFilter"])
    assert sorted(x.data.tags["impostor.model"] for x in rows) == sorted(MODELS)
    runs = client.search_runs([exp.experiment_id], filter_string="tags.`impostor.kind` = 'experiment'")
    for row in rows:
        model, m = row.data.tags["impostor.model"], row.data.metrics
        games = sum(x.data.metrics.get(f"impostor_games/{model}", 0) for x in runs)
        wins = sum(x.data.metrics.get(f"impostor_win_rate/{model}", 0) * x.data.metrics.get(f"impostor_games/{model}", 0)
                   for x in runs)
        seats = sum(x.data.metrics.get(f"majority_seats/{model}", 0) for x in runs)
        maj = sum(x.data.metrics.get(f"majority_win_rate/{model}", 0) * x.data.metrics.get(f"majority_seats/{model}", 0)
                  for x in runs)
        assert m["impostor_games"] == games and m["majority_seats"] == seats
        assert m["impostor_win_pct"] == round(100 * wins / games, 1) and m["majority_win_pct"] == round(100 * maj / seats, 1)
        assert 0 <= m["detection_pct"] <= 100 and m["detection_pct"] == round(m["detection_pct"], 1)
        for col in view["selectedColumns"]:
            key = col.split("`")[1]
            assert key in m or key in row.data.tags, col


def test_resumed_sweep_estimates_only_what_it_will_play(swept):
    tmp, cfg, env, *_ = swept
    r = run_cli(["sweep", str(cfg), "--display", "none"], cwd=tmp, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "5 of 5 experiments already finished; 0 left to play (0 games)" in r.stdout
    total = next(ln for ln in r.stdout.splitlines() if ln.strip().startswith("total"))
    assert total.split()[1] == "0"  # no call estimated


def test_view_tag_written_again_after_a_concurrent_first_write_fails():
    """Two shards writing the view at once: on PostgreSQL the second insert fails (unique
    violation); the view is still written (the retry updates the row) and the address returned."""
    from impostor_bench.tracking.store import runs_view

    class RacingClient:
        def __init__(self, failures: int) -> None:
            self.failures, self.tags = failures, {}

        def set_experiment_tag(self, exp_id, key, value):
            if self.failures:
                self.failures -= 1
                raise RuntimeError("duplicate key value violates unique constraint \"experiment_tag_pk\"")
            self.tags[key] = value

    client = RacingClient(failures=1)
    url = runs_view(client, "7")
    assert url.endswith("viewStateShareKey=impostor-runs")
    assert json.loads(client.tags["mlflow.sharedViewState.impostor-runs"])["groupBy"] is None
    with pytest.raises(RuntimeError, match="unique constraint"):  # a store that keeps failing is not hidden
        runs_view(RacingClient(failures=5), "7")
