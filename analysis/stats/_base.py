"""Shared plumbing of the statistics tables: contract columns, the table registry,
the session helpers (notes, memo), the prepared (vectorised) view of the games and small helpers.

Every table function is registered with :func:`table`; the session
(:class:`impostor_bench.analysis.stats.session.Analysis`) computes it once per (table, StatsConfig)
through :func:`run_table`, the one error wrapper (a caller's own table functions in the report go
through it too), which

* turns :class:`StatsUnavailable` ("cannot compute: <reason>") into an empty table
  with the contract columns plus a note of the table;
* turns any other error into the same (unless ``config.strict``) and records it as the table's
  error: the report writes the rest of the bundle, then ``impostor report``
  exits non-zero naming the table (``--keep-going`` to explore anyway);
* puts the contract's leading columns first.

The declaration (title, report section, printed inference, figures, round tables) is a
:class:`~impostor_bench.analysis.stats.declaration.TableSpec`, kept on the registered function as ``spec``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional, cast

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from impostor_bench.analysis.data import AnalysisData
from impostor_bench.analysis.stats._seats import N_SEATS, attach_seat_arrays, player_slots, str_col  # noqa: F401 - N_SEATS re-exported
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.declaration import Inference, TableSpec
from impostor_bench.analysis.stats.session import REGISTRY, Analysis, Table  # noqa: F401 - REGISTRY re-exported
from impostor_bench.core.records import DIFFICULTIES, MODES  # noqa: F401 - re-exported to the tables

ALL = "ALL"

# Leading columns of the report bundle's tables (docs/data-contract.md, section 2).
CONTRACT: dict[str, list[str]] = {
    "headline": ["model", "imp_win_pct", "imp_win_ci", "maj_win_pct", "maj_win_ci", "det_acc_pct",
                 "det_acc_ci", "centrality", "reach", "coal_eff_pct", "n_imp_games", "n_maj_seats"],
    "odds_ratios": ["comparison", "or", "ci_low", "ci_high", "p"],
    "evalues": ["comparison", "or", "evalue"],
    "chi2": ["test", "chi2", "df", "p", "cramers_v", "magnitude"],
    "balance": ["mode", "p_imp", "balance"],
    "tie_sizes": ["mode", "ties", "k2", "k3", "k4", "impostor_in_tie_pct"],
    "tiebreak_mode": ["mode", "default", "sym_cand", "sym_side", "delta_cand", "delta_side", "ties"],
    "tiebreak_mode_difficulty": ["mode", "difficulty", "default", "sym_cand", "sym_side", "delta_cand",
                                 "delta_side", "ties"],
    "speaking_itt": ["mode", "difficulty", "n", "n_mid", "mid_rand_pp", "ci_low", "ci_high", "p"],
    "opponent_baseline": ["model", "difficulty", "or_per_10pp", "ci_low", "ci_high", "q"],
    "scaling": ["fit", "or_per_10x", "ci_low", "ci_high", "p"],
    "coordination": ["model", "brokerage", "vote_coord_pct", "self_decl_pct", "guess_succ_pct"],
    "correlations": ["x", "y", "n", "pearson_r", "pearson_ci_low", "pearson_ci_high", "spearman_rho",
                     "spearman_p"],
    "bootstrap": ["quantity", "estimate", "ci_low", "ci_high", "reps"],
    "permutation": ["contrast", "observed", "p", "reps"],
    "multiple_comparisons": ["family", "hypothesis", "p", "p_bh", "p_bonferroni", "p_holm"],
}

COLUMNS: dict[str, list[str]] = dict(CONTRACT)


class StatsUnavailable(Exception):
    """Raised inside a table function when it cannot be computed; the message is the reason."""


# --------------------------------------------------------------------------- notes, memo and the one error wrapper


def note(data: Analysis, msg: str) -> None:
    """Add a human-readable caveat once to the notes of the table being computed (``Analysis.note``)."""
    Analysis.of(data).note(msg)


def memo(data: Analysis, key: tuple, fn: Callable[[], object], *, per_table: bool = False):
    """Memoise an intermediate result (e.g. bootstrap weights) in the session (``Analysis.memo``)."""
    return Analysis.of(data).memo(key, fn, per_table=per_table)


def empty(name: str) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in COLUMNS.get(name, ["value"])})


def _lead(df: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    df = df.copy()
    for c in cols:
        if c not in df.columns:
            df[c] = np.nan
    rest = [c for c in df.columns if c not in cols]
    return df[cols + rest].reset_index(drop=True)


def contract_first(names: Iterable[str]) -> list[str]:
    """``names`` with the data contract's tables first, in the contract's order (the report's order)."""
    names = list(names)
    return [n for n in CONTRACT if n in names] + [n for n in names if n not in CONTRACT]


def run_table(name: str, fn: Callable[[Analysis, StatsConfig], pd.DataFrame], analysis: Analysis,
              config: StatsConfig, *, lead: bool = True) -> pd.DataFrame:
    """``fn(analysis, config)`` as table ``name``; what it cannot compute, or a bug, is an empty table with a
    note (a bug also an error, or raised when ``config.strict``). ``lead``: the declared columns first."""
    try:
        out = fn(analysis, config)
        if out is not None and not isinstance(out, pd.DataFrame):
            raise TypeError(f"returned {type(out).__name__}, not a DataFrame")
        if out is None or len(out) == 0:
            out = empty(name)
    except StatsUnavailable as e:  # a reason already led by the table's name keeps it once
        why = str(e)
        analysis.note(f"{name}: not computed: {why.removeprefix(name + ': ')}")
        out = empty(name)
    except Exception as e:  # a bug, not the data: the report names it and exits non-zero
        if getattr(config, "strict", False):
            raise
        analysis.note(f"{name}: failed ({type(e).__name__}: {e}); table left empty")
        analysis.error(f"Table {name} failed: {type(e).__name__}: {e}")
        out = empty(name)
    return _lead(out, COLUMNS[name]) if lead and name in COLUMNS else out


def table(name: str, columns: Optional[list[str]] = None, *, title: str, section: str,
          inference: Iterable[Inference] = (), figures: Optional[dict[str, str]] = None, rounds: bool = False,
          groups: str = "paper", needs: tuple[str, ...] | Callable[[], Iterable[str]] = (),
          ) -> Callable[[Callable[[Analysis, StatsConfig], pd.DataFrame]], Table]:
    """Register ``fn(analysis, config) -> DataFrame`` under ``name`` with its declaration
    (:class:`TableSpec`); the registered function takes a session (its cached table) or an
    ``AnalysisData`` (a one-off session)."""
    if columns is None and name not in COLUMNS:
        raise KeyError(f"no column spec for table {name!r}")
    cols = list(COLUMNS[name] if columns is None else columns)
    spec = TableSpec(name, tuple(cols), title, section, tuple(inference), dict(figures or {}), rounds, groups,
                     needs if callable(needs) else tuple(needs))
    COLUMNS[name] = cols  # only once the declaration is valid

    def deco(fn: Callable[[Analysis, StatsConfig], pd.DataFrame]) -> Table:
        from impostor_bench.analysis.stats.groups import for_groups

        fn = for_groups(name, groups, fn)  # a "paper" table leaves other group sizes out, with a note

        def compute(analysis: Analysis, config: StatsConfig) -> pd.DataFrame:
            return run_table(name, fn, analysis, config)

        @functools.wraps(fn)
        def wrapper(data: AnalysisData | Analysis, config: Optional[StatsConfig] = None) -> pd.DataFrame:
            return Analysis.of(data, config).table(name, config)

        registered = cast(Table, wrapper)  # a function: it becomes a Table with the two attributes set here
        registered.table_name = name
        registered.compute = compute
        registered.spec = spec
        REGISTRY[name] = registered
        return registered

    return deco


# --------------------------------------------------------------------------- helpers


def wilson(count, nobs, alpha: float = 0.05):
    """Wilson score interval (statsmodels) -> (low, high) arrays; NaN where nobs == 0."""
    count = np.asarray(count, dtype=float)
    nobs = np.asarray(nobs, dtype=float)
    ok = nobs > 0
    lo = np.full(count.shape, np.nan)
    hi = np.full(count.shape, np.nan)
    if np.any(ok):
        l, h = proportion_confint(count[ok], nobs[ok], alpha=alpha, method="wilson")
        lo[ok], hi[ok] = l, h
    return lo, hi


def require_reps(config: StatsConfig, *, bootstrap: bool = False, permutation: bool = False) -> None:
    """StatsUnavailable when a table's resampling was asked for with 0 replicates (``--bootstrap-reps 0``)."""
    for used, name in ((bootstrap, "bootstrap_reps"), (permutation, "permutation_reps")):
        if used and getattr(config, name) < 1:
            raise StatsUnavailable(f"{name} is {getattr(config, name)}: no replicates to draw")


def require(df: Optional[pd.DataFrame], cols, what: str) -> None:
    if df is None:
        raise StatsUnavailable(f"{what} is missing")
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise StatsUnavailable(f"{what} lacks column(s) {', '.join(missing)}")


# --------------------------------------------------------------------------- prepared data

GAME_CORE = ["experiment_id", "game_id", "mode", "difficulty", "impostor_seat", "impostor_model",
             "impostor_speaking_position", "winner"]
PLAYER_CORE = ["game_id", "seat", "model", "role", "vote", "self_declared"]


@dataclass
class Prepared:
    """Column-oriented view of the games: one row per game, (N, 4) arrays per seat."""

    games: pd.DataFrame  # contract games, index 0..N-1
    n: int
    y: np.ndarray  # (N,) 1 = impostor won (logged winner, default rule)
    imp_seat: np.ndarray  # (N,) int
    imp_pos: np.ndarray  # (N,) int speaking position of the impostor (-1 = unknown)
    mode: np.ndarray  # (N,) object
    difficulty: np.ndarray  # (N,) object
    exp_code: np.ndarray  # (N,) int code of experiment_id
    exp_names: np.ndarray  # experiment ids by code
    exp_mode: np.ndarray  # mode of each experiment (first game)
    exp_difficulty: np.ndarray
    imp_model: np.ndarray  # (N,) object
    # per-seat arrays (N, 4); absent seats are invalid ballots of unknown model
    present: Optional[np.ndarray] = None
    vote: Optional[np.ndarray] = None  # float, NaN = no counted vote (invalid, missing, or a self-vote)
    ballot_class: Optional[np.ndarray] = None  # object, impostor_bench.core.records.BALLOT_CLASSES; "missing" where absent
    self_decl: Optional[np.ndarray] = None
    is_imp: Optional[np.ndarray] = None
    model: Optional[np.ndarray] = None  # object, None where absent
    team: Optional[np.ndarray] = None  # object, None where no team
    speak_pos: Optional[np.ndarray] = None  # float, NaN where absent
    word_guess: Optional[np.ndarray] = None
    description: Optional[np.ndarray] = None
    #: what is computed from these arrays alone, once (e.g. ``_marginal.design_index``'s design rows)
    derived: dict = field(default_factory=dict, repr=False)

    @property
    def has_players(self) -> bool:
        return self.vote is not None


def majority_models(prep: Prepared) -> np.ndarray:
    """(N, 4) object: the model of each majority seat; None at the impostor's and at absent seats."""
    if prep.is_imp is None or prep.present is None or prep.model is None:
        raise StatsUnavailable(prep.games.attrs.get("players_reason", "players table unavailable"))
    # numpy's stubs reject None, which np.where takes as an object scalar
    return np.where(prep.is_imp | ~prep.present, None, prep.model)  # type: ignore[call-overload]


def prepared(data: Analysis, need_players: bool = False) -> Prepared:
    prep = memo(data, ("prepared",), lambda: _prepare(data))
    if isinstance(prep, StatsUnavailable):
        raise prep
    if need_players and not prep.has_players:
        raise StatsUnavailable(prep.games.attrs.get("players_reason", "players table unavailable"))
    return prep


def _drop_bad_games(data: Analysis, g: pd.DataFrame):
    """Games with a duplicated id, a winner not impostor/majority or a seat outside 0-3 dropped (with notes)."""
    if g["game_id"].duplicated().any():
        note(data, f"games: {int(g['game_id'].duplicated().sum())} duplicated game_id rows dropped")
        g = g[~g["game_id"].duplicated()].reset_index(drop=True)
    winner = g["winner"].astype(object)
    bad = ~winner.isin(["impostor", "majority"])
    if bad.any():
        note(data, f"games: {int(bad.sum())} games with winner not in (impostor, majority) dropped")
        g = g[~bad.to_numpy()].reset_index(drop=True)
        if len(g) == 0:
            return StatsUnavailable("no game has a valid winner")
    seat_num = pd.to_numeric(g["impostor_seat"], errors="coerce")
    bad = ~seat_num.isin([0, 1, 2, 3]).to_numpy()
    if bad.any():
        note(data, f"games: {int(bad.sum())} games with impostor_seat outside 0-3 dropped")
        g = g[~bad].reset_index(drop=True)
        if len(g) == 0:
            return StatsUnavailable("no game has a valid impostor_seat")
    return g


def _prepared_games(data: Analysis, g: pd.DataFrame) -> Prepared:
    """The per-game arrays; a speaking position outside 0-3 becomes -1 (left out of those analyses)."""
    pos = pd.to_numeric(g["impostor_speaking_position"], errors="coerce")
    bad_pos = ~pos.isin([0, 1, 2, 3]).to_numpy()
    if bad_pos.any():
        note(data, f"games: {int(bad_pos.sum())} games with impostor_speaking_position outside 0-3 are left "
                   "out of the speaking-order analyses")
    n = len(g)
    exp_code, exp_names = pd.factorize(g["experiment_id"].astype(object), sort=True)
    first = pd.Series(np.arange(n)).groupby(exp_code).first().to_numpy()
    mode = str_col(g["mode"])
    diff = str_col(g["difficulty"])
    return Prepared(
        games=g, n=n,
        y=(g["winner"].astype(object) == "impostor").to_numpy(dtype=np.int64),
        imp_seat=pd.to_numeric(g["impostor_seat"]).to_numpy(dtype=np.int64),
        imp_pos=np.where(bad_pos, -1, pos.fillna(-1).to_numpy(dtype=float)).astype(np.int64),
        mode=mode, difficulty=diff,
        exp_code=exp_code.astype(np.int64), exp_names=np.asarray(exp_names, dtype=object),
        exp_mode=mode[first], exp_difficulty=diff[first],
        imp_model=str_col(g["impostor_model"]),
    )


def _prepare(data: Analysis):
    try:
        require(data.games, GAME_CORE, "games table")
    except StatsUnavailable as e:
        return e
    g = data.games.reset_index(drop=True)
    if len(g) == 0:
        return StatsUnavailable("games table is empty")
    g = _drop_bad_games(data, g)
    if isinstance(g, StatsUnavailable):
        return g
    prep = _prepared_games(data, g)
    p = data.players
    try:
        require(p, PLAYER_CORE, "players table")
    except StatsUnavailable as e:
        g.attrs["players_reason"] = str(e)
        return prep
    notes: list[str] = []
    p, flat = player_slots(g, p, notes)
    attach_seat_arrays(prep, p, flat, notes)
    for msg in notes:
        note(data, msg)
    return prep


def design_codes(values: np.ndarray, ref=None, levels=None):
    """Treatment-coded dummy matrix (drop the reference level) -> (matrix, names)."""
    vals = pd.Series(values, dtype=object)
    if levels is None:
        levels = sorted(vals.dropna().unique(), key=str)
    levels = list(levels)
    if ref is None:
        ref = levels[0]
    others = [lv for lv in levels if lv != ref]
    codes = pd.Categorical(vals, categories=levels).codes
    mat = np.zeros((len(vals), len(others)))
    for j, lv in enumerate(others):
        mat[:, j] = codes == levels.index(lv)
    return mat, others


def ordered_levels(values, preferred) -> list:
    """Levels present in ``values``: the preferred ones first (in that order), then the rest."""
    present = pd.unique(pd.Series(values, dtype=object).dropna())
    out = [v for v in preferred if v in set(present)]
    return out + sorted((v for v in present if v not in set(preferred)), key=str)


def models_meta(data: Analysis) -> pd.DataFrame:
    """models.csv indexed by model: provider, family, params_b (float, NaN if unknown)."""
    if data.models is None or len(data.models) == 0:
        raise StatsUnavailable("models.csv (model, provider, family, params_b) was not provided")
    require(data.models, ["model", "params_b"], "models.csv")
    m = data.models.copy()
    m["model"] = m["model"].astype(object)
    m = m.drop_duplicates("model").set_index("model")
    m["params_b"] = pd.to_numeric(m["params_b"], errors="coerce")
    m.loc[m["params_b"] <= 0, "params_b"] = np.nan
    for c in ("provider", "family"):
        if c not in m.columns:
            m[c] = None
        m[c] = m[c].astype(object).where(m[c].notna(), None)
    return m


def impostor_log10_params(data: Analysis, prep: Prepared, what: str) -> np.ndarray:
    """log10(params_b) of each game's impostor model (NaN when unknown), with a note."""
    meta = models_meta(data)
    x = np.log10(pd.Series(prep.imp_model, dtype=object).map(meta["params_b"]).to_numpy(dtype=float))
    unknown = sorted({m for m, v in zip(prep.imp_model, x) if not np.isfinite(v)}, key=str)
    if unknown:
        note(data, f"{what}: games whose impostor model has no params_b in models.csv are left out "
                   f"({', '.join(map(str, unknown))})")
    return x
