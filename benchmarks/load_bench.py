"""Load: many games against a fixed-latency provider at a fixed connection limit.

    python benchmarks/load_bench.py --games 1000 --latency 0.2 --connections 64
    python benchmarks/load_bench.py --provider http ...   # the fault server in a subprocess,
                                                          # through Inspect's real openai-api provider

Checks: every game finishes and is scored exactly once (no lost, no duplicated
games), the provider never sees more than ``--connections`` calls at once,
memory stays flat (RSS sampled every 0.5 s; peak reported), and wall time is
compared with the ideal:

* a game is 4 sequential description calls, then one round of 4 concurrent
  vote calls: its critical path is 5 x latency;
* the provider serves at most C calls at once, so N games (8N calls) need at
  least 8N x latency / C seconds of provider time;
* ideal = max(8N x latency / C, 5 x latency) (+ the last game's critical path
  when the connection bound dominates, ignored: < 1 s).

For 1,000 games at 200 ms and 64 connections: 8,000 x 0.2 / 64 = 25.0 s.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("IMPOSTOR_MLFLOW", "0")

import psutil  # noqa: E402
from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402

from impostor_bench.sweep import Concurrency  # noqa: E402
from impostor_bench.tasks.impostor import impostor  # noqa: E402
from tests.reliability import scripted  # noqa: E402

MODEL = "load"
SWEEP_LOG_REALTIME = Concurrency().log_realtime  # measure what a sweep runs


class RssSampler(threading.Thread):
    """RSS of this process (or the sum over ``pids``) every ``interval`` seconds."""

    def __init__(self, interval: float = 0.5, pids: list[int] | None = None):
        super().__init__(daemon=True)
        self.interval = interval
        self.samples: list[tuple[float, int]] = []
        self._halt = threading.Event()
        self._procs = [psutil.Process(p) for p in pids] if pids else [psutil.Process()]

    def run(self) -> None:
        t0 = time.perf_counter()
        while not self._halt.is_set():
            try:
                rss = sum(p.memory_info().rss for p in self._procs)
            except psutil.Error:
                break
            self.samples.append((time.perf_counter() - t0, rss))
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join()


def instrument_inproc(latency: float) -> None:
    """The scripted provider, answering after an asyncio.sleep of ``latency``."""
    scripted.SCRIPTS[MODEL] = scripted.honest
    scripted.LATENCY[MODEL] = latency


def reset_gauges() -> None:
    for d in (scripted.CALLS, scripted.IN_FLIGHT, scripted.MAX_IN_FLIGHT):
        d[MODEL] = 0


def quiet_inspect_mlflow() -> None:
    from benchmarks.overhead_bench import quiet_inspect_mlflow as q

    q()


def _make_task(kind: str):
    if kind == "bare":
        from benchmarks.bare_task import bare
        from impostor_bench.gc_tuning import tune_gc

        tune_gc()  # what building the game task does: same collector settings for both tasks
        return bare, "bare_score"
    return impostor, "impostor_winner"


def _model(args: argparse.Namespace) -> str:
    if args.provider == "inproc":
        instrument_inproc(args.latency)
        return f"reliability/{MODEL}"
    os.environ["FAULT_BASE_URL"] = f"http://127.0.0.1:{args.port}/v1"
    os.environ["FAULT_API_KEY"] = "sk-load-bench"
    return f"openai-api/fault/{MODEL}"


def _run(args: argparse.Namespace, model: str, start: int, end: int, connections: int, max_samples: int,
         log_dir: str) -> str:
    make_task, _ = _make_task(args.task)
    kw = {"n_games": end, "first_game": start} if args.task == "game" else {"n_games": end - start}
    logs = inspect_eval(
        make_task(**kw), model=model, log_dir=log_dir, display="none", log_level="error",
        max_connections=connections, max_samples=max_samples, max_retries=3, timeout=120,
        log_realtime=args.log_realtime,
    )
    return logs[0].location


def _warm_up(args: argparse.Namespace, model: str, log_dir: str) -> None:
    """Imports, entry points and the registry, outside the measurement."""
    make_task, _ = _make_task(args.task)
    inspect_eval(make_task(n_games=1), model=model, log_dir=log_dir, display="none", log_level="error")
    reset_gauges()


def worker(args: argparse.Namespace) -> None:
    """One shard in its own process: warm up, say ready, wait for go, run, report."""
    start, end = args.worker
    model = _model(args)
    log_dir = args.log_dir or tempfile.mkdtemp(prefix="load_bench_")
    _warm_up(args, model, log_dir)
    print("READY", flush=True)
    sys.stdin.readline()
    c0 = time.process_time()
    location = _run(args, model, start, end, args.connections, args.max_samples or (end - start), log_dir)
    print(json.dumps({"location": location, "cpu": time.process_time() - c0,
                      "max_in_flight": scripted.MAX_IN_FLIGHT.get(MODEL, 0), "calls": scripted.CALLS.get(MODEL, 0)}),
          flush=True)


def start_server(args: argparse.Namespace) -> subprocess.Popen:
    import httpx

    server = subprocess.Popen(
        [sys.executable, "-m", "tests.reliability.fault_server", "--port", str(args.port),
         "--latency", str(args.latency)], cwd=ROOT,
    )
    for _ in range(200):
        try:
            httpx.get(f"http://127.0.0.1:{args.port}/v1/health", timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.1)
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--connections", type=int, default=64, help="in all (split across --processes)")
    parser.add_argument("--max-samples", type=int, default=None, help="per process; default: all its games")
    parser.add_argument("--processes", type=int, default=1,
                        help="shards of the experiment run as separate processes (one event loop per core)")
    parser.add_argument("--provider", choices=["inproc", "http"], default="inproc")
    parser.add_argument("--port", type=int, default=8931)
    parser.add_argument("--quiet-inspect-mlflow", action="store_true")
    parser.add_argument("--tracking", action="store_true",
                        help="our MLflow tracking on (the product's default), into a temporary SQLite store")
    parser.add_argument("--log-dir", default=None)
    parser.add_argument("--log-realtime", action=argparse.BooleanOptionalAction, default=SWEEP_LOG_REALTIME,
                        help="Inspect's live sample buffer for `inspect view` (default: as `impostor sweep`)")
    parser.add_argument("--task", choices=["game", "bare"], default="game",
                        help="bare: the same eight calls per sample with no game logic (benchmarks/bare_task.py)")
    parser.add_argument("--worker", type=int, nargs=2, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.quiet_inspect_mlflow:
        quiet_inspect_mlflow()
    if args.worker:
        worker(args)
        return
    if args.tracking:  # workers inherit the environment; the store is created here, before the clock starts
        from impostor_bench.tracking.store import get_client

        uri = f"sqlite:///{tempfile.mkdtemp(prefix='load_bench_mlflow_')}/mlflow.db"
        os.environ.update(IMPOSTOR_MLFLOW="1", MLFLOW_TRACKING_URI=uri, LITELLM_LOCAL_MODEL_COST_MAP="True")
        get_client(uri)
    if args.processes > 1 and args.task != "game":
        parser.error("--processes needs --task game (shards are game ranges)")
    _, score_name = _make_task(args.task)
    server = start_server(args) if args.provider == "http" else None
    log_dir = args.log_dir or tempfile.mkdtemp(prefix="load_bench_")
    ideal = max(8 * args.games * args.latency / args.connections, 5 * args.latency)
    P = args.processes
    bounds = [(i * args.games // P, (i + 1) * args.games // P) for i in range(P)]
    per_conn = args.connections // P
    procs: list[subprocess.Popen] = []
    sampler = RssSampler()
    try:
        if P == 1:
            model = _model(args)
            _warm_up(args, model, log_dir)
            sampler.start()
            c0, t0 = time.process_time(), time.perf_counter()
            try:
                locations = [_run(args, model, 0, args.games, args.connections,
                                  args.max_samples or args.games, log_dir)]
            finally:
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                sampler.stop()
            max_in_flight = scripted.MAX_IN_FLIGHT.get(MODEL, 0)
            calls = scripted.CALLS.get(MODEL, 0)
        else:
            base = [sys.executable, __file__, "--latency", str(args.latency), "--connections", str(per_conn),
                    "--provider", args.provider, "--port", str(args.port), "--log-dir", log_dir]
            if args.max_samples:
                base += ["--max-samples", str(args.max_samples)]
            if args.quiet_inspect_mlflow:
                base.append("--quiet-inspect-mlflow")
            base.append("--log-realtime" if args.log_realtime else "--no-log-realtime")
            for lo, hi in bounds:
                procs.append(subprocess.Popen(base + ["--worker", str(lo), str(hi)], stdin=subprocess.PIPE,
                                              stdout=subprocess.PIPE, text=True, cwd=ROOT))
            for p in procs:
                while p.stdout.readline().strip() != "READY":
                    pass
            sampler = RssSampler(pids=[p.pid for p in procs])
            sampler.start()
            t0 = time.perf_counter()
            for p in procs:
                p.stdin.write("go\n")
                p.stdin.flush()
            results = [json.loads(p.stdout.readline()) for p in procs]
            wall = time.perf_counter() - t0
            sampler.stop()
            for p in procs:
                p.wait()
            locations = [r["location"] for r in results]
            cpu = sum(r["cpu"] for r in results)
            max_in_flight = sum(r["max_in_flight"] for r in results)
            calls = sum(r["calls"] for r in results)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        if server is not None:
            server.terminate()
            server.wait()
    samples = [s for loc in locations for s in (read_eval_log(loc).samples or [])]
    statuses = [read_eval_log(loc, header_only=True).status for loc in locations]
    ids = [str(s.id) for s in samples]
    scored = [s for s in samples if s.scores and score_name in s.scores]
    errors = [s for s in samples if s.error]
    rss = sampler.samples
    peak = max(r for _, r in rss)
    n = len(rss)
    thirds = [rss[i * n // 3:(i + 1) * n // 3] for i in range(3)]
    third_means = [sum(r for _, r in t) / max(len(t), 1) / 2**20 for t in thirds]
    print(f"task {args.task}, provider {args.provider}, latency {args.latency}s, max_connections "
          f"{args.connections} in all, processes {P}, max_samples per process {args.max_samples or 'all'}, "
          f"log_realtime {args.log_realtime}, IMPOSTOR_GC={os.environ.get('IMPOSTOR_GC', '(tuned)')}, "
          f"MLflow tracking {'on' if os.environ.get('IMPOSTOR_MLFLOW') == '1' else 'off'}")
    print(f"machine: nproc {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}")
    print(f"status {statuses}; games {args.games}: samples {len(ids)}, unique {len(set(ids))}, "
          f"scored {len(scored)}, errors {len(errors)}")
    if args.provider == "inproc":
        print(f"provider calls {calls} (expected {8 * args.games}), max concurrent {max_in_flight} "
              f"(limit {args.connections})")
    print(f"wall {wall:.1f}s, CPU {cpu:.1f}s; ideal {ideal:.1f}s -> {wall / ideal:.2f}x ideal")
    label = "RSS" if P == 1 else f"RSS (sum of {P} workers)"
    print(f"{label}: start {rss[0][1] / 2**20:.0f} MiB, peak {peak / 2**20:.0f} MiB, end {rss[-1][1] / 2**20:.0f} MiB; "
          f"mean by thirds {third_means[0]:.0f} / {third_means[1]:.0f} / {third_means[2]:.0f} MiB")
    step = max(1, n // 12)
    print("RSS over time: " + ", ".join(f"{t:.0f}s {r / 2**20:.0f}" for t, r in rss[::step]))
    lost = args.games - len(set(ids))
    assert lost == 0 and len(ids) == len(set(ids)) and len(scored) == args.games, "lost or duplicated games"


if __name__ == "__main__":
    main()
