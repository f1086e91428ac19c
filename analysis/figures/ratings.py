"""The ratings figure: each model's impostor and detection skill with its bootstrap CI,
one panel per role, models sorted by skill (table ``ratings``, analysis/stats/ratings.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.figures.style import IMPOSTOR_COLOR, MAJORITY_COLOR, plt, save_figure

__all__ = ["fig_ratings"]

_PANELS = {"impostor": ("Impostor skill", IMPOSTOR_COLOR), "majority": ("Detection skill (majority)", MAJORITY_COLOR),
           "net": ("Net skill (impostor - detection)", "0.3")}


def fig_ratings(data: AnalysisData, tables: dict, out: Path, notes: list[str]) -> Optional[dict]:
    df = tables.get("ratings")
    if df is None or len(df) == 0:
        notes.append("Figure 'skill ratings' skipped: the ratings table is empty.")
        return None
    df = df.copy()
    for c in ("skill", "ci_low", "ci_high"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    roles = [r for r in _PANELS if r in set(df["role"])]
    n = int(df.groupby("role").size().max())
    fig, axes = plt.subplots(1, len(roles), figsize=(4.6 * len(roles), 0.42 * n + 1.6), squeeze=False,
                             layout="constrained")  # each panel's model labels get their own room
    for ax, role in zip(axes[0], roles):
        sub = df[df["role"] == role].sort_values("skill", ascending=False).reset_index(drop=True)
        y = np.arange(len(sub))
        lo = np.where(np.isfinite(sub["ci_low"]), sub["ci_low"], sub["skill"])
        hi = np.where(np.isfinite(sub["ci_high"]), sub["ci_high"], sub["skill"])
        title, color = _PANELS[role]
        ax.errorbar(sub["skill"], y, xerr=[sub["skill"] - lo, hi - sub["skill"]], fmt="o", ms=6, capsize=3,
                    lw=1.4, color=color)
        ax.axvline(0, color="0.4", ls="--", lw=1)
        ax.set_yticks(y)
        ax.set_yticklabels(sub["model"])
        ax.set_ylim(len(sub) - 0.5, -0.5)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel("log-odds vs the average model (95% CI)")
        ax.set_title(title, loc="left")
    how = ("; ".join(dict.fromkeys(df["method"].astype(str))) if "method" in df.columns else
           f"{df['bootstrap'].iloc[0] if 'bootstrap' in df.columns else 'design'} bootstrap (experiment level)")
    path = out / "ratings.png"
    save_figure(fig, path)
    return {"file": path.name, "title": "Skill ratings per model, impostor and majority (beyond the paper)",
            "caption": ("Logistic (Bradley-Terry) model of the impostor win on the impostor model's skill minus the "
                        "mean detection skill of the majority seats, with mode, difficulty and seat effects, fitted "
                        "on every game; skills sum to zero per role (0 = the average model); higher is better in "
                        f"each panel. Bars: 95% intervals of table ratings ({how}). docs/analysis.md "
                        "\"Ratings\".")}
