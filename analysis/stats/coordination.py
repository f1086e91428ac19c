"""Table 11 (coordination and impostor behaviour).

* brokerage      -- model-level mean of (degree centrality + betweenness) / 2 on the
                    vote-influence graph (network.py; betweenness is 0 there, so it equals reach).
* vote_coord_pct -- pairwise vote alignment of teammates: over teammate pairs (two seats
                    with the same non-null ``team`` in a game) in which both cast a valid
                    ballot, % naming the same seat. A pair counts for the model(s) of its two
                    seats (teams are model-based, so normally one model). ``vote_coord_ci``:
                    half-width of the design-based interval (``rates.rate_columns``:
                    experiments as clusters, composition-adjusted; ``vote_coord_ci_low/high``, ``_ci_method``). NaN for models never seen in a team mode.
                    ``vote_coord_cross_pct``: the same over cross-team pairs of the same
                    games (the baseline; without it Vote Coord. mostly restates accuracy).
* self_decl_pct  -- % of the model's impostor games in which the impostor self-declared.
* guess_succ_pct -- % of those self-declarations with a correct majority-word guess:
                    the logged win_condition (impostor_guess_correct / _wrong) when it
                    decided the game, else ``impostor_bench.core.rules.guess_matches`` on word_guess
                    vs majority_word (same normalisation as the game engine).

Table 12 (team dynamics) is ``analysis/stats/table12.py``, from the ballot measures
(``team_ballots.py``) and the language measures (``language.py``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import N_SEATS, note, prepared, table
from impostor_bench.analysis.stats._marginal import design_index
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats.network import model_network
from impostor_bench.analysis.stats.rates import rate_columns
from impostor_bench.analysis.stats.team_ballots import seat_pairs
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.core.rules import guess_matches



def teammate_pairs(prep) -> pd.DataFrame:
    """One row per (game, teammate pair, model credited): both_valid, aligned."""
    if prep.team is None:
        return pd.DataFrame(columns=["gi", "model", "mode", "both_valid", "aligned"])
    frames = []
    valid = ~np.isnan(prep.vote)
    for p in range(N_SEATS):
        for q in range(p + 1, N_SEATS):
            tp, tq = prep.team[:, p], prep.team[:, q]
            mate = pd.notna(tp) & (tp == tq)
            gi = np.nonzero(mate)[0]
            if len(gi) == 0:
                continue
            both = valid[gi, p] & valid[gi, q]
            aligned = both & (prep.vote[gi, p] == prep.vote[gi, q])
            mp, mq = prep.model[gi, p], prep.model[gi, q]
            frames.append(pd.DataFrame({"gi": gi, "model": mp, "mode": prep.mode[gi], "both_valid": both,
                                        "aligned": aligned}))
            diff = mp != mq
            if diff.any():
                frames.append(pd.DataFrame({"gi": gi[diff], "model": mq[diff], "mode": prep.mode[gi[diff]],
                                            "both_valid": both[diff], "aligned": aligned[diff]}))
    if not frames:
        return pd.DataFrame(columns=["gi", "model", "mode", "both_valid", "aligned"])
    return pd.concat(frames, ignore_index=True)


def _impostor_behaviour(data, prep) -> pd.DataFrame:
    idx = np.arange(prep.n)
    present = prep.present[idx, prep.imp_seat]
    sd = prep.self_decl[idx, prep.imp_seat]
    g = prep.games
    correct = np.full(prep.n, np.nan)
    if "win_condition" in g.columns:
        wc = g["win_condition"].astype(object).to_numpy()
        correct[wc == "impostor_guess_correct"] = 1.0
        correct[wc == "impostor_guess_wrong"] = 0.0
    todo = sd & np.isnan(correct)
    if todo.any():
        if prep.word_guess is None or "majority_word" not in g.columns:
            note(data, "coordination: guess success needs word_guess and majority_word for games not "
                       "decided by the impostor's guess; those declarations are left out")
        else:
            match = guess_matches
            guesses = prep.word_guess[idx, prep.imp_seat]
            words = g["majority_word"].astype(object).to_numpy()
            for i in np.nonzero(todo)[0]:  # only the self-declaring impostors (a small subset)
                correct[i] = float(match(guesses[i], words[i]))
    df = pd.DataFrame({"model": prep.imp_model, "present": present, "sd": sd, "correct": correct})
    df = df[df["present"]]
    out = df.groupby("model").agg(n_imp=("sd", "size"), n_decl=("sd", "sum"))
    dec = df[df["sd"] & df["correct"].notna()].groupby("model")["correct"].agg(["sum", "size"])
    out = out.join(dec, how="left").fillna({"sum": 0, "size": 0})
    out["self_decl_pct"] = 100 * out["n_decl"] / out["n_imp"]
    out["guess_succ_pct"] = np.where(out["size"] > 0, 100 * out["sum"] / out["size"].where(out["size"] > 0, 1),
                                     np.nan)
    return out.rename(columns={"size": "n_guess_judged"}).drop(columns="sum")


@table("coordination",
    title="Coordination and impostor behaviour (Table 11)",
    section="paper",
    inference=(
        infer("vote_coord", ("model",), "vote_coord_pct", ("vote_coord_ci_low", "vote_coord_ci_high"),
          method="vote_coord_ci_method", scale=100),
    ),
)
def coordination(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    prep = prepared(data, need_players=True)
    net = model_network(data, config).set_index("model")[["brokerage"]]
    pairs = teammate_pairs(prep)
    if len(pairs) == 0:
        note(data, "coordination: no team-mode games (no teammate pairs); vote_coord_pct left empty")
    valid_pairs = pairs[pairs["both_valid"].astype(bool)]
    vc = valid_pairs.groupby("model")["aligned"].agg(["size"]).rename(columns={"size": "n_pairs"})
    if len(valid_pairs):  # design-based interval: the pairs of an experiment are correlated
        gi = valid_pairs["gi"].to_numpy(np.int64)
        vc = vc.join(rate_columns("vote_coord", valid_pairs["aligned"].astype(float), np.ones(len(valid_pairs)),
                                  prep.exp_code[gi], valid_pairs["model"], config.alpha, design_index(prep).take(gi),
                                  config.min_resid_clusters))
    sp = seat_pairs(prep)  # the in-game baseline: cross-team pairs of the same games
    sp = sp[sp["both_valid"].astype(bool) & ~sp["mate"].astype(bool)]
    vc = vc.join((100 * sp.groupby("model", observed=True)["aligned"].mean()).rename("vote_coord_cross_pct"),
                 how="left")
    beh = _impostor_behaviour(data, prep)
    out = net.join(vc, how="outer").join(beh, how="outer")
    out.index.name = "model"
    return out.reset_index().sort_values("model", key=lambda s: s.astype(str)).reset_index(drop=True)
