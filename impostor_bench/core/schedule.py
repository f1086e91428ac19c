"""Deterministic game schedules (Appendix A.3): impostor seats, teams, pairs, speaking order.

Every random choice draws from a ``random.Random`` seeded by ``derive_seed`` of
the run seed and the game's coordinates, so the same seed and parameters give
identical games on any machine.  Two kinds of draws (docs/rules.md, "Schedules"):

- the *shared design* of a (difficulty, seed) cell -- the word pair of game *i* -- is
  the same for every mode and model assignment, so models are compared on paired games;
- the *per-experiment draws* -- impostor seat, teams (which model holds the impostor's
  team), speaking order and the game's generation seed -- are seeded by the experiment's
  identity (``impostor_bench.core.experiment.experiment_id``: mode, difficulty, model
  assignment, seed) and the game index, so seat, team order and speaking position are
  randomised within every experiment and independent of the word pair (what the seat
  and speaking-order tests rely on, Appendix B.3).  They are drawn once the
  experiment's models are known (the solver, at the start of a game).
"""

from __future__ import annotations

import functools
import hashlib
import random
from dataclasses import dataclass
from typing import Optional, Sequence

from impostor_bench.core.group import group_problem
from impostor_bench.core.modes import mode_spec
from impostor_bench.core.records import DIFFICULTIES, MODES, N_SEATS, Difficulty, Mode  # noqa: F401 - N_SEATS re-exported


#: Games one experiment may schedule: its schedule is built in memory (about 1 KB a game);
#: the paper plays 120.  The task and the sweep both refuse more.
MAX_GAMES = 100_000

#: The largest schedule seed: seeds are stored as 64-bit integers (Parquet ``seed`` columns,
#: MLflow, Inspect's sample metadata), so a larger one could be played but never tracked or
#: exported.  The task, the sweep config and ``impostor simulate`` refuse it where it enters.
MAX_SEED = 2**63 - 1


def seed_problem(seed: int) -> Optional[str]:
    """Why ``seed`` cannot be a schedule seed (with the fix), or None."""
    if 0 <= seed <= MAX_SEED:
        return None
    return f"seed {seed} is out of range; fix: use a whole number from 0 to 2^63-1 ({MAX_SEED})"


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from any parts; stable across processes and machines (not ``hash``)."""
    return int.from_bytes(_SHA256(":".join(map(str, parts)).encode()).digest()[:8], "big") >> 1


_SHA256 = hashlib.sha256  # ten seeds a game


def call_seed(game_seed: Optional[int], phase: str, seat: int, round_no: int = 1) -> int:
    """The seed of one model call (``phase`` describe/vote/note, 0-based ``seat``), passed to the
    provider and recorded on its trace; a later round's calls add the round (round 1: the paper's
    game's seeds)."""
    parts: tuple = (game_seed, phase, seat) if round_no == 1 else (game_seed, phase, seat, "round", round_no)
    return derive_seed(*parts) % 2**31


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
    mode: Mode
    difficulty: Difficulty
    pair: PairRef
    impostor_seat: Optional[int]  # per-experiment draw; None until drawn
    speaking_order: Optional[tuple[int, ...]]  # seats, first speaker first; None until drawn
    team_assignment: Optional[tuple[str, ...]]  # per seat "A"/"B" in team modes; None until drawn
    # group size (impostor_bench.core.group); the defaults are the paper's game
    n_players: int = N_SEATS
    n_impostors: int = 1
    impostor_seats: Optional[tuple[int, ...]] = None  # every impostor seat, sorted; None until drawn

    @property
    def impostors(self) -> tuple[int, ...]:
        """The impostor seats (one in the paper's game); () until drawn."""
        if self.impostor_seats is not None:
            return self.impostor_seats
        return () if self.impostor_seat is None else (self.impostor_seat,)

    def is_impostor(self, seat: int) -> bool:
        return seat in self.impostors

    @property
    def drawn(self) -> bool:
        """True once the per-experiment draws (seat, teams, speaking order, game seed) are made."""
        return self.impostor_seat is not None and self.speaking_order is not None and self.game_seed is not None

    def for_experiment(self, experiment: str) -> "GameSpec":
        """This game with the draws of the experiment whose identity is ``experiment``."""
        n, k = self.n_players, self.n_impostors
        if n == N_SEATS and k == 1:
            seat, teams = impostor_seat_and_teams(self.mode, experiment, self.game_index)
            seats: Optional[tuple[int, ...]] = None
        else:
            seats, teams = impostor_seats_of(self.mode, experiment, self.game_index, n, k), None
            seat = seats[0]
        return GameSpec(game_index=self.game_index, sample_id=self.sample_id, mode=self.mode,
                        difficulty=self.difficulty, pair=self.pair, impostor_seat=seat, team_assignment=teams,
                        speaking_order=speaking_order(experiment, self.game_index, n),
                        game_seed=game_seed(experiment, self.game_index), n_players=n, n_impostors=k,
                        impostor_seats=seats)  # not dataclasses.replace: ~3x its cost

    def to_metadata(self) -> dict:
        """Plain-JSON form stored in the Inspect sample metadata (the group size only when it is not
        the paper's, so the paper's games keep their metadata)."""
        md = {
            "game_index": self.game_index, "sample_id": self.sample_id, "game_seed": self.game_seed,
            "mode": self.mode, "difficulty": self.difficulty, "pair_id": self.pair.pair_id,
            "majority_word": self.pair.majority, "impostor_word": self.pair.impostor,
            "impostor_seat": self.impostor_seat,
            "speaking_order": None if self.speaking_order is None else list(self.speaking_order),
            "team_assignment": None if self.team_assignment is None else "".join(self.team_assignment),
            "schedule": SCHEDULE_VERSION,
        }
        if (self.n_players, self.n_impostors) != (N_SEATS, 1):
            md.update(players=self.n_players, impostors=self.n_impostors,
                      impostor_seats=None if self.impostor_seats is None else list(self.impostor_seats))
        return md

    @classmethod
    def from_metadata(cls, md: dict) -> "GameSpec":
        teams, order, gseed = md.get("team_assignment"), md.get("speaking_order"), md.get("game_seed")
        return cls(
            game_index=int(md["game_index"]), sample_id=md["sample_id"],
            game_seed=None if gseed is None else int(gseed),
            mode=md["mode"], difficulty=md["difficulty"],
            pair=PairRef(md["pair_id"], md["majority_word"], md["impostor_word"]),
            impostor_seat=None if md.get("impostor_seat") is None else int(md["impostor_seat"]),
            speaking_order=None if order is None else tuple(order),
            team_assignment=None if teams is None else tuple(teams),
            n_players=int(md.get("players", N_SEATS)), n_impostors=int(md.get("impostors", 1)),
            impostor_seats=None if md.get("impostor_seats") is None else tuple(md["impostor_seats"]),
        )

    def teammate(self, seat: int) -> Optional[int]:
        if self.team_assignment is None:
            return None
        team = self.team_assignment[seat]
        return next(s for s in range(len(self.team_assignment)) if s != seat and self.team_assignment[s] == team)


#: Version of the per-experiment draws, recorded in every game's metadata.  Games logged
#: before it (no ``schedule`` key) shared the impostor seat and teams of game *i* across
#: the experiments of a mode; the analysis detects that from the tables.
SCHEDULE_VERSION = 2


def impostor_seat_and_teams(mode: str, experiment: str, game_index: int) -> tuple[int, Optional[tuple[str, ...]]]:
    """The impostor seat (and teams in team modes) of one game of one experiment.

    Seats come in 4-game blocks, each a permutation of the four seats drawn from the
    experiment's identity, so every seat holds the impostor equally often (+-1) within an
    experiment and the seat is independent of the word-pair sequence (seeded by the run
    seed alone).  Team modes use 8-game blocks of two such 4-blocks: each seat hosts the
    impostor once on team A and once on team B in a block (which of its two games is
    drawn per seat), so each model holds the impostor's team in half the games, in a
    pattern drawn per experiment; the impostor's teammate is drawn per game.
    """
    if mode_spec(mode).teams:
        block, k = divmod(game_index, 2 * N_SEATS)
        seats, a_first, mates = _team_block(experiment, block)
        seat = seats[k]
        host = ("A" if a_first[seat] else "B") if k < N_SEATS else ("B" if a_first[seat] else "A")
        mate = mates[k]
        other = "B" if host == "A" else "A"
        return seat, tuple(host if t in (seat, mate) else other for t in range(N_SEATS))
    block, k = divmod(game_index, N_SEATS)
    return _seat_block(experiment, block)[k], None


# The games of a block share its draw: drawn once per block, not once per game (cached).
@functools.lru_cache(maxsize=1024)
def _seat_block(experiment: str, block: int, players: int = N_SEATS) -> tuple[int, ...]:
    """The impostor seats of one block of ``players`` games (four in the paper's game): a
    permutation of the seats."""
    seats = list(range(players))
    random.Random(derive_seed(experiment, "seat-block", block)).shuffle(seats)
    return tuple(seats)


@functools.lru_cache(maxsize=1024)
def _team_block(experiment: str, block: int) -> tuple[tuple[int, ...], tuple[bool, ...], tuple[int, ...]]:
    """One 8-game block of a team mode: its impostor seats, whether each seat is on team A in
    the first 4-block, and each game's drawn teammate."""
    rng = random.Random(derive_seed(experiment, "seat-block", block))
    first, second = list(range(N_SEATS)), list(range(N_SEATS))
    rng.shuffle(first)
    rng.shuffle(second)
    a_first = tuple(rng.random() < 0.5 for _ in range(N_SEATS))  # seat s on team A in the first 4-block?
    mates = tuple(rng.choice([t for t in range(N_SEATS) if t != s]) for s in first + second)
    return tuple(first + second), a_first, mates


def impostor_seats_of(mode: str, experiment: str, game_index: int, players: int, impostors: int) -> tuple[int, ...]:
    """The impostor seats (sorted) of one game of a game of ``players`` seats and ``impostors``
    impostors.  Seats come in blocks of ``players`` games, each a permutation of the seats drawn
    from the experiment's identity (the paper's 4-game block when there are four): game j of a
    block gives the impostor role to the permutation's seats j .. j+K-1 (cyclically), so every
    seat is an impostor exactly K times a block and the seat is independent of the word pairs.
    One impostor in four seats is :func:`impostor_seat_and_teams`'s draw, seat for seat."""
    if mode_spec(mode).teams and (players, impostors) != (N_SEATS, 1):
        raise ValueError(TEAM_GROUP_PROBLEM.format(mode=mode))
    block, j = divmod(game_index, players)
    perm = _seat_block(experiment, block, players)
    return tuple(sorted(perm[(j + i) % players] for i in range(impostors)))


#: Team modes pair two models two-versus-two (A.3): defined for the paper's group only.
TEAM_GROUP_PROBLEM = ("mode={mode} is defined for the four-player, one-impostor game (two teams of two); "
                      "fix: use players=4 and impostors=1 with team modes, or mode=homogeneous or cross_play")


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


def speaking_order(experiment: str, game_index: int, players: int = N_SEATS) -> tuple[int, ...]:
    """Uniformly shuffled speaking order of the seats (four in the paper's game) for one game of one
    experiment (``experiment``: its identity, which includes the run seed)."""
    seats = list(range(players))
    random.Random(derive_seed(experiment, "order", game_index)).shuffle(seats)
    return tuple(seats)


def game_seed(experiment: str, game_index: int) -> int:
    """The seed of one game's generation and tie-break draws, per experiment."""
    return derive_seed(experiment, "game", game_index)


def sample_id(game_index: int, pair_id: str, seed: int) -> str:
    """Stable per game of a (difficulty, seed) cell: the game index, the pair and the seed
    (the impostor seat is an experiment's own draw, so it is not part of the id)."""
    return f"g{game_index:05d}-{pair_id}-s{seed}"


def build_schedule(
    mode: Mode, difficulty: Difficulty, pairs: Sequence[PairRef], n_games: int, seed: int, experiment: Optional[str] = None,
    *, players: int = N_SEATS, impostors: int = 1,
) -> list[GameSpec]:
    """The deterministic list of games of one experiment: the shared design (word pairs, the same
    for every group size), plus the per-experiment draws when the experiment's identity is given
    (else drawn later)."""
    problem = group_problem(players, impostors)
    if problem:
        raise ValueError(problem)
    if (players, impostors) != (N_SEATS, 1) and mode_spec(mode).teams:
        raise ValueError(TEAM_GROUP_PROBLEM.format(mode=mode))
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"difficulty must be one of {', '.join(DIFFICULTIES)}; got {difficulty!r}")
    if n_games < 1:
        raise ValueError(f"n_games must be at least 1; got {n_games}")
    games = []
    for i, pair in enumerate(pair_order(pairs, n_games, seed, difficulty)):
        spec = GameSpec(
            game_index=i, sample_id=sample_id(i, pair.pair_id, seed), game_seed=None, mode=mode,
            difficulty=difficulty, pair=pair, impostor_seat=None, speaking_order=None, team_assignment=None,
            n_players=players, n_impostors=impostors,
        )
        games.append(spec if experiment is None else spec.for_experiment(experiment))
    return games
