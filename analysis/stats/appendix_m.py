"""Appendix M's numbers that are not a Table 12 cell, and the Section 3.3 summary of Table 5, each
computed by the paper's words where they define it, or left empty with the reason (one row per
published number, so ``--compare-paper`` can set each beside ours):

* cross-model correlations (M.2, M.4, M.5): Pearson r across the models of Table 1 / Table 12
  columns, copied from ``model_correlations`` (``model_corr.py``): r is descriptive, ``n`` says how
  few points it rests on, and at the calibrated nine models the interval is the design bootstrap's
  for r among these models' true values (models share games: no i.i.d. interval holds).
  "Capability" (M.4) is not defined in the paper; we use Table 1's impostor win (its headline
  performance);
* convergence efficiency (M.5) = mean of Linguistic Mirror and Strategy Align. (both levels, %):
  the paper's 47.8 (Claude) and 62.4 (Llama-3.1-70B) are that mean of its own numbers;
* M.8: words per valid description by model and mode (28.3 -> 34.6 for GPT-4o); teammate vote
  alignment pooled over models in team_aware ("coordination attempts succeed", 51.2%) and
  team_blind ("implicit coordination", 59.6%), with the experiment-clustered rate interval of
  ``rates.rate_columns``; the ratio of strategy revisions team_aware / homogeneous (3.7x) on games of
  more than one round;
* Section 3.3: the median OR of Table 5's fitted cells and how many have q < alpha (0.65; 31/36).

Rows the paper states without a definition (semantic clarity, strategy consistency, coordination-signal
share of content, M.6's vulnerability score) keep an empty estimate and say so in ``reason``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import ALL, StatsUnavailable, prepared, table
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.headline import headline
from impostor_bench.analysis.stats.language import seat_text
from impostor_bench.analysis.stats.model_corr import model_correlations
from impostor_bench.analysis.stats.rates import rate_columns
from impostor_bench.analysis.stats.recognition import opponent_baseline
from impostor_bench.analysis.stats.rounds import round_moves
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.table12 import team_dynamics
from impostor_bench.analysis.stats.team_ballots import seat_pairs

COLUMNS = ["item", "section", "quantity", "model", "mode", "estimate", "ci_low", "ci_high", "n", "method", "reason"]

#: published numbers without a definition we could follow: (item, section, quantity, reason)
UNDEFINED = [
    ("vulnerability_score", "M.6", "vulnerability score (0.225-0.327)",
     "the paper gives no formula for it ('overall susceptibility to failure') and no table it is computed from"),
    ("semantic_clarity_change", "M.8", "semantic clarity, team_aware vs homogeneous (-23%)",
     "the paper does not define semantic clarity or how it is measured"),
    ("strategy_consistency", "M.8", "strategy consistency, homogeneous -> team_aware (67% -> 41%)",
     "the paper does not define strategy consistency (of which labels, over which moves)"),
    ("coord_signal_content", "M.8", "share of description content that is coordination signals (43% vs 8%)",
     "the paper gives no unit for 'share of description content'; Coord. Rate (coord_rate_pct) counts seats "
     "with a coordination phrase, another quantity"),
]


def _row(item, section, quantity, model="", mode="", estimate=np.nan, lo=np.nan, hi=np.nan, n=0, method="",
         reason="") -> dict:
    return {"item": item, "section": section, "quantity": quantity, "model": model, "mode": mode,
            "estimate": float(estimate), "ci_low": float(lo), "ci_high": float(hi), "n": int(n), "method": method,
            "reason": reason}


def _model_frame(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Per-model Table 1 and Table 12 columns, with convergence efficiency added."""
    td = team_dynamics(data, config)
    h = headline(data, config)
    td = td.set_index("model") if len(td) else pd.DataFrame(index=pd.Index([], name="model"))
    h = h.set_index("model") if len(h) else pd.DataFrame(index=pd.Index([], name="model"))
    out = td.join(h[[c for c in ("imp_win_pct",) if c in h.columns]], how="outer")
    for c in ("lsm_seen_pct", "strategy_align_pct"):
        if c not in out.columns:
            out[c] = np.nan
    out["convergence_eff_pct"] = (out["lsm_seen_pct"] + out["strategy_align_pct"]) / 2
    return out[out.index.astype(str) != ALL]


def _correlations(data: Analysis, config: StatsConfig) -> list[dict]:
    """The cross-model correlations, copied from ``model_correlations`` (r, its interval where calibrated)."""
    mc = model_correlations(data, config)
    return [_row(r["item"], r["section"], r["quantity"], estimate=r["r"], lo=r["ci_low"], hi=r["ci_high"], n=r["n"],
                 method=r["method"], reason=r["reason"]) for _, r in mc.iterrows()]


def _convergence(m: pd.DataFrame) -> list[dict]:
    rows = []
    for model, r in m.iterrows():
        est = r["convergence_eff_pct"]
        why = "" if np.isfinite(est) else ("needs Strategy Align. (judge labels: impostor annotate) and Linguistic "
                                           "Mirror for this model")
        rows.append(_row("convergence_eff", "M.5", "convergence efficiency = (Linguistic Mirror + Strategy Align.) / 2 "
                                                   "(%)", model=str(model), estimate=est,
                         method="mean of two Table 12 levels; estimate only" if not why else "",
                         reason=why or "no interval: the two levels' intervals come from one bootstrap not kept here"))
    return rows


def _description_words(data: Analysis, prep) -> list[dict]:
    try:
        st = seat_text(data, prep)
    except StatsUnavailable as e:
        return [_row("description_words", "M.8", "words per description", reason=str(e))]
    st = st[st["words"] > 0]
    rows = []
    for (model, mode), g in st.groupby(["model", "mode"], observed=True):
        if mode not in ("homogeneous", "team_aware"):
            continue
        rows.append(_row("description_words", "M.8", "mean words per valid description", model=str(model),
                         mode=str(mode), estimate=g["words"].mean(), n=len(g),
                         method="mean over descriptions; estimate only",
                         reason="no interval: a mean of word counts has none calibrated in this package"))
    return rows


def _pooled_alignment(prep, config: StatsConfig) -> list[dict]:
    pairs = seat_pairs(prep)
    what = {"team_aware": ("coord_attempt_success", "teammates name the same seat, team_aware, all models (%)"),
            "team_blind": ("implicit_coord_pooled", "teammates name the same seat, team_blind, all models (%)")}
    if not len(pairs):
        return [_row(item, "M.8", q, mode=m, reason="no team-mode game with two teams of two")
                for m, (item, q) in what.items()]
    pv = pairs[pairs["both_valid"].astype(bool) & pairs["mate"].astype(bool)].drop_duplicates(["gi", "p", "q"])
    rows = []
    for mode, (item, qty) in what.items():
        s = pv[pv["mode"].astype(str) == mode]
        if not len(s):
            rows.append(_row(item, "M.8", qty, mode=mode, reason=f"no {mode} teammate pair with two counted ballots"))
            continue
        r = rate_columns("a", s["aligned"].to_numpy(float), np.ones(len(s)), s["exp"].to_numpy(),
                         np.full(len(s), mode, object), config.alpha).iloc[0]
        rows.append(_row(item, "M.8", qty, mode=mode, estimate=r["a_pct"], lo=r["a_ci_low"], hi=r["a_ci_high"],
                         n=len(s), method=str(r["a_ci_method"])))
    return rows


def _revisions(data: Analysis) -> list[dict]:
    qty = "strategy revisions per ballot, team_aware / homogeneous (ratio)"
    try:
        mv = round_moves(data)
    except StatsUnavailable as e:
        return [_row("revision_ratio", "M.8", qty, reason=f"needs games of more than one round ({e})")]
    b = mv[np.isfinite(mv["vote"])][["game_id", "round", "seat", "vote", "mode"]].copy()
    b["vote"] = b["vote"].astype(np.int64)
    nxt = b.assign(round=b["round"] - 1).rename(columns={"vote": "next_vote"})[["game_id", "round", "seat",
                                                                                 "next_vote"]]
    j = b.merge(nxt, on=["game_id", "round", "seat"])
    present = mv[["game_id", "round", "seat"]].assign(round=mv["round"] - 1, target_in=True)
    j = j.merge(present.rename(columns={"seat": "vote_seat"}), left_on=["game_id", "round", "vote"],
                right_on=["game_id", "round", "vote_seat"], how="left")
    j = j[j["target_in"].notna()]
    rate = {m: float((g["next_vote"] != g["vote"]).mean()) for m, g in j.groupby("mode") if len(g)}
    if not {"team_aware", "homogeneous"} <= set(rate) or rate["homogeneous"] == 0:
        return [_row("revision_ratio", "M.8", qty, reason="needs multi-round games of both team_aware and homogeneous "
                                                          "mode with a revision in homogeneous")]
    return [_row("revision_ratio", "M.8", qty, estimate=rate["team_aware"] / rate["homogeneous"],
                 n=int(j["mode"].isin(["team_aware", "homogeneous"]).sum()),
                 method="ratio of two revision rates (rounds_trust's definition); estimate only",
                 reason="no interval: a ratio of two rates has none calibrated in this package")]


def _table5_summary(data: Analysis, config: StatsConfig) -> list[dict]:
    o = opponent_baseline(data, config)
    if len(o) and "difficulty" in o.columns:  # the paper's 36 = model x difficulty cells, not the pooled rows
        o = o[o["difficulty"].astype(str) != ALL]
    est = pd.to_numeric(o.get("or_per_10pp", pd.Series(dtype=float)), errors="coerce")
    fitted = o[np.isfinite(est.to_numpy(float))] if len(o) else o
    est = est[np.isfinite(est.to_numpy(float))]
    if not len(fitted):
        why = "Table 5 (opponent_baseline) has no fitted cell"
        return [_row("median_or_table5", "3.3", "median OR per +10 pp over Table 5's cells", reason=why),
                _row("significant_cells_table5", "3.3", "Table 5 cells with q < alpha", reason=why)]
    q = pd.to_numeric(fitted["q"], errors="coerce")
    return [_row("median_or_table5", "3.3", "median OR per +10 pp over Table 5's fitted cells",
                 estimate=float(np.median(est)), n=len(fitted), method="median; estimate only",
                 reason="no interval: a summary of the cells' estimates"),
            _row("significant_cells_table5", "3.3", f"Table 5 cells with q < {config.alpha:g} (of n fitted)",
                 estimate=float((q < config.alpha).sum()), n=len(fitted), method="count",
                 reason="a count of the table's BH-FDR tests")]


@table("appendix_m", columns=COLUMNS,
    title=("Appendix M's numbers outside Table 12 and Section 3.3's summary of Table 5: cross-model correlations "
           "(r with n = models; interval: model_correlations), convergence efficiency, M.8's measures, and the "
           "published numbers without a definition (empty, with the reason)"),
    section="beyond",
)
def appendix_m(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """One row per Appendix M / Section 3.3 number (and per model or mode where the paper gives one)."""
    prep = prepared(data, need_players=True)
    m = _model_frame(data, config)
    rows = _correlations(data, config) + _convergence(m) + _description_words(data, prep) + _pooled_alignment(prep, config)
    rows += _revisions(data) + _table5_summary(data, config)
    rows += [_row(item, sec, qty, reason=why) for item, sec, qty, why in UNDEFINED]
    return pd.DataFrame(rows, columns=COLUMNS)
