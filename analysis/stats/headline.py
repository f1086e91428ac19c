"""Table 1 (headline) and per-model win rates by mode / difficulty (Appendix D figures).

Denominators (data contract):
* imp_win  -- games in which the model plays the impostor (games.impostor_model);
* maj_win  -- majority seats the model plays (players rows with role majority; a
              homogeneous game contributes three seats);
* maj_win_games -- the paper's Table 1 denominator: games in which the model holds at least one
              majority seat (a homogeneous game counts once), majority wins over those games;
* det_acc  -- legal ballots (valid or self-vote, impostor_bench.core.records.LEGAL_BALLOT_CLASSES)
              cast by the model's majority seats; correct = vote on the impostor seat (a
              self-vote or a vote on another majority seat is wrong).
``*_ci`` is the half-width (pp) of the 95% design-based interval, (upper - lower) / 2, and
``*_ci_low`` / ``*_ci_high`` (%) its limits: experiments are the clusters
(``impostor_bench.analysis.stats.rates.rate_columns``: imp_win and maj_win composition-adjusted by
the design logit, CR2, t on Bell-McCaffrey df, logit scale, CR1 with t(G - 1) where the design logit
cannot be fitted; det_acc CR1, where the design logit did not narrow it;
``*_n_exp`` = G), so a homogeneous game's three majority seats and an experiment's games
count as the correlated observations they are. (A Wilson interval would
treat games, or seats, as independent: 60-91% coverage under the design's dependence.)
``imp_win_ci_boot`` (half-width, pp) and ``imp_win_ci_{low,high}_boot`` are the
experiment-level bootstrap interval of the ``bootstrap`` table (``imp_win_ci_bootstrap``
names which bootstrap), a robustness check.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import DIFFICULTIES, MODES, prepared, table
from impostor_bench.analysis.stats._marginal import design_index
from impostor_bench.analysis.stats.declaration import infer
from impostor_bench.analysis.stats.network import model_network
from impostor_bench.analysis.stats.rates import rate_columns
from impostor_bench.analysis.stats.robustness import bootstrap
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig


def _seat_frame(prep) -> pd.DataFrame:
    gi, seat = np.nonzero(prep.present)
    vote = prep.vote[gi, seat]
    return pd.DataFrame({
        "gi": gi, "exp": prep.exp_code[gi], "model": prep.model[gi, seat], "majority": ~prep.is_imp[gi, seat],
        "won": np.where(prep.is_imp[gi, seat], prep.y[gi] == 1, prep.y[gi] == 0),
        "valid": ~np.isnan(vote) | (prep.ballot_class[gi, seat] == "self_vote"),
        "correct": vote == prep.imp_seat[gi],
    })


@table("headline",
    title="Headline results per model (paper Table 1)",
    section="paper",
    inference=(
        infer("imp_win", ("model",), "imp_win_pct", ("imp_win_ci_low", "imp_win_ci_high"),
          method="imp_win_ci_method", scale=100),
        infer("maj_win", ("model",), "maj_win_pct", ("maj_win_ci_low", "maj_win_ci_high"),
          method="maj_win_ci_method", scale=100),
        infer("det_acc", ("model",), "det_acc_pct", ("det_acc_ci_low", "det_acc_ci_high"),
          method="det_acc_ci_method", scale=100),
        infer("maj_win_games", ("model",), "maj_win_games_pct", ("maj_win_games_ci_low", "maj_win_games_ci_high"),
          method="maj_win_games_ci_method", scale=100),
    ),
)
def headline(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    prep = prepared(data)
    imp = pd.DataFrame({"model": prep.imp_model, "y": prep.y}).groupby("model")["y"].agg(["sum", "size"])
    out = pd.DataFrame(index=imp.index)
    out["n_imp_games"] = imp["size"]
    X = design_index(prep)
    out = out.join(rate_columns("imp_win", prep.y, np.ones(prep.n), prep.exp_code, prep.imp_model, config.alpha,
                                X, config.min_resid_clusters))
    if prep.has_players:
        s = _seat_frame(prep)
        maj = s[s["majority"]]
        out = out.join(maj.groupby("model").size().rename("n_maj_seats"), how="outer")
        out = out.join(maj[maj["valid"]].groupby("model").size().rename("n_det_votes"), how="outer")
        for c in ["n_maj_seats", "n_det_votes", "n_imp_games"]:
            out[c] = out[c].fillna(0).astype(int)
        out = out.join(rate_columns("maj_win", maj["won"], np.ones(len(maj)), maj["exp"], maj["model"], config.alpha,
                                    X.take(maj["gi"].to_numpy()), config.min_resid_clusters))
        games = maj.drop_duplicates(["gi", "model"])  # one row per (game, model in the majority)
        out = out.join(games.groupby("model").size().rename("n_maj_games"), how="left")
        out = out.join(rate_columns("maj_win_games", games["won"], np.ones(len(games)), games["exp"], games["model"],
                                    config.alpha, X.take(games["gi"].to_numpy()), config.min_resid_clusters))
        det = maj[maj["valid"]]
        # detection accuracy stays on CR1: the design logit of ballot correctness left its width where CR1's
        # was (1.27 vs 1.26 x the sampling SD, planted, 120 x 40) on fewer df (docs/analysis.md)
        out = out.join(rate_columns("det_acc", det["correct"], np.ones(len(det)), det["exp"], det["model"],
                                    config.alpha))
        net = model_network(data, config).set_index("model")
        out = out.join(net[["centrality", "reach", "coal_eff_pct", "centrality_rel", "brokerage",
                            "influence"]], how="left")
    else:
        out["n_maj_seats"] = 0
    out = out.join(_boot_imp_win(data, config), how="left")
    out = out.reset_index().rename(columns={"index": "model"})
    return out.sort_values("model", key=lambda s: s.astype(str)).reset_index(drop=True)


def _boot_imp_win(data: Analysis, config: StatsConfig) -> pd.DataFrame:
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
    keys = pd.Series(list(zip(prep.imp_model, key)), dtype=object)
    agg = rate_columns("imp_win", prep.y, np.ones(prep.n), prep.exp_code, keys, config.alpha, design_index(prep),
                       config.min_resid_clusters)
    agg["n"] = keys.value_counts().reindex(agg.index).to_numpy()
    agg.index = pd.MultiIndex.from_tuples(agg.index, names=["model", by])
    agg = agg.reset_index()
    rank = {v: i for i, v in enumerate(order)}
    agg["_o"] = agg[by].map(lambda v: rank.get(v, len(rank)))
    return agg.sort_values(["model", "_o"]).drop(columns="_o").reset_index(drop=True)


@table("win_by_model_mode", columns=["model", "mode", "imp_win_pct", "imp_win_ci", "n"],
    title="Impostor win (%) of each model by mode (Appendix D, Figure 1)",
    section="paper",
    inference=(
        infer("imp_win", ("model", "mode"), "imp_win_pct", ("imp_win_ci_low", "imp_win_ci_high"),
          method="imp_win_ci_method", scale=100),
    ),
)
def win_by_model_mode(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Impostor win % of each model by mode (Appendix D, Figure 1)."""
    return _win_by(data, config, "mode", MODES)


@table("win_by_model_difficulty", columns=["model", "difficulty", "imp_win_pct", "imp_win_ci", "n"],
    title="Impostor win (%) of each model by difficulty (Appendix D, Figure 2)",
    section="paper",
    inference=(
        infer("imp_win", ("model", "difficulty"), "imp_win_pct",
          ("imp_win_ci_low", "imp_win_ci_high"), method="imp_win_ci_method", scale=100),
    ),
)
def win_by_model_difficulty(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Impostor win % of each model by difficulty (Appendix D, Figure 2)."""
    return _win_by(data, config, "difficulty", DIFFICULTIES)
