"""How a game's working state is kept in the Inspect sample store, and read back.

The description phase stores every seat's record under ``impostor:seats``; the
voting phase stores only the ballot fields under ``impostor:ballots``, so no
phase replaces what an earlier one stored (a replacement is logged with a copy
of the old value); the core's decision of each round goes under ``impostor:decisions``
(the scorer reads it and decides nothing again).  All are JSON *strings*, not nested lists of dicts: Inspect
snapshots the task state around every solver and records each store change as a
JSON patch whose values it validates node by node, ~1,700 validations per game
for nested records, one for a string.  The record stays in the store (so an
errored game keeps its partial record in the log and ``inspect score`` can
re-score a log), and the scorer's metadata holds the same record fully
structured.  Measured in ``benchmarks/overhead_bench.py``.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from inspect_ai.util import Store

from impostor_bench.core.rules import RoundResult
from impostor_bench.core.seat import BALLOT_FIELDS, SeatRecord

SEATS_KEY = "impostor:seats"
BALLOTS_KEY = "impostor:ballots"
ROUNDS_KEY = "impostor:rounds"  # longer games only (-T rounds > 1)
DECISIONS_KEY = "impostor:decisions"


_ENCODE = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(..., ensure_ascii=False), built once


def save_seats(store: Store, seats: list[SeatRecord]) -> None:
    """The description phase's record of every seat."""
    store.set(SEATS_KEY, _ENCODE([seat.to_dict() for seat in seats]))


def save_ballots(store: Store, seats: list[SeatRecord]) -> None:
    """The voting phase's fields of every seat, beside (not over) the description record."""
    ballots = [{key: values[key] for key in BALLOT_FIELDS} for values in (seat.__dict__ for seat in seats)]
    store.set(BALLOTS_KEY, _ENCODE(ballots))


def _value(store: Store, key: str) -> Any:
    value = store.get(key)
    return json.loads(value) if isinstance(value, str) else value


def load_seats(store: Store) -> Optional[list[SeatRecord]]:
    """The seat records with their ballots, or None before the first phase has stored them.

    Logs written before the ballots had their own key hold the whole record under
    ``impostor:seats``, and before that as a list rather than a string: both load.
    """
    seats = _value(store, SEATS_KEY)
    ballots = _value(store, BALLOTS_KEY)
    if seats is None:
        return None
    if ballots is not None:
        for seat, ballot in zip(seats, ballots):
            seat.update(ballot)
    return [SeatRecord.from_dict(seat) for seat in seats]


def save_decisions(store: Store, decisions: list[RoundResult]) -> None:
    """What the core decided in each round so far (the scorer reads it: nothing is decided twice)."""
    store.set(DECISIONS_KEY, _ENCODE([d.to_dict() for d in decisions]))


def load_decisions(store: Store) -> Optional[list[RoundResult]]:
    """Each round's decision, or None before the first round was decided (or in a log written before
    decisions were stored)."""
    decisions = _value(store, DECISIONS_KEY)
    return None if decisions is None else [RoundResult.from_dict(d) for d in decisions]


def save_rounds(store: Store, record: dict[str, Any]) -> None:
    """A longer game's rounds so far: options, and per round its seats' records and notes."""
    store.set(ROUNDS_KEY, json.dumps(record, ensure_ascii=False))


def load_rounds(store: Store) -> Optional[dict[str, Any]]:
    """The multi-round record (seat records as :class:`SeatRecord`), or None for the paper's game."""
    record = _value(store, ROUNDS_KEY)
    if record is None:
        return None
    for entry in record["rounds"]:
        entry["seats"] = {int(s): SeatRecord.from_dict(d) for s, d in entry["seats"].items()}
        entry["notes"] = {int(s): n for s, n in entry.get("notes", {}).items()}
    return record
