"""Collector settings applied when the task is built (in a fresh interpreter: they are process-wide)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROBE = """
import gc, json
before = gc.get_threshold()
from impostor_bench.tasks.impostor import impostor
impostor(n_games=2)
impostor(n_games=2)  # once per process: a second task does not freeze again
print(json.dumps({"before": before, "after": gc.get_threshold(), "frozen": gc.get_freeze_count()}))
"""


def _probe(env_value):
    env = {k: v for k, v in os.environ.items() if k != "IMPOSTOR_GC"}
    if env_value is not None:
        env["IMPOSTOR_GC"] = env_value
    return subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_building_the_task_freezes_the_heap_and_raises_thresholds():
    from impostor_bench.gc_tuning import THRESHOLDS

    proc = _probe(None)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["after"] == list(THRESHOLDS) != out["before"]
    assert out["frozen"] > 100_000  # Inspect, pydantic and the schedule are out of the collector's way


@pytest.mark.parametrize("value, expected", [("default", None), ("2000,5,5", [2000, 5, 5])])
def test_impostor_gc_overrides(value, expected):
    proc = _probe(value)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["after"] == (expected or out["before"])  # "default": the interpreter's own settings
    assert (out["frozen"] == 0) is (value == "default")


def test_bad_impostor_gc_is_one_clear_message():
    proc = _probe("lots")
    assert proc.returncode != 0
    assert "IMPOSTOR_GC='lots' is not valid" in proc.stderr and "fix:" in proc.stderr
