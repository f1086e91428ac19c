"""The ``impostor`` command line as a user meets it: --version and help texts."""

from __future__ import annotations

import subprocess
import sys

import pytest

from impostor_bench import __version__
from impostor_bench.cli import SUBCOMMAND_MODULES

SUBCOMMANDS = [name.rsplit(".", 1)[1].replace("_", "-") for name in SUBCOMMAND_MODULES]  # module tracking_server: command tracking-server


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "impostor_bench.cli", *args], capture_output=True, text=True,
                          timeout=120)


def test_version_prints_the_package_version():
    out = _cli("--version")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"impostor {__version__}"


@pytest.mark.slow
@pytest.mark.parametrize("command", [None, *SUBCOMMANDS])
def test_help_has_no_restructuredtext_backticks(command):
    out = _cli(*([command] if command else []), "--help")
    assert out.returncode == 0, out.stderr
    assert "usage: impostor" in out.stdout
    assert "``" not in out.stdout


def test_top_level_help_says_what_it_is_and_shows_examples():
    """``impostor --help`` once said only "The impostor command." (issue 29)."""
    out = _cli("--help").stdout
    assert "Impostor Game" in out and "examples:" in out
    for example in ("impostor sweep configs/paper.yaml --dry-run", "inspect eval impostor_bench/impostor"):
        assert example in out


def test_a_full_disk_during_a_sweep_is_one_line(tmp_path, monkeypatch, capsys):
    """Issue 42: a disk that fills during a sweep (Inspect's log manifest raised ``OSError:
    [Errno 28]``) ends in one line saying so and how to go on, exit 2, no traceback."""
    import errno

    import inspect_ai._eval.evalset as evalset

    from impostor_bench.cli import main
    from test_sweep_helpers import write_config

    def full(log_dir, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", f"{log_dir}/logs.json")

    monkeypatch.setattr(evalset, "write_log_dir_manifest", full)
    monkeypatch.setenv("IMPOSTOR_MLFLOW", "0")
    cfg = write_config(tmp_path / "s.yaml", models=["bot/random", "bot/embedding"], modes=["homogeneous"], imports=[])
    assert main(["sweep", str(cfg), "--display", "none"]) == 2
    err = capsys.readouterr().err
    [line] = [ln for ln in err.splitlines() if ": error:" in ln]
    assert line.startswith("impostor sweep: error: no space left on the device (writing ") and "logs.json" in line
    assert "run the same command again" in line and "Traceback" not in err


def test_disk_full_is_found_behind_wrappers():
    import errno

    from impostor_bench.cli import disk_full

    enospc = OSError(errno.ENOSPC, "No space left on device")
    try:
        try:
            raise enospc
        except OSError as inner:
            raise RuntimeError("task failed") from inner
    except RuntimeError as wrapped:
        assert disk_full(wrapped) is enospc
        assert disk_full(ExceptionGroup("tasks", [ValueError("x"), wrapped])) is enospc
    assert disk_full(OSError(errno.EACCES, "Permission denied")) is None
    assert disk_full(ValueError("x")) is None
