"""Argument types shared by subcommands: numbers checked where argparse reads them.

argparse's ``type=float`` takes ``nan`` and ``inf`` and ``type=int`` any size, which then
fail deep inside a computation (``cannot convert float NaN to integer``) or run for ever.
A bad value here is argparse's one line (``impostor power: error: argument --or: ...``), exit 2.
"""

from __future__ import annotations

import argparse
import math
from typing import Callable


def finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; fix: e.g. 0.8") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number; fix: give a number such as 0.8")
    return value


def whole(low: int, high: int) -> Callable[[str], int]:
    """A whole number in [low, high]."""

    def parse(text: str) -> int:
        if len(text.strip()) > 20:  # bounded before int() (Python's digit limit raises past 4,300)
            raise argparse.ArgumentTypeError(f"{text[:20]!r}... is too large; fix: use {low:,} to {high:,}")
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; fix: use {low:,} to {high:,}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value:,} is out of range; fix: use {low:,} to {high:,}")
        return value

    parse.__name__ = "whole number"
    return parse


def seconds(high: float) -> Callable[[str], float]:
    """A duration in seconds in [0, high] (0 is each command's 'no limit'); nan, inf and
    negative values are refused here, not deep inside (``math.ceil(inf)``, Inspect's timeouts)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds; fix: e.g. 120") from None
        if not (math.isfinite(value) and 0 <= value <= high):
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds from 0 to {high:,.0f}; fix: e.g. 120")
        return value

    parse.__name__ = "seconds"
    return parse
