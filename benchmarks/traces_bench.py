"""What a trace per game costs: games/s of an instant-provider eval with our MLflow tracking
on, game traces on (the default) vs off (``IMPOSTOR_MLFLOW_TRACES=0``).

Each measured eval is ``overhead_bench.py --one game`` in a fresh process (the same warm-up,
the instant in-process provider, ``max_samples`` = games), into one throwaway SQLite store;
rounds alternate the two settings (on first in odd rounds, off first in even ones). The
traces are written before the eval returns (the end-of-task hook logs the run, its tables
and the traces, then closes the run), so the eval's wall time and its process's CPU time
(all threads) hold the whole cost of tracing; the benchmark checks that the store then
holds exactly one trace per traced game.

    python benchmarks/traces_bench.py --games 200 --rounds 5

Target: traces on >= 0.9x the games/s of traces off (issue 17: at most 10% slower), as the
median over rounds of the ratio within a round (wall and CPU).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measured(games: int, traces: bool, db: str) -> tuple[float, float]:
    """(games per wall second, games per CPU second) of one eval in a fresh process."""
    env = dict(os.environ, IMPOSTOR_MLFLOW="1", MLFLOW_TRACKING_URI=f"sqlite:///{db}",
               LITELLM_LOCAL_MODEL_COST_MAP="True", IMPOSTOR_MLFLOW_TRACES="1" if traces else "0")
    cmd = [sys.executable, str(ROOT / "benchmarks" / "overhead_bench.py"), "--one", "game", "--games", str(games),
           "--no-log-realtime"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env, cwd=ROOT).stdout
    wall, cpu = (float(v) for v in next(x for x in out.splitlines() if x.startswith("RESULT ")).split()[1:])
    return games / wall, games / cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rates: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    print(f"load average at start: {os.getloadavg()} (nproc {os.cpu_count()})", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        db = f"{tmp}/mlflow.db"
        sys.path.insert(0, str(ROOT))
        from impostor.tracking.store import get_client

        get_client(f"sqlite:///{db}")  # the store is created once, outside the measured evals
        for r in range(args.rounds):
            for traces in ((True, False) if r % 2 == 0 else (False, True)):
                rates[traces].append(measured(args.games, traces, db))
                wall, cpu = rates[traces][-1]
                print(f"round {r + 1}: traces {'on ' if traces else 'off'} {wall:6.1f} games/s wall, "
                      f"{cpu:6.1f} games per CPU-second", flush=True)
        from mlflow.tracking import MlflowClient

        client = MlflowClient(f"sqlite:///{db}")
        exp = client.get_experiment_by_name("impostor")
        n_traces = len(client.search_traces(locations=[exp.experiment_id], max_results=50_000))
        # the warm-up eval of each traced process (8 games) is traced too
        expected = args.rounds * (args.games + 8)
    for i, what in enumerate(("wall", "CPU")):
        ratios = [on[i] / off[i] for on, off in zip(rates[True], rates[False])]
        print(f"{what}: median games/s traces on {statistics.median(x[i] for x in rates[True]):.1f}, "
              f"off {statistics.median(x[i] for x in rates[False]):.1f}; ratio per round "
              f"{', '.join(f'{x:.3f}' for x in ratios)}; median ratio {statistics.median(ratios):.3f}")
    print(f"traces in the store: {n_traces} (expected {expected}); load average at end: {os.getloadavg()}")
    if n_traces != expected:
        raise SystemExit("wrong number of traces in the store")


if __name__ == "__main__":
    main()
