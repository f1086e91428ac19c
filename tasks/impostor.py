"""The Impostor Game as an Inspect task: one sample per game (Appendix A).

    inspect eval tasks/impostor.py --model bot/embedding \\
        --model-role impostor=bot/random -T mode=cross_play -T n_games=40

Modes map onto model roles: ``homogeneous`` (``--model``), ``cross_play``
(roles ``impostor``/``majority``), ``team_blind``/``team_aware``/
``team_semi_aware`` (roles ``team_a``/``team_b``, two seats each).
"""

from __future__ import annotations

from typing import Optional

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import model_roles

from impostor.errors import ImpostorError
from impostor.records import DIFFICULTIES, MODES, TIE_RULES
from impostor.schedule import PairRef, build_schedule
from impostor.wordpairs import load_word_pairs, word_pairs_sha256
from scorers.winner import impostor_winner
from solvers.game import description_phase, voting_phase
from solvers.seating import check_roles


def _check(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ImpostorError(f"-T {name}={value!r} is not valid; use one of: {', '.join(allowed)}")


def game_samples(
    mode: str, difficulty: str, n_games: int, seed: int, word_pairs: Optional[str], experiment_id: Optional[str],
    first_game: int = 0,
) -> list[Sample]:
    """The experiment's schedule as Inspect samples (stable ids, full spec in metadata)."""
    tiers = load_word_pairs(word_pairs, require_full=word_pairs is None)
    if difficulty not in tiers:
        raise ImpostorError(f"{word_pairs}: has no tier {difficulty!r}; add it or pick -T difficulty=...")
    pairs = [PairRef(p.pair_id, p.majority, p.impostor) for p in tiers[difficulty]]
    samples = []
    for spec in build_schedule(mode, difficulty, pairs, n_games, seed)[first_game:]:
        md = spec.to_metadata() | {"seed": seed, "experiment_id": experiment_id}
        samples.append(Sample(
            id=spec.sample_id,
            input=f"Impostor game {spec.game_index} ({mode}, {difficulty}, pair {spec.pair.pair_id})",
            target=spec.pair.majority,
            metadata=md,
        ))
    return samples


@task
def impostor(
    mode: str = "homogeneous",
    difficulty: str = "easy",
    n_games: int = 8,
    seed: int = 0,
    tie_rule: str = "default",
    temperature: float = 0.7,
    max_tokens: int = 150,
    vote_temperature: Optional[float] = None,
    structured_votes: bool = False,
    constrained_votes: Optional[bool] = None,
    word_pairs: Optional[str] = None,
    experiment_id: Optional[str] = None,
    first_game: int = 0,
) -> Task:
    """Four-player Impostor Game.

    Args:
      mode: homogeneous, cross_play, team_blind, team_aware or team_semi_aware.
      difficulty: easy, medium, hard or expert (word-pair tier).
      n_games: games in this experiment (one sample each).
      seed: schedule seed; same seed and parameters give identical games.
      tie_rule: default (paper), sym_candidate or sym_side (Appendix F, played live).
      temperature: description temperature (A.3 default 0.7).
      max_tokens: per call (A.3 default 150).
      vote_temperature: defaults to max(0.3, temperature - 0.4).
      structured_votes: ask providers for JSON-schema structured ballots.
      constrained_votes: per-game schema with an enum of the other players;
        default on for local/ models only.
      word_pairs: path to a word-pair JSON (default configs/word_pairs.json).
      experiment_id: label for the tables; default derived from mode,
        difficulty, models and seed.
      first_game: skip games before this index (sharding a long experiment).
    """
    _check("mode", mode, MODES)
    _check("difficulty", difficulty, DIFFICULTIES)
    _check("tie_rule", tie_rule, TIE_RULES)
    if n_games < 1:
        raise ImpostorError(f"-T n_games={n_games} is not valid; play at least 1 game")
    if not 0.0 <= temperature <= 2.0:
        raise ImpostorError(f"-T temperature={temperature} is not valid; use a value in [0, 2]")
    roles = set(model_roles())
    if roles:  # `inspect eval --model-role ...`: refuse a contradictory mode before any game is played
        check_roles(mode, roles)
    # (no roles at all is checked when the first game seats its players: a Task built in Python
    # does not see the roles passed later to eval(), and Inspect's eval_set leaves its last
    # active model set in the caller's context, so an absent role cannot be judged here)
    samples = game_samples(mode, difficulty, n_games, seed, word_pairs, experiment_id, first_game)
    return Task(
        dataset=MemoryDataset(samples, name=f"impostor-{difficulty}"),
        solver=[
            description_phase(temperature=temperature, max_tokens=max_tokens),
            voting_phase(
                temperature=temperature, max_tokens=max_tokens, vote_temperature=vote_temperature,
                structured_votes=structured_votes, constrained_votes=constrained_votes,
            ),
        ],
        scorer=impostor_winner(tie_rule=tie_rule),
        metadata={
            "mode": mode, "difficulty": difficulty, "seed": seed, "tie_rule": tie_rule,
            "temperature": temperature, "max_tokens": max_tokens,
            "vote_temperature": vote_temperature if vote_temperature is not None else max(0.3, temperature - 0.4),
            "structured_votes": structured_votes, "constrained_votes": constrained_votes,
            "word_pairs_sha256": word_pairs_sha256(word_pairs), "experiment_id": experiment_id,
        },
    )
