"""What a trace per game costs: games/s of an instant-provider eval with our MLflow tracking
on, game traces on (the default) vs off (``IMPOSTOR_MLFLOW_TRACES=0``).

Each measured eval is ``overhead_bench.py --one game`` in a fresh process (the same warm-up,
the instant in-process provider, ``max_samples`` = games), into one throwaway SQLite store;
rounds alternate the two settings. The eval's wall time includes the end-of-eval hook that
logs the run, its tables and (when on) the traces, so the difference is the tracing.

    python benchmarks/traces_bench.py --games 200 --rounds 4

Target: traces on >= 0.9x the games/s of traces off (issue 17: at most 10% slower).
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


def measured(games: int, traces: bool, db: str) -> float:
    env = dict(os.environ, IMPOSTOR_MLFLOW="1", MLFLOW_TRACKING_URI=f"sqlite:///{db}",
               LITELLM_LOCAL_MODEL_COST_MAP="True", IMPOSTOR_MLFLOW_TRACES="1" if traces else "0")
    cmd = [sys.executable, str(ROOT / "benchmarks" / "overhead_bench.py"), "--one", "game", "--games", str(games),
           "--no-log-realtime"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env, cwd=ROOT).stdout
    line = next(x for x in out.splitlines() if x.startswith("RESULT "))
    return games / float(line.split()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    rates: dict[bool, list[float]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as tmp:
        db = f"{tmp}/mlflow.db"
        sys.path.insert(0, str(ROOT))
        from impostor.tracking.store import get_client

        get_client(f"sqlite:///{db}")  # the store is created once, outside the measured evals
        for r in range(args.rounds):
            for traces in ((True, False) if r % 2 == 0 else (False, True)):
                rates[traces].append(measured(args.games, traces, db))
                print(f"round {r + 1}: traces {'on ' if traces else 'off'} {rates[traces][-1]:6.1f} games/s", flush=True)
        from mlflow.tracking import MlflowClient

        client = MlflowClient(f"sqlite:///{db}")
        exp = client.get_experiment_by_name("impostor")
        n_traces = len(client.search_traces(locations=[exp.experiment_id], max_results=50_000))
    on, off = statistics.median(rates[True]), statistics.median(rates[False])
    print(f"median games/s: traces on {on:.1f}, off {off:.1f}; ratio {on / off:.3f} "
          f"(best rounds {max(rates[True]) / max(rates[False]):.3f}); traces in the store: {n_traces}")


if __name__ == "__main__":
    main()
