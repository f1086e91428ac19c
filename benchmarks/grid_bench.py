"""The paper's whole grid: configs/paper.yaml's 756 experiments / 90,720 games as N
shard processes into a PostgreSQL-backed ``impostor tracking-server``, with a kill and an outage.

    python benchmarks/grid_bench.py --out /srv/grid --latency 1 --connections 128      # the full grid
    python benchmarks/grid_bench.py --out /tmp/g --reduced --latency 1 --connections 16  # 36 experiments

Each shard is ``impostor sweep CONFIG --shard i/N --log-dir OUT/logs/shard-i`` (its own process
and logs); the config is paper.yaml with each model replaced by ``reliability/<alias>``, the
in-process scripted player answering after ``--latency`` seconds (benchmarks/grid_players.py:
nine players of different skill). Midway (``--kill-at``: a fraction of its experiments finished) shard 1 is SIGKILLed and started
again with the same command (it must resume: logs of experiments finished before the kill must
be reused, not replayed); later (``--outage-at`` of all experiments finished) the tracking server is stopped for
``--outage-s`` seconds and started again on the same database and port. At the end:
``impostor export --experiment`` from the server and ``impostor report --parquet`` on the export,
and the checks: every planned game exactly once, one FINISHED run per experiment, report built
without errors. The server requires a login (MLflow basic-auth; ``--no-auth`` to compare): the
shards get the generated admin login through MLflow's variables, and the checks add that a request
without it gets 401 and that the password is in no log, export or artifact. RSS of every process (shards with their children, the mlflow server, PostgreSQL)
and the load average are sampled every ``--sample-s`` seconds; peaks per process are reported.

Ideal (critical path, as benchmarks/load_bench.py): a shard's provider serves at most C calls at
once (one connection pool for the scripted provider per process), so its G games (8 G calls) need
8 G latency / C seconds; ideal = max over shards of max(8 G latency / C, 5 latency).
Writes OUT/grid_bench.json and prints a summary.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
EXPERIMENT = "grid-bench"
IMPOSTOR = [str(Path(sys.executable).parent / "impostor")]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def write_config(out: Path, args: argparse.Namespace) -> Path:
    cfg = yaml.safe_load((ROOT / "configs/paper.yaml").read_text())
    models = [f"reliability/{m}" for m in cfg["models"]]
    cfg.update(name="grid", models=models, imports=["benchmarks.grid_players"], output_dir=str(out / "logs"),
               tracking={"experiment": args.experiment})
    cfg["concurrency"] = {"max_connections": args.connections, "max_samples": args.max_samples,
                          "max_tasks": args.max_tasks}
    if args.reduced:
        cfg.update(models=models[:3], difficulties=cfg["difficulties"][:2], games_per_experiment=args.reduced_games)
    path = out / "grid.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


class Server:
    """``impostor tracking-server`` on a fixed port; stop() and start() again keep its database."""

    def __init__(self, root: Path, port: int, workers: int, env: dict, auth: bool = True):
        self.root, self.port, self.workers, self.env, self.auth = root, port, workers, env, auth
        self.proc: subprocess.Popen | None = None
        self.uri = f"http://127.0.0.1:{port}"

    def start(self) -> float:
        t0 = time.time()
        out = open(self.root.parent / "server.out", "a")
        self.proc = subprocess.Popen(IMPOSTOR + ["tracking-server", "--dir", str(self.root), "--port", str(self.port),
                                                 "--workers", str(self.workers),
                                                 "--auth" if self.auth else "--no-auth"],
                                     env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        import httpx

        while True:
            try:
                if httpx.get(f"{self.uri}/health", timeout=2).status_code == 200:
                    return time.time() - t0
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.time() - t0 > 300:
                raise SystemExit(f"tracking-server did not come up: {(self.root.parent / 'server.out').read_text()[-2000:]}")
            time.sleep(0.5)

    def login(self) -> dict:
        """MLflow's client variables for the admin login the server generated."""
        if not self.auth:
            return {}
        from impostor_bench.tracking.serverauth import ADMIN_USER, Auth

        return {"MLFLOW_TRACKING_USERNAME": ADMIN_USER, "MLFLOW_TRACKING_PASSWORD": Auth(self.root).password()}

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=120)

    def postmaster(self) -> int | None:
        try:
            return int((self.root / "pgdata/postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None


class Sampler(threading.Thread):
    """Peak RSS per process of each named group (a root pid and its descendants), load average."""

    def __init__(self, interval: float):
        super().__init__(daemon=True)
        self.interval = interval
        self.roots: dict[str, callable] = {}  # group -> () -> pid or None
        self.peak: dict[tuple[str, int], dict] = {}
        self.group_peak: dict[str, int] = {}
        self.load: list[tuple[float, float]] = []
        self._halt = threading.Event()

    def run(self) -> None:
        import psutil

        t0 = time.time()
        while not self._halt.is_set():
            self.load.append((time.time() - t0, os.getloadavg()[0]))
            for group, root in list(self.roots.items()):
                pid = root()
                if not pid:
                    continue
                try:
                    p = psutil.Process(pid)
                    procs = [p] + p.children(recursive=True)
                except psutil.Error:
                    continue
                total = 0
                for q in procs:
                    try:
                        rss = q.memory_info().rss
                        ct = q.cpu_times()
                        name = " ".join(q.cmdline()[:4])[-90:] or q.name()
                    except psutil.Error:
                        continue
                    total += rss
                    e = self.peak.setdefault((group, q.pid), {"group": group, "pid": q.pid, "cmd": name, "peak": 0,
                                                                    "cpu": 0.0})
                    e["peak"] = max(e["peak"], rss)
                    e["last"] = rss
                    e["cpu"] = max(e["cpu"], ct.user + ct.system)
                self.group_peak[group] = max(self.group_peak.get(group, 0), total)
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join()


class Finished:
    """Successful Inspect logs of one shard's log dir; a file is re-read only when it changed."""

    def __init__(self, log_dir: Path):
        self.log_dir = log_dir
        self._seen: dict[str, tuple[float, int, str | None, str | None]] = {}  # name -> (mtime, size, status, task)

    def scan(self) -> dict[str, tuple[str, float, int]]:
        """task_id -> (file, mtime, size) of every successful log."""
        from inspect_ai.log import read_eval_log

        out = {}
        for p in sorted(self.log_dir.glob("*.eval")):
            try:
                st = p.stat()
                old = self._seen.get(p.name)
                if old is None or old[:2] != (st.st_mtime, st.st_size):
                    h = read_eval_log(str(p), header_only=True)
                    old = self._seen[p.name] = (st.st_mtime, st.st_size, h.status, h.eval.task_id)
            except Exception:  # noqa: BLE001 - being written
                continue
            if old[2] == "success":
                out[old[3]] = (p.name, old[0], old[1])
        return out


def timed(cmd: list[str], env: dict, sampler: Sampler, group: str, logfile: Path) -> tuple[int, float]:
    t0 = time.time()
    with open(logfile, "w") as fh:
        p = subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, cwd=ROOT)
        sampler.roots[group] = lambda: p.pid if p.poll() is None else None
        rc = p.wait()
    return rc, time.time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="new directory (PostgreSQL's user must be able to enter it)")
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--connections", type=int, default=128, help="max_connections per shard")
    ap.add_argument("--max-samples", type=int, default=30, help="games in flight per experiment")
    ap.add_argument("--max-tasks", type=int, default=8, help="experiments in flight per shard")
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2, help="mlflow server workers")
    ap.add_argument("--port", type=int, default=5077)
    ap.add_argument("--experiment", default=EXPERIMENT)
    ap.add_argument("--auth", action=argparse.BooleanOptionalAction, default=True,
                    help="the server requires a login (MLflow basic-auth; default on); the shards use it")
    ap.add_argument("--reduced", action="store_true", help="3 models x 2 difficulties = 36 experiments")
    ap.add_argument("--reduced-games", type=int, default=20)
    ap.add_argument("--kill-at", type=float, default=0.35, help="SIGKILL shard 1 once this fraction of its experiments finished")
    ap.add_argument("--outage-at", type=float, default=0.55, help="then stop the server once this fraction of all experiments finished")
    ap.add_argument("--outage-s", type=float, default=60)
    ap.add_argument("--sample-s", type=float, default=2.0)
    ap.add_argument("--stop-at", type=float, default=None,
                    help="SIGKILL every shard after this many seconds (a run that cannot finish in the time there "
                         "is); the checks then compare the export with the experiments finished by then")
    args = ap.parse_args()

    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=False)
    os.chmod(out, 0o755)
    cfg_path = write_config(out, args)
    from impostor_bench.sweep import plan

    plans = [plan(cfg_path, f"{i}/{args.shards}") for i in range(1, args.shards + 1)]
    games = [p.games for p in plans]
    n_exps = sum(len(p.experiments) for p in plans)
    ideal = max(max(8 * g * args.latency / args.connections, 5 * args.latency) for g in games)
    env = dict(os.environ, PYTHONPATH=str(ROOT), IMPOSTOR_GRID_LATENCY=str(args.latency), HF_HUB_OFFLINE="1",
               LITELLM_LOCAL_MODEL_COST_MAP="True", MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR="false")
    env.pop("IMPOSTOR_MLFLOW", None)
    env.pop("MLFLOW_TRACKING_URI", None)
    server = Server(out / "tracking", args.port, args.workers, env, auth=args.auth)
    sampler = Sampler(args.sample_s)
    sampler.roots["server"] = lambda: server.proc.pid if server.proc and server.proc.poll() is None else None
    sampler.roots["postgres"] = server.postmaster
    log(f"{n_exps} experiments, {sum(games):,} games in {args.shards} shards {games}; latency {args.latency}s, "
        f"{args.connections} connections per shard; ideal {ideal:.0f}s; traces "
        f"{os.environ.get('IMPOSTOR_MLFLOW_TRACES', 'default (on)')}; load {os.getloadavg()}")
    r = {"args": vars(args), "experiments": n_exps, "games": sum(games), "ideal_s": ideal, "events": []}
    r["server_start_s"] = server.start()
    log(f"tracking server up at {server.uri} in {r['server_start_s']:.1f}s (auth {'on' if args.auth else 'off'})")
    senv = dict(env, MLFLOW_TRACKING_URI=server.uri, **server.login())
    os.environ.update(server.login())  # the checks' MlflowClient in this process
    shards: dict[int, subprocess.Popen] = {}
    starts: dict[int, float] = {}

    def launch(i: int) -> None:
        ld = out / "logs" / f"shard-{i}"
        fh = open(out / f"shard-{i}.out", "a")
        shards[i] = subprocess.Popen(IMPOSTOR + ["sweep", str(cfg_path), "--shard", f"{i}/{args.shards}",
                                                 "--log-dir", str(ld), "--display", "none"],
                                     cwd=ROOT, env=senv, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        sampler.roots[f"shard-{i}"] = lambda p=shards[i]: p.pid if p.poll() is None else None

    sampler.start()
    t0 = time.time()
    for i in range(1, args.shards + 1):
        launch(i)
        starts[i] = t0
    ends: dict[int, float] = {}
    killed = outage = False
    before_kill: dict = {}
    found = {i: Finished(out / "logs" / f"shard-{i}") for i in shards}
    n_mine = {i: len(plans[i - 1].experiments) for i in shards}
    last_note = 0.0
    while len(ends) < args.shards:
        time.sleep(2)
        el = time.time() - t0
        for i, p in shards.items():
            if i not in ends and p.poll() is not None:
                ends[i] = el
                log(f"shard {i} exited {p.returncode} at {el:.0f}s")
                r["events"].append({"t": el, "event": f"shard {i} exit {p.returncode}"})
        done = {i: len(found[i].scan()) for i in shards}
        frac = sum(done.values()) / n_exps
        if el - last_note >= 60:
            last_note = el
            rss = {g: round(max((e["last"] for (gg, _), e in sampler.peak.items() if gg == g), default=0) / 2**20)
                   for g in ("shard-1", "shard-2")}
            log(f"{el:.0f}s: experiments finished {done} of {n_mine}; shard RSS now {rss} MiB; "
                f"load {os.getloadavg()[0]:.1f}")
            r["events"].append({"t": el, "event": "progress", "finished": dict(done), "load": os.getloadavg()[0],
                                "rss_mib": rss})
        if args.stop_at and el >= args.stop_at:
            r["stopped_at"] = {"t": el, "finished": dict(done)}
            for i, p in shards.items():
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
                    ends[i] = el
            log(f"stopped every shard at {el:.0f}s (--stop-at): experiments finished {done}")
            r["finished_logs"] = sum(done.values())
            break
        if not killed and done[1] >= args.kill_at * n_mine[1] and 1 not in ends:
            before_kill = found[1].scan()
            os.killpg(shards[1].pid, signal.SIGKILL)
            shards[1].wait()
            launch(1)
            killed = True
            log(f"SIGKILLed shard 1 at {el:.0f}s ({len(before_kill)} experiments finished) and restarted it")
            r["events"].append({"t": el, "event": "kill shard 1", "finished_experiments": len(before_kill)})
        if killed and not outage and frac >= args.outage_at and len(ends) < args.shards:
            server.stop()
            t_down = time.time()
            log(f"tracking server stopped at {el:.0f}s ({frac:.0%} of the experiments finished)")
            time.sleep(args.outage_s)
            up = server.start()
            r["events"].append({"t": el, "event": "server outage", "down_s": time.time() - t_down, "restart_s": up})
            outage = True
            log(f"tracking server back after {time.time() - t_down:.0f}s down (restart took {up:.1f}s)")
    wall = time.time() - t0
    r["wall_s"] = wall
    r["shards"] = {i: {"rc": shards[i].returncode, "end_s": ends[i], "games": games[i - 1],
                       "games_per_s": games[i - 1] / ends[i]} for i in shards}
    log(f"all shards done in {wall:.0f}s = {wall / ideal:.2f}x ideal")

    # resumed, not replayed: logs of experiments finished before the kill are untouched and alone
    after = found[1].scan()
    replayed = [t for t, v in before_kill.items() if after.get(t) != v]
    r["resume"] = {"finished_before_kill": len(before_kill), "replayed_or_changed": len(replayed)}

    exp_dir = out / "export"
    r["export_rc"], r["export_s"] = timed(IMPOSTOR + ["export", "--experiment", args.experiment, "--tracking-uri",
                                                      server.uri, "--out", str(exp_dir)], senv, sampler, "export",
                                          out / "export.out")
    log(f"export rc {r['export_rc']} in {r['export_s']:.1f}s")
    r["report_rc"], r["report_s"] = timed(IMPOSTOR + ["report", "--parquet", str(exp_dir), "--out",
                                                      str(out / "report")], senv, sampler, "report", out / "report.out")
    log(f"report rc {r['report_rc']} in {r['report_s']:.1f}s")
    checks(r, out, server.uri, args.experiment, plans)
    from impostor_bench.tracking.server import Postgres, database_size

    pg = Postgres(out / "tracking", port=int((out / "tracking/pgdata/postmaster.pid").read_text().splitlines()[3]))
    r["db_mb"] = database_size(pg) / 1e6
    r["artifacts_mb"] = sum(p.stat().st_size for p in (out / "tracking/artifacts").rglob("*") if p.is_file()) / 1e6
    r["logs_mb"] = sum(p.stat().st_size for p in (out / "logs").rglob("*") if p.is_file()) / 1e6
    sampler.stop()
    server.stop()
    r["peak_rss_mb"] = sorted(({**e, "peak": round(e["peak"] / 2**20)} for e in sampler.peak.values()),
                              key=lambda e: -e["peak"])[:40]
    r["group_peak_rss_mb"] = {g: round(v / 2**20) for g, v in sampler.group_peak.items()}
    r["group_cpu_s"] = {}  # CPU seconds seen per group (processes sampled at least once; short-lived ones missed)
    for e in sampler.peak.values():
        r["group_cpu_s"][e["group"]] = round(r["group_cpu_s"].get(e["group"], 0) + e["cpu"], 1)
    r["processes_seen"] = {g: sum(1 for e in sampler.peak.values() if e["group"] == g) for g in r["group_cpu_s"]}
    loads = [x for _, x in sampler.load]
    r["load"] = {"mean": sum(loads) / len(loads), "max": max(loads),
                 "series": [(round(t), x) for t, x in sampler.load[:: max(1, len(loads) // 40)]]}
    (out / "grid_bench.json").write_text(json.dumps(r, indent=2, default=str))
    summary = {k: r[k] for k in ("experiments", "games", "ideal_s", "wall_s", "shards", "resume", "export_s",
                                 "report_s", "db_mb", "artifacts_mb", "logs_mb", "group_peak_rss_mb", "group_cpu_s",
                                 "processes_seen", "checks")}
    summary["x_ideal"] = wall / ideal
    summary["load_mean_max"] = (r["load"]["mean"], r["load"]["max"])
    print(json.dumps(summary, indent=1, default=str))
    for e in r["peak_rss_mb"][:15]:
        print(f"  {e['group']:<9}{e['pid']:>8}{e['peak']:>7} MiB  {e['cmd']}")
    ok = all(v is True for v in r["checks"].values() if isinstance(v, bool))
    print("ALL CHECKS PASSED" if ok else "CHECKS FAILED")
    sys.exit(0 if ok else 1)


def checks(r: dict, out: Path, uri: str, experiment: str, plans: list) -> None:
    import mlflow
    import pandas as pd

    c: dict = {}
    planned = {e.label: e.n_games for p in plans for e in p.experiments}
    try:
        g = pd.read_parquet(out / "export/games.parquet")
        pl = pd.read_parquet(out / "export/players.parquet")
        c["games_exported"] = len(g)
        c["games_unique"] = bool(g["game_id"].is_unique)
        c["games_all_planned"] = len(g) == sum(planned.values())
        if r.get("stopped_at"):  # stopped early: the export must hold exactly the finished experiments
            c["games_of_finished_experiments"] = len(g) == next(iter(planned.values())) * r["finished_logs"]
        per = g.groupby("experiment_id").size()
        c["experiments_in_export"] = len(per)
        c["every_experiment_full"] = len(per) == len(planned) and bool((per == next(iter(planned.values()))).all())
        c["players_4_per_game"] = len(pl) == 4 * len(g) and not pl.duplicated(["game_id", "seat"]).any()
    except Exception as exc:  # noqa: BLE001
        c["export_error"] = str(exc)[:300]
    client = mlflow.MlflowClient(uri)
    exp = client.get_experiment_by_name(experiment)
    runs, token = [], None
    while True:
        page = client.search_runs([exp.experiment_id], "tags.`impostor.kind` = 'experiment'", max_results=500,
                                  page_token=token)
        runs += list(page)
        token = page.token
        if not token:
            break
    statuses = pd.Series([x.info.status for x in runs]).value_counts().to_dict()
    keys = [x.data.tags.get("impostor.experiment_id") for x in runs]
    c["runs"] = len(runs)
    c["run_statuses"] = statuses
    c["runs_finished_one_per_experiment"] = (len(runs) == len(planned) == len(set(keys))
                                             and statuses.get("FINISHED", 0) == len(planned))
    if r.get("stopped_at"):
        fin = [x.data.tags.get("impostor.experiment_id") for x in runs if x.info.status == "FINISHED"]
        c["finished_runs_match_finished_logs"] = len(fin) == len(set(fin)) == r["finished_logs"]
    traced = sum(1 for x in runs if x.data.tags.get("impostor.traces_logged") == "1")
    c["runs_with_traces_tag"] = traced
    try:
        m = json.loads((out / "report/manifest.json").read_text())
        c["report_errors"] = m.get("errors")
        c["report_missing_tables"] = m.get("missing_tables")
        c["report_figures_not_drawn"] = m.get("figures_not_drawn")
        c["report_tables"] = len(m.get("tables", []))
        c["report_complete"] = not m.get("errors") and (out / "report/report.html").exists()
    except OSError as exc:
        c["report_complete"] = False
        c["report_error"] = str(exc)[:300]
    c["resumed_not_replayed"] = r["resume"]["replayed_or_changed"] == 0 and r["resume"]["finished_before_kill"] > 0
    c["shards_exit_0"] = all(s["rc"] == 0 for s in r["shards"].values())
    if r["args"]["auth"]:  # a request without the login is refused; the login is in no log or artifact
        import httpx

        c["unauthenticated_refused_401"] = httpx.get(f"{uri}/api/2.0/mlflow/experiments/search",
                                                     params={"max_results": 1}, timeout=10).status_code == 401
        secret = os.environ["MLFLOW_TRACKING_PASSWORD"].encode()
        leaks = [str(p) for root in (out / "logs", out / "export", out / "tracking/artifacts")
                 for p in root.rglob("*") if p.is_file() and _holds(p, secret)]
        leaks += [str(p) for p in out.glob("*.out") if secret in p.read_bytes()]
        c["login_in_no_log_or_artifact"] = not leaks
        if leaks:
            c["login_found_in"] = leaks[:5]
    r["checks"] = c


def _holds(path: Path, needle: bytes) -> bool:
    """Whether a file (or, for a zip such as an .eval log, any member) contains ``needle``."""
    import zipfile

    if needle in path.read_bytes():
        return True
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            return any(needle in z.read(i) for i in z.infolist())
    return False


if __name__ == "__main__":
    main()
