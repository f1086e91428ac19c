"""Benchmark: the full report on the paper-sized simulated dataset.

Simulates 756 experiments x 120 games (90,720 games; 9 models, 5 modes, 4
difficulties), writes the export, then times ``impostor report`` end to end in a
child process with 10,000 bootstrap replicates and records its wall time and peak
RSS (``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``).  Per-table times come from
the bundle's manifest.  The numbers go into benchmarks/RESULTS.md, section
"## Report on 90,720 simulated games" (other sections are left alone).

    python benchmarks/report_bench.py [--bootstrap-reps 10000] [--no-write] [--keep DIR]

Targets: <= 60 s wall and <= 4 GB peak RSS on the 2-core reference machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SECTION = "## Report on 90,720 simulated games"
TARGET_WALL_S = 60.0
TARGET_RSS_GB = 4.0


def machine() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor() or "unknown"
    ram_gb = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram_gb = int(line.split()[1]) / 1024**2
                break
    except OSError:
        pass
    try:
        nproc = int(subprocess.run(["nproc"], capture_output=True, text=True, check=True).stdout.strip())
    except Exception:  # noqa: BLE001
        nproc = os.cpu_count()
    return {"nproc": nproc, "cpu": cpu, "ram_gb": ram_gb, "python": platform.python_version(),
            "system": f"{platform.system()} {platform.release()}"}


def run(args) -> dict:
    from impostor_bench.analysis.io import write_tables
    from impostor_bench.analysis.sim.simulate import simulate_games

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="report-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    export, out = work / "export", work / "report"
    shutil.rmtree(out, ignore_errors=True)

    t0 = time.perf_counter()
    games, players, models = simulate_games(args.experiments, args.games, seed=args.seed)
    t_sim = time.perf_counter() - t0
    t0 = time.perf_counter()
    write_tables(export, games, players, models)
    t_write = time.perf_counter() - t0
    n_games = len(games)
    del games, players

    cmd = [sys.executable, "-m", "impostor_bench.cli", "report", "--parquet", str(export), "--out", str(out),
           "--seed", str(args.seed), "--bootstrap-reps", str(args.bootstrap_reps)]
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    print(f"[bench] {n_games:,} games simulated in {t_sim:.1f} s, written in {t_write:.1f} s; running: "
          f"impostor report --bootstrap-reps {args.bootstrap_reps}", flush=True)
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    rss_gb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024**2  # KiB on Linux
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stderr[-4000:])
        raise SystemExit(f"[bench] impostor report failed with exit code {proc.returncode}")
    manifest = json.loads((out / "manifest.json").read_text())
    load_s = None
    m = re.search(r"loaded in ([\d.]+) s", proc.stderr)
    if m:
        load_s = float(m.group(1))
    tables = sorted(manifest["tables"], key=lambda t: -t["seconds"])
    res = {
        "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "games": n_games, "experiments": args.experiments, "games_per_experiment": args.games,
        "bootstrap_reps": manifest["bootstrap_reps"], "permutation_reps": manifest["permutation_reps"],
        "simulate_s": t_sim, "write_s": t_write, "wall_s": wall, "peak_rss_gb": rss_gb,
        "load_s": load_s, "build_report_s": manifest["wall_seconds"],
        "tables_s": sum(t["seconds"] for t in manifest["tables"]),
        "n_tables": len(manifest["tables"]), "n_figures": len(manifest["figures"]),
        "errors": manifest["errors"], "exit_code": proc.returncode,
        "slowest": [(t["name"], t["seconds"]) for t in tables[:6]],
        "packages": manifest["packages"],
        "loadavg": (load_before, os.getloadavg()[0]),
    }
    res["ok"] = wall <= TARGET_WALL_S and rss_gb <= TARGET_RSS_GB and not manifest["errors"]
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return res


def section(r: dict) -> str:
    mc = r["machine"]
    slow = ", ".join(f"{n} {s:.1f} s" for n, s in r["slowest"])
    verdict = "meets" if r["ok"] else "MISSES"
    pk = r["packages"]
    return f"""{SECTION}

`python benchmarks/report_bench.py` ({r['date_utc']}): {r['games']:,} simulated games
({r['experiments']} experiments x {r['games_per_experiment']}; 9 models, 5 modes, 4 difficulties;
paper-like true effects) through `impostor report --parquet DIR --out OUT` in a child process,
{r['bootstrap_reps']:,} bootstrap and {r['permutation_reps']:,} permutation replicates.

| measure | value |
|---|---:|
| report wall time, end to end (process start to exit) | {r['wall_s']:.1f} s |
| peak RSS of the report process | {r['peak_rss_gb']:.2f} GB |
| of which: loading + validating the Parquet export | {r['load_s'] if r['load_s'] is not None else float('nan'):.1f} s |
| of which: `build_report` (tables, figures, bundle) | {r['build_report_s']:.1f} s |
| of which: all {r['n_tables']} tables | {r['tables_s']:.1f} s |
| simulating the 90,720 games (not in the wall time) | {r['simulate_s']:.1f} s |
| writing the export (not in the wall time) | {r['write_s']:.1f} s |
| figures drawn | {r['n_figures']} |
| table errors | {len(r['errors'])} |

Slowest tables: {slow}.

Target (<= {TARGET_WALL_S:.0f} s wall, <= {TARGET_RSS_GB:.0f} GB RSS): **{verdict}** it.

Machine: {mc['nproc']} CPUs (`nproc`), {mc['cpu']}, {mc['ram_gb']:.1f} GB RAM, {mc['system']};
1-minute load average {r['loadavg'][0]:.1f} before / {r['loadavg'][1]:.1f} after the run (a shared machine:
other work ran alongside, so the wall time is an upper bound);
Python {mc['python']}, pandas {pk.get('pandas')}, numpy {pk.get('numpy')}, statsmodels {pk.get('statsmodels')},
matplotlib {pk.get('matplotlib')}, pyarrow {pk.get('pyarrow')}.
"""


def write_section(path: Path, text: str, header: str = SECTION) -> None:
    """Replace (or append) the section starting with ``header``, leaving every other section as it is."""
    old = path.read_text() if path.exists() else "# Benchmark results\n"
    lines = old.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if ln.strip() == header), None)
    if start is None:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        new = "".join(lines[:start]) + text + ("\n" if end < len(lines) else "") + "".join(lines[end:])
    path.write_text(new)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--experiments", type=int, default=756)
    ap.add_argument("--games", type=int, default=120)
    ap.add_argument("--bootstrap-reps", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", metavar="DIR", help="keep the export and the bundle in DIR")
    ap.add_argument("--no-write", action="store_true", help="do not update benchmarks/RESULTS.md")
    ap.add_argument("--results", default=str(ROOT / "benchmarks" / "RESULTS.md"))
    args = ap.parse_args(argv)
    r = run(args)
    text = section(r)
    print(text)
    if not args.no_write:
        write_section(Path(args.results), text)
        print(f"[bench] wrote section to {args.results}")
    return 0 if r["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
