"""Reading an input file: only a regular file, and only up to a size cap.

A path the user hands the project may name something that is not a file: a FIFO
(``mkfifo EXPORT/games.parquet``) blocks a reader for ever, a link to ``/dev/zero`` or
``/dev/urandom`` reads until memory runs out, a directory fails deep inside a library.
Every file the analysis and the report read goes through :func:`regular_file` (checked,
then read by a library that takes a path: Parquet) or :func:`read_bytes` (opened without
blocking, checked on the open descriptor, read to the cap plus one byte): an input that is
not a regular file of at most ``max_bytes`` is one :class:`ImpostorError` line naming the
file and the fix, before anything waits or allocates.

Plain Python: no Inspect, MLflow or pandas import.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from impostor_bench.core.errors import ImpostorError

#: The largest table file read (an export at 10x the paper's size is a few hundred MB).
MAX_TABLE_BYTES = 8 * 1024**3
#: The largest small side file read whole (models.csv, simulated.json, manifests).
MAX_SIDE_FILE_BYTES = 64 * 1024**2


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _check(st: os.stat_result, shown: str, max_bytes: int, fix: str) -> int:
    """The file's size, or the one-line error for what it is instead."""
    if not stat.S_ISREG(st.st_mode):
        raise ImpostorError(f"{shown}: is {_kind(st.st_mode)}, not a regular file; fix: {fix}")
    if st.st_size > max_bytes:
        raise ImpostorError(f"{shown}: is {st.st_size:,} bytes, over the {max_bytes:,}-byte limit of this "
                            f"input; fix: {fix}")
    return st.st_size


def regular_file(path: str | Path, shown: str, max_bytes: int, fix: str) -> int:
    """The size of ``path`` when it is (or links to) a regular file of at most ``max_bytes``;
    otherwise one :class:`ImpostorError` line (a missing file included).  For readers that take
    a path (pyarrow): nothing is opened here, so a FIFO cannot block."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ImpostorError(f"{shown}: file not found; fix: {fix}") from None
    except OSError as exc:
        raise ImpostorError(f"{shown}: cannot read ({exc.strerror or exc}); fix: {fix}") from None
    return _check(st, shown, max_bytes, fix)


def read_bytes(path: str | Path, shown: str, max_bytes: int, fix: str) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``.  Opened with ``O_NONBLOCK`` (opening a
    FIFO returns at once) and checked on the open descriptor (the file checked is the file read);
    at most ``max_bytes + 1`` bytes are read (a file that grows while read is refused)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise ImpostorError(f"{shown}: file not found; fix: {fix}") from None
    except OSError as exc:
        raise ImpostorError(f"{shown}: cannot read ({exc.strerror or exc}); fix: {fix}") from None
    with os.fdopen(fd, "rb") as fh:
        _check(os.fstat(fd), shown, max_bytes, fix)
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ImpostorError(f"{shown}: grew past the {max_bytes:,}-byte limit of this input while read; fix: {fix}")
    return data
