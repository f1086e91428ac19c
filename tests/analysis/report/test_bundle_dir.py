"""The report bundle survives a kill at any point (issue 15): recovered and cleaned on the next run."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from impostor_bench.analysis.report import bundle_dir

REPO = Path(__file__).resolve().parents[3]


def _bundle(path: Path, text: str) -> Path:
    path.mkdir()
    (path / "report.md").write_text(text)
    return path


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_kill_between_the_renames_completes_the_finished_bundle(tmp_path):
    out = tmp_path / "rep"
    old = _bundle(tmp_path / ".rep.old-abc", "old")  # the old bundle was moved aside ...
    new = _bundle(tmp_path / ".rep.tmp-def", "new")  # ... and the new one was finished, not yet moved in
    (new / bundle_dir.DONE_FILE).write_text("")
    done = bundle_dir.recover(out)
    assert (out / "report.md").read_text() == "new"
    assert not old.exists() and not new.exists()
    assert not (out / bundle_dir.DONE_FILE).exists()
    assert any("completed the swap" in d for d in done)


def test_kill_before_the_new_bundle_was_finished_restores_the_old_one(tmp_path):
    out = tmp_path / "rep"
    _bundle(tmp_path / ".rep.old-abc", "old")
    half = _bundle(tmp_path / ".rep.tmp-def", "half")
    (half / bundle_dir.PID_FILE).write_text(str(_dead_pid()))
    bundle_dir.recover(out)
    assert (out / "report.md").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]


def test_live_writers_temporaries_are_left_alone(tmp_path):
    out = _bundle(tmp_path / "rep", "current")
    mine = bundle_dir.new_temp(out)  # this process is alive: another report writing now
    stale = _bundle(tmp_path / ".rep.tmp-zzz", "stale")
    (stale / bundle_dir.PID_FILE).write_text(str(_dead_pid()))
    bundle_dir.recover(out)
    assert mine.exists() and not stale.exists()
    assert (out / "report.md").read_text() == "current"


def test_swap_replaces_and_leaves_nothing_behind(tmp_path):
    out = _bundle(tmp_path / "rep", "old")
    tmp = bundle_dir.new_temp(out)
    (tmp / "report.md").write_text("new")
    bundle_dir.swap_into_place(tmp, out)
    assert (out / "report.md").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]
    assert not (out / bundle_dir.PID_FILE).exists() and not (out / bundle_dir.DONE_FILE).exists()


@pytest.mark.slow
def test_sigkill_mid_report_then_rerun_gives_one_clean_bundle(tmp_path):
    """Through the real command line: SIGKILL `impostor report` while it writes, run it again."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    tables = tmp_path / "tables"
    r = subprocess.run([sys.executable, "-m", "impostor_bench.cli", "simulate", "--out", str(tables), "--experiments", "4",
                        "--games", "40", "--seed", "1"], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "rep"
    cmd = [sys.executable, "-m", "impostor_bench.cli", "report", "--parquet", str(tables), "--out", str(out)]
    assert subprocess.run(cmd, env=env, capture_output=True, timeout=600).returncode == 0
    first = (out / "manifest.json").read_text()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while not list(tmp_path.glob(".rep.tmp-*")) and time.time() < deadline:  # wait until it writes
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert (out / "manifest.json").read_text() == first  # the old bundle is untouched
    assert list(tmp_path.glob(".rep.tmp-*"))  # the killed run left its temporary
    assert subprocess.run(cmd, env=env, capture_output=True, timeout=600).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep", "tables"]  # cleaned
    assert (out / "report.html").exists()
