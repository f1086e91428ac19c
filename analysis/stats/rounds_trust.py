"""Appendix M's measures that need repeated interaction, on the moves of games of more than
one round (definitions in docs/analysis.md, "Longer games"):

* betrayal -- a counted ballot naming the voter's own teammate, in team modes, when that
  teammate is still in and is not the impostor (naming an impostor teammate is detection);
* trust recovery -- of the betrayals after which both teammates cast counted ballots in the next
  round, the share where they name the same seat then ("voting with them again");
* resilience -- recovery / betrayal (Table 12's Resilience Factor): an estimate only;
* strategy revision -- a counted ballot in round r + 1 naming another seat than the voter's
  counted ballot of round r, when that earlier target is still in;
* commitment -- a team commits in the first round in which both teammates (both still in, both
  with counted ballots) name the same seat; the table gives the per-round hazard (share of the
  teams not yet committed that commit in round r) and the mean commitment round (estimate only).

Every rate is a ratio of totals with the experiment-clustered interval of ``rates.cluster_rate``
(CR1, logit scale, t(G-1)); resilience and the mean round are ratios of two such estimates or
means over a selected subset, whose intervals were not calibrated, so none is printed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import ALL, MODES, StatsUnavailable, ordered_levels, table
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats.rates import rate_columns
from impostor_bench.analysis.stats.rounds import round_moves
from impostor_bench.core.records import TEAM_MODES


def ballots_with_teammates(mv: pd.DataFrame) -> pd.DataFrame:
    """Counted ballots with the voter's teammate (-1 none), whether that teammate is in, its role."""
    team = mv[mv["round"] == 1][["game_id", "seat", "team", "role"]]
    team = team[team["team"].notna() & mv.loc[team.index, "mode"].isin(TEAM_MODES)]
    mate = team.merge(team, on=["game_id", "team"], suffixes=("", "_mate"))
    mate = mate[mate["seat"] != mate["seat_mate"]][["game_id", "seat", "seat_mate", "role_mate"]]
    b = mv[np.isfinite(mv["vote"])].merge(mate, on=["game_id", "seat"], how="left")
    b["seat_mate"] = b["seat_mate"].fillna(-1).astype(np.int64)
    present = set(zip(mv["game_id"], mv["round"], mv["seat"]))
    b["mate_in"] = [(g, r, s) in present for g, r, s in zip(b["game_id"], b["round"], b["seat_mate"])]
    return b


def _next_votes(b: pd.DataFrame, seat_col: str) -> np.ndarray:
    """The counted vote of seat ``b[seat_col]`` in round ``b.round + 1`` (NaN: none)."""
    nxt = b.set_index(["game_id", "round", "seat"])["vote"]
    nxt = nxt[~nxt.index.duplicated()]
    idx = pd.MultiIndex.from_arrays([b["game_id"], b["round"] + 1, b[seat_col]])
    return nxt.reindex(idx).to_numpy(float)


def _by_model(prefix: str, hit, ok, b: pd.DataFrame, alpha: float) -> pd.DataFrame:
    ok = np.asarray(ok, bool)
    num, den = np.asarray(hit, float)[ok], np.ones(int(ok.sum()))
    models, exp = b["model"].to_numpy()[ok], b["exp"].to_numpy()[ok]
    parts = []
    for keys in (pd.Series(models, dtype=object), pd.Series(np.full(len(models), ALL, object))):
        r = rate_columns(prefix, num, den, exp, keys, alpha)
        r[f"{prefix}_n"] = keys.value_counts().reindex(r.index).to_numpy()
        parts.append(r)
    return pd.concat(parts) if len(models) else pd.DataFrame()


def can_betray(b: pd.DataFrame) -> pd.Series:
    """Ballots that could betray: the voter's teammate is in and is not the impostor."""
    return (b["seat_mate"] >= 0) & b["mate_in"] & (b["role_mate"] != "impostor")


def _recoveries(b: pd.DataFrame, betray) -> tuple[np.ndarray, np.ndarray]:
    """(betrayals after which both teammates cast counted ballots in the next round, whether they then
    name the same seat) over the rows of ``b``."""
    both_next = _next_votes(b, "seat"), _next_votes(b, "seat_mate")
    return np.asarray(betray, bool) & np.isfinite(both_next[0]) & np.isfinite(both_next[1]), both_next[0] == both_next[1]


def recovery_units(mv: pd.DataFrame) -> pd.DataFrame:
    """The units of trust recovery (one row per betrayal with both teammates' next-round ballots):
    ``model``, ``mode``, ``game_id``, ``recovered`` (1/0); for resampling it elsewhere."""
    b = ballots_with_teammates(mv)
    betray = can_betray(b) & (b["vote"] == b["seat_mate"])
    ok, recovered = _recoveries(b, betray)
    return pd.DataFrame({"model": b["model"].to_numpy()[ok], "mode": b["mode"].to_numpy()[ok],
                         "game_id": b["game_id"].to_numpy()[ok], "recovered": recovered[ok].astype(float)})


@table("rounds_trust", columns=["model", "betrayal_pct", "betrayal_ci_low", "betrayal_ci_high", "recovery_pct",
                                "recovery_ci_low", "recovery_ci_high", "resilience", "revision_pct",
                                "revision_ci_low", "revision_ci_high"],
    title="Longer games: betrayal, trust recovery, resilience and strategy revision by model (Appendix M)",
    section="rounds",
    inference=(
        infer("betrayal", ("model",), "betrayal_pct", ("betrayal_ci_low", "betrayal_ci_high"),
          method="betrayal_ci_method", scale=100),
        infer("recovery", ("model",), "recovery_pct", ("recovery_ci_low", "recovery_ci_high"),
          method="recovery_ci_method", scale=100),
        infer("revision", ("model",), "revision_pct", ("revision_ci_low", "revision_ci_high"),
          method="revision_ci_method", scale=100),
    ),
    rounds=True,
)
def rounds_trust(data, config) -> pd.DataFrame:
    """Betrayal, trust recovery, resilience and strategy revision by voter model (and pooled)."""
    mv = round_moves(data)
    b = ballots_with_teammates(mv)
    parts = []
    could = can_betray(b)
    betray = could & (b["vote"] == b["seat_mate"])
    if could.any():
        parts.append(_by_model("betrayal", betray, could.to_numpy(), b, config.alpha))
        rec_ok, recovered = _recoveries(b, betray)
        if rec_ok.any():
            parts.append(_by_model("recovery", recovered, rec_ok, b, config.alpha))
    nxt = _next_votes(b, "seat")
    target = b["vote"].to_numpy(np.int64)
    present = set(zip(mv["game_id"], mv["round"], mv["seat"]))
    target_in = np.array([(g, r + 1, s) in present for g, r, s in zip(b["game_id"], b["round"], target)], bool)
    rev_ok = np.isfinite(nxt) & target_in
    if rev_ok.any():
        parts.append(_by_model("revision", nxt != target, rev_ok, b, config.alpha))
    if not parts:
        raise StatsUnavailable("no ballot with a later round to compare")
    out = pd.concat(parts, axis=1)
    if "betrayal_pct" in out and "recovery_pct" in out:
        out["resilience"] = out["recovery_pct"] / out["betrayal_pct"].where(out["betrayal_pct"] > 0)
    out.index.name = "model"
    out = out.reset_index()
    out["_a"] = (out["model"] == ALL).astype(int)
    return out.sort_values(["_a", "model"]).drop(columns="_a").reset_index(drop=True)


@table("rounds_commit", columns=["mode", "round", "commit_pct", "commit_ci_low", "commit_ci_high", "n_teams",
                                 "mean_commit_round"],
    title="Longer games: team commitment by round (share of uncommitted teams that commit)",
    section="rounds",
    inference=(
        infer("commit", ("mode", "round"), "commit_pct", ("commit_ci_low", "commit_ci_high"),
          method="commit_ci_method", scale=100),
    ),
    rounds=True,
)
def rounds_commit(data, config) -> pd.DataFrame:
    """Per team mode and round: the share of teams not yet committed that commit (both teammates name
    the same seat), and the mean round of the first commitment (estimate only)."""
    mv = round_moves(data)
    b = ballots_with_teammates(mv)
    pair = b[(b["seat_mate"] > b["seat"]) & b["mate_in"]].copy()
    if len(pair) == 0:
        raise StatsUnavailable("no team-mode game with both teammates voting")
    mate_vote = b.set_index(["game_id", "round", "seat"])["vote"]
    pair["mate_vote"] = mate_vote.reindex(pd.MultiIndex.from_arrays(
        [pair["game_id"], pair["round"], pair["seat_mate"]])).to_numpy(float)
    pair = pair[np.isfinite(pair["mate_vote"])].sort_values(["game_id", "seat", "round"])
    pair["commit"] = (pair["vote"] == pair["mate_vote"]).astype(int)
    before = pair.groupby(["game_id", "seat"])["commit"].cumsum() - pair["commit"]
    risk = pair[before == 0]  # teams not committed before this round
    first = risk[risk["commit"] == 1].groupby("mode")["round"].mean()
    parts = []
    for mode_col in (risk["mode"].to_numpy(), np.full(len(risk), ALL, object)):
        keys = pd.Series(list(zip(mode_col, risk["round"].to_numpy())), dtype=object)
        r = rate_columns("commit", risk["commit"].to_numpy(), np.ones(len(risk)), risk["exp"].to_numpy(), keys,
                         config.alpha)
        r["n_teams"] = keys.value_counts().reindex(r.index).to_numpy()
        r.index = pd.MultiIndex.from_tuples(r.index, names=["mode", "round"])
        parts.append(r.reset_index())
    out = pd.concat(parts, ignore_index=True)
    all_first = risk[risk["commit"] == 1]["round"].mean()
    out["mean_commit_round"] = out["mode"].map(lambda m: all_first if m == ALL else first.get(m, np.nan))
    rank = {m: i for i, m in enumerate([*ordered_levels(out["mode"], MODES)])}
    out["_m"] = out["mode"].map(lambda m: len(rank) + 1 if m == ALL else rank.get(m, len(rank)))
    return out.sort_values(["_m", "round"]).drop(columns="_m").reset_index(drop=True)
