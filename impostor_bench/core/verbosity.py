"""Length controls of a description (O.2's verbosity ablations): a budget and a cut.

``-T length_budget=N`` tightens the paper's 750-character rule to N characters: the same rule,
counted the same way (:func:`impostor_bench.core.glyphs.visible_length`: grapheme clusters,
whitespace runs as one), with the same one re-prompt, which names the budget.
``-T truncate_to=N`` is the verbosity-matched ablation: every valid description is cut to N
characters before the others see it, so voters judge texts of matched length; the original is
recorded beside the cut (``players.description_full``).

Plain Python: no Inspect, MLflow or pandas import.
"""

from __future__ import annotations

from typing import Optional

import regex

from impostor_bench.core.glyphs import visible_text
from impostor_bench.core.model_text import MAX_DESCRIPTION_CHARS

_GRAPHEME = regex.compile(r"\X")


def description_limit(length_budget: Optional[int]) -> int:
    """The characters a description may have: the paper's 750, or a tighter budget."""
    return MAX_DESCRIPTION_CHARS if length_budget is None else min(MAX_DESCRIPTION_CHARS, length_budget)


def truncated(shown: str, limit: int) -> str:
    """A description as the others see it (``descriptions.one_line``) cut to ``limit`` characters
    counted as the length rule counts them: at the last space that keeps it within the limit (no
    word is cut in two, no mark says a cut was made: a voter should not learn who was verbose),
    or, when its first word alone is longer, after ``limit`` grapheme clusters.  Unchanged when
    it fits."""
    text = " ".join(visible_text(shown).split())
    clusters = list(text) if text.isascii() else _GRAPHEME.findall(text)
    if len(clusters) <= limit:
        return text
    head = clusters[: limit + 1]  # one more: a space just after the limit ends a whole word
    spaces = [i for i, c in enumerate(head) if c == " "]
    return "".join(clusters[: spaces[-1]] if spaces else clusters[:limit]).rstrip()
