"""Table 1 (headline) and per-model win rates by mode / difficulty (Appendix D figures).

Denominators (data contract):
* imp_win  -- games in which the model plays the impostor (games.impostor_model);
* maj_win  -- majority seats the model plays (players rows with role majority; a
              homogeneous game contributes three seats);
* det_acc  -- legal ballots (valid or self-vote, impostor.core.records.LEGAL_BALLOT_CLASSES)
              cast by the model's majority seats; correct = vote on the impostor seat (a
              self-vote or a vote on another majority seat is wrong).
``*_ci`` is the half-width (pp) of the 95% Wilson score interval,
(upper - lower) / 2; Wilson is asymmetric, so the half-width is a summary. Wilson
treats games as independent; ``imp_win_ci_boot`` (half-width, pp) and
``imp_win_ci_{low,high}_boot`` are the experiment-level bootstrap interval of the
``bootstrap`` table (``imp_win_ci_bootstrap`` names which bootstrap).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.stats._base import DIFFICULTIES, MODES, pct_and_halfwidth, prepared, table
from analysis.stats.network import model_network
from analysis.stats.robustness import bootstrap


def _seat_frame(prep) -> pd.DataFrame:
    gi, seat = np.nonzero(prep.present)
    vote = prep.vote[gi, seat]
    return pd.DataFrame({
        "gi": gi, "model": prep.model[gi, seat], "majority": ~prep.is_imp[gi, seat],
        "won": np.where(prep.is_imp[gi, seat], prep.y[gi] == 1, prep.y[gi] == 0),
        "valid": ~np.isnan(vote) | (prep.ballot_class[gi, seat] == "self_vote"),
        "correct": vote == prep.imp_seat[gi],
    })


@table("headline")
def headline(data, config) -> pd.DataFrame:
    prep = prepared(data)
    imp = pd.DataFrame({"model": prep.imp_model, "y": prep.y}).groupby("model")["y"].agg(["sum", "size"])
    out = pd.DataFrame(index=imp.index)
    out["n_imp_games"] = imp["size"]
    out["imp_win_pct"], out["imp_win_ci"] = pct_and_halfwidth(imp["sum"], imp["size"], config.alpha)
    if prep.has_players:
        s = _seat_frame(prep)
        maj = s[s["majority"]]
        mw = maj.groupby("model")["won"].agg(["sum", "size"])
        det = maj[maj["valid"]].groupby("model")["correct"].agg(["sum", "size"])
        out = out.join(mw.rename(columns={"sum": "maj_wins", "size": "n_maj_seats"}), how="outer")
        out = out.join(det.rename(columns={"sum": "det_correct", "size": "n_det_votes"}), how="outer")
        for c in ["maj_wins", "n_maj_seats", "det_correct", "n_det_votes", "n_imp_games"]:
            out[c] = out[c].fillna(0).astype(int)
        out["maj_win_pct"], out["maj_win_ci"] = pct_and_halfwidth(out["maj_wins"], out["n_maj_seats"], config.alpha)
        out["det_acc_pct"], out["det_acc_ci"] = pct_and_halfwidth(out["det_correct"], out["n_det_votes"],
                                                                  config.alpha)
        net = model_network(data, config).set_index("model")
        out = out.join(net[["centrality", "reach", "coal_eff_pct", "centrality_rel", "brokerage",
                            "influence"]], how="left")
        out = out.drop(columns=["maj_wins", "det_correct"])
    else:
        out["n_maj_seats"] = 0
    out = out.join(_boot_imp_win(data, config), how="left")
    out = out.reset_index().rename(columns={"index": "model"})
    return out.sort_values("model", key=lambda s: s.astype(str)).reset_index(drop=True)


def _boot_imp_win(data, config) -> pd.DataFrame:
    """Experiment-level bootstrap CI of each model's impostor win % (``bootstrap`` table): the
    Wilson ``imp_win_ci`` treats games as independent and is too narrow when games of an
    experiment are correlated (docs/analysis.md, calibration)."""
    b = bootstrap(data, config)
    b = b[b["quantity"].astype(str).str.startswith("imp_win_rate:")]
    models = b["quantity"].str.slice(len("imp_win_rate:"))
    return pd.DataFrame({"imp_win_ci_boot": 50 * (b["ci_high"] - b["ci_low"]).to_numpy(float),
                         "imp_win_ci_low_boot": 100 * b["ci_low"].to_numpy(float),
                         "imp_win_ci_high_boot": 100 * b["ci_high"].to_numpy(float),
                         "imp_win_ci_bootstrap": config.bootstrap}, index=pd.Index(models.to_numpy(), name="model"))


def _win_by(data, config, by: str, order) -> pd.DataFrame:
    prep = prepared(data)
    key = prep.mode if by == "mode" else prep.difficulty
    df = pd.DataFrame({"model": prep.imp_model, by: key, "y": prep.y})
    agg = df.groupby(["model", by])["y"].agg(["sum", "size"]).reset_index()
    agg["imp_win_pct"], agg["imp_win_ci"] = pct_and_halfwidth(agg["sum"], agg["size"], config.alpha)
    agg = agg.rename(columns={"size": "n"}).drop(columns="sum")
    rank = {v: i for i, v in enumerate(order)}
    agg["_o"] = agg[by].map(lambda v: rank.get(v, len(rank)))
    return agg.sort_values(["model", "_o"]).drop(columns="_o").reset_index(drop=True)


@table("win_by_model_mode", columns=["model", "mode", "imp_win_pct", "imp_win_ci", "n"])
def win_by_model_mode(data, config) -> pd.DataFrame:
    """Impostor win % of each model by mode (Appendix D, Figure 1)."""
    return _win_by(data, config, "mode", MODES)


@table("win_by_model_difficulty", columns=["model", "difficulty", "imp_win_pct", "imp_win_ci", "n"])
def win_by_model_difficulty(data, config) -> pd.DataFrame:
    """Impostor win % of each model by difficulty (Appendix D, Figure 2)."""
    return _win_by(data, config, "difficulty", DIFFICULTIES)
