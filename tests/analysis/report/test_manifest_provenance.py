"""The report manifest's provenance: git commit of a checkout (or null), command line, tracking URI."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from impostor_bench.analysis.report.build import git_commit
from impostor_bench.cli import main


def test_git_commit_of_a_folder_that_is_no_checkout_is_none(tmp_path):
    assert git_commit(tmp_path) is None


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_git_commit_of_a_checkout(tmp_path):
    def git(*a):
        return subprocess.run(["git", "-C", str(tmp_path), *a], capture_output=True, text=True, check=True).stdout

    git("init", "-q")
    (tmp_path / "f").write_text("x")
    git("add", "f")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    assert git_commit(tmp_path) == git("rev-parse", "HEAD").strip()


def test_parquet_report_records_command_line_and_no_tracking_uri(sim_export, tmp_path, monkeypatch):
    argv = ["impostor", "report", "--parquet", str(sim_export), "--out", str(tmp_path / "r"), "--no-figures",
            "--bootstrap-reps", "0", "--permutation-reps", "0"]
    monkeypatch.setattr(sys, "argv", argv)
    assert main(argv[1:]) == 0
    m = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert m["command_line"] == argv
    assert m["tracking_uri"] is None
    assert m["git_commit"] == git_commit()
