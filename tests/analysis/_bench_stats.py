"""Timing of every statistics table on a paper-sized synthetic export (not a test).

    python tests/analysis/_bench_stats.py [games_per_exp] [bootstrap_reps]

9 models x 120 games per experiment = 756 experiments, 90,720 games, 362,880 player rows.
"""

from __future__ import annotations

import sys
import time

from impostor_bench.analysis.stats import TABLES, Analysis, StatsConfig
from _synth_stats import make_ballot_games  # run as a script: tests/analysis is on sys.path


def main() -> None:
    gpe = int(sys.argv[1]) if len(sys.argv) > 1 else 120
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    t0 = time.perf_counter()
    raw = make_ballot_games(n_models=9, games_per_exp=gpe, seed=1)
    t1 = time.perf_counter()
    print(f"generated {len(raw.games):,} games / {len(raw.players):,} player rows in {t1 - t0:.1f}s")
    cfg = StatsConfig(bootstrap_reps=reps)
    data = Analysis(raw, cfg)  # one session: tables reused by others are computed once
    t = time.perf_counter()
    with data.batch():  # the frames' fingerprint, once
        print(f"{'fingerprint':28s} {time.perf_counter() - t:7.2f}s")
    total = 0.0
    for name, fn in TABLES.items():
        t = time.perf_counter()
        out = fn(data, cfg)
        dt = time.perf_counter() - t
        total += dt
        print(f"{name:28s} {dt:7.2f}s  rows={len(out)}")
    print(f"TOTAL {total:.1f}s (bootstrap_reps={reps}, permutation_reps={cfg.permutation_reps})")
    for n in data.notes:
        print("note:", n)


if __name__ == "__main__":
    main()
