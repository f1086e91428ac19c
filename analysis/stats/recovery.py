"""M.4's recovery mechanisms on games of more than one round.

M.4: "three distinct patterns. First, 'immediate forgiveness' (23% of recoveries) where trust
rebuilds in the next interaction ... Second, 'graduated rehabilitation' (54% of recoveries)
... over 2-3 interactions ... Third, 'permanent severance' (23% of cases) where betrayal
triggers irreversible alliance breakdown". The three shares sum to 100 "of recoveries", yet a
severance is no recovery: the paper's denominator is inconsistent. Defined here over
betrayals instead (``rounds_trust``'s betrayal: a counted ballot naming one's own teammate, who
is in and not the impostor), for each betrayal with at least one later round in which both
teammates cast counted ballots:

* ``immediate``  -- the two name the same seat in the next round;
* ``graduated``  -- not in the next round (or the next round has no ballot of both), but in a
  later one;
* ``severance``  -- in no later round with both ballots.

Shares of these betrayals (they sum to 100), per voter model and pooled (``ALL``);
``immediate + graduated`` is ``rounds_trust``'s recovery in the wider sense (any later round).
Betrayals are rare and a game has few rounds, so the shares are printed as estimates with
their counts, without intervals.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import ALL, StatsUnavailable, table
from impostor_bench.analysis.stats.rounds import round_moves
from impostor_bench.analysis.stats.rounds_trust import ballots_with_teammates

MECHANISMS = ("immediate", "graduated", "severance")
COLUMNS = ["model", "n_betrayals", "immediate_pct", "graduated_pct", "severance_pct", "n_undetermined"]


def mechanisms(mv: pd.DataFrame) -> pd.DataFrame:
    """One row per betrayal: model, game, round and its mechanism (None: no later round with both ballots)."""
    b = ballots_with_teammates(mv)
    betray = (b["seat_mate"] >= 0) & b["mate_in"] & (b["role_mate"] != "impostor") & (b["vote"] == b["seat_mate"])
    votes = b.set_index(["game_id", "round", "seat"])["vote"]
    votes = votes[~votes.index.duplicated()]
    last = mv.groupby("game_id")["round"].max()
    rows = []
    for r in b[betray].itertuples(index=False):
        kind = None
        for later in range(int(r.round) + 1, int(last[r.game_id]) + 1):
            a, m = votes.get((r.game_id, later, r.seat)), votes.get((r.game_id, later, r.seat_mate))
            if a is None or m is None or not (np.isfinite(a) and np.isfinite(m)):
                continue
            if a == m:
                kind = "immediate" if later == r.round + 1 else "graduated"
                break
            kind = "severance"  # observed and apart; a later agreement overrides it
        rows.append({"model": r.model, "game_id": r.game_id, "round": int(r.round), "mechanism": kind})
    return pd.DataFrame(rows, columns=["model", "game_id", "round", "mechanism"])


@table("rounds_recovery", columns=COLUMNS,
    title=("Longer games: after a betrayal, immediate forgiveness, graduated rehabilitation or permanent severance "
           "(M.4), % of betrayals with a later round"),
    section="rounds",
    rounds=True,
)
def rounds_recovery(data, config) -> pd.DataFrame:
    """Shares of immediate forgiveness, graduated rehabilitation and permanent severance (M.4)."""
    mv = round_moves(data)
    m = mechanisms(mv)
    if len(m) == 0:
        raise StatsUnavailable("no betrayal in games of more than one round")
    rows = []
    for model, part in [*sorted(m.groupby("model"), key=lambda kv: str(kv[0])), (ALL, m)]:
        known = part["mechanism"].dropna()
        row = {"model": model, "n_betrayals": len(known), "n_undetermined": int(part["mechanism"].isna().sum())}
        for k in MECHANISMS:
            row[f"{k}_pct"] = 100 * float((known == k).mean()) if len(known) else np.nan
        rows.append(row)
    return pd.DataFrame(rows)
