"""Fixtures for the analysis tests: small simulated exports (impostor_bench.analysis.sim.simulate)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from impostor_bench.analysis.io import write_tables
from impostor_bench.analysis.sim.simulate import simulate_games


@pytest.fixture(scope="session")
def sim_small():
    """(games, players, models) of 40 experiments x 30 games (1,200 games), paper-like effects."""
    return simulate_games(40, 30, seed=11)


@pytest.fixture(scope="session")
def sim_export(sim_small, tmp_path_factory) -> Path:
    """A read-only export directory (games.parquet, players.parquet, models.csv) of ``sim_small``."""
    d = tmp_path_factory.mktemp("sim_export")
    write_tables(d, *sim_small)
    return d


@pytest.fixture
def export_copy(sim_export, tmp_path) -> Path:
    """A private, writable copy of ``sim_export`` to break in a test."""
    d = tmp_path / "export"
    shutil.copytree(sim_export, d)
    return d


@pytest.fixture(scope="session")
def sim_null_large():
    """~40k games with no effects except those a test sets; reused across simulate tests."""
    return simulate_games(
        336, 120, seat_or=0.8, mode_or=1.0, difficulty_or=None, size_or_per_10x=1.0, position_effect_pp=0.0,
        opponent_or_per_10pp=1.0, seed=5,
    )
