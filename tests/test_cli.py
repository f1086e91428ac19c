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
