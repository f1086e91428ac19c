"""What the schedule randomised, read off the games themselves.

A test may only permute (or treat as randomised) what the schedule drew at random. The
runner's first schedule gave game *i* of every experiment of a mode the same impostor seat,
while game *i* of every experiment of a difficulty plays the same word pair: seat k then
always labels the same subset of word pairs, and pair effects show up as "seat effects".
The later schedule draws the seat per experiment (balanced, independent of the
pair sequence). Old exports still load, so the seat analyses ask :func:`seat_randomised`.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import StatsUnavailable, prepared, table
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.core.records import TEAM_MODES

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


@table("schedule_check", columns=["mode", "difficulty", "n_experiments", "seat_agreement_pct", "seat_agreement_expected_pct",
                                  "team_host_agreement_pct", "seat_balance_max_gap", "pair_agreement_pct"],
    title=("Design check of the game schedule per mode x difficulty: shared impostor seats, teams and word pairs "
           "across experiments"),
    section="beyond",
)
def schedule_check(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Design check of the schedule (descriptive, no test): per mode x difficulty, how often two
    experiments give game *i* the same impostor seat (25% when drawn independently per
    experiment, 100% under the old shared schedule), which model's team hosts the impostor
    (team modes: 50% vs 100%), the same word pair (100%: the paired design), and the largest
    gap between two seats' impostor counts within an experiment (<= 1: balanced blocks)."""
    prep = prepared(data, need_players=False)
    if "game_index" not in prep.games.columns:
        raise StatsUnavailable("games lack game_index")
    g = pd.DataFrame({"mode": prep.mode, "difficulty": prep.difficulty, "e": prep.exp_code,
                      "gi": pd.to_numeric(prep.games["game_index"], errors="coerce").to_numpy(),
                      "seat": prep.imp_seat,
                      "pair": prep.games["pair_id"].astype(str).to_numpy() if "pair_id" in prep.games else None})
    teams = prep.has_players and prep.team is not None
    rows = []
    for (m, d), sub in g.dropna(subset=["gi"]).groupby(["mode", "difficulty"], sort=True):
        E = sub["e"].nunique()
        gap = sub.groupby("e")["seat"].apply(lambda s: np.ptp(np.bincount(s, minlength=4))).max()
        row = {"mode": m, "difficulty": d, "n_experiments": int(E), "seat_balance_max_gap": int(gap),
               "seat_agreement_expected_pct": 25.0}
        if E >= 2:
            row["seat_agreement_pct"] = _agreement(sub, "seat")
            if sub["pair"].notna().all():
                row["pair_agreement_pct"] = _agreement(sub, "pair")
            if teams and m in TEAM_MODES:
                sub = sub.assign(h=_first_listed_hosts(sub, prep))
                row["team_host_agreement_pct"] = _agreement(sub.dropna(subset=["h"]), "h")
        rows.append(row)
    return pd.DataFrame(rows)


def _agreement(sub: pd.DataFrame, col: str) -> float:
    """% of (experiment pair, game index) with the same value: sum over game indices of
    sum_v C(count_v, 2) / C(n, 2), weighted by C(n, 2); a missing value matches nothing.
    Counts by groupby, not a loop over game indices (2 s at 90,720 games); the sums are of
    integers, so the same float."""
    n = sub.groupby("gi").size().to_numpy(float)
    tot = (n * (n - 1) / 2).sum()
    c = sub.groupby(["gi", col], observed=True).size().to_numpy(float)  # missing values dropped
    same = (c * (c - 1) / 2).sum()
    return 100 * same / tot if tot else np.nan


def _first_listed_hosts(sub: pd.DataFrame, prep) -> np.ndarray:
    """1 when the experiment's first-listed team model (team A's model) holds the impostor's team."""
    idx = sub.index.to_numpy()
    out = np.full(len(idx), np.nan)
    for j, i in enumerate(idx):
        t = prep.team[i]
        s = prep.imp_seat[i]
        if t is not None and t[s] is not None:
            out[j] = 1.0 if t[s] == "A" else 0.0
    return out
