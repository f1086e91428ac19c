"""Each seat's tokens: every model call of a game adds its ``output.usage`` to the record of
the seat (and phase) that made it.

The seat is carried in a context variable rather than through every call signature: the
ballot calls run through ``solvers.vote_format`` and run concurrently (``asyncio.gather``
gives each seat's coroutine its own copy of the context, so the four ballots never mix).
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator, Optional

from impostor.core.seat import SeatRecord

_SEAT: ContextVar[Optional[tuple[SeatRecord, str]]] = ContextVar("impostor_seat_usage", default=None)


@contextmanager
def counting(record: SeatRecord, phase: str) -> Iterator[None]:
    """Calls made inside count towards ``record`` (phase ``describe`` or ``vote``)."""
    token = _SEAT.set((record, phase))
    try:
        yield
    finally:
        _SEAT.reset(token)


def count_in_task(record: SeatRecord, phase: str) -> None:
    """Calls made from here to the end of the current task count towards ``record``: for a
    coroutine that runs as its own task (each ballot under ``asyncio.gather``)."""
    _SEAT.set((record, phase))


def count(output: Any) -> None:
    """Add one call's usage to the current seat (no seat or no usage reported: nothing)."""
    current = _SEAT.get()
    usage = getattr(output, "usage", None)
    if current is None or usage is None:
        return
    record, phase = current
    prefix = "vote_" if phase == "vote" else ""
    for kind in ("input", "output"):
        n = getattr(usage, f"{kind}_tokens", None)
        if n is not None:
            key = f"{prefix}{kind}_tokens"
            setattr(record, key, (getattr(record, key) or 0) + int(n))
