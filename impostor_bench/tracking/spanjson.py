"""One C JSON encoder made once, for the spans of traces (``traces``) and their stored rows
(``tracestore``): both encode thousands of small dicts per run, where ``json.dumps``'s set-up
per call cost more than the encoding (benchmarks/RESULTS.md, traces)."""

from __future__ import annotations

import json
from typing import Any, Callable


def json_encoder(ensure_ascii: bool = True, default: Callable[[Any], Any] = json.JSONEncoder().default
                 ) -> Callable[[Any], str]:
    """``json.dumps(v, ensure_ascii=..., default=...)`` (without its check for circular
    references: for the acyclic dicts of spans) through one C encoder made once: its set-up
    per call (what ``JSONEncoder.encode`` does) cost more than encoding a span's attributes."""
    make = json.encoder.c_make_encoder  # type: ignore[attr-defined]
    if make is None:  # a Python without the C accelerator
        return json.JSONEncoder(ensure_ascii=ensure_ascii, default=default).encode
    encode = make(None, default, json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring,
                  None, ": ", ", ", False, False, True)
    return lambda v: "".join(encode(v, 0))
