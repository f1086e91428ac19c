"""The languages a game can be played in (``-T language=``): what each one ships.

English is the paper's game.  Spanish and German are parallel games: the same prompts
translated (``prompt_texts``), their own word-pair files with the same four tiers, and the
word rules read with each language's regular inflections (``inflections``).  A language is
one entry here; its texts and forms live in those two modules (docs/rules.md, "Languages").

Plain Python: no Inspect, MLflow or pandas import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from impostor_bench.core.errors import ImpostorError

__all__ = ["DEFAULT_LANGUAGE", "LANGUAGES", "Language", "LanguageCode", "language_of", "shipped_languages"]


@dataclass(frozen=True)
class Language:
    """One shipped language: its word-pair file and what a valid word of it is."""

    code: str
    name: str
    pairs_file: str  # the shipped word-pair file, under configs/
    pairs_per_tier: int  # pairs per tier of the shipped file (its require_full count)
    word_pattern: str  # a regular expression a word of a pair file must match in full
    word_rule: str  # that pattern in words, for the loader's one-line fix
    articles: tuple[str, ...]  # dropped from the start of a word guess ("the cat", "el gato", "die Katze")


LANGUAGES: dict[str, Language] = {
    "en": Language("en", "English", "word_pairs.json", 75, r"[a-z]+",
                   "lowercase letters a-z only", ("the", "an", "a")),
    "es": Language("es", "Spanish", "word_pairs_es.json", 25, r"[a-zñáéíóúü]+",
                   "lowercase Spanish letters only (a-z, ñ, á, é, í, ó, ú, ü)",
                   ("el", "la", "los", "las", "un", "una", "unos", "unas")),
    # German nouns are written with their capital (the loader folds case wherever it compares words)
    "de": Language("de", "German", "word_pairs_de.json", 25, r"[A-ZÄÖÜ]?[a-zäöüß]+",
                   "German letters only (a-z, ä, ö, ü, ß), lowercase after a noun's capital",
                   ("der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einem", "einer", "eines")),
}

#: The shipped codes as a type (sweep axes, schemas); the same codes as :data:`LANGUAGES`.
LanguageCode = Literal["en", "es", "de"]
assert get_args(LanguageCode) == tuple(LANGUAGES), "LanguageCode lists the shipped languages"

#: The paper's language: its games, prompts and experiment ids are the ones before languages existed.
DEFAULT_LANGUAGE = "en"


def shipped_languages() -> str:
    """``en (English), es (Spanish), de (German)``: what an error about a language names."""
    return ", ".join(f"{lang.code} ({lang.name})" for lang in LANGUAGES.values())


def language_of(code: str) -> Language:
    """The shipped language ``code``, or a one-line error naming the shipped ones."""
    lang = LANGUAGES.get(code)
    if lang is None:
        raise ImpostorError(f"language {code!r} is not shipped; use one of: {shipped_languages()}")
    return lang
