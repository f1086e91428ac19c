"""Publishing a report bundle folder so that a kill at any moment loses nothing.

The bundle is written into a temporary sibling ``.OUT.tmp-*`` and swapped into place:
the old bundle is renamed to ``.OUT.old-*``, the new one renamed to ``OUT``, the old one
removed.  Renames are atomic, but a kill between the two renames leaves no ``OUT``;
and a kill while writing leaves a ``.OUT.tmp-*`` behind.  So each temporary holds the
pid of its writer, a finished one is marked, and every run first *recovers*: with no
``OUT``, a finished new bundle (else the old one) is moved back into place; then the
temporaries of writers that are no longer alive are removed.  Temporaries of a live
writer (a second report into the same folder) are left alone.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

PID_FILE = ".writer-pid"
DONE_FILE = ".complete"


def new_temp(out: Path) -> Path:
    """A fresh temporary folder beside ``out``, owned by this process."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    (tmp / PID_FILE).write_text(str(os.getpid()))
    return tmp


def _alive(pid_file: Path) -> bool:
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def _leftovers(out: Path, kind: str) -> list[Path]:
    found = [p for p in out.parent.glob(f".{out.name}.{kind}-*") if p.is_dir() and not p.is_symlink()]
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


def recover(out: Path) -> list[str]:
    """Undo what a killed earlier run left; returns what was done (for the user)."""
    done: list[str] = []
    if not out.parent.is_dir():
        return done
    if not out.exists():
        finished = [t for t in _leftovers(out, "tmp") if (t / DONE_FILE).exists() and not _alive(t / PID_FILE)]
        olds = _leftovers(out, "old")
        if finished:
            os.rename(finished[0], out)
            (out / DONE_FILE).unlink(missing_ok=True)
            (out / PID_FILE).unlink(missing_ok=True)
            done.append(f"completed the swap of a bundle an interrupted run had finished ({out})")
        elif olds:
            os.rename(olds[0], out)
            done.append(f"restored the previous bundle an interrupted run had moved aside ({out})")
    for stale in _leftovers(out, "tmp") + _leftovers(out, "old"):
        if stale.name.startswith(f".{out.name}.tmp-") and _alive(stale / PID_FILE):
            continue
        shutil.rmtree(stale, ignore_errors=True)
        done.append(f"removed {stale.name}, left by an interrupted run")
    return done


def swap_into_place(tmp: Path, out: Path) -> None:
    """Replace ``out`` by the finished bundle in ``tmp`` (see the module docstring)."""
    (tmp / DONE_FILE).write_text("")
    (tmp / PID_FILE).unlink(missing_ok=True)
    old = None
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        old.rmdir()
        os.rename(out, old)
    try:
        os.rename(tmp, out)
    except BaseException:
        if old is not None:
            os.rename(old, out)
        raise
    (out / DONE_FILE).unlink(missing_ok=True)
    os.chmod(out, 0o777 & ~_umask())
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
