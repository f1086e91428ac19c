"""A REAL single-node Slurm (Debian's slurm-wlm and munge, started here from a slurm.conf in a
temporary folder) runs the shipped array script (``impostor deploy print slurm``) as a 2-task
array of a bot sweep into the project's PostgreSQL-backed tracking server (the fixture of
tests/test_tracking_server.py, login on). Task 0 is requeued mid-run (``scontrol requeue``) and
resumes its shard: the export from the server holds every planned game once, with the same game
ids and outcomes as the equivalent plain ``--shard 1/2`` + ``--shard 2/2`` run, the experiment
logs finished before the requeue are not played again, and ``impostor report --experiment``
builds over the whole sweep.

Skipped, saying why, where slurm-wlm/munge are missing and cannot be installed (not root, no
apt-get, offline); scripts/install.sh installs them as root."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import yaml

from test_sweep_helpers import cli_env, free_port, impostor_cmd, run_cli
from test_tracking_server import server  # noqa: F401 - the PostgreSQL tracking server fixture

pytestmark = pytest.mark.slow
EXPERIMENT = "slurm-array"
DAEMONS = ("munged", "slurmctld", "slurmd")


def _slurm_or_skip() -> None:
    if all(shutil.which(d) for d in DAEMONS + ("sbatch", "scontrol")):
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.skip("slurm-wlm and munge are not installed, and apt-get is not usable here (not root); "
                    "scripts/install.sh installs them as root")
    r = subprocess.run("apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge",
                       shell=True, capture_output=True, text=True, timeout=900)
    if r.returncode:
        pytest.skip(f"apt-get install slurm-wlm munge failed (offline?): {r.stderr.strip()[-300:]}")


def _slurm_conf(root: Path, host: str) -> str:
    """One node that is also the controller; the node says it has 4 CPUs and 16 GB
    (config_overrides: not checked against the machine) so both tasks of the shipped script
    (2 CPUs, 4 GB each) run at once on any machine; proctrack/pgid: no cgroups in a container."""
    return f"""ClusterName=impostortest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={root}/munge.sock
CredType=cred/munge
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
JobRequeue=1
KillWait=10
MinJobAge=3600
NodeName={host} NodeAddr=127.0.0.1 CPUs=4 RealMemory=16000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


def _pid(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


@pytest.fixture(scope="module")
def slurm():
    """slurmctld + slurmd + munged of their own (own key, socket, ports, state) in a temporary
    folder; yields the environment the Slurm commands need (SLURM_CONF)."""
    _slurm_or_skip()
    if os.geteuid() != 0:
        pytest.skip("the single-node Slurm runs its daemons as root (SlurmUser=root); run as root")
    root = Path(tempfile.mkdtemp(prefix="impostor-slurm-"))
    os.chmod(root, 0o755)
    host = socket.gethostname().split(".")[0]
    for d in ("state", "spool"):
        (root / d).mkdir()
    (root / "munge.key").write_bytes(os.urandom(1024))
    os.chmod(root / "munge.key", 0o600)
    conf = root / "slurm.conf"
    conf.write_text(_slurm_conf(root, host))
    env = dict(os.environ, SLURM_CONF=str(conf))
    started: list[Path] = []
    try:
        r = subprocess.run(["munged", "--force", f"--socket={root}/munge.sock", f"--key-file={root}/munge.key",
                            f"--log-file={root}/munged.log", f"--pid-file={root}/munged.pid",
                            f"--seed-file={root}/munged.seed"], capture_output=True, text=True, timeout=30)
        if r.returncode:
            pytest.skip(f"munged does not start here: {r.stderr.strip()[-300:]}")
        started.append(root / "munged.pid")
        for cmd, pid in ((["slurmctld", "-i", "-f", str(conf)], "slurmctld.pid"),
                         (["slurmd", "-f", str(conf), "-N", host], "slurmd.pid")):
            r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
            assert r.returncode == 0, f"{cmd[0]} did not start: {r.stderr[-1000:]}"
            started.append(root / pid)
        deadline = time.time() + 60
        while True:
            state = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True, text=True).stdout.strip()
            if state == "idle":
                break
            assert time.time() < deadline, f"the node is {state!r}, not idle: {(root / 'slurmd.log').read_text()[-2000:]}"
            time.sleep(0.5)
        yield SimpleNamespace(env=env, root=root)
    finally:
        subprocess.run(["scancel", "--full", "--user", "root"], env=env, capture_output=True)
        for pid_file in reversed(started):  # daemons this fixture started, by their own pid files
            pid = _pid(pid_file)
            if pid:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        time.sleep(1)
        shutil.rmtree(root, ignore_errors=True)


def _config(path: Path, output_dir: Path, experiment: str) -> Path:
    cfg = {"name": "arr", "models": ["bot/random", "bot/embedding"], "modes": ["homogeneous", "cross_play", "team_blind"],
           "difficulties": ["easy"], "games_per_experiment": 40, "seeds": [0],
           # one experiment at a time per shard, so the requeue lands between "one finished" and "all finished"
           "concurrency": {"max_connections": 4, "max_samples": 8, "max_tasks": 1},
           "retries": {"attempts": 2, "wait": 0}, "output_dir": str(output_dir),
           "tracking": {"experiment": experiment}}
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def _scontrol(slurm, *args: str) -> str:
    r = subprocess.run(["scontrol", *args], env=slurm.env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, f"scontrol {' '.join(args)}: {r.stderr}"
    return r.stdout


def _state(slurm, task: str) -> str:
    return re.search(r"JobState=(\S+)", _scontrol(slurm, "show", "job", task))[1]


def _success_logs(log_dir: Path) -> dict[str, float]:
    """The finished experiment logs in ``log_dir`` and their modification times."""
    from inspect_ai.log import read_eval_log

    out = {}
    for p in sorted(log_dir.glob("*.eval")):
        try:
            if read_eval_log(str(p), header_only=True).status == "success":
                out[p.name] = p.stat().st_mtime
        except Exception:  # noqa: BLE001 - a log being written
            continue
    return out


def test_slurm_array_with_a_requeued_task_gives_every_game_once(slurm, server, tmp_path):  # noqa: F811
    from impostor_bench.export import tables_from_logs
    from impostor_bench.sweep import plan

    work = Path(tempfile.mkdtemp(prefix="impostor-slurm-work-"))  # the submit dir, readable by every task
    try:
        cfg = _config(work / "sweep.yaml", work / "logs", EXPERIMENT)
        total, n_exps = plan(cfg).games, len(plan(cfg).experiments)
        assert n_exps == 5 and total == 200
        r = run_cli(["deploy", "print", "slurm"], cwd=work)
        assert r.returncode == 0
        (work / "impostor-array.sbatch").write_text(r.stdout)
        # the login as the tracking server printed it, in a 0600 file the script sources
        login = "".join(line.strip() + "\n" for line in server.out.read_text().splitlines()
                        if line.strip().startswith("export MLFLOW_TRACKING_"))
        (work / "tracking.env").write_text(login)
        os.chmod(work / "tracking.env", 0o600)
        env = cli_env(SLURM_CONF=slurm.env["SLURM_CONF"], IMPOSTOR_TRACKING_ENV=str(work / "tracking.env"),
                      MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR="false")
        env["PATH"] = f"{Path(impostor_cmd()[0]).parent}{os.pathsep}{env['PATH']}"  # `impostor` in the tasks
        env.pop("IMPOSTOR_MLFLOW", None)  # conftest switches tracking off by default
        for k in ("SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD"):
            env.pop(k, None)
        sub = subprocess.run(["sbatch", "--parsable", "--array=0-1", f"--chdir={work}", "impostor-array.sbatch",
                              "sweep.yaml"], cwd=work, env=env, capture_output=True, text=True, timeout=60)
        assert sub.returncode == 0, sub.stderr
        job = sub.stdout.strip().split(";")[0]
        t0 = time.time()

        # requeue task 0 once its first experiment has finished and its second has started
        shard1 = work / "logs/arr/shard-1-of-2"
        deadline = time.time() + 300
        while not (len(_success_logs(shard1)) >= 1 and len(list(shard1.glob("*.eval"))) >= 2):
            assert _state(slurm, f"{job}_0") in ("PENDING", "RUNNING"), (work / f"impostor-{job}_0.log").read_text()
            assert time.time() < deadline, "task 0 made no progress"
            time.sleep(0.2)
        finished_before = _success_logs(shard1)
        assert len(finished_before) < 3, "task 0 finished its shard before the requeue: make the games longer"
        _scontrol(slurm, "requeue", f"{job}_0")
        print(f"\n[slurm-array] task 0 requeued after {time.time() - t0:.0f}s with "
              f"{len(finished_before)} of 3 experiments finished")
        deadline = time.time() + 120
        while _state(slurm, f"{job}_0") != "PENDING":  # Slurm holds a requeued task (BeginTime +2 min)
            assert time.time() < deadline, _scontrol(slurm, "show", "job", f"{job}_0")
            time.sleep(0.5)
        _scontrol(slurm, "update", f"JobId={job}_0", "StartTime=now")
        deadline = time.time() + 600
        while (states := {t: _state(slurm, f"{job}_{t}") for t in (0, 1)}) != {0: "COMPLETED", 1: "COMPLETED"}:
            assert not set(states.values()) & {"FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"}, (
                states, (work / f"impostor-{job}_0.log").read_text()[-3000:],
                (work / f"impostor-{job}_1.log").read_text()[-3000:])
            assert time.time() < deadline, states
            time.sleep(1)
        sweep_s = time.time() - t0
        log0, log1 = ((work / f"impostor-{job}_{t}.log").read_text() for t in (0, 1))
        # a log per task; task 0's holds both attempts (appended), each ran its shard from the array index
        assert "attempt 1," in log0 and "attempt 2," in log0 and "attempt 2," not in log1
        assert log0.count("shard 1/2 from SLURM_ARRAY_TASK_ID=0 of 0..1 (--shard auto)") == 2
        assert "shard 2/2 from SLURM_ARRAY_TASK_ID=1 of 0..1 (--shard auto)" in log1
        assert "resuming in " in log0.split("attempt 2,", 1)[1]
        # the experiments finished before the requeue were not played again: the same logs, untouched,
        # and no second finished log of the same experiment
        after = _success_logs(shard1)
        assert all(after.get(name) == mtime for name, mtime in finished_before.items()), (finished_before, after)
        assert len(after) == 3
        secret = server.login["MLFLOW_TRACKING_PASSWORD"]
        assert secret not in log0 + log1 + (slurm.root / "slurmctld.log").read_text()

        # export from the server: every planned game exactly once
        login_env = cli_env(**server.login)
        login_env.pop("IMPOSTOR_MLFLOW", None)
        r = run_cli(["export", "--experiment", EXPERIMENT, "--tracking-uri", server.uri, "--out", str(work / "exp")],
                    cwd=work, env=login_env)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        games = pd.read_parquet(work / "exp/games.parquet")
        assert len(games) == total and games["game_id"].is_unique

        # the equivalent plain run (--shard 1/2 and 2/2, no scheduler, no tracking): the same games
        plain_cfg = _config(work / "plain.yaml", work / "plain-logs", "unused")
        plain_env = cli_env(IMPOSTOR_MLFLOW="0")
        for i in (1, 2):
            r = run_cli(["sweep", str(plain_cfg), "--shard", f"{i}/2", "--display", "none"], cwd=work, env=plain_env,
                        timeout=600)
            assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        plain = tables_from_logs(work / "plain-logs/arr").games
        assert len(plain) == total
        cols = ["game_id", "experiment_id", "impostor_seat", "winner", "win_condition"]
        cols = [c for c in cols if c in games.columns and c in plain.columns]
        key = lambda g: g[cols].sort_values("game_id").reset_index(drop=True).astype(str)
        pd.testing.assert_frame_equal(key(games), key(plain))

        # the report builds over the whole sweep from the server
        r = run_cli(["report", "--experiment", EXPERIMENT, "--tracking-uri", server.uri, "--out", str(work / "report"),
                     "--bootstrap-reps", "100", "--permutation-reps", "100", "--no-figures"], cwd=work, env=login_env,
                    timeout=600)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        assert any((work / "report").rglob("*.csv"))
        print(f"[slurm-array] {total} games, {n_exps} experiments, 2 array tasks (one requeued): "
              f"array done in {sweep_s:.0f}s")
    finally:
        shutil.rmtree(work, ignore_errors=True)
