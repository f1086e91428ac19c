"""Process-wide tracking context: set by ``impostor sweep`` so the hooks nest runs under the sweep's parent."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from impostor_bench.tracking.logrun import Context

_CONTEXT = Context()


def get() -> Context:
    return _CONTEXT


@contextmanager
def using(ctx: Context) -> Iterator[Context]:
    global _CONTEXT
    old = _CONTEXT
    _CONTEXT = ctx
    try:
        yield ctx
    finally:
        _CONTEXT = old
