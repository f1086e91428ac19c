"""Shards started together on one machine open the same new local SQLite store safely."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OPEN = """
import sys, time
from impostor_bench.tracking import store
if sys.argv[3] == "nolock":
    import contextlib
    store.sqlite_setup_lock = lambda uri: contextlib.nullcontext()
while time.time() < float(sys.argv[2]):
    time.sleep(0.001)
client, _ = store.get_client(sys.argv[1])
client.get_experiment_by_name("Default")
print("opened")
"""


def open_concurrently(uri: str, n: int, mode: str = "lock") -> list[subprocess.CompletedProcess]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    start = time.time() + 8  # past every child's imports: they open the store together
    procs = [subprocess.Popen([sys.executable, "-c", OPEN, uri, str(start), mode], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(n)]
    return [subprocess.CompletedProcess(p.args, p.wait(timeout=180), *p.communicate()) for p in procs]


@pytest.mark.slow
def test_processes_opening_a_new_sqlite_store_at_once_all_succeed(tmp_path):
    uri = f"sqlite:///{(tmp_path / 'mlruns' / 'mlflow.db').as_posix()}"
    results = open_concurrently(uri, 4)
    for r in results:
        assert r.returncode == 0 and "opened" in r.stdout, r.stderr[-2000:]


if __name__ == "__main__":  # the control, by hand (racy by nature): without the lock some opens fail
    import tempfile

    d = tempfile.mkdtemp()
    rs = open_concurrently(f"sqlite:///{d}/mlflow.db", 4, "nolock")
    print([r.returncode for r in rs], [r.stderr.strip().splitlines()[-1][:160] for r in rs if r.returncode])
