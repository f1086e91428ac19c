"""What the schedule randomised, read off the games themselves.

A test may only permute (or treat as randomised) what the schedule drew at random. The
runner's first schedule gave game *i* of every experiment of a mode the same impostor seat,
while game *i* of every experiment of a difficulty plays the same word pair: seat k then
always labels the same subset of word pairs, and pair effects show up as "seat effects"
(issue 26). The later schedule draws the seat per experiment (balanced, independent of the
pair sequence). Old exports still load, so the seat analyses ask :func:`seat_randomised`.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

SEAT_SHARED = "impostor seat shared with the word pairs across experiments (schedule before per-experiment seats)"
SEAT_UNKNOWN = ("cannot tell whether the impostor seat was drawn per experiment (no mode has two experiments "
                "with common game indices, or games lack game_index)")
# Two experiments of per-experiment seats agree at 8 common games with probability 4**-8.
_MIN_COMMON = 8


def seat_refusal(prep) -> Optional[str]:
    """None when the impostor seat was drawn per experiment; otherwise the reason it was not (or is unknown).

    Old schedule: within a mode, every experiment has the same impostor seat at each game
    index. Per-experiment seats: two experiments of a mode agree at only ~1/4 of their games.
    """
    cached = prep.__dict__.get("_seat_refusal", 0)
    if cached != 0:
        return cached
    prep.__dict__["_seat_refusal"] = out = _seat_refusal(prep)
    return out


def _seat_refusal(prep) -> Optional[str]:
    if "game_index" not in prep.games.columns:
        return SEAT_UNKNOWN
    gi = pd.to_numeric(prep.games["game_index"], errors="coerce").to_numpy(float)
    ok = np.isfinite(gi)
    df = pd.DataFrame({"mode": prep.mode[ok], "e": prep.exp_code[ok], "gi": gi[ok].astype(np.int64),
                       "seat": prep.imp_seat[ok]}).drop_duplicates(["e", "gi"])
    verdicts = []
    for _, sub in df.groupby("mode", sort=False):
        if sub["e"].nunique() < 2:
            continue
        per_gi = sub.groupby("gi")["seat"].agg(["nunique", "size"])
        common = per_gi[per_gi["size"] >= 2]
        if len(common) < _MIN_COMMON:
            continue
        verdicts.append(bool((common["nunique"] == 1).all()))
    if not verdicts:
        return SEAT_UNKNOWN
    return SEAT_SHARED if any(verdicts) else None


def seat_randomised(prep) -> bool:
    """True when the games show per-experiment impostor seats (seat randomised within experiments)."""
    return seat_refusal(prep) is None
