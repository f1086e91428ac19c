"""What a trace per game costs: games/s of an instant-provider eval with our MLflow tracking
on, game traces on (the default) vs off (``IMPOSTOR_MLFLOW_TRACES=0``).

Each measured eval is ``overhead_bench.py --one game`` in a fresh process (the same warm-up,
the instant in-process provider, ``max_samples`` = games), into one throwaway SQLite store;
rounds alternate the two settings. The eval's wall time includes the end-of-eval hook that
logs the run, its tables and (when on) the traces, so the difference is the tracing.

    python benchmarks/traces_bench.py --games 200 --rounds 4

Measured with the traces written before the eval returns (``IMPOSTOR_MLFLOW_TRACES=inline``,
the benchmark's default), so the whole cost is inside the measured time. With
``IMPOSTOR_MLFLOW_TRACES=1`` (the product default: a detached worker after the eval) the
benchmark waits for the worker before the next measured eval, but the numbers are not
clean: ``overhead_bench --one`` deletes its temporary log directory when it exits, which
can be before the worker has read the log, and the worker of its warm-up eval overlaps
the measured one.

Target: traces on >= 0.9x the games/s of traces off (issue 17: at most 10% slower).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measured(games: int, traces: bool, db: str) -> float:
    env = dict(os.environ, IMPOSTOR_MLFLOW="1", MLFLOW_TRACKING_URI=f"sqlite:///{db}",
               LITELLM_LOCAL_MODEL_COST_MAP="True",
               IMPOSTOR_MLFLOW_TRACES=(os.environ.get("IMPOSTOR_MLFLOW_TRACES", "inline") if traces else "0"))
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
    started = [int(time.time() * 1000)]
    with tempfile.TemporaryDirectory() as tmp:
        db = f"{tmp}/mlflow.db"
        sys.path.insert(0, str(ROOT))
        from impostor.tracking.store import get_client

        get_client(f"sqlite:///{db}")  # the store is created once, outside the measured evals
        from mlflow.tracking import MlflowClient

        client = MlflowClient(f"sqlite:///{db}")
        worker_s: list[float] = []
        for r in range(args.rounds):
            for traces in ((True, False) if r % 2 == 0 else (False, True)):
                rates[traces].append(measured(args.games, traces, db))
                print(f"round {r + 1}: traces {'on ' if traces else 'off'} {rates[traces][-1]:6.1f} games/s", flush=True)
                if traces:  # the worker writes after the eval returned: wait for it, so it never
                    t0 = time.perf_counter()  # overlaps the next measured eval
                    while time.perf_counter() - t0 < 600 and any(
                            run.data.tags.get("impostor.traces_logged") != "1" and "impostor.traces_error" not in run.data.tags
                            and run.data.params.get("n_games") == str(args.games)
                            for run in client.search_runs([client.get_experiment_by_name("impostor").experiment_id],
                                                          filter_string="tags.`impostor.kind` = 'experiment'")
                            if run.info.start_time >= started[0]):
                        time.sleep(0.2)
                    worker_s.append(time.perf_counter() - t0)
                    print(f"          worker done {worker_s[-1]:.1f} s after the eval returned", flush=True)
                started[0] = int(time.time() * 1000)
        exp = client.get_experiment_by_name("impostor")
        n_traces = len(client.search_traces(locations=[exp.experiment_id], max_results=50_000))
    on, off = statistics.median(rates[True]), statistics.median(rates[False])
    print(f"median games/s: traces on {on:.1f}, off {off:.1f}; ratio {on / off:.3f} "
          f"(best rounds {max(rates[True]) / max(rates[False]):.3f}); traces in the store: {n_traces}; "
          f"trace worker after the eval: median {statistics.median(worker_s) if worker_s else float('nan'):.1f} s")


if __name__ == "__main__":
    main()
