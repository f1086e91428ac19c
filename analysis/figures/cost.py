"""The cost figure: tokens per seat and game (input and output) and the cost per success
(impostor win / correct detection) per model and role, from table ``cost``
(analysis/stats/cost.py); a model whose price is unknown says so instead of a bar."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.figures.style import IMPOSTOR_COLOR, MAJORITY_COLOR, plt, save_figure

__all__ = ["fig_cost"]

_ROLE_COLOR = {"impostor": IMPOSTOR_COLOR, "majority": MAJORITY_COLOR}


def fig_cost(data: AnalysisData, tables: dict, out: Path, notes: list[str]) -> Optional[dict]:
    df = tables.get("cost")
    if df is None or len(df) == 0:
        notes.append("Figure 'tokens and cost' skipped: the cost table is empty.")
        return None
    df = df[df["model"] != "ALL"].copy()
    for c in ("input_tokens_per_game", "output_tokens_per_game", "cost_per_success_usd"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    tokens = df[["input_tokens_per_game", "output_tokens_per_game"]].to_numpy(dtype=float)
    if not (np.isfinite(tokens) & (tokens > 0)).any():
        notes.append("Figure 'tokens and cost' skipped: no model recorded tokens (bots, or usage not logged).")
        return None
    # a panel with no bar says nothing: the cost panel only where some success has a known price
    cps = df["cost_per_success_usd"].to_numpy(dtype=float)
    has_cost = bool((np.isfinite(cps) & (cps > 0)).any())  # all 0 (free bots): bars of nothing
    models = sorted(df["model"].unique(), key=str)
    y = np.arange(len(models))
    if has_cost:
        fig, (ax_t, ax_c) = plt.subplots(1, 2, figsize=(10.5, 0.5 * len(models) + 1.8), sharey=True)
    else:
        fig, ax_t = plt.subplots(figsize=(6.5, 0.5 * len(models) + 1.8))
        ax_c = None
    h = 0.38
    for k, role in enumerate(("impostor", "majority")):
        sub = df[df["role"] == role].set_index("model").reindex(models)
        yy = y - h / 2 + k * h
        inp, outp = sub["input_tokens_per_game"].fillna(0), sub["output_tokens_per_game"].fillna(0)
        ax_t.barh(yy, inp, h, color=_ROLE_COLOR[role], alpha=0.45, label=f"{role}: input")
        ax_t.barh(yy, outp, h, left=inp, color=_ROLE_COLOR[role], label=f"{role}: output")
        cps = sub["cost_per_success_usd"]
        if ax_c is None:
            continue
        ax_c.barh(yy, cps.fillna(0), h, color=_ROLE_COLOR[role],
                  label="per impostor win" if role == "impostor" else "per correct detection")
        for yi, v, price in zip(yy, cps, sub["price"]):
            if not np.isfinite(v):
                ax_c.annotate("price unknown" if isinstance(price, str) and "unknown" in price else "no success",
                              xy=(0, yi), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8,
                              color="0.35")
    ax_t.set_yticks(y)
    ax_t.set_yticklabels(models)
    ax_t.set_ylim(len(models) - 0.5, -0.5)
    ax_t.set_xlabel("tokens per seat and game")
    ax_t.set_title("Tokens", loc="left")
    below = dict(fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.5 / (0.5 * len(models) + 1.8) - 0.12),
                 ncol=2)
    ax_t.legend(**below)
    if ax_c is not None:
        ax_c.set_xlabel("USD per success")
        ax_c.set_title("Cost per success", loc="left")
        ax_c.legend(**below)
    for ax in (ax_t, ax_c):
        if ax is not None:
            ax.grid(axis="y", visible=False)
    path = out / "cost.png"
    save_figure(fig, path)
    return {"file": path.name, "title": "Tokens and cost per model and role (beyond the paper)",
            "caption": ("Left: mean input and output tokens of one seat in one game (all its calls). Right: the "
                        "role's total cost divided by its successes (impostor wins; correct detections = counted "
                        "ballots on the impostor). Costs from each model's price (configs/models.yaml `price:` or "
                        "litellm's price map); 'price unknown' where none is known (never shown as 0)."
                        if has_cost else
                        "Mean input and output tokens of one seat in one game (all its calls). No cost panel: no "
                        "model here has a cost above 0 per success (free players such as the bots, unknown prices "
                        "or no success; table cost says which).")}
