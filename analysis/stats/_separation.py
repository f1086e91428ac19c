"""Fixed-effect levels with a constant outcome, and what a logit with those effects does with them.

A level (an experiment, a word pair) whose games are all wins or all losses has an infinite
maximum-likelihood fixed effect: the unconditional logit never converges (Newton steps that
effect by ~1 per iteration) and its games carry no information on the other coefficients
once the effect is in. The field's answer (conditional logit; Stata's ``clogit`` and
``logit``, R's ``fixest::feglm``) is to drop those games and say how many: the finite
coefficients are the limit of the unconditional fit. Dropping one factor's levels can make
another factor's level constant, so the rule is applied until nothing changes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: What a reader is told about a constant outcome: (what is constant, why nothing is estimable).
CONSTANT = "the outcome is constant"


def drop_flat_groups(y, factors: dict[str, np.ndarray], keep=None) -> tuple[np.ndarray, dict[str, list]]:
    """The games left once every level of every factor in ``factors`` (label -> one value per game)
    whose kept games all have the same outcome ``y`` is dropped, repeatedly; and the dropped levels
    per label. ``keep`` (bool per game) restricts the games considered. When every level is
    constant the mask comes back empty (the caller says the outcome does not vary)."""
    y = np.asarray(y, float)
    keep = np.ones(len(y), bool) if keep is None else np.asarray(keep, bool).copy()
    coded = {label: pd.factorize(pd.Series(np.asarray(values, dtype=object)), use_na_sentinel=False)
             for label, values in factors.items()}
    dropped: dict[str, list] = {label: [] for label in factors}
    changed = True
    while changed and keep.any():
        changed = False
        for label, (codes, levels) in coded.items():
            n = np.bincount(codes[keep], minlength=len(levels))
            wins = np.bincount(codes[keep], weights=y[keep], minlength=len(levels))
            flat = (n > 0) & ((wins == 0) | (wins == n))
            if flat.any():
                keep &= ~flat[codes]
                dropped[label] += list(levels[flat])
                changed = True
    return keep, dropped


def flat_note(dropped: dict[str, list], n_games: int) -> str:
    """The note of a fit that dropped games (``drop_flat_groups``): how many and of which levels;
    "" when none."""
    if not n_games:
        return ""
    parts = [f"{len(v)} {label}(s) ({', '.join(map(str, sorted(v, key=str)[:5]))}{', ...' if len(v) > 5 else ''})"
             for label, v in dropped.items() if v]
    return (f"{n_games} game(s) of {' and '.join(parts)} with a constant outcome left out: their fixed effects are infinite "
            "and carry no information on the other terms (as conditional logit)")


def constant_outcome(y) -> str:
    """Why no odds ratio is estimable when every game has the same winner ("" when the outcome varies)."""
    y = np.asarray(y, float)
    if len(y) and y.min() == y.max():
        side = "the impostor" if y[0] == 1 else "the majority"
        return f"not estimable: {CONSTANT} ({side} won every one of the {len(y)} games)"
    return ""
