"""Games of more than one round: the impostor's survival by round and mode, and the
vote accuracy of majority ballots by model and round.  Definitions: docs/analysis.md,
"Longer games"; every interval has experiments as the independent units.

*Survival* of the impostor through round r is the share of games in which it is not voted out
in rounds 1..r, estimated as a Kaplan-Meier curve (statsmodels' ``SurvfuncRight``) over the
games: a game where the impostor is voted out in round t is an event at t; a game decided by a
self-declaration in round t is censored at t (it might have been voted out later); a game the
impostor won otherwise (two left, rounds run out) is censored at the game's ``max_rounds``.
The interval is the cluster-robust (experiments as clusters) linearised variance of the
product-limit estimator (the influence of experiment e on log S(r) is
``-sum_{k<=r} (d_ek - h_k n_ek) / (n_k (1 - h_k))``, CR1 factor G/(G-1)), on the logit scale
with t(G-1): without censoring it is exactly ``rates.cluster_rate``'s interval of the share voted out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps
from statsmodels.duration.survfunc import SurvfuncRight
from statsmodels.stats.proportion import proportion_confint

from impostor_bench.analysis.moves import moves_of
from impostor_bench.analysis.stats._base import ALL, MODES, StatsUnavailable, ordered_levels, table
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats.rates import METHOD_EXTREME, rate_columns
from impostor_bench.analysis.stats.session import Analysis

KM_METHOD = "Kaplan-Meier; CR1 by experiment (linearised), logit scale, t(G-1)"

ONE_ROUND = ("one-round games only: the round tables need games of more than one round "
             "(`-T rounds=N`, or `impostor simulate --rounds N`)")


def round_moves(data) -> pd.DataFrame:
    """The moves of the games in ``games`` with the game's ``mode``, ``max_rounds`` and experiment code
    ``exp``; StatsUnavailable when no game lasted more than one round."""
    if Analysis.of(data).moves is None:  # one-round export: the moves derived from players are all round 1
        players = Analysis.of(data).players
        raise StatsUnavailable("no moves table" if players is None or len(players) == 0 else ONE_ROUND)
    mv = moves_of(data)
    if mv is None or len(mv) == 0:
        raise StatsUnavailable("no moves table")
    rounds = pd.to_numeric(mv["round"])
    if rounds.max() <= 1:
        raise StatsUnavailable(ONE_ROUND)
    g = data.games.drop_duplicates("game_id").set_index(data.games["game_id"].drop_duplicates().astype(object))
    gid = mv["game_id"].astype(object)
    keep = gid.isin(g.index).to_numpy()
    mv = mv[keep]
    gid = gid[keep]
    out = pd.DataFrame({
        "game_id": gid.to_numpy(), "round": rounds[keep].to_numpy(np.int64), "seat": mv["seat"].to_numpy(np.int64),
        "model": mv["model"].astype(object).to_numpy(), "role": mv["role"].astype(object).to_numpy(),
        "team": mv["team"].astype(object).where(mv["team"].notna(), None).to_numpy(),
        "vote": pd.to_numeric(mv["vote"]).to_numpy(float), "self_declared": mv["self_declared"].to_numpy(bool),
        "eliminated": mv["eliminated"].to_numpy(bool)})
    out["mode"] = g["mode"].astype(object).reindex(out["game_id"]).to_numpy()
    max_r = (pd.to_numeric(g["max_rounds"], errors="coerce") if "max_rounds" in g.columns
             else pd.Series(np.nan, index=g.index))
    last = out.groupby("game_id")["round"].max()
    out["max_rounds"] = max_r.reindex(out["game_id"]).fillna(last.reindex(out["game_id"])).to_numpy()
    codes, _ = pd.factorize(mv["experiment_id"].astype(object), sort=True)
    out["exp"] = codes
    return out.reset_index(drop=True)


def impostor_times(mv: pd.DataFrame) -> pd.DataFrame:
    """Per game: ``time`` (round voted out, or of censoring), ``event`` (1 = voted out), mode, exp."""
    imp = mv[mv["role"] == "impostor"].sort_values(["game_id", "round"])
    last = imp.groupby("game_id", sort=False).tail(1).set_index("game_id")
    declared = mv[mv["self_declared"]].groupby("game_id")["round"].max()
    ends = mv.groupby("game_id")["round"].max()
    event = last["eliminated"].to_numpy()
    decided = (declared.reindex(last.index) == ends.reindex(last.index)).fillna(False).to_numpy(bool)
    time = np.where(event | decided, last["round"].to_numpy(), last["max_rounds"].to_numpy())
    return pd.DataFrame({"game_id": last.index, "time": time.astype(np.int64), "event": event.astype(int),
                         "mode": last["mode"].to_numpy(), "exp": last["exp"].to_numpy()})


def km_cluster(time, event, groups, rounds: int, alpha: float) -> pd.DataFrame:
    """S(r) for r = 1..rounds with its experiment-clustered interval (module docstring)."""
    time, event = np.asarray(time, np.int64), np.asarray(event, int)
    _, groups = np.unique(np.asarray(groups), return_inverse=True)
    G = groups.max() + 1
    sf = SurvfuncRight(time.astype(float), event)
    rows, infl = [], np.zeros(G)
    for r in range(1, rounds + 1):
        at_risk = time >= r
        dead = at_risk & (time == r) & (event == 1)
        n_k, d_k = at_risk.sum(), dead.sum()
        h = d_k / n_k if n_k else 0.0
        if n_k and h < 1:
            infl -= (np.bincount(groups, dead, G) - h * np.bincount(groups, at_risk, G)) / (n_k * (1 - h))
        past = sf.surv_times <= r
        s = float(sf.surv_prob[past][-1]) if past.any() else 1.0
        g_r = int(np.unique(groups[at_risk | (time < r)]).size)
        if g_r < 2:
            lo, hi, method = np.nan, np.nan, "not computed: one experiment (no between-experiment variation)"
        elif s <= 0.0 or s >= 1.0:
            lo, hi = proportion_confint(g_r if s >= 1 else 0, g_r, alpha=alpha, method="beta")
            method = METHOD_EXTREME
        else:
            var_log = G / (G - 1) * float((infl ** 2).sum())
            se = np.sqrt(var_log) / (1 - s)
            z = np.log(s / (1 - s))
            t = sps.t.ppf(1 - alpha / 2, G - 1)
            lo, hi, method = 1 / (1 + np.exp(-(z - t * se))), 1 / (1 + np.exp(-(z + t * se))), KM_METHOD
        rows.append({"round": r, "n_at_risk": int(n_k), "n_voted_out": int(d_k), "survival_pct": 100 * s,
                     "survival_ci_low": 100 * lo, "survival_ci_high": 100 * hi, "survival_n_exp": g_r,
                     "survival_ci_method": method})
    return pd.DataFrame(rows)


@table("rounds_survival", columns=["mode", "round", "survival_pct", "survival_ci_low", "survival_ci_high",
                                   "n_at_risk", "n_voted_out"],
    title="Longer games: the impostor's survival by round and mode (Kaplan-Meier, % not voted out)",
    section="rounds",
    inference=(
        infer("survival", ("mode", "round"), "survival_pct", ("survival_ci_low", "survival_ci_high"),
          method="survival_ci_method", scale=100),
    ),
    rounds=True,
)
def rounds_survival(data, config) -> pd.DataFrame:
    """Kaplan-Meier share of games whose impostor is not voted out by round r, by mode and pooled."""
    mv = round_moves(data)
    t = impostor_times(mv)
    rounds = int(mv["max_rounds"].max())
    parts = []
    for mode in [*ordered_levels(t["mode"], MODES), ALL]:
        sel = t if mode == ALL else t[t["mode"] == mode]
        part = km_cluster(sel["time"], sel["event"], sel["exp"], rounds, config.alpha)
        part.insert(0, "mode", mode)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


@table("rounds_votes", columns=["model", "round", "vote_acc_pct", "vote_acc_ci_low", "vote_acc_ci_high", "n_ballots"],
    title="Longer games: majority ballots naming the impostor, by model and round",
    section="rounds",
    inference=(
        infer("vote_acc", ("model", "round"), "vote_acc_pct", ("vote_acc_ci_low", "vote_acc_ci_high"),
          method="vote_acc_ci_method", scale=100),
    ),
    rounds=True,
)
def rounds_votes(data, config) -> pd.DataFrame:
    """Share of counted majority ballots naming the impostor, by voter model and round (and pooled)."""
    mv = round_moves(data)
    imp = mv[mv["role"] == "impostor"].set_index(["game_id", "round"])["seat"]
    b = mv[(mv["role"] == "majority") & np.isfinite(mv["vote"])]
    imp_seat = imp.reindex(pd.MultiIndex.from_arrays([b["game_id"], b["round"]])).to_numpy(float)
    hit = (b["vote"].to_numpy() == imp_seat).astype(float)
    if len(b) == 0:
        raise StatsUnavailable("no counted majority ballot")
    parts = []
    for model in (b["model"].to_numpy(), np.full(len(b), ALL, object)):
        keys = pd.Series(list(zip(model, b["round"].to_numpy())), dtype=object)
        r = rate_columns("vote_acc", hit, np.ones(len(b)), b["exp"].to_numpy(), keys, config.alpha)
        r["n_ballots"] = keys.value_counts().reindex(r.index).to_numpy()
        r.index = pd.MultiIndex.from_tuples(r.index, names=["model", "round"])
        parts.append(r.reset_index())
    out = pd.concat(parts, ignore_index=True)
    out["_a"] = (out["model"] == ALL).astype(int)
    return out.sort_values(["_a", "model", "round"]).drop(columns="_a").reset_index(drop=True)
