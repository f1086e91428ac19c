"""Simulated games of other group sizes: N players with K impostors (docs/rules.md, "Group size").

The four-seat simulator (:mod:`impostor_bench.analysis.sim.simulate`) decides every game's winner
from its logit model (a planted group-size effect included, ``analysis.sim.conditions``) and draws
four ballots.  :func:`regroup` replays each game whose ``n_players``/``n_impostors`` are not the
paper's as a game of that size with the same winner: N seats, K impostor seats (the drawn impostor
seat and K-1 more), a fresh speaking order, and ballots from the same voting model (a majority
voter names an impostor with its model's detection probability, a ballot is invalid with the
invalid-vote rate) drawn until the rules (:func:`impostor_bench.core.rules.decide`, the one
definition) give that winner.  A self-declaration keeps its outcome.  Every game-row column the
ballots decide is recomputed from them, so the tables pass the analysis's outcome checks.

Per game in Python: meant for the modest studies a group-size plan is run with (thousands of games).
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from impostor_bench.core.group import is_paper_group
from impostor_bench.core.records import TEAM_MODES
from impostor_bench.core.rules import Ballot, decide

#: Ballot draws per game before the simulator writes a profile that gives the winner outright.
MAX_TRIES = 400


def _ballots(n: int, imps: list[int], det: float, invalid: float, rng: np.random.Generator) -> list[Optional[int]]:
    votes: list[Optional[int]] = []
    for s in range(n):
        if rng.random() < invalid:
            votes.append(None)
            continue
        others = [t for t in range(n) if t != s]
        if s not in imps and rng.random() < det:
            votes.append(int(rng.choice(imps)))
        else:
            pool = [t for t in others if t not in imps]  # a miss, or an impostor's vote: a majority player
            votes.append(int(rng.choice(pool)))
    return votes


def _forced(n: int, imps: list[int], imp_wins: bool) -> list[Optional[int]]:
    """A profile the rules decide for the given winner: every majority vote on the first impostor
    (a conviction), or no counted vote at all (no conviction)."""
    return [None] * n if imp_wins else [None if s in imps else imps[0] for s in range(n)]


def regroup(games: pd.DataFrame, players: pd.DataFrame, rng: np.random.Generator, *, det: float = 0.55,
            invalid_vote_rate: float = 0.02) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``games``/``players`` with every game whose ``n_players``/``n_impostors`` are not (4, 1)
    replayed at its size (module docstring); the paper's games are returned as they are."""
    if "n_players" not in games.columns:
        return games, players
    n_col = games["n_players"].to_numpy(np.int64)
    k_col = games["n_impostors"].to_numpy(np.int64)
    other = np.array([not is_paper_group(int(n), int(k)) for n, k in zip(n_col, k_col)])
    if not other.any():
        return games, players
    if np.isin(games.loc[other, "mode"].astype(object), TEAM_MODES).any():
        raise ValueError("simulated group sizes other than 4 players with 1 impostor: team modes are two teams of "
                         "two; fix: simulate them in homogeneous or cross_play modes")
    games = games.copy()
    ids = set(games.loc[other, "game_id"])
    mine = players["game_id"].isin(ids).to_numpy()
    by_game: dict[str, list[dict]] = {}
    for row in players.loc[mine].to_dict("records"):  # plain dicts: a frame per game costs milliseconds
        by_game.setdefault(row["game_id"], []).append(row)
    new_rows: list[dict] = []
    updates: dict[str, list] = {}
    rows_of = games.loc[other, ["game_id", "impostor_seat", "winner", "win_condition", "majority_word"]]
    for (gid, seat0, winner, cond, word), n, k in zip(rows_of.itertuples(index=False, name=None), n_col[other],
                                                      k_col[other]):
        old = by_game[gid]
        n, k = int(n), int(k)
        imp_wins = winner == "impostor"
        first = int(seat0) % n
        imps = sorted({first, *rng.choice([s for s in range(n) if s != first], size=k - 1, replace=False).tolist()})
        order = rng.permutation(n)
        imp_row = next(r for r in old if r["role"] == "impostor")
        maj_row = next(r for r in old if r["role"] == "majority")
        declared: dict[int, Optional[str]] = {}
        if cond in ("impostor_guess_correct", "impostor_guess_wrong"):
            declared[imps[0]] = imp_row["word_guess"]
        elif cond == "majority_self_declared":
            declared[next(s for s in range(n) if s not in imps)] = None
        for _ in range(MAX_TRIES):
            votes = _ballots(n, imps, det, invalid_vote_rate, rng)
            out = decide([Ballot(v, s in declared, declared.get(s)) for s, v in enumerate(votes)], imps, str(word))
            if (out.winner == "impostor") == imp_wins:
                break
        else:
            votes = _forced(n, imps, imp_wins)
            out = decide([Ballot(v, s in declared, declared.get(s)) for s, v in enumerate(votes)], imps, str(word))
        position = {int(s): p for p, s in enumerate(order)}
        conf = np.round(rng.uniform(0.35, 0.98, size=n), 2)
        invalid_desc = 0
        for s in range(n):
            row = dict(imp_row if s in imps else maj_row)
            valid = votes[s] is not None
            invalid_desc += not row["description_valid"]
            row.update(seat=s, speaking_position=position[s], vote=votes[s], ballot_valid=valid,
                       ballot_class="valid" if valid else "unparseable", ballot_error=None if valid else "unparseable",
                       confidence=float(conf[s]) if valid else np.nan, self_declared=s in declared,
                       word_guess=declared.get(s))
            new_rows.append(row)
        for c, v in (("impostor_seat", imps[0]), ("impostor_seats", ",".join(map(str, imps))),
                     ("impostor_model", imp_row["model"]), ("impostor_speaking_position", position[imps[0]]),
                     ("win_condition", out.win_condition), ("winner_live", out.winner), ("tie_k", out.tie_k),
                     ("impostor_in_tie", out.impostor_in_tie), ("p_imp_default", out.p_imp_default),
                     ("p_imp_sym_candidate", out.p_imp_sym_candidate), ("p_imp_sym_side", out.p_imp_sym_side),
                     ("n_valid_votes", out.n_valid_votes), ("votes_on_impostor", out.votes_on_impostor),
                     ("n_invalid_ballots", sum(v is None for v in votes)), ("n_invalid_descriptions", invalid_desc),
                     ("speaking_order", "".join(map(str, order)))):
            updates.setdefault(c, []).append(v)
    where = np.flatnonzero(other)
    for c, values in updates.items():
        col = games[c].astype(object) if c in ("impostor_seats",) else games[c]
        col = col.copy()
        col.iloc[where] = values
        games[c] = col
    regrouped = pd.DataFrame(new_rows, columns=players.columns)
    out_players = pd.concat([players.loc[~mine], regrouped], ignore_index=True)
    order_of = pd.Index(games["game_id"]).get_indexer(out_players["game_id"])
    out_players = out_players.iloc[np.lexsort((out_players["seat"].to_numpy(), order_of))].reset_index(drop=True)
    out_players["vote"] = pd.array([None if pd.isna(v) else int(v) for v in out_players["vote"]], dtype="Int64")
    return games, out_players
