"""Regular inflections of Spanish and German words: the forms the word rules read as the word.

The English forms are ``descriptions.word_forms`` / ``plural_forms`` (the paper's game, as
before).  Here, per language, the same two sets: every regular form (the leak rule and the
word-pair check) and the forms a word guess may take (guess matching).  As in English,
only endings a reader strips at sight count; irregular forms, conjugated verbs, derivations
and compounds are other words (docs/rules.md, "Languages").

Every form is returned as the leak rule reads text (``glyphs.readings``, lower-cased):
accents and umlauts dropped (``Häuser`` -> ``hauser``, ``canción`` -> ``cancion``) and ``ß``
read ``ss``, so a form matches however it is accented, and a German form is also given with
its umlauts written out (``haeuser``), as a German reader reads them.

Plain Python: no Inspect, MLflow or pandas import.
"""

from __future__ import annotations

import functools

from impostor_bench.core.glyphs import readings

__all__ = ["forms", "guess_forms", "reading"]

# ----------------------------------------------------------------------- Spanish

_ES_VOWELS = "aeiouáéíóú"


def _es_plurals(w: str) -> set[str]:
    """Number: a vowel takes -s (``gato`` -> ``gatos``; a stressed í/ú also -es: ``rubíes``), a
    consonant (``y`` included) -es (``mar`` -> ``mares``, ``canción`` -> ``canciones``), and
    -z becomes -ces (``luz`` -> ``luces``, ``lápiz`` -> ``lápices``)."""
    if w.endswith("z"):
        return {w, w[:-1] + "ces"}
    if w[-1] in _ES_VOWELS:
        return {w, w + "s"} | ({w + "es"} if w[-1] in "íú" else set())
    return {w, w + "es"}


# Masculine ending -> feminine ending (``rápido`` -> ``rápida``, ``profesor`` -> ``profesora``,
# ``ratón`` -> ``ratona``, ``inglés`` -> ``inglesa``), each with its plural.
_ES_FEMININE = (("o", "a"), ("or", "ora"), ("ón", "ona"), ("és", "esa"), ("án", "ana"), ("ín", "ina"))


def _es_forms(w: str) -> set[str]:
    out = _es_plurals(w)
    for masculine, feminine in _ES_FEMININE:
        if w.endswith(masculine) and len(w) > len(masculine) + 1:
            out |= _es_plurals(w[: -len(masculine)] + feminine)
    return out


# ----------------------------------------------------------------------- German

# Plural endings (-e, -er, -en, -n, -s; -nen after -in: Ärztin -> Ärztinnen), the genitive and
# dative case endings (-es, -s, -ns, -n, -en, dative plural -ern/-en) and an adjective's
# declension (-e, -en, -em, -er, -es), comparative (-er + declension) and superlative
# (-st/-est + declension).
_DE_SUFFIXES = ("", "e", "en", "em", "er", "es", "n", "s", "ns", "ern",
                "ere", "eren", "erem", "erer", "eres",
                "ste", "sten", "stem", "ster", "stes", "este", "esten", "estem", "ester", "estes")
_DE_PLURALS = ("", "e", "er", "en", "n", "s", "ern")
_UMLAUT = {"a": "ä", "o": "ö", "u": "ü"}
_WRITTEN_OUT = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue"})


def _de_umlauted(w: str) -> str | None:
    """The stem with its last a, o or u umlauted (``au`` -> ``äu``): the umlaut plurals and
    comparatives (``Haus`` -> ``Häuser``, ``Apfel`` -> ``Äpfel``, ``groß`` -> ``größer``)."""
    for i in range(len(w) - 1, -1, -1):
        if w[i] in "äöü":
            return None  # umlauted already
        if w[i] in _UMLAUT:
            if w[i] == "u" and i and w[i - 1] == "a":  # au -> äu
                return w[: i - 1] + "äu" + w[i + 1 :]
            return w[:i] + _UMLAUT[w[i]] + w[i + 1 :]
    return None


def _de_forms(w: str, suffixes: tuple[str, ...]) -> set[str]:
    stems = [w] + [u for u in (_de_umlauted(w),) if u]
    out = set()
    for stem in stems:
        out |= {stem + s for s in suffixes}  # the umlauted stem alone is a plural too (Äpfel, Mütter)
        if stem.endswith("e"):  # Rose -> Rosen, müde -> müder, müdeste: the e is the ending's
            out |= {stem[:-1] + s for s in suffixes if s.startswith("e")}
        if stem.endswith("ß"):  # groß -> größte (the ß is the superlative's s)
            out |= {stem + s[1:] for s in suffixes if s.startswith("st")}
        if stem.endswith("in"):  # Ärztin -> Ärztinnen
            out.add(stem + "nen")
    return out | {f.translate(_WRITTEN_OUT) for f in out}


# ----------------------------------------------------------------------- both


@functools.lru_cache(maxsize=65536)
def reading(text: str) -> str:
    """``text`` as the leak rule reads it, lower-cased: accents dropped, ``ß`` as ``ss``."""
    return readings(text)[0].lower()


def _raw_forms(word: str, language: str, german_endings: tuple[str, ...]) -> set[str]:
    """The word's forms as spelled: Spanish number and gender, German ``german_endings``."""
    w = word.lower()
    if language == "es":
        return _es_forms(w)
    if language == "de":
        return _de_forms(w, german_endings)
    raise ValueError(f"no inflection rules for language {language!r}")


@functools.lru_cache(maxsize=4096)
def forms(word: str, language: str) -> tuple[str, ...]:
    """Every regular form of a Spanish (``es``) or German (``de``) ``word``, read as text is
    read (:func:`reading`), longest first: what the leak rule and the pair check match."""
    raw = _raw_forms(word, language, _DE_SUFFIXES)
    return tuple(sorted({reading(f) for f in raw}, key=lambda f: (-len(f), f)))


@functools.lru_cache(maxsize=4096)
def guess_forms(word: str, language: str) -> frozenset[str]:
    """The forms a word guess may take (read as text is read): Spanish, the word's number and
    gender forms (an impostor's guess agrees as the language makes it: ``rápida`` for
    ``rápido``); German, the word and its plurals, with or without an umlaut."""
    return frozenset(reading(f) for f in _raw_forms(word, language, _DE_PLURALS))
