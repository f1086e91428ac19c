"""Folders a command writes to (export --out, a sweep's log dir): checked before the work, created
with one line naming the folder and the fix instead of an ``OSError`` traceback."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from impostor_bench.core.errors import ImpostorError


def dir_problem(path: str | Path) -> Optional[str]:
    """Why ``path`` cannot be (or become) a folder to write to, without writing anything; None if it can.

    Only the nearest existing ancestor is looked at; a place that refuses folders although it looks
    writable (``/proc``, a read-only mount seen as root) is caught by :func:`make_dir`.
    """
    p = Path(path).expanduser()
    probe = p
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        return "is a file, not a folder" if probe == p else f"lies under the file {probe}, not a folder"
    if probe.exists() and not os.access(probe, os.W_OK):
        return f"{probe} is not writable"
    return None


def make_dir(path: str | Path, what: str) -> Path:
    """Create the folder ``path`` (``what``: the option or field that named it)."""
    p = Path(path).expanduser()
    problem = dir_problem(p)
    if problem is None:
        try:
            p.mkdir(parents=True, exist_ok=True)
            return p
        except OSError as exc:
            problem = f"cannot be created ({exc.strerror or exc})"
    raise ImpostorError(f"{what} {str(path)!r} {problem}; fix: give a folder you can write to")
