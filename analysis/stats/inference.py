"""One list of every p-value and interval the report prints (``tables/inference.csv``).

Each :class:`Inference` entry says where a table prints inference (its estimate, interval
and p-value columns), which method produced it and under which calibration key its size and
coverage are measured (``analysis/calibration_matrix.py`` writes one row per key, scenario and
design size to ``benchmarks/calibration.csv``; docs/analysis.md has the figures). The
``inference`` table flattens every entry over the computed tables: one row per printed
p-value or interval. The multiple-comparison families are built from it, and only from rows
whose method is calibrated (``calibrated``): a paper-reproduction method (``paper_methods``,
labelled "paper" in its method) or a row that was not computed never enters a family.

A test (tests/analysis/stats/test_inference_registry.py) fails when a table prints a p-value or
interval column that no entry lists, or when an entry has no calibration row, so nothing
uncalibrated can be added later without it showing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import REGISTRY, StatsUnavailable, table
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig

INFERENCE_COLUMNS = ["table", "quantity", "estimate", "ci_low", "ci_high", "p", "method", "calibration", "calibrated",
                     "family"]


@dataclass(frozen=True)
class Inference:
    """Where one table prints one kind of inference.

    table     -- bundle table name
    name      -- the quantity family (e.g. ``imp_win``); the calibration key is ``table:name``
    keys      -- columns naming the row (joined with "/" into ``quantity``)
    estimate  -- estimate column
    ci        -- (low, high) interval columns, or None
    p         -- p-value column, or None
    method    -- column naming each row's method, or a fixed method label
    family    -- multiple-comparison family of its p-values (None: not tested in a family)
    pooled_out -- a pooled row (a key equal to ``ALL``) is not a hypothesis of the family
    scale     -- divide the table's values by this to report them (100 for percentages)
    """

    table: str
    name: str
    keys: tuple[str, ...]
    estimate: str
    ci: Optional[tuple[str, str]] = None
    p: Optional[str] = None
    method: str = "method"
    family: Optional[str] = None
    scale: float = 1.0
    pooled_out: bool = False

    @property
    def calibration(self) -> str:
        return f"{self.table}:{self.name}"


I = Inference
#: Every printed p-value and interval of the report (tables not listed print none).
SPECS: tuple[Inference, ...] = (
    I("headline", "imp_win", ("model",), "imp_win_pct", ("imp_win_ci_low", "imp_win_ci_high"),
      method="imp_win_ci_method", scale=100),
    I("headline", "maj_win", ("model",), "maj_win_pct", ("maj_win_ci_low", "maj_win_ci_high"),
      method="maj_win_ci_method", scale=100),
    I("headline", "det_acc", ("model",), "det_acc_pct", ("det_acc_ci_low", "det_acc_ci_high"),
      method="det_acc_ci_method", scale=100),
    I("win_by_model_mode", "imp_win", ("model", "mode"), "imp_win_pct", ("imp_win_ci_low", "imp_win_ci_high"),
      method="imp_win_ci_method", scale=100),
    I("win_by_model_difficulty", "imp_win", ("model", "difficulty"), "imp_win_pct",
      ("imp_win_ci_low", "imp_win_ci_high"), method="imp_win_ci_method", scale=100),
    I("balance", "p_imp", ("mode",), "p_imp", ("p_imp_ci_low", "p_imp_ci_high"), method="ci_method"),
    I("bootstrap", "quantity", ("quantity",), "estimate", ("ci_low", "ci_high"), method="method"),
    I("speaking_itt", "itt", ("mode", "difficulty"), "mid_rand_pp", ("ci_low", "ci_high"), "p",
      method="speaking-order randomisation p; design bootstrap CI", family="speaking_itt", scale=100,
      pooled_out=True),
    I("speaking_randomization", "position", ("scope", "contrast"), "observed_pp", p="p",
      method="speaking-order randomisation (positions re-drawn per game)", scale=100),
    I("speaking_glm", "position_or", ("term",), "or", ("ci_low", "ci_high"), "p",
      method="logit with mode/difficulty/model effects; CR1 by experiment, Wald z"),
    I("equation1", "fe_or", ("term", "cluster"), "or", ("ci_low", "ci_high"), "p", method="method"),
    I("learning", "learning_coef", ("mode",), "learning_coef", ("ci_low", "ci_high"), "p", method="method"),
    I("learning", "change_30", ("mode",), "change_30_pct", ("change_30_ci_low", "change_30_ci_high"),
      method="method"),
    I("ratings", "skill", ("model", "role"), "skill", ("ci_low", "ci_high"), method="method"),
    I("correlations", "pearson", ("x", "y"), "pearson_r", ("pearson_ci_low", "pearson_ci_high"),
      method="inference"),
    I("correlations", "spearman", ("x", "y"), "spearman_rho", p="spearman_p", method="inference"),
    # regression / test columns (issue 26): _regress.experiment_logit unless paper_methods
    I("odds_ratios", "or", ("comparison",), "or", ("ci_low", "ci_high"), "p", family="primary"),
    I("chi2", "factor", ("test",), "chi2", p="p", method="p_method", family="primary"),
    I("cluster_robust", "term", ("cluster", "term"), "or", ("ci_low", "ci_high"), "p"),
    I("permutation", "contrast", ("contrast",), "observed", p="p", family="permutation"),
    I("negative_controls", "control", ("control",), "estimate", p="p", family="negative_controls"),
    I("opponent_baseline", "or_per_10pp", ("model", "difficulty"), "or_per_10pp", ("ci_low", "ci_high"), "p",
      family="opponent_baseline"),
    I("scaling", "or_per_10x", ("fit",), "or_per_10x", ("ci_low", "ci_high"), "p"),
    # issue 27 (analysis/stats/paper_checks.py): the same experiment-clustered rate interval
    I("win_model_mode_difficulty", "imp_win", ("model", "mode", "difficulty"), "imp_win_pct",
      ("imp_win_ci_low", "imp_win_ci_high"), method="imp_win_ci_method", scale=100),
    I("detection_by_difficulty", "det_acc", ("model", "difficulty"), "det_acc_pct",
      ("det_acc_ci_low", "det_acc_ci_high"), method="det_acc_ci_method", scale=100),
    I("negative_control_position", "self_decl", ("position",), "self_decl_pct",
      ("self_decl_ci_low", "self_decl_ci_high"), method="self_decl_ci_method", scale=100),
)

WILD = "design bootstrap (wild by experiment) SD; t(G-1), CR1 factor"
WILD_PERCENTILE = "design bootstrap (wild by experiment), percentile (pooled fits over many experiments)"


def _wide(table_name: str, keys: tuple[str, ...], *cols: str, method: str = WILD) -> tuple[Inference, ...]:
    """Entries of a table that prints ``<col>`` with ``<col>_ci_low`` / ``<col>_ci_high``."""
    return tuple(Inference(table_name, c, keys, c, (f"{c}_ci_low", f"{c}_ci_high"), method=method) for c in cols)


#: Table 12 / Appendix M and O.2 measures (``team_ballots``, ``language``, ``table12``, ``style_*``):
#: experiment-level wild bootstrap (``analysis/stats/_wild.py``).
SPECS = SPECS + (
    I("coordination", "vote_coord", ("model",), "vote_coord_pct", ("vote_coord_ci_low", "vote_coord_ci_high"),
      method="vote_coord_ci_method", scale=100),
    I("team_ballots", "teammate_premium", ("model", "mode", "kind"), "teammate_premium_pp", ("ci_low", "ci_high"),
      method=WILD),
    *_wide("team_ballots", ("model", "mode", "kind"), "vote_coord_pct", "vote_coord_cross_pct"),
    *_wide("team_language", ("model", "mode"), "coord_rate_pct", "coord_share_pct", "suspicion_pct", "hedge_per100",
           "words_mean"),
    I("style_correlation", "r", ("mode", "pairs"), "r", ("ci_low", "ci_high"), method=WILD_PERCENTILE),
    *_wide("style_metrics", ("model",), "words_mean", "chars_mean", "talk_share_pct", "hedge_per100", "susp_per100",
           "coord_per100", "imp_win_pct"),
    I("style_adjusted", "or_adj", ("term",), "or_adj", ("ci_low", "ci_high"), method=WILD_PERCENTILE),
    I("style_adjusted", "or_raw", ("term",), "or_raw", ("ci_low_raw", "ci_high_raw"), method=WILD_PERCENTILE),
    *_wide("team_dynamics", ("model",), "vote_coord_pct", "vote_coord_cross_pct", "vote_coord_mm_pct",
           "vote_coord_cross_mm_pct", "vote_coord_im_pct", "vote_coord_cross_im_pct", "implicit_coord_pp",
           "coord_gap_pp", "disclosure_effect_pp", "betrayal_pct", "betrayal_cross_pct", "collab_success_pct",
           "collab_cross_pct", "fail_trust_breakdown_pct", "fail_paralysis_pct", "fail_groupthink_pct",
           "fail_misplaced_trust_pct", "coord_rate_pct", "coord_rate_noteam_pct", "trust_form_pct", "suspicion_pct",
           "ling_mirror_pp", "lsm_seen_pct", "vocab_conv", "vocab_jaccard_seen", "vulnerability_index"),
)

#: Games of more than one round (issue 32, ``analysis/stats/rounds.py``, ``rounds_trust.py``); calibrated on
#: ``impostor_bench.analysis.sim.rounds`` (``analysis/calibration_rounds.py``).
SPECS = SPECS + (
    I("rounds_survival", "survival", ("mode", "round"), "survival_pct", ("survival_ci_low", "survival_ci_high"),
      method="survival_ci_method", scale=100),
    I("rounds_votes", "vote_acc", ("model", "round"), "vote_acc_pct", ("vote_acc_ci_low", "vote_acc_ci_high"),
      method="vote_acc_ci_method", scale=100),
    I("rounds_trust", "betrayal", ("model",), "betrayal_pct", ("betrayal_ci_low", "betrayal_ci_high"),
      method="betrayal_ci_method", scale=100),
    I("rounds_trust", "recovery", ("model",), "recovery_pct", ("recovery_ci_low", "recovery_ci_high"),
      method="recovery_ci_method", scale=100),
    I("rounds_trust", "revision", ("model",), "revision_pct", ("revision_ci_low", "revision_ci_high"),
      method="revision_ci_method", scale=100),
    I("rounds_commit", "commit", ("mode", "round"), "commit_pct", ("commit_ci_low", "commit_ci_high"),
      method="commit_ci_method", scale=100),
)

_BY_TABLE: dict[str, list[Inference]] = {}
for _s in SPECS:
    _BY_TABLE.setdefault(_s.table, []).append(_s)


def is_calibrated(method: object) -> bool:
    """A printed method that the calibration covers: not the paper's reproduction, not skipped."""
    m = str(method)
    return bool(m) and m != "nan" and not m.startswith("paper") and "not computed" not in m


def rows_of(spec: Inference, frame: pd.DataFrame) -> pd.DataFrame:
    """The inference rows one spec contributes from its computed table (empty if absent)."""
    need = [*spec.keys, spec.estimate, *(spec.ci or ()), *((spec.p,) if spec.p else ())]
    if frame is None or len(frame) == 0 or any(c not in frame.columns for c in need):
        return pd.DataFrame(columns=INFERENCE_COLUMNS)
    quantity = frame[spec.keys[0]].astype(str)
    for k in spec.keys[1:]:
        quantity = quantity + "/" + frame[k].astype(str)
    method = frame[spec.method].astype(str) if spec.method in frame.columns else pd.Series(spec.method, index=frame.index)
    num = lambda c: pd.to_numeric(frame[c], errors="coerce") / spec.scale  # noqa: E731
    nan = pd.Series(np.nan, index=frame.index)
    out = pd.DataFrame({
        "table": spec.table, "quantity": spec.name + ":" + quantity, "estimate": num(spec.estimate),
        "ci_low": num(spec.ci[0]) if spec.ci else nan, "ci_high": num(spec.ci[1]) if spec.ci else nan,
        "p": pd.to_numeric(frame[spec.p], errors="coerce") if spec.p else nan,
        "method": method, "calibration": spec.calibration, "family": spec.family,
    })
    if spec.family is not None and spec.pooled_out:  # a pooled row summarises the family, it is not in it
        pooled = np.zeros(len(frame), bool)
        for k in spec.keys:
            pooled |= frame[k].astype(str).to_numpy() == "ALL"
        out.loc[pooled, "family"] = None
    out["calibrated"] = out["method"].map(is_calibrated)
    keep = out[["ci_low", "ci_high", "p"]].notna().any(axis=1) | ~out["calibrated"]
    return out[keep].reset_index(drop=True)


def inference_rows(data, config, tables=None) -> pd.DataFrame:
    """The rows of ``SPECS`` over the computed tables (only ``tables`` when given: the calibration
    matrix re-runs a subset); empty, with the ``inference`` columns, when nothing is printed."""
    parts = []
    for name, specs in _BY_TABLE.items():
        fn = REGISTRY.get(name)
        if fn is None or (tables is not None and name not in tables):
            continue
        frame = fn(data, config)
        parts += [rows_of(s, frame) for s in specs]
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=INFERENCE_COLUMNS)


@table("inference", columns=INFERENCE_COLUMNS)
def inference(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """One row per printed p-value or interval of the bundle (see the module docstring)."""
    rows = inference_rows(data, config)
    if len(rows) == 0:
        raise StatsUnavailable("no table printed a p-value or interval")
    return rows
