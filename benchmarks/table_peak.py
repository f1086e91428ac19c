"""Where one table's transient memory goes: the largest allocations alive near its peak.

    python benchmarks/table_peak.py EXPORT TABLE [--pre T1,T2]

Loads EXPORT (``report_bench.py --keep DIR``'s DIR/export), prepares the games, computes the tables
``--pre`` names first (what the report has computed before TABLE: e.g. ``--pre team_language`` for
``team_dynamics``, whose text measures it memoises), then computes TABLE under tracemalloc, taking a
snapshot each time the traced memory grows by 3% + 5 MB, and prints the traced peak and the eight
largest allocation sites of the last snapshot (their tracebacks' analysis and library frames).
tracemalloc sees numpy and Python allocations, not Arrow's.
"""
import argparse
import gc
import sys
import threading
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from impostor_bench.analysis import io  # noqa: E402
from impostor_bench.analysis.stats import TABLES  # noqa: E402,F401 - registers the tables
from impostor_bench.analysis.stats._base import prepared  # noqa: E402
from impostor_bench.analysis.stats.config import StatsConfig  # noqa: E402
from impostor_bench.analysis.stats.session import Analysis  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("export")
    ap.add_argument("table")
    ap.add_argument("--pre", default="")
    a = ap.parse_args()
    data = io.load_tables(a.export)
    io.release_reader_memory()
    session = Analysis(data, StatsConfig(seed=0, bootstrap_reps=10000, strict=True))
    prepared(session, need_players=True)
    for name in filter(None, a.pre.split(",")):
        session.table(name)
    gc.collect()
    tracemalloc.start(12)
    best: list = [0, None]
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            cur = tracemalloc.get_traced_memory()[0]
            if cur > best[0] * 1.03 + 5e6:
                best[0], best[1] = cur, tracemalloc.take_snapshot()
            time.sleep(0.005)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    session.table(a.table)
    stop.set()
    thread.join()
    cur, peak = tracemalloc.get_traced_memory()
    print(f"{a.table}: traced peak {peak / 2**20:.0f} MiB, after {cur / 2**20:.0f}, snapshot at {best[0] / 2**20:.0f}")
    if best[1] is None:
        return
    for stat in best[1].statistics("traceback")[:8]:
        print(f"--- {stat.size / 2**20:.1f} MiB in {stat.count} blocks")
        for line in stat.traceback.format()[-12:]:
            if "impostor_bench" in line or "site-packages" in line:
                print("   ", line.strip()[:160])


if __name__ == "__main__":
    main()
