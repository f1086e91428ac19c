"""Statistics of the report bundle (paper Appendices B-M; definitions in docs/analysis.md).

``Analysis(data, config)`` (``impostor_bench.analysis.stats.session``) is one analysis of the data:
``a.table(name)`` computes a table once per session, ``a.notes`` collects the caveats.
``TABLES`` maps every bundle table name to its registered function ``fn(a, config) ->
DataFrame`` (an ``AnalysisData`` instead of a session gets a one-off session), whose
leading columns are the data contract's. A table that cannot be computed comes back
empty (contract columns only) with the reason in the session's notes.
"""

from __future__ import annotations


import pandas as pd

from impostor_bench.analysis.data import AnalysisData
# importing the modules registers their tables
from impostor_bench.analysis.stats import balance as _balance  # noqa: F401
from impostor_bench.analysis.stats import categorical as _categorical
from impostor_bench.analysis.stats import coordination as _coordination
from impostor_bench.analysis.stats import cost as _cost  # noqa: F401
from impostor_bench.analysis.stats import descriptions as _descriptions
from impostor_bench.analysis.stats import equation1 as _equation1  # noqa: F401
from impostor_bench.analysis.stats import correlations as _correlations
from impostor_bench.analysis.stats import headline as _headline
from impostor_bench.analysis.stats import inference as _inference  # noqa: F401
from impostor_bench.analysis.stats import invalid_outputs as _invalid_outputs  # noqa: F401
from impostor_bench.analysis.stats import language as _language  # noqa: F401
from impostor_bench.analysis.stats import learning as _learning  # noqa: F401
from impostor_bench.analysis.stats import multiple as _multiple
from impostor_bench.analysis.stats import network as _network
from impostor_bench.analysis.stats import odds as _odds
from impostor_bench.analysis.stats import paper_checks as _paper_checks  # noqa: F401
from impostor_bench.analysis.stats import ratings as _ratings  # noqa: F401
from impostor_bench.analysis.stats import recognition as _recognition
from impostor_bench.analysis.stats import robustness as _robustness
from impostor_bench.analysis.stats import controls as _controls  # noqa: F401 - after robustness: its tables follow robustness's
from impostor_bench.analysis.stats import rounds as _rounds  # noqa: F401
from impostor_bench.analysis.stats import rounds_trust as _rounds_trust  # noqa: F401
from impostor_bench.analysis.stats import recovery as _recovery  # noqa: F401
from impostor_bench.analysis.stats import scaling as _scaling
from impostor_bench.analysis.stats import sizes as _sizes
from impostor_bench.analysis.stats import size_fit_models as _size_fit_models  # noqa: F401
from impostor_bench.analysis.stats import style_adjusted as _style_adjusted  # noqa: F401
from impostor_bench.analysis.stats import table12 as _table12  # noqa: F401
from impostor_bench.analysis.stats import phenotypes as _phenotypes  # noqa: F401 - after table12: its input
from impostor_bench.analysis.stats import speaking as _speaking
from impostor_bench.analysis.stats import team_ballots as _team_ballots  # noqa: F401
from impostor_bench.analysis.stats import ties as _ties
from impostor_bench.analysis.stats._base import ALL, COLUMNS, CONTRACT, REGISTRY, Prepared, StatsUnavailable, prepared, wilson
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.session import Analysis, Table
from impostor_bench.analysis.stats.network import game_metrics, model_network, network_for_game
from impostor_bench.analysis.stats.ties import game_ties

REQUIRED = list(CONTRACT)

TABLES: dict[str, Table] = {
    **{name: REGISTRY[name] for name in REQUIRED},
    **{name: fn for name, fn in REGISTRY.items() if name not in CONTRACT},
}


def compute_all(data: AnalysisData | Analysis, config: StatsConfig | None = None) -> dict[str, pd.DataFrame]:
    """Every table of ``TABLES`` in one session (convenience for the benchmarks)."""
    return Analysis.of(data, config).tables(TABLES, config)


__all__ = [
    "Analysis", "TABLES", "REQUIRED", "COLUMNS", "CONTRACT", "StatsConfig", "StatsUnavailable", "compute_all",
    "network_for_game", "game_metrics", "model_network", "game_ties", "ALL", "Prepared", "prepared", "wilson",
]
