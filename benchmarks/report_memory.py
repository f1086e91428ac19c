"""Where the report's memory goes: ``impostor report`` with a per-table memory trace.

    python benchmarks/report_memory.py report --parquet EXPORT --out OUT [report options]
    /usr/bin/time -v python benchmarks/report_memory.py report ...     # + the kernel's peak

Runs the ordinary command line in this process and prints to stderr, for every table computed
(nested tables, e.g. those ``inference`` asks for, indented under it):

    [mem] <table>  peak <before> -> <after>  rss <before> -> <after>  <seconds>

(peak = ``ru_maxrss``, which only grows, so a table that raises it is one that set a new peak),
and at the end the highest RSS a sampler thread (every 20 ms) saw while each table was the
innermost one running, ``[top] <table> max sampled RSS``: the tables that make the peak, also
after a higher one. Numbers in MiB. Export from ``report_bench.py --keep DIR`` (DIR/export).
"""

from __future__ import annotations

import resource
import sys
import threading
import time
from pathlib import Path

import psutil  # type: ignore[import-untyped]

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

_proc = psutil.Process()
_stack = ["(outside tables)"]
_top: dict[str, float] = {}


def _peak() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _rss() -> float:
    return _proc.memory_info().rss / 2**20


def _sample() -> None:
    while True:
        r, k = _rss(), _stack[-1]
        if r > _top.get(k, 0.0):
            _top[k] = r
        time.sleep(0.02)


def _trace_tables() -> None:
    from impostor_bench.analysis.stats import TABLES

    depth = [0]
    for name, fn in TABLES.items():
        orig = fn.compute

        def wrapped(a, c, _orig=orig, _name=name):
            p0, r0, t0 = _peak(), _rss(), time.perf_counter()
            depth[0] += 1
            _stack.append(_name)
            try:
                return _orig(a, c)
            finally:
                _stack.pop()
                depth[0] -= 1
                print(f"[mem] {'  ' * depth[0]}{_name:28s} peak {p0:6.0f} -> {_peak():6.0f}  rss {r0:6.0f} -> "
                      f"{_rss():6.0f}  {time.perf_counter() - t0:6.1f} s", file=sys.stderr, flush=True)

        fn.compute = wrapped


def main() -> int:
    threading.Thread(target=_sample, daemon=True).start()
    _trace_tables()
    print(f"[mem] imports: peak {_peak():.0f} rss {_rss():.0f}", file=sys.stderr, flush=True)
    from impostor_bench.cli import main as cli

    rc = 1
    try:
        rc = cli(sys.argv[1:])
    finally:
        print(f"[mem] end: peak {_peak():.0f} rss {_rss():.0f}", file=sys.stderr, flush=True)
        for k, v in sorted(_top.items(), key=lambda kv: -kv[1])[:15]:
            print(f"[top] {k:28s} max sampled RSS {v:6.0f}", file=sys.stderr, flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
