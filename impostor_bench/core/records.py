"""The game record schema: the single source of the data-contract columns.

``GameRow`` is one row of ``games.parquet``; ``PlayerRow`` one row of
``players.parquet`` (four per game).  The scorer stores both in the Inspect
score metadata, the exporter writes them to Parquet and ``analysis`` validates
its inputs against them.  Contract columns come first; extra columns follow.
"""

from __future__ import annotations

import re
from typing import Any, Literal, Optional, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from impostor_bench.core.group import MAX_PLAYERS, MIN_PLAYERS, PAPER_IMPOSTORS, PAPER_PLAYERS, max_impostors
from impostor_bench.core.descriptions import DescriptionErrorClass, description_error_class

#: Players (seats 0-3) in the paper's game (A.1); ``-T players`` seats up to MAX_SEATS
#: (``impostor_bench.core.group``), the bounds of every seat column below.
N_SEATS = PAPER_PLAYERS
MAX_SEATS = MAX_PLAYERS

Mode = Literal["homogeneous", "cross_play", "team_blind", "team_aware", "team_semi_aware"]
Difficulty = Literal["easy", "medium", "hard", "expert"]
Side = Literal["impostor", "majority"]
Team = Literal["A", "B"]
TieRule = Literal["default", "sym_candidate", "sym_side"]
WinCondition = Literal[
    "majority_self_declared",
    "impostor_guess_correct",
    "impostor_guess_wrong",
    "conviction",
    "strict_plurality",
    "tie",
    "no_conviction",
    # games of more than one round (``-T rounds=N``): the majority wins by voting the
    # impostor out; the impostor wins when two players remain or the rounds run out
    "eliminated",
    "two_left",
    "rounds_exhausted",
]

MODES: tuple[str, ...] = get_args(Mode)
TEAM_MODES = ("team_blind", "team_aware", "team_semi_aware")  # each mode's facts: impostor_bench.core.modes
DIFFICULTIES: tuple[str, ...] = get_args(Difficulty)
TIE_RULES: tuple[str, ...] = get_args(TieRule)
WIN_CONDITIONS: tuple[str, ...] = get_args(WinCondition)
#: The side each win condition makes the winner (the recorded ``winner``, under the default
#: tie rule: a top tie is an impostor win whatever a symmetric rule made ``winner_live``).
WINNER_OF: dict[str, Side] = {
    "majority_self_declared": "majority",
    "impostor_guess_correct": "impostor",
    "impostor_guess_wrong": "majority",
    "conviction": "majority",
    "strict_plurality": "majority",
    "tie": "impostor",
    "no_conviction": "impostor",
    "eliminated": "majority",
    "two_left": "impostor",
    "rounds_exhausted": "impostor",
}
SIDES: tuple[str, ...] = get_args(Side)

# Ballot outcome classes (docs/rules.md, "Ballot classes"): the one definition.  A
# *legal* ballot breaks no rule of A.1-A.3; only the invalid classes are invalid ballots.
BallotClass = Literal["valid", "self_vote", "unparseable", "names_no_player", "missing"]
BALLOT_CLASSES: tuple[str, ...] = get_args(BallotClass)
LEGAL_BALLOT_CLASSES = ("valid", "self_vote")
INVALID_BALLOT_CLASSES = ("unparseable", "names_no_player", "missing")

#: Marks a column added after logs and the golden games were recorded (``Field(..., json_schema_extra=NEWER)``):
#: a log's record (:func:`row_dict`) leaves it out while it has its default, as ``GameOptions`` leaves
#: a newer option out of task arguments, so the paper's game keeps its records byte for byte; the
#: exporter validates every record with its row model, which fills the default back in.
NEWER: dict[str, Any] = {"omit_default": True}


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
    impostor_seat: int = Field(ge=0, le=MAX_SEATS - 1)  # the lowest impostor seat when there are several
    impostor_model: str
    impostor_speaking_position: int = Field(ge=0, le=MAX_SEATS - 1)  # of the seat impostor_seat
    winner: Side  # under the default rule (A.1)
    win_condition: WinCondition
    # --- extras ---
    seed: int
    tie_rule: TieRule = "default"
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
    vote_mode: str = "free"  # free | structured | constrained | json_object (a fallback) | mixed
    # the word-pair file the experiment drew from (task metadata; filled in by the exporter)
    word_pairs_file: Optional[str] = None  # absolute path when the run was made
    word_pairs_sha256: Optional[str] = None  # hex SHA-256 of its bytes
    # multi-round games; the defaults are the paper's one-round game
    rounds_played: int = Field(default=1, ge=1)
    max_rounds: int = Field(default=1, ge=1)  # the task option -T rounds
    elimination_order: str = ""  # eliminated seats in order, comma-separated ("" when none)
    private_notes: bool = False  # the task option -T private_notes
    length_budget: Optional[int] = Field(default=None, ge=1, json_schema_extra=NEWER)  # -T length_budget (None: the 750-character rule only)
    truncate_to: Optional[int] = Field(default=None, ge=1, json_schema_extra=NEWER)  # -T truncate_to: what the others saw was cut to it (None: whole)
    # group size (-T players, -T impostors); the defaults are the paper's game
    n_players: int = Field(default=PAPER_PLAYERS, ge=MIN_PLAYERS, le=MAX_PLAYERS, json_schema_extra=NEWER)
    n_impostors: int = Field(default=PAPER_IMPOSTORS, ge=1, le=max_impostors(MAX_PLAYERS), json_schema_extra=NEWER)
    # every impostor seat, sorted and comma-separated ("1,4"), in a game of several; None: impostor_seat alone
    impostor_seats: Optional[str] = Field(default=None, pattern=r"^[0-9](,[0-9])*$", json_schema_extra=NEWER)
    # -T language: the game's prompts, word-pair file and word rules ("en", the paper's, in older exports)
    language: str = Field(default="en", pattern=r"^[a-z]{2}$", json_schema_extra=NEWER)

    @model_validator(mode="after")
    def _seats_inside_the_game(self) -> "GameRow":
        seats = impostor_seat_list(self.impostor_seat, self.impostor_seats)
        if max(seats) >= self.n_players or self.impostor_speaking_position >= self.n_players:
            raise ValueError(f"impostor seat(s) {seats} or speaking position {self.impostor_speaking_position} "
                             f"outside a game of {self.n_players} players")
        if len(seats) != self.n_impostors or seats[0] != self.impostor_seat:
            raise ValueError(f"impostor_seats {self.impostor_seats!r} disagrees with n_impostors={self.n_impostors} "
                             f"and impostor_seat={self.impostor_seat}")
        return self


class PlayerRow(BaseModel):
    """One seat of one game (``players.parquet``)."""

    model_config = ConfigDict(extra="forbid")

    # --- data contract columns (do not rename or drop) ---
    game_id: str
    seat: int = Field(ge=0, le=MAX_SEATS - 1)
    model: str
    role: Side
    team: Optional[Team] = None
    speaking_position: int = Field(ge=0, le=MAX_SEATS - 1)
    description: str
    description_valid: bool
    vote: Optional[int] = Field(default=None, ge=0, le=MAX_SEATS - 1)
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
    ballot_class: BallotClass = "valid"  # derived for records written before it existed
    temperature: Optional[float] = None  # description temperature this seat used (None: not recorded)
    top_p: Optional[float] = Field(default=None, json_schema_extra=NEWER)  # nucleus sampling this seat's calls used (None: not sent, the provider's own)
    vote_temperature: Optional[float] = None  # ballot temperature this seat used (impostor_bench.core.generation)
    vote_mode: Optional[str] = None  # ballot form this seat used: free | structured | constrained | json_object
    vote_fallback: Optional[str] = None  # "<asked>-><used>" when the server refused the asked form
    input_tokens: Optional[int] = Field(default=None, ge=0)  # tokens sent by this seat's calls in the game (None: not recorded)
    output_tokens: Optional[int] = Field(default=None, ge=0)  # tokens generated by this seat's calls
    cost_usd: Optional[float] = Field(default=None, ge=0)  # set by the exporter from the model's price; None = unknown, never 0
    served_model: Optional[str] = None  # the model id(s) the provider's replies named (ModelOutput.model), comma-joined; None: not named
    eliminated_round: Optional[int] = Field(default=None, ge=1)  # the round at whose end this seat was voted out
    description_class: Optional[DescriptionErrorClass] = None  # class of an invalid description; derived for older records
    # judge pass (impostor_bench.core.judging, `impostor annotate`): None until a judge labelled the game
    judge_strategy: Optional[str] = None  # the coding scheme's strategy label (configs/judge_scheme.json)
    judge_trust: Optional[bool] = None  # the ballot reasoning states trust in a named player (M.1)
    judge_coord_intent: Optional[bool] = None  # description or reasoning signals intent to coordinate (M.8)
    judge_model: Optional[str] = None  # the judge model that produced the three labels
    # -T truncate_to: the valid description as written, before the cut that ``description`` (what the
    # others saw) shows; None when the game did not truncate or the description was invalid
    description_full: Optional[str] = Field(default=None, json_schema_extra=NEWER)

    @model_validator(mode="before")
    @classmethod
    def _ballot_class_of_old_records(cls, data: Any) -> Any:
        """Records written before ``ballot_class`` existed get it derived, and a
        ``ballot_valid`` that agrees with it (older records flagged self-votes invalid)."""
        if isinstance(data, dict) and data.get("ballot_class") is None:
            data = dict(data)
            data["ballot_class"] = derive_ballot_class(
                data.get("vote"), data.get("seat"), data.get("ballot_error"), bool(data.get("self_declared")),
                data.get("ballot_valid"), data.get("ballot_attempts"))
            data["ballot_valid"] = data["ballot_class"] in LEGAL_BALLOT_CLASSES
        return _with_description_class(data)

    @model_validator(mode="after")
    def _ballot_valid_agrees(self) -> "PlayerRow":
        if self.ballot_valid != (self.ballot_class in LEGAL_BALLOT_CLASSES):
            raise ValueError(f"ballot_valid={self.ballot_valid} disagrees with ballot_class={self.ballot_class!r}")
        return self


GAME_COLUMNS = list(GameRow.model_fields)
PLAYER_COLUMNS = list(PlayerRow.model_fields)
CONTRACT_GAME_COLUMNS = GAME_COLUMNS[: GAME_COLUMNS.index("win_condition") + 1]
CONTRACT_PLAYER_COLUMNS = PLAYER_COLUMNS[: PLAYER_COLUMNS.index("word_guess") + 1]

# The files of an export directory and of a run's MLflow ``tables/`` artifacts
# (docs/data-contract.md): the one definition the exporter, tracking and analysis use.
GAMES_FILE = "games.parquet"
PLAYERS_FILE = "players.parquet"
MODELS_FILE = "models.csv"
ERRORS_FILE = "errors.csv"


def _newer_defaults(model: type[BaseModel]) -> dict[str, Any]:
    return {k: f.default for k, f in model.model_fields.items()
            if isinstance(f.json_schema_extra, dict) and f.json_schema_extra.get("omit_default")}


def row_dict(row: BaseModel) -> dict[str, Any]:
    """``row.model_dump()`` of a contract row less its newer columns at their defaults (``NEWER``), read
    from its validated fields without the serializer: the rows are flat (every field a string,
    number, bool or None, in field order; tests/test_game_summary.py); five rows a game, in the scorer."""
    out = dict(row.__dict__)
    for k, default in _NEWER_DEFAULTS.get(type(row), {}).items():
        if out[k] == default and type(out[k]) is type(default):
            del out[k]
    return out


_NEWER_DEFAULTS: dict[type[BaseModel], dict[str, Any]] = {row: _newer_defaults(row) for row in (GameRow, PlayerRow)}


def impostor_seat_list(impostor_seat: int, impostor_seats: Optional[str]) -> list[int]:
    """Every impostor seat of a game from its ``impostor_seat`` and ``impostor_seats`` columns."""
    return [impostor_seat] if impostor_seats is None else [int(s) for s in impostor_seats.split(",")]


def player_label(seat: int) -> int:
    """The number shown to models: seat 0-3 is "Player 1"-"Player 4"."""
    return seat + 1


def seat_of_label(label: int) -> int:
    return label - 1


# ------------------------------------------------------------------ ballot classes of older records

# ``parse_vote``'s error texts (impostor_bench/core/parsing.py), by the class each one means.
_NULL_ID = re.compile(r"suspected_impostor_id (?:None|''|'null'|'none'|'n/a'|'na') is not a player number", re.I)
_NUMBER_ID = re.compile(
    r"suspected_impostor_id '?(?:player|p|#|id)?[\s_#:\-]*[-+]?\d+(?:\.\d+)?…?'? is not a player number", re.I)


def classify_ballot_error(error: str, self_declared: bool) -> BallotClass:
    """The class of a ballot from the error text ``parse_vote`` recorded for it."""
    if error.startswith("voted for itself"):
        return "self_vote"
    if error == "the response is empty":
        return "missing"
    if error.startswith("there is no Player") or _NUMBER_ID.match(error):
        return "names_no_player"
    if self_declared and _NULL_ID.match(error):
        return "self_vote"  # a self-declaration that names no one points at the voter itself
    return "unparseable"


def _with_description_class(data: Any) -> Any:
    """A record with an invalid description and no ``description_class`` (written before the field
    existed, or by another tool) gets it from the recorded ``description_error`` text; a valid one has none."""
    if not isinstance(data, dict) or data.get("description_class") is not None:
        return data
    valid = data.get("description_valid")
    if valid is None or valid:
        return data
    return {**data, "description_class": description_error_class(data.get("description_error"))}


def derive_ballot_class(vote: Optional[int], seat: Optional[int], ballot_error: Optional[str],
                        self_declared: bool, ballot_valid: Optional[bool] = None,
                        ballot_attempts: Optional[int] = None) -> BallotClass:
    """The ballot class of a record that has none (written before the column existed, or
    by another tool), from what it does have; see docs/rules.md "Ballot classes"."""
    if ballot_error:
        return classify_ballot_error(str(ballot_error), self_declared)
    if vote is not None and ballot_valid is not False:
        return "self_vote" if seat is not None and vote == seat else "valid"
    if vote is None and ballot_valid is not False and ballot_attempts != 0 and self_declared:
        return "self_vote"  # no error on record, only a declaration: the voter named itself
    return "missing" if ballot_attempts == 0 or ballot_valid is not False else "unparseable"


# ------------------------------------------------------------------ multi-round games

MOVES_FILE = "moves.parquet"


class MoveRow(BaseModel):
    """One seat of one round of one game (``moves.parquet``): every seat still in the game at the
    round's start.  A one-round game has four rows (round 1) with the seats' ``players`` values."""

    model_config = ConfigDict(extra="forbid")

    game_id: str
    experiment_id: str
    round: int = Field(ge=1)
    seat: int = Field(ge=0, le=MAX_SEATS - 1)
    model: str
    role: Side
    team: Optional[Team] = None
    speaking_position: int = Field(ge=0, le=MAX_SEATS - 1)  # position within this round's order (remaining seats)
    description: str
    description_valid: bool
    description_error: Optional[str] = None
    vote: Optional[int] = Field(default=None, ge=0, le=MAX_SEATS - 1)  # null when not a counted vote
    ballot_class: str = "valid"  # BALLOT_CLASSES, plus the engine's class of a vote on an eliminated seat
    confidence: Optional[float] = Field(default=None, ge=0.0, le=1.0)
    reasoning: Optional[str] = None
    self_declared: bool = False
    word_guess: Optional[str] = None
    eliminated: bool = False  # this seat was voted out at the end of this round
    note: Optional[str] = None  # the private note written after this round
    input_tokens: Optional[int] = Field(default=None, ge=0)  # this seat's calls this round
    output_tokens: Optional[int] = Field(default=None, ge=0)
    description_class: Optional[DescriptionErrorClass] = None  # class of an invalid description; derived for older records

    @model_validator(mode="before")
    @classmethod
    def _description_class_of_old_records(cls, data: Any) -> Any:
        return _with_description_class(data)


MOVE_COLUMNS = list(MoveRow.model_fields)

#: The class of a later round's vote for a seat already eliminated (invalid; ``moves.parquet`` only:
#: the players table holds first-round ballots, when no seat is out yet).
ELIMINATED_SEAT = "eliminated_seat"
MOVE_BALLOT_CLASSES = BALLOT_CLASSES + (ELIMINATED_SEAT,)


def moves_of_players(players: list[dict]) -> list[dict]:
    """The moves rows of a one-round game, from its players rows (its only round; a NaN read
    back from a table is a missing value)."""
    rows = []
    for p in players:
        kw = {k: p[k] for k in MOVE_COLUMNS if k in p}
        for k, v in kw.items():
            if isinstance(v, float) and v != v:
                kw[k] = None
        rows.append(MoveRow(**kw, round=1, eliminated=p.get("eliminated_round") == 1).model_dump())
    return rows


_MOVE_DEFAULTS = {k: f.default for k, f in MoveRow.model_fields.items()}


def moves_of_player_rows(players: list[dict]) -> list[dict]:
    """``moves_of_players`` of rows that are ``PlayerRow.model_dump()`` output, validated: each
    value already has the type and bounds its MoveRow field asks, so the rows are not validated
    a second time (a sixth of the tables of a tracked run's end)."""
    rows = []
    for p in players:
        row = {k: p[k] if k in p else _MOVE_DEFAULTS[k] for k in MOVE_COLUMNS}
        row["round"], row["eliminated"] = 1, p.get("eliminated_round") == 1
        rows.append(row)
    return rows
