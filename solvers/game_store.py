"""How a game's working state is kept in the Inspect sample store, and read back.

The seat records and the descriptions shown are stored as JSON *strings*, not
as nested lists of dicts.  Inspect snapshots the whole task state around every
solver and records each store change as a JSON patch whose values it validates
node by node; nested seat records cost ~1,700 such validations and dozens of
patch operations per game, a JSON string costs one.  The record stays in the
store (so an errored game keeps its partial record in the log and
``inspect score`` can re-score a log), and the scorer's metadata holds the
same record fully structured.  Measured in ``benchmarks/overhead_bench.py``.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from inspect_ai.util import Store

SEATS_KEY = "impostor:seats"
SHOWN_KEY = "impostor:shown"


def save_seats(store: Store, seats: list[dict[str, Any]]) -> None:
    store.set(SEATS_KEY, json.dumps(seats, ensure_ascii=False))


def load_seats(store: Store) -> Optional[list[dict[str, Any]]]:
    """The seat records, or None before the first phase has stored them.

    Logs written before the records were stored as strings hold the list itself.
    """
    value = store.get(SEATS_KEY)
    return json.loads(value) if isinstance(value, str) else value


def save_shown(store: Store, shown: list[tuple[int, str]]) -> None:
    store.set(SHOWN_KEY, json.dumps(shown, ensure_ascii=False))


def load_shown(store: Store) -> list[tuple[int, str]]:
    """The descriptions every player saw, as (player label, text) in speaking order."""
    value = store.get(SHOWN_KEY, [])
    items = json.loads(value) if isinstance(value, str) else value
    return [(int(label), str(text)) for label, text in items]
