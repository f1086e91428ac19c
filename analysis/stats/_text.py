"""Pure text measures behind the language columns of Table 12 (no model calls).

The word lists live in ``analysis/lexicon/language.json`` (data, documented there and in
docs/analysis.md "Team dynamics and language"); this module only applies them:

* :func:`tokens` -- lower-cased word tokens (apostrophes kept: "doesn't");
* :func:`lexicon_hits` -- number of matches of a lexicon category (words + phrases);
* :func:`fw_profile` -- % of tokens in each of the nine LSM function-word categories;
* :func:`lsm` -- Language Style Matching of two profiles (Ireland & Pennebaker 2010):
  mean over categories of ``1 - |p_a - p_b| / (p_a + p_b + 0.0001)``;
* :func:`content_words` -- tokens that are not function words or stop words and are not a
  form of the game's two words (so sharing the pair's words is not "convergence");
* :func:`vouches` -- reasoning that vouches for a named player other than the suspect.

Every function works on one string; callers apply them once per distinct text.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from typing import Optional

import numpy as np


_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_PLAYER = re.compile(r"\bplayer\s*(\d)\b")
LSM_EPS = 0.0001
# What other players see in place of a description that failed enforcement (impostor_bench.core.prompts,
# not a core module analysis may import; tests/analysis/stats/test_stats_team_dynamics.py checks they agree).
INVALID_DESCRIPTION_PLACEHOLDER = "[no valid description]"


@lru_cache(maxsize=1)
def lexicon() -> dict:
    """The shipped lexicon (analysis/lexicon/language.json)."""
    text = resources.files("impostor_bench.analysis").joinpath("lexicon/language.json").read_text(encoding="utf-8")
    return json.loads(text)


@lru_cache(maxsize=None)
def _category(name: str) -> tuple[frozenset, Optional[re.Pattern]]:
    cat = lexicon()[name]
    words = frozenset(w.lower() for w in cat.get("words", []))
    phrases = cat.get("phrases", [])
    pat = re.compile(r"\b(?:" + "|".join(f"(?:{p})" for p in phrases) + r")\b") if phrases else None
    return words, pat


@lru_cache(maxsize=1)
def fw_categories() -> dict[str, frozenset]:
    return {k: frozenset(v) for k, v in lexicon()["function_words"].items()}


@lru_cache(maxsize=1)
def _stop() -> frozenset:
    fw = set().union(*fw_categories().values())
    return frozenset(fw | set(lexicon()["stopwords"]["words"]))


def is_text(s) -> bool:
    """A real description/reasoning: a non-empty string that is not the invalid placeholder."""
    return isinstance(s, str) and bool(s.strip()) and s.strip() != INVALID_DESCRIPTION_PLACEHOLDER


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower()) if isinstance(text, str) else []


def lexicon_hits(text: str, category: str) -> int:
    """Matches of ``category`` in ``text``: its single words as tokens plus its phrases."""
    if not isinstance(text, str):
        return 0
    words, pat = _category(category)
    low = text.lower()
    n = sum(1 for t in _TOKEN.findall(low) if t in words)
    if pat is not None:
        n += len(pat.findall(low))
    return n


def lexicon_share(text: str, category: str) -> float:
    """Share of the text's tokens inside matches of ``category`` ("coordination theater" share, M.8)."""
    toks = tokens(text)
    if not toks:
        return np.nan
    words, pat = _category(category)
    low = text.lower()
    covered = sum(1 for t in toks if t in words)
    if pat is not None:
        covered += sum(len(_TOKEN.findall(m.group(0))) for m in pat.finditer(low))
    return min(1.0, covered / len(toks))


def features(text: str) -> tuple[float, float, float, float, float]:
    """(tokens, coordination hits, coordination share of tokens, hedge hits, suspicion hits) with one
    tokenisation per text; equal to :func:`lexicon_hits` / :func:`lexicon_share` (tests check)."""
    low = text.lower()
    toks = _TOKEN.findall(low)
    out = {}
    covered = 0
    for c in ("coordination", "hedges", "suspicion"):
        words, pat = _category(c)
        n = sum(1 for t in toks if t in words) if words else 0
        if c == "coordination":
            covered = n
        if pat is not None:
            for m in pat.finditer(low):
                n += 1
                if c == "coordination":
                    covered += len(_TOKEN.findall(m.group(0)))
        out[c] = float(n)
    share = min(1.0, covered / len(toks)) if toks else np.nan
    return float(len(toks)), out["coordination"], share, out["hedges"], out["suspicion"]


@lru_cache(maxsize=1)
def _fw_index() -> dict[str, tuple[int, ...]]:
    """token -> indices of the function-word categories it belongs to."""
    out: dict[str, tuple[int, ...]] = {}
    for k, ws in enumerate(fw_categories().values()):
        for w in ws:
            out[w] = out.get(w, ()) + (k,)
    return out


def fw_profile(text: str) -> np.ndarray:
    """% of tokens in each function-word category (order of the lexicon); zeros for no tokens."""
    toks = tokens(text)
    counts = np.zeros(len(fw_categories()))
    if not toks:
        return counts
    idx = _fw_index()
    for t in toks:
        for k in idx.get(t, ()):
            counts[k] += 1
    return 100.0 * counts / len(toks)


def lsm(a: np.ndarray, b: np.ndarray) -> float:
    """Language Style Matching of two function-word profiles, in [0, 1]."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.mean(1.0 - np.abs(a - b) / (a + b + LSM_EPS)))


def _forms(word) -> list[str]:
    w = str(word or "").lower().strip()
    return [t for t in _TOKEN.findall(w) if t]


@lru_cache(maxsize=4096)
def _pair_filter(pair_words: tuple) -> tuple[frozenset, tuple]:
    """(exact forms and their prefixes of 3+ letters, forms of 3+ letters as prefixes) of a pair."""
    forms = [f for w in pair_words for f in _forms(w)]
    exact = {f for f in forms} | {f[:i] for f in forms if len(f) >= 3 for i in range(3, len(f) + 1)}
    return frozenset(exact), tuple(f for f in forms if len(f) >= 3)


def content_words(text: str, pair_words=()) -> frozenset:
    """Content words of ``text``: not a function/stop word, not a form of a pair word (the word
    itself, a word it starts, e.g. "dogs" for "dog", or a 3+ letter prefix of it)."""
    stop = _stop()
    exact, prefixes = _pair_filter(tuple(pair_words))
    return frozenset(t for t in tokens(text)
                     if t not in stop and len(t) >= 2 and not t.isdigit() and t not in exact
                     and not (prefixes and t.startswith(prefixes)))


def jaccard(a: frozenset, b: frozenset) -> float:
    u = len(a | b)
    return len(a & b) / u if u else np.nan


def vouches(reasoning: str, suspect: Optional[float] = None) -> bool:
    """True when a sentence names a player (not the suspect) with a trust cue and no suspicion cue."""
    if not isinstance(reasoning, str):
        return False
    _, trust = _category("trust")
    for sent in _SENTENCE.split(reasoning.lower()):
        named = {int(m) for m in _PLAYER.findall(sent)}
        if suspect is not None and np.isfinite(suspect):
            named.discard(int(suspect) + 1)  # prompts number players 1-4, seats 0-3
        if named and trust is not None and trust.search(sent) and lexicon_hits(sent, "suspicion") == 0:
            return True
    return False
