"""Calibration of the round tables on simulated multi-round games
(:mod:`impostor_bench.analysis.sim.rounds`) with the design's dependence: word pairs shared across
experiments with strong effects (SD 1.0, logit) and strong experiment effects (SD 0.5).

``impostor_bench.analysis.calibration_matrix`` runs these replicates for the round tables and summarises them
with the others (one row per table, quantity family, method, scenario and design size):

* ``global_null``: nine identical models, no learning across rounds (vote accuracy flat);
* ``planted``: the default models (their detection rates differ), +0.3 logit of vote accuracy per round.

The round tables' measures are ratios over a selected set of rounds, with no closed form under
the design's dependence: the matrix gives their rows the pooled-copies truth of
``calibration_truth.pooled_truth`` (the table run on many multi-round runs of the design pooled).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.sim.effects import SimModel
from impostor_bench.analysis.sim.rounds import simulate_rounds
from impostor_bench.analysis.stats.inference import inference_rows
from impostor_bench.analysis.stats import ROUND_TABLES

ROUNDS = 3
_STRONG = dict(pair_effect_sd=1.0, experiment_effect_sd=0.5)
_NULL_MODELS = tuple(SimModel(f"m{i}", "maker", "family", 10.0, det=0.6) for i in range(9))
SCENARIOS: dict[str, dict[str, Any]] = {  # keyword arguments of simulate_rounds
    "global_null": dict(models=_NULL_MODELS, det_gain_per_round=0.0, seat_or=1.0, mode_or=1.0, difficulty_or=1.0,
                        size_or_per_10x=1.0, opponent_or_per_10pp=1.0, **_STRONG),
    "planted": dict(det_gain_per_round=0.3, **_STRONG),
}
SCENARIOS["fresh_pairs_null"] = SCENARIOS["global_null"]  # the matrix redraws the design per run


def run_rounds_once(scenario: str, experiments: int, games: int, rep: int, config, design_seed: int = 1,
                    tables=ROUND_TABLES):
    """One replicate of the round tables' inference rows (truth NaN: none has a closed form; the matrix
    fills in the pooled-copies truth)."""
    g, pl, mv, models = simulate_rounds(experiments, games, ROUNDS, design_seed=design_seed, seed=1000 + rep,
                                        **SCENARIOS[scenario])
    data = AnalysisData(games=g, players=pl, models=models, moves=mv)
    rows = inference_rows(data, config, [t for t in tables if t in ROUND_TABLES])
    rows["truth"] = np.nan
    rows["rep"] = rep
    return rows
