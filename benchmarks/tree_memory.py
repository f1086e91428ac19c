"""Peak memory of a command and every process it forks (the report in two processes).

    python benchmarks/tree_memory.py [--trace FILE] -- python -m impostor_bench.cli report --parquet EXPORT ...

``/usr/bin/time``'s peak RSS is that of the largest single process, which under-counts a command
that forks a worker. This samples the whole process tree every 20 ms and prints, at the end,

    tree peak: PSS <MiB> (RSS sum <MiB>, largest process <MiB>), wall <s>

PSS (proportional set size, psutil's ``memory_full_info``) divides each shared page among the processes
that map it, so its sum is the memory the tree holds; the RSS sum counts a page the parent and the
forked child share twice (an upper bound). Numbers in MiB. ``--trace FILE`` writes every sample,
``seconds PSS-sum pid:PSS:RSS ...`` (KiB), to see which part of the run makes the peak.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import psutil  # type: ignore[import-untyped]


def main(argv: list[str]) -> int:
    trace = None
    if argv[:1] == ["--trace"]:
        trace, argv = open(argv[1], "w"), argv[2:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv)
    root = psutil.Process(proc.pid)
    peak = {"pss": 0, "rss": 0, "one": 0}
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            try:
                procs = [root, *root.children(recursive=True)]
            except psutil.NoSuchProcess:
                break
            pss = rss = one = 0
            seen: list[str] = []
            for p in procs:
                try:
                    mem = p.memory_full_info()  # PSS from /proc/PID/smaps_rollup (smaps where that fails)
                except (psutil.NoSuchProcess, psutil.AccessDenied):
                    continue
                r, p_pss = mem.rss // 1024, mem.pss // 1024
                pss += p_pss
                rss += r
                seen.append(f"{p.pid}:{p_pss}:{r}")
                one = max(one, r)
            if trace:
                trace.write(f"{time.perf_counter() - t0:.2f} {pss} {' '.join(seen)}\n")
            peak["pss"], peak["rss"], peak["one"] = max(peak["pss"], pss), max(peak["rss"], rss), max(peak["one"], one)
            stop.wait(0.02)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    rc = proc.wait()
    stop.set()
    t.join()
    if trace:
        trace.close()
    print(f"tree peak: PSS {peak['pss'] / 1024:.0f} MiB (RSS sum {peak['rss'] / 1024:.0f} MiB, largest process "
          f"{peak['one'] / 1024:.0f} MiB), wall {time.perf_counter() - t0:.1f} s, exit {rc}", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
