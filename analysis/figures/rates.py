"""Win-rate figures (paper Figs. 1-2), the odds-ratio forest and the tie-breaker deltas:
the figures drawn from impostor win rates and the statistics tables."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.report.formatting import readable_seats
from impostor_bench.analysis.figures.style import MODE_COLOR, MODE_LABEL, plt, save_figure
from impostor_bench.core.records import DIFFICULTIES, MODES

__all__ = ["fig_win_by_mode", "fig_win_by_difficulty", "fig_forest", "fig_tiebreak"]


def _model_order(games: pd.DataFrame, tables: dict) -> list[str]:
    """Models by overall impostor win rate, best first (Table 1's order, from ``headline``)."""
    head = tables.get("headline")
    if head is not None and len(head) and {"model", "imp_win_pct"} <= set(head.columns):
        return list(head.sort_values("imp_win_pct", ascending=False)["model"].astype(str))
    rate = (games["winner"] == "impostor").groupby(games["impostor_model"]).mean()
    return list(rate.sort_values(ascending=False).index)


def _rates(tables: dict, table: str, by: str) -> tuple[pd.DataFrame, list[str], int]:
    """The rates of one bundle table with the one interval the inference source gives each
    (``impostor_bench.analysis.intervals.lookup``); an interval that is not calibrated or not a
    real one (``interval_check``) is dropped: the point is drawn alone. Returns (rates, the
    methods of the drawn intervals, how many points have no interval)."""
    from impostor_bench.analysis.intervals import lookup
    from impostor_bench.analysis.report.interval_check import bounds_of, interval_problem

    df = tables.get(table)
    if df is None or not len(df) or not {"model", by, "imp_win_pct"} <= set(df.columns):
        return pd.DataFrame(columns=["impostor_model", by, "pct", "lo", "hi", "n"]), [], 0
    rows, methods, bare = [], [], 0
    for _, r in df.iterrows():
        g = lookup(tables, table, f"model={r['model']};{by}={r[by]}", "imp_win_pct")
        ok = bool(g["calibrated"]) and interval_problem(g["estimate"], g["low"], g["high"], bounds_of("imp_win_pct")) \
            is None and np.isfinite(g["low"]) and np.isfinite(g["high"])
        if ok:
            methods.append(g["method"])
        else:
            bare += 1
        rows.append({"impostor_model": str(r["model"]), by: str(r[by]), "pct": float(r["imp_win_pct"]),
                     "lo": g["low"] if ok else np.nan, "hi": g["high"] if ok else np.nan,
                     "n": r.get("n", np.nan)})
    return pd.DataFrame(rows), list(dict.fromkeys(methods)), bare


def _dot_panel(games: pd.DataFrame, tables: dict, table: str, by: str, levels: list[str], colors: dict, labels: dict,
               title: str, path: Path) -> tuple[list[str], int]:
    order = _model_order(games, tables)
    agg, methods, bare = _rates(tables, table, by)
    levels = [lv for lv in levels if lv in set(agg[by])]
    order = [m for m in order if m in set(agg["impostor_model"])]
    n_lv = len(levels)
    height = max(3.2, 0.55 * len(order) * max(1.0, n_lv / 4) + 1.4)
    fig, ax = plt.subplots(figsize=(8.2, height))
    band = 0.8
    step = band / max(n_lv, 1)
    for j, lv in enumerate(levels):
        sub = agg[agg[by] == lv].set_index("impostor_model")
        ys, xs, los, his = [], [], [], []
        for i, m in enumerate(order):
            if m in sub.index:
                r = sub.loc[m]
                ys.append(i - band / 2 + step * (j + 0.5))
                xs.append(r["pct"])
                # a bound at 0 or 100% can be off by rounding: never a negative error bar
                los.append(max(r["pct"] - r["lo"], 0.0) if np.isfinite(r["lo"]) else 0.0)
                his.append(max(r["hi"] - r["pct"], 0.0) if np.isfinite(r["hi"]) else 0.0)
        ax.errorbar(xs, ys, xerr=[los, his], fmt="o", ms=5, capsize=2, lw=1.2, color=colors[lv], label=labels[lv])
    head = tables.get("headline")
    overall = (head.set_index(head["model"].astype(str))["imp_win_pct"] if head is not None and len(head)
               else 100 * (games["winner"] == "impostor").groupby(games["impostor_model"]).mean())
    for i, m in enumerate(order):
        if m in overall.index:
            ax.plot([overall[m]] * 2, [i - band / 2, i + band / 2], color="black", lw=1.6, alpha=0.55,
                    label="overall (Table 1)" if i == 0 else None)
    for i in range(len(order) - 1):
        ax.axhline(i + 0.5, color="0.85", lw=0.8)
    ax.axvline(50, color="0.4", ls="--", lw=1, label="50% (even game)")
    n_games = games.groupby("impostor_model").size()
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels([f"{m}\n(n={int(n_games.get(m, 0)):,} games)" for m in order])
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.grid(axis="y", visible=False)
    ax.set_xlim(0, 100)
    ax.set_xlabel("Impostor win rate (%) with 95% interval" + ("" if not bare else " (a point alone: none)"))
    ax.set_title(title, loc="left")
    handles, legend_labels = ax.get_legend_handles_labels()
    order_idx = sorted(range(len(legend_labels)),
                       key=lambda i: legend_labels[i] in ("overall (Table 1)", "50% (even game)"))  # these last
    ax.legend([handles[i] for i in order_idx], [legend_labels[i] for i in order_idx], loc="upper center",
              bbox_to_anchor=(0.5, -0.09 if height > 5 else -0.16), ncol=min(n_lv + 2, 6), frameon=False, fontsize=9)
    save_figure(fig, path)
    return methods, bare


def _rate_caption(what: str, methods: list[str], bare: int) -> str:
    how = "; ".join(methods) if methods else "none drawn"
    return (f"Impostor win rate (%) by {what} for each model as impostor, with the 95% interval of the table it "
            f"comes from ({how}; the same interval the tables print)"
            + (f"; {bare} point(s) drawn without an interval (not computed, or zero width / out of range: the "
               "table's method column and interval check say which)" if bare else "")
            + "; models ordered by overall impostor win rate (black tick = overall, Table 1).")


def fig_win_by_mode(data: AnalysisData, tables: dict, out: Path, notes: list[str]) -> Optional[dict]:
    path = out / "win_by_mode.png"
    if tables.get("win_by_model_mode") is None or not len(tables["win_by_model_mode"]):
        notes.append("Figure 'win_by_mode' skipped: the win_by_model_mode table is empty.")
        return None
    methods, bare = _dot_panel(data.games, tables, "win_by_model_mode", "mode", list(MODES), MODE_COLOR, MODE_LABEL,
                               "Impostor win rate by mode, per impostor model", path)
    return {"file": path.name, "title": "Impostor win rate by mode (paper Fig. 1)",
            "caption": _rate_caption("mode", methods, bare)}


def fig_win_by_difficulty(data: AnalysisData, tables: dict, out: Path, notes: list[str]) -> Optional[dict]:
    path = out / "win_by_difficulty.png"
    if tables.get("win_by_model_difficulty") is None or not len(tables["win_by_model_difficulty"]):
        notes.append("Figure 'win_by_difficulty' skipped: the win_by_model_difficulty table is empty.")
        return None
    cmap = plt.get_cmap("viridis")
    colors = {d: cmap(0.1 + 0.75 * i / 3) for i, d in enumerate(DIFFICULTIES)}
    methods, bare = _dot_panel(data.games, tables, "win_by_model_difficulty", "difficulty", list(DIFFICULTIES), colors,
                               {d: d for d in DIFFICULTIES}, "Impostor win rate by difficulty, per impostor model", path)
    return {"file": path.name, "title": "Impostor win rate by difficulty (paper Fig. 2)",
            "caption": _rate_caption("word-pair difficulty", methods, bare)}


def _pretty_comparison(c: str) -> str:
    c = str(c)
    if c == "size_per_10x":
        return "Model size (per 10x params)"
    if c.startswith("seat") and "_vs_seat" in c:
        return readable_seats(c)
    if c.endswith("_vs_homogeneous"):
        return f"{MODE_LABEL.get(c[: -len('_vs_homogeneous')], c)} vs homogeneous"
    return c.replace("_", " ")


def _log_ticks(xmin: float, xmax: float, most: int = 7) -> list[float]:
    """Readable ticks of a log axis: 1 always, others at least 1/``most`` of the span apart (no
    "0.670.8" where two labels meet)."""
    cands = (0.1, 0.2, 0.25, 0.5, 0.67, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10)
    inside = [t for t in cands if xmin * 0.95 <= t <= xmax * 1.05] or [1]
    gap = (math.log(max(xmax, 1.0)) - math.log(min(xmin, 1.0))) / most
    kept = [1.0]
    for t in sorted(inside, key=lambda t: abs(math.log(t))):  # outward from 1
        if all(abs(math.log(t) - math.log(k)) >= gap for k in kept):
            kept.append(t)
    return sorted(kept)


def fig_forest(data: AnalysisData, tables: dict, out: Path, notes: list[str]) -> Optional[dict]:
    df = tables.get("odds_ratios")
    if df is None or len(df) == 0:
        notes.append("Figure 'odds ratio forest plot' skipped: the odds_ratios table is empty.")
        return None
    methods = list(dict.fromkeys(df["method"].astype(str))) if "method" in df.columns else []
    df = df[["comparison", "or", "ci_low", "ci_high", "p"] + (["n"] if "n" in df.columns else [])].copy()
    for c in ("or", "ci_low", "ci_high", "p"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    df = df[np.isfinite(df["or"]) & (df["or"] > 0)].reset_index(drop=True)
    if df.empty:
        notes.append("Figure 'odds ratio forest plot' skipped: no finite odds ratios.")
        return None
    n = len(df)
    fig, ax = plt.subplots(figsize=(8.2, 0.5 * n + 1.5))
    y = np.arange(n)
    from impostor_bench.analysis.report.interval_check import bounds_of, interval_problem

    real = np.array([interval_problem(e, a, b, bounds_of("or")) is None and np.isfinite(a) and np.isfinite(b)
                     for e, a, b in zip(df["or"], df["ci_low"], df["ci_high"])], bool)
    lo = np.where(real, df["ci_low"], df["or"])  # a point alone where the interval is not a real one
    hi = np.where(real, df["ci_high"], df["or"])
    sig = real & ((lo > 1) | (hi < 1))
    colors = np.where(sig, "#C44E52", "0.45")
    for i in range(n):
        ax.plot([lo[i], hi[i]], [y[i], y[i]], color=colors[i], lw=2)
        ax.plot(df["or"][i], y[i], "s", color=colors[i], ms=7)
    ax.axvline(1, color="0.3", ls="--", lw=1)
    ax.set_xscale("log")
    vals = np.concatenate([lo, hi, df["or"].to_numpy(), [1.0]])
    xmin, xmax = np.nanmin(vals), np.nanmax(vals)
    pad = (math.log(xmax) - math.log(xmin)) * 0.08 + 0.02
    ax.set_xlim(math.exp(math.log(xmin) - pad), math.exp(math.log(xmax) + pad))
    ticks = _log_ticks(xmin, xmax)
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_yticks(y)
    counts = pd.to_numeric(df["n"], errors="coerce") if "n" in df.columns else pd.Series(np.nan, index=df.index)
    ax.set_yticklabels([_pretty_comparison(c) + (f"\n(n={int(k):,} games)" if np.isfinite(k) else "")
                        for c, k in zip(df["comparison"], counts)])
    ax.set_ylim(n - 0.5, -0.5)
    ax.grid(axis="y", visible=False)
    # the numbers, in a column right of the axes
    for i in range(n):
        ax.annotate(f"{df['or'][i]:.2f} [{lo[i]:.2f}, {hi[i]:.2f}]" if real[i] else f"{df['or'][i]:.2f} (no interval)", xy=(1.02, y[i]), xycoords=("axes fraction", "data"),
                    va="center", fontsize=9, family="monospace")
    ax.annotate("OR [95% CI]", xy=(1.02, -0.5), xycoords=("axes fraction", "data"), va="bottom", fontsize=9,
                fontweight="bold")
    ax.set_xlabel("Odds ratio of impostor win (log scale); red = 95% CI excludes 1")
    ax.set_title("Key effects on impostor win (95% CIs)", loc="left")
    path = out / "odds_ratios_forest.png"
    save_figure(fig, path)
    return {"file": path.name, "title": "Odds ratios (paper Table 2)",
            "caption": "Forest plot of the odds ratios of impostor win with the 95% intervals of Table 2 ("
                       + ("; ".join(methods) or "no interval") + ")"
                       + (f"; {int((~real).sum())} drawn as a point alone (no real interval)" if (~real).any() else "")
                       + ". Player N = the N-th speaking seat (1-based)."}


def fig_tiebreak(data: AnalysisData, tables: dict, out: Path, notes: list[str]) -> Optional[dict]:
    df = tables.get("tiebreak_mode")
    if df is None or len(df) == 0:
        notes.append("Figure 'tie-breaker deltas' skipped: the tiebreak_mode table is empty.")
        return None
    df = df.copy()
    for c in ("delta_cand", "delta_side", "ties"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    if not (df["ties"].fillna(0) > 0).any():  # nothing to break: a figure of zero bars says nothing
        notes.append("Figure 'tie-breaker deltas' skipped: no game ended in a top-of-ballot tie.")
        return None
    dmd = tables.get("tiebreak_mode_difficulty")
    has_heat = dmd is not None and len(dmd) > 0
    fig, axes = plt.subplots(1, 2 if has_heat else 1, figsize=(12.5 if has_heat else 7.5, 4.2),
                             gridspec_kw={"width_ratios": [1.1, 1]} if has_heat else None)
    ax = axes[0] if has_heat else axes
    labels = [MODE_LABEL.get(m, str(m)) for m in df["mode"]]
    y = np.arange(len(df))
    h = 0.38
    b1 = ax.barh(y - h / 2, df["delta_cand"], height=h, color="#DD8452", label="Sym-candidate")
    b2 = ax.barh(y + h / 2, df["delta_side"], height=h, color="#8172B3", label="Sym-side")
    for bars in (b1, b2):
        for rect in bars:
            w = rect.get_width()
            if np.isfinite(w):
                ax.annotate(f"{w:+.1f}", xy=(w, rect.get_y() + rect.get_height() / 2), xytext=(-3 if w < 0 else 3, 0),
                            textcoords="offset points", ha="right" if w < 0 else "left", va="center", fontsize=8)
    ax.set_yticks(y)
    ax.set_yticklabels([f"{lab}\n(ties={int(t) if np.isfinite(t) else 0})" for lab, t in zip(labels, df["ties"])], fontsize=9)
    ax.set_ylim(len(df) - 0.5, -0.5)
    ax.axvline(0, color="0.3", lw=1)
    lo = np.nanmin(np.concatenate([df["delta_cand"], df["delta_side"], [0]]))
    ax.set_xlim(min(lo * 1.25, -0.5), max(0.5, -lo * 0.1))
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("Change in impostor win rate vs default rule (pp)")
    ax.set_title("Symmetric tie-breakers: change vs default", loc="left")
    ax.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2, fontsize=9)
    if has_heat:
        assert dmd is not None  # has_heat
        ax2 = axes[1]
        d = dmd.copy()
        d["delta_side"] = pd.to_numeric(d["delta_side"], errors="coerce")
        d = d[d["mode"].isin(MODES) & d["difficulty"].isin(DIFFICULTIES)]
        piv = d.pivot_table(index="mode", columns="difficulty", values="delta_side", aggfunc="mean")
        piv = piv.reindex(index=[m for m in MODES if m in piv.index], columns=[c for c in DIFFICULTIES if c in piv.columns])
        vmax = max(0.5, float(np.nanmax(np.abs(piv.to_numpy())))) if piv.size else 1
        # interpolation "none": the PDF and SVG hold the 5 x 4 cells, not a 300 dpi resampled raster
        # (2 s of PNG encoding per report); the PNG shows the same blocks
        im = ax2.imshow(piv.to_numpy(), cmap="RdBu", vmin=-vmax, vmax=vmax, aspect="auto", interpolation="none")
        ax2.set_xticks(range(piv.shape[1]))
        ax2.set_xticklabels(piv.columns)
        ax2.set_yticks(range(piv.shape[0]))
        ax2.set_yticklabels([MODE_LABEL.get(m, m) for m in piv.index])
        ax2.grid(False)
        for (i, j), v in np.ndenumerate(piv.to_numpy()):
            if np.isfinite(v):
                ax2.text(j, i, f"{v:+.1f}", ha="center", va="center", fontsize=9,
                         color="white" if abs(v) > 0.6 * vmax else "black")
        fig.colorbar(im, ax=ax2, label="Sym-side change (pp)", shrink=0.85)
        ax2.set_title("Sym-side change by mode x difficulty", loc="left")
    fig.tight_layout()
    path = out / "tiebreak_deltas.png"
    save_figure(fig, path)
    return {"file": path.name, "title": "Symmetric tie-breakers (paper Tables 8-9)",
            "caption": "Percentage-point change of the expected impostor win rate under the Sym-candidate and "
                       "Sym-side tie-breakers relative to the default rule (ties go to the impostor)."}
