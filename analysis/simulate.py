"""Synthetic games in the data-contract format, with known true effects.

``simulate_games`` draws whole experiments the way the real runner lays them
out (Appendix A.3 schedules: counterbalanced impostor seats, uniformly shuffled
speaking order, 2v2 team blocks) and decides each game in two steps:

1. **Winner** from a logit model of the impostor-win probability::

       logit p = logit(base_imp_win)
                 + log(size_or_per_10x) * (log10 params of the impostor model - mean)
                 + log(model_or[impostor model])
                 + log(seat_or[impostor seat])            (seat 0 = reference)
                 + log(mode_or[mode])                      (homogeneous = reference)
                 + log(difficulty_or[difficulty])          (centred over the tiers)
                 + c * (+1 if speaking position in {2, 3} else -1)
                 + log(opponent_or_per_10pp) * 10 * (mean detection of the majority seats - mean)

   ``c = position_effect_pp / 100 / (p0 (1 - p0))`` so that the pseudo-arm ITT
   ``mean(p2, p3) - mean(p0..p3)`` is ``position_effect_pp`` near the base rate.
   So ``base_imp_win`` is the win probability of the reference game (seat 0,
   homogeneous, an average model, an average tier, average opponents).

2. **Ballots** consistent with that winner under the default rule (A.1, as in
   ``impostor.rules.decide``): an impostor self-declares with its model's rate
   (the guess is right exactly when the impostor wins); rarely a majority
   player self-declares (majority wins); otherwise the four ballots are drawn
   from a simple voting model (a majority voter picks the impostor with its
   model's detection probability, each ballot is invalid with
   ``invalid_vote_rate``) *conditioned* on the outcome class: conviction or
   strict plurality for majority wins, a top-of-ballot tie (rate ``tie_rate``
   of all games) or no conviction for impostor wins.  The conditioning is
   exact: all 4^4 ballot profiles are enumerated and one is drawn per game.

Everything is vectorised (90,720 games in a few seconds).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from typing import Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd

from impostor.records import DIFFICULTIES, GAME_COLUMNS, MODES, PLAYER_COLUMNS, TEAM_MODES

__all__ = [
    "SimModel",
    "DEFAULT_MODELS",
    "PAPER_SEAT_OR",
    "PAPER_MODE_OR",
    "design_cells",
    "simulate_games",
    "profile_table",
]


@dataclass(frozen=True)
class SimModel:
    """A simulated model: metadata for models.csv and its behaviour parameters."""

    model: str
    provider: str = "unknown"
    family: str = "unknown"
    params_b: Optional[float] = None
    det: float = 0.6  # P(a majority ballot of this model names the impostor), before conditioning
    self_decl: Optional[float] = None  # P(self-declares as impostor); None = simulate's self_decl_rate
    odds: float = 1.0  # extra impostor-win odds multiplier beyond the size effect


# Nine models in the spirit of the paper (sizes are illustrative, not facts about the models).
DEFAULT_MODELS: tuple[SimModel, ...] = (
    SimModel("gpt-4o", "openai", "gpt", 200.0, 0.77, 0.457),
    SimModel("claude-sonnet-4", "anthropic", "claude", 150.0, 0.51, 0.292),
    SimModel("deepseek-v3", "deepseek", "deepseek", 671.0, 0.69, 0.290),
    SimModel("llama-4-maverick", "meta", "llama", 400.0, 0.65, 0.212),
    SimModel("llama-4-scout", "meta", "llama", 109.0, 0.61, 0.249),
    SimModel("llama-3.1-70b", "meta", "llama", 70.0, 0.65, 0.355),
    SimModel("gpt-3.5-turbo", "openai", "gpt", 20.0, 0.56, 0.015),
    SimModel("llama-3.1-405b", "meta", "llama", 405.0, 0.60, 0.315),
    SimModel("llama-3.1-8b", "meta", "llama", 8.0, 0.34, 0.010),
)

PAPER_SEAT_OR = (1.12, 1.26, 1.22)
PAPER_MODE_OR = {"cross_play": 0.79, "team_blind": 0.90, "team_aware": 0.77, "team_semi_aware": 0.80}
PAPER_DIFFICULTY_OR = {"easy": 0.75, "medium": 0.85, "hard": 1.25, "expert": 1.25}
# Relative propensity of a top-of-ballot tie among impostor wins (paper G: more ties in
# team-aware and hard/expert cells); normalised so the overall tie rate is ``tie_rate``.
TIE_WEIGHT_MODE = {"homogeneous": 0.4, "cross_play": 0.8, "team_blind": 1.0, "team_aware": 1.4, "team_semi_aware": 1.3}
TIE_WEIGHT_DIFFICULTY = {"easy": 0.35, "medium": 0.8, "hard": 1.4, "expert": 1.4}

_DESCRIPTIONS = np.array(
    [
        "It is something most people have seen up close.",
        "You would usually find it outdoors.",
        "People often talk about it when they are relaxed.",
        "It has a shape that is easy to recognise.",
        "Some people love it and others avoid it.",
        "It is often part of everyday routines.",
        "It can be large or small depending on the context.",
        "Children learn about it early on.",
    ],
    dtype=object,
)

# Outcome classes of a ballot profile (no self-declarations).
CONVICTION, STRICT_PLURALITY, TIE, NO_CONVICTION = 0, 1, 2, 3
_CLASS_NAMES = np.array(["conviction", "strict_plurality", "tie", "no_conviction"], dtype=object)


# --------------------------------------------------------------------------- ballots


def profile_table() -> dict[str, np.ndarray]:
    """All 4^4 ballot profiles in *role* space (role 0 = impostor, roles 1-3 = majority).

    Profile index ``o0 + 4*o1 + 16*o2 + 64*o3`` where ``o_v`` is voter v's option:
    0 = invalid ballot, 1-3 = the 1st-3rd other role in increasing order (so for a
    majority voter option 1 is always the impostor).  Returns target roles (-1 =
    invalid), outcome class, tie size k, impostor-in-tie, votes on the impostor,
    valid votes, and P(impostor wins) under sym-candidate.
    """
    idx = np.arange(256)
    opts = np.stack([(idx // 4**v) % 4 for v in range(4)], axis=1)  # (256, 4)
    target = np.full((256, 4), -1)
    for v in range(4):
        others = [r for r in range(4) if r != v]
        for o in (1, 2, 3):
            target[opts[:, v] == o, v] = others[o - 1]
    counts = np.stack([(target == r).sum(1) for r in range(4)], axis=1)  # votes received per role
    valid = (target >= 0).sum(1)
    on_imp = (target[:, 1:] == 0).sum(1)  # non-impostor votes on the impostor
    votes_imp = counts[:, 0]
    top = counts.max(1)
    tied = (counts == top[:, None]) & (top[:, None] > 0)
    k = tied.sum(1)
    k = np.where(k >= 2, k, 0)
    in_tie = (k >= 2) & tied[:, 0]
    cls = np.full(256, NO_CONVICTION)
    cls[k >= 2] = TIE
    cls[votes_imp > valid - votes_imp] = STRICT_PLURALITY
    cls[on_imp >= 2] = CONVICTION
    p_cand = np.where(in_tie, 1.0 - 1.0 / np.maximum(k, 1), 1.0)
    return {
        "target": target,
        "cls": cls,
        "k": k,
        "in_tie": in_tie,
        "on_imp": on_imp,
        "valid": valid,
        "p_cand": p_cand,
    }


_PROFILES = profile_table()
_MAJ_CLASSES = np.isin(_PROFILES["cls"], [CONVICTION, STRICT_PLURALITY])


def _sample_profiles(det: np.ndarray, r: float, want: np.ndarray, rng: np.random.Generator, chunk: int = 8192) -> np.ndarray:
    """One profile index per game.

    det: (n, 3) detection probability of the majority roles 1-3; want: (n,) code
    0 = any profile, 1 = majority win by ballots, 2 = tie, 3 = no conviction.
    """
    n = det.shape[0]
    masks = np.stack(
        [
            np.ones(256, bool),
            _MAJ_CLASSES,
            _PROFILES["cls"] == TIE,
            _PROFILES["cls"] == NO_CONVICTION,
        ]
    )
    det = np.clip(det, 0.01, 0.99)
    q = 1.0 - r
    out = np.empty(n, dtype=np.int64)
    p_imp = np.array([r, q / 3, q / 3, q / 3])
    for start in range(0, n, chunk):
        d = det[start : start + chunk]
        m = d.shape[0]
        voters = [np.broadcast_to(p_imp, (m, 4))]
        for j in range(3):
            dj = d[:, j]
            voters.append(np.stack([np.full(m, r), q * dj, q * (1 - dj) / 2, q * (1 - dj) / 2], axis=1))
        p = (
            voters[3][:, :, None, None, None]
            * voters[2][:, None, :, None, None]
            * voters[1][:, None, None, :, None]
            * voters[0][:, None, None, None, :]
        ).reshape(m, 256)
        p *= masks[want[start : start + chunk]]
        cum = np.cumsum(p, axis=1)
        total = cum[:, -1]
        if np.any(total <= 0):  # pragma: no cover - guarded by the clip above
            raise ValueError("a game has no ballot profile for its outcome; check invalid_vote_rate")
        u = rng.random(m) * total
        out[start : start + chunk] = np.minimum((cum < u[:, None]).sum(1), 255)
    return out


# --------------------------------------------------------------------------- design


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


def _coerce_models(models) -> list[SimModel]:
    if models is None:
        return list(DEFAULT_MODELS)
    known = {m.model: m for m in DEFAULT_MODELS}
    out = []
    for m in models:
        if isinstance(m, SimModel):
            out.append(m)
        elif isinstance(m, str):
            out.append(known.get(m, SimModel(m)))
        elif isinstance(m, Mapping):
            out.append(SimModel(**m))
        else:
            raise TypeError(f"models: expected names, dicts or SimModel, got {type(m).__name__}")
    names = [m.model for m in out]
    if len(set(names)) != len(names):
        raise ValueError("models: duplicate model names")
    return out


def _seat_logor(seat_or) -> np.ndarray:
    if np.isscalar(seat_or):
        vals = [1.0, float(seat_or), float(seat_or), float(seat_or)]
    else:
        vals = [1.0, *map(float, seat_or)]
        if len(vals) != 4:
            raise ValueError("seat_or: give one OR or three (seats 1, 2, 3 vs seat 0)")
    return np.log(np.array(vals))


def _mode_logor(mode_or, modes) -> dict[str, float]:
    if mode_or is None:
        mode_or = PAPER_MODE_OR
    if np.isscalar(mode_or):
        return {m: (0.0 if m == "homogeneous" else float(np.log(mode_or))) for m in modes}
    out = {m: float(np.log(mode_or.get(m, 1.0))) for m in modes}
    out["homogeneous"] = 0.0 if "homogeneous" not in mode_or else float(np.log(mode_or["homogeneous"]))
    return out


def _centred_logor(values, keys) -> dict[str, float]:
    if values is None or np.isscalar(values):
        return {k: 0.0 for k in keys}
    logs = {k: float(np.log(values.get(k, 1.0))) for k in keys}
    mean = np.mean(list(logs.values()))
    return {k: v - mean for k, v in logs.items()}


@lru_cache(maxsize=8)
def _word_pairs(difficulties: tuple[str, ...]) -> dict[str, list[tuple[str, str, str]]]:
    """The shipped word pairs (configs/word_pairs.json) or synthetic stand-ins."""
    try:
        from impostor.wordpairs import load_word_pairs

        pairs = load_word_pairs(require_full=False)
        out = {d: [(p.pair_id, p.majority, p.impostor) for p in pairs[d]] for d in difficulties if d in pairs}
        if len(out) == len(difficulties):
            return out
    except Exception:  # noqa: BLE001 - fall back to synthetic words
        pass
    return {d: [(f"{d}-{i:03d}", f"{d}word{i:03d}m", f"{d}word{i:03d}i") for i in range(1, 76)] for d in difficulties}


# --------------------------------------------------------------------------- main entry


def simulate_games(
    n_experiments: int = 756,
    games_per_experiment: int = 120,
    *,
    models: Optional[Sequence[Union[str, SimModel, Mapping]]] = None,
    modes: Sequence[str] = MODES,
    difficulties: Sequence[str] = DIFFICULTIES,
    base_imp_win: float = 0.45,
    seat_or: Union[float, Sequence[float]] = PAPER_SEAT_OR,
    mode_or: Union[float, Mapping[str, float], None] = None,
    difficulty_or: Union[float, Mapping[str, float], None] = PAPER_DIFFICULTY_OR,
    size_or_per_10x: float = 1.71,
    position_effect_pp: float = -1.11,
    opponent_or_per_10pp: float = 0.8,
    tie_rate: float = 0.117,
    invalid_vote_rate: float = 0.02,
    self_decl_rate: Optional[float] = None,
    majority_self_decl_rate: float = 0.003,
    invalid_description_rate: float = 0.01,
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Simulate ``n_experiments`` x ``games_per_experiment`` games with known true effects.

    Returns ``(games, players, models)`` with every ``GameRow``/``PlayerRow``
    column (contract columns first) and models.csv's columns.  Experiments follow
    :func:`design_cells` (repeated as replicates when ``n_experiments`` exceeds it,
    interleaved so that a prefix covers modes and tiers evenly).  ``mode_or=None``
    uses the paper's mode ORs; pass ``1.0`` for no mode effect.  ``self_decl_rate``
    (a float) overrides the per-model self-declaration rates.  Defaults mimic the
    paper's headline effects.
    """
    if n_experiments < 1 or games_per_experiment < 1:
        raise ValueError("n_experiments and games_per_experiment must be >= 1")
    if not 0 < base_imp_win < 1:
        raise ValueError("base_imp_win must be in (0, 1)")
    if not 0 <= invalid_vote_rate < 1 or not 0 <= tie_rate < 1:
        raise ValueError("invalid_vote_rate and tie_rate must be in [0, 1)")
    modes = list(modes)
    difficulties = list(difficulties)
    for m in modes:
        if m not in MODES:
            raise ValueError(f"unknown mode {m!r}; use {', '.join(MODES)}")
    for d in difficulties:
        if d not in DIFFICULTIES:
            raise ValueError(f"unknown difficulty {d!r}; use {', '.join(DIFFICULTIES)}")
    specs = _coerce_models(models)
    names = [m.model for m in specs]
    if len(specs) < 2 and any(m != "homogeneous" for m in modes):
        raise ValueError("cross-play and team modes need at least two models")

    ss = np.random.SeedSequence(seed)
    rng_design, rng_sched, rng_win, rng_ballot, rng_misc = (np.random.default_rng(s) for s in ss.spawn(5))

    cells = _order_cells(design_cells(names, modes, difficulties), rng_design)
    n_cells = len(cells)
    G = games_per_experiment
    E = n_experiments
    n = E * G
    model_idx = {m: i for i, m in enumerate(names)}

    exp_mode = np.array([cells[e % n_cells][0] for e in range(E)], dtype=object)
    exp_diff = np.array([cells[e % n_cells][1] for e in range(E)], dtype=object)
    exp_a = np.array([model_idx[cells[e % n_cells][2]] for e in range(E)])
    exp_b = np.array([model_idx[cells[e % n_cells][3]] for e in range(E)])
    exp_rep = np.arange(E) // n_cells
    exp_ids = np.array(
        [
            f"sim{seed}-{e:04d}-{exp_mode[e]}-{exp_diff[e]}-{names[exp_a[e]]}"
            + ("" if exp_a[e] == exp_b[e] else f"-vs-{names[exp_b[e]]}")
            + (f"-r{exp_rep[e]}" if exp_rep[e] else "")
            for e in range(E)
        ],
        dtype=object,
    )

    # ---- schedules (A.3), per experiment x game, vectorised
    gi = np.tile(np.arange(G), E)  # game index inside experiment
    ge = np.repeat(np.arange(E), G)  # experiment of each game
    mode_g = exp_mode[ge]
    is_homog = mode_g == "homogeneous"
    is_cross = mode_g == "cross_play"
    is_team = np.isin(mode_g, list(TEAM_MODES))

    n_blk4 = -(-G // 4)
    blk4 = rng_sched.permuted(np.tile(np.arange(4), (E, n_blk4, 1)), axis=2).reshape(E, -1)[:, :G].reshape(-1)
    n_blk8 = -(-G // 8)
    blk8 = rng_sched.permuted(np.tile(np.arange(4), (E, n_blk8, 2, 1)), axis=3).reshape(E, -1)[:, :G].reshape(-1)
    host_b = ((gi % 8) >= 4) & is_team  # impostor on team B in the second half of each 8-block
    imp_seat = np.where(is_cross, blk4, np.where(is_team, blk8, gi % 4))
    mate = (imp_seat + rng_sched.integers(1, 4, size=n)) % 4

    seats = np.arange(4)[None, :]
    # team of each seat: the impostor and its mate are on the host team
    on_host = (seats == imp_seat[:, None]) | (seats == mate[:, None])
    host_team = np.where(host_b, "B", "A")
    other_team = np.where(host_b, "A", "B")
    team_arr = np.where(on_host, host_team[:, None], other_team[:, None]).astype(object)
    team_arr[~is_team] = None

    a_g, b_g = exp_a[ge], exp_b[ge]
    seat_model = np.empty((n, 4), dtype=np.int64)
    is_imp_seat = seats == imp_seat[:, None]
    seat_model[:] = a_g[:, None]  # homogeneous
    cross_m = np.where(is_imp_seat, a_g[:, None], b_g[:, None])
    seat_model[is_cross] = cross_m[is_cross]
    # team modes: team A plays model a, team B model b
    team_m = np.where(team_arr == "A", a_g[:, None], b_g[:, None])
    seat_model[is_team] = team_m[is_team]
    imp_model = seat_model[np.arange(n), imp_seat]

    order = rng_sched.permuted(np.tile(np.arange(4), (n, 1)), axis=1)  # seats in speaking order
    speak_pos = np.argsort(order, axis=1)  # position of each seat
    imp_pos = speak_pos[np.arange(n), imp_seat]

    pairs = _word_pairs(tuple(difficulties))
    diff_g = exp_diff[ge]
    pair_id = np.empty(n, dtype=object)
    maj_word = np.empty(n, dtype=object)
    imp_word = np.empty(n, dtype=object)
    for d in difficulties:
        sel = np.flatnonzero(diff_g == d)
        plist = pairs[d]
        k = rng_sched.integers(0, len(plist), size=sel.size)
        arr = np.array(plist, dtype=object)
        pair_id[sel], maj_word[sel], imp_word[sel] = arr[k, 0], arr[k, 1], arr[k, 2]

    # ---- winner: the logit model
    params = np.array([np.nan if m.params_b is None else float(m.params_b) for m in specs])
    log_p = np.log10(params)
    size_term = np.nan_to_num(log_p - np.nanmean(log_p) if np.isfinite(log_p).any() else log_p, nan=0.0)
    model_term = np.log(size_or_per_10x) * size_term + np.log([m.odds for m in specs])
    det = np.array([m.det for m in specs])
    p0 = base_imp_win
    c_pos = position_effect_pp / 100.0 / (p0 * (1 - p0))
    mlog = _mode_logor(mode_or, modes)
    dlog = _centred_logor(difficulty_or, difficulties)
    seat_log = _seat_logor(seat_or)
    maj_mask = ~is_imp_seat
    opp_det = (det[seat_model] * maj_mask).sum(1) / 3.0
    eta = (
        np.log(p0 / (1 - p0))
        + model_term[imp_model]
        + seat_log[imp_seat]
        + np.vectorize(mlog.get, otypes=[float])(mode_g)
        + np.vectorize(dlog.get, otypes=[float])(diff_g)
        + np.where(imp_pos >= 2, c_pos, -c_pos)
        + np.log(opponent_or_per_10pp) * 10.0 * (opp_det - det.mean())
    )
    p_true = 1.0 / (1.0 + np.exp(-eta))
    imp_wins = rng_win.random(n) < p_true

    # ---- self-declarations
    sd_rate = np.array([(m.self_decl if (m.self_decl is not None and self_decl_rate is None) else (self_decl_rate if self_decl_rate is not None else 0.2)) for m in specs])
    imp_sd = rng_ballot.random(n) < sd_rate[imp_model]
    maj_sd = (~imp_wins) & (~imp_sd) & (rng_ballot.random(n) < majority_self_decl_rate / max(1e-9, 1 - p0))
    maj_sd_seat = np.where(maj_sd, (imp_seat + rng_ballot.integers(1, 4, size=n)) % 4, -1)

    # ---- ties among impostor wins decided by ballots
    eligible = imp_wins & ~imp_sd
    w = np.vectorize(TIE_WEIGHT_MODE.get, otypes=[float])(mode_g) * np.vectorize(TIE_WEIGHT_DIFFICULTY.get, otypes=[float])(diff_g)
    w_sum = (w * eligible).sum()
    q_tie = np.minimum(1.0, tie_rate * n * w / w_sum) if w_sum > 0 else np.zeros(n)
    is_tie = eligible & (rng_ballot.random(n) < q_tie)

    want = np.zeros(n, dtype=np.int64)  # 0 = any (self-declaration decides)
    want[~imp_sd & ~maj_sd & ~imp_wins] = 1
    want[is_tie] = 2
    want[eligible & ~is_tie] = 3

    # role -> seat: role 0 = impostor seat, roles 1-3 = the other seats ascending
    others = np.broadcast_to(np.arange(4), (n, 4))[maj_mask].reshape(n, 3)
    role_seat = np.concatenate([imp_seat[:, None], others], axis=1)
    det_roles = det[seat_model[np.arange(n)[:, None], others]]
    prof = _sample_profiles(det_roles, invalid_vote_rate, want, rng_ballot)

    tgt_role = _PROFILES["target"][prof]  # (n, 4) by role
    tgt_seat_by_role = np.where(tgt_role >= 0, np.take_along_axis(role_seat, np.maximum(tgt_role, 0), axis=1), -1)
    vote = np.empty((n, 4), dtype=np.int64)  # by seat
    np.put_along_axis(vote, role_seat, tgt_seat_by_role, axis=1)

    cls = _PROFILES["cls"][prof]
    cond = _CLASS_NAMES[cls].copy()
    cond[imp_sd & imp_wins] = "impostor_guess_correct"
    cond[imp_sd & ~imp_wins] = "impostor_guess_wrong"
    cond[maj_sd] = "majority_self_declared"
    tie_k = _PROFILES["k"][prof]
    in_tie = _PROFILES["in_tie"][prof]
    on_imp = _PROFILES["on_imp"][prof]
    n_valid = _PROFILES["valid"][prof]
    winner = np.where(imp_wins, "impostor", "majority").astype(object)
    fixed = cond != "tie"
    p_def = np.where(imp_wins, 1.0, 0.0)
    p_cand = np.where(fixed, p_def, _PROFILES["p_cand"][prof])
    p_side = np.where(fixed, p_def, 0.5)

    desc_valid = rng_misc.random((n, 4)) >= invalid_description_rate
    seat_game_seed = rng_misc.integers(0, 2**62, size=n)

    game_ids = np.array([f"{exp_ids[e]}-g{i:03d}" for e, i in zip(ge, gi)], dtype=object)
    speaking_order = np.array(["".join(map(str, row)) for row in order], dtype=object)
    team_assign = np.where(is_team, np.array(["".join(t) if t[0] is not None else "" for t in team_arr], dtype=object), None)
    name_arr = np.array(names, dtype=object)

    games = pd.DataFrame(
        {
            "experiment_id": exp_ids[ge],
            "game_id": game_ids,
            "game_index": gi,
            "mode": mode_g,
            "difficulty": diff_g,
            "pair_id": pair_id,
            "majority_word": maj_word,
            "impostor_word": imp_word,
            "impostor_seat": imp_seat,
            "impostor_model": name_arr[imp_model],
            "impostor_speaking_position": imp_pos,
            "winner": winner,
            "win_condition": cond,
            "seed": seat_game_seed,
            "tie_rule": "default",
            "winner_live": winner,
            "tie_k": tie_k,
            "impostor_in_tie": in_tie,
            "p_imp_default": p_def,
            "p_imp_sym_candidate": p_cand,
            "p_imp_sym_side": p_side,
            "n_valid_votes": n_valid,
            "n_invalid_ballots": 4 - n_valid,
            "n_invalid_descriptions": (~desc_valid).sum(1),
            "votes_on_impostor": on_imp,
            "team_assignment": team_assign,
            "speaking_order": speaking_order,
            "vote_mode": "free",
        }
    )[GAME_COLUMNS]
    games["p_true"] = p_true  # extra: the simulated truth, handy for checks

    # ---- players: four rows per game, seat order
    N = n * 4
    gidx = np.repeat(np.arange(n), 4)
    seat_col = np.tile(np.arange(4), n)
    role = np.where(is_imp_seat, "impostor", "majority").astype(object).reshape(-1)
    vote_flat = vote.reshape(-1)
    valid_ballot = vote_flat >= 0
    self_declared = (is_imp_seat & imp_sd[:, None]) | (seats == maj_sd_seat[:, None])
    guess = np.full((n, 4), None, dtype=object)
    imp_guess = np.where(imp_wins, maj_word, np.array(["guess-" + str(w) for w in imp_word], dtype=object))
    guess[is_imp_seat & imp_sd[:, None]] = imp_guess[imp_sd]
    conf = np.where(valid_ballot, np.round(rng_misc.uniform(0.35, 0.98, size=N), 2), np.nan)
    words = np.where(is_imp_seat, imp_word[:, None], maj_word[:, None]).reshape(-1)
    dvalid = desc_valid.reshape(-1)
    desc = np.where(dvalid, _DESCRIPTIONS[rng_misc.integers(0, len(_DESCRIPTIONS), size=N)], "")

    players = pd.DataFrame(
        {
            "game_id": game_ids[gidx],
            "seat": seat_col,
            "model": name_arr[seat_model.reshape(-1)],
            "role": role,
            "team": team_arr.reshape(-1),
            "speaking_position": speak_pos.reshape(-1),
            "description": desc,
            "description_valid": dvalid,
            "vote": pd.array(np.where(valid_ballot, vote_flat, 0), dtype="Int64"),
            "confidence": conf,
            "self_declared": self_declared.reshape(-1),
            "word_guess": guess.reshape(-1),
            "experiment_id": exp_ids[ge][gidx],
            "word": words,
            "description_raw": desc,
            "description_attempts": 1,
            "description_error": np.where(dvalid, None, "the description contains your word").astype(object),
            "ballot_valid": valid_ballot,
            "ballot_error": np.where(valid_ballot, None, "unparseable").astype(object),
            "ballot_class": np.where(valid_ballot, "valid", "unparseable").astype(object),
            "ballot_attempts": 1,
            "vote_raw": "",
            "reasoning": None,
        }
    )[PLAYER_COLUMNS]
    players.loc[~valid_ballot, "vote"] = pd.NA

    models_df = pd.DataFrame(
        {
            "model": names,
            "provider": [m.provider for m in specs],
            "family": [m.family for m in specs],
            "params_b": params,
        }
    )
    return games, players, models_df
