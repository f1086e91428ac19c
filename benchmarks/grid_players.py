"""Nine simulated players for benchmarks/grid_bench.py: ``reliability/<alias>`` for each of the
paper's models, answering after a fixed latency (``IMPOSTOR_GRID_LATENCY`` seconds, default 1).

A sweep config lists this module under ``imports:``; importing it registers the scripts with the
in-process scripted provider (tests/reliability/scripted.py). The players differ, so the report
has something to estimate: each describes its word by a category (a hash of the word), an
impostor copies the category of the first describer before it with probability ``bluff``, and a
majority voter picks the one player whose category differs from its own with probability
``skill`` (else a random other player). Deterministic per prompt.
"""

from __future__ import annotations

import os
import random
import re
import zlib

from tests.reliability import scripted

MODELS = {  # alias: (skill, bluff)
    "gpt-4o": (0.85, 0.7), "claude-sonnet-4": (0.9, 0.75), "deepseek-v3": (0.8, 0.6),
    "llama-4-maverick": (0.7, 0.5), "llama-4-scout": (0.6, 0.45), "llama-3.1-70b": (0.65, 0.4),
    "gpt-3.5-turbo": (0.45, 0.3), "llama-3.1-405b": (0.75, 0.55), "llama-3.1-8b": (0.35, 0.2),
}
CATEGORIES = ["kitchen", "outdoors", "travel", "school", "sports", "music"]
_LINE = re.compile(r"^Player (\d): .*?kind of ([a-z]+) thing", re.M)


def category(word: str) -> str:
    return CATEGORIES[zlib.crc32(word.encode()) % len(CATEGORIES)]


def _rng(alias: str, call: scripted.Call) -> random.Random:
    return random.Random(zlib.crc32(f"{alias}|{call.attempt}|{call.user}".encode()))


def player(alias: str):
    skill, bluff = MODELS[alias]

    def script(call: scripted.Call) -> str:
        rng = _rng(alias, call)
        seen = dict((int(p), c) for p, c in _LINE.findall(call.user) if int(p) != call.label)
        mine = category(call.word)
        if call.phase == "describe":
            first = next(iter(seen.values()), None)
            cat = first if first is not None and first != mine and rng.random() < bluff else mine
            return f"A common kind of {cat} thing, seen most days."
        others = [p for p in range(1, 5) if p != call.label]
        odd = [p for p, c in seen.items() if c != mine]
        target = odd[0] if len(odd) == 1 and rng.random() < skill else rng.choice(others)
        return scripted.ballot(f"Player {target}", confidence=round(0.5 + 0.4 * rng.random(), 2))

    return script


LATENCY = float(os.environ.get("IMPOSTOR_GRID_LATENCY", "1.0"))
for _alias in MODELS:
    scripted.SCRIPTS[_alias] = player(_alias)
    scripted.LATENCY[_alias] = LATENCY
