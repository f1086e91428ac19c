"""Benchmark: ``impostor simulate`` + ``impostor report`` from 1x to 10x the paper.

The paper's grid is 756 experiments x 120 games (90,720 games).  Size k replicates the
grid k times (``impostor simulate --experiments 756k``: experiment e plays cell
e mod 756, replicate e // 756), so 10x = 7,560 experiments, 907,200 games.  For each
size, in child processes, one after the other:

1. ``impostor simulate --out DIR/export`` (seed 0);
2. reading the export back: plain ``pyarrow`` (both files to pandas) and the report's
   loader (``impostor_bench.analysis.io.load_tables``: read + validate), in a fresh process;
3. ``impostor report --parquet DIR/export --out DIR/report`` (10,000 bootstrap replicates).

Each child's wall time, CPU time and peak RSS (``os.wait4``: that child alone) are
recorded, with the 1-minute load average before and after; per-table seconds come from
the bundle's manifest.  The machine is shared: CPU time is the steadier measure.

    python benchmarks/scale_bench.py [--sizes 1,2,5,10] [--bootstrap-reps 10000] [--no-write] [--keep DIR]

Target: at 10x, simulate + report <= 5 minutes and each process <= 4 GB peak RSS.
The section "## Scale: simulate + report, 1x to 10x the paper" of benchmarks/RESULTS.md is
replaced (other sections are left alone).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from report_bench import machine, write_section  # noqa: E402

SECTION = "## Scale: simulate + report, 1x to 10x the paper"
PAPER_EXPERIMENTS, GAMES = 756, 120
TARGET_S, TARGET_GB = 300.0, 4.0

READ = """
import sys, time
import pyarrow.parquet as pq
d = sys.argv[1]
t = time.perf_counter()
n = sum(len(pq.read_table(f"{d}/{f}").to_pandas()) for f in ("games.parquet", "players.parquet"))
t_arrow = time.perf_counter() - t
sys.path.insert(0, sys.argv[2])
from impostor_bench.analysis.io import load_tables
t = time.perf_counter()
data = load_tables(d)
print(t_arrow, time.perf_counter() - t, n)
"""


def child(cmd: list[str], log: Path) -> dict:
    """Run ``cmd``; wall, CPU and peak RSS of that process alone (os.wait4), load before/after."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "HF_HUB_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    with open(log, "w") as err, open(log.with_suffix(".out"), "w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=err)
        _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        sys.stderr.write(log.read_text()[-3000:])
        raise SystemExit(f"[scale] {' '.join(cmd[:4])} ... failed with exit code {proc.returncode}")
    return {"wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "rss_gb": ru.ru_maxrss / 1024**2,
            "load": (load0, os.getloadavg()[0]), "rc": proc.returncode}


def run_size(k: int, work: Path, reps: int) -> dict:
    d = work / f"x{k}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    exe = [sys.executable, "-m", "impostor_bench.cli"]
    print(f"[scale] {k}x: simulate {PAPER_EXPERIMENTS * k} experiments x {GAMES} games", flush=True)
    sim = child(exe + ["simulate", "--out", str(d / "export"), "--experiments", str(PAPER_EXPERIMENTS * k),
                       "--games", str(GAMES), "--seed", "0"], d / "simulate.log")
    files = {f: (d / "export" / f).stat().st_size for f in ("games.parquet", "players.parquet")}
    read = child([sys.executable, "-c", READ, str(d / "export"), str(ROOT)], d / "read.log")
    t_arrow, t_load, _ = (float(x) for x in (d / "read.out").read_text().split())
    print(f"[scale] {k}x: report", flush=True)
    rep = child(exe + ["report", "--parquet", str(d / "export"), "--out", str(d / "report"), "--seed", "0",
                       "--bootstrap-reps", str(reps)], d / "report.log")
    manifest = json.loads((d / "report" / "manifest.json").read_text())
    text = (d / "report.log").read_text()
    m = re.search(r"loaded in ([\d.]+) s", text)
    res = {"k": k, "games": manifest["data"]["games"], "experiments": manifest["data"]["experiments"],
           "simulate": sim, "report": rep, "read": read, "read_arrow_s": t_arrow, "read_load_tables_s": t_load,
           "parquet_mb": {f: b / 1e6 for f, b in files.items()},
           "load_s": float(m.group(1)) if m else None, "build_report_s": manifest["wall_seconds"],
           "tables": {t["name"]: t["seconds"] for t in manifest["tables"]},
           "n_figures": len(manifest["figures"]), "errors": manifest["errors"],
           "bootstrap_reps": manifest["bootstrap_reps"], "permutation_reps": manifest["permutation_reps"],
           "packages": manifest["packages"]}
    res["total_s"] = sim["wall_s"] + rep["wall_s"]
    res["ok"] = res["total_s"] <= TARGET_S and max(sim["rss_gb"], rep["rss_gb"]) <= TARGET_GB and not res["errors"]
    print(f"[scale] {k}x: simulate {sim['wall_s']:.1f} s (CPU {sim['cpu_s']:.1f} s) {sim['rss_gb']:.2f} GB, report "
          f"{rep['wall_s']:.1f} s (CPU {rep['cpu_s']:.1f} s) {rep['rss_gb']:.2f} GB, load {rep['load'][0]:.1f}/"
          f"{rep['load'][1]:.1f}", flush=True)
    return res


def section(rows: list[dict], stamp: str) -> str:
    mc = rows[0]["machine"]
    big = rows[-1]
    pk = big["packages"]
    lines = [SECTION, "",
             f"`python benchmarks/scale_bench.py` ({stamp}): the paper's grid replicated k times "
             f"(`impostor simulate --experiments {PAPER_EXPERIMENTS}k --games {GAMES} --seed 0`), then "
             f"`impostor report --parquet` with {big['bootstrap_reps']:,} bootstrap and "
             f"{big['permutation_reps']:,} permutation replicates; every step a child process "
             "(wall, CPU = user + system, peak RSS of that process alone).", "",
             "| size | games | experiments | simulate wall / CPU / RSS | report wall / CPU / RSS | "
             "simulate + report | load avg (report) | target |",
             "|---|---:|---:|---|---|---:|---|---|"]
    for r in rows:
        s, p = r["simulate"], r["report"]
        lines.append(f"| {r['k']}x | {r['games']:,} | {r['experiments']:,} | {s['wall_s']:.1f} s / {s['cpu_s']:.1f} s / "
                     f"{s['rss_gb']:.2f} GB | {p['wall_s']:.1f} s / {p['cpu_s']:.1f} s / {p['rss_gb']:.2f} GB | "
                     f"**{r['total_s']:.0f} s** | {p['load'][0]:.1f} → {p['load'][1]:.1f} | "
                     f"{'meets' if r['ok'] else 'MISSES'} |")
    lines += ["", "| size | Parquet on disk (games + players) | read: pyarrow to pandas | read + validate "
              "(`load_tables`) | peak RSS of the read | report: load | report: `build_report` |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        mb = r["parquet_mb"]
        lines.append(f"| {r['k']}x | {mb['games.parquet']:.1f} + {mb['players.parquet']:.1f} MB | "
                     f"{r['read_arrow_s']:.1f} s | {r['read_load_tables_s']:.1f} s | {r['read']['rss_gb']:.2f} GB | "
                     f"{r['load_s'] if r['load_s'] is not None else float('nan'):.1f} s | {r['build_report_s']:.1f} s |")
    names = sorted(big["tables"], key=lambda n: -big["tables"][n])
    lines += ["", f"Per-table seconds (from the manifests), slowest at {big['k']}x first:", "",
              "| table | " + " | ".join(f"{r['k']}x" for r in rows) + " |",
              "|---|" + "---:|" * len(rows)]
    for n in names:
        lines.append(f"| {n} | " + " | ".join(f"{r['tables'].get(n, float('nan')):.1f}" for r in rows) + " |")
    lines += ["| all tables | " + " | ".join(f"{sum(r['tables'].values()):.1f}" for r in rows) + " |", "",
              f"Target at 10x (simulate + report <= {TARGET_S:.0f} s, each process <= {TARGET_GB:.0f} GB): "
              f"**{'meets' if big['ok'] else 'MISSES'}** it (at {big['k']}x).", "",
              f"Machine: {mc['nproc']} CPUs (`nproc`), {mc['cpu']}, {mc['ram_gb']:.1f} GB RAM, {mc['system']}; shared "
              "with other engineers' jobs, so wall times are upper bounds (1-minute load averages in the table); "
              f"Python {mc['python']}, pandas {pk.get('pandas')}, numpy {pk.get('numpy')}, "
              f"statsmodels {pk.get('statsmodels')}, pyarrow {pk.get('pyarrow')}.", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,2,5,10", help="multiples of the paper's grid (default 1,2,5,10)")
    ap.add_argument("--bootstrap-reps", type=int, default=10_000)
    ap.add_argument("--keep", metavar="DIR", help="keep exports, bundles and logs in DIR")
    ap.add_argument("--json", metavar="FILE", help="also write the raw results as JSON")
    ap.add_argument("--no-write", action="store_true", help="do not update benchmarks/RESULTS.md")
    ap.add_argument("--results", default=str(ROOT / "benchmarks" / "RESULTS.md"))
    args = ap.parse_args(argv)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="scale-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for k in (int(x) for x in args.sizes.split(",")):
            r = run_size(k, work, args.bootstrap_reps)
            r["machine"] = machine()
            rows.append(r)
            if args.json:  # after every size, so a long run that is stopped keeps what it measured
                Path(args.json).write_text(json.dumps(rows, indent=2, default=str))
            if not args.keep:
                shutil.rmtree(work / f"x{k}", ignore_errors=True)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    rows.sort(key=lambda r: r["k"])  # any order given (e.g. 10,1 to have the largest first)
    text = section(rows, datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    print(text)
    if not args.no_write:
        write_section(Path(args.results), text, SECTION)
        print(f"[scale] wrote section to {args.results}")
    return 0 if rows[-1]["ok"] else 1  # the largest size


if __name__ == "__main__":
    sys.exit(main())
