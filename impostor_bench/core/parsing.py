"""Ballot parsing: a voting response turned into a vote, and the ballot's JSON schema.

A response that cannot be read is a *parse* problem (re-prompted once, then
recorded as an invalid ballot); never raises.  Model text bounds live in
``model_text``, description rules in ``descriptions`` (both re-exported here).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Optional, Sequence

from pydantic import BaseModel, Field

from impostor_bench.core.descriptions import (  # noqa: F401 - re-exported: the description rules
    DESCRIPTION_ERROR_CLASSES,
    DescriptionErrorClass,
    DescriptionViolation,
    description_error_class,
    description_violation,
    find_word_leak,
    one_line,
    word_forms,
)
from impostor_bench.core.model_text import (  # noqa: F401 - re-exported: model text bounds
    MAX_ANSWER_CHARS,
    MAX_DESCRIPTION_CHARS,
    bounded_answer,
    clean_model_text,
)
from impostor_bench.core.records import MAX_SEATS, N_SEATS, BallotClass, player_label, seat_of_label

MAX_REASONING_CHARS = 2000

# ------------------------------------------------------------------------ votes


class VoteModel(BaseModel):
    """The ballot JSON of Prompt A.2 after coercion (ids are player numbers 1-4)."""

    suspected_impostor_id: Optional[int] = Field(default=None, ge=1, le=MAX_SEATS)  # 1-4 in the paper's game
    confidence: Optional[float] = Field(default=None, ge=0.0, le=1.0)
    reasoning: Optional[str] = None
    self_declaration: bool = False
    word_guess: Optional[str] = None


@dataclass(frozen=True, kw_only=True)
class ParsedVote:
    vote: Optional[int]  # seat 0-3, None when no countable vote
    confidence: Optional[float]
    reasoning: Optional[str]
    self_declared: bool
    word_guess: Optional[str]
    error: Optional[str]  # why the ballot (or its vote) is not countable
    retry: bool  # whether a re-prompt could fix it (a parse problem)
    ballot_class: BallotClass = "valid"  # impostor_bench.core.records.BALLOT_CLASSES


_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "first": 1, "second": 2, "third": 3, "fourth": 4,
                 # the prompts' other languages (languages.LANGUAGES): a ballot may answer in them
                 "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "primero": 1, "segundo": 2, "tercero": 3, "cuarto": 4,
                 "eins": 1, "zwei": 2, "drei": 3, "vier": 4, "erster": 1, "zweiter": 2, "dritter": 3, "vierter": 4}
_TRUE = {"true", "yes", "y", "1", "t"}
_FALSE = {"false", "no", "n", "0", "f", "null", "none", ""}
_NULLS = {"", "null", "none", "n/a", "na"}


_QUOTE_OPENS_AFTER = "{[,:"  # a JSON (or Python-literal) string starts after one of these
_QUOTE_CLOSES_BEFORE = "}],:"  # ... and its closing single quote comes before one of these


def _scan_objects(text: str, quotes: str) -> list[str]:
    """Top-level {...} spans of ``text``, reading ``quotes`` as string delimiters.  A single
    quote is read as a string quote only where a JSON key or value can begin and end
    (``{'a': 'b'}``), so an apostrophe in prose (``{it's tricky}``) or inside a single-quoted
    value is plain text."""
    spans, depth, start, in_str, quote, esc = [], 0, 0, False, "", False
    last = ""  # the last non-space character outside strings
    n = len(text)
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == quote:
                if quote == "'":
                    j = i + 1
                    while j < n and text[j].isspace():
                        j += 1
                    if j < n and text[j] not in _QUOTE_CLOSES_BEFORE:
                        continue  # an apostrophe inside the value
                in_str = False
                last = ch
            continue
        if ch in quotes and depth > 0 and (ch == '"' or last in _QUOTE_OPENS_AFTER):
            in_str, quote = True, ch
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
        if not ch.isspace():
            last = ch
    return spans


def _balanced_objects(text: str) -> list[str]:
    """Every top-level {...} span, respecting strings (so braces inside text do not count)."""
    return _scan_objects(text, "\"'")


def _span_readings(text: str) -> Iterator[list[str]]:
    """The top-level spans of ``text`` read with both quote characters as string quotes, then
    (for the caller to try when the first reading holds no ballot) without the single quote and
    without the double quote: a quote that was prose, not a string (``{he said "hi}``,
    ``{ 'tis so}``), must not hide the ballot after it.  At most three scans."""
    seen: list[list[str]] = []
    for quotes in ("\"'", '"', "'"):
        spans = _scan_objects(text, quotes)
        if spans not in seen:
            seen.append(spans)
            yield spans


def _repair(candidate: str) -> str:
    s = re.sub(r",\s*([}\]])", r"\1", candidate)  # trailing commas
    if '"' not in s:
        s = s.replace("'", '"')  # single-quoted JSON
    else:
        s = re.sub(r"'([A-Za-z_]+)'\s*:", r'"\1":', s)
    s = re.sub(r"\bTrue\b", "true", s)
    s = re.sub(r"\bFalse\b", "false", s)
    return re.sub(r"\bNone\b", "null", s)


class _DuplicateKey(ValueError):
    pass


def _no_conflicting_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for k, v in pairs:
        if k in out and out[k] != v:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def _python_literal(candidate: str) -> Optional[dict]:
    """A dict written as Python prints it (``repr`` of a ballot: single-quoted strings, a double-
    quoted one where the text holds an apostrophe, ``True``/``None``), read by ``ast.literal_eval``
    (literals only, nothing is run); a key repeated with different values is refused as in JSON."""
    try:
        node = ast.parse(candidate.strip(), mode="eval").body
        if not isinstance(node, ast.Dict):
            return None
        obj = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(obj, dict) or len(obj) == len(node.keys):
        return obj if isinstance(obj, dict) else None
    _no_conflicting_duplicates([(ast.literal_eval(k), ast.literal_eval(v))  # type: ignore[arg-type]
                                for k, v in zip(node.keys, node.values)])
    return obj


def _load_object(candidate: str) -> Optional[dict]:
    for repair in (False, True):  # repaired only if the text as given does not parse
        try:
            obj = json.loads(_repair(candidate) if repair else candidate, object_pairs_hook=_no_conflicting_duplicates)
        except _DuplicateKey:
            raise
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict):
            return obj
    return _python_literal(candidate)


def _find_ballot(obj: dict) -> Optional[dict]:
    """The dict holding suspected_impostor_id, also when nested one level ({"vote": {...}})."""
    if "suspected_impostor_id" in obj or "self_declaration" in obj:
        return obj
    for value in obj.values():
        if isinstance(value, dict) and ("suspected_impostor_id" in value or "self_declaration" in value):
            return value
    return None


_FENCE = re.compile(r"```(?:json|JSON)?")


def _objects(spans: list[str]) -> Iterator[Optional[dict]]:
    """:func:`_load_object` of each span."""
    for cand in spans:
        yield _load_object(cand)


def _whole_object(body: str) -> Optional[dict]:
    """A body that is one JSON object as given (most ballots): loaded once, without the
    character-by-character scan (in valid JSON the braces and quotes are the ones the scan
    reads, so it is its own only span)."""
    whole = body.strip()
    if whole[:1] == "{" and whole[-1:] == "}":
        try:
            obj = json.loads(whole, object_pairs_hook=_no_conflicting_duplicates)
        except _DuplicateKey:
            raise
        except (ValueError, RecursionError):
            return None
        return obj if isinstance(obj, dict) else None
    return None


def _ballots(objects: Iterable[Optional[dict]]) -> list[dict]:
    ballots: list[dict] = []
    for obj in objects:
        found = _find_ballot(obj) if obj is not None else None
        if found is not None and found not in ballots:
            ballots.append(found)
    return ballots


def extract_ballot_object(text: str) -> tuple[Optional[dict], Optional[str]]:
    """The ballot dict in a response (code fences, prose around it, repairs), or an error."""
    if not text or not text.strip():
        return None, "the response is empty"
    body = _FENCE.sub("", text) if "```" in text else text
    ballots: list[dict] = []
    try:
        whole = _whole_object(body)
        if whole is not None:
            ballots = _ballots([whole])
        else:
            for spans in _span_readings(body):
                ballots = _ballots(_objects(spans))
                if ballots:
                    break
    except _DuplicateKey as dup:
        return None, f'the JSON repeats the key "{dup}" with different values'
    if not ballots:
        return None, "no JSON object with suspected_impostor_id was found"
    if len(ballots) > 1:
        return None, "the response holds several different JSON ballots"
    return ballots[0], None


# The longest id text read as a number.  Python refuses to convert a string of more than
# 4,300 digits (ValueError): lengths are bounded before any conversion, so a parser of
# model text is total over any input (a 5,000-digit id is a number naming no player).
_MAX_ID_TEXT = 40
_MAX_ID_DIGITS = 9
# "Player 3", "p_3", "#3", "Player-3", and as the Spanish and German prompts name players, "Jugador 3",
# "Spieler 3": a "-" right before the digits is a minus sign ("Player -2", "p-3" name no player),
# anywhere else a separator.
_ID_PREFIX = re.compile(r"^(?:player|jugadora?|spieler(?:in)?|p|#|id)(?:[\s_#:]|-(?!\d))*")
_ID_DIGITS = re.compile(rf"\d{{1,{_MAX_ID_DIGITS}}}")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


def parse_player_id(value: Any) -> Optional[int]:
    """A player number 1-4 from 3, "3", "Player 3", "p3", "three", "#3" (or "Jugador 3", "Spieler 3",
    "tres", "drei"); None if unreadable."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value if abs(value) < 10**_MAX_ID_DIGITS else None
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < 10**_MAX_ID_DIGITS else None
    if not isinstance(value, str) or len(value) > _MAX_ID_TEXT:
        return None
    s = _ID_PREFIX.sub("", value.strip().lower()).strip().strip(".")
    if s in _NUMBER_WORDS:
        return _NUMBER_WORDS[s]
    return int(s) if _ID_DIGITS.fullmatch(s) else None


def _is_number(value: Any) -> bool:
    """A number that :func:`parse_player_id` cannot make a player of (2.5, -1, "Player 0.5")."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return True
    if not isinstance(value, str):
        return False
    s = _ID_PREFIX.sub("", value.strip().lower()).strip()
    return _NUMBER.fullmatch(s) is not None


def _shown(value: Any, limit: int = _MAX_ID_TEXT) -> str:
    """``repr(value)`` cut to ``limit`` characters (an error text quotes model output)."""
    text = repr(value[:limit] + "…" if isinstance(value, str) and len(value) > limit else value)
    return text if len(text) <= limit + 8 else text[:limit] + "…"


def _coerce_bool(value: Any) -> Optional[bool]:
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    if isinstance(value, (int, float)):
        # Only 0 and 1 read as booleans (as the strings "0" and "1" do): NaN, 2 or -1 are
        # unreadable and re-prompted, never a declaration that decides the game.
        return True if value == 1 else False if value == 0 else None
    s = str(value).strip().lower()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    return None


def _coerce_confidence(value: Any) -> Optional[float]:
    if value is None or isinstance(value, bool):
        return None
    try:
        s = str(value).strip()
        conf = float(s[:-1]) / 100 if s.endswith("%") else float(s)
    except ValueError:
        return None
    return conf if 0.0 <= conf <= 1.0 else None


def _coerce_guess(value: Any) -> Optional[str]:
    if value is None or isinstance(value, (dict, list)):
        return None
    s = clean_model_text(str(value)).strip()
    return None if s.lower() in _NULLS else s[:100]


def parse_vote(text: str, own_seat: int, players: int = N_SEATS) -> ParsedVote:
    """Parse one voting response for the player in ``own_seat`` of a game of ``players`` (four in the
    paper's game); never raises."""
    obj, error = extract_ballot_object(text)
    if obj is None:
        return ParsedVote(vote=None, confidence=None, reasoning=None, self_declared=False, word_guess=None,
                          error=error, retry=True,
                          ballot_class="missing" if error == "the response is empty" else "unparseable")
    declared = _coerce_bool(obj.get("self_declaration", False))
    reasoning = obj.get("reasoning")
    # JSON escapes can decode to lone surrogates ("\\udcff"): clean what we keep.
    reasoning = None if reasoning is None else clean_model_text(str(reasoning))[:MAX_REASONING_CHARS]
    guess = _coerce_guess(obj.get("word_guess"))
    confidence = _coerce_confidence(obj.get("confidence"))
    if declared is None:
        return ParsedVote(vote=None, confidence=confidence, reasoning=reasoning, self_declared=False, word_guess=guess,
                          error=f"self_declaration must be true or false, got {_shown(obj.get('self_declaration'))}",
                          retry=True, ballot_class="unparseable")
    raw_id = obj.get("suspected_impostor_id")
    label = parse_player_id(raw_id)

    def unvoted(*, error: str, retry: bool, ballot_class: BallotClass) -> ParsedVote:
        """A ballot read in full that casts no countable vote."""
        return ParsedVote(vote=None, confidence=confidence, reasoning=reasoning, self_declared=bool(declared),
                          word_guess=guess, error=error, retry=retry, ballot_class=ballot_class)

    if label is None:
        error = f"suspected_impostor_id {_shown(raw_id)} is not a player number"
        if declared and (raw_id is None or (isinstance(raw_id, str) and raw_id.strip().lower() in _NULLS)):
            # Legal, not re-prompted: the declaration names the voter itself as the impostor.
            return unvoted(error=error, retry=False, ballot_class="self_vote")
        return unvoted(error=error, retry=True, ballot_class="names_no_player" if _is_number(raw_id) else "unparseable")
    if not 1 <= label <= players:
        return unvoted(error=f"there is no Player {label} (players are 1-{players})", retry=True,
                       ballot_class="names_no_player")
    seat = seat_of_label(label)
    if seat == own_seat:
        # Legal, recorded, not counted and not re-prompted: a self-declaring impostor
        # naturally names itself (docs/rules.md, "Ballot classes").
        return unvoted(error=f"voted for itself (Player {player_label(own_seat)})", retry=False,
                       ballot_class="self_vote")
    # The coerced ballot is what ``VoteModel`` validates (id 1-4 and confidence in [0, 1] were
    # checked above, the text fields are str or None, the declaration a bool), so it is not
    # validated again (a pydantic model per ballot on the hot path).
    return ParsedVote(vote=seat, confidence=confidence, reasoning=reasoning, self_declared=declared,
                      word_guess=guess, error=None, retry=False)


def vote_json_schema(own_seat: Optional[int] = None, *, reasoning_max: Optional[int] = None,
                     candidates: Optional[Sequence[int]] = None) -> dict:
    """JSON schema of a ballot.  With ``own_seat`` it is *constrained*: the id is an
    enum of the other players' numbers (of ``candidates``, the seats still in a
    multi-round game, when given) and reasoning is length-capped (needed by tiny
    local models to produce usable votes)."""
    schema: dict = {
        "type": "object",
        "properties": {
            "suspected_impostor_id": {"type": "string"},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "reasoning": {"type": "string"},
            "self_declaration": {"type": "boolean"},
            "word_guess": {"type": ["string", "null"]},
        },
        "required": ["suspected_impostor_id", "confidence", "reasoning", "self_declaration", "word_guess"],
        "additionalProperties": False,
    }
    if own_seat is not None:
        others = [str(player_label(s)) for s in range(N_SEATS)
                  if s != own_seat and (candidates is None or s in candidates)]
        schema["properties"]["suspected_impostor_id"] = {"type": "string", "enum": others}
    if reasoning_max is not None:
        schema["properties"]["reasoning"]["maxLength"] = reasoning_max
    return schema
