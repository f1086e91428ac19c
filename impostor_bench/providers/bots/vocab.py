"""The bots' vocabulary and static word vectors (numpy only, no model at run time).

``data/words.txt``   ~20k common English base words (frequency order) + every game word.
``data/vectors.npz`` their all-MiniLM-L6-v2 embeddings, int8-quantised (built by
                     ``build_vocab.py``; see docs/models.md for why static vectors).

A text is embedded as the weighted mean of the vectors of its content words
(stopwords and words not in the table are skipped; rarer words weigh more).  A
single word missing from the table (a game word added after the table was
built) is approximated by the vocabulary words that share most character
trigrams with it, so behaviour never depends on what else is installed.
"""

from __future__ import annotations

import functools
import re
import threading
from importlib import resources
from typing import Callable, Iterable, Optional

import numpy as np

from impostor_bench.core import parsing

STOPWORDS = frozenset(
    """a about above after again against all almost also although always am among an and another any
    anyone anything are around as at away be became because become becomes been before being below
    between both but by can cannot could did do does doing done down during each either else enough
    even ever every few for from further get gets getting give given go goes going got had has have
    having he her here hers herself him himself his how however i if in into is it its itself just
    kind least less let like made make makes many may me might mine more most much must my myself
    near need neither never no nor not now of off often on once one only onto or other others our
    ours ourselves out over own per perhaps quite rather really said same say see seem seems several
    shall she should since so some something sometimes somewhat still such than that the their
    theirs them themselves then there these they thing things this those though through thus to too
    toward towards under until up upon us use used uses using usually very via was we well were what
    whatever when where whether which while who whom whose why will with within without would yet you
    your yours yourself yourselves
    player players word words description describe describes describing describe game impostor
    majority related relate relates think thinks reminds remind often typically usually commonly
    associated association connected connect people someone person""".split()
)

_TOKEN = re.compile(r"[a-z]+")
_lock = threading.Lock()


def _data(name: str):
    return resources.files("impostor_bench.providers.bots").joinpath("data", name)


@functools.lru_cache(maxsize=1)
def word_list() -> tuple[str, ...]:
    """The shipped vocabulary, most frequent first (no vectors needed)."""
    text = _data("words.txt").read_text(encoding="utf-8")
    return tuple(w for w in (line.strip() for line in text.splitlines()) if w)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def word_parts(word: str) -> list[str]:
    """The lower-case alphabetic parts of a (possibly multi-word) game word."""
    return tokens(word) or [word.lower().strip()]


@functools.lru_cache(maxsize=4096)
def _forms(word: str) -> frozenset[str]:
    """The inflections the game's leak check (``impostor_bench.core.parsing``) refuses."""
    try:
        return frozenset(parsing.word_forms(word))
    except AttributeError:  # pragma: no cover - parsing changed; stay conservative
        return frozenset({word, word + "s", word + "es", word + "ed", word + "ing"})


@functools.lru_cache(maxsize=65536)
def is_form_of(candidate: str, word: str) -> bool:
    """True when ``candidate`` would leak ``word`` (same word, an inflection, a shared stem)."""
    c = candidate.lower()
    for w in word_parts(word):
        if c in _forms(w):
            return True
        short, long_ = sorted((c, w), key=len)
        if len(short) >= 3 and short in long_:
            return True
        common = 0
        for a, b in zip(c, w):
            if a != b:
                break
            common += 1
        if common >= 5 or (common >= 4 and len(short) <= 6):
            return True
    return False


def base_forms(token: str) -> list[str]:
    """Candidate base words of an inflected token, most likely first
    ("purring" -> purr, "meows" -> meow, "studies" -> study, "baked" -> bake).
    The shipped table keeps base words only, where they are frequent enough."""
    t = token
    out: list[str] = []
    if len(t) <= 3:
        return out
    if t.endswith("ies") and len(t) > 4:
        out.append(t[:-3] + "y")
    if t.endswith("es"):
        out.append(t[:-2])
    if t.endswith("s") and not t.endswith("ss"):
        out.append(t[:-1])
    for suf in ("ing", "ed", "er", "ers", "est"):
        if t.endswith(suf) and len(t) - len(suf) >= 3:
            stem = t[: -len(suf)]
            out += [stem, stem + "e"]
            if len(stem) >= 4 and stem[-1] == stem[-2]:  # purring -> purr -> pur? keep purr first
                out.append(stem[:-1])
            if stem.endswith("i"):
                out.append(stem[:-1] + "y")
    if t.endswith("ly") and len(t) > 5:
        out.append(t[:-2])
    return [b for b in dict.fromkeys(out) if b != t]


def _trigrams(word: str) -> set[str]:
    w = f"^{word}$"
    return {w[i : i + 3] for i in range(len(w) - 2)}


class VectorTable:
    """Normalised word vectors with nearest-neighbour search."""

    def __init__(self, words: Iterable[str], matrix: np.ndarray):
        self.words: list[str] = list(words)
        self.index: dict[str, int] = {w: i for i, w in enumerate(self.words)}
        m = np.asarray(matrix, dtype=np.float32)
        self.matrix = m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)
        n = len(self.words)
        # rarer words (later in the frequency-ordered list) weigh more in a text
        self.weights = np.log(np.arange(n, dtype=np.float32) + 50.0)
        self._trigram_index: Optional[dict[str, list[int]]] = None
        self._oov: dict[str, Optional[np.ndarray]] = {}

    @classmethod
    def shipped(cls) -> "VectorTable":
        return shipped_table()

    # ---------------------------------------------------------------- lookups
    def _row(self, token: str) -> Optional[int]:
        i = self.index.get(token)
        if i is None:
            for base in base_forms(token):
                i = self.index.get(base)
                if i is not None:
                    break
        return i

    def _approximate(self, word: str) -> Optional[np.ndarray]:
        """Vector of an unknown word: mean of the 3 vocabulary words sharing most trigrams."""
        with _lock:
            if word in self._oov:
                return self._oov[word]
            if self._trigram_index is None:
                idx: dict[str, list[int]] = {}
                for i, w in enumerate(self.words):
                    for g in _trigrams(w):
                        idx.setdefault(g, []).append(i)
                self._trigram_index = idx
            grams = _trigrams(word)
            counts: dict[int, int] = {}
            for g in grams:
                for i in self._trigram_index.get(g, ()):
                    counts[i] = counts.get(i, 0) + 1
            vec = None
            if counts:
                scored = sorted(
                    counts.items(),
                    key=lambda kv: (-kv[1] / (len(grams) + len(_trigrams(self.words[kv[0]])) - kv[1]), kv[0]),
                )[:3]
                vec = self.matrix[[i for i, _ in scored]].mean(axis=0)
                vec = vec / max(float(np.linalg.norm(vec)), 1e-9)
            self._oov[word] = vec
            return vec

    def word_vector(self, word: str) -> Optional[np.ndarray]:
        """Vector of a game word (exact, plural-stripped, multi-word mean, or approximated)."""
        parts = word_parts(word)
        rows = [self._row(p) for p in parts]
        vecs = [self.matrix[r] if r is not None else self._approximate(p) for p, r in zip(parts, rows)]
        found = [v for v in vecs if v is not None]
        if not found:
            return None
        v = np.mean(found, axis=0)
        return v / max(float(np.linalg.norm(v)), 1e-9)

    def text_vector(self, text: str, skip: Iterable[str] = ()) -> Optional[np.ndarray]:
        """Weighted mean vector of the known content words of ``text`` (None if none)."""
        skip = set(skip)
        rows = []
        for tok in tokens(text):
            if tok in STOPWORDS or tok in skip or len(tok) < 3:
                continue
            r = self._row(tok)
            if r is not None:
                rows.append(r)
        if not rows:
            return None
        w = self.weights[rows]
        v = (self.matrix[rows] * w[:, None]).sum(axis=0)
        return v / max(float(np.linalg.norm(v)), 1e-9)

    def nearest(
        self,
        vec: np.ndarray,
        k: int,
        reject: Callable[[str], bool] = lambda w: False,
        max_rank: Optional[int] = None,
    ) -> list[tuple[str, float]]:
        """The ``k`` words most similar to ``vec`` that ``reject`` does not refuse."""
        sims = self.matrix @ vec
        if max_rank is not None:
            sims = sims.copy()
            sims[max_rank:] = -2.0
        m = min(len(sims), max(200, 20 * k))
        top = np.argpartition(-sims, m - 1)[:m]
        order = top[np.lexsort((top, -sims[top]))]  # by similarity, ties by row: deterministic
        out: list[tuple[str, float]] = []
        for i in order:
            w = self.words[int(i)]
            if w in STOPWORDS or reject(w):
                continue
            out.append((w, float(sims[i])))
            if len(out) >= k:
                break
        return out


def shipped_vectors_file():
    """The shipped vectors' resource (``is_file()`` says whether they shipped, without loading them)."""
    return _data("vectors.npz")


@functools.lru_cache(maxsize=1)
def shipped_table() -> VectorTable:
    with shipped_vectors_file().open("rb") as fh:
        z = np.load(fh, allow_pickle=False)
        words = [str(w) for w in z["words"]]
        matrix = z["q"].astype(np.float32) * z["scale"][:, None]
    return VectorTable(words, matrix)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / max(float(np.linalg.norm(a) * np.linalg.norm(b)), 1e-9))
