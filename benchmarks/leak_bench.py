"""The leak rule's cost on plain ASCII descriptions ("no slowdown on plain ASCII").

Every word of configs/word_pairs.json against 400 ASCII descriptions (a mix of the
bots' sentences, near misses and spelled-out words), through ``description_violation``
as the game calls it.  Run it with the code to compare first on the path, e.g.::

    PYTHONPATH=/path/to/old/checkout python benchmarks/leak_bench.py
    PYTHONPATH=$PWD python benchmarks/leak_bench.py

and compare the medians (same machine, back to back).  Prints one line of JSON.
``python benchmarks/leak_bench.py N`` runs N rounds (default 7): under
``valgrind --tool=callgrind`` the instructions of one round are the difference between
N=3 and N=1, halved (a count that does not depend on the machine's load).
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

TEMPLATES = [
    "Something you might come across on an ordinary day.",
    "It is often found near the {a} and people like to {b} it.",
    "A thing with {a}, used mostly when you {b}; many homes have one.",
    "Think of a {a}: small, common, and a bit {b}.",
    "I would describe it as {a}-like, (mostly) {b}, and found in a kitchen!",
    "People talk about it when they are relaxed; <b>{a}</b> comes to mind.",
    "{a} {b} {a}, c-o-n-c-a-t-e-n-a-t-e, [x][y][z] and \"q\" \"r\".",
]


def descriptions(words: list[str], n: int, rng: random.Random) -> list[str]:
    out = []
    for _ in range(n):
        t = rng.choice(TEMPLATES)
        out.append(t.format(a=rng.choice(words), b=rng.choice(words)))
    return out


def main() -> None:
    from impostor_bench.core import parsing
    from impostor_bench.core.parsing import description_violation

    pairs = json.loads((REPO / "configs" / "word_pairs.json").read_text())
    words = sorted({w for tier in pairs.values() for pair in tier for w in pair})
    rng = random.Random(0)
    texts = descriptions(words, 400, rng)
    checked = [(t, w) for t in texts for w in rng.sample(words, 25)]  # 10,000 checks
    assert all(t.isascii() for t, _ in checked)
    t0 = time.perf_counter()
    for t, w in checked:  # first pass: each word's patterns compiled once (where needed), as in an eval
        description_violation(t, w)
    first = time.perf_counter() - t0
    rounds = []
    for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 7):
        t0 = time.perf_counter()
        leaks = sum(description_violation(t, w) is not None for t, w in checked)
        rounds.append(time.perf_counter() - t0)
    print(json.dumps({"code": str(Path(parsing.__file__).resolve().parents[2]), "checks": len(checked),
                      "leaks": leaks, "median_us_per_check": round(statistics.median(rounds) / len(checked) * 1e6, 2),
                      "min_us_per_check": round(min(rounds) / len(checked) * 1e6, 2),
                      "first_pass_us_per_check": round(first / len(checked) * 1e6, 2),
                      "python": sys.version.split()[0]}))


if __name__ == "__main__":
    main()
