"""Each seat's tokens and served model: every model call of a game adds its ``output.usage`` to
the record of the seat (and phase) that made it, and the model id the reply names
(``output.model``: the provider's own id of the model that answered, e.g. a dated snapshot
behind an alias or an OpenRouter route) to the seat's ``served_model``.

The seat is carried in a context variable rather than through every call signature: the
ballot calls run through ``impostor_bench.solvers.vote_format`` and run concurrently (``asyncio.gather``
gives each seat's coroutine its own copy of the context, so the four ballots never mix).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Optional

from impostor_bench.core.seat import SeatRecord

_SEAT: ContextVar[Optional[tuple[SeatRecord, str]]] = ContextVar("impostor_seat_usage", default=None)


class counting:
    """Calls made inside count towards ``record`` (phase ``describe`` or ``vote``); a class, not
    a ``contextmanager`` generator (one per description call)."""

    def __init__(self, record: SeatRecord, phase: str) -> None:
        self._seat = (record, phase)

    def __enter__(self) -> None:
        self._token = _SEAT.set(self._seat)

    def __exit__(self, *exc: object) -> None:
        _SEAT.reset(self._token)


def count_in_task(record: SeatRecord, phase: str) -> None:
    """Calls made from here to the end of the current task count towards ``record``: for a
    coroutine that runs as its own task (each ballot under ``asyncio.gather``)."""
    _SEAT.set((record, phase))


def add_id(ids: Optional[str], new: Optional[str]) -> Optional[str]:
    """``ids`` (comma-joined, distinct) with ``new`` appended when it is not among them."""
    if not new:
        return ids
    have = (ids or "").split(",") if ids else []
    return ids if new in have else ",".join([*have, new])


def count(output: Any) -> None:
    """Add one call's usage and served model to the current seat (no seat: nothing)."""
    current = _SEAT.get()
    if current is None:
        return
    record, phase = current
    served = getattr(output, "model", None)
    if isinstance(served, str) and served:
        if phase == "vote":
            record.vote_served_model = add_id(record.vote_served_model, served)
        else:
            record.served_model = add_id(record.served_model, served)
    usage = getattr(output, "usage", None)
    if usage is None:
        return
    n_in, n_out = getattr(usage, "input_tokens", None), getattr(usage, "output_tokens", None)
    if phase == "vote":
        if n_in is not None:
            record.vote_input_tokens = (record.vote_input_tokens or 0) + int(n_in)
        if n_out is not None:
            record.vote_output_tokens = (record.vote_output_tokens or 0) + int(n_out)
    else:
        if n_in is not None:
            record.input_tokens = (record.input_tokens or 0) + int(n_in)
        if n_out is not None:
            record.output_tokens = (record.output_tokens or 0) + int(n_out)
