"""Configuration shared by every statistics table."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StatsConfig:
    """Knobs of the statistics layer (frozen, so it can key the per-data cache).

    seed             -- seeds every resampling (bootstrap, permutation, subsample).
    bootstrap_reps   -- experiment-level block-bootstrap replicates (Appendix B.2).
    permutation_reps -- permutation / randomisation replicates.
    alpha            -- two-sided level of every CI (1 - alpha) and of the FDR decisions.
    min_cell_games   -- smallest cell (model x difficulty, mode x difficulty) that gets a fit.
    min_clusters     -- fewest experiment clusters for a cluster-robust fit.
    strict           -- re-raise unexpected errors instead of turning them into an empty
                        table plus a note (tests use strict=True; the report does not).
    """

    seed: int = 0
    bootstrap_reps: int = 10_000
    permutation_reps: int = 2_000
    alpha: float = 0.05
    min_cell_games: int = 20
    min_clusters: int = 3
    strict: bool = False
