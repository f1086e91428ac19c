"""Invalid model outputs per model, by class (docs/analysis.md "Invalid outputs").

One row per model (and an ``ALL`` row) over the seats it played: descriptions that
failed enforcement by class (leak, too long, empty; ``other`` for an error text the
harness never writes) and ballots by class (``impostor_bench.core.records.BALLOT_CLASSES``).
Only the invalid classes make up ``*_invalid``; ``ballot_self_vote`` (a legal
self-declaration) and ``ballot_valid`` are listed so that each group sums to
``n_seats``.  Counts come from the player rows of the games the analysis keeps.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from impostor_bench.analysis.ballots import ballot_classes, description_classes
from impostor_bench.analysis.stats._base import prepared, require, table
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.core.parsing import DESCRIPTION_ERROR_CLASSES
from impostor_bench.core.records import BALLOT_CLASSES, INVALID_BALLOT_CLASSES

DESC_COLUMNS = [f"desc_{c}" for c in DESCRIPTION_ERROR_CLASSES]
BALLOT_COLUMNS = [f"ballot_{c}" for c in BALLOT_CLASSES]
COLUMNS = ["model", "n_seats", "desc_invalid", "desc_invalid_pct", *DESC_COLUMNS, "ballot_invalid",
           "ballot_invalid_pct", *BALLOT_COLUMNS]


@table("invalid_outputs", columns=COLUMNS,
    title="Invalid outputs per model by class: descriptions and ballots (docs/rules.md)",
    section="design",
)
def invalid_outputs(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    prep = prepared(data, need_players=True)
    p = data.players
    require(p, ["description_valid"], "players table")
    p = p[p["game_id"].isin(prep.games["game_id"])].drop_duplicates(["game_id", "seat"])
    seats = pd.DataFrame({"model": p["model"].astype(object).to_numpy(),
                          "desc": description_classes(p).to_numpy(), "ballot": ballot_classes(p).to_numpy()})
    d = pd.crosstab(seats["model"], seats["desc"]).reindex(columns=list(DESCRIPTION_ERROR_CLASSES), fill_value=0)
    b = pd.crosstab(seats["model"], seats["ballot"]).reindex(columns=list(BALLOT_CLASSES), fill_value=0)
    out = pd.concat([d.add_prefix("desc_"), b.add_prefix("ballot_")], axis=1)
    out = out.reindex(sorted(seats["model"].unique(), key=str)).fillna(0)
    out.loc["ALL"] = out.sum(axis=0)
    out["n_seats"] = out[BALLOT_COLUMNS].sum(axis=1)
    out["desc_invalid"] = out[DESC_COLUMNS].sum(axis=1)
    out["ballot_invalid"] = out[[f"ballot_{c}" for c in INVALID_BALLOT_CLASSES]].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["desc_invalid_pct"] = 100 * out["desc_invalid"] / out["n_seats"]
        out["ballot_invalid_pct"] = 100 * out["ballot_invalid"] / out["n_seats"]
    out = out.rename_axis("model").reset_index()
    ints = [c for c in COLUMNS if c not in ("model", "desc_invalid_pct", "ballot_invalid_pct")]
    out[ints] = out[ints].astype(np.int64)
    return out[COLUMNS]
