"""The effects ``impostor simulate`` planted, beside the values the report recovers.

A simulated export carries ``simulated.json`` (the simulate command's arguments; the command
layer passes them in as the manifest's ``source.simulated``). :func:`planted` maps them onto the
bundle's rows: the seat, size and mode odds ratios of Table 2 and the pooled speaking-order
ITT of Table 6. A paper table prints the planted value in a column of its own where it has one.
Table 5 has none: the planted opponent OR is not its estimand (the caption says why).
"""

from __future__ import annotations

from typing import Optional

from impostor_bench.analysis.sim.effects import PAPER_MODE_OR, PAPER_SEAT_OR

__all__ = ["planted", "planted_text"]


def _floats(v) -> list[float]:
    if v is None or v == "":
        return []
    if isinstance(v, (int, float)):
        return [float(v)]
    return [float(x) for x in str(v).split(",") if x.strip()]


def planted(sim: Optional[dict]) -> dict[tuple[str, str, str], float]:
    """(table, row match or "*" for every row, column) -> the planted value, from simulate's
    arguments ``sim`` (empty when the data were not simulated)."""
    if not sim:
        return {}
    out: dict[tuple[str, str, str], float] = {}
    seat = _floats(sim.get("seat_or")) or list(PAPER_SEAT_OR)
    seat = seat * 3 if len(seat) == 1 else seat
    for k, v in enumerate(seat[:3], 1):
        out[("odds_ratios", f"comparison=seat{k}_vs_seat0", "or")] = v
    mode = _floats(sim.get("mode_or"))
    for m, v in PAPER_MODE_OR.items():
        out[("odds_ratios", f"comparison={m}_vs_homogeneous", "or")] = mode[0] if mode else v
    if _floats(sim.get("size_or")):
        out[("odds_ratios", "comparison=size_per_10x", "or")] = _floats(sim.get("size_or"))[0]
    if _floats(sim.get("position_pp")):
        out[("speaking_itt", "mode=ALL;difficulty=ALL", "mid_rand_pp")] = _floats(sim.get("position_pp"))[0]
    return out


def planted_value(values: dict, table: str, match: str, column: str) -> Optional[float]:
    """The planted value of one cell (a per-table value applies to every row)."""
    v = values.get((table, match, column))
    return values.get((table, "*", column)) if v is None else v


def planted_text(sim: Optional[dict]) -> str:
    """One line for the pages: the data are simulated, with which design and planted effects."""
    if not sim:
        return ""
    keys = ("experiments", "games", "seat_or", "mode_or", "size_or", "position_pp", "opponent_or", "pair_effect_sd",
            "experiment_effect_sd", "seed")
    args = ", ".join(f"{k}={sim.get(k) if sim.get(k) is not None else 'paper default'}" for k in keys if k in sim)
    return (f"Simulated data (`impostor simulate`, simulated.json: {args}). Tables 2 and 6 set the planted effect "
            "beside each recovered one (Table 5's caption says why it does not).")
