"""The bots' game logic as plain functions of a :class:`GameView` (no Inspect).

Determinism: every random choice comes from :func:`seeded_rng`, a
``random.Random`` seeded with SHA-256 of (bot name, seed, full prompt text), so
the same prompt and seed give the same answer in any process on any machine.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any, Optional

import numpy as np

from impostor_bench.core.parsing import find_word_leak
from impostor_bench.core.prompts import INVALID_DESCRIPTION_PLACEHOLDER
from impostor_bench.providers.prompt_parse import GameView
from impostor_bench.providers.bots.vocab import (
    STOPWORDS,
    VectorTable,
    cosine,
    is_form_of,
    tokens,
    word_list,
)

# Templates use only stopwords around the slots, so they add nothing to a text vector.
TEMPLATES_3 = (
    "It goes with {a}, {b} and {c}.",
    "Think of {a}, {b} and {c}.",
    "It is about {a} and {b}. Also {c}.",
    "Something linked to {a}, {b} and {c}.",
    "It relates to {a} and {b}, and a bit to {c}.",
)
RANDOM_POOL = 4000  # bot/random draws from the most frequent words only (readable)


def seeded_rng(name: str, seed: Optional[int], prompt_text: str) -> random.Random:
    key = f"{name}\x1f{'' if seed is None else int(seed)}\x1f{prompt_text}".encode("utf-8")
    return random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))


def _fill(template: str, words: list[str]) -> str:
    text = template.format(a=words[0], b=words[1], c=words[2])
    return text[0].upper() + text[1:]


def _safe(text: str, word: str, fallback: str = "It is hard to put into words.", language: str = "en") -> str:
    """Guard: a bot description never contains its own word (or a form of it, in the game's language)."""
    return fallback if find_word_leak(text, word, language) is not None else text


def _distinct(words: list[str], k: int, rng: Optional[random.Random] = None) -> list[str]:
    """Up to k words of ``words`` no two of which are forms of each other (in order)."""
    out: list[str] = []
    for w in words:
        if not any(is_form_of(w, o) for o in out):
            out.append(w)
        if len(out) >= k:
            break
    return out


def _cap(text: str, max_chars: Optional[int]) -> str:
    if max_chars is not None and len(text) > max_chars:
        text = text[: max(1, max_chars - 1)].rsplit(" ", 1)[0].rstrip(",.;") + "."
    return text


# ---------------------------------------------------------------- bot/random


def random_words(word: str, rng: random.Random, k: int = 3) -> list[str]:
    pool = word_list()[:RANDOM_POOL]
    out: list[str] = []
    while len(out) < k:
        w = pool[rng.randrange(len(pool))]
        if w in STOPWORDS or is_form_of(w, word) or any(is_form_of(w, o) for o in out):
            continue
        out.append(w)
    return out


def random_description(view: GameView, rng: random.Random) -> str:
    text = _fill(rng.choice(TEMPLATES_3), random_words(view.word, rng))
    return _cap(_safe(text, view.word, language=view.language), view.max_chars)


def random_vote(view: GameView, rng: random.Random) -> dict[str, Any]:
    return {
        "suspected_impostor_id": rng.choice(view.others),
        "confidence": round(rng.uniform(0.25, 0.75), 2),
        "reasoning": "A random guess.",
        "self_declaration": False,
        "word_guess": None,
    }


def note_text(ballot: dict[str, Any]) -> str:
    """A bot's private note between rounds (multi-round games): the vote it would cast now, in words."""
    if ballot.get("self_declaration"):
        return f"I may be the impostor; the majority word might be {ballot.get('word_guess') or 'unclear'}."
    return (f"I suspect Player {ballot['suspected_impostor_id']} (confidence {ballot['confidence']}): "
            f"{ballot['reasoning']}")


# ------------------------------------------------------------- bot/embedding


class EmbeddingPlayer:
    """Describes with nearest-neighbour words; votes for the semantic outlier."""

    def __init__(
        self,
        table: VectorTable,
        *,
        pool: int = 8,
        words_per_description: int = 3,
        declare_margin: float = 0.08,
        skip: int = 0,
    ):
        self.table = table
        self.pool = pool
        self.skip = skip  # bot/vague: pass over the `skip` nearest neighbours (looser associations)
        self.k = words_per_description
        self.declare_margin = declare_margin
        self._neighbour_cache: dict[str, list[str]] = {}

    def neighbours(self, word: str) -> list[str]:
        cached = self._neighbour_cache.get(word)
        if cached is None:
            vec = self.table.word_vector(word)
            if vec is None:
                cached = []
            else:
                want = self.skip + self.pool
                near = self.table.nearest(vec, 4 * want, reject=lambda c: is_form_of(c, word))
                cached = _distinct([w for w, _ in near], want)[self.skip:]
            self._neighbour_cache[word] = cached
        return cached

    def describe(self, view: GameView, rng: random.Random) -> str:
        near = self.neighbours(view.word)
        if len(near) < self.k:
            return random_description(view, rng)
        chosen = sorted(rng.sample(range(len(near)), self.k))  # keep similarity order
        text = _fill(rng.choice(TEMPLATES_3), [near[i] for i in chosen])
        return _cap(_safe(text, view.word, language=view.language), view.max_chars)

    def _vectors(self, view: GameView) -> dict[int, np.ndarray]:
        vecs: dict[int, np.ndarray] = {}
        for player, text in view.descriptions:
            if text.strip() == INVALID_DESCRIPTION_PLACEHOLDER:
                continue
            v = self.table.text_vector(text)
            if v is not None:
                vecs[player] = v
        own = self.table.word_vector(view.word)
        if own is not None:
            mine = vecs.get(view.player)
            vecs[view.player] = own if mine is None else (own + mine) / np.linalg.norm(own + mine)
        return vecs

    @staticmethod
    def outlier_scores(vecs: dict[int, np.ndarray]) -> dict[int, float]:
        """1 - cosine(v_j, centroid of the other vectors), for each player j."""
        scores = {}
        for j, v in vecs.items():
            rest = [u for i, u in vecs.items() if i != j]
            if rest:
                scores[j] = 1.0 - cosine(v, np.mean(rest, axis=0))
        return scores

    def guess_majority_word(self, view: GameView, vecs: dict[int, np.ndarray]) -> Optional[str]:
        others = [v for p, v in vecs.items() if p != view.player]
        if not others:
            return None
        said = {t for _, text in view.descriptions for t in tokens(text) if t not in STOPWORDS}

        def reject(c: str) -> bool:
            return is_form_of(c, view.word) or c in said or any(is_form_of(c, s) for s in said if len(s) >= 4)

        centroid = np.mean(others, axis=0)
        near = self.table.nearest(centroid / np.linalg.norm(centroid), 1, reject=reject)
        return near[0][0] if near else None

    def vote(self, view: GameView, rng: random.Random) -> dict[str, Any]:
        candidates = view.others
        vecs = self._vectors(view)
        scores = self.outlier_scores(vecs)
        known = [p for p in candidates if p in scores]
        if not known:
            ballot = random_vote(view, rng)
            ballot["reasoning"] = "No description could be compared; a random guess."
            return ballot
        # unknown/invalid descriptions rank below every comparable one
        ranked = sorted(candidates, key=lambda p: (-scores.get(p, -1.0), rng.random()))
        target = ranked[0]
        top = scores[target]
        second = max((scores[p] for p in known if p != target), default=0.0)
        confidence = float(np.clip(0.5 + 2.0 * (top - second), 0.05, 0.99))
        declare = False
        guess = None
        mine = scores.get(view.player)
        if mine is not None and mine - top >= self.declare_margin:
            declare = True
            guess = self.guess_majority_word(view, vecs)
            confidence = float(np.clip(0.5 + 2.0 * (mine - top), 0.05, 0.99))
            reasoning = "My word is the outlier of the group, so I am the impostor."
        else:
            reasoning = f"Player {target}'s description is the least similar to the others."
        return {
            "suspected_impostor_id": target,
            "confidence": round(confidence, 2),
            "reasoning": reasoning,
            "self_declaration": declare,
            "word_guess": guess,
        }


# ----------------------------------------------------------------- rendering


def render_ballot(ballot: dict[str, Any], schema: Optional[dict] = None) -> str:
    """The ballot as JSON, honouring a response schema's id type, enum and reasoning cap."""
    out = dict(ballot)
    props = (schema or {}).get("properties", {}) if isinstance(schema, dict) else {}
    sid = props.get("suspected_impostor_id", {})
    types = sid.get("type", "string")
    types = types if isinstance(types, list) else [types]
    if "string" in types or not ({"integer", "number"} & set(types)):
        out["suspected_impostor_id"] = str(out["suspected_impostor_id"])
    else:
        out["suspected_impostor_id"] = int(out["suspected_impostor_id"])
    enum = sid.get("enum")
    if enum and out["suspected_impostor_id"] not in enum:
        out["suspected_impostor_id"] = enum[0]
    cap = props.get("reasoning", {}).get("maxLength")
    if isinstance(cap, int) and isinstance(out.get("reasoning"), str):
        out["reasoning"] = out["reasoning"][:cap]
    return json.dumps(out, ensure_ascii=False)
