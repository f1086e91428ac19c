"""Simulated games of several rounds with known true parameters, in the
data-contract format (games, players, moves), so the round tables can be tested and calibrated.

The design (experiments, seats, teams, models, shared word pairs with their effects, the
experiment effects) is :func:`impostor_bench.analysis.sim.design.build_design`'s; the play follows the
multi-round rules (docs/rules.md): every round each remaining seat describes, then votes
among the remaining seats; the seat with the most counted votes is voted out (a tie at the
top: nobody); the majority wins when the impostor is voted out, the impostor when two
players remain or the rounds run out; an impostor may self-declare (its guess decides).

The ballot model, per round ``r`` and remaining seat (every draw independent given the game):

* the ballot is invalid (``unparseable``) with ``invalid_vote_rate``;
* a majority seat of model ``m`` names the impostor with probability
  ``expit(logit(det_m) + det_gain_per_round * (r - 1) - h_g)``, else a remaining majority seat
  other than itself, uniformly; ``h_g`` is the game's hiding advantage, the design's
  linear predictor (model size, seat, mode, tier, word-pair effect) centred on the base rate
  plus the experiment effect: the design's dependence;
* the impostor names a remaining seat other than itself, uniformly (in team modes it never
  names its teammate with ``impostor_spares_teammate``);
* before the ballots, the impostor self-declares with ``self_decl_rate`` (per round); its guess
  is right with ``guess_rate``.

So with no effects (``pair_effect_sd = experiment_effect_sd = 0`` and an ``h_g`` of 0) the
vote accuracy of model ``m`` in round ``r`` is exactly the formula above, and a teammate's
betrayal, a recovery and a vote change have closed forms (tests/analysis/test_rounds_sim.py).
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd

from impostor_bench.analysis.sim.design import build_design
from impostor_bench.analysis.sim.effects import SimModel
from impostor_bench.analysis.sim.simulate import contract_frame, game_ids_of, models_frame, order_strings, team_strings
from impostor_bench.core.records import TEAM_MODES
from impostor_bench.core.records import (DIFFICULTIES, GAME_COLUMNS, MODES, MOVE_COLUMNS, PLAYER_COLUMNS, GameRow,
                                   MoveRow, PlayerRow)

__all__ = ["simulate_rounds", "vote_accuracy_truth"]

_DESCRIPTIONS = np.array(["It is found in many homes.", "People use it every day.", "It comes in many sizes.",
                          "Some people collect it.", "It is older than it looks.", "You can hold it in one hand."],
                         dtype=object)


def vote_accuracy_truth(det: float, round_: int, gain: float, h: float = 0.0) -> float:
    """P(a majority ballot names the impostor) of the ballot model above."""
    z = np.log(det / (1 - det)) + gain * (round_ - 1) - h
    return float(1 / (1 + np.exp(-z)))


def _pick(eligible: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(n,) a uniformly drawn True column of each row of ``eligible`` (n, 4); -1 where none."""
    keys = np.where(eligible, rng.random(eligible.shape), -1.0)
    out = keys.argmax(1)
    return np.where(eligible.any(1), out, -1)


def simulate_rounds(
    n_experiments: int = 120,
    games_per_experiment: int = 40,
    rounds: int = 3,
    *,
    models: Optional[Sequence[Union[str, SimModel, Mapping]]] = None,
    modes: Sequence[str] = MODES,
    difficulties: Sequence[str] = DIFFICULTIES,
    base_imp_win: float = 0.45,
    det_gain_per_round: float = 0.3,
    invalid_vote_rate: float = 0.02,
    self_decl_rate: float = 0.03,
    guess_rate: float = 0.5,
    impostor_spares_teammate: bool = True,
    pair_effect_sd: float = 0.0,
    experiment_effect_sd: float = 0.0,
    hiding_scale: float = 1.0,
    seed: int = 0,
    design_seed: Optional[int] = None,
    **design_effects,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``(games, players, moves, models)`` of ``n_experiments`` x ``games_per_experiment`` games of
    at most ``rounds`` rounds.  ``hiding_scale`` multiplies ``h_g`` (0: no game effect at all);
    ``design_effects`` go to ``build_design`` (seat_or, mode_or, size_or_per_10x, ...)."""
    if rounds < 2:
        raise ValueError("rounds must be 2 or more for the multi-round simulator (1: impostor_bench.analysis.sim.simulate)")
    if not 0 <= invalid_vote_rate < 1 or not 0 <= self_decl_rate < 1 or not 0 <= guess_rate <= 1:
        raise ValueError("invalid_vote_rate and self_decl_rate must be in [0, 1), guess_rate in [0, 1]")
    design = build_design(n_experiments, games_per_experiment, models=models, modes=modes, difficulties=difficulties,
                          base_imp_win=base_imp_win, pair_effect_sd=pair_effect_sd,
                          experiment_effect_sd=experiment_effect_sd,
                          design_seed=seed if design_seed is None else design_seed, id_prefix=f"simr{seed}",
                          **{"position_effect_pp": 0.0, **design_effects})
    rng_sched, rng_eff, rng_play, rng_misc = (np.random.default_rng(s) for s in np.random.SeedSequence([seed, 32]).spawn(4))
    n = design.n
    order = rng_sched.permuted(np.tile(np.arange(4), (n, 1)), axis=1)
    speak_pos = np.argsort(order, axis=1)
    u = rng_eff.normal(0.0, experiment_effect_sd, len(design.exp_ids)) if experiment_effect_sd > 0 else np.zeros(len(design.exp_ids))
    h = hiding_scale * (design.eta - np.log(base_imp_win / (1 - base_imp_win)) + u[design.ge])
    det = np.array([m.det for m in design.specs])
    logit_det = np.log(det / (1 - det))[design.seat_model]  # (n, 4)
    seats = np.arange(4)[None, :]
    is_imp = seats == design.imp_seat[:, None]
    team = design.team_arr
    mate = np.full((n, 4), False)
    has_team = np.array([t is not None for t in team[:, 0]])
    for s in range(4):
        mate[:, s] = has_team & (team[:, s] == team[np.arange(n), design.imp_seat])
    imp_mate = mate & ~is_imp  # the impostor's teammate seat (team modes)

    alive = np.ones((n, 4), bool)
    over = np.zeros(n, bool)
    winner = np.full(n, None, dtype=object)
    cond = np.full(n, None, dtype=object)
    played = np.zeros(n, np.int64)
    elim_round = np.full((n, 4), -1, np.int64)
    elim_seq: list[list[int]] = [[] for _ in range(n)]
    parts = []
    for r in range(1, rounds + 1):
        act = ~over
        played[act] = r
        present = alive & act[:, None]
        declare = act & (rng_play.random(n) < self_decl_rate)
        invalid = rng_play.random((n, 4)) < invalid_vote_rate
        q = 1 / (1 + np.exp(-(logit_det + det_gain_per_round * (r - 1) - h[:, None])))
        detect = rng_play.random((n, 4)) < q
        vote = np.full((n, 4), -1, np.int64)
        for s in range(4):
            maj_other = present & ~is_imp & (seats != s)
            imp_other = present & (seats != s) & ~(imp_mate if impostor_spares_teammate else np.zeros_like(mate))
            random_maj = _pick(maj_other, rng_play)
            random_imp = _pick(imp_other, rng_play)
            v = np.where(is_imp[:, s], random_imp, np.where(detect[:, s], design.imp_seat, random_maj))
            vote[:, s] = np.where(present[:, s] & ~invalid[:, s], v, -1)
        self_decl = is_imp & declare[:, None]
        vote[self_decl] = -1
        cls = np.where(invalid, "unparseable", "valid").astype(object)
        cls[self_decl] = "self_vote"
        counts = np.stack([(vote == s).sum(1) for s in range(4)], axis=1)
        top = counts.max(1)
        unique = (counts == top[:, None]).sum(1) == 1
        out_seat = np.where(unique & (top > 0) & act & ~declare, counts.argmax(1), -1)
        eliminated = (seats == out_seat[:, None])
        guess_ok = declare & (rng_play.random(n) < guess_rate)
        cond[declare] = np.where(guess_ok[declare], "impostor_guess_correct", "impostor_guess_wrong")
        winner[declare] = np.where(guess_ok[declare], "impostor", "majority")
        imp_out = out_seat == design.imp_seat
        cond[imp_out], winner[imp_out] = "eliminated", "majority"
        alive_after = alive & ~eliminated
        two = act & ~declare & ~imp_out & (alive_after.sum(1) <= 2)
        cond[two], winner[two] = "two_left", "impostor"
        last = act & ~declare & ~imp_out & ~two & (r == rounds)
        cond[last], winner[last] = "rounds_exhausted", "impostor"
        for g in np.flatnonzero(out_seat >= 0):
            elim_seq[g].append(int(out_seat[g]))
        elim_round[eliminated] = r
        # this round's moves: every seat present at the round's start
        pos_r = np.argsort(np.argsort(np.where(present, speak_pos, 9), axis=1), axis=1)
        gi, si = np.nonzero(present)
        parts.append(pd.DataFrame({
            "g": gi, "round": r, "seat": si, "speaking_position": pos_r[gi, si], "vote": vote[gi, si],
            "ballot_class": cls[gi, si], "self_declared": self_decl[gi, si], "eliminated": eliminated[gi, si],
            "guess_ok": guess_ok[gi]}))
        alive = alive_after
        over = over | declare | imp_out | two | last
    return _frames(design, order, speak_pos, winner, cond, played, rounds, elim_round, elim_seq, parts, rng_misc)


def _frames(design, order, speak_pos, winner, cond, played, rounds, elim_round, elim_seq, parts, rng):
    """The three tables (every record column; the simulator's extras after them)."""
    n = design.n
    names = np.array(design.names, dtype=object)
    game_ids = game_ids_of(design)
    exp_of_game = design.exp_ids[design.ge]
    mv = pd.concat(parts, ignore_index=True).sort_values(["g", "round", "seat"], kind="stable").reset_index(drop=True)
    g, s = mv["g"].to_numpy(), mv["seat"].to_numpy()
    is_imp = s == design.imp_seat[g]
    counted = mv["vote"].to_numpy() >= 0
    words = np.where(is_imp, design.pair[g, 2], design.pair[g, 1])
    guess = np.where(mv["self_declared"].to_numpy(),
                     np.where(mv["guess_ok"].to_numpy(), design.pair[g, 1], "guess-" + design.pair[g, 2].astype(str)), None)
    moves = pd.DataFrame({
        "game_id": game_ids[g], "experiment_id": exp_of_game[g], "round": mv["round"].to_numpy(), "seat": s,
        "model": names[design.seat_model[g, s]], "role": np.where(is_imp, "impostor", "majority").astype(object),
        "team": design.team_arr[g, s], "speaking_position": mv["speaking_position"].to_numpy(),
        "description": _DESCRIPTIONS[rng.integers(0, len(_DESCRIPTIONS), len(mv))], "description_valid": True,
        "description_error": None, "vote": pd.array(np.where(counted, mv["vote"].to_numpy(), 0), dtype="Int64"),
        "ballot_class": mv["ballot_class"].to_numpy(), "confidence": np.where(counted, np.round(rng.uniform(0.35, 0.98, len(mv)), 2), np.nan),
        "reasoning": None, "self_declared": mv["self_declared"].to_numpy(), "word_guess": guess,
        "eliminated": mv["eliminated"].to_numpy(), "note": None, "input_tokens": None, "output_tokens": None})
    moves.loc[~counted, "vote"] = pd.NA
    moves = contract_frame(moves, MoveRow, MOVE_COLUMNS)
    moves["word"] = words  # extra, as in players
    first = moves[moves["round"] == 1]
    players = first.drop(columns=["round", "eliminated", "note"]).copy()
    players["ballot_valid"] = players["ballot_class"].isin(["valid", "self_vote"]).to_numpy()
    # numpy's stubs reject None, which np.where takes as an object scalar
    players["ballot_error"] = np.where(  # type: ignore[call-overload]
        players["ballot_class"] == "unparseable", "unparseable", None).astype(object)
    players["description_raw"] = players["description"]
    er = elim_round[first["game_id"].map(pd.Series(np.arange(n), index=game_ids)).to_numpy(), first["seat"].to_numpy()]
    players["eliminated_round"] = pd.array(np.where(er > 0, er, 0), dtype="Int64")
    players.loc[er <= 0, "eliminated_round"] = pd.NA
    players = contract_frame(players.reset_index(drop=True), PlayerRow, PLAYER_COLUMNS)
    r1 = first.groupby("game_id", sort=False)
    n_valid = r1["vote"].count().reindex(game_ids).to_numpy()
    on_imp = first["vote"].to_numpy(dtype=float, na_value=-1) == design.imp_seat[g[first.index.to_numpy()]]
    votes_on_imp = pd.Series(on_imp, index=first["game_id"].to_numpy()).groupby(level=0).sum().reindex(game_ids).to_numpy()
    p_def = (winner == "impostor").astype(float)
    games = pd.DataFrame({
        "experiment_id": exp_of_game, "game_id": game_ids, "game_index": design.gi, "mode": design.mode_g,
        "difficulty": design.diff_g, "pair_id": design.pair[:, 0], "majority_word": design.pair[:, 1],
        "impostor_word": design.pair[:, 2], "impostor_seat": design.imp_seat,
        "impostor_model": names[design.imp_model], "impostor_speaking_position": speak_pos[np.arange(n), design.imp_seat],
        "winner": winner, "win_condition": cond, "seed": rng.integers(0, 2**62, size=n), "tie_rule": "default",
        "winner_live": winner, "p_imp_default": p_def, "p_imp_sym_candidate": p_def, "p_imp_sym_side": p_def,
        "n_valid_votes": n_valid, "n_invalid_ballots": 4 - n_valid, "n_invalid_descriptions": 0,
        "votes_on_impostor": votes_on_imp,
        # None in np.where: an object scalar numpy's stubs reject
        "team_assignment": np.where(np.isin(design.mode_g, TEAM_MODES),  # type: ignore[call-overload]
                                    team_strings(design.team_arr), None),
        "speaking_order": order_strings(order), "vote_mode": "free", "rounds_played": played, "max_rounds": rounds,
        "elimination_order": np.array([",".join(map(str, e)) for e in elim_seq], dtype=object), "private_notes": False})
    games = contract_frame(games, GameRow, GAME_COLUMNS)
    return games, players, moves, models_frame(design)
