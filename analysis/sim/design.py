"""The simulator's design layer: the experiment grid, the schedule a run's configuration and
seed fix, and the logit model of the impostor-win probability (the models and their true
effects are ``effects.py``'s).

The schedule follows the runner (``impostor_bench.core.schedule``, docs/rules.md "Schedules"):

* **shared across experiments** (a paired design): within a difficulty, game *i* of
  every experiment (every mode and model assignment) plays the same word pair;
* **drawn per experiment**: the impostor seat in 4-game blocks (each a permutation of
  the seats) and in team modes 8-game blocks in which each seat hosts the impostor once
  on each team (so each model holds the impostor's team in half the games); the speaking
  order, a uniform shuffle per game (the randomisation behind the speaking-order ITT,
  Appendix B.3).  ``schedule="shared"`` rebuilds the runner's first schedule (seat and
  teams of game *i* shared by every experiment of a mode), to show what it did to the
  seat tests.

The models and the true effects (``SimModel``, the paper's ORs) are ``impostor_bench.analysis.sim.effects``'.
:class:`SimDesign` holds the fixed part (drawn from ``design_seed``) and the linear
predictor without the two random parts; :meth:`SimDesign.draw` draws one run (speaking
orders, experiment effects, winners), :meth:`SimDesign.marginal_win_prob` gives each
game's true win probability averaged over them (the estimand of rates and ORs,
conditional on the design). Logit model of P(impostor wins)::

    logit p = logit(base_imp_win)
              + log(size_or_per_10x) * (log10 params of the impostor model - mean)
              + log(model odds) + log(seat_or[seat]) + log(mode_or[mode])
              + log(difficulty_or[difficulty])                 (centred over tiers)
              + log(opponent_or_per_10pp) * 10 * (mean detection of the majority seats - mean)
              + v[word pair]          (pair effect, N(0, pair_effect_sd^2), fixed by the design)
              + u[experiment]         (experiment effect, N(0, (experiment_effect_sd x noise)^2), per run;
                                       noise: the largest ``SimModel.noise`` of its models, 1 by default)
              + w[mode, impostor model] + w[mode, word pair]
                                      (interactions, N(0, mode_model_sd^2) and N(0, mode_pair_sd^2),
                                       double-centred, fixed by the design; 0 by default)
              + c * (+1 if speaking position in {2, 3} else -1)

with ``c = position_effect_pp / 100 / (p0 (1 - p0))`` so that the pseudo-arm ITT
``mean(p2, p3) - mean(p0..p3)`` is about ``position_effect_pp`` near the base rate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations
from typing import TYPE_CHECKING, Mapping, Optional, Sequence, Union

import numpy as np

from impostor_bench.analysis.sim.conditions import ConditionPlan
from impostor_bench.analysis.sim.effects import (PAPER_DIFFICULTY_OR, PAPER_SEAT_OR, centred_logor, coerce_models,
                                  interaction_logit, mode_logor, seat_logor)
from impostor_bench.core.records import DIFFICULTIES, MODES, TEAM_MODES
from impostor_bench.core.wordpairs import load_word_pairs

if TYPE_CHECKING:
    import pandas as pd


def design_cells(models: Sequence[str], modes: Sequence[str], difficulties: Sequence[str]) -> list[tuple[str, str, str, str]]:
    """The paper's full design: (mode, difficulty, model_a, model_b) per experiment.

    homogeneous: one cell per model (a = b); cross_play: one per ordered pair
    (a = impostor model, b = majority model); team modes: one per unordered pair
    (a = team A, b = team B).  9 models x 5 modes x 4 tiers gives 756 cells.
    """
    cells = []
    for d in difficulties:
        for mode in modes:
            if mode == "homogeneous":
                cells += [(mode, d, m, m) for m in models]
            elif mode == "cross_play":
                cells += [(mode, d, a, b) for a in models for b in models if a != b]
            else:
                cells += [(mode, d, a, b) for a, b in combinations(models, 2)]
    return cells


def _order_cells(cells, rng: np.random.Generator):
    """Round-robin over (mode, difficulty) groups, shuffled within a group, so that
    any prefix of the list covers the modes and tiers evenly."""
    groups: dict[tuple[str, str], list] = {}
    for c in cells:
        groups.setdefault((c[0], c[1]), []).append(c)
    for key in groups:
        perm = rng.permutation(len(groups[key]))
        groups[key] = [groups[key][i] for i in perm]
    ordered = []
    depth = max(len(g) for g in groups.values())
    for i in range(depth):
        for key in groups:
            if i < len(groups[key]):
                ordered.append(groups[key][i])
    return ordered


@lru_cache(maxsize=8)
def _word_pairs(difficulties: tuple[str, ...]) -> dict[str, list[tuple[str, str, str]]]:
    """The shipped word pairs (configs/word_pairs.json) or synthetic stand-ins."""
    try:
        pairs = load_word_pairs(require_full=False)
        out = {d: [(p.pair_id, p.majority, p.impostor) for p in pairs[d]] for d in difficulties if d in pairs}
        if len(out) == len(difficulties):
            return out
    except Exception:  # noqa: BLE001 - fall back to synthetic words
        pass
    return {d: [(f"{d}-{i:03d}", f"{d}word{i:03d}m", f"{d}word{i:03d}i") for i in range(1, 76)] for d in difficulties}


@dataclass
class SimDesign:
    """The fixed part of a simulated run: experiments, schedule, linear predictor."""

    specs: list
    G: int
    exp_ids: np.ndarray  # (E,)
    exp_mode: np.ndarray
    exp_diff: np.ndarray
    exp_a: np.ndarray  # model index of a (impostor model in cross-play, team A in team modes)
    exp_b: np.ndarray
    ge: np.ndarray  # (N,) experiment of each game
    gi: np.ndarray  # (N,) game index inside the experiment
    imp_seat: np.ndarray  # (N,)
    team_arr: np.ndarray  # (N, 4) "A"/"B" per seat in team modes, None otherwise
    seat_model: np.ndarray  # (N, 4) model index per seat
    pair: np.ndarray  # (N, 3) pair_id, majority word, impostor word
    eta: np.ndarray  # (N,) logit of P(impostor wins) without the position term and experiment effect
    c_pos: float
    experiment_effect_sd: float
    # the seats' models and roles as a players table, built once per design (impostor_bench.analysis.calibration.light_players)
    players_cache: Optional[pd.DataFrame] = field(default=None, init=False, repr=False, compare=False)
    # planted study conditions (impostor_bench.analysis.sim.conditions): the plan and each experiment's level
    plan: Optional[ConditionPlan] = field(default=None, repr=False, compare=False)
    exp_level: Optional[np.ndarray] = field(default=None, repr=False, compare=False)
    # (E,) multiplier of experiment_effect_sd per experiment (``SimModel.noise``); None = all 1
    exp_sd_scale: Optional[np.ndarray] = field(default=None, repr=False, compare=False)

    def game_effect_sd(self) -> np.ndarray:
        """(N,) SD of each game's experiment effect."""
        scale = np.ones(len(self.exp_ids)) if self.exp_sd_scale is None else self.exp_sd_scale
        return self.experiment_effect_sd * scale[self.ge]

    @property
    def names(self) -> list[str]:
        return [m.model for m in self.specs]

    @property
    def n(self) -> int:
        return len(self.ge)

    @property
    def mode_g(self) -> np.ndarray:
        return self.exp_mode[self.ge]

    @property
    def diff_g(self) -> np.ndarray:
        return self.exp_diff[self.ge]

    @property
    def imp_model(self) -> np.ndarray:
        return self.seat_model[np.arange(self.n), self.imp_seat]

    def draw(self, rng_order: np.random.Generator, rng_win: np.random.Generator) -> dict:
        """One run: speaking orders (uniform, per game), experiment effects and winners."""
        n = self.n
        order = rng_order.permuted(np.tile(np.arange(4), (n, 1)), axis=1)  # seats in speaking order
        speak_pos = np.argsort(order, axis=1)
        imp_pos = speak_pos[np.arange(n), self.imp_seat]
        u = (rng_win.normal(0.0, self.experiment_effect_sd, len(self.exp_ids)) if self.experiment_effect_sd > 0
             else np.zeros(len(self.exp_ids)))
        if self.exp_sd_scale is not None:
            u = u * self.exp_sd_scale
        eta = self.eta + np.where(imp_pos >= 2, self.c_pos, -self.c_pos) + u[self.ge]
        p_true = 1.0 / (1.0 + np.exp(-eta))
        return {"order": order, "speak_pos": speak_pos, "imp_pos": imp_pos, "u": u, "p_true": p_true,
                "imp_wins": rng_win.random(n) < p_true}

    def marginal_win_prob(self, nodes: int = 40) -> np.ndarray:
        """(N,) P(impostor wins) of each game averaged over its random speaking position and
        the experiment effect (Gauss-Hermite): the truth behind win rates and mode ORs."""
        x, w = np.polynomial.hermite_e.hermegauss(nodes)
        w = w / w.sum()
        sd = self.game_effect_sd()
        out = np.zeros(self.n)
        for sign in (1.0, -1.0):  # positions {2, 3} and {0, 1}, each with probability 1/2
            z = self.eta[:, None] + sign * self.c_pos + sd[:, None] * x[None, :]
            out += 0.5 * (w[None, :] / (1.0 + np.exp(-z))).sum(1)
        return out


def _experiment_schedule(exp_mode: np.ndarray, G: int, rng: np.random.Generator):
    """(E, G) seat, teammate and impostor-on-team-B of every game, drawn per experiment as
    ``impostor_bench.core.schedule.impostor_seat_and_teams`` draws them (other random numbers)."""
    E = len(exp_mode)
    n4 = -(-G // 4)
    seat = rng.permuted(np.tile(np.arange(4), (E * n4, 1)), axis=1).reshape(E, n4 * 4)[:, :G]
    n8 = -(-G // 8)
    a_first = rng.random((E, n8, 4)) < 0.5  # seat s on team A in the first half of its 8-block
    k = np.arange(G) % 8
    blk = np.arange(G) // 8
    a_here = a_first[np.arange(E)[:, None], blk[None, :], seat]
    host_b = np.where(k[None, :] < 4, ~a_here, a_here) & np.isin(exp_mode, list(TEAM_MODES))[:, None]
    mate = (seat + rng.integers(1, 4, size=(E, G))) % 4
    return seat, mate, host_b


def _mode_schedule(mode: str, G: int, rng: np.random.Generator):
    """(seat, teammate, impostor on team B) of games 0..G-1, shared by a mode's experiments
    (the runner's first schedule; ``schedule="shared"``)."""
    gi = np.arange(G)
    if mode == "cross_play":  # 4-game blocks, every seat once, shuffled per block
        seat = np.concatenate([rng.permutation(4) for _ in range(-(-G // 4))])[:G]
    elif mode in TEAM_MODES:  # 8-game blocks: 4 with the impostor on team A, then 4 on team B
        seat = np.concatenate([rng.permutation(4) for _ in range(2 * -(-G // 8))])[:G]
    else:  # default rotation
        seat = gi % 4
    mate = (seat + rng.integers(1, 4, size=G)) % 4
    return seat, mate, (mode in TEAM_MODES) & ((gi % 8) >= 4)


def build_design(
    n_experiments: int,
    games_per_experiment: int,
    *,
    models=None,
    modes: Sequence[str] = MODES,
    difficulties: Sequence[str] = DIFFICULTIES,
    base_imp_win: float = 0.45,
    seat_or: Union[float, Sequence[float]] = PAPER_SEAT_OR,
    mode_or: Union[float, Mapping[str, float], None] = None,
    difficulty_or: Union[float, Mapping[str, float], None] = PAPER_DIFFICULTY_OR,
    size_or_per_10x: float = 1.71,
    position_effect_pp: float = -1.11,
    opponent_or_per_10pp: float = 0.8,
    pair_effect_sd: float = 0.0,
    experiment_effect_sd: float = 0.0,
    design_seed: int = 0,
    id_prefix: str = "sim",
    schedule: str = "per_experiment",
    conditions: Optional[ConditionPlan] = None,
    mode_model_sd: float = 0.0,
    mode_pair_sd: float = 0.0,
) -> SimDesign:
    """The schedule and linear predictor of a simulated run (arguments: ``simulate_games``;
    ``conditions`` plants a study factor's levels and effects, ``impostor_bench.analysis.sim.conditions``;
    ``mode_model_sd``/``mode_pair_sd``: SD of the mode x model and mode x pair interactions)."""
    modes, difficulties = list(modes), list(difficulties)
    _check_design_args(n_experiments, games_per_experiment, base_imp_win, pair_effect_sd, experiment_effect_sd,
                       modes, difficulties)
    specs = coerce_models(models)
    names = [m.model for m in specs]
    if mode_model_sd < 0 or mode_pair_sd < 0 or any(not m.noise > 0 for m in specs):
        raise ValueError("mode_model_sd and mode_pair_sd must be >= 0 and every model's noise > 0")
    if len(specs) < 2 and any(m != "homogeneous" for m in modes):
        raise ValueError("cross-play and team modes need at least two models")
    rng_cells, rng_seats, rng_pairs, rng_veff = (np.random.default_rng(s)
                                                 for s in np.random.SeedSequence([design_seed, 7]).spawn(4))
    cells = _order_cells(design_cells(names, modes, difficulties), rng_cells)
    G = games_per_experiment
    exp_mode, exp_diff, exp_a, exp_b, exp_ids = _experiments(cells, names, n_experiments, id_prefix)
    gi = np.tile(np.arange(G), n_experiments)
    ge = np.repeat(np.arange(n_experiments), G)
    if schedule not in ("per_experiment", "shared"):
        raise ValueError(f"schedule must be per_experiment or shared; got {schedule!r}")
    imp_seat, team_arr, seat_model = _seating(exp_mode, ge, gi, G, exp_a[ge], exp_b[ge], rng_seats, schedule)
    pair, v_pair = _pairs(difficulties, exp_diff[ge], gi, G, pair_effect_sd, rng_pairs, rng_veff)
    eta = _linear_predictor(specs, imp_seat, seat_model, exp_mode[ge], exp_diff[ge], v_pair, modes, difficulties,
                            base_imp_win=base_imp_win, seat_or=seat_or, mode_or=mode_or, difficulty_or=difficulty_or,
                            size_or_per_10x=size_or_per_10x, opponent_or_per_10pp=opponent_or_per_10pp)
    if mode_model_sd > 0 or mode_pair_sd > 0:  # their own stream: the other draws stay as they were
        rng_int = np.random.default_rng(np.random.SeedSequence([design_seed, 7, 1]))
        eta = eta + interaction_logit(rng_int, exp_mode[ge], seat_model[np.arange(len(ge)), imp_seat], len(specs),
                                      pair[:, 0], modes, mode_model_sd, mode_pair_sd)
    noise = np.array([float(m.noise) for m in specs])
    sd_scale = np.maximum(noise[exp_a], noise[exp_b]) if (noise != 1.0).any() else None
    c_pos = position_effect_pp / 100.0 / (base_imp_win * (1 - base_imp_win))
    exp_level = None
    if conditions is not None:
        exp_level = conditions.experiment_levels(exp_mode)
        eta = eta + conditions.logit_shift(exp_level[ge], seat_model[np.arange(len(ge)), imp_seat], names,
                                           impostor_strength(specs, size_or_per_10x))
    return SimDesign(specs, G, exp_ids, exp_mode, exp_diff, exp_a, exp_b, ge, gi, imp_seat, team_arr, seat_model,
                     pair, eta, float(c_pos), float(experiment_effect_sd), plan=conditions, exp_level=exp_level,
                     exp_sd_scale=sd_scale)


def _check_design_args(n_experiments, games_per_experiment, base_imp_win, pair_effect_sd, experiment_effect_sd,
                       modes, difficulties) -> None:
    if n_experiments < 1 or games_per_experiment < 1:
        raise ValueError("n_experiments and games_per_experiment must be >= 1")
    if not 0 < base_imp_win < 1:
        raise ValueError("base_imp_win must be in (0, 1)")
    if pair_effect_sd < 0 or experiment_effect_sd < 0:
        raise ValueError("pair_effect_sd and experiment_effect_sd must be >= 0")
    for m in modes:
        if m not in MODES:
            raise ValueError(f"unknown mode {m!r}; use {', '.join(MODES)}")
    for d in difficulties:
        if d not in DIFFICULTIES:
            raise ValueError(f"unknown difficulty {d!r}; use {', '.join(DIFFICULTIES)}")


def _experiments(cells, names, E: int, id_prefix: str):
    """Experiment e plays cell e mod len(cells) (replicate e // len(cells)): mode, tier, models a/b, id."""
    n_cells = len(cells)
    model_idx = {m: i for i, m in enumerate(names)}
    exp_mode = np.array([cells[e % n_cells][0] for e in range(E)], dtype=object)
    exp_diff = np.array([cells[e % n_cells][1] for e in range(E)], dtype=object)
    exp_a = np.array([model_idx[cells[e % n_cells][2]] for e in range(E)])
    exp_b = np.array([model_idx[cells[e % n_cells][3]] for e in range(E)])
    exp_rep = np.arange(E) // n_cells
    exp_ids = np.array([f"{id_prefix}-{e:04d}-{exp_mode[e]}-{exp_diff[e]}-{names[exp_a[e]]}"
                        + ("" if exp_a[e] == exp_b[e] else f"-vs-{names[exp_b[e]]}")
                        + (f"-r{exp_rep[e]}" if exp_rep[e] else "") for e in range(E)], dtype=object)
    return exp_mode, exp_diff, exp_a, exp_b, exp_ids


def _seating(exp_mode, ge, gi, G: int, a_g, b_g, rng_seats, schedule: str = "per_experiment"):
    """Per game: the impostor seat, teams and the model of each seat."""
    n = len(gi)
    mode_g = exp_mode[ge]
    if schedule == "per_experiment":
        s, t, h = _experiment_schedule(exp_mode, G, rng_seats)
        imp_seat, mate, host_b = s[ge, gi].astype(np.int64), t[ge, gi].astype(np.int64), h[ge, gi]
    else:
        imp_seat, mate, host_b = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, bool)
        for m in MODES:  # fixed order, so a mode's schedule does not depend on which others run
            s, t, h = _mode_schedule(m, G, rng_seats)
            sel = mode_g == m
            imp_seat[sel], mate[sel], host_b[sel] = s[gi[sel]], t[gi[sel]], h[gi[sel]]
    is_cross, is_team = mode_g == "cross_play", np.isin(mode_g, list(TEAM_MODES))
    seats = np.arange(4)[None, :]
    on_host = (seats == imp_seat[:, None]) | (seats == mate[:, None])
    host_team, other_team = np.where(host_b, "B", "A"), np.where(host_b, "A", "B")
    team_arr = np.where(on_host, host_team[:, None], other_team[:, None]).astype(object)
    team_arr[~is_team] = None
    is_imp_seat = seats == imp_seat[:, None]
    seat_model = np.empty((n, 4), dtype=np.int64)
    seat_model[:] = a_g[:, None]  # homogeneous
    cross_m = np.where(is_imp_seat, a_g[:, None], b_g[:, None])
    seat_model[is_cross] = cross_m[is_cross]
    team_m = np.where(team_arr == "A", a_g[:, None], b_g[:, None])  # team A plays a, team B plays b
    seat_model[is_team] = team_m[is_team]
    return imp_seat, team_arr, seat_model


def _pairs(difficulties, diff_g, gi, G: int, pair_effect_sd: float, rng_pairs, rng_veff):
    """Word pairs: a sequence per difficulty (permutation cycles, as impostor_bench.core.schedule.pair_order)
    shared by every experiment of that difficulty; pair effects fixed by the design."""
    n = len(gi)
    plists = _word_pairs(tuple(difficulties))
    pair = np.empty((n, 3), dtype=object)
    v_pair = np.zeros(n)
    for d in DIFFICULTIES:  # fixed order, as above
        if d not in difficulties:
            continue
        plist = np.array(plists[d], dtype=object)
        seq = np.concatenate([rng_pairs.permutation(len(plist)) for _ in range(-(-G // len(plist)))])[:G]
        eff = rng_veff.normal(0.0, pair_effect_sd, len(plist)) if pair_effect_sd > 0 else np.zeros(len(plist))
        eff -= eff.mean()
        sel = diff_g == d
        pair[sel] = plist[seq[gi[sel]]]
        v_pair[sel] = eff[seq[gi[sel]]]
    return pair, v_pair


def impostor_strength(specs, size_or_per_10x: float) -> np.ndarray:
    """(M,) each model's impostor term of the win logit: its size effect plus its extra odds."""
    params = np.array([np.nan if m.params_b is None else float(m.params_b) for m in specs])
    log_p = np.log10(params)
    size_term = np.nan_to_num(log_p - np.nanmean(log_p) if np.isfinite(log_p).any() else log_p, nan=0.0)
    return np.log(size_or_per_10x) * size_term + np.log([m.odds for m in specs])


def _linear_predictor(specs, imp_seat, seat_model, mode_g, diff_g, v_pair, modes, difficulties, *, base_imp_win,
                      seat_or, mode_or, difficulty_or, size_or_per_10x, opponent_or_per_10pp) -> np.ndarray:
    """logit of the impostor-win probability per game, without the speaking-position and experiment terms."""
    n = len(imp_seat)
    imp_model = seat_model[np.arange(n), imp_seat]
    is_imp_seat = np.arange(4)[None, :] == imp_seat[:, None]
    model_term = impostor_strength(specs, size_or_per_10x)
    det = np.array([m.det for m in specs])
    mlog, dlog = mode_logor(mode_or, modes), centred_logor(difficulty_or, difficulties)
    opp_det = (det[seat_model] * ~is_imp_seat).sum(1) / 3.0
    return (np.log(base_imp_win / (1 - base_imp_win)) + model_term[imp_model] + seat_logor(seat_or)[imp_seat]
            + np.vectorize(mlog.get, otypes=[float])(mode_g) + np.vectorize(dlog.get, otypes=[float])(diff_g)
            + np.log(opponent_or_per_10pp) * 10.0 * (opp_det - det.mean()) + v_pair)
