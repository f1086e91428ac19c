"""The word-pair dataset (paper Appendix A.4): loading and validation.

The file is a JSON object with the four difficulty tiers as keys, each an
array of ``[majority_word, impostor_word]`` arrays::

    {"easy": [["elephant", "democracy"], ...], "medium": [...],
     "hard": [...], "expert": [...]}

The shipped English file (``configs/word_pairs.json``) holds 75 pairs per tier, 300 in
all; the Spanish and German ones (``word_pairs_es.json``, ``word_pairs_de.json``: -T language)
25 per tier each (``languages.LANGUAGES``).  Each pair gets a stable id ``f"{tier}-{index:03d}"`` from its 1-based
position in its tier (``"hard-017"``), so reordering a tier changes ids: append
new pairs instead, and record :func:`word_pairs_sha256` with every run.

Pure Python; no Inspect import.
"""

from __future__ import annotations

import hashlib
import json
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from impostor_bench.core.descriptions import find_word_leak
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.inflections import reading
from impostor_bench.core.languages import DEFAULT_LANGUAGE, language_of

__all__ = [
    "TIERS",
    "PAIRS_PER_TIER",
    "WordPair",
    "WordPairError",
    "default_word_pairs_path",
    "load_word_pairs",
    "word_pairs_file",
    "word_pairs_sha256",
]

#: Difficulty tiers in the paper's order (easy = unrelated ... expert = near-synonyms).
TIERS: tuple[str, ...] = ("easy", "medium", "hard", "expert")

#: Pairs per tier in the full dataset (4 x 75 = 300).
PAIRS_PER_TIER = 75

#: How many problems one error message lists before summarising the rest.
MAX_REPORTED_PROBLEMS = 10

_WORD_RE = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class WordPair:
    """One pair: the three majority players get ``majority``, the impostor ``impostor``."""

    pair_id: str
    difficulty: str
    majority: str
    impostor: str


class WordPairError(ImpostorError):
    """A word-pair file is missing, unreadable, or breaks the format.

    ``problems`` holds every problem found (the message shows the first
    :data:`MAX_REPORTED_PROBLEMS`).
    """

    def __init__(self, message: str, problems: list[str] | None = None):
        super().__init__(message)
        self.problems: list[str] = list(problems) if problems else [message]


def default_word_pairs_path(language: str = DEFAULT_LANGUAGE) -> Path:
    """``<repo>/configs/word_pairs.json`` (another language: its own file), located relative to this file."""
    # resolved through impostor_bench/configs (a symlink to the repository's configs/ in a checkout)
    return (Path(__file__).resolve().parents[1] / "configs" / language_of(language).pairs_file).resolve()


def _resolve(path: str | Path | None, language: str = DEFAULT_LANGUAGE) -> Path:
    return default_word_pairs_path(language) if path is None else Path(path)


def _display(path: Path) -> str:
    """The path as the user would recognise it: relative to the cwd when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


#: The largest word-pair file read (the shipped one is ~10 kB; 300,000 pairs fit): a bigger
#: one, or ``/dev/zero``, is refused before it is read.
MAX_FILE_BYTES = 16 * 1024 * 1024

#: How deep a word-pair file may nest: the format is 3 levels (object > tier array > pair).
MAX_DEPTH = 16


def _read_bytes(path: Path) -> bytes:
    """The file's bytes: a regular file of at most ``MAX_FILE_BYTES`` (a FIFO would block
    forever and ``/dev/zero`` read until memory ran out), checked before it is opened."""
    shown = _display(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise WordPairError(
            f"{shown}: cannot read word-pair file ({exc.strerror or exc}); check the path and its permissions"
        ) from exc
    if st is None:
        raise WordPairError(
            f"{shown}: word-pair file not found; pass the path of an existing JSON "
            f"file, or omit it to use the shipped {_display(default_word_pairs_path())}"
        )
    if stat.S_ISDIR(st.st_mode):
        raise WordPairError(
            f"{shown}: is a directory, not a word-pair file; pass the path of the JSON file itself"
        )
    if not stat.S_ISREG(st.st_mode):
        raise WordPairError(
            f"{shown}: is not a regular file (a pipe, device or socket); save the word pairs to a JSON file and pass its path"
        )
    if st.st_size > MAX_FILE_BYTES:
        raise WordPairError(
            f"{shown}: word-pair file is {st.st_size:,} bytes, over the {MAX_FILE_BYTES:,}-byte limit; "
            f"split it into smaller files"
        )
    try:
        with path.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise WordPairError(
            f"{shown}: cannot read word-pair file ({exc.strerror or exc}); check the path and its permissions"
        ) from exc
    if len(data) > MAX_FILE_BYTES:  # grew while being read
        raise WordPairError(f"{shown}: word-pair file is over the {MAX_FILE_BYTES:,}-byte limit; split it")
    return data


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def _too_deep(text: str) -> bool:
    """Whether the JSON text nests deeper than ``MAX_DEPTH`` (strings skipped), found without
    parsing it: ``json.loads`` recurses once per level, and a file nested 100,000 deep raised
    ``RecursionError``."""
    depth = 0
    for ch in _NOT_BRACKET.sub("", _JSON_STRING.sub("", text)):
        depth += 1 if ch in "[{" else -1
        if depth > MAX_DEPTH:
            return True
    return False


def word_pairs_file(path: str | Path | None = None, language: str = DEFAULT_LANGUAGE) -> str:
    """Absolute path of the file a run uses (the language's shipped file when ``path`` is None),
    recorded next to :func:`word_pairs_sha256` so a report can say which pair file it analysed."""
    return str(_resolve(path, language).resolve())


def word_pairs_sha256(path: str | Path | None = None, language: str = DEFAULT_LANGUAGE) -> str:
    """Hex SHA-256 of the file's bytes (the language's shipped file when ``path`` is None), for run tracking."""
    return hashlib.sha256(_read_bytes(_resolve(path, language))).hexdigest()


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _tier_list() -> str:
    return ", ".join(f'"{t}"' for t in TIERS)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    duplicates: list[str] = []
    for key, value in pairs:
        if key in seen:
            duplicates.append(key)
        seen[key] = value
    if duplicates:
        # Caught by the loader and turned into a WordPairError naming the file.
        raise _DuplicateKeyError(duplicates)
    return seen


class _DuplicateKeyError(ValueError):
    def __init__(self, keys: list[str]):
        super().__init__(keys)
        self.keys = keys


def _check_word(word: Any, role: str, where: str, language: str = DEFAULT_LANGUAGE) -> str | None:
    """Return a problem string for a bad word, or None when it is valid."""
    if not isinstance(word, str):
        return f'{where}: {role} word must be a string, got {_json_type(word)} {json.dumps(word)}'
    if language != DEFAULT_LANGUAGE:
        lang = language_of(language)
        if re.fullmatch(lang.word_pattern, word):
            return None
        return (f"{where}: word {json.dumps(word, ensure_ascii=False)} is not one {lang.name} word; "
                f"use {lang.word_rule}, with no spaces, hyphens or digits")
    if not _WORD_RE.fullmatch(word):
        fixed = word.strip().lower()
        hint = (
            f'; write it as "{fixed}"'
            if _WORD_RE.fullmatch(fixed)
            else "; use a single lowercase word with no spaces, hyphens, digits or accents"
        )
        return f"{where}: word {json.dumps(word)} must be lowercase letters a-z only{hint}"
    return None


def _check_tier(tier: str, entries: Any, require_full: bool,
                language: str = DEFAULT_LANGUAGE) -> tuple[list[WordPair], list[str]]:
    problems: list[str] = []
    full = language_of(language).pairs_per_tier
    pairs: list[WordPair] = []
    if not isinstance(entries, list):
        problems.append(
            f'tier "{tier}" must be an array of [majority_word, impostor_word] arrays, '
            f"got {_json_type(entries)}"
        )
        return pairs, problems
    if require_full and len(entries) != full:
        if len(entries) < full:
            fix = f"add {full - len(entries)}"
        else:
            fix = f"remove {len(entries) - full}"
        problems.append(
            f'tier "{tier}" has {len(entries)} pairs; the full dataset needs exactly '
            f"{full} ({fix}, or load a custom file with require_full=False)"
        )
    elif not entries:
        problems.append(f'tier "{tier}" is empty; it needs at least one pair (or drop the tier)')

    seen_pairs: dict[frozenset[str], str] = {}
    seen_words: dict[str, str] = {}
    for index, entry in enumerate(entries):
        pair_id = f"{tier}-{index + 1:03d}"
        where = f'tier "{tier}", pair {index + 1} ({pair_id})'
        if not isinstance(entry, list):
            problems.append(
                f"{where}: must be a two-element array [majority_word, impostor_word], "
                f"got {_json_type(entry)} {json.dumps(entry)}"
            )
            continue
        if len(entry) != 2:
            problems.append(
                f"{where}: has {len(entry)} element(s) {json.dumps(entry)}; it must have "
                f"exactly 2: [majority_word, impostor_word]"
            )
            continue
        majority, impostor = entry
        shown_pair = entry
        word_problems = [
            p
            for p in (
                _check_word(majority, "majority", where, language),
                _check_word(impostor, "impostor", where, language),
            )
            if p
        ]
        if word_problems:
            problems.extend(word_problems)
            continue
        if language != DEFAULT_LANGUAGE:  # compared as the rules read them: case, accents and ß folded
            majority, impostor = reading(majority), reading(impostor)
        if majority == impostor:
            problems.append(
                f'{where}: majority and impostor are both "{majority}"; the two words must differ'
            )
            continue
        if majority in impostor or impostor in majority:
            longer, shorter = (impostor, majority) if majority in impostor else (majority, impostor)
            problems.append(
                f'{where}: word "{longer}" contains the other word "{shorter}", so describing '
                f"one would leak the other; pick two words where neither contains the other"
            )
            continue
        inflected = next(((form, base) for form, base in ((impostor, majority), (majority, impostor))
                          if find_word_leak(form, base, language) is not None), None)
        if inflected is not None:
            problems.append(
                f'{where}: "{inflected[0]}" is a form of "{inflected[1]}" to the leak rule (an inflection or '
                f"the word reversed), so the two words are one; replace one of them with a different word"
            )
            continue
        key = frozenset((majority, impostor))
        if key in seen_pairs:
            problems.append(
                f"{where}: duplicates {seen_pairs[key]} {json.dumps(sorted(key))} (same two "
                f"words, in either order); remove one of them"
            )
            continue
        repeated = False
        for word in (majority, impostor):
            if word in seen_words:
                problems.append(
                    f'{where}: word "{word}" is already used in {seen_words[word]}; each word '
                    f"may appear at most once per tier, so replace one of them"
                )
                repeated = True
        seen_pairs[key] = f"pair {index + 1} ({pair_id})"
        for word in (majority, impostor):
            seen_words.setdefault(word, f"pair {index + 1} ({pair_id})")
        if not repeated:
            pairs.append(WordPair(pair_id, tier, *shown_pair))
    return pairs, problems


def _raise(shown: str, problems: list[str]) -> None:
    if len(problems) == 1:
        raise WordPairError(f"{shown}: {problems[0]}", problems)
    shown_problems = problems[:MAX_REPORTED_PROBLEMS]
    lines = [f"{shown}: {len(problems)} problems in word-pair file; fix them and reload:"]
    lines += [f"  - {p}" for p in shown_problems]
    if len(problems) > len(shown_problems):
        lines.append(f"  ... and {len(problems) - len(shown_problems)} more")
    raise WordPairError("\n".join(lines), problems)


def load_word_pairs(
    path: str | Path | None = None, *, require_full: bool = True, language: str = DEFAULT_LANGUAGE
) -> dict[str, list[WordPair]]:
    """Load and validate a word-pair file; ``path=None`` loads the shipped dataset.

    Returns ``{tier: [WordPair, ...]}`` in tier order easy, medium, hard, expert.
    With ``require_full=True`` (the default) the file must hold all four tiers
    with exactly 75 pairs each.  With ``require_full=False`` (custom experiment
    files) any non-empty subset of the tiers is allowed, each with at least one
    pair; only the tiers present are returned.  ``language``: whose shipped file ``path=None``
    is (with its own pairs per tier) and whose letters and inflections the words are checked by.

    Raises :class:`WordPairError` listing every problem found (the first
    :data:`MAX_REPORTED_PROBLEMS` in the message).
    """
    file = _resolve(path, language)
    shown = _display(file)
    raw = _read_bytes(file)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise WordPairError(
            f"{shown}: not UTF-8 text (bad byte at offset {exc.start}); save the file as UTF-8 JSON"
        ) from exc
    if _too_deep(text):
        raise WordPairError(
            f"{shown}: nests deeper than {MAX_DEPTH} levels; a word-pair file is one object of tiers, "
            f"each an array of [majority_word, impostor_word] arrays"
        )
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise WordPairError(
            f"{shown}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}; "
            f"fix the syntax (the file must be one JSON object)"
        ) from exc
    except _DuplicateKeyError as exc:
        keys = ", ".join(f'"{k}"' for k in exc.keys)
        raise WordPairError(
            f"{shown}: key {keys} appears more than once in a JSON object; keep one "
            f"(JSON would silently drop the earlier one)"
        ) from exc

    if not isinstance(data, dict):
        raise WordPairError(
            f"{shown}: top level must be a JSON object with the tiers {_tier_list()} as keys, "
            f"got {_json_type(data)}"
        )

    problems: list[str] = []
    for name in data:
        if name not in TIERS:
            hint = (
                f'; did you mean "{name.strip().lower()}"?'
                if name.strip().lower() in TIERS
                else ""
            )
            problems.append(f'unknown tier "{name}"; allowed tiers are {_tier_list()}{hint}')
    missing = [t for t in TIERS if t not in data]
    if require_full and missing:
        names = ", ".join(f'"{t}"' for t in missing)
        problems.append(
            f"missing tier(s) {names}; the full dataset needs all of {_tier_list()} "
            f"(or load a custom file with require_full=False)"
        )
    elif not any(t in data for t in TIERS):
        problems.append(f"no tiers found; the file needs at least one of {_tier_list()}")

    result: dict[str, list[WordPair]] = {}
    for tier in TIERS:
        if tier not in data:
            continue
        pairs, tier_problems = _check_tier(tier, data[tier], require_full, language)
        problems.extend(tier_problems)
        result[tier] = pairs

    if problems:
        _raise(shown, problems)
    return result
