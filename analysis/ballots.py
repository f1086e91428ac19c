"""Ballot and description outcome classes of a players table, also for older exports.

The classes are defined once in the game core (``impostor_bench.core.records.BALLOT_CLASSES``,
``impostor_bench.core.parsing.DESCRIPTION_ERROR_CLASSES``); this module applies them to a
DataFrame.  Exports written before ``ballot_class`` existed (or by another tool)
get it derived row by row with ``impostor_bench.core.records.derive_ballot_class`` from
``vote``, ``seat``, ``ballot_error``, ``self_declared``, ``ballot_valid`` and
``ballot_attempts`` (whichever are present), so old data loads and is counted
the same way as new data. Descriptions likewise: ``description_class`` when recorded, else
the class of the ``description_error`` text (the only use of that text's wording).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import pandas as pd

from impostor_bench.core.parsing import description_error_class
from impostor_bench.core.records import BALLOT_CLASSES, INVALID_BALLOT_CLASSES, derive_ballot_class

__all__ = ["ballot_classes", "description_classes", "invalid_ballot_mask"]


def _none(v: Any) -> Any:
    return None if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) else v


def _int(v: Any) -> Optional[int]:
    v = _none(v)
    return None if v is None else int(v)


def _column(p: pd.DataFrame, name: str) -> list:
    return list(p[name].astype(object)) if name in p.columns else [None] * len(p)


def ballot_classes(p: pd.DataFrame) -> pd.Series:
    """The ballot class of every row: the recorded ``ballot_class`` where there is one
    (one of ``BALLOT_CLASSES``), else derived from the other ballot columns."""
    given = p["ballot_class"].astype(object) if "ballot_class" in p.columns else pd.Series(None, index=p.index,
                                                                                            dtype=object)
    known = given.isin(BALLOT_CLASSES).to_numpy()
    if known.all():
        return given.copy()
    out = given.where(known, None).to_numpy(dtype=object, copy=True)
    need = np.flatnonzero(~known)
    cols = [_column(p, c) for c in ("vote", "seat", "ballot_error", "self_declared", "ballot_valid",
                                    "ballot_attempts")]
    cache: dict[tuple, str] = {}
    for i in need:
        vote, seat, err, sd, valid, attempts = (c[i] for c in cols)
        sd, valid, err = _none(sd), _none(valid), _none(err)
        key = (_int(vote), _int(seat), None if err is None else str(err), bool(sd),
               None if valid is None else bool(valid), _int(attempts))
        if key not in cache:
            cache[key] = derive_ballot_class(*key)
        out[i] = cache[key]
    return pd.Series(out, index=p.index, dtype=object)


def invalid_ballot_mask(classes: pd.Series) -> np.ndarray:
    """True where a ballot is invalid (``INVALID_BALLOT_CLASSES``); a self-vote is legal."""
    return classes.isin(INVALID_BALLOT_CLASSES).to_numpy()


def description_classes(p: pd.DataFrame) -> pd.Series:
    """``None`` for a valid description, else its class (``DESCRIPTION_ERROR_CLASSES``): the recorded
    ``description_class``; read from the ``description_error`` text only where an older export (or
    another tool) recorded no class."""
    valid = p["description_valid"].astype(object).fillna(True).to_numpy(dtype=bool)
    out = np.full(len(p), None, dtype=object)
    if "description_class" in p.columns:
        recorded = p["description_class"].astype(object).to_numpy()
        typed = ~valid & pd.notna(recorded)
        out[typed] = recorded[typed]
    else:
        typed = np.zeros(len(p), dtype=bool)
    bad = ~valid & ~typed
    if bad.any():  # classify each distinct error text once (null -> code -1, the last entry)
        errors = p["description_error"].to_numpy(dtype=object)[bad] if "description_error" in p.columns else None
        codes, uniq = pd.factorize(errors if errors is not None else np.full(int(bad.sum()), None, dtype=object))
        classes = np.array([description_error_class(_none(e)) for e in uniq] + [description_error_class(None)],
                           dtype=object)
        out[bad] = classes[codes]
    return pd.Series(out, index=p.index, dtype=object)
