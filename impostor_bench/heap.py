"""How the report process hands the memory it frees back to the system.

A report on 90,720 games builds and drops hundreds of large temporaries. Three allocators keep
what is freed unless told otherwise, and what they keep sets the report's peak RSS as much as
what it uses (benchmarks/RESULTS.md):

* glibc raises its mmap threshold up to 32 MiB after the first large free, so later arrays come
  from the heap and stay in the process once freed (150-200 MiB): ``return_freed_memory`` fixes it;
* between tables the heap is left fragmented by small blocks still in use, which glibc's
  automatic trim (only the heap's top) cannot return: ``trim_heap`` (``malloc_trim(0)``, which
  also releases free pages inside the heap) after each table returned 169 MiB after the
  multiple-comparisons table alone;
* Arrow's default pool (mimalloc) keeps the pages of freed buffers, and pandas 3 keeps its
  strings in Arrow: the system pool returns them (``return_freed_memory``).

Only the report command calls these; without glibc they change nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any, Optional


@functools.lru_cache(maxsize=1)
def _glibc() -> Optional[Any]:
    """glibc's C library, or None where malloc is not glibc's."""
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        lib.mallopt, lib.malloc_trim  # noqa: B018 - glibc only
    except (OSError, AttributeError):
        return None
    return lib


def return_freed_memory() -> bool:
    """glibc: a fixed 4 MiB mmap threshold and the heap trimmed past 1 MiB free (as
    ``MALLOC_MMAP_THRESHOLD_``/``MALLOC_TRIM_THRESHOLD_`` would; a 256 KiB threshold kept 8 MiB
    less but cost 5 s more of system time, a map per array); Arrow: the system allocator.
    Returns False where this is not glibc (then only Arrow's pool is changed)."""
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())
    libc = _glibc()
    if libc is None:
        return False
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
    return bool(libc.mallopt(M_MMAP_THRESHOLD, 4 << 20)) and bool(libc.mallopt(M_TRIM_THRESHOLD, 1 << 20))


def trim_heap() -> None:
    """Return the heap's free pages to the system (``malloc_trim(0)``; a few ms); nothing without glibc."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)
