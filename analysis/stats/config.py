"""Configuration shared by every statistics table."""

from __future__ import annotations

from dataclasses import dataclass

BOOTSTRAPS = ("design", "paper")


@dataclass(frozen=True)
class StatsConfig:
    """Knobs of the statistics layer (frozen, so it can key the per-data cache).

    seed             -- seeds every resampling (bootstrap, permutation, subsample).
    bootstrap_reps   -- experiment-level bootstrap replicates (Appendix B.2).
    bootstrap        -- which bootstrap the main ``ci_low``/``ci_high`` columns use:
                        "design" (default; experiment-level wild bootstrap that keeps every
                        experiment's design point, ``design_boot``) or "paper" (experiments
                        resampled within mode x difficulty, the paper's B.2 procedure, for
                        reproduction). Tables that print bootstrap intervals give both.
    permutation_reps -- permutation / randomisation replicates.
    alpha            -- two-sided level of every CI (1 - alpha) and of the FDR decisions.
    min_cell_games   -- smallest cell (model x difficulty, mode x difficulty) that gets a fit.
    min_clusters     -- fewest clusters for the paper's cluster-robust fit (``paper_methods`` only).
    min_resid_clusters -- fewest experiment clusters minus parameters (G - K) for the report's
                        cluster-robust logit (``_regress.experiment_logit``); below it the
                        quantity prints "not computed" (docs/analysis.md, "Regression inference").
    paper_methods    -- restore the paper's game-level procedures (Wald ORs, Pearson chi2 p,
                        game-level and within-experiment permutations whatever the schedule,
                        cluster-robust Wald with the normal per model x difficulty cell) for
                        reproducing its numbers; each row's ``method`` says so. They do not
                        hold their level under experiment clustering.
    estimated_params -- let sizes marked ``params_source = estimated`` in models.csv enter the
                        size fits (size_per_10x, scaling); False = published sizes only.
    strict           -- re-raise unexpected errors instead of turning them into an empty
                        table plus a note (tests use strict=True; the report does not).
    """

    seed: int = 0
    bootstrap_reps: int = 10_000
    permutation_reps: int = 2_000
    alpha: float = 0.05
    min_cell_games: int = 20
    min_clusters: int = 3
    min_resid_clusters: int = 6
    paper_methods: bool = False
    estimated_params: bool = True
    strict: bool = False
    bootstrap: str = "design"

    def __post_init__(self) -> None:
        if self.bootstrap not in BOOTSTRAPS:
            raise ValueError(f"StatsConfig.bootstrap must be one of {', '.join(BOOTSTRAPS)}; got {self.bootstrap!r}")
