"""The input of every analysis: the three contract tables, validated once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import pandas as pd


@dataclass
class AnalysisData:
    games: pd.DataFrame  # games.parquet (one row per game)
    players: pd.DataFrame  # players.parquet (four rows per game)
    models: Optional[pd.DataFrame] = None  # models.csv: model, provider, family, params_b
    notes: list[str] = field(default_factory=list)  # caveats collected for the report
    # word vectors (``encode(words, normalize_embeddings=True)``) the command layer passes in
    # for the semantic-distance tables (positive_control); None = not available
    embedder: Optional[Any] = None
    # moves.parquet (one row per game, round and seat); None = not in the export
    # (impostor_bench.analysis.moves.moves_of derives it from players for one-round games)
    moves: Optional[pd.DataFrame] = None


@dataclass(frozen=True)
class Embedder:
    """Word vectors for Fig. 3 and the semantic-distance tables: ``model.encode(list[str],
    normalize_embeddings=True)`` gives unit rows (KeyError for a word it lacks); without a model,
    ``why_missing`` says why in the figure's note. Here, not in ``figures``: the command layer
    builds one before the tables, and importing ``figures`` imports matplotlib."""

    model: Any = None
    why_missing: str = "no word vectors were given to the report (the command layer passes them)"


def index_positions(index: pd.Index, values: pd.Series) -> np.ndarray:
    """``index.get_indexer(values)`` (-1 = absent); a categorical column is looked up once per
    category, not once per row (3.6 M player rows at 10x the paper)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes = values.cat.codes.to_numpy()
        pos = index.get_indexer(np.asarray(values.cat.categories, dtype=object))
        return np.where(codes >= 0, pos[np.maximum(codes, 0)], -1)
    return index.get_indexer(values.to_numpy(dtype=object))
