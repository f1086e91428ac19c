"""ruff and mypy, as configured in pyproject.toml, pass on the code (issue 31).

They run here so that scripts/test.sh (the README's test command, and CI's) enforces them;
a failure shows their own report.  mypy keeps its cache in .cache/mypy: a warm run
re-checks only what changed (docs/architecture.md, "Static checks").
"""

from __future__ import annotations

import pytest

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str, timeout: int) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    if "No module named" in r.stderr and args[0] in r.stderr:
        raise AssertionError(f"{args[0]} is not installed; fix: pip install -e '.[test]' (the test extra has it)")
    return r


def test_ruff_finds_nothing():
    r = _run("ruff", "check", "--no-cache", "--output-format", "concise", ".", timeout=300)
    assert r.returncode == 0, r.stdout[-8000:] + r.stderr[-2000:]


@pytest.mark.slow
def test_mypy_finds_nothing():
    r = _run("mypy", timeout=1200)  # the files and settings: [tool.mypy] in pyproject.toml
    assert r.returncode == 0, r.stdout[-8000:] + r.stderr[-2000:]
