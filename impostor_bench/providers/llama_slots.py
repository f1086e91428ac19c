"""Slots of one GGUF model: several llama.cpp contexts with prompt-prefix affinity.

llama.cpp's ``Llama`` keeps the KV cache of its last call and, on the next call,
re-evaluates only the tokens after the longest common prefix (``Llama.generate``'s
"prefix-match hit").  One shared context thrashes when games interleave: a game's
second description call lands after another game's vote and recomputes everything.
``SlotPool`` keeps ``n`` contexts (like ``llama-server``'s parallel slots) and gives
each call the free one whose previous prompt shares the longest prefix with it, so a
game's calls keep extending the KV cache they left behind.  ``Llama`` is not
thread-safe: a slot serves one call at a time; different slots run concurrently
(ctypes releases the GIL during decoding).

Why not ``LlamaRAMCache``: its states copy the whole ``n_batch x n_vocab`` logits
buffer (100 MB for SmolLM2) on every save and load (0.2 s + 0.8 s measured), more
than the prompt it saves (benchmarks/RESULTS.md, "Offline player").
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

# llama.cpp's OpenMP threads spin while idle by default; on a small shared machine
# that starves everything else.  Must be set before llama_cpp is loaded.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@dataclass
class Slot:
    """One llama.cpp context and the text of the last prompt it evaluated."""

    index: int
    llm: Any
    last_prompt: str = ""
    calls: int = 0
    busy: bool = False


def common_prefix_len(a: str, b: str) -> int:
    """Length of the longest common prefix of two strings."""
    return len(os.path.commonprefix([a, b]))


@dataclass
class SlotPool:
    """``n`` contexts of one model file; ``acquire`` picks by prompt-prefix affinity."""

    factory: Callable[[], Any]
    n: int
    slots: list[Slot] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"n_slots must be >= 1, got {self.n}")
        self._cond = threading.Condition()
        self.slots = [Slot(0, self.factory())]  # the rest are created on first need

    def acquire(self, prompt: str) -> Slot:
        """The free slot whose last prompt shares most with ``prompt`` (waits if none is free).

        A fresh slot is created only when every existing one is busy, so a run with no
        concurrency uses one context and keeps all its prefixes in it.
        """
        with self._cond:
            while True:
                free = [s for s in self.slots if not s.busy]
                if free:
                    best = max(free, key=lambda s: (common_prefix_len(s.last_prompt, prompt), -s.calls))
                    best.busy = True
                    return best
                if len(self.slots) < self.n:
                    slot = Slot(len(self.slots), None, busy=True)
                    self.slots.append(slot)
                    break
                self._cond.wait()
        try:
            slot.llm = self.factory()  # outside the lock: loading takes ~0.3 s
        except BaseException:
            with self._cond:
                self.slots.remove(slot)
                self._cond.notify_all()
            raise
        return slot

    def release(self, slot: Slot, prompt: str) -> None:
        with self._cond:
            slot.last_prompt = prompt
            slot.calls += 1
            slot.busy = False
            self._cond.notify_all()
