"""Deterministic game schedules (Appendix A.3): impostor seats, teams, pairs, speaking order.

Every random choice draws from a ``random.Random`` seeded by ``derive_seed`` of
the run seed and the game's coordinates, so the same seed and parameters give
identical games on any machine.  Two kinds of draws (docs/rules.md, "Schedules"):

- the *shared design* of a (mode, difficulty, seed) cell -- word pair and impostor
  seat (and teams) of game *i* -- is the same for every model assignment, so models
  are compared on paired games;
- the *per-experiment draws* -- speaking order and the game's generation seed -- are
  seeded by the experiment's identity (``impostor.core.experiment.experiment_id``: mode,
  difficulty, model assignment, seed) and the game index, so every game of every
  experiment gets an independent uniform speaking order (the randomisation the
  speaking-order ITT relies on, Appendix B.3).  They are drawn once the experiment's
  models are known (the solver, at the start of a game).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, replace
from typing import Optional, Sequence

from impostor.core.records import DIFFICULTIES, MODES, TEAM_MODES

N_SEATS = 4
#: Games one experiment may schedule: its schedule is built in memory (about 1 KB a game);
#: the paper plays 120.  The task and the sweep both refuse more.
MAX_GAMES = 100_000


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from any parts; stable across processes and machines (not ``hash``)."""
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


@dataclass(frozen=True)
class PairRef:
    pair_id: str
    majority: str
    impostor: str


@dataclass(frozen=True)
class GameSpec:
    game_index: int
    sample_id: str
    game_seed: Optional[int]  # per-experiment draw; None until drawn (``for_experiment``)
    mode: str
    difficulty: str
    pair: PairRef
    impostor_seat: int
    speaking_order: Optional[tuple[int, ...]]  # seats, first speaker first; None until drawn
    team_assignment: Optional[tuple[str, ...]]  # per seat "A"/"B" in team modes

    @property
    def drawn(self) -> bool:
        """True once the per-experiment draws (speaking order, game seed) are made."""
        return self.speaking_order is not None and self.game_seed is not None

    def for_experiment(self, experiment: str) -> "GameSpec":
        """This game with the draws of the experiment whose identity is ``experiment``."""
        return replace(self, speaking_order=speaking_order(experiment, self.game_index),
                       game_seed=game_seed(experiment, self.game_index))

    def to_metadata(self) -> dict:
        """Plain-JSON form stored in the Inspect sample metadata."""
        return {
            "game_index": self.game_index, "sample_id": self.sample_id, "game_seed": self.game_seed,
            "mode": self.mode, "difficulty": self.difficulty, "pair_id": self.pair.pair_id,
            "majority_word": self.pair.majority, "impostor_word": self.pair.impostor,
            "impostor_seat": self.impostor_seat,
            "speaking_order": None if self.speaking_order is None else list(self.speaking_order),
            "team_assignment": None if self.team_assignment is None else "".join(self.team_assignment),
        }

    @classmethod
    def from_metadata(cls, md: dict) -> "GameSpec":
        teams, order, gseed = md.get("team_assignment"), md.get("speaking_order"), md.get("game_seed")
        return cls(
            game_index=int(md["game_index"]), sample_id=md["sample_id"],
            game_seed=None if gseed is None else int(gseed),
            mode=md["mode"], difficulty=md["difficulty"],
            pair=PairRef(md["pair_id"], md["majority_word"], md["impostor_word"]),
            impostor_seat=int(md["impostor_seat"]), speaking_order=None if order is None else tuple(order),
            team_assignment=None if teams is None else tuple(teams),
        )

    def teammate(self, seat: int) -> Optional[int]:
        if self.team_assignment is None:
            return None
        team = self.team_assignment[seat]
        return next(s for s in range(N_SEATS) if s != seat and self.team_assignment[s] == team)


def impostor_seats(mode: str, n_games: int, seed: int) -> list[tuple[int, Optional[tuple[str, ...]]]]:
    """(impostor seat, team assignment) for games 0..n_games-1 of a mode."""
    out: list[tuple[int, Optional[tuple[str, ...]]]] = []
    if mode == "cross_play":
        # 4-game blocks enumerating every impostor seat once, order shuffled per block.
        for block in range((n_games + 3) // 4):
            seats = list(range(N_SEATS))
            random.Random(derive_seed(seed, mode, "block", block)).shuffle(seats)
            out += [(s, None) for s in seats]
    elif mode in TEAM_MODES:
        # 8-game blocks: 4 games with the impostor on team A (all four seats, shuffled),
        # then 4 with the impostor on team B; the impostor's teammate is drawn per game.
        for block in range((n_games + 7) // 8):
            rng = random.Random(derive_seed(seed, mode, "block", block))
            for host in ("A", "B"):
                seats = list(range(N_SEATS))
                rng.shuffle(seats)
                for s in seats:
                    mate = rng.choice([t for t in range(N_SEATS) if t != s])
                    other = "B" if host == "A" else "A"
                    teams = tuple(host if t in (s, mate) else other for t in range(N_SEATS))
                    out.append((s, teams))
    else:
        # Default rotation: the impostor seat cycles 0 -> 3.
        out = [(i % N_SEATS, None) for i in range(n_games)]
    return out[:n_games]


def pair_order(pairs: Sequence[PairRef], n_games: int, seed: int, difficulty: str) -> list[PairRef]:
    """Pairs for games 0..n-1: a seeded permutation of the tier, repeated with a new permutation
    each cycle, so every pair is used once before any is reused."""
    if not pairs:
        raise ValueError(f"no word pairs for difficulty {difficulty!r}")
    out: list[PairRef] = []
    cycle = 0
    while len(out) < n_games:
        perm = list(pairs)
        random.Random(derive_seed(seed, difficulty, "pairs", cycle)).shuffle(perm)
        out += perm
        cycle += 1
    return out[:n_games]


def speaking_order(experiment: str, game_index: int) -> tuple[int, ...]:
    """Uniformly shuffled speaking order of the four seats for one game of one experiment
    (``experiment``: its identity, which includes the run seed)."""
    seats = list(range(N_SEATS))
    random.Random(derive_seed(experiment, "order", game_index)).shuffle(seats)
    return tuple(seats)


def game_seed(experiment: str, game_index: int) -> int:
    """The seed of one game's generation and tie-break draws, per experiment."""
    return derive_seed(experiment, "game", game_index)


def sample_id(game_index: int, pair_id: str, impostor_seat: int, seed: int) -> str:
    """Stable per game: derived from the seed, the game index, the pair and the impostor seat."""
    return f"g{game_index:05d}-{pair_id}-imp{impostor_seat}-s{seed}"


def build_schedule(
    mode: str, difficulty: str, pairs: Sequence[PairRef], n_games: int, seed: int, experiment: Optional[str] = None,
) -> list[GameSpec]:
    """The deterministic list of games of one experiment: the shared design, plus the
    per-experiment draws when the experiment's identity is given (else drawn later)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"difficulty must be one of {', '.join(DIFFICULTIES)}; got {difficulty!r}")
    if n_games < 1:
        raise ValueError(f"n_games must be at least 1; got {n_games}")
    seats = impostor_seats(mode, n_games, seed)
    chosen = pair_order(pairs, n_games, seed, difficulty)
    games = []
    for i in range(n_games):
        seat, teams = seats[i]
        pair = chosen[i]
        spec = GameSpec(
            game_index=i, sample_id=sample_id(i, pair.pair_id, seat, seed), game_seed=None, mode=mode,
            difficulty=difficulty, pair=pair, impostor_seat=seat, speaking_order=None, team_assignment=teams,
        )
        games.append(spec if experiment is None else spec.for_experiment(experiment))
    return games
