"""One process plays an experiment of a log dir at a time: a lease per experiment.

The same sweep started twice at once (two terminals, one config) played every game twice:
double the API cost, two MLflow runs per experiment, and two logs per task that later runs
could not reconcile.  Each launch now leases every experiment it is about to play before its
first game: a lock file per experiment under ``LOG_DIR/.leases`` held with ``flock`` for as
long as the process runs.  A second launch finds an experiment held and is refused in one line
naming the holder (pid, host, start time).

The kernel drops a ``flock`` lock when its holder exits, however it ends (``kill -9``, a lost
node), so a lease never outlives its process and an interrupted sweep resumes with the same
command: nothing to clean up, no timeout to wait out.  Locks go through the file system that
holds the log dir; on NFS, Linux maps ``flock`` to NFS byte-range locks (lockd / NFSv4),
which cover processes on different hosts.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import socket
import time
from pathlib import Path
from typing import Iterable, Iterator

from impostor_bench.core.errors import ImpostorError

LEASE_DIR = ".leases"


def _holder(fd: int) -> str:
    """Who holds a lease, from what its holder wrote into the lock file."""
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        info = json.loads(os.read(fd, 4096).decode("utf-8", "replace") or "{}")
        return (f"pid {info.get('pid', '?')} on {info.get('host', '?')}, "
                f"started {info.get('started', '?')}")
    except (OSError, ValueError, AttributeError):
        return "another process"


@contextlib.contextmanager
def experiment_leases(log_dir: Path, experiments: Iterable[str], sweep: str) -> Iterator[None]:
    """Hold a lease on each experiment (its label) in ``log_dir`` for the ``with`` block; raise
    ImpostorError, holding none, when another process holds any of them."""
    folder = Path(log_dir) / LEASE_DIR
    folder.mkdir(parents=True, exist_ok=True)
    held: list[int] = []
    me = json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                     "started": time.strftime("%Y-%m-%d %H:%M:%S %Z")})
    try:
        labels = sorted(set(experiments))  # one order for every launch
        for label in labels:
            name = hashlib.sha256(label.encode()).hexdigest()[:32] + ".lock"
            fd = os.open(folder / name, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                who = _holder(fd)
                os.close(fd)
                raise ImpostorError(
                    f"{log_dir}: sweep '{sweep}' is already being played there ({who}: experiment {label}); "
                    f"fix: wait for that run to finish (or stop it), then run the same command to resume") from None
            except OSError as exc:
                os.close(fd)
                raise ImpostorError(f"{folder}: cannot lock {name} ({exc.strerror or exc}); fix: put the log dir "
                                    f"on a file system with file locks (--log-dir)") from exc
            held.append(fd)
            os.ftruncate(fd, 0)
            os.pwrite(fd, me.encode(), 0)
        yield
    finally:
        for fd in held:
            os.close(fd)  # closing the last descriptor drops the lock
