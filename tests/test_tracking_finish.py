"""The end of an experiment's run builds its tables from the games seen ending in the process
(impostor_bench.tracking.hooks.with_finished_samples), not by reading the whole log back from disk
(~1/6 of a sweep shard's CPU, issue 18). Same tables either way; the log is read whenever the
games seen are not exactly the log's (a resumed eval reuses games that end in no hook)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from test_tracking import fresh, tracked  # noqa: F401 - the fixture


def test_runs_tables_from_finished_games_equal_the_logs(tracked, tmp_path, monkeypatch):  # noqa: F811
    from inspect_ai import eval_set
    from mlflow.tracking import MlflowClient

    from impostor_bench.export import read_log, tables_from_log
    from impostor_bench.tracking import hooks
    from impostor_bench.tasks.impostor import impostor

    monkeypatch.chdir(tmp_path)
    reads = []
    monkeypatch.setattr(hooks, "read_log", lambda p: reads.append(p) or read_log(p))
    tasks = [fresh(impostor, mode="homogeneous", n_games=6, seed=3),
             fresh(impostor, mode="homogeneous", difficulty="hard", n_games=5, seed=4)]
    ok, logs = eval_set(tasks, log_dir=str(tmp_path / "logs"), model="bot/random", max_tasks=2, display="none")
    assert ok and len(logs) == 2 and not any(log.samples for log in logs)  # eval_set hands over headers
    assert reads == []  # neither run read its log back
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    exp = client.get_experiment_by_name("impostor")
    runs = {r.data.tags["impostor.eval_id"]: r for r in client.search_runs([exp.experiment_id])}
    assert len(runs) == 2
    for log in logs:
        run = runs[log.eval.eval_id]
        assert run.info.status == "FINISHED"
        art = Path(client.download_artifacts(run.info.run_id, "tables", str(tmp_path / run.info.run_id)))
        from_disk = tables_from_log(read_log(log.location))
        for name, frame in (("games", from_disk.games), ("players", from_disk.players)):
            logged = pd.read_parquet(art / f"{name}.parquet")
            pd.testing.assert_frame_equal(logged, frame.reset_index(drop=True), check_dtype=False)
        assert len(from_disk.games) == len(log.eval.dataset.sample_ids)


def test_games_not_exactly_the_logs_mean_reading_the_log(tmp_path, monkeypatch):
    from inspect_ai import eval

    from impostor_bench.tracking.hooks import with_finished_samples
    from impostor_bench.tasks.impostor import impostor

    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    log = eval(fresh(impostor, n_games=3), model="bot/random", log_dir=str(tmp_path), display="none")[0]
    finished = {(s.id, s.epoch): s for s in log.samples}
    header = log.model_copy(update={"samples": None})
    whole = with_finished_samples(header, finished)
    assert [s.id for s in whole.samples] == list(log.eval.dataset.sample_ids)
    some = dict(list(finished.items())[:2])  # a resumed eval: one game came from an earlier attempt
    assert with_finished_samples(header, some) is None
    assert with_finished_samples(header.model_copy(update={"status": "error"}), finished) is None
    stranger = dict(some) | {("not-a-game", 1): log.samples[0]}
    assert with_finished_samples(header, stranger) is None


def test_sync_of_many_logs_looks_runs_up_in_one_paged_search(tracked, tmp_path, monkeypatch, capsys):  # noqa: F811
    """A shard's end syncs hundreds of logs: the experiment's runs are fetched page by page once,
    not searched for once per log; the result is the same: one run per experiment, idempotent."""
    from mlflow.tracking import MlflowClient

    from impostor_bench.cli import main as cli_main
    from impostor_bench.commands.sweep import run_sweep
    from impostor_bench.tracking import logrun, sync

    from test_sweep_helpers import write_config

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")  # the sweep untracked: sync logs it all
    cfg = write_config(tmp_path / "sweep.yaml", name="many", modes=["homogeneous", "cross_play"], games_per_experiment=2)
    assert run_sweep(str(cfg), log_dir=str(tmp_path / "logs"), display="none") == 0
    monkeypatch.delenv("IMPOSTOR_MLFLOW")
    monkeypatch.setattr(sync, "PREFETCH_AT", 1)
    monkeypatch.setattr(sync, "PAGE", 2)  # several pages
    searched = []
    monkeypatch.setattr(sync, "find_run", lambda *a: searched.append(a) or logrun.find_run(*a))
    assert cli_main(["sync", str(tmp_path / "logs")]) == 0
    first = capsys.readouterr().out
    assert cli_main(["sync", str(tmp_path / "logs")]) == 0  # idempotent, through the prefetched runs
    second = capsys.readouterr().out
    assert searched == []
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    exp = client.get_experiment_by_name("many")
    runs = [r for r in client.search_runs([exp.experiment_id]) if r.data.tags.get("impostor.kind") == "experiment"]
    n = len(runs)
    assert n >= 3 and len({r.data.tags["impostor.run_key"] for r in runs}) == n
    assert f"synced {n} eval(s)" in first and f"synced 0 eval(s), {n} already up to date" in second


def test_plain_eval_run_does_not_read_its_log_back(tracked, tmp_path, monkeypatch):  # noqa: F811
    """``eval()`` hands the end-of-task hook a log whose samples load lazily from disk: the run is
    finished from the games seen ending (no full read of the log, events and all), and its tables
    are the log's."""
    import inspect_ai.log._file as log_file
    from inspect_ai import eval
    from mlflow.tracking import MlflowClient

    from impostor_bench.export import read_log, tables_from_log
    from impostor_bench.tasks.impostor import impostor

    monkeypatch.chdir(tmp_path)
    full_reads = []
    original = log_file.read_eval_log

    def counting(*args, **kwargs):
        if not kwargs.get("header_only", False):
            full_reads.append(args[0] if args else kwargs.get("log_file"))
        return original(*args, **kwargs)

    monkeypatch.setattr(log_file, "read_eval_log", counting)
    log = eval(fresh(impostor, n_games=4, seed=2), model="bot/random", log_dir=str(tmp_path / "logs"),
               display="none")[0]
    assert full_reads == []  # checked before anything here touches log.samples
    monkeypatch.setattr(log_file, "read_eval_log", original)
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlruns' / 'mlflow.db'}")
    exp = client.get_experiment_by_name("impostor")
    (run,) = client.search_runs([exp.experiment_id])
    assert run.info.status == "FINISHED" and run.data.tags.get("impostor.traces_logged") == "1"
    art = Path(client.download_artifacts(run.info.run_id, "tables", str(tmp_path / "art")))
    from_disk = tables_from_log(read_log(log.location))
    assert len(from_disk.games) == 4
    for name, frame in (("games", from_disk.games), ("players", from_disk.players)):
        pd.testing.assert_frame_equal(pd.read_parquet(art / f"{name}.parquet"), frame.reset_index(drop=True),
                                      check_dtype=False)


def test_word_pairs_dataset_follows_the_file_it_was_built_from(tmp_path):
    """The run's word-pairs dataset is built once per file content: an edited file is built again."""
    import json

    from impostor_bench.tracking.logrun import _word_pairs_dataset

    full = json.loads((Path(__file__).resolve().parents[1] / "configs" / "word_pairs.json").read_text())
    p = tmp_path / "pairs.json"
    p.write_text(json.dumps(full))
    n = sum(len(v) for v in full.values())
    assert json.loads(_word_pairs_dataset(p, "").profile)["num_rows"] == n
    p.write_text(json.dumps({k: v[:3] for k, v in full.items()}))
    assert json.loads(_word_pairs_dataset(p, "").profile)["num_rows"] == 3 * len(full)


def test_a_run_created_or_found_again_logs_its_word_pairs_once(tmp_path, monkeypatch):
    """``open_run`` says whether it made the run; ``finish_run`` then skips reading a new run back
    for its dataset inputs, and a run found again (a second sync) does not get the dataset twice."""
    import contextvars

    from inspect_ai import eval as inspect_eval
    from mlflow.tracking import MlflowClient

    from impostor_bench.tracking.logrun import Context, finish_run, open_run
    from impostor_bench.tracking.store import ensure_experiment, get_client
    from impostor_bench.tasks.impostor import impostor

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    monkeypatch.setenv("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    [log] = inspect_eval(contextvars.Context().run(impostor, n_games=2), model="bot/random", log_dir="logs",
                         display="none")
    client, uri = get_client(f"sqlite:///{tmp_path / 'mlflow.db'}")
    exp_id = ensure_experiment(client, "again", uri)
    reads = []
    get_run = MlflowClient.get_run
    monkeypatch.setattr(MlflowClient, "get_run", lambda self, rid: reads.append(rid) or get_run(self, rid))
    first = open_run(client, exp_id, log.eval, Context(), source="test")
    assert first.created
    finish_run(client, first.run_id, log, Context(), created=first.created)
    new_run_reads = len(reads)
    again = open_run(client, exp_id, log.eval, Context(), source="test")
    assert again == (first.run_id, False)
    reads.clear()
    finish_run(client, again.run_id, log, Context(), created=again.created)
    assert len(reads) == new_run_reads + 1  # only the run found again is read back to look for its dataset
    [ds] = get_run(client, first.run_id).inputs.dataset_inputs
    assert ds.dataset.name == "word_pairs"


def test_a_run_whose_eval_only_lost_a_game_names_the_games_error(tmp_path, monkeypatch):
    """An errored game does not stop the eval (the task's ``continue_on_fail``, issue 42), so the
    log ends ``error`` without an error of its own: the run's error tag is the first errored
    game's (before, the FAILED run said nothing of why)."""
    import contextvars

    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import EvalError

    from impostor_bench.tracking.logrun import TAG, Context, finish_run, open_run
    from impostor_bench.tracking.store import ensure_experiment, get_client
    from impostor_bench.tasks.impostor import impostor

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    monkeypatch.setenv("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    [log] = inspect_eval(contextvars.Context().run(impostor, n_games=2), model="bot/random", log_dir="logs",
                         display="none")
    assert log.eval.config.continue_on_fail is True and log.error is None
    message = "GameTimeLimitError('game g00000 stopped unfinished by its time limit of 6 s')"
    log.status = "error"
    log.samples[1].error = EvalError(message=message, traceback="", traceback_ansi="")
    log.samples[1].scores = None
    client, uri = get_client(f"sqlite:///{tmp_path / 'mlflow.db'}")
    run = open_run(client, ensure_experiment(client, "lost", uri), log.eval, Context(), source="test")
    finish_run(client, run.run_id, log, Context(), created=run.created)
    got = client.get_run(run.run_id)
    assert got.info.status == "FAILED" and got.data.tags[f"{TAG}error"] == message
    assert got.data.tags[f"{TAG}games_completed"] == "1"
