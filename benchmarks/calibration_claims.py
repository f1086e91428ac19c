"""The calibration claims (docs/analysis.md), read off the per-replicate rows of a calibration-matrix run.

    python benchmarks/calibration_claims.py RAW.parquet [RAW2.parquet ...]

``RAW`` is what ``python -m impostor_bench.analysis.calibration_matrix ... --raw RAW`` writes: one
row per printed estimate, interval or p-value of ``inference.csv`` per replicate and scenario.
It prints, per design size:

* power of the paper's mode claims (share of planted studies with p < .05 per contrast; pooled
  over the three clear ones: cross-play, team-aware and semi-aware vs homogeneous) and of
  team-aware vs team-blind;
* coverage in ``planted``: pooled over every interval, pooled with each table weighted
  equally, and the lowest table;
* false-positive rate in ``global_null`` per table and pooled (rows whose estimand is over a
  population of word pairs are left out there, as in ``calibration_matrix.summarise``: on one
  fixed design their null does not hold);
* intervals of zero width or with a limit outside the estimate's parameter space.

Truth of an interval: the design's closed-form value or the pseudo-population truth where the
matrix attached one (``calibration_matrix``); an interval without a truth is not counted in
coverage (the count of those is printed), never scored against the mean of its own estimates.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

CLEAR = ("cross_play", "team_aware", "team_semi_aware")
MODES = ("cross_play", "team_blind", "team_aware", "team_semi_aware")


def claims(raw: pd.DataFrame) -> dict:
    out: dict = {}
    r = raw.copy()
    has_ci = r["ci_low"].notna() & r["ci_high"].notna()
    out["no_truth"] = int((has_ci & r["truth"].isna()).sum())
    has_ci = has_ci & r["truth"].notna()
    r["covers"] = np.where(has_ci, (r["ci_low"] <= r["truth"]) & (r["truth"] <= r["ci_high"]), np.nan)
    planted = r[r["scenario"] == "planted"]
    null = r[r["scenario"] == "global_null"]
    reps = {sc: int(part["rep"].nunique()) for sc, part in r.groupby("scenario")}
    out["reps"] = reps
    odds = planted[planted["calibration"] == "odds_ratios:or"]
    power = {}
    for m in MODES:
        q = odds[odds["quantity"] == f"or:{m}_vs_homogeneous"]
        power[f"{m} vs homogeneous"] = (float((q["p"] < 0.05).mean()), float(q["estimate"].median()),
                                        float(q["truth"].median()), len(q))
    q = odds[odds["quantity"] == "or:team_aware_vs_team_blind"]
    power["team_aware vs team_blind"] = (float((q["p"] < 0.05).mean()), float(q["estimate"].median()),
                                         float(q["truth"].median()), len(q))
    out["power"] = power
    out["power_clear_pooled"] = float(np.mean([power[f"{m} vs homogeneous"][0] for m in CLEAR]))
    cov = planted[has_ci.loc[planted.index]]
    by_table = cov.groupby("table")["covers"].agg(["mean", "size"])
    out["coverage_pooled"] = float(cov["covers"].mean())
    out["coverage_tables_mean"] = float(by_table["mean"].mean())
    out["coverage_by_table"] = by_table.sort_values("mean")
    pairs = null["method"].astype(str).str.contains("word pair")
    nt = null[null["p"].notna() & ~pairs]
    fpr = nt.groupby("table")["p"].agg(rate=lambda p: float((p < 0.05).mean()), n="size")
    out["fpr_by_table"] = fpr.sort_values("rate", ascending=False)
    out["fpr_pooled"] = float((nt["p"] < 0.05).mean())
    ci = r[r["ci_low"].notna() & r["ci_high"].notna()]
    zero = ci[np.isclose(ci["ci_high"], ci["ci_low"], rtol=0, atol=1e-12)]
    out["zero_width"] = (len(zero), len(ci))
    return out


def main(argv=None) -> int:
    paths = (argv if argv is not None else sys.argv[1:])
    if not paths:
        print("usage: calibration_claims.py RAW.parquet [...]", file=sys.stderr)
        return 2
    raw = pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)
    c = claims(raw)
    print(f"replicates per scenario: {c['reps']}")
    print("\npower (p < .05) of the paper's mode claims, planted | median estimate | median truth | n")
    for k, (pw, est, tr, n) in c["power"].items():
        print(f"  {k:32s} {100 * pw:5.1f}%   {est:.3f}   {tr:.3f}   {n}")
    print(f"  pooled over {', '.join(CLEAR)}: {100 * c['power_clear_pooled']:.1f}%")
    print(f"\ncoverage, planted: pooled over intervals {100 * c['coverage_pooled']:.1f}%, tables weighted equally "
          f"{100 * c['coverage_tables_mean']:.1f}%; by table (lowest first):")
    print(c["coverage_by_table"].round(3).to_string())
    print(f"intervals without a truth (no closed form, no pseudo-population truth; not counted): {c['no_truth']}")
    print(f"\nfalse-positive rate, global null: pooled {100 * c['fpr_pooled']:.1f}%; by table:")
    print(c["fpr_by_table"].round(3).to_string())
    print(f"\nzero-width intervals: {c['zero_width'][0]} of {c['zero_width'][1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
