"""Sweep configs, planning, the resume guard, and kill-and-resume with Inspect's eval_set."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from impostor_bench.core.errors import ImpostorError
from impostor_bench.sweep import experiments, load_config, plan

from test_sweep_helpers import REPO, cli_env, impostor_cmd, run_cli, write_config


# ------------------------------------------------------------------ planning


@pytest.mark.slow
def test_paper_dry_run_prints_756_experiments_and_90720_games(tmp_path):
    keys = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY")
    env = {k: v for k, v in cli_env().items() if k not in keys}
    # without keys (how one plans before having them): the plan with a dollar figure for every
    # model, then what a real run would refuse (each missing variable), exit 0
    r = run_cli(["sweep", str(REPO / "configs/paper.yaml"), "--dry-run"], cwd=REPO, env=env, timeout=120)
    assert r.returncode == 0 and "756 experiments" in r.stdout, r.stderr
    refusals = r.stdout[r.stdout.index("a real run here would refuse"):]
    assert all(f"export {k}=" in refusals for k in keys) and "Traceback" not in r.stderr
    lines = r.stdout.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("estimated cost"))
    rows = lines[head + 2: head + 2 + 9]  # the nine models of the paper
    assert len(rows) == 9 and all("$" in ln and "unknown" not in ln for ln in rows), rows
    assert "$" in lines[head + 11] and lines[head + 11].strip().startswith("total")
    # with keys (not checked against the API: creating the client needs none of the network)
    r = run_cli(["sweep", str(REPO / "configs/paper.yaml"), "--dry-run"], cwd=REPO,
                env=env | {k: "sk-test-not-a-real-key" for k in keys}, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "756 experiments" in r.stdout
    assert "90,720 games" in r.stdout
    # per difficulty: 9 homogeneous + 72 cross-play + 3 x 36 team experiments of 120 games (Table 6 cell sizes)
    for line in ("easy       homogeneous                 9     1,080", "easy       cross_play                 72     8,640",
                 "expert     team_semi_aware            36     4,320"):
        assert line in r.stdout
    assert not (REPO / "logs/sweeps/paper").exists() or not any((REPO / "logs/sweeps/paper").iterdir())


def test_paper_design_counts():
    cfg = load_config(REPO / "configs/paper.yaml")
    exps = experiments(cfg)
    assert len(cfg.models) == 9 and len(exps) == 756
    assert sum(e.n_games for e in exps) == 90_720
    cross = {dict(e.roles)["impostor"] + ">" + dict(e.roles)["majority"] for e in exps
             if e.mode == "cross_play" and e.difficulty == "easy"}
    assert len(cross) == 72  # ordered pairs
    team = {frozenset(dict(e.roles).values()) for e in exps if e.mode == "team_aware" and e.difficulty == "hard"}
    assert len(team) == 36  # unordered pairs
    assert len({e.label for e in exps}) == 756


@pytest.mark.parametrize("n_models", [2, 3, 9])
def test_planned_experiments_counts_what_the_plan_lists(tmp_path, n_models):
    from impostor_bench.core.records import MODES
    from impostor_bench.sweep.config import planned_experiments

    p = write_config(tmp_path / "c.yaml", models=[f"testplayer/m{i}" for i in range(n_models)], modes=list(MODES),
                     difficulties=["easy", "hard"], seeds=[0, 1, 2])
    cfg = load_config(p)
    assert planned_experiments(cfg) == len(experiments(cfg))


def test_a_plan_over_the_limit_is_refused_before_planning(tmp_path):
    """Issue 42 (2): 2,000 models in cross_play (3,998,000 experiments) ran for minutes in
    --dry-run; now one line with the count and the fix, in seconds. Duplicates among 20,000
    models are found with a Counter (``v.count`` per entry was quadratic: 9.6 s)."""
    models = [f"testplayer/m{i}" for i in range(2000)]
    p = write_config(tmp_path / "big.yaml", models=models, modes=["cross_play"])
    t0 = time.perf_counter()
    r = run_cli(["sweep", str(p), "--dry-run"], cwd=tmp_path, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    [line] = [ln for ln in r.stderr.splitlines() if ": error:" in ln]
    assert "3,998,000 experiments" in line and "100,000" in line and "fix:" in line, line
    assert time.perf_counter() - t0 < 60  # the process start included; it was > 180 s
    from impostor_bench.sweep.config import SweepConfig

    many = [f"testplayer/m{i}" for i in range(20_000)]
    with pytest.raises(ValueError, match="duplicate entries: testplayer/m7, testplayer/m9;"):
        SweepConfig._unique(many + ["testplayer/m9", "testplayer/m7"])
    assert SweepConfig._unique(many) == many


def test_shards_partition_the_experiments():
    every = {e.label for e in plan(REPO / "configs/paper.yaml").experiments}
    parts = [{e.label for e in plan(REPO / "configs/paper.yaml", shard=f"{i}/4").experiments} for i in range(1, 5)]
    assert sum(len(p) for p in parts) == len(every) == 756
    assert set().union(*parts) == every
    assert {len(p) for p in parts} == {189}
    with pytest.raises(ImpostorError, match="--shard"):
        plan(REPO / "configs/paper.yaml", shard="5/4")


def test_smoke_config_is_small_and_offline():
    pl = plan(REPO / "configs/smoke.yaml")
    assert 1 < len(pl.experiments) <= 10 and pl.games <= 40
    assert all(m.startswith("bot/") for m in pl.config.models)


@pytest.mark.parametrize("change, field, fix", [
    ({"games_per_experiment": 0}, "games_per_experiment", "fix"),
    ({"modes": ["homogeneous", "crossplay"]}, "modes[1]", "fix"),
    ({"concurrency": {"max_samples": "many"}}, "concurrency.max_samples", "fix"),
    ({"colour": "red"}, "colour", "unknown field"),
    ({"models": ["testplayer/a"]}, "(top level)", "at least two models"),
    ({"models": ["testplayer/a", "testplayer/a"]}, "models", "duplicate"),
])
def test_invalid_config_names_file_field_and_fix(tmp_path, change, field, fix):
    p = write_config(tmp_path / "bad.yaml", **change)
    with pytest.raises(ImpostorError) as ei:
        load_config(p)
    msg = str(ei.value)
    assert str(p) in msg and f"field '{field}'" in msg and fix in msg, msg


def test_invalid_config_cli_exit_2(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("name: x\nmodels: [a/b, c/d]\n")  # games_per_experiment missing
    r = run_cli(["sweep", str(p), "--dry-run"], cwd=tmp_path, timeout=120)
    assert r.returncode == 2
    assert "field 'games_per_experiment'" in r.stderr and "Traceback" not in r.stderr


# ------------------------------------------------------------------ running


def _games(log_dir: Path) -> pd.DataFrame:
    from impostor_bench.export import tables_from_logs

    t = tables_from_logs(log_dir)
    assert not t.errors and not t.missing
    return t


def test_changed_config_into_same_log_dir_is_refused(tmp_path, monkeypatch):
    from impostor_bench.commands.sweep import run_sweep

    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    cfg = write_config(tmp_path / "s.yaml", modes=["homogeneous"], models=["testplayer/a"])
    log_dir = tmp_path / "logs/x"
    assert run_sweep(str(cfg), log_dir=str(log_dir), display="none") == 0
    assert len(_games(log_dir).games) == 2
    # concurrency may change between resumptions; nothing re-runs
    write_config(cfg, modes=["homogeneous"], models=["testplayer/a"], concurrency={"max_samples": 1})
    assert run_sweep(str(cfg), log_dir=str(log_dir), display="none") == 0
    # games may not
    write_config(cfg, modes=["homogeneous"], models=["testplayer/a"], games_per_experiment=3)
    with pytest.raises(ImpostorError) as ei:
        run_sweep(str(cfg), log_dir=str(log_dir), display="none")
    msg = str(ei.value)
    assert "different config" in msg and "games_per_experiment: 2 -> 3" in msg and "--log-dir" in msg
    # a directory of foreign logs is refused too
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "x.eval").write_bytes(b"PK")
    with pytest.raises(ImpostorError, match="no `impostor sweep` wrote"):
        run_sweep(str(cfg), log_dir=str(foreign), display="none")


def _progress_votes(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.mark.slow
def test_kill_mid_sweep_and_resume_gives_the_uninterrupted_game_set(tmp_path, monkeypatch):
    """SIGKILL a running sweep, re-run it: same game ids and outcomes as a clean run; finished games reused."""
    from impostor_bench.commands.sweep import run_sweep

    fields = dict(modes=["homogeneous"], models=["testplayer/a", "testplayer/b"], games_per_experiment=8,
                  concurrency={"max_connections": 4, "max_samples": 2, "max_tasks": 2},
                  retries={"attempts": 2, "wait": 0})
    # reference: uninterrupted, in-process, untracked
    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    ref_cfg = write_config(tmp_path / "ref.yaml", **fields)
    assert run_sweep(str(ref_cfg), log_dir=str(tmp_path / "ref"), display="none") == 0
    ref = _games(tmp_path / "ref")
    assert len(ref.games) == 16

    # interrupted: a slow subprocess (tracked in the default ./mlruns SQLite store), killed mid-way
    work = tmp_path / "work"
    work.mkdir()
    cfg = write_config(work / "sweep.yaml", **fields)
    progress = work / "progress.txt"
    env = cli_env(IMPOSTOR_TEST_DELAY="0.15", IMPOSTOR_TEST_PROGRESS=str(progress))
    env.pop("IMPOSTOR_MLFLOW", None)
    log_dir = work / "logs"
    proc = subprocess.Popen(impostor_cmd() + ["sweep", str(cfg), "--log-dir", str(log_dir), "--display", "plain"],
                            cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    total_votes = 16 * 4
    deadline = time.time() + 180
    while _progress_votes(progress) < total_votes * 0.4:
        assert proc.poll() is None, f"sweep ended before the kill: {proc.stderr.read().decode()[-2000:]}"
        assert time.time() < deadline, "sweep made no progress"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = time.time()
    votes_at_kill = _progress_votes(progress)
    assert votes_at_kill < total_votes

    # resume: same command
    env["IMPOSTOR_TEST_DELAY"] = "0"
    r = subprocess.run(impostor_cmd() + ["sweep", str(cfg), "--log-dir", str(log_dir), "--display", "none"],
                       cwd=work, env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "2/2 experiments complete, 16/16 games" in r.stdout

    got = _games(log_dir)
    cols = [c for c in got.games.columns]
    a = got.games.sort_values("game_id").reset_index(drop=True)
    b = ref.games.sort_values("game_id").reset_index(drop=True)
    assert list(a["game_id"]) == list(b["game_id"])  # no game lost, none twice
    pd.testing.assert_frame_equal(a[cols], b[cols])  # same outcomes
    pa = got.players.sort_values(["game_id", "seat"]).reset_index(drop=True)
    pb = ref.players.sort_values(["game_id", "seat"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(pa, pb)

    # games finished before the kill were reused (started before the kill), the rest ran after it
    from inspect_ai.log import read_eval_log

    from impostor_bench.export import find_logs

    final = [read_eval_log(p, exclude_fields={"events", "messages"}) for p in find_logs(log_dir)]
    final = [lg for lg in final if lg.status == "success"]
    assert len(final) == 2
    starts = [pd.Timestamp(s.started_at).timestamp() for lg in final for s in lg.samples]
    ids = [f"{lg.eval.task_id}/{s.id}" for lg in final for s in lg.samples]
    assert len(ids) == len(set(ids)) == 16
    reused = sum(t < killed_at for t in starts)
    assert 1 <= reused < 16, f"{reused} games reused from the killed run"

    # MLflow: one run per experiment (resumed, not duplicated) under one sweep run
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{work}/mlruns/mlflow.db")
    exp = client.get_experiment_by_name("t")
    runs = client.search_runs([exp.experiment_id])
    kinds = sorted(r.data.tags.get("impostor.kind") for r in runs)
    assert kinds.count("model_summary") >= 1  # one pooled run per model at the sweep's end (issue 44)
    runs = [r for r in runs if r.data.tags["impostor.kind"] != "model_summary"]
    kinds = [k for k in kinds if k != "model_summary"]
    assert kinds == ["experiment", "experiment", "sweep"]
    parent = next(r for r in runs if r.data.tags["impostor.kind"] == "sweep")
    for run in runs:
        if run.data.tags["impostor.kind"] == "experiment":
            assert run.info.status == "FINISHED"
            assert run.data.metrics["games_completed"] == 8
            assert run.data.tags["mlflow.parentRunId"] == parent.info.run_id
    assert parent.info.status == "FINISHED" and parent.data.metrics["games_completed"] == 16
