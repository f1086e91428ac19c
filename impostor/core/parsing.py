"""Description enforcement and vote parsing: turning raw model text into game facts.

A response that cannot be read is a *parse* problem (re-prompted once, then
recorded as an invalid ballot); a readable response that breaks a rule is a
*rule* problem (a leaked word, an over-long text).  Neither ever raises.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from pydantic import BaseModel, Field

from impostor.core.glyphs import confusable_readings, has_visible_character, visible_text
from impostor.core.records import BallotClass, player_label, seat_of_label

MAX_DESCRIPTION_CHARS = 750
MAX_REASONING_CHARS = 2000
N_PLAYERS = 4
#: The most of one model answer that is kept: a provider that ignores ``max_tokens`` can
#: answer gigabytes (compressible, so a small log that unpacks to gigabytes).  30,000
#: characters (~8k tokens, 40 times the description limit) keeps every answer a model
#: gives within its token limits, a verbose ballot after pages of prose included.
MAX_ANSWER_CHARS = 40 * MAX_DESCRIPTION_CHARS

# ----------------------------------------------------------------- model text

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_model_text(text: str) -> str:
    """Model output made safe to record, log and show to the next player.

    Surrogate pairs are joined into the character they encode, lone surrogates
    (undecodable bytes) become U+FFFD, and control characters other than tab
    and newlines are dropped.  Lone surrogates would otherwise be written to the
    log as literal ``\\udXXX`` escapes and make strict APIs reject the next
    player's request.
    """
    if not text.isascii():
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return _CONTROL.sub("", text)


def bounded_answer(text: str) -> str:
    """A model answer as the game keeps it: cut to ``MAX_ANSWER_CHARS``, then cleaned
    (:func:`clean_model_text`); cutting first bounds the work of every later step."""
    return clean_model_text(text[:MAX_ANSWER_CHARS])


def one_line(text: str) -> str:
    """A description as other players see it: invisible characters dropped (as the rule
    checker drops them) and whitespace runs (newlines included) made one space, so a
    description cannot forge a "Player N: ..." line of its own."""
    return " ".join(visible_text(text).split())


# ----------------------------------------------------------------- descriptions


def word_forms(word: str) -> list[str]:
    """The word and its simple inflections (plural, past, gerund, agent, adverb)."""
    w = word.lower()
    forms = {w, w + "s", w + "es", w + "ed", w + "d", w + "ing", w + "er", w + "ers", w + "ly", w + "'s"}
    if w.endswith("e"):
        forms |= {w[:-1] + "ing", w[:-1] + "er"}
    if w.endswith("y") and len(w) > 2:
        forms |= {w[:-1] + "ies", w[:-1] + "ied", w[:-1] + "ier", w[:-1] + "ily"}
    if re.search(r"[^aeiou][aeiou][bdgklmnprt]$", w):  # run -> running, stop -> stopped
        forms |= {w + w[-1] + "ing", w + w[-1] + "ed", w + w[-1] + "er"}
    return sorted(forms, key=len, reverse=True)


# What may stand between the letters of a word spelled out: any run of non-letters
# ("c-a-t", "(c)(a)(t)", "c!a!t", '"c" "a" "t"', "c，a，t" once read) and markup tags
# ("c<b></b>a<b></b>t": tags are blanked before the spelled-out search, keeping positions).
# Case-sensitive (both cases are listed): a case-folded negated class costs sre ~4 ms to compile.
_SPELLING_SEPARATORS = r"(?-i:[^A-Za-z])+"
_TAGS = re.compile(r"</?[A-Za-z][^<>]{0,30}>")
_NON_LETTERS = re.compile(r"[^a-z]+")


def _blank_tags(text: str) -> str:
    """``text`` with every markup tag replaced by as many spaces (positions kept)."""
    return _TAGS.sub(lambda m: " " * len(m.group(0)), text) if "<" in text else text


@functools.lru_cache(maxsize=4096)
def _leak_patterns(word: str) -> tuple[re.Pattern[str], Optional[re.Pattern[str]]]:
    """Compiled (inflected forms, spelled out) patterns of a word; built once per word."""
    forms = "|".join(re.escape(f) for f in word_forms(word))
    whole = re.compile(rf"(?<![A-Za-z]){'(?:' + forms + ')'}(?![A-Za-z])", flags=re.IGNORECASE)
    spelled = None
    if len(word) >= 3:
        letters = _SPELLING_SEPARATORS.join(re.escape(c) for c in word)
        spelled = re.compile(rf"(?<![A-Za-z]){letters}(?![A-Za-z])", flags=re.IGNORECASE)
    return whole, spelled


def _cannot_leak(text: str, word: str) -> bool:
    """True when ASCII ``text`` cannot hold ``word`` in any form the patterns find.

    Compiling a word's two patterns takes ~0.6 ms (more than a game's other
    parsing), and most descriptions never contain the word: every inflected
    form starts with the word less its last letter, and a spelled-out word is
    the word once the separators between its letters are dropped.  Only for
    ASCII, where lower-casing is exactly the patterns' case-insensitivity.
    """
    if not (text.isascii() and word.isascii()):
        return False
    low, w = text.lower(), word.lower()
    if w[:-1] in low:
        return False
    if len(w) < 3:
        return True
    return w not in _NON_LETTERS.sub("", _TAGS.sub("", low) if "<" in low else low)


def _search_leak(text: str, word: str) -> Optional[tuple[int, int]]:
    """The span of the first match of ``word``'s patterns (whole inflected form, then spelled out)."""
    if _cannot_leak(text, word):
        return None
    whole, spelled = _leak_patterns(word)
    m = whole.search(text) or (spelled.search(_blank_tags(text)) if spelled is not None else None)
    return None if m is None else m.span()


def find_word_leak(text: str, word: str) -> Optional[str]:
    """The leaked form of ``word`` in ``text`` (whole word, any case, simple inflection,
    or spelled out letter by letter like "c-a-t"), as typed, or None.

    The text is judged as a reader sees it (:mod:`impostor.core.glyphs`): invisible characters
    are dropped, and non-ASCII letters are read as the ASCII letters they look like
    (fullwidth "ｃａｔ", Cyrillic "саt", "𝐜𝐚𝐭", "cát" all read "cat").  ASCII is read as typed.
    """
    text = visible_text(text)
    if text.isascii():
        span = _search_leak(text, word)
        return None if span is None else text[span[0] : span[1]]
    for reading, source in confusable_readings(text):
        span = _search_leak(reading, word)
        if span is not None:
            start, stop = span
            # up to the next read character, so combining marks after the last letter come along
            end = max(source[stop - 1] + 1, source[stop] if stop < len(source) else len(text))
            return text[source[start] : end]
    return None


# Classes of an invalid description, in the order the rules are checked; "other" is an
# error text this module never writes (data from another tool).
DESCRIPTION_ERROR_CLASSES = ("leak", "too_long", "empty", "other")
_EMPTY = "the description is empty"
_TOO_LONG = re.compile(r"the description is \d+ characters long(?: or more)?; the limit is \d+")
_LEAK = "the description contains your word"


def description_violation(text: str, word: str, max_chars: int = MAX_DESCRIPTION_CHARS) -> Optional[str]:
    """Why a description breaks the rules of A.3, or None if it is valid."""
    stripped = visible_text(text or "").strip()
    if not has_visible_character(stripped):
        return _EMPTY
    if len(stripped) > max_chars:
        more = " or more" if len(text) >= MAX_ANSWER_CHARS else ""  # cut by bounded_answer
        return f"the description is {len(stripped)} characters long{more}; the limit is {max_chars}"
    leak = find_word_leak(stripped, word)
    if leak is not None:
        return f'{_LEAK} ("{leak}")'
    return None


def description_error_class(error: Optional[str]) -> str:
    """The class (``DESCRIPTION_ERROR_CLASSES``) of a ``description_violation`` text."""
    text = error or ""
    if text.startswith(_LEAK):
        return "leak"
    if _TOO_LONG.match(text):
        return "too_long"
    return "empty" if text == _EMPTY else "other"


# ------------------------------------------------------------------------ votes


class VoteModel(BaseModel):
    """The ballot JSON of Prompt A.2 after coercion (ids are player numbers 1-4)."""

    suspected_impostor_id: Optional[int] = Field(default=None, ge=1, le=N_PLAYERS)
    confidence: Optional[float] = Field(default=None, ge=0.0, le=1.0)
    reasoning: Optional[str] = None
    self_declaration: bool = False
    word_guess: Optional[str] = None


@dataclass(frozen=True)
class ParsedVote:
    vote: Optional[int]  # seat 0-3, None when no countable vote
    confidence: Optional[float]
    reasoning: Optional[str]
    self_declared: bool
    word_guess: Optional[str]
    error: Optional[str]  # why the ballot (or its vote) is not countable
    retry: bool  # whether a re-prompt could fix it (a parse problem)
    ballot_class: BallotClass = "valid"  # impostor.core.records.BALLOT_CLASSES


_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "first": 1, "second": 2, "third": 3, "fourth": 4}
_TRUE = {"true", "yes", "y", "1", "t"}
_FALSE = {"false", "no", "n", "0", "f", "null", "none", ""}
_NULLS = {"", "null", "none", "n/a", "na"}


def _balanced_objects(text: str) -> list[str]:
    """Every top-level {...} span, respecting strings (so braces inside text do not count)."""
    spans, depth, start, in_str, quote, esc = [], 0, None, False, "", False
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == quote:
                in_str = False
        elif ch in "\"'" and depth > 0:
            in_str, quote = True, ch
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    return spans


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
    return None


def _find_ballot(obj: dict) -> Optional[dict]:
    """The dict holding suspected_impostor_id, also when nested one level ({"vote": {...}})."""
    if "suspected_impostor_id" in obj or "self_declaration" in obj:
        return obj
    for value in obj.values():
        if isinstance(value, dict) and ("suspected_impostor_id" in value or "self_declaration" in value):
            return value
    return None


def extract_ballot_object(text: str) -> tuple[Optional[dict], Optional[str]]:
    """The ballot dict in a response (code fences, prose around it, repairs), or an error."""
    if not text or not text.strip():
        return None, "the response is empty"
    body = re.sub(r"```(?:json|JSON)?", "", text)
    ballots: list[dict] = []
    try:
        for cand in _balanced_objects(body):
            obj = _load_object(cand)
            found = _find_ballot(obj) if obj is not None else None
            if found is not None and found not in ballots:
                ballots.append(found)
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


def parse_player_id(value: Any) -> Optional[int]:
    """A player number 1-4 from 3, "3", "Player 3", "p3", "three", "#3"; None if unreadable."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value if abs(value) < 10**_MAX_ID_DIGITS else None
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < 10**_MAX_ID_DIGITS else None
    if not isinstance(value, str) or len(value) > _MAX_ID_TEXT:
        return None
    s = value.strip().lower()
    s = re.sub(r"^(?:player|p|#|id)[\s_#:\-]*", "", s).strip().strip(".")
    if s in _NUMBER_WORDS:
        return _NUMBER_WORDS[s]
    return int(s) if re.fullmatch(rf"\d{{1,{_MAX_ID_DIGITS}}}", s) else None


def _is_number(value: Any) -> bool:
    """A number that :func:`parse_player_id` cannot make a player of (2.5, -1, "Player 0.5")."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return True
    if not isinstance(value, str):
        return False
    s = re.sub(r"^(?:player|p|#|id)[\s_#:\-]*", "", value.strip().lower()).strip()
    return re.fullmatch(r"[-+]?\d+(?:\.\d+)?", s) is not None


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
        return value != 0
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


def parse_vote(text: str, own_seat: int) -> ParsedVote:
    """Parse one voting response for the player in ``own_seat``; never raises."""
    obj, error = extract_ballot_object(text)
    if obj is None:
        return ParsedVote(None, None, None, False, None, error, True,
                          "missing" if error == "the response is empty" else "unparseable")
    declared = _coerce_bool(obj.get("self_declaration", False))
    reasoning = obj.get("reasoning")
    # JSON escapes can decode to lone surrogates ("\\udcff"): clean what we keep.
    reasoning = None if reasoning is None else clean_model_text(str(reasoning))[:MAX_REASONING_CHARS]
    guess = _coerce_guess(obj.get("word_guess"))
    confidence = _coerce_confidence(obj.get("confidence"))
    if declared is None:
        return ParsedVote(None, confidence, reasoning, False, guess,
                          f"self_declaration must be true or false, got {_shown(obj.get('self_declaration'))}", True,
                          "unparseable")
    raw_id = obj.get("suspected_impostor_id")
    label = parse_player_id(raw_id)
    if label is None:
        error = f"suspected_impostor_id {_shown(raw_id)} is not a player number"
        if declared and (raw_id is None or (isinstance(raw_id, str) and raw_id.strip().lower() in _NULLS)):
            # Legal, not re-prompted: the declaration names the voter itself as the impostor.
            return ParsedVote(None, confidence, reasoning, declared, guess, error, False, "self_vote")
        return ParsedVote(None, confidence, reasoning, declared, guess, error, True,
                          "names_no_player" if _is_number(raw_id) else "unparseable")
    if not 1 <= label <= N_PLAYERS:
        return ParsedVote(None, confidence, reasoning, declared, guess,
                          f"there is no Player {label} (players are 1-{N_PLAYERS})", True, "names_no_player")
    seat = seat_of_label(label)
    if seat == own_seat:
        # Legal, recorded, not counted and not re-prompted: a self-declaring impostor
        # naturally names itself (docs/rules.md, "Ballot classes").
        return ParsedVote(None, confidence, reasoning, declared, guess,
                          f"voted for itself (Player {player_label(own_seat)})", False, "self_vote")
    # The coerced ballot, validated once by its schema (id 1-4, confidence in [0, 1]).
    ballot = VoteModel(suspected_impostor_id=label, confidence=confidence, reasoning=reasoning,
                       self_declaration=declared, word_guess=guess)
    return ParsedVote(seat, ballot.confidence, ballot.reasoning, ballot.self_declaration, ballot.word_guess, None, False)


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
        others = [str(player_label(s)) for s in range(N_PLAYERS)
                  if s != own_seat and (candidates is None or s in candidates)]
        schema["properties"]["suspected_impostor_id"] = {"type": "string", "enum": others}
    if reasoning_max is not None:
        schema["properties"]["reasoning"]["maxLength"] = reasoning_max
    return schema
