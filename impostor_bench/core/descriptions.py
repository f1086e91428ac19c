"""Description rules (A.3): a description may not be empty, too long, or hold the word.

A readable description that breaks a rule is a *rule* problem: the player is re-prompted
once with the :class:`DescriptionViolation`, then the others see a placeholder.  Never raises.

Plain Python: no Inspect, MLflow or pandas import.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal, Optional, Union, get_args

from impostor_bench.core.glyphs import confusable_readings, has_visible_character, visible_text
from impostor_bench.core.model_text import MAX_ANSWER_CHARS, MAX_DESCRIPTION_CHARS


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

    The text is judged as a reader sees it (:mod:`impostor_bench.core.glyphs`): invisible characters
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
DescriptionErrorClass = Literal["leak", "too_long", "empty", "other"]
DESCRIPTION_ERROR_CLASSES: tuple[str, ...] = get_args(DescriptionErrorClass)
_EMPTY = "the description is empty"
_TOO_LONG = re.compile(r"the description is \d+ characters long(?: or more)?; the limit is \d+")
_LEAK = "the description contains your word"


@dataclass(frozen=True)
class DescriptionViolation:
    """Why a description breaks the rules: its class and the text the player is shown (and the
    tables keep as ``description_error``)."""

    kind: DescriptionErrorClass
    message: str

    def __str__(self) -> str:
        return self.message


def description_violation(text: str, word: str, max_chars: int = MAX_DESCRIPTION_CHARS) -> Optional[DescriptionViolation]:
    """Why a description breaks the rules of A.3, or None if it is valid."""
    stripped = visible_text(text or "").strip()
    if not has_visible_character(stripped):
        return DescriptionViolation("empty", _EMPTY)
    if len(stripped) > max_chars:
        more = " or more" if len(text) >= MAX_ANSWER_CHARS else ""  # cut by bounded_answer
        return DescriptionViolation("too_long",
                                    f"the description is {len(stripped)} characters long{more}; the limit is {max_chars}")
    leak = find_word_leak(stripped, word)
    if leak is not None:
        return DescriptionViolation("leak", f'{_LEAK} ("{leak}")')
    return None


def description_error_class(error: Union[None, str, DescriptionViolation]) -> DescriptionErrorClass:
    """The class of a violation, or of a recorded ``description_error`` text (the tables keep the
    text only: a table written by this code, an older version or another tool)."""
    if isinstance(error, DescriptionViolation):
        return error.kind
    text = error or ""
    if text.startswith(_LEAK):
        return "leak"
    if _TOO_LONG.match(text):
        return "too_long"
    return "empty" if text == _EMPTY else "other"
