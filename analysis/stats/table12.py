"""Table 12 (team dynamics across models), assembled from the ballot and language measures,
and the list of its metrics that one-round games cannot define (with the reason).

Column names follow the paper's fourteen columns in its order; a metric this project
cannot define is an empty column, named with its reason in ``table12_undefined``.
Intervals: ``<col>_ci_low``/``<col>_ci_high`` from the experiment-level design bootstrap
(``analysis/stats/_wild.py``), one draw for every column, so the derived columns
(Coord. Gap, Vulnerability Index) get theirs from the same replicates.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import note, prepared, table
from impostor_bench.analysis.stats.declaration import wide
from impostor_bench.analysis.stats._wild import Wild
from impostor_bench.analysis.stats.language import language_measures
from impostor_bench.analysis.stats.team_ballots import ballot_measures, seat_pairs
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.core.records import TEAM_MODES

# (column, paper column, paper line it operationalises)
TABLE12 = [
    ("coord_rate_pct", "Coord. Rate", "Table 12 'any explicit coordination attempt'; M.8 'coordination theater'"),
    ("vote_coord_pct", "Vote Coord.", "Table 12 'pairwise vote-alignment rate'; Table 11 VoteCoord"),
    ("implicit_coord_pp", "Implicit Coord.", "M.2 'aligned actions in the absence of explicit communication'"),
    ("collab_success_pct", "Collab. Success", "Table 12 'planned joint strategy completes'; M.5"),
    ("strategy_align_pct", "Strategy Align.", "Table 12 'share of rounds with consistent plan'"),
    ("ling_mirror_pp", "Linguistic Mirror", "Table 12 'function-word/style mirroring index'; M.3"),
    ("vocab_conv", "Vocab Conv.", "Table 12 'Jaccard convergence'; M.3 'lexical convergence'"),
    ("trust_form_pct", "Trust Form.", "Table 12 'share of games with explicit trust'; M.1"),
    ("betrayal_pct", "Betrayal Rate", "Table 12 'fraction of alliances that break'; M.4"),
    ("trust_recovery_pct", "Trust Recovery", "Table 12 'post-betrayal recovery rate'; M.4"),
    ("vulnerability_index", "Vulnerability Index", "Table 12 'Trust/Betrayal'; M.1"),
    ("resilience_factor", "Resilience Factor", "Table 12 'Recovery/Betrayal'; M.1"),
    ("coord_gap_pp", "Coord. Gap", "Table 12 Coord. Gap = Vote Coord. - Implicit Coord. in all nine rows; M.2"),
    ("alignment_gap_pp", "Alignment Gap", "Table 12 / M.3, M.5 'strategy alignment minus collaboration success'"),
]

UNDEFINED = {
    "strategy_align_pct": ("a player states no plan and plays one description and one ballot: 'rounds with a "
                           "consistent plan' needs multi-round play or strategy labels from an annotation pass "
                           "(not run)", "multi-round games, or judge labels of strategy"),
    "trust_recovery_pct": ("recovery after a betrayal needs a later interaction between the same players; a game "
                           "is one round and players are stateless across games", "multi-round games"),
    "resilience_factor": ("ratio with Trust Recovery (undefined)", "multi-round games"),
    "alignment_gap_pp": ("difference involving Strategy Align. (undefined)", "multi-round games, or judge labels"),
    "strategy_revisions": ("M.8 'mid-game strategy revisions' need a second move in the same game",
                           "multi-round games"),
}

COLUMNS = ["model"] + [c for c, _, _ in TABLE12]


@table("team_dynamics", columns=COLUMNS,
    title=("Team dynamics per model (paper Table 12): the paper's 14 columns first (empty = not definable in "
           "one-round games, see table12_undefined), then baselines (`*_cross_*`: cross-team pairs of the same "
           "games), per pair kind (mm = majority-majority, im = impostor-majority), M.6 failure modes (`fail_*`, "
           "% of team failures) and `*_ci_low`/`*_ci_high` from the design bootstrap (experiment level)"),
    section="paper",
    inference=(
        *wide(("model",), "vote_coord_pct", "vote_coord_cross_pct", "vote_coord_mm_pct",
               "vote_coord_cross_mm_pct", "vote_coord_im_pct", "vote_coord_cross_im_pct", "implicit_coord_pp",
               "coord_gap_pp", "disclosure_effect_pp", "betrayal_pct", "betrayal_cross_pct", "collab_success_pct",
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
    out = out.join(_vote_coord_by_mode(prep), how="left")
    for c in UNDEFINED:
        if c in COLUMNS:
            out[c] = np.nan
    filled = [c for c in COLUMNS[1:] if c in out.columns and out[c].notna().any()]
    note(data, f"team_dynamics (Table 12): {len(filled)} of 14 columns filled; undefined ones and why: "
               "table12_undefined")
    return out.reset_index()


def _vote_coord_by_mode(prep) -> pd.DataFrame:
    """Teammate alignment per team mode, and the M.8 disclosure comparison the old ``coord_gap_pp`` held."""
    pairs = seat_pairs(prep)
    pv = pairs[pairs["both_valid"].astype(bool) & pairs["mate"].astype(bool)]
    out = pd.DataFrame(index=pd.Index(sorted(set(pv["model"].dropna()), key=str), name="model"))
    for m in TEAM_MODES:
        out[f"vote_coord_{m}_pct"] = 100 * pv[pv["mode"] == m].groupby("model")["aligned"].mean()
    out["vote_coord_blind_minus_aware_pp"] = out["vote_coord_team_blind_pct"] - out["vote_coord_team_aware_pct"]
    return out


@table("table12_undefined", columns=["metric", "paper_column", "paper_line", "reason", "definable_with"],
    title="Table 12 / Appendix M metrics one-round games cannot define, and why",
    section="beyond",
)
def table12_undefined(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Metrics of Table 12 / Appendix M that one-round games with stateless players cannot define."""
    papers = {c: (p, line) for c, p, line in TABLE12}
    rows = []
    for c, (reason, need) in UNDEFINED.items():
        p, line = papers.get(c, ("(M.8 text)", "M.8 'We observe 3.7x more mid-game strategy revisions'"))
        rows.append({"metric": c, "paper_column": p, "paper_line": line, "reason": reason, "definable_with": need})
    return pd.DataFrame(rows)
