"""Writing an output file without following a link out of its folder (reading: ``input_files``).

A file the project writes (an export's tables, a report's tables, a sweep's manifest) goes
through :func:`write_file`: the bytes go to a new file created beside the target
(``O_CREAT | O_EXCL``: never an existing file or a link), which is then renamed onto the
target's name.  A rename replaces a symbolic link at that name, dangling or not, instead of
writing where it points, so ``OUT/games.parquet -> /elsewhere/x.parquet`` leaves
``/elsewhere`` untouched; a reader never sees a half-written file either.

Plain Python: no Inspect, MLflow or pandas import.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Callable

from impostor_bench.core.errors import ImpostorError


def write_file(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Write ``path`` by calling ``write`` on a fresh file in the same folder, then renaming it
    onto ``path`` (a link there is replaced, never followed).  ``write`` gets that file's path
    (``df.to_parquet``, ``Path.write_text``...).  Returns ``path``."""
    path = Path(path)
    if path.is_dir() and not path.is_symlink():
        raise ImpostorError(f"{path}: is a folder, where a file is to be written; fix: remove or rename it")
    # the target's suffix kept last: a writer that picks its format by suffix (savefig) still can
    tmp = path.with_name(f".{path.stem}.{secrets.token_hex(6)}.tmp{path.suffix}")
    # created here, empty, with the usual mode (0666 less the umask); O_NOFOLLOW is moot under
    # O_EXCL (an existing link fails it) but says so where the flag exists
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_text(path: str | Path, text: str) -> Path:
    """:func:`write_file` of a UTF-8 text."""
    return write_file(path, lambda p: p.write_text(text, encoding="utf-8"))


def present(path: str | Path) -> bool:
    """Whether anything, a dangling link included, holds the name ``path`` (``exists()`` follows
    links, so a dangling one reads as free)."""
    return os.path.lexists(path)
