"""Raw model text as the game keeps it: bounded and made safe to record, log and show.

Plain Python: no Inspect, MLflow or pandas import.
"""

from __future__ import annotations

import re

MAX_DESCRIPTION_CHARS = 750
#: The most of one model answer that is kept: a provider that ignores ``max_tokens`` can
#: answer gigabytes (compressible, so a small log that unpacks to gigabytes).  30,000
#: characters (~8k tokens, 40 times the description limit) keeps every answer a model
#: gives within its token limits, a verbose ballot after pages of prose included.
MAX_ANSWER_CHARS = 40 * MAX_DESCRIPTION_CHARS

# ----------------------------------------------------------------- model text

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_model_text(text: str) -> str:
    """Model output made safe to record, log and show to the next player.

    Surrogate pairs are joined into the character they encode, lone surrogates
    (undecodable bytes) become U+FFFD, and control characters other than tab
    and newlines are dropped.  Lone surrogates would otherwise be written to the
    log as literal ``\\udXXX`` escapes and make strict APIs reject the next
    player's request.
    """
    if not text.isascii():
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return _CONTROL.sub("", text)


def bounded_answer(text: str) -> str:
    """A model answer as the game keeps it: cut to ``MAX_ANSWER_CHARS``, then cleaned
    (:func:`clean_model_text`); cutting first bounds the work of every later step."""
    return clean_model_text(text[:MAX_ANSWER_CHARS])
