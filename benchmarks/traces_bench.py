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
    python benchmarks/traces_bench.py --games 40 --rounds 1 --callgrind   # instructions, not time

``--sweep`` measures whole ``impostor sweep`` runs instead (the bots, instant in-process
players: 3 models, homogeneous and cross-play, 9 experiments of ``--games`` games), each in
a fresh store; the CPU is the sweep process's and its children's (``getrusage``).

    python benchmarks/traces_bench.py --sweep --games 24 --rounds 3

Target: traces on >= 0.9x the games/s of traces off (at most 10% slower), as the
median over rounds of the ratio within a round (wall and CPU).

``--spans LOG`` measures the tracing code alone: the spans of ``--games`` games built from the
samples of an Inspect log (``traces.game_spans``, what the end-of-sample hook runs; the log's
samples again under other run ids when it holds fewer games) and written to a fresh SQLite
store (``tracestore.write_traces``, what the end of the run runs): thread CPU per game of each,
best of ``--rounds``; with ``--callgrind``, instructions per game of each (one round).

    python benchmarks/traces_bench.py --spans logs/x.eval --games 200 --rounds 5
    python benchmarks/traces_bench.py --spans logs/x.eval --games 200 --callgrind
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


def measured(games: int, traces: bool, db: str, callgrind: bool = False) -> tuple[float, float]:
    """(games per wall second, games per CPU second) of one eval in a fresh process; under
    ``callgrind`` (games per wall second, games per giga-instruction) of the measured eval."""
    env = dict(os.environ, IMPOSTOR_MLFLOW="1", MLFLOW_TRACKING_URI=f"sqlite:///{db}",
               LITELLM_LOCAL_MODEL_COST_MAP="True", IMPOSTOR_MLFLOW_TRACES="1" if traces else "0")
    cmd = [sys.executable, str(ROOT / "benchmarks" / "overhead_bench.py"), "--one", "game", "--games", str(games),
           "--no-log-realtime"]
    prefix = f"{Path(db).parent}/callgrind-{int(traces)}-{time.monotonic_ns()}"
    if callgrind:  # overhead_bench switches the counting on around the measured eval only
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={prefix}.%p", *cmd,
               "--callgrind"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env, cwd=ROOT).stdout
    wall, cpu = (float(v) for v in next(x for x in out.splitlines() if x.startswith("RESULT ")).split()[1:])
    if callgrind:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from overhead_bench import _instructions

        return games / wall, games / (_instructions(prefix) / 1e9)
    return games / wall, games / cpu


SWEEP_YAML = """name: traces-bench
models: [random, embedding, vague]
modes: [homogeneous, cross_play]
difficulties: [easy]
games_per_experiment: {games}
seeds: [0]
concurrency: {{max_connections: 64, max_samples: {games}, max_tasks: 2}}
tracking: {{experiment: traces-bench}}
"""


def measured_sweep(games: int, traces: bool, tmp: Path, template: Path) -> tuple[float, float]:
    """(games per wall second, games per CPU second) of one ``impostor sweep`` into a fresh
    copy of an empty store; checks the store holds one trace per game (none when off)."""
    import resource
    import shutil

    work = Path(tempfile.mkdtemp(dir=tmp))
    shutil.copy(template, work / "mlflow.db")
    (work / "sweep.yaml").write_text(SWEEP_YAML.format(games=games))
    uri = f"sqlite:///{work}/mlflow.db"
    env = dict(os.environ, IMPOSTOR_MLFLOW="1", MLFLOW_TRACKING_URI=uri, LITELLM_LOCAL_MODEL_COST_MAP="True",
               HF_HUB_OFFLINE="1", IMPOSTOR_MLFLOW_TRACES="1" if traces else "0")
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run([sys.executable, "-m", "impostor_bench.cli", "sweep", str(work / "sweep.yaml"), "--log-dir",
                    str(work / "logs"), "--display", "none"], check=True, env=env, cwd=ROOT, capture_output=True)
    wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    from mlflow.tracking import MlflowClient

    client = MlflowClient(uri)
    exp = client.get_experiment_by_name("traces-bench")
    n = len(client.search_traces(locations=[exp.experiment_id], max_results=50_000)) if exp else 0
    if n != (9 * games if traces else 0):
        raise SystemExit(f"{n} traces in the store after a sweep of {9 * games} games (traces {traces})")
    shutil.rmtree(work)
    return 9 * games / wall, 9 * games / cpu


def build_and_write(log: str, games: int, store: str, callgrind: bool = False) -> tuple[float, float]:
    """(build, write) per game of ``games`` games' spans from ``log``'s samples: thread CPU
    seconds, or under callgrind (``callgrind``) the two phases dumped apart."""
    from inspect_ai.log import read_eval_log

    from impostor_bench.tracking import traces
    from impostor_bench.tracking.store import get_client
    from impostor_bench.tracking.tracestore import write_traces

    samples = [traces._resolved(s) for s in read_eval_log(log).samples or []]
    jobs = [(f"bench-run-{i // len(samples)}", samples[i % len(samples)]) for i in range(games)]
    uri = f"sqlite:///{store}"
    exp = get_client(uri)[0].create_experiment(f"spans-{time.monotonic_ns()}")
    write_traces(uri, exp, [traces.game_spans("warm-up", samples[0], set())])  # imports, the store's engine
    secrets = {"sk-bench-not-in-any-text-0123456789"}  # one API key, as a real run scrubs
    if callgrind:
        from overhead_bench import _callgrind

        _callgrind("--instr=on")
        _callgrind("--zero")
    t0 = time.thread_time()
    built = [traces.game_spans(run, s, secrets) for run, s in jobs]
    t1 = time.thread_time()
    if callgrind:
        _callgrind("--dump=build")
    written = write_traces(uri, exp, [g for g in built if g], "0" * 32)
    t2 = time.thread_time()
    if callgrind:
        _callgrind("--dump=write")
        _callgrind("--instr=off")
    if len(written) != sum(1 for g in built if g):
        raise SystemExit(f"{len(written)} traces written of {len(built)} games")
    return (t1 - t0) / games, (t2 - t1) / games


def measured_spans(args: argparse.Namespace) -> None:
    """``--spans``: best of ``--rounds`` fresh stores in this process, or one round under callgrind."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    if args.inside_callgrind:
        build_and_write(args.spans, args.games, args.inside_callgrind, callgrind=True)
        return
    with tempfile.TemporaryDirectory() as tmp:
        if args.callgrind:
            prefix = f"{tmp}/callgrind"
            subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={prefix}.%p",
                            sys.executable, __file__, "--spans", args.spans, "--games", str(args.games),
                            "--inside-callgrind", f"{tmp}/mlflow.db"], check=True, capture_output=True, cwd=ROOT)
            b, w = (_dumped(prefix, n) / args.games / 1e6 for n in (1, 2))
            print(f"build {b:.3f} M instructions/game, write {w:.3f} M instructions/game, together {b + w:.3f}")
            return
        rounds = [build_and_write(args.spans, args.games, f"{tmp}/mlflow-{r}.db") for r in range(args.rounds)]
    build, write = min(r[0] for r in rounds), min(r[1] for r in rounds)
    print(f"build {build * 1e3:.3f} ms/game, write {write * 1e3:.3f} ms/game (thread CPU, best of {args.rounds})")


def _dumped(prefix: str, n: int) -> int:
    """Instructions in callgrind's dump number ``n`` (``summary:`` line) of the process ``prefix``."""
    import glob

    (path,) = glob.glob(f"{prefix}.*.{n}")
    with open(path) as f:
        return sum(int(line.split()[1]) for line in f if line.startswith("summary:"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--callgrind", action="store_true",
                        help="count instructions (valgrind's callgrind, ~100x slower, use ~40 games and 1-2 rounds) "
                             "instead of CPU time: repeatable where time on a shared machine is not")
    parser.add_argument("--sweep", action="store_true", help="whole bot sweeps (9 experiments of --games games)")
    parser.add_argument("--spans", metavar="LOG", help="the tracing code alone: build and write the spans of "
                        "--games games from this Inspect log's samples")
    parser.add_argument("--inside-callgrind", metavar="STORE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.spans:
        measured_spans(args)
        return
    unit = "games per giga-instruction" if args.callgrind else "games per CPU-second"
    rates: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    print(f"load average at start: {os.getloadavg()} (nproc {os.cpu_count()})", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        db = f"{tmp}/mlflow.db"
        sys.path.insert(0, str(ROOT))
        from impostor_bench.tracking.store import get_client

        get_client(f"sqlite:///{db}")  # the store is created once, outside the measured evals
        for r in range(args.rounds):
            for traces in ((True, False) if r % 2 == 0 else (False, True)):
                rates[traces].append(measured_sweep(args.games, traces, Path(tmp), Path(db)) if args.sweep
                                     else measured(args.games, traces, db, args.callgrind))
                wall, cpu = rates[traces][-1]
                print(f"round {r + 1}: traces {'on ' if traces else 'off'} {wall:6.1f} games/s wall, "
                      f"{cpu:6.2f} {unit}", flush=True)
        from mlflow.tracking import MlflowClient

        client = MlflowClient(f"sqlite:///{db}")
        exp = client.get_experiment_by_name("impostor")
        n_traces = len(client.search_traces(locations=[exp.experiment_id], max_results=50_000)) if exp else 0
        # the warm-up eval of each traced process (8 games) is traced too; sweeps checked their own stores
        expected = 0 if args.sweep else args.rounds * (args.games + 8)
    for i, what in enumerate(("wall", "instructions" if args.callgrind else "CPU")):
        ratios = [on[i] / off[i] for on, off in zip(rates[True], rates[False])]
        print(f"{what}: median games/s traces on {statistics.median(x[i] for x in rates[True]):.1f}, "
              f"off {statistics.median(x[i] for x in rates[False]):.1f}; ratio per round "
              f"{', '.join(f'{x:.3f}' for x in ratios)}; median ratio {statistics.median(ratios):.3f}")
    print(f"traces in the store: {n_traces} (expected {expected}); load average at end: {os.getloadavg()}")
    if n_traces != expected:
        raise SystemExit("wrong number of traces in the store")


if __name__ == "__main__":
    main()
