"""Table 12 (team dynamics across models), assembled from the ballot and language measures,
the judge labels (Strategy Align., Alignment Gap: ``judge_labels.py``) and the moves of
multi-round games (Trust Recovery, Resilience Factor: ``rounds_trust.py``), and the list of
its empty cells with the cause that holds for the data (``table12_undefined``).

Column names follow the paper's fourteen columns in its order.
Intervals: ``<col>_ci_low``/``<col>_ci_high`` from the experiment-level design bootstrap
(``analysis/stats/_wild.py``), one draw for every column, so the derived columns
(Coord. Gap, Vulnerability Index) get theirs from the same replicates.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import ALL, StatsUnavailable, note, prepared, table
from impostor_bench.analysis.stats.declaration import wide
from impostor_bench.analysis.stats._wild import Wild
from impostor_bench.analysis.stats.judge_labels import NO_LABELS, has_labels, judges_of, strategy_measures
from impostor_bench.analysis.stats.rounds import round_moves
from impostor_bench.analysis.stats.rounds_trust import rounds_trust
from impostor_bench.analysis.stats.language import language_measures
from impostor_bench.analysis.stats.team_ballots import ballot_measures, seat_pairs
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.core.records import TEAM_MODES

# (column, paper column, paper line it operationalises): the column of the paper's definition
# (Implicit Coord., Linguistic Mirror and Vocab Conv. are levels; Coord. Gap is Vote Coord. minus that
# level in all nine of its rows); our contrasts (implicit_coord_pp, ling_mirror_pp, vocab_conv) are printed beside them.
TABLE12 = [
    ("coord_rate_pct", "Coord. Rate", "Table 12 'any explicit coordination attempt'; M.8 'coordination theater'"),
    ("vote_coord_pct", "Vote Coord.", "Table 12 'pairwise vote-alignment rate'; Table 11 VoteCoord"),
    ("implicit_coord_pct", "Implicit Coord.", "M.2 'aligned actions in the absence of explicit communication'"),
    ("collab_success_pct", "Collab. Success", "Table 12 'planned joint strategy completes'; M.5"),
    ("strategy_align_pct", "Strategy Align.", "Table 12 'share of rounds with consistent plan'"),
    ("lsm_seen_pct", "Linguistic Mirror", "Table 12 'function-word/style mirroring index'; M.3"),
    ("vocab_jaccard_seen", "Vocab Conv.", "Table 12 'Jaccard convergence'; M.3 'lexical convergence'"),
    ("trust_form_pct", "Trust Form.", "Table 12 'share of games with explicit trust'; M.1"),
    ("betrayal_pct", "Betrayal Rate", "Table 12 'fraction of alliances that break'; M.4"),
    ("trust_recovery_pct", "Trust Recovery", "Table 12 'post-betrayal recovery rate'; M.4"),
    ("vulnerability_index", "Vulnerability Index", "Table 12 'Trust/Betrayal'; M.1"),
    ("resilience_factor", "Resilience Factor", "Table 12 'Recovery/Betrayal'; M.1"),
    ("coord_gap_paper_pp", "Coord. Gap", "Table 12 Coord. Gap = Vote Coord. - Implicit Coord. in all nine rows; M.2"),
    ("alignment_gap_pp", "Alignment Gap", "Table 12 / M.3, M.5 'strategy alignment minus collaboration success'"),
]

# Why a column can be empty, by cause (table12_undefined picks the one that holds for the data).
ONE_ROUND_WHY = ("every game is one round with players stateless across games: recovery after a betrayal needs a "
                 "later round between the same players")
CAUSES = {
    "trust_recovery_pct": (ONE_ROUND_WHY, "multi-round games (-T rounds=N; rounds_trust)"),
    "resilience_factor": ("Trust Recovery / Betrayal Rate, with Trust Recovery empty",
                          "multi-round games (-T rounds=N; rounds_trust)"),
    "strategy_align_pct": ("needs strategy labels; " + NO_LABELS, "judge labels (impostor annotate)"),
    "alignment_gap_pp": ("difference involving Strategy Align. (empty)", "judge labels (impostor annotate)"),
    "strategy_revisions": ("M.8 'mid-game strategy revisions' need a second move in the same game",
                           "multi-round games (rounds_trust.revision_pct)"),
}
#: the columns that stay empty on one-round games without judge labels (the old fixed list)
UNDEFINED = {c: CAUSES[c] for c in ("strategy_align_pct", "trust_recovery_pct", "resilience_factor",
                                    "alignment_gap_pp", "strategy_revisions")}

#: the table's leading columns (the data contract's order, kept when the paper's columns were added)
COLUMNS = ["model", "coord_rate_pct", "vote_coord_pct", "implicit_coord_pp", "collab_success_pct",
           "strategy_align_pct", "ling_mirror_pp", "vocab_conv", "trust_form_pct", "betrayal_pct",
           "trust_recovery_pct", "vulnerability_index", "resilience_factor", "coord_gap_pp", "alignment_gap_pp"]
PAPER_COLUMNS = [c for c, _, _ in TABLE12]


@table("team_dynamics", columns=COLUMNS,
    title=("Team dynamics per model (paper Table 12): the paper's 14 columns first (an empty one's cause is in "
           "table12_undefined; Strategy Align. needs judge labels, Trust Recovery multi-round games), then baselines (`*_cross_*`: cross-team pairs of the same "
           "games), per pair kind (mm = majority-majority, im = impostor-majority), M.6 failure modes (`fail_*`, "
           "% of team failures) and `*_ci_low`/`*_ci_high` from the design bootstrap (experiment level)"),
    section="paper",
    inference=(
        *wide(("model",), "vote_coord_pct", "vote_coord_cross_pct", "vote_coord_mm_pct",
               "vote_coord_cross_mm_pct", "vote_coord_im_pct", "vote_coord_cross_im_pct", "implicit_coord_pp",
               "coord_gap_pp", "disclosure_effect_pp", "betrayal_pct", "implicit_coord_pct", "coord_gap_paper_pp", "betrayal_cross_pct", "collab_success_pct",
               "collab_cross_pct", "fail_trust_breakdown_pct", "fail_paralysis_pct", "fail_groupthink_pct",
               "fail_misplaced_trust_pct", "coord_rate_pct", "coord_rate_noteam_pct", "trust_form_pct", "suspicion_pct",
               "ling_mirror_pp", "lsm_seen_pct", "vocab_conv", "vocab_jaccard_seen", "vulnerability_index"),
    ),
)
def team_dynamics(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Table 12: every definable metric per model, with intervals and in-design baselines."""
    prep = prepared(data, need_players=True)
    assert prep.model is not None  # need_players=True
    models = sorted(set(prep.model[prep.present]) - {None}, key=str)
    ballots, Rb = ballot_measures(data, config, models)
    lang, Rl = language_measures(data, config, models)
    out = ballots.join(lang, how="outer")
    if "trust_form_pct" in Rl and "betrayal_pct" in Rb:
        w = Wild(data, prep, config, models)
        vi = w.frame({"vulnerability_index": Wild.ratio(Rl["trust_form_pct"], Rb["betrayal_pct"])})
        out = out.join(vi)
    if Rb:
        w = Wild(data, prep, config, models)
        strat = strategy_measures(data, prep, w, Rb.get("collab_success_pct"))
        if strat:
            out = out.join(w.frame(strat))
            out["strategy_judge"] = ", ".join(judges_of(data.players))
    out = out.join(_vote_coord_by_mode(prep), how="left")
    out = out.join(_from_rounds(data, config), how="left")
    if "trust_recovery_pct" in out.columns and "betrayal_pct" in out.columns:
        # the paper's Resilience Factor is its own Trust Recovery / its own Betrayal Rate (all nine rows)
        out["resilience_factor"] = out["trust_recovery_pct"] / out["betrayal_pct"].where(out["betrayal_pct"] > 0)
    for c in dict.fromkeys(COLUMNS[1:] + PAPER_COLUMNS):
        if c not in out.columns:
            out[c] = np.nan
    filled = [c for c in PAPER_COLUMNS if out[c].notna().any()]
    note(data, f"team_dynamics (Table 12): {len(filled)} of 14 columns filled; the empty ones and why: "
               "table12_undefined")
    return out.reset_index()


def _from_rounds(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Trust Recovery (with its experiment-clustered interval and method) from ``rounds_trust``
    (games of more than one round; empty otherwise). The Resilience Factor printed beside it is
    that Trust Recovery / the table's own Betrayal Rate (``team_dynamics``); rounds_trust's ratio
    over every round's ballots stays beside it as ``resilience_all_rounds`` (no interval: none
    was calibrated)."""
    rt = rounds_trust(data, config)
    if not len(rt):
        return pd.DataFrame(index=pd.Index([], name="model"))
    rt = rt[rt["model"] != ALL].set_index("model")
    out = pd.DataFrame(index=rt.index)
    if "recovery_pct" in rt:
        out["trust_recovery_pct"] = rt["recovery_pct"]
        out["trust_recovery_pct_ci_low"] = rt["recovery_ci_low"]
        out["trust_recovery_pct_ci_high"] = rt["recovery_ci_high"]
        if "recovery_ci_method" in rt:
            out["trust_recovery_pct_ci_method"] = rt["recovery_ci_method"]
    if "resilience" in rt:
        out["resilience_all_rounds"] = rt["resilience"]
    if "revision_pct" in rt:
        out["strategy_revision_pct"] = rt["revision_pct"]
    return out


def _vote_coord_by_mode(prep) -> pd.DataFrame:
    """Teammate alignment per team mode, and the M.8 disclosure comparison the old ``coord_gap_pp`` held."""
    pairs = seat_pairs(prep)
    pv = pairs[pairs["both_valid"].astype(bool) & pairs["mate"].astype(bool)]
    out = pd.DataFrame(index=pd.Index(sorted(set(pv["model"].dropna().unique()), key=str), name="model"))
    for m in TEAM_MODES:
        out[f"vote_coord_{m}_pct"] = 100 * pv[pv["mode"] == m].groupby("model", observed=True)["aligned"].mean()
    out["vote_coord_blind_minus_aware_pp"] = out["vote_coord_team_blind_pct"] - out["vote_coord_team_aware_pct"]
    return out


@table("table12_undefined", columns=["metric", "paper_column", "paper_line", "reason", "definable_with", "models"],
    title="Table 12 / Appendix M columns with empty cells, the cause that holds for these data, and the models affected",
    section="beyond",
)
def table12_undefined(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Every Table 12 column (and M.8's strategy revisions) with an empty cell, the cause that
    holds for these data, and the models whose cell is empty ("all" when every one is)."""
    td = team_dynamics(data, config)
    papers = {c: (p, line) for c, p, line in TABLE12}
    multi = _multi_round(data)
    labels = has_labels(data.players)
    rows = []
    for c in [*PAPER_COLUMNS, "strategy_revisions"]:
        col = "strategy_revision_pct" if c == "strategy_revisions" else c
        empty = (td["model"][td[col].isna()].astype(str).tolist() if col in td.columns and len(td)
                 else ["all"])
        if not empty:
            continue
        reason, need = _cause(c, multi, labels, td)
        p, line = papers.get(c, ("(M.8 text)", "M.8 'We observe 3.7x more mid-game strategy revisions'"))
        every = len(td) == 0 or len(empty) == len(td)
        rows.append({"metric": c, "paper_column": p, "paper_line": line, "reason": reason, "definable_with": need,
                     "models": "all" if every else ", ".join(empty)})
    return pd.DataFrame(rows)


def _multi_round(data: Analysis) -> bool:
    try:
        round_moves(data)
    except StatsUnavailable:
        return False
    return True


def _cause(c: str, multi: bool, labels: bool, td: pd.DataFrame) -> tuple[str, str]:
    """The reason a column's cells are empty, for what these data hold."""
    if c in ("trust_recovery_pct", "resilience_factor", "strategy_revisions") and multi:
        if c == "resilience_factor":
            return ("Betrayal Rate of these models is 0 or empty (the ratio is undefined, not infinite) or "
                    "Trust Recovery empty", "betrayals followed by a later round")
        if c == "trust_recovery_pct":
            return ("no betrayal of these models' seats was followed by a round in which both teammates cast "
                    "counted ballots", "more or longer multi-round team-mode games")
        return ("no counted ballot of these models has a next-round ballot with its target still in",
                "more or longer multi-round games")
    if c in CAUSES and not (c in ("strategy_align_pct", "alignment_gap_pp") and labels):
        return CAUSES[c]
    if c == "vulnerability_index":
        return ("no betrayal by these models (Trust/Betrayal with 0 betrayals is undefined, not infinite) or no "
                "trust-formation ballots", "team-mode ballots with betrayals")
    if c in ("strategy_align_pct", "alignment_gap_pp"):
        return ("judge labels present, but no majority-majority team of these models has both members labelled "
                "with a strategy", "judge labels on team-mode games")
    return ("no unit of this measure for these models in these games (its unit is in docs/analysis.md, Table 12: "
            "team-mode ballots, teammate pairs, mm teams or descriptions)",
            "team-mode games of these models (team_blind for Implicit Coord.)")
