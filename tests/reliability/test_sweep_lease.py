"""The same sweep launched twice at once plays each game once (``impostor_bench.sweep.lease``).

Two terminals, one config: both launches played every game (double the API cost), both exited 1
("10 duplicate game record(s)", "4/2 experiments complete"), MLflow held 4 experiment runs for 2,
and every re-run exited 1 "unfinished" in seconds, for ever.  ``impostor export`` merged the
copies while ``impostor report --experiment`` refused them.  Now a launch leases its experiments
(a second one is refused in one line), a lease dies with its process, a re-run over the copies
an earlier double launch left completes, and export and report count each game once, the same way.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from impostor_bench.core.errors import ImpostorError
from impostor_bench.sweep.lease import LEASE_DIR, experiment_leases

REPO = Path(__file__).resolve().parents[2]
CONFIG = """name: twice
models: [bot/random, bot/embedding]
modes: [homogeneous]
difficulties: [easy]
games_per_experiment: 3
seeds: [0]
retries: {attempts: 1, wait: 0}
tracking: {experiment: twice}
"""


def test_a_second_holder_is_refused_in_one_line(tmp_path):
    with experiment_leases(tmp_path, ["exp-a", "exp-b"], "s"):
        with pytest.raises(ImpostorError) as err:
            with experiment_leases(tmp_path, ["exp-b", "exp-c"], "s"):
                pass
        line = str(err.value)
        assert "\n" not in line and f"pid {os.getpid()}" in line and "exp-b" in line and "fix:" in line
        with experiment_leases(tmp_path, ["exp-c"], "s"):  # an experiment nobody holds
            pass
    with experiment_leases(tmp_path, ["exp-a", "exp-b"], "s"):  # released at the end of the block
        pass
    assert len(list((tmp_path / LEASE_DIR).iterdir())) == 3


def test_a_lease_dies_with_its_process(tmp_path):
    """kill -9 leaves no lease behind: nothing to clean up before the same command resumes."""
    code = ("import sys, time; from pathlib import Path; from impostor_bench.sweep.lease import experiment_leases\n"
            "with experiment_leases(Path(sys.argv[1]), ['exp-a'], 's'):\n"
            "    print('held', flush=True); time.sleep(300)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=str(REPO)))
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(ImpostorError, match=f"pid {holder.pid}"):
            with experiment_leases(tmp_path, ["exp-a"], "s"):
                pass
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    with experiment_leases(tmp_path, ["exp-a"], "s"):
        pass


def _impostor(*args: str, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "impostor_bench.cli", *args], cwd=cwd, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=str(REPO), IMPOSTOR_MLFLOW="1"))


def _experiment_runs(work: Path) -> int:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{work}/mlruns/mlflow.db")
    exp = client.get_experiment_by_name("twice")
    return len(client.search_runs([exp.experiment_id], filter_string="tags.`impostor.kind` = 'experiment'"))


@pytest.mark.slow
def test_two_launches_at_once_play_each_game_once(tmp_path):
    (tmp_path / "s.yaml").write_text(CONFIG)
    procs = [_impostor("sweep", "s.yaml", "--log-dir", "L", cwd=tmp_path) for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 2], outs
    refused = next(err for p, (_, err) in zip(procs, outs) if p.returncode == 2)
    assert [line for line in refused.splitlines() if line.strip()] == [
        next(line for line in refused.splitlines() if "already being played" in line)]
    assert len(list((tmp_path / "L").glob("*.eval"))) == 2 and _experiment_runs(tmp_path) == 2
    r = subprocess.run([sys.executable, "-m", "impostor_bench.cli", "export", "--logs", "L", "--out", "E"],
                       cwd=tmp_path, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert r.returncode == 0 and "duplicate" not in r.stdout, r.stdout + r.stderr
    assert len(pd.read_parquet(tmp_path / "E" / "games.parquet")) == 6


@pytest.mark.slow
def test_a_rerun_over_a_double_launch_completes_and_export_and_report_agree(tmp_path, monkeypatch):
    """The state a double launch left (before leases): two logs per experiment with different task
    ids, two MLflow runs holding the same games.  Made here by playing the sweep into two log dirs
    (one store) and putting both sets of logs in one.  The re-run finishes (exit 0, 2/2), and
    ``impostor export --experiment`` and the report's MLflow reader both count 6 games."""
    (tmp_path / "s.yaml").write_text(CONFIG)
    for d in ("L", "L2"):
        p = _impostor("sweep", "s.yaml", "--log-dir", d, cwd=tmp_path)
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, out + err
    for log in (tmp_path / "L2").glob("*.eval"):
        shutil.copy(log, tmp_path / "L" / log.name)
    assert len(list((tmp_path / "L").glob("*.eval"))) == 4 and _experiment_runs(tmp_path) == 4
    t0 = time.time()
    p = _impostor("sweep", "s.yaml", "--log-dir", "L", cwd=tmp_path)
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, out[-2000:] + err[-2000:]
    assert "2/2 experiments complete, 6/6 games" in out and "unfinished" not in out
    assert time.time() - t0 < 300
    r = subprocess.run([sys.executable, "-m", "impostor_bench.cli", "export", "--experiment", "twice", "--out", "E"],
                       cwd=tmp_path, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "6 duplicate game record(s)" in r.stdout
    exported = pd.read_parquet(tmp_path / "E" / "games.parquet")
    from impostor_bench.commands._source import load_from_mlflow

    monkeypatch.chdir(tmp_path)
    data = load_from_mlflow("twice", f"sqlite:///{tmp_path}/mlruns/mlflow.db")
    assert sorted(data.games["game_id"].astype(str)) == sorted(exported["game_id"].astype(str))
    assert len(exported) == 6 and any("6 copy(ies)" in n for n in data.notes)
    # the same copy of each game: the run that ended last
    assert (data.games.set_index(data.games["game_id"].astype(str))["winner"].astype(str).sort_index().tolist()
            == exported.set_index("game_id")["winner"].astype(str).sort_index().tolist())
