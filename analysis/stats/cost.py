"""Tokens and cost per seat, per game and per success (beyond the paper; docs/analysis.md "Cost").

One row per (model, role) plus ``ALL`` per role, over the seats of the games analysed:

* ``input_tokens_per_game`` / ``output_tokens_per_game``: mean tokens of one seat in one game
  (all its calls: description, ballot, retries), over the seats whose tokens were recorded;
* ``cost_per_game_usd``: mean ``cost_usd`` of one seat in one game;
* ``successes``: impostor wins (role impostor) or correct detections (role majority: a counted
  ballot on the impostor); ``cost_per_success_usd`` = the role's total cost / successes.

A cost is known only when every seat of the row has one (players.parquet ``cost_usd``, set by
the exporter from the model's price, impostor_bench/pricing.py): otherwise the cost columns are NaN
and ``price`` says ``unknown`` (no seat priced) or ``partly unknown``; never 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.data import index_positions
from impostor_bench.analysis.stats._base import ALL, StatsUnavailable, prepared, table
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig

COLUMNS = ["model", "role", "n_seats", "input_tokens_per_game", "output_tokens_per_game", "cost_per_game_usd",
           "successes", "cost_per_success_usd", "price"]
SUCCESS = {"impostor": "impostor win", "majority": "correct detection"}
NO_TOKENS = ("no seat has its tokens recorded (simulated games have none, nor do games logged before "
             "per-seat tokens were recorded)")


def seat_costs(data) -> pd.DataFrame:
    """One row per seat of an analysed game: model, role, tokens, cost, success."""
    prep = prepared(data, need_players=True)
    p = data.players
    missing = [c for c in ("input_tokens", "output_tokens") if c not in p.columns]
    if missing:
        raise StatsUnavailable(f"players table lacks {', '.join(missing)} (exported before per-seat tokens were "
                               "recorded; re-export from the logs of a newer run)")
    gi = index_positions(pd.Index(prep.games["game_id"].astype(object)), p["game_id"])
    seat = pd.to_numeric(p["seat"], errors="coerce").to_numpy()
    ok = (gi >= 0) & np.isin(seat, [0, 1, 2, 3])
    cols = [c for c in ("model", "input_tokens", "output_tokens", "cost_usd") if c in p.columns]
    p, gi, seat = p.loc[ok, cols], gi[ok], seat[ok].astype(np.int64)  # only the columns used: no copy of all
    assert prep.is_imp is not None and prep.vote is not None  # need_players=True
    is_imp = prep.is_imp[gi, seat]
    success = np.where(is_imp, prep.y[gi] == 1, prep.vote[gi, seat] == prep.imp_seat[gi])
    cost = pd.to_numeric(p["cost_usd"], errors="coerce") if "cost_usd" in p.columns else np.nan
    return pd.DataFrame({
        "model": p["model"].astype(object).to_numpy(), "role": np.where(is_imp, "impostor", "majority"),
        "input_tokens": pd.to_numeric(p["input_tokens"], errors="coerce").to_numpy(float),
        "output_tokens": pd.to_numeric(p["output_tokens"], errors="coerce").to_numpy(float),
        "cost_usd": np.asarray(cost, float) if np.ndim(cost) else np.full(len(p), np.nan),
        "success": success.astype(bool)})


def _summary(s: pd.DataFrame) -> dict:
    known = s["cost_usd"].notna()
    total = s["cost_usd"].sum() if known.all() else np.nan
    succ = int(s["success"].sum())
    return {"n_seats": len(s), "input_tokens_per_game": s["input_tokens"].mean(),
            "output_tokens_per_game": s["output_tokens"].mean(),
            "cost_per_game_usd": total / len(s) if len(s) else np.nan, "successes": succ,
            "cost_per_success_usd": total / succ if succ else np.nan,
            "price": "known" if known.all() else ("unknown" if not known.any() else "partly unknown"),
            "success": SUCCESS[s["role"].iloc[0]], "tokens_recorded_pct": 100 * s["input_tokens"].notna().mean(),
            "total_cost_usd": total}


@table("cost", columns=COLUMNS,
    title=("Tokens and cost per seat and game, per model and role, and cost per impostor win / correct detection "
           "(USD; NaN where the price is unknown, never 0)"),
    section="beyond",
    figures={"cost": "beyond"},
)
def cost(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    prepared(data, need_players=True)
    p = data.players
    if {"input_tokens", "output_tokens"} <= set(p.columns) and p["input_tokens"].isna().all():
        raise StatsUnavailable(NO_TOKENS)  # no seat at all: skip building the seat rows
    s = seat_costs(data)
    if s["input_tokens"].isna().all():
        raise StatsUnavailable(NO_TOKENS)
    rows = []
    for role in ("impostor", "majority"):
        r = s[s["role"] == role]
        if r.empty:
            continue
        for model, grp in r.groupby("model", sort=True):
            rows.append({"model": model, "role": role, **_summary(grp)})
        rows.append({"model": ALL, "role": role, **_summary(r)})
    return pd.DataFrame(rows)
