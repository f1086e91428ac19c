"""The game record schema: the single source of the data-contract columns.

``GameRow`` is one row of ``games.parquet``; ``PlayerRow`` one row of
``players.parquet`` (four per game).  The scorer stores both in the Inspect
score metadata, the exporter writes them to Parquet and ``analysis`` validates
its inputs against them.  Contract columns come first; extra columns follow.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

MODES = ("homogeneous", "cross_play", "team_blind", "team_aware", "team_semi_aware")
TEAM_MODES = ("team_blind", "team_aware", "team_semi_aware")
DIFFICULTIES = ("easy", "medium", "hard", "expert")
TIE_RULES = ("default", "sym_candidate", "sym_side")
WIN_CONDITIONS = (
    "majority_self_declared",
    "impostor_guess_correct",
    "impostor_guess_wrong",
    "conviction",
    "strict_plurality",
    "tie",
    "no_conviction",
)

Mode = Literal["homogeneous", "cross_play", "team_blind", "team_aware", "team_semi_aware"]
Difficulty = Literal["easy", "medium", "hard", "expert"]
Side = Literal["impostor", "majority"]


class GameRow(BaseModel):
    """One game (``games.parquet``)."""

    model_config = ConfigDict(extra="forbid")

    # --- data contract columns (do not rename or drop) ---
    experiment_id: str
    game_id: str
    game_index: int = Field(ge=0)
    mode: Mode
    difficulty: Difficulty
    pair_id: str
    majority_word: str
    impostor_word: str
    impostor_seat: int = Field(ge=0, le=3)
    impostor_model: str
    impostor_speaking_position: int = Field(ge=0, le=3)
    winner: Side  # under the default rule (A.1)
    win_condition: str
    # --- extras ---
    seed: int
    tie_rule: str = "default"
    winner_live: Side  # under the tie rule the game was played with
    tie_k: int = 0  # number of candidates tied at the top (0 = no top tie)
    impostor_in_tie: bool = False
    p_imp_default: float  # impostor-win probability under each rule
    p_imp_sym_candidate: float
    p_imp_sym_side: float
    n_valid_votes: int
    n_invalid_ballots: int
    n_invalid_descriptions: int
    votes_on_impostor: int
    team_assignment: Optional[str] = None  # e.g. "ABAB" (seat order) in team modes
    speaking_order: str  # seats in speaking order, e.g. "2031"
    vote_mode: str = "free"  # free | structured | constrained


class PlayerRow(BaseModel):
    """One seat of one game (``players.parquet``)."""

    model_config = ConfigDict(extra="forbid")

    # --- data contract columns (do not rename or drop) ---
    game_id: str
    seat: int = Field(ge=0, le=3)
    model: str
    role: Side
    team: Optional[Literal["A", "B"]] = None
    speaking_position: int = Field(ge=0, le=3)
    description: str
    description_valid: bool
    vote: Optional[int] = Field(default=None, ge=0, le=3)
    confidence: Optional[float] = Field(default=None, ge=0.0, le=1.0)
    self_declared: bool
    word_guess: Optional[str] = None
    # --- extras ---
    experiment_id: str
    word: str
    description_raw: str = ""
    description_attempts: int = 1
    description_error: Optional[str] = None
    ballot_valid: bool = True
    ballot_error: Optional[str] = None
    ballot_attempts: int = 1
    vote_raw: str = ""
    reasoning: Optional[str] = None


GAME_COLUMNS = list(GameRow.model_fields)
PLAYER_COLUMNS = list(PlayerRow.model_fields)
CONTRACT_GAME_COLUMNS = GAME_COLUMNS[: GAME_COLUMNS.index("win_condition") + 1]
CONTRACT_PLAYER_COLUMNS = PLAYER_COLUMNS[: PLAYER_COLUMNS.index("word_guess") + 1]


def player_label(seat: int) -> int:
    """The number shown to models: seat 0-3 is "Player 1"-"Player 4"."""
    return seat + 1


def seat_of_label(label: int) -> int:
    return label - 1
