"""Planted study conditions: the simulator runs the same design under several conditions of one
factor (group size, language, length budget, decoding, mode) and plants known effects of it, so
the per-condition tables (``impostor_bench.analysis.stats.persistence``) have data with a known truth.

A :class:`ConditionPlan` names the factor, its levels (the first is the reference) and the
effects on the impostor-win logit:

* ``condition_or``: level -> OR of every game in that level against the reference (a main effect:
  rankings unchanged);
* ``model_or``: (level, model) -> extra impostor-win odds of one model in one level;
* ``reversal``: (model_a, model_b, level): in that level the two models swap their impostor
  strength (size and odds terms), a rank reversal between the reference and that level.

Experiments are split into ``len(levels)`` contiguous blocks, one per level (mode: each
experiment's own mode), so ``n_experiments = levels x cells`` gives every level the full grid.
The level is written where the analysis reads it: games ``n_players``/``n_impostors``,
``language``, ``length_budget``; players ``temperature``/``top_p``. A group-size level's games are
then replayed at that size, with the same winners (``impostor_bench.analysis.sim.groups``): N player
rows, K impostors, ballots the rules decide that way; team-mode experiments (two teams of two) stay in
the level 4x1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

import numpy as np
import pandas as pd

from impostor_bench.core.records import TEAM_MODES

FACTORS = ("group_size", "language", "length_budget", "decoding", "mode")


def parse_level(factor: str, text: str):
    """A level from its command-line form: group size "6x2" (players x impostors), a language code,
    a budget in characters or "none", decoding "0.7" or "0.7/0.9" (temperature / top_p), a mode."""
    t = str(text).strip()
    if factor == "group_size":
        a, _, b = t.partition("x")
        return int(a), int(b or 1)
    if factor == "length_budget":
        return None if t.lower() in ("none", "") else int(t)
    if factor == "decoding":
        a, _, b = t.partition("/")
        return float(a), (float(b) if b else None)
    if factor in ("language", "mode"):
        return t
    raise ValueError(f"unknown condition factor {factor!r}; use one of {', '.join(FACTORS)}")


@dataclass(frozen=True)
class ConditionPlan:
    """One factor's levels and the effects planted on them (see the module docstring). Levels are
    given in their command-line form (``parse_level``); effects are keyed by the same strings."""

    factor: str
    levels: tuple[str, ...]
    condition_or: Mapping[str, float] = field(default_factory=dict)
    model_or: Mapping[tuple[str, str], float] = field(default_factory=dict)
    reversal: Optional[tuple[str, str, str]] = None

    def __post_init__(self) -> None:
        if self.factor not in FACTORS:
            raise ValueError(f"condition factor {self.factor!r}: use one of {', '.join(FACTORS)}")
        levels = tuple(str(x) for x in self.levels)
        object.__setattr__(self, "levels", levels)
        if len(levels) < 2 or len(set(levels)) != len(levels):
            raise ValueError(f"condition {self.factor}: give two or more distinct levels; got {', '.join(levels)}")
        for lv in levels:
            parse_level(self.factor, lv)
        unknown = ([k for k in self.condition_or if k not in levels] + [k for k, _ in self.model_or if k not in levels]
                   + ([self.reversal[2]] if self.reversal and self.reversal[2] not in levels else []))
        if unknown:
            raise ValueError(f"condition {self.factor}: effect on unknown level(s) {', '.join(map(str, unknown))}; "
                             f"levels are {', '.join(levels)}")
        if any(not (np.isfinite(v) and v > 0) for v in [*self.condition_or.values(), *self.model_or.values()]):
            raise ValueError(f"condition {self.factor}: odds ratios must be positive numbers")

    def experiment_levels(self, exp_mode: np.ndarray) -> np.ndarray:
        """(E,) level index of every experiment: its mode's, or contiguous blocks of experiments."""
        E = len(exp_mode)
        if self.factor == "mode":
            idx = {lv: i for i, lv in enumerate(self.levels)}
            missing = sorted(set(map(str, exp_mode)) - set(idx))
            if missing:
                raise ValueError(f"condition mode: the design plays mode(s) {', '.join(missing)} not in the levels")
            return np.array([idx[str(m)] for m in exp_mode], dtype=np.int64)
        level = (np.arange(E) * len(self.levels)) // E
        if self.factor == "group_size":  # team modes are two teams of two: they play the paper's group
            team = np.isin(np.asarray(exp_mode).astype(str), TEAM_MODES)
            paper = [i for i, lv in enumerate(self.levels) if parse_level(self.factor, lv) == (4, 1)]
            if team.any() and (level[team] != (paper[0] if paper else -1)).any():
                if not paper:
                    raise ValueError("condition group_size: team modes play 4 players with 1 impostor; fix: add the "
                                     "level 4x1 or simulate homogeneous and cross_play modes only")
                level[team] = paper[0]
        return level

    def logit_shift(self, level_g: np.ndarray, imp_model: np.ndarray, names: list[str],
                    strength: np.ndarray) -> np.ndarray:
        """(N,) planted logit shift of each game (``strength``: each model's impostor term of the design logit)."""
        shift = np.zeros(len(level_g))
        midx = {m: i for i, m in enumerate(names)}
        for lv, orr in self.condition_or.items():
            shift[level_g == self.levels.index(lv)] += np.log(orr)
        for (lv, model), orr in self.model_or.items():
            if model not in midx:
                raise ValueError(f"condition {self.factor}: model_or names unknown model {model!r}")
            shift[(level_g == self.levels.index(lv)) & (imp_model == midx[model])] += np.log(orr)
        if self.reversal is not None:
            a, b, lv = self.reversal
            if a not in midx or b not in midx or a == b:
                raise ValueError(f"condition {self.factor}: reversal needs two different simulated models; "
                                 f"got {a!r}, {b!r}")
            gap = strength[midx[b]] - strength[midx[a]]
            here = level_g == self.levels.index(lv)
            shift[here & (imp_model == midx[a])] += gap
            shift[here & (imp_model == midx[b])] -= gap
        return shift

    def write_columns(self, level_g: np.ndarray, games: pd.DataFrame, players: pd.DataFrame) -> None:
        """Write each game's level where the analysis reads it (games in place; players by game)."""
        values = [parse_level(self.factor, lv) for lv in self.levels]
        if self.factor == "mode":
            return
        if self.factor == "decoding":
            per_seat = np.repeat(level_g, len(players) // max(len(games), 1))
            if len(per_seat) != len(players):  # not four rows a game: map by game id
                lv = pd.Series(level_g, index=games["game_id"].to_numpy())
                per_seat = lv.reindex(players["game_id"].to_numpy()).to_numpy()
            players["temperature"] = np.array([values[i][0] for i in per_seat], dtype=float)
            players["top_p"] = np.array([np.nan if values[i][1] is None else values[i][1] for i in per_seat])
            return
        if self.factor == "group_size":
            games["n_players"] = np.array([values[i][0] for i in level_g], dtype=np.int64)
            games["n_impostors"] = np.array([values[i][1] for i in level_g], dtype=np.int64)
        elif self.factor == "length_budget":
            games["length_budget"] = pd.array([values[i] for i in level_g], dtype="Int64")
        else:
            games["language"] = np.array([values[i] for i in level_g], dtype=object)


def parse_plan(condition: str, condition_or: Optional[str] = None, reversal: Optional[str] = None) -> ConditionPlan:
    """A plan from ``impostor simulate``'s options: ``--condition language=en,es,de``,
    ``--condition-or es=0.8,de=1.2`` and ``--rank-reversal MODEL_A,MODEL_B@LEVEL``."""
    factor, eq, levels = condition.partition("=")
    if not eq:
        raise ValueError(f"--condition {condition!r}: write FACTOR=LEVEL,LEVEL (e.g. language=en,es,de)")
    ors: dict[str, float] = {}
    for part in (condition_or or "").split(","):
        if part.strip():
            lv, eq2, val = part.partition("=")
            if not eq2:
                raise ValueError(f"--condition-or {part!r}: write LEVEL=OR (e.g. es=0.8)")
            ors[lv.strip()] = float(val)
    rev = None
    if reversal:
        pair, at, lv = reversal.partition("@")
        models = [m.strip() for m in pair.split(",")]
        if not at or len(models) != 2:
            raise ValueError(f"--rank-reversal {reversal!r}: write MODEL_A,MODEL_B@LEVEL")
        rev = (models[0], models[1], lv.strip())
    return ConditionPlan(factor.strip(), tuple(x.strip() for x in levels.split(",") if x.strip()), ors, {}, rev)
