"""Synthetic games in the data-contract format, with known true effects.

``simulate_games`` draws whole experiments the way the real runner lays them
out (:mod:`impostor_bench.analysis.sim.design`: word pairs shared across experiments; impostor seat
in balanced blocks, teams and speaking order drawn per game of every experiment) and decides each game in two steps:

1. **Winner** from a logit model of the impostor-win probability (full form, with
   word-pair and experiment effects, in :mod:`impostor_bench.analysis.sim.design`)::

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
   ``impostor_bench.core.rules.decide``): an impostor self-declares with its model's rate
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
from typing import Any, Optional

import numpy as np
import pandas as pd

from impostor_bench.analysis.sim.ballots import CLASS_NAMES, PROFILES, sample_profiles, profile_table
from impostor_bench.analysis.sim.design import SimDesign, build_design, design_cells
from impostor_bench.analysis.sim.groups import regroup
from impostor_bench.analysis.sim.effects import DEFAULT_MODELS, PAPER_MODE_OR, PAPER_SEAT_OR, SimModel
from impostor_bench.core.records import GAME_COLUMNS, PLAYER_COLUMNS, TEAM_MODES, GameRow, PlayerRow

__all__ = [
    "SimModel",
    "SimDesign",
    "DEFAULT_MODELS",
    "PAPER_SEAT_OR",
    "PAPER_MODE_OR",
    "build_design",
    "design_cells",
    "simulate_games",
    "profile_table",
]

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

def _contract(df: pd.DataFrame, row_cls, columns) -> pd.DataFrame:
    """The record's columns in contract order; a column the simulator does not model gets the
    record's default (so a new optional field does not break the simulator)."""
    for c in columns:
        if c not in df.columns:
            default = row_cls.model_fields[c].default
            df[c] = None if default is None or not isinstance(default, (str, int, float, bool)) else default
    return df[columns]


# --------------------------------------------------------------------------- steps of a simulation


@dataclass
class _Ballots:
    """Per game: who self-declared, the ballot profile drawn, the four ballots by seat and the outcome."""

    imp_sd: np.ndarray  # (n,) the impostor self-declared
    maj_sd_seat: np.ndarray  # (n,) the majority seat that self-declared, -1 none
    prof: np.ndarray  # (n,) index into PROFILES
    vote: np.ndarray  # (n, 4) voted seat by seat, -1 = invalid ballot
    cond: np.ndarray  # (n,) win condition


def _self_declarations(design: SimDesign, imp_wins: np.ndarray, self_decl_rate: Optional[float],
                       majority_self_decl_rate: float, p0: float, rng: np.random.Generator):
    """Impostor self-declarations at each model's rate; rarely a majority player's (majority wins)."""
    n = design.n
    sd_rate = np.array([(m.self_decl if (m.self_decl is not None and self_decl_rate is None) else (self_decl_rate if self_decl_rate is not None else 0.2)) for m in design.specs])
    imp_sd = rng.random(n) < sd_rate[design.imp_model]
    maj_sd = (~imp_wins) & (~imp_sd) & (rng.random(n) < majority_self_decl_rate / max(1e-9, 1 - p0))
    maj_sd_seat = np.where(maj_sd, (design.imp_seat + rng.integers(1, 4, size=n)) % 4, -1)
    return imp_sd, maj_sd, maj_sd_seat


def _wanted_outcome(design: SimDesign, imp_wins, imp_sd, maj_sd, tie_rate: float, rng: np.random.Generator):
    """The ballot outcome class each game must get: 0 any (a self-declaration decides), 1 a majority
    win, 2 a top-of-ballot tie (impostor wins, weighted by mode and tier to ``tie_rate``), 3 no conviction."""
    n = design.n
    eligible = imp_wins & ~imp_sd
    w = np.vectorize(TIE_WEIGHT_MODE.get, otypes=[float])(design.mode_g) * np.vectorize(TIE_WEIGHT_DIFFICULTY.get, otypes=[float])(design.diff_g)
    w_sum = (w * eligible).sum()
    q_tie = np.minimum(1.0, tie_rate * n * w / w_sum) if w_sum > 0 else np.zeros(n)
    is_tie = eligible & (rng.random(n) < q_tie)
    want = np.zeros(n, dtype=np.int64)  # 0 = any (self-declaration decides)
    want[~imp_sd & ~maj_sd & ~imp_wins] = 1
    want[is_tie] = 2
    want[eligible & ~is_tie] = 3
    return want


def _draw_ballots(design: SimDesign, imp_wins: np.ndarray, *, p0: float, tie_rate: float, invalid_vote_rate: float,
                  self_decl_rate: Optional[float], majority_self_decl_rate: float,
                  rng: np.random.Generator) -> _Ballots:
    """Self-declarations, then four ballots drawn conditioned on the outcome the winner needs."""
    n, imp_seat = design.n, design.imp_seat
    imp_sd, maj_sd, maj_sd_seat = _self_declarations(design, imp_wins, self_decl_rate, majority_self_decl_rate, p0, rng)
    want = _wanted_outcome(design, imp_wins, imp_sd, maj_sd, tie_rate, rng)

    # role -> seat: role 0 = impostor seat, roles 1-3 = the other seats ascending
    maj_mask = np.arange(4)[None, :] != imp_seat[:, None]
    others = np.broadcast_to(np.arange(4), (n, 4))[maj_mask].reshape(n, 3)
    role_seat = np.concatenate([imp_seat[:, None], others], axis=1)
    det = np.array([m.det for m in design.specs])
    det_roles = det[design.seat_model[np.arange(n)[:, None], others]]
    prof = sample_profiles(det_roles, invalid_vote_rate, want, rng)

    tgt_role = PROFILES["target"][prof]  # (n, 4) by role
    tgt_seat_by_role = np.where(tgt_role >= 0, np.take_along_axis(role_seat, np.maximum(tgt_role, 0), axis=1), -1)
    vote = np.empty((n, 4), dtype=np.int64)  # by seat
    np.put_along_axis(vote, role_seat, tgt_seat_by_role, axis=1)

    cond = CLASS_NAMES[PROFILES["cls"][prof]].copy()
    cond[imp_sd & imp_wins] = "impostor_guess_correct"
    cond[imp_sd & ~imp_wins] = "impostor_guess_wrong"
    cond[maj_sd] = "majority_self_declared"
    return _Ballots(imp_sd, maj_sd_seat, prof, vote, cond)


def _games_frame(design: SimDesign, run: dict, b: _Ballots, desc_valid: np.ndarray,
                 seat_game_seed: np.ndarray, game_ids: np.ndarray) -> pd.DataFrame:
    """games.parquet rows (every GameRow column) plus the simulated truth ``p_true``/``p_design``."""
    exp_ids, ge, gi = design.exp_ids, design.ge, design.gi
    imp_wins, prof = run["imp_wins"], b.prof
    winner = np.where(imp_wins, "impostor", "majority").astype(object)
    fixed = b.cond != "tie"
    p_def = np.where(imp_wins, 1.0, 0.0)
    n_valid = PROFILES["valid"][prof]
    is_team = np.isin(design.mode_g, TEAM_MODES)
    # numpy's stubs reject None, which np.where takes as an object scalar (here and in the players' errors)
    team_assign = np.where(is_team, _team_strings(design.team_arr), None)  # type: ignore[call-overload]
    games = pd.DataFrame(
        {
            "experiment_id": exp_ids[ge],
            "game_id": game_ids,
            "game_index": gi,
            "mode": design.mode_g,
            "difficulty": design.diff_g,
            "pair_id": design.pair[:, 0],
            "majority_word": design.pair[:, 1],
            "impostor_word": design.pair[:, 2],
            "impostor_seat": design.imp_seat,
            "impostor_model": np.array(design.names, dtype=object)[design.imp_model],
            "impostor_speaking_position": run["imp_pos"],
            "winner": winner,
            "win_condition": b.cond,
            "seed": seat_game_seed,
            "tie_rule": "default",
            "winner_live": winner,
            "tie_k": PROFILES["k"][prof],
            "impostor_in_tie": PROFILES["in_tie"][prof],
            "p_imp_default": p_def,
            "p_imp_sym_candidate": np.where(fixed, p_def, PROFILES["p_cand"][prof]),
            "p_imp_sym_side": np.where(fixed, p_def, 0.5),
            "n_valid_votes": n_valid,
            "n_invalid_ballots": 4 - n_valid,
            "n_invalid_descriptions": (~desc_valid).sum(1),
            "votes_on_impostor": PROFILES["on_imp"][prof],
            "team_assignment": team_assign,
            "speaking_order": _order_strings(run["order"]),
            "vote_mode": "free",
            "word_pairs_file": None,
            "word_pairs_sha256": None,
        }
    )
    games = _contract(games, GameRow, GAME_COLUMNS)
    games["p_true"] = run["p_true"]  # extra: the simulated truth, handy for checks
    games["p_design"] = design.marginal_win_prob()
    return games


def _team_strings(team_arr: np.ndarray) -> np.ndarray:
    """"AABB"-style team strings per game ("" without teams), each distinct row joined once."""
    code = (team_arr == "A") * 1 + (team_arr == "B") * 2
    rows, inv = np.unique(code, axis=0, return_inverse=True)
    text = np.array(["" if r[0] == 0 else "".join("AB"[c - 1] for c in r) for r in rows], dtype=object)
    return text[inv.ravel()]


def _order_strings(order: np.ndarray) -> np.ndarray:
    """"0312"-style speaking orders: each distinct row joined once (at most 24), not once per game."""
    rows, inv = np.unique(order, axis=0, return_inverse=True)
    return np.array(["".join(map(str, r)) for r in rows], dtype=object)[inv.ravel()]


def _game_ids(design: SimDesign) -> np.ndarray:
    return np.array([f"{design.exp_ids[e]}-g{i:03d}" for e, i in zip(design.ge, design.gi)], dtype=object)


def _players_frame(design: SimDesign, run: dict, b: _Ballots, desc_valid: np.ndarray,
                   rng: np.random.Generator, game_ids: np.ndarray) -> pd.DataFrame:
    """players.parquet rows: four per game in seat order (every PlayerRow column)."""
    n, imp_seat, imp_wins = design.n, design.imp_seat, run["imp_wins"]
    maj_word, imp_word = design.pair[:, 1], design.pair[:, 2]
    N = n * 4
    gidx = np.repeat(np.arange(n), 4)
    seats = np.arange(4)[None, :]
    is_imp_seat = seats == imp_seat[:, None]
    role = np.where(is_imp_seat, "impostor", "majority").astype(object).reshape(-1)
    vote_flat = b.vote.reshape(-1)
    valid_ballot = vote_flat >= 0
    self_declared = (is_imp_seat & b.imp_sd[:, None]) | (seats == b.maj_sd_seat[:, None])
    guess = np.full((n, 4), None, dtype=object)
    sd = b.imp_sd  # the guess of a self-declaring impostor (only those games: no string per game)
    guess[is_imp_seat & sd[:, None]] = np.where(imp_wins[sd], maj_word[sd],
                                                np.array(["guess-" + str(w) for w in imp_word[sd]], dtype=object))
    conf = np.where(valid_ballot, np.round(rng.uniform(0.35, 0.98, size=N), 2), np.nan)
    words = np.where(is_imp_seat, imp_word[:, None], maj_word[:, None]).reshape(-1)
    dvalid = desc_valid.reshape(-1)
    desc = np.where(dvalid, _DESCRIPTIONS[rng.integers(0, len(_DESCRIPTIONS), size=N)], "")
    players = pd.DataFrame(
        {
            "game_id": game_ids[gidx],
            "seat": np.tile(np.arange(4), n),
            "model": np.array(design.names, dtype=object)[design.seat_model.reshape(-1)],
            "role": role,
            "team": design.team_arr.reshape(-1),
            "speaking_position": run["speak_pos"].reshape(-1),
            "description": desc,
            "description_valid": dvalid,
            "vote": pd.array(np.where(valid_ballot, vote_flat, 0), dtype="Int64"),
            "confidence": conf,
            "self_declared": self_declared.reshape(-1),
            "word_guess": guess.reshape(-1),
            "experiment_id": design.exp_ids[design.ge][gidx],
            "word": words,
            "description_raw": desc,
            "description_attempts": 1,
            # None in np.where: an object scalar numpy's stubs reject
            "description_error": np.where(dvalid, None,  # type: ignore[call-overload]
                                          "the description contains your word").astype(object),
            "description_class": np.where(dvalid, None, "leak").astype(object),  # type: ignore[call-overload]
            "ballot_valid": valid_ballot,
            "ballot_error": np.where(valid_ballot, None, "unparseable").astype(object),  # type: ignore[call-overload]
            "ballot_class": np.where(valid_ballot, "valid", "unparseable").astype(object),
            "ballot_attempts": 1,
            "vote_raw": "",
            "reasoning": None,
            "temperature": None,
            "vote_temperature": None,
        }
    )
    players = _contract(players, PlayerRow, PLAYER_COLUMNS)
    players.loc[~valid_ballot, "vote"] = pd.NA
    return players


def _models_frame(design: SimDesign) -> pd.DataFrame:
    specs = design.specs
    return pd.DataFrame(
        {
            "model": design.names,
            "provider": [m.provider for m in specs],
            "family": [m.family for m in specs],
            "params_b": np.array([np.nan if m.params_b is None else float(m.params_b) for m in specs]),
            # the simulator's sizes are illustrative (effects.DEFAULT_MODELS), not facts about the models
            "params_source": ["simulated" if m.params_b is not None else None for m in specs],
        }
    )


# --------------------------------------------------------------------------- main entry


def simulate_games(
    n_experiments: int = 756,
    games_per_experiment: int = 120,
    *,
    base_imp_win: float = 0.45,
    design_seed: Optional[int] = None,
    tie_rate: float = 0.117,
    invalid_vote_rate: float = 0.02,
    self_decl_rate: Optional[float] = None,
    majority_self_decl_rate: float = 0.003,
    invalid_description_rate: float = 0.01,
    seed: int = 0,
    schedule: str = "per_experiment",
    **effects: Any,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Simulate ``n_experiments`` x ``games_per_experiment`` games with known true effects.

    Returns ``(games, players, models)`` with every ``GameRow``/``PlayerRow``
    column (contract columns first) and models.csv's columns.  Experiments follow
    :func:`design_cells` (repeated as replicates when ``n_experiments`` exceeds it,
    interleaved so that a prefix covers modes and tiers evenly).  ``mode_or=None``
    uses the paper's mode ORs; pass ``1.0`` for no mode effect.  ``self_decl_rate``
    (a float) overrides the per-model self-declaration rates.  Defaults mimic the
    paper's headline effects.  ``pair_effect_sd`` / ``experiment_effect_sd``: SD (logit)
    of word-pair effects (fixed by the design) and of per-experiment random effects;
    ``design_seed`` (default ``seed``) fixes the schedule, so runs with one design seed
    and different seeds are replicates of one design.  Extra columns: ``p_true`` (the
    game's win probability given everything drawn) and ``p_design`` (averaged over its
    random speaking position and experiment effect: the truth behind rates and ORs).
    ``schedule="shared"`` rebuilds the runner's first schedule (seat and teams of game *i*
    shared by a mode's experiments), for showing what it did to the seat tests.  ``effects``:
    the design's keyword arguments (models, modes, difficulties and the true effects: ``seat_or``,
    ``mode_or``, ``difficulty_or``, ``size_or_per_10x``, ``position_effect_pp``,
    ``opponent_or_per_10pp``, ``pair_effect_sd``, ``experiment_effect_sd``, ``conditions``: a
    ``impostor_bench.analysis.sim.conditions.ConditionPlan`` of planted study conditions), typed and defaulted
    once, in :func:`impostor_bench.analysis.sim.design.build_design`.
    """
    if not 0 <= invalid_vote_rate < 1 or not 0 <= tie_rate < 1:
        raise ValueError("invalid_vote_rate and tie_rate must be in [0, 1)")
    design = build_design(
        n_experiments, games_per_experiment, base_imp_win=base_imp_win,
        design_seed=seed if design_seed is None else design_seed, id_prefix=f"sim{seed}", schedule=schedule,
        **effects,
    )
    # one stream per step, so a change to one step leaves the draws of the others as they were
    rng_sched, rng_win, rng_ballot, rng_misc = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(4))
    run = design.draw(rng_sched, rng_win)
    ballots = _draw_ballots(design, run["imp_wins"], p0=base_imp_win, tie_rate=tie_rate,
                            invalid_vote_rate=invalid_vote_rate, self_decl_rate=self_decl_rate,
                            majority_self_decl_rate=majority_self_decl_rate, rng=rng_ballot)
    desc_valid = rng_misc.random((design.n, 4)) >= invalid_description_rate
    seat_game_seed = rng_misc.integers(0, 2**62, size=design.n)
    game_ids = _game_ids(design)  # once for both tables
    games = _games_frame(design, run, ballots, desc_valid, seat_game_seed, game_ids)
    players = _players_frame(design, run, ballots, desc_valid, rng_misc, game_ids)
    if design.plan is not None and design.exp_level is not None:  # the planted conditions' columns
        design.plan.write_columns(design.exp_level[design.ge], games, players)
        if design.plan.factor == "group_size":  # the levels' games replayed at their size (analysis.sim.groups)
            games, players = regroup(games, players, rng_misc, invalid_vote_rate=invalid_vote_rate)
    return games, players, _models_frame(design)


# The helpers the multi-round simulator (analysis/sim/rounds.py) shares, under public names.
contract_frame = _contract
game_ids_of = _game_ids
models_frame = _models_frame
order_strings = _order_strings
team_strings = _team_strings
