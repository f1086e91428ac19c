"""The example vote network (paper Appendix C.2): one game's ballots and its same-target
influence graph."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from impostor_bench.analysis.data import AnalysisData, index_positions
from impostor_bench.analysis.figures.style import IMPOSTOR_COLOR, MAJORITY_COLOR, MODE_LABEL, plt, save_figure
from impostor_bench.core.records import TEAM_MODES

__all__ = ["fig_vote_network"]


def _pick_example_game(data: AnalysisData) -> Optional[str]:
    """A game whose two graphs are both informative: four valid ballots split 2-2
    (a top-of-ballot tie between two same-target blocs), preferably in a team mode;
    else a conviction with a 3-voter bloc; else the first game."""
    g = data.games
    p = data.players
    if len(g) == 0:
        return None
    # games by row number (not by id string: 3.6 M player rows at 10x the paper)
    gi = index_positions(pd.Index(g["game_id"].to_numpy(dtype=object)), p["game_id"])
    pv = pd.DataFrame({"gi": gi, "vote": pd.to_numeric(p["vote"]).to_numpy(dtype=float, na_value=np.nan)})[gi >= 0]
    nvalid = pv.groupby("gi", sort=False)["vote"].count()
    full = nvalid.index[nvalid == 4]
    counts = pv[pv["gi"].isin(full)].groupby(["gi", "vote"], sort=False).size()
    shape = counts.groupby(level=0).agg(["max", "size"])

    def rows(index) -> np.ndarray:
        out = np.zeros(len(g), bool)
        out[np.asarray(index, dtype=np.int64)] = True
        return out

    split22 = rows(shape.index[(shape["max"] == 2) & (shape["size"] == 2)])
    bloc3 = rows(shape.index[shape["max"] == 3])
    team = g["mode"].isin(TEAM_MODES).to_numpy()
    anything = np.ones(len(g), bool)
    for ids, mask in ((split22, team), (split22, anything), (bloc3, (g["win_condition"] == "conviction").to_numpy()),
                      (bloc3, anything)):
        hit = np.flatnonzero(ids & mask)
        if len(hit):
            return str(g["game_id"].iloc[hit[0]])
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
        from impostor_bench.analysis.stats.network import network_for_game as helper  # type: ignore
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
    save_figure(fig, path)
    return {"file": path.name, "title": "Example vote network",
            "caption": f"Ballots of game {gid} (arrow = vote) and the same-target influence graph used for "
                       "centrality/reach (Appendix C.2)."}


def _short(model: str, width: int = 14) -> str:
    m = str(model).split("/")[-1]
    return m if len(m) <= width else m[: width - 1] + "…"
