"""Reading commands never write: export/report --experiment from a folder without a store."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _run(cwd, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    return subprocess.run([sys.executable, "-m", "impostor_bench.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def _tree(root) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.slow
@pytest.mark.parametrize("command", ["export", "report"])
@pytest.mark.parametrize("uri", [None, "sqlite:///elsewhere/mlflow.db", "file:///nonexistent-impostor-store"])
def test_reading_an_absent_store_creates_nothing(tmp_path, command, uri):
    args = [command, "--experiment", "X", "--out", "out"] + (["--tracking-uri", uri] if uri else [])
    out = _run(tmp_path, *args)
    assert out.returncode != 0
    assert _tree(tmp_path) == [], "a reading command wrote into the folder"
    errors = [line for line in out.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and out.stderr.strip() == errors[0], out.stderr
    line = errors[0]
    assert "'X' not found" in line and "tracking URI" in line and "fix:" in line
    assert (uri or f"{tmp_path}/mlruns/mlflow.db") .split("///")[-1] in line
