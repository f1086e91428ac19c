"""Vote network of Appendix C.2-C.3: influence score, reach, degree centrality,
betweenness, brokerage, relative index and coalition efficiency.

Per game, V is the set of seats with a valid ballot and v_p the seat p voted for.
The influence graph has an edge p -> q whenever p, q in V, q != p and v_q == v_p
(same-target voting). "Same target" is an equivalence relation, so the graph is
a disjoint union of bidirected cliques (one per voted-for seat). That gives closed
forms, used here instead of building 90k small networkx graphs (about 1 ms each,
i.e. minutes for a full export; the closed forms take milliseconds and are tested
against networkx on sampled games in tests/analysis/stats/test_stats_network.py):

* co-voters k_p = |{q in V \\ {p}: v_q = v_p}|
* influence_p = k_p / max(|V| - 1, 1)                          (eq. 3)
* reach_p = out-degree / (|V| - 1) = k_p / (|V| - 1)           (= influence_p)
* degree centrality (networkx, directed, nodes = V) = (in + out) / (|V| - 1) = 2 k_p / (|V| - 1)
* betweenness = 0: inside a clique every pair is adjacent, across cliques no path exists
* brokerage = (degree centrality + betweenness) / 2 = reach_p

For |V| = 1, influence/reach/centrality are 0 (the paper's convention for eq. 3;
networkx would give a lone node degree centrality 1). Seats without a valid ballot
are not in V and get no network metrics.

Aggregation (C.3): per-player metrics -> per (game, model) mean over that model's
voters in the game -> mean over games per model. "Centrality" is the networkx
degree centrality (range [0, 2] on this graph, which reproduces the paper's
Table 1 pattern centrality = 2 x reach); ``centrality_rel`` is additionally
rescaled so that the across-model mean is 1 (C.3 "Scaling").

Coalition: a seat is in a coalition when it shares its target with at least one
other valid voter (a same-target bloc of >= 2). The coalition converts when that
seat's side (impostor / majority) wins the game. Per (game, model) the conversion
share over the model's coalition seats is taken, and CoalEff is its mean over the
games in which the model has a coalition seat; with one coalition seat per game
this is exactly #{games with a coalition that converts} / #{games with a coalition}.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import N_SEATS, Prepared, memo, prepared, table
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig


def network_for_game(players_rows: pd.DataFrame) -> nx.DiGraph:
    """The same-target influence graph of one game (networkx), for figures and checks.

    Nodes are the seats with a valid ballot (attributes: model, role, vote); edges
    p -> q for every ordered pair of distinct voters that voted for the same seat.
    """
    G = nx.DiGraph()
    rows = players_rows.copy()
    rows = rows[rows["vote"].notna()]
    if "ballot_valid" in rows.columns:
        rows = rows[rows["ballot_valid"].astype(object).fillna(True).astype(bool)]
    for r in rows.itertuples(index=False):
        G.add_node(int(r.seat), model=getattr(r, "model", None), role=getattr(r, "role", None), vote=int(r.vote))
    nodes = list(G.nodes(data="vote"))
    for p, vp in nodes:
        for q, vq in nodes:
            if p != q and vp == vq:
                G.add_edge(p, q)
    return G


def game_metrics(prep: Prepared) -> dict[str, np.ndarray]:
    """Per-seat network metrics as (N, 4) arrays (NaN for seats not in V)."""
    v = prep.vote
    assert v is not None, "game_metrics needs the players: prepared(data, need_players=True)"
    valid = ~np.isnan(v)
    same = (v[:, :, None] == v[:, None, :]) & valid[:, :, None] & valid[:, None, :]
    same &= ~np.eye(N_SEATS, dtype=bool)[None]
    k = same.sum(axis=2).astype(float)
    nv = valid.sum(axis=1).astype(float)[:, None]
    denom = np.maximum(nv - 1, 1)
    reach = np.where(valid, k / denom, np.nan)
    centrality = np.where(valid, np.where(nv >= 2, 2 * k / denom, 0.0), np.nan)
    betweenness = np.where(valid, 0.0, np.nan)
    return {
        "co_voters": np.where(valid, k, np.nan),
        "influence": reach,
        "reach": reach,
        "centrality": centrality,
        "betweenness": betweenness,
        "brokerage": (centrality + betweenness) / 2,
        "in_coalition": valid & (k >= 1),
    }


def _long(prep: Prepared) -> pd.DataFrame:
    """One row per (game, seat) with a valid ballot: network metrics and conversion."""
    m = game_metrics(prep)
    # the players' seat arrays are set together (game_metrics checked the votes)
    assert prep.vote is not None and prep.present is not None and prep.is_imp is not None and prep.model is not None
    valid = ~np.isnan(prep.vote)
    gi, seat = np.nonzero(valid & prep.present)
    side_won = np.where(prep.is_imp, prep.y[:, None] == 1, prep.y[:, None] == 0)
    df = pd.DataFrame({
        "gi": gi, "seat": seat, "model": prep.model[gi, seat],
        "influence": m["influence"][gi, seat], "reach": m["reach"][gi, seat],
        "centrality": m["centrality"][gi, seat], "betweenness": m["betweenness"][gi, seat],
        "brokerage": m["brokerage"][gi, seat],
        "coalition": m["in_coalition"][gi, seat],
        "converts": (m["in_coalition"] & side_won)[gi, seat],
    })
    return df[df["model"].notna()]


def model_network(data, config=None) -> pd.DataFrame:
    """Model-level network metrics (C.3 aggregation); used by headline/coordination."""
    prep = prepared(data, need_players=True)
    return memo(data, ("model_network",), lambda: _model_network(prep)).copy()


def _model_network(prep: Prepared) -> pd.DataFrame:
    df = _long(prep)
    cols = ["influence", "reach", "centrality", "betweenness", "brokerage"]
    per_game = df.groupby(["model", "gi"], sort=False)[cols].mean()
    out = per_game.groupby(level="model").mean()
    out["n_games"] = per_game.groupby(level="model").size()
    out["n_votes"] = df.groupby("model").size()
    out["influence_player_mean"] = df.groupby("model")["influence"].mean()
    co = df[df["coalition"]]
    conv = co.groupby(["model", "gi"], sort=False)["converts"].mean()
    out["coal_eff_pct"] = 100 * conv.groupby(level="model").mean()
    out["n_coalition_games"] = conv.groupby(level="model").size()
    out = out.reindex(sorted(out.index, key=str))
    mean_c = out["centrality"].mean()
    out["centrality_rel"] = out["centrality"] / mean_c if mean_c > 0 else np.nan
    out["n_coalition_games"] = out["n_coalition_games"].fillna(0).astype(int)
    return out.reset_index().rename(columns={"index": "model"})


@table("network_nodes", columns=["model", "influence", "reach", "centrality", "centrality_rel",
                                 "betweenness", "brokerage", "coal_eff_pct"],
    title="Vote-network metrics per model: influence, reach, centrality (Appendix C.2-C.3)",
    section="beyond",
    figures={"vote_network_example": "design"},
)
def network_nodes(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """Per-model vote-network metrics (Appendix C.2-C.3)."""
    return model_network(data, config)
