"""The team-mode contrasts figure (Table 12 / Appendix M.8): per model, the teammate premium in
vote alignment (teammates minus cross-team pairs of the same games) and the rate of
coordination language, in each team mode, with design-bootstrap CIs (tables ``team_ballots``
and ``team_language``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.figures.style import MODE_COLOR, MODE_LABEL, plt, save_figure
from impostor_bench.core.modes import TEAM_MODES_BY_DISCLOSURE

__all__ = ["fig_team_contrasts"]

TEAM_MODES = TEAM_MODES_BY_DISCLOSURE  # least to most told of the team (impostor_bench.core.modes)


def _panel(ax, df: pd.DataFrame, col: str, lo: str, hi: str, models: list, xlabel: str) -> int:
    """One panel; an interval that is not a real one (interval_check) is drawn as its point alone.
    Returns how many points have no interval drawn."""
    from impostor_bench.analysis.report.interval_check import bounds_of, interval_problem

    bare = 0
    modes = [m for m in TEAM_MODES if m in set(df["mode"])]
    step = 0.8 / max(len(modes), 1)
    for k, mode in enumerate(modes):
        sub = df[df["mode"] == mode].set_index("model").reindex(models)
        y = np.arange(len(models)) + (k - (len(modes) - 1) / 2) * step
        est = pd.to_numeric(sub[col], errors="coerce").to_numpy(float)
        low = pd.to_numeric(sub[lo], errors="coerce").to_numpy(float)
        high = pd.to_numeric(sub[hi], errors="coerce").to_numpy(float)
        ok = np.isfinite(est)
        real = np.array([interval_problem(e, a, b, bounds_of(col)) is None and np.isfinite(a) and np.isfinite(b)
                         for e, a, b in zip(est, low, high)], bool)
        bare += int((ok & ~real).sum())
        low, high = np.where(real, low, est), np.where(real, high, est)
        ax.errorbar(est[ok], y[ok], xerr=[est[ok] - low[ok], high[ok] - est[ok]], fmt="o", ms=5, capsize=2.5,
                    color=MODE_COLOR.get(mode, "0.3"), label=MODE_LABEL.get(mode, mode))
    ax.axvline(0, color="0.4", ls="--", lw=1)
    ax.set_yticks(np.arange(len(models)))
    ax.set_yticklabels(models)
    ax.set_ylim(len(models) - 0.5, -0.5)
    ax.set_xlabel(xlabel)
    ax.grid(axis="y", visible=False)
    return bare


def _has_values(df: Optional[pd.DataFrame], col: str) -> bool:
    """A panel is drawn only when some value is not zero (an all-zero rate says the text lacked it)."""
    if df is None or not len(df) or col not in df.columns:
        return False
    v = pd.to_numeric(df[col], errors="coerce").to_numpy(float)
    return bool((np.isfinite(v) & (v != 0)).any())


def _method(table: str, col: str) -> str:
    from impostor_bench.analysis.intervals import interval_for

    spec = interval_for(table, col)
    return spec.method if spec is not None else "no interval"


def fig_team_contrasts(data: AnalysisData, tables: dict, out: Path, notes: list[str]) -> Optional[dict]:
    tb = tables.get("team_ballots")
    if tb is None or len(tb) == 0:
        notes.append("Figure 'team-mode contrasts' skipped: no team-mode games (team_ballots is empty).")
        return None
    tb = tb[(tb["kind"] == "all") & (tb["mode"] != "ALL")]
    tl = tables.get("team_language")
    tl = tl[tl["mode"].isin(TEAM_MODES)] if tl is not None and len(tl) else None
    models = sorted(set(tb["model"]), key=str)
    if not _has_values(tb, "teammate_premium_pp"):
        notes.append("Figure 'team-mode contrasts' skipped: no teammate premium could be estimated.")
        return None
    language = _has_values(tl, "coord_rate_pct")
    n = 2 if language else 1
    fig, axes = plt.subplots(1, n, figsize=(5.8 * n, 0.5 * len(models) + 1.8), squeeze=False, layout="constrained")
    bare = _panel(axes[0][0], tb, "teammate_premium_pp", "ci_low", "ci_high", models,
                  "teammate premium in vote alignment (pp, 95% CI)")
    axes[0][0].set_title("Teammate premium", loc="left")
    if n == 2:
        bare += _panel(axes[0][1], tl, "coord_rate_pct", "coord_rate_pct_ci_low", "coord_rate_pct_ci_high", models,
                       "seats using coordination language (%, 95% CI)")
        axes[0][1].set_title("Coordination language", loc="left")
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:  # below the panels: inside, "best" still covered a model's bar
        fig.legend(handles, labels, loc="outside lower center", ncols=len(handles), fontsize=8, frameon=False)
    path = out / "team_contrasts.png"
    save_figure(fig, path)
    return {"file": path.name, "title": "Team-mode contrasts per model (Table 12, Appendix M.8)",
            "caption": (("Left: v" if language else "V") + "ote alignment of teammates minus that of cross-team pairs in the same games, per team "
                        "mode (team_blind: team undisclosed = Implicit Coord.; team_aware: disclosed); the same "
                        "models and word pairs play every mode, so the mode contrast isolates disclosure. "
                        + ("Right: share of a model's seats whose description or ballot reasoning uses coordination "
                           "language (lexicon analysis/lexicon/language.json). " if language else
                           "No coordination-language panel: no seat used coordination language in its text (or the "
                           "games have no text). ")
                        + f"Bars: 95% intervals of tables team_ballots / team_language ({_method('team_ballots', 'teammate_premium_pp')})"
                        + (f"; {bare} point(s) drawn alone, their interval not a real one (zero width or out of range)"
                           if bare else "") + ". docs/analysis.md \"Team dynamics and language\".")}
