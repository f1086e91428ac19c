"""Table 5's slope against its pseudo-population truth over studies with different planted opponent ORs.

    python benchmarks/table5_slope.py EXPERIMENTS GAMES STUDIES SCENARIO OR[,OR...] [ROWS.csv]
    python benchmarks/table5_slope.py 378 40 5 planted 0.6,0.8,1.0,1.25

``SCENARIO`` is a scenario of ``impostor_bench.analysis.calibration_matrix`` (``missing`` loses data
as the matrix does). For each planted OR: the truth of every row (``calibration_truth``, 40 pooled runs
of the design), then ``STUDIES`` studies through the real table. Prints the slope of the estimated on
the true log-OR across rows (SE clustered by study), coverage, and the null's rejections (OR 1.0);
``ROWS.csv`` keeps every fitted row with its truth, for a breakdown by scope or model.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import statsmodels.api as sm

from impostor_bench.analysis.calibration_matrix import MISSING, SCENARIOS, lose_data
from impostor_bench.analysis.calibration_truth import pseudo_population_truth
from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.sim.simulate import simulate_games
from impostor_bench.analysis.stats import TABLES
from impostor_bench.analysis.stats.config import StatsConfig


def study(experiments: int, games: int, studies: int, scenario: str, ors: list[float]) -> pd.DataFrame:
    rows = []
    config = StatsConfig(strict=False)
    for o in ors:
        kw = {**SCENARIOS[scenario], "opponent_or_per_10pp": o}
        truth = None
        for rep in range(studies):
            g, pl, md = simulate_games(experiments, games, design_seed=1, seed=2000 + rep, **kw)
            if truth is None:
                truth = pseudo_population_truth(kw, experiments, games, 1, g, pl)
            if scenario in MISSING:
                m = MISSING[scenario]
                g, pl = lose_data(g, pl, rep, games_share=m["games"], experiments_share=m["experiments"],
                                  provider_failure=m["provider_failure"])
            t = TABLES["opponent_baseline"](AnalysisData(games=g, players=pl, models=md), config)
            t = t[t["p"].notna()].assign(rep=rep, planted=o)
            t["truth"] = [truth.get(f"or_per_10pp:{m}/{d}") for m, d in zip(t["model"], t["difficulty"])]
            rows.append(t)
    return pd.concat(rows).dropna(subset=["truth"])


def main(argv=None) -> int:
    a = sys.argv[1:] if argv is None else argv
    if len(a) not in (5, 6):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    t = study(int(a[0]), int(a[1]), int(a[2]), a[3], [float(x) for x in a[4].split(",")])
    if len(a) == 6:
        t.to_csv(a[5], index=False)
    covers = (t["ci_low"] <= t["truth"]) & (t["truth"] <= t["ci_high"])
    groups = (t["planted"].astype(str) + "/" + t["rep"].astype(str)).factorize()[0]
    ols = sm.OLS(np.log(t["or_per_10pp"].to_numpy()), sm.add_constant(np.log(t["truth"].to_numpy())))
    fit = ols.fit(cov_type="cluster", cov_kwds={"groups": groups}) if groups.max() > 0 else ols.fit()
    c = float(covers.mean())
    print(f"{a[3]} {a[0]} x {a[1]}, {a[2]} studies per OR, {len(t)} fitted rows")
    print(f"slope {fit.params[1]:.3f} (SE {fit.bse[1]:.3f}); coverage {100 * c:.1f}% "
          f"(MC SE {100 * np.sqrt(c * (1 - c) / len(t)):.1f} pp)")
    null = t[t["planted"] == 1.0]
    if len(null):
        print(f"p < .05 at OR 1.0: {100 * (null['p'] < 0.05).mean():.1f}% of {len(null)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
