"""The input of every analysis: the three contract tables, validated once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pandas as pd


@dataclass
class AnalysisData:
    games: pd.DataFrame  # games.parquet (one row per game)
    players: pd.DataFrame  # players.parquet (four rows per game)
    models: Optional[pd.DataFrame] = None  # models.csv: model, provider, family, params_b
    notes: list[str] = field(default_factory=list)  # caveats collected for the report
