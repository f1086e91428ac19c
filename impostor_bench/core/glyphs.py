"""What a reader sees in a text: invisible characters dropped, look-alike letters read
as the ASCII letters they imitate.

The word-leak rule (``impostor_bench.core.parsing.find_word_leak``) judges a description as a
reader sees it, so "wаllеt" (Cyrillic а and е), "s\\u034fandwich" (a combining grapheme
joiner between letters) and a text of zero-width characters cannot evade it.  Both
character sets come from Unicode, not from a hand-made table:

- invisible: the ``Default_Ignorable_Code_Point`` property (U+034F, variation selectors,
  U+3164 and the other Hangul fillers, zero-width characters, bidi controls, the tags
  block, soft hyphen...), the other format characters (Cf) and the C1 controls, through
  the ``regex`` package's Unicode properties;
- look-alike: Unicode's confusable skeletons (UTS #39, confusables.txt) as computed by
  ICU's spoof checker (PyICU from the ``pyicu-wheels`` wheel, which bundles ICU; see
  docs/rules.md, "Descriptions", for why this implementation), taken of the character,
  of its compatibility folding (NFKD) and of its capital (Cherokee small letters read
  through their capitals), and, for letters no skeleton maps, the Latin letter the
  character's Unicode name says it draws ("LATIN LETTER SMALL CAPITAL A", "NEGATIVE
  CIRCLED LATIN CAPITAL LETTER C", "REGIONAL INDICATOR SYMBOL LETTER T", "... WITH STROKE").
  An enclosed letter ("⒞", NFKD "(c)") reads as its letter.

ASCII text never reaches ICU: the leak rule reads it as typed (the fast path).
"""

from __future__ import annotations

import functools
import string
import unicodedata
from typing import Any, Optional

import regex

_INVISIBLE = regex.compile(r"[\p{Default_Ignorable_Code_Point}\p{Cf}\x80-\x84\x86-\x9f]+")
# U+2800 BRAILLE PATTERN BLANK is a symbol (So) that prints as a space: blank, not visible.
_VISIBLE = regex.compile(r"[[\p{L}\p{N}\p{P}\p{S}]--[\u2800]]", flags=regex.V1)
_ASCII_VISIBLE = regex.compile(r"[!-~]")
_MARKS = regex.compile(r"\p{M}+")
_SEPARATOR_LIKE = regex.compile(r"[\p{P}\p{Z}\u2800]")
# A Unicode name that says which Latin letter a character draws (small capitals, enclosed,
# negative squared/circled, regional indicators, letters with a stroke or hook).
_NAMED_LETTER = regex.compile(r"^(?:.* )?(?:LATIN|REGIONAL INDICATOR SYMBOL)(?: .*)? LETTER (?:SMALL CAPITAL )?"
                              r"(?P<letter>[A-Z])(?: WITH .*)?$")


def visible_text(text: str) -> str:
    """``text`` without its invisible characters (default-ignorable, format, C1 control)."""
    if text.isascii():
        return text
    return _INVISIBLE.sub("", text)


def has_visible_character(text: str) -> bool:
    """Whether ``text`` shows anything: a letter, digit, punctuation mark or symbol once
    invisible characters are dropped (whitespace, blanks and bare combining marks show nothing)."""
    if text.isascii():
        return _ASCII_VISIBLE.search(text) is not None
    return _VISIBLE.search(visible_text(text)) is not None


@functools.lru_cache(maxsize=1)
def _icu() -> tuple[Any, Any, Any]:
    """ICU's spoof checker and NFKD/NFD normalisers (loaded on the first non-ASCII text)."""
    try:
        import icu
    except ImportError as exc:  # pragma: no cover - a broken install
        raise ImportError(
            "impostor_bench.core.glyphs needs ICU (Unicode confusables): run `pip install -e .` or "
            "`pip install 'pyicu-wheels>=2.15,<3'`"
        ) from exc
    return icu.SpoofChecker(), icu.Normalizer2.getNFKDInstance(), icu.Normalizer2.getNFDInstance()


@functools.lru_cache(maxsize=1)
def _ascii_alternatives() -> dict[str, str]:
    """Skeleton -> the ASCII letter it also stands for, where a letter's skeleton is not
    itself: "rn" (the prototype of "m") reads as "m", "l" (that of "I") as "i"."""
    checker = _icu()[0]
    alt: dict[str, str] = {}
    for ch in string.ascii_letters:
        skeleton = checker.getSkeleton(0, ch)
        if skeleton != ch:
            alt[skeleton] = ch.lower()
    return alt


def _named_letter(ch: str) -> Optional[str]:
    """The Latin letter ``ch``'s Unicode name says it draws, lower-cased, or None."""
    m = _NAMED_LETTER.match(unicodedata.name(ch, "")) if len(ch) == 1 else None
    return None if m is None else m["letter"].lower()


@functools.lru_cache(maxsize=65536)
def read_char(ch: str) -> tuple[str, str]:
    """The two ASCII readings of one non-ASCII character (equal unless its look-alike
    is ambiguous, like "Ι" that reads as "l" or "I"), or the character itself when it
    imitates no ASCII letter.

    Compatibility forms (fullwidth, mathematical letters, ligatures) are folded by NFKD
    and diacritics dropped ("é" reads "e"); an enclosed letter reads as the letter ("⒞"
    is "(c)": "c").  Other characters are read through the confusable skeleton of the
    character, of its NFKD folding, then of its capital ("а" Cyrillic reads "a", "ϲ" the
    lunate sigma "c", "ꮯ" Cherokee "c"), then through the Latin letter its name gives
    ("ᴀ", "🅒", "🇹", "Ⱥ").  Spaces and punctuation without an ASCII look-alike read as a
    space (a separator).
    """
    checker, nfkd, nfd = _icu()
    base = _MARKS.sub("", nfkd.normalize(ch))
    if base.isascii():
        inner = [c for c in base if c.isalnum()]
        return (inner[0], inner[0]) if len(base) > 1 and len(inner) == 1 else (base, base)
    for form in dict.fromkeys((ch, base, ch.upper())):  # skeleton before and after folding
        skeleton = _MARKS.sub("", nfd.normalize(checker.getSkeleton(0, form)))
        if skeleton and skeleton.isascii():
            if form != ch and ch.islower():  # read through its capital, still a small letter: "ß" is "ss"
                skeleton = skeleton.lower()  # (as "SS" it would split "Straße" as a camelCase join)
            return skeleton, _ascii_alternatives().get(skeleton, skeleton)
        named = _named_letter(form) or _named_letter(skeleton)
        if named is not None:
            return named, named
    if _SEPARATOR_LIKE.fullmatch(ch):
        return " ", " "
    return ch, ch


def confusable_readings(text: str) -> list[tuple[str, list[int]]]:
    """The readings of a non-ASCII ``text`` (invisible characters already dropped) as a
    reader may take it, each with the index in ``text`` of every reading character's source.

    ASCII characters are read as typed (so "m" is never "rn" and "0" never "O": the
    plain-text rule is unchanged); only non-ASCII characters are folded.
    """
    pieces = [(ch, ch) if ch.isascii() else read_char(ch) for ch in text]
    out = []
    for k in (0, 1):
        if k == 1 and all(a == b for a, b in pieces):
            break
        source = [i for i, piece in enumerate(pieces) for _ in piece[k]]
        out.append(("".join(piece[k] for piece in pieces), source))
    return out


def readings(text: str) -> list[str]:
    """``text`` as a reader may take it, one string per reading: invisible characters dropped,
    and non-ASCII characters read as the ASCII letters they imitate (:func:`confusable_readings`;
    ASCII as typed).  The leak rule's reading, shared by every rule that compares texts: a
    repeated description, a word guess, a word pair (docs/rules.md)."""
    text = visible_text(text)
    if text.isascii():
        return [text]
    return [reading for reading, _ in confusable_readings(text)]


_GRAPHEME = regex.compile(r"\X")


def visible_length(text: str) -> int:
    """How many characters a reader counts in ``text``: grapheme clusters (a flag, an accented
    letter written with a combining mark, an emoji with its modifiers are one each) of the text
    without invisible characters and with every whitespace run read as one space, ends
    stripped, as the other players are shown it."""
    shown = " ".join(visible_text(text).split())
    return len(shown) if shown.isascii() else len(_GRAPHEME.findall(shown))
