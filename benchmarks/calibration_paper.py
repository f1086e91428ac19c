"""The calibration matrix at the paper's size, one replicate at a time, resumable.

    python benchmarks/calibration_paper.py --dir DIR [--reps 20] [--experiments 756 --games 120]
    python benchmarks/calibration_paper.py --dir DIR[,DIR2] --summarise --out benchmarks/calibration.csv

A replicate at 756 x 120 takes about 110 s of CPU and 5 GB here, so a 20 x 2 run is hours on a
shared 2-core machine. ``calibration_matrix --raw`` keeps every replicate in memory and writes
them at the end; this driver writes each replicate's inference rows to ``DIR/<scenario>_<rep>.parquet``
as soon as it is done, alternates the scenarios (planted, null, planted, ...) so a partial run
still has both, and skips replicates already on disk. ``--summarise`` runs
``calibration_matrix.summarise`` over what is there (the rows of ``benchmarks/calibration.csv``)
and ``benchmarks/calibration_claims.py`` reads the same files for the calibration claims.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time

import pandas as pd

from impostor_bench.analysis.calibration_matrix import FRESH_DESIGN, run_once, summarise
from impostor_bench.analysis.stats.config import StatsConfig


def _path(d: str, sc: str, rep: int) -> str:
    return os.path.join(d, f"{sc}_{rep:03d}.parquet")


def run(d: str, scenarios: list[str], reps: int, experiments: int, games: int, config: StatsConfig,
        tables=None) -> None:
    os.makedirs(d, exist_ok=True)
    for rep in range(reps):
        for sc in scenarios:
            p = _path(d, sc, rep)
            if os.path.exists(p):
                continue
            t0 = time.perf_counter()
            rows = run_once(sc, experiments, games, rep, config,
                            design_seed=500 + rep if sc in FRESH_DESIGN else 1, tables=tables)
            rows.insert(0, "scenario", sc)
            rows.to_parquet(p + ".tmp")
            os.replace(p + ".tmp", p)
            print(f"{sc} rep {rep}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)


def load(dirs: str) -> pd.DataFrame:
    """Every replicate in the comma-separated ``dirs`` (e.g. two runs of different ``--tables``)."""
    files = sorted(f for d in dirs.split(",") for f in glob.glob(os.path.join(d, "*.parquet")))
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True) if files else pd.DataFrame()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True, help="where replicates go (with --summarise: comma-separated dirs)")
    ap.add_argument("--experiments", type=int, default=756)
    ap.add_argument("--games", type=int, default=120)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--scenarios", default="planted,global_null")
    ap.add_argument("--tables", help="comma-separated tables (default: every table of SPECS)")
    ap.add_argument("--bootstrap-reps", type=int, default=1000)
    ap.add_argument("--permutation-reps", type=int, default=500)
    ap.add_argument("--summarise", action="store_true", help="summarise what DIR holds instead of running")
    ap.add_argument("--out", help="with --summarise: CSV whose rows of this size and these scenarios are replaced")
    a = ap.parse_args(argv)
    config = StatsConfig(bootstrap_reps=a.bootstrap_reps, permutation_reps=a.permutation_reps)
    tables = a.tables.split(",") if a.tables else None
    if not a.summarise:
        run(a.dir, a.scenarios.split(","), a.reps, a.experiments, a.games, config, tables)
        return 0
    raw = load(a.dir)
    if raw.empty:
        print(f"calibration_paper: no replicates in {a.dir}", file=sys.stderr)
        return 1
    parts = [summarise(part.drop(columns="scenario"), sc, a.experiments, a.games, config.alpha)
             for sc, part in raw.groupby("scenario")]
    res = pd.concat(parts, ignore_index=True)
    if a.out:
        old = pd.read_csv(a.out)
        old = old[~((old["experiments"] == a.experiments) & (old["games"] == a.games)
                    & old["scenario"].isin(res["scenario"].unique()))]
        pd.concat([old, res], ignore_index=True).to_csv(a.out, index=False)
    with pd.option_context("display.width", 220, "display.max_rows", 500, "display.max_colwidth", 60):
        print(res.drop(columns=["target_size", "target_coverage"]).round(3).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
