"""Description rules (A.3): a description may not be empty, too long, or hold the word.

A readable description that breaks a rule is a *rule* problem: the player is re-prompted
once with the :class:`DescriptionViolation`, then the others see a placeholder.  Never raises.

Plain Python: no Inspect, MLflow or pandas import.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from typing import Literal, Optional, Union, get_args

from impostor_bench.core import inflections
from impostor_bench.core.glyphs import confusable_readings, has_visible_character, visible_length, visible_text
from impostor_bench.core.languages import DEFAULT_LANGUAGE
from impostor_bench.core.model_text import MAX_ANSWER_CHARS, MAX_DESCRIPTION_CHARS


def one_line(text: str) -> str:
    """A description as other players see it: invisible characters dropped (as the rule
    checker drops them) and whitespace runs (newlines included) made one space, so a
    description cannot forge a "Player N: ..." line of its own."""
    return " ".join(visible_text(text).split())


# ----------------------------------------------------------------- descriptions


# A consonant-vowel-consonant ending doubles its consonant before a vowel suffix
# (run -> running, big -> biggest, quiz -> quizzes; "qu" counts as a consonant).
_DOUBLES = re.compile(r"(?:qu|[^aeiou])[aeiou][bdgklmnprtz]$")


def word_forms(word: str) -> list[str]:
    """The word and its regular inflections (docs/rules.md, "Inflections"): plural and
    3rd person (-s, -es, -ies, -ves), past (-ed, -d, -ied), gerund (-ing, -ying), comparative
    and superlative (-er, -est, -ier, -iest), agent (-er, -ers), adverb (-ly, -ily) and
    possessive, with consonant doubling (big -> biggest), e-dropping (large -> largest),
    ie -> y (lie -> lying) and c -> ck (panic -> panicked)."""
    w = word.lower()
    forms = set(plural_forms(w)) | {w + "ed", w + "d", w + "ing", w + "er", w + "ers", w + "est", w + "ly", w + "'s"}
    if w.endswith("e"):  # large -> larger, largest; bake -> baking, bakers
        forms |= {w[:-1] + suffix for suffix in ("ing", "er", "ers", "est")}
    if w.endswith("ie"):  # lie -> lying
        forms.add(w[:-2] + "ying")
    if w.endswith("y") and len(w) > 2:  # happy -> happier, happiest
        forms |= {w[:-1] + suffix for suffix in ("ied", "ier", "iers", "iest", "ily")}
    if w.endswith("c"):  # panic -> panicked, panicking; picnic -> picnickers
        forms |= {w + "k" + suffix for suffix in ("ed", "ing", "er", "ers")}
    if _DOUBLES.search(w):  # run -> running, stop -> stopped, big -> biggest
        forms |= {w + w[-1] + suffix for suffix in ("ing", "ed", "er", "ers", "est")}
    return sorted(forms, key=len, reverse=True)


def plural_forms(word: str) -> list[str]:
    """The word and its regular plurals (and 3rd persons): -s, -es, y -> -ies (city -> cities),
    f -> -ves (wolf -> wolves), ife -> -ives (knife -> knives, not safe -> saves), a doubled
    s or z (quiz -> quizzes).  A subset of :func:`word_forms`: what a word guess may add to
    the word (docs/rules.md, "Guess matching")."""
    w = word.lower()
    forms = {w, w + "s", w + "es"}
    if w.endswith("y") and len(w) > 2:
        forms.add(w[:-1] + "ies")
    if w.endswith("f"):
        forms.add(w[:-1] + "ves")
    if w.endswith("ife"):
        forms.add(w[:-2] + "ves")
    if _DOUBLES.search(w) and w[-1] in "sz":
        forms.add(w + w[-1] + "es")
    return sorted(forms, key=len, reverse=True)


# Where a word starts and ends: no letter on that side, or a camelCase join (a lower-case
# letter then a capital, "myCatIsFluffy"; or capitals then a capitalised word, "MYCat",
# "CATIs").  Case-sensitive inside the case-insensitive patterns.  The end is part of the
# pattern; the start is checked on each candidate (:func:`_starts_word`): a look-behind
# alternation in front of the forms made every search ~4x slower (sre then tries it at
# every position instead of scanning for the forms' first letters).
_JOIN = r"(?-i:(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]))"
_WORD_END = rf"(?:(?![A-Za-z])|{_JOIN})"
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _starts_word(text: str, i: int) -> bool:
    """Whether a word may start at ``text[i]`` (the start boundary of ``_WORD_END``'s rule)."""
    before = text[i - 1] if i else ""
    if before not in _LOWER and before not in _UPPER:
        return True
    if before in _LOWER:
        return text[i] in _UPPER
    return text[i] in _UPPER and text[i + 1 : i + 2] in _LOWER


def _first_word_match(pattern: re.Pattern[str], text: str) -> Optional[re.Match[str]]:
    """The first match of ``pattern`` that starts a word (:func:`_starts_word`)."""
    m = pattern.search(text)
    while m is not None and not _starts_word(text, m.start()):
        m = pattern.search(text, m.start() + 1)
    return m
# A reversed word ("elcycib") counts from this length on: three-letter reversals are
# mostly ordinary words ("god", "tac toe", "gum", "pan").
MIN_REVERSED_LEN = 4

# What may stand between the letters of a word spelled out: any run of non-letters
# ("c-a-t", "(c)(a)(t)", "c!a!t", '"c" "a" "t"', "c，a，t" once read) and markup tags
# ("c<b></b>a<b></b>t": tags are blanked before the search, keeping positions).
# Case-sensitive (both cases are listed): a case-folded negated class costs sre ~4 ms to compile.
_SPELLING_SEPARATORS = r"(?-i:[^A-Za-z])+"
# What may split a word into pieces of any length ("rock-et", "p-iano", "tom<b></b>ato"):
# non-letters other than whitespace (pieces split by spaces are ordinary words: "sand wich")
# and the apostrophe (a contraction is another word: "we'll" is not "well").
_PIECE_SEPARATORS = r"(?-i:[^A-Za-z\s'])*"
# A markup tag of any length ("<b>", "<span class='highlight-important-text'>"): a letter (or
# "!", "?": "<!doctype>", "<?xml?>") after "<", then anything but angle brackets.  Linear: each
# try stops at the next "<" or ">".  HTML comments ("<!-- x -->") are found by `_markup_spans`.
_TAGS = re.compile(r"</?[A-Za-z!?][^<>]*>")
_TAG_FILL = "\x00"  # a blanked tag: neither a letter nor a space (it splits pieces)
# Lower-case ASCII text less everything but its letters (str.translate's ASCII fast path:
# ~5x cheaper than a regex substitution, and the pre-filter runs it on most descriptions).
_DROP_NON_LETTERS = {c: None for c in range(128) if not 97 <= c <= 122}


def _markup_spans(text: str) -> list[tuple[int, int]]:
    """The (start, stop) of every HTML comment and markup tag in ``text``: what a page shows
    nothing of, so a word split by one (``tom<span class='x'>ato</span>``, ``s<!--x-->heep``)
    reads whole.  Comments first (they may hold "<" and ">"), found with ``str.find`` so an
    unclosed ``<!--`` costs one scan, not one per opening."""
    spans: list[tuple[int, int]] = []
    start = text.find("<!--")
    while start >= 0:
        stop = text.find("-->", start + 4)
        if stop < 0:
            break
        spans.append((start, stop + 3))
        start = text.find("<!--", stop + 3)
    at = 0
    for start, stop in [*spans, (len(text), len(text))]:
        spans.extend(m.span() for m in _TAGS.finditer(text, at, start))
        at = stop
    return spans


def _blank_tags(text: str, fill: str = _TAG_FILL) -> str:
    """``text`` with every markup tag and comment replaced by ``fill`` once per character
    (positions kept), or dropped when ``fill`` is empty."""
    if "<" not in text:
        return text
    if "<!--" not in text:  # tags only (the usual case): one substitution
        return _TAGS.sub(lambda m: fill * len(m.group(0)), text) if fill else _TAGS.sub("", text)
    out, at = [], 0
    for start, stop in sorted(_markup_spans(text)):
        out += [text[at:start], fill * (stop - start)]
        at = stop
    out.append(text[at:])
    return "".join(out)


def _forms(word: str, language: str) -> tuple[str, tuple[str, ...]]:
    """(the word, its regular forms) as the leak rule matches them: English, the word lower-cased
    and :func:`word_forms`; another language, read as text is read (accents dropped, ``ß`` as
    ``ss``) with that language's forms (``inflections.forms``)."""
    if language == DEFAULT_LANGUAGE:
        return word.lower(), tuple(word_forms(word))
    return inflections.reading(word), inflections.forms(word, language)


def _forms_tree(word: str, separators: str, language: str = DEFAULT_LANGUAGE) -> str:
    """Every inflected form with ``separators`` allowed between its letters, as one pattern over
    the forms' letter tree (common starts once: "cat" then "s", "tt" then "ing"/"er"...): split
    into pieces ("rock-ets" for rockets, "ba-king" for baking) or spelled out ("w o l v e s" for
    wolf, "h a p p i e s t").  An alternation of whole forms made compiling a word's patterns
    ~2.3x slower (6.7 -> 15.4 ms a word on the shipped words).  The possessive is left out: an
    apostrophe is not a piece separator, and spelled out it is the word then "s"."""
    tree: dict = {}
    for form in _forms(word, language)[1]:
        if "'" in form:
            continue
        node = tree
        for c in form:
            node = node.setdefault(c, {})
        node[""] = {}  # a form ends here

    def pattern(node: dict) -> str:
        """The letters that may follow ``node``, each with what may follow it."""
        branches = []
        for c, child in node.items():
            if not c:
                continue
            more = separators + pattern(child) if set(child) != {""} else ""
            branches.append(re.escape(c) + (f"(?:{more})?" if more and "" in child else more))
        return branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"

    return pattern(tree)


@functools.lru_cache(maxsize=4096)
def _leak_patterns(word: str, language: str = DEFAULT_LANGUAGE
                   ) -> tuple[re.Pattern[str], Optional[re.Pattern[str]], Optional[re.Pattern[str]]]:
    """Compiled (inflected forms, reversed, spelled out or split) patterns of a word; built
    once per word.  The reversed word is a pattern of its own: in the forms' alternation its
    other first letter would stop sre scanning for the forms' common prefix (~5x slower)."""
    w, word_forms_ = _forms(word, language)
    forms = "|".join(re.escape(f) for f in word_forms_)
    whole = re.compile(rf"(?:{forms}){_WORD_END}", flags=re.IGNORECASE)  # + _starts_word
    backwards = None
    if len(w) >= MIN_REVERSED_LEN and w[::-1] != w:
        backwards = re.compile(rf"{re.escape(w[::-1])}{_WORD_END}", flags=re.IGNORECASE)
    spelled = None
    if len(w) >= 3:
        letters = _forms_tree(word, _SPELLING_SEPARATORS, language)
        pieces = _forms_tree(word, _PIECE_SEPARATORS, language)
        spelled = re.compile(rf"(?<![A-Za-z])(?:{letters}|{pieces})(?![A-Za-z])", flags=re.IGNORECASE)
    return whole, backwards, spelled


@functools.lru_cache(maxsize=4096)
def _must_contain(word: str, language: str = DEFAULT_LANGUAGE) -> Optional[tuple[str, str, str]]:
    """What a lower-cased ASCII text holds if a form of ASCII ``word`` is in it: the common
    start of every inflected form, the reversed word ("" when reversal is not checked), and
    that common start's letters (for the spelled-out and split checks: a form split into
    pieces is the form, so its start, once the separators are dropped); None for a
    non-ASCII word (as the language's rule reads it)."""
    w, word_forms_ = _forms(word, language)
    if not w.isascii():
        return None
    stem = os.path.commonprefix(list(word_forms_))
    return (stem, (w[::-1] if len(w) >= MIN_REVERSED_LEN and w[::-1] != w else ""),
            stem.translate(_DROP_NON_LETTERS))


def _cannot_leak(text: str, word: str, language: str = DEFAULT_LANGUAGE) -> bool:
    """True when ASCII ``text`` cannot hold ``word`` in any form the patterns find.

    Compiling a word's patterns takes ~0.6 ms (more than a game's other
    parsing), and most descriptions never contain the word: every inflected
    form starts with the same stem (the word, or the word less its last letter
    or two), a reversed word is itself, and a word spelled out or split into
    pieces is the word once the separators between its letters are dropped.
    Only for ASCII, where lower-casing is exactly the patterns' case-insensitivity.
    """
    needles = _must_contain(word, language)
    if needles is None or not text.isascii():
        return False
    stem, reversed_word, stem_letters = needles
    low = text.lower()
    if stem in low or (reversed_word and reversed_word in low):
        return False
    if len(_forms(word, language)[0]) < 3:
        return True
    return stem_letters not in _blank_tags(low, "").translate(_DROP_NON_LETTERS)


def _patterns_search(text: str, word: str, language: str = DEFAULT_LANGUAGE) -> Optional[tuple[int, int]]:
    """The span of the first match of ``word``'s patterns (whole inflected form or reversed,
    then spelled out or split), without the pre-filter."""
    whole, backwards, spelled = _leak_patterns(word, language)
    m = (_first_word_match(whole, text) or (_first_word_match(backwards, text) if backwards is not None else None)
         or (spelled.search(_blank_tags(text)) if spelled is not None else None))
    return None if m is None else m.span()


def _search_leak(text: str, word: str, language: str = DEFAULT_LANGUAGE) -> Optional[tuple[int, int]]:
    """:func:`_patterns_search` where the pre-filter cannot rule the word out."""
    return None if _cannot_leak(text, word, language) else _patterns_search(text, word, language)


def find_word_leak(text: str, word: str, language: str = DEFAULT_LANGUAGE) -> Optional[str]:
    """The leaked form of ``word`` in ``text`` (whole word, any case, simple inflection,
    or spelled out letter by letter like "c-a-t"), as typed, or None.

    The text is judged as a reader sees it (:mod:`impostor_bench.core.glyphs`): invisible characters
    are dropped, and non-ASCII letters are read as the ASCII letters they look like
    (fullwidth "ｃａｔ", Cyrillic "саt", "𝐜𝐚𝐭", "cát" all read "cat").  ASCII is read as typed.
    ``language``: whose regular inflections are the word (English's, or ``inflections.forms``).
    """
    text = visible_text(text)
    if text.isascii():
        span = _search_leak(text, word, language)
        return None if span is None else text[span[0] : span[1]]
    for reading, source in confusable_readings(text):
        span = _search_leak(reading, word, language)
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


def description_violation(text: str, word: str, max_chars: int = MAX_DESCRIPTION_CHARS,
                          language: str = DEFAULT_LANGUAGE) -> Optional[DescriptionViolation]:
    """Why a description breaks the rules of A.3, or None if it is valid (``language``: whose
    inflections of the word leak it)."""
    stripped = visible_text(text or "").strip()
    if not has_visible_character(stripped):
        return DescriptionViolation("empty", _EMPTY)
    # what a reader counts (docs/rules.md, "The length"); never more than the code points, so
    # counted only when those pass the limit
    length = visible_length(stripped) if len(stripped) > max_chars else 0
    if length > max_chars:
        more = " or more" if len(text) >= MAX_ANSWER_CHARS else ""  # cut by bounded_answer
        return DescriptionViolation("too_long",
                                    f"the description is {length} characters long{more}; the limit is {max_chars}")
    leak = find_word_leak(stripped, word, language)
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
