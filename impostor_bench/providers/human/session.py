"""One human player's moves: what is asked, what was answered, what ran out of time.

Shared by the page server (a thread) and the Inspect provider (the eval's event loop),
so every access holds one lock.  No Inspect here: the state is testable alone.

A *move* is one model call of the human's seat.  Its key is the call's messages, so
Inspect re-sending the same call (an attempt timeout, a retry) finds the move it
already asked, with its clock still running, and the page keeps showing it.  The
engine's re-prompt after a broken rule is a new call (one more message) and so a new
move, carrying the engine's reason.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

from pydantic import BaseModel, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError

from impostor_bench.core import prompts
from impostor_bench.core.parsing import MAX_DESCRIPTION_CHARS
from impostor_bench.core.rounds import NOTE_MAX_CHARS
from impostor_bench.providers.prompt_parse import GameView, message_text

#: What the page offers for confidence (percent); "" leaves it out of the ballot.
CONFIDENCE_CHOICES = ("", "10", "20", "30", "40", "50", "60", "70", "80", "90", "100")


def messages_key(pairs: list[tuple[str, str]]) -> str:
    """A stable key of a call's (role, text) messages."""
    return hashlib.sha256(json.dumps(pairs, ensure_ascii=False).encode()).hexdigest()[:24]


@dataclass
class Move:
    id: str
    key: str
    base: str  # key of the first two messages (system + game prompt): shared by a re-prompt
    view: GameView
    asked_at: float  # clock() when first asked
    deadline: Optional[float]
    answer: Optional[str] = None
    waiters: int = 0


@dataclass
class HumanSession:
    """The moves of one participant; ``timeout`` seconds per move (None: no limit)."""

    participant: str
    timeout: Optional[float] = None
    clock: Callable[[], float] = time.monotonic
    token: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    moves: dict[str, Move] = field(default_factory=dict)  # key -> pending move
    history: list[dict[str, Any]] = field(default_factory=list)  # every closed move, oldest first
    expired_bases: set[str] = field(default_factory=set)
    finished: Optional[str] = None  # the outcome shown once the game is over
    finished_seen: threading.Event = field(default_factory=threading.Event)  # the page has shown it
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # ------------------------------------------------------------ provider side

    def ask(self, messages: list[Any], view: GameView) -> Move:
        """The move for this call (a repeat of a pending call gets the same move)."""
        pairs = [message_text(m) for m in messages]
        key, base = messages_key(pairs), messages_key(pairs[:2])
        with self._lock:
            move = self.moves.get(key)
            if move is None:
                now = self.clock()
                move = Move(id=secrets.token_hex(6), key=key, base=base, view=view, asked_at=now,
                            deadline=None if self.timeout is None else now + self.timeout)
                self.moves[key] = move
            move.waiters += 1
            return move

    def expired(self, move: Move) -> bool:
        """Whether an earlier call of this game prompt ran out of time (its re-prompt is not asked)."""
        with self._lock:
            return move.base in self.expired_bases

    def poll(self, move: Move) -> tuple[Optional[str], bool]:
        """(answer text, timed out) for a pending move; closes it when either is set."""
        with self._lock:
            if move.answer is None and not (move.deadline is not None and self.clock() >= move.deadline):
                return None, False
            timed_out = move.answer is None
            if timed_out:
                self.expired_bases.add(move.base)
            self._close(move, move.answer or "", "timed out" if timed_out else "answered")
            return move.answer or "", timed_out

    def skip(self, move: Move) -> None:
        """Close a re-prompt of a move that ran out of time without asking it (recorded as missing)."""
        with self._lock:
            self._close(move, "", "timed out")

    def release(self, move: Move) -> None:
        """A call stops waiting (answered, timed out or cancelled by Inspect)."""
        with self._lock:
            move.waiters -= 1

    def _close(self, move: Move, text: str, status: str) -> None:
        if self.moves.pop(move.key, None) is not None:
            self.history.append({"phase": move.view.phase, "player": move.view.player, "status": status,
                                 "text": text, "seconds": round(self.clock() - move.asked_at, 1)})

    def finish(self, outcome: str) -> None:
        """Show ``outcome`` on the page (the game is over)."""
        with self._lock:
            self.finished = outcome

    # ---------------------------------------------------------------- page side

    def submit(self, move_id: str, fields: dict[str, Any]) -> Optional[str]:
        """Record the page's answer to a move as the completion text; an error text or None.

        The first answer to a move is the move (a second one, from another tab or a double
        click, is refused, never silently replacing it); fields of the wrong type raise
        :class:`FieldError` and record nothing."""
        with self._lock:
            move = next((m for m in self.moves.values() if m.id == move_id), None)
            if move is None:
                return "this move is closed (answered or out of time); the page shows the current one"
            if move.answer is not None:
                return "this move is already answered (another answer came first); the page shows the next one"
            move.answer = completion_text(move.view, fields)
            return None

    def state(self, outcome_shown: bool = False) -> dict[str, Any]:
        """What the page shows: the oldest move someone waits on, the history, the outcome
        (``outcome_shown``: the page says it has shown the outcome, so the game may end)."""
        with self._lock:
            live = sorted((m for m in self.moves.values() if m.waiters > 0 and m.answer is None),
                          key=lambda m: m.asked_at)
            now = self.clock()
            move = live[0] if live else None
            if outcome_shown and self.finished is not None:
                self.finished_seen.set()
            return {
                "participant": self.participant,
                "move": None if move is None else move_view(move, now),
                "waiting_moves": max(0, len(live) - 1),
                "history": list(self.history),
                "finished": self.finished,
            }


def move_view(move: Move, now: float) -> dict[str, Any]:
    """One move as the page renders it."""
    v = move.view
    vote, note = v.phase == "vote", v.phase == "note"
    team = None
    if v.team_mode == "team_aware" and v.teammate is not None:
        team = (prompts.VOTING_TEAM_AWARE if vote else prompts.DESCRIPTION_TEAM_AWARE).format(
            teammate_position=v.teammate)
    elif v.team_mode == "team_semi_aware":
        team = prompts.VOTING_TEAM_SEMI_AWARE if vote else prompts.DESCRIPTION_TEAM_SEMI_AWARE
    rules = prompts.VOTING_INTRO if vote else prompts.NOTE_SYSTEM if note else prompts.DESCRIPTION_INTRO
    return {
        "id": move.id, "phase": v.phase, "player": v.player, "word": v.word,
        "descriptions": [[n, text] for n, text in v.descriptions],
        "candidates": v.others if vote else [],
        "round": v.round, "round_context": v.round_context,  # a multi-round game's record ("" in the paper's)
        "first_speaker": v.first_speaker, "rules": rules, "team": team,
        "attempt": v.attempt, "retry_reason": v.retry_reason,
        "max_chars": NOTE_MAX_CHARS if note else (v.max_chars or MAX_DESCRIPTION_CHARS),
        "confidence_choices": list(CONFIDENCE_CHOICES),
        "seconds_left": None if move.deadline is None else max(0, round(move.deadline - now)),
    }


class FieldError(ValueError):
    """The page sent a field of the wrong type (one line: the field, what it got, the fix)."""


class _DescriptionFields(BaseModel):
    """A description's (or private note's) form: the text as typed."""

    description: StrictStr = ""


class _BallotFields(BaseModel):
    """A ballot's form.  Strict types: the page sends ``self_declaration`` as a JSON boolean, so a
    string (``"false"``, which Python's ``bool`` reads as true) is refused, not guessed at."""

    suspect: Union[StrictStr, StrictInt, None] = None
    self_declaration: StrictBool = False
    word_guess: Optional[StrictStr] = None
    confidence: Union[StrictStr, StrictInt, StrictFloat, None] = None
    reasoning: Optional[StrictStr] = None


def _fields(view: GameView, fields: dict[str, Any]) -> Any:
    """The page's fields validated for the move's phase, or :class:`FieldError`."""
    model = _DescriptionFields if view.phase in ("description", "note") else _BallotFields
    try:
        return model.model_validate(fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        name = ".".join(str(part) for part in err["loc"][:1])
        got = repr(err.get("input"))
        got = got if len(got) <= 40 else got[:40] + "…"
        raise FieldError(f"field '{name}': {err['msg'].lower()}, got {got}; fix: send it as the page does "
                         f"(self_declaration a JSON true/false, the texts as strings)") from None


def completion_text(view: GameView, fields: dict[str, Any]) -> str:
    """The page's fields as the text a model would have answered.

    A description is sent as typed; a ballot as the JSON of the vote prompt.  Only the fields'
    types are checked here (:class:`FieldError`): the engine applies its rules (leak, length,
    ballot parsing) as to a model.
    """
    form = _fields(view, fields)
    if isinstance(form, _DescriptionFields):  # a private note is typed in the description box
        return form.description
    suspect = str(form.suspect if form.suspect is not None else "").strip()
    confidence = str(form.confidence if form.confidence is not None else "").strip()
    guess = (form.word_guess or "").strip()
    ballot = {
        "suspected_impostor_id": suspect or None,
        "confidence": f"{confidence}%" if confidence else None,
        "reasoning": form.reasoning or "",
        "self_declaration": form.self_declaration,
        "word_guess": guess or None,
    }
    return json.dumps(ballot, ensure_ascii=False)
