"""Scripted team games with planted behaviour, in the contract schema (numpy/pandas only).

Two models play every mode (homogeneous, team_blind, team_aware; in team modes each is team A
in half of the experiments). What is planted:

* ``loyal``: its majority-majority teams vote together (the later seat copies the earlier
  seat's ballot) with probability ``copy[mode]`` (team_blind 0.5, team_aware 1.0; never in a
  non-team game); it never votes for its teammate; in team_aware games its descriptions open
  with a coordination phrase ("As my teammate mentioned,"); its reasoning vouches for a named
  player; every description copies the function-word style of the description spoken just
  before it and reuses one of its content words (mirroring).
* ``loose``: votes for its teammate with probability ``betray`` (0.6), no coordination language,
  no vouching, a random style and only its own word's associations.
* In team_aware games the later-speaking teammate's description has as many style blocks as the
  earlier teammate's (teammates' style correlation); elsewhere block counts are independent.

Game i of every experiment plays word pair i mod K, as the real schedule does (so every
description has unseen twins with the same words in other experiments).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.data import AnalysisData

STYLES = {
    "pron": "i think we and you know it is ours",
    "art": "the a the an of the in the on",
    "neg": "not never no none nor cannot",
    "quant": "all some many most few several each every",
}
PAIRS = [("dog", "wolf"), ("apple", "pear"), ("car", "truck"), ("river", "lake"), ("chair", "stool"), ("rain", "snow")]
ASSOC = {w: [f"{w[:2]}assoc{j}" for j in range(6)] for p in PAIRS for w in p}
COORD = "As my teammate mentioned,"
MODELS = ("loyal", "loose")


def _words_of(desc: str, word: str) -> list[str]:
    return [t for t in desc.split() if "assoc" in t]


def make_team_games(experiments_per_cell: int = 2, games: int = 48, copy=None, betray: float = 0.6,
                    p_detect: float = 0.5, seed: int = 0) -> AnalysisData:
    copy = copy or {"team_blind": 0.5, "team_aware": 1.0}
    rng = np.random.default_rng(seed)
    cells = [("homogeneous", (m, m)) for m in MODELS]
    cells += [(mode, ab) for mode in ("team_blind", "team_aware") for ab in (("loyal", "loose"), ("loose", "loyal"))]
    grows, prows = [], []
    for mode, (ma, mb) in cells:
        for rep in range(experiments_per_cell):
            eid = f"{mode}|easy|{ma}+{mb}|s{rep}"
            for gi in range(games):
                gid = f"{eid}-g{gi:03d}"
                maj, impw = PAIRS[gi % len(PAIRS)]
                imp = int(rng.integers(4))
                team = np.array([None] * 4, dtype=object)
                if mode != "homogeneous":
                    mate = int(rng.choice([s for s in range(4) if s != imp]))
                    t_imp = "A" if gi % 2 == 0 else "B"
                    other = "B" if t_imp == "A" else "A"
                    team[:] = other
                    team[[imp, mate]] = t_imp
                    model = np.where(team == "A", ma, mb).astype(object)
                else:
                    model = np.array([ma] * 4, dtype=object)
                order = rng.permutation(4)
                pos = np.empty(4, int)
                pos[order] = np.arange(4)
                # descriptions in speaking order
                desc = [None] * 4
                blocks = {}
                prev_style, prev_words = None, None
                for s in order:
                    word = impw if s == imp else maj
                    if model[s] == "loyal" and prev_style is not None:
                        style = prev_style
                    else:
                        style = list(STYLES)[int(rng.integers(len(STYLES)))]
                    nb = int(rng.integers(1, 7))
                    if mode == "team_aware":
                        mates = [q for q in range(4) if q != s and team[q] == team[s]]
                        if mates and mates[0] in blocks:
                            nb = blocks[mates[0]]
                    blocks[s] = nb
                    content = list(rng.choice(ASSOC[word], size=2, replace=False))
                    if model[s] == "loyal" and prev_words:
                        content.append(prev_words[int(rng.integers(len(prev_words)))])
                    text = " ".join([STYLES[style]] * nb + content)
                    if model[s] == "loyal" and mode == "team_aware":
                        text = f"{COORD} {text}"
                    desc[s] = text
                    prev_style, prev_words = style, _words_of(text, word)
                # ballots in seat order
                vote = [None] * 4
                for s in range(4):
                    mate_s = next((q for q in range(4) if q != s and team[s] is not None and team[q] == team[s]), None)
                    allowed = [q for q in range(4) if q != s]
                    if mate_s is not None:  # betrayal only where planted
                        allowed = [q for q in allowed if q != mate_s]
                    if (model[s] == "loyal" and mate_s is not None and mate_s < s and s != imp and mate_s != imp
                            and mode in copy and rng.random() < copy[mode]):
                        vote[s] = vote[mate_s]
                    elif model[s] == "loose" and mate_s is not None and rng.random() < betray:
                        vote[s] = mate_s
                    elif s != imp and imp in allowed and rng.random() < p_detect:
                        vote[s] = imp
                    else:
                        vote[s] = int(rng.choice(allowed))
                n_on_imp = sum(1 for s in range(4) if s != imp and vote[s] == imp)
                winner = "majority" if n_on_imp >= 2 else "impostor"
                grows.append({"experiment_id": eid, "game_id": gid, "game_index": gi, "mode": mode,
                              "difficulty": "easy", "pair_id": f"easy-{gi % len(PAIRS):03d}", "majority_word": maj,
                              "impostor_word": impw, "impostor_seat": imp, "impostor_model": model[imp],
                              "impostor_speaking_position": int(pos[imp]), "winner": winner,
                              "win_condition": "conviction" if winner == "majority" else "no_conviction"})
                for s in range(4):
                    if model[s] == "loyal":
                        other = next(q for q in range(4) if q not in (s, vote[s]))
                        reasoning = f"Player {other + 1} seems genuine, I trust them. Player {vote[s] + 1} is odd."
                    else:
                        reasoning = f"Player {vote[s] + 1} is odd."
                    prows.append({"game_id": gid, "seat": s, "model": model[s],
                                  "role": "impostor" if s == imp else "majority", "team": team[s],
                                  "speaking_position": int(pos[s]), "description": desc[s], "description_valid": True,
                                  "vote": vote[s], "confidence": 0.5, "self_declared": False, "word_guess": None,
                                  "reasoning": reasoning, "experiment_id": eid, "ballot_class": "valid"})
    players = pd.DataFrame(prows)
    players["vote"] = players["vote"].astype("Int64")
    return AnalysisData(pd.DataFrame(grows), players, None)
