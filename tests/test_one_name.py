"""One installed name: from the repository root, a top-level folder imported by its short name
(``import analysis``) would load its files a second time as other modules, with their own table
registry and classes; it is refused in one line naming the installed name (docs/architecture.md,
"One installed name")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["tasks", "solvers", "scorers", "analysis", "analysis.stats", "tasks.impostor"])
def test_a_folder_by_its_short_name_is_refused_in_one_line(name):
    folder = name.split(".")[0]
    r = subprocess.run([sys.executable, "-c", f"import {name}"], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1] == (
        f"ImportError: import impostor_bench.{folder}, not {folder}: the folder {folder}/ is the installed "
        f"package impostor_bench.{folder} and has no second name (docs/architecture.md)")


def test_the_installed_name_imports_from_the_repository_root():
    code = ("import importlib, impostor_bench.analysis as a, impostor_bench.tasks.impostor as t; "
            "print(a is importlib.import_module('impostor_bench.analysis'), t.__name__)")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["True", "impostor_bench.tasks.impostor"]
