"""Validating the game tables against the record schema into an ``AnalysisData``.

Every problem raises :class:`impostor_bench.core.errors.ImpostorError` whose message names
the file, the column (or field) and the fix.  The checks follow the record
schema (``impostor_bench.core.records``): the contract columns must be present and
coercible to their types, categorical values must be valid, and the two tables
must describe the same games (four seats each, exactly one impostor, the
impostor seat/model/speaking position agreeing between the tables).
"""

from __future__ import annotations

from typing import Iterable, Optional

import numpy as np
import pandas as pd

from impostor_bench.analysis.ballots import ballot_classes
from impostor_bench.analysis.data import AnalysisData, index_positions
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.group import (MAX_PLAYERS, MIN_PLAYERS, PAPER_IMPOSTORS, PAPER_PLAYERS, conviction_threshold,
                                       max_impostors)
from impostor_bench.core.records import (
    BALLOT_CLASSES,
    CONTRACT_GAME_COLUMNS,
    CONTRACT_PLAYER_COLUMNS,
    DIFFICULTIES,
    GAMES_FILE,
    LEGAL_BALLOT_CLASSES,
    MODELS_FILE,
    MODES,
    MAX_SEATS,
    PLAYERS_FILE,
    WIN_CONDITIONS,
    WINNER_OF,
)

__all__ = ["MODEL_COLUMNS", "FIX_EXPORT", "validate_tables"]

MODEL_COLUMNS = ["model", "provider", "family", "params_b"]
FIX_EXPORT = "re-export the tables with `impostor export` (see docs/data-contract.md)"
_MAX_SHOWN = 5

# Column kinds of the contract columns.
_GAME_INT = ["game_index", "impostor_seat", "impostor_speaking_position"]
_GAME_STR = [c for c in CONTRACT_GAME_COLUMNS if c not in _GAME_INT]
_PLAYER_INT = ["seat", "speaking_position"]
_PLAYER_BOOL = ["description_valid", "self_declared"]
_PLAYER_NULLABLE_STR = ["team", "word_guess"]
_PLAYER_STR = ["game_id", "model", "role", "description"]


class _Problems:
    """Collects problems of one file; raises one ImpostorError naming file, column and fix."""

    def __init__(self, file: str):
        self.file = file
        self.items: list[str] = []

    def add(self, column: str, problem: str, fix: str) -> None:
        self.items.append(f"column '{column}': {problem}; fix: {fix}")

    def raise_if_any(self) -> None:
        if not self.items:
            return
        first = self.items[0]
        more = ""
        if len(self.items) > 1:
            shown = " | ".join(self.items[1:_MAX_SHOWN])
            extra = len(self.items) - _MAX_SHOWN
            more = f" (also: {shown}" + (f" | and {extra} more" if extra > 0 else "") + ")"
        raise ImpostorError(f"{self.file}: {first}{more}")


def _examples(values: Iterable, limit: int = 3) -> str:
    vals = list(dict.fromkeys(map(repr, values)))
    shown = ", ".join(vals[:limit])
    return shown + (", ..." if len(vals) > limit else "")


def _rows(mask: np.ndarray, limit: int = 3) -> str:
    idx = np.flatnonzero(mask)
    shown = ", ".join(str(i) for i in idx[:limit])
    return f"row{'s' if idx.size > 1 else ''} {shown}" + (f" (+{idx.size - limit} more)" if idx.size > limit else "")


# --------------------------------------------------------------------------- columns


def _coerce_int(df: pd.DataFrame, col: str, probs: _Problems, lo: int | None = None, hi: int | None = None) -> None:
    s = df[col]
    num = pd.to_numeric(s, errors="coerce")
    bad = num.isna().to_numpy() | (num.notna().to_numpy() & (num.fillna(0) % 1 != 0).to_numpy())
    if bad.any():
        probs.add(col, f"{int(bad.sum())} value(s) are not integers ({_rows(bad)}: {_examples(s[bad])})",
                  f"store whole numbers{'' if lo is None else f' {lo}-{hi}'} in '{col}'")
        return
    num = num.astype(np.int64)
    if lo is not None:
        out = ((num < lo) | (num > hi)).to_numpy()
        if out.any():
            probs.add(col, f"{int(out.sum())} value(s) outside {lo}-{hi} ({_rows(out)}: {_examples(num[out])})",
                      f"use seat/position numbers {lo}-{hi}")
            return
    df[col] = num


def _coerce_str(df: pd.DataFrame, col: str, probs: _Problems, nullable: bool = False,
                allowed: Optional[Iterable[str]] = None) -> None:
    s = df[col]
    if isinstance(s.dtype, pd.CategoricalDtype):  # text read dictionary-encoded: check the categories
        _check_categorical_str(s, col, probs, nullable, allowed)
        return
    na = s.isna().to_numpy()
    if not nullable and na.any():
        probs.add(col, f"{int(na.sum())} missing value(s) ({_rows(na)})", f"fill every row of '{col}'")
        return
    if s.dtype != object and not pd.api.types.is_string_dtype(s):
        if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
            # numbers in a text column: accepted as their text (ids like 17)
            s = s.astype(object).where(~na, None).map(lambda v: v if v is None else str(v))
    bad_type = np.array([not (v is None or isinstance(v, str) or (isinstance(v, float) and np.isnan(v))) for v in s], bool) if s.dtype == object else np.zeros(len(s), bool)
    if bad_type.any():
        probs.add(col, f"{int(bad_type.sum())} value(s) are not text ({_rows(bad_type)})", f"store text in '{col}'")
        return
    s = s.astype("str" if not nullable else object)
    if nullable:
        s = s.where(~na, None)
    if allowed is not None:
        allowed = list(allowed)
        bad = ~na & ~s.isin(allowed).to_numpy()
        if bad.any():
            probs.add(col, f"invalid value(s) {_examples(s[bad])} ({_rows(bad)})",
                      f"use one of {', '.join(allowed)}" + (" or leave empty" if nullable else ""))
            return
    df[col] = s


def _check_categorical_str(s: pd.Series, col: str, probs: _Problems, nullable: bool,
                           allowed: Optional[Iterable[str]]) -> None:
    """A categorical text column: the checks of ``_coerce_str`` on its categories and codes (kept
    categorical: one copy of each distinct value instead of one per row)."""
    codes = s.cat.codes.to_numpy()
    na = codes < 0
    if not nullable and na.any():
        probs.add(col, f"{int(na.sum())} missing value(s) ({_rows(na)})", f"fill every row of '{col}'")
        return
    cats = s.cat.categories

    def per_row(per_category: np.ndarray) -> np.ndarray:
        """A per-category flag per row (False for a null): codes of -1 index the appended False,
        so a column with no categories at all (only nulls) needs no special case."""
        return np.append(per_category.astype(bool), False)[codes]

    if not all(isinstance(v, str) for v in cats):
        bad_type = ~na & ~per_row(np.array([isinstance(v, str) for v in cats], bool))
        probs.add(col, f"{int(bad_type.sum())} value(s) are not text ({_rows(bad_type)})", f"store text in '{col}'")
        return
    if allowed is not None:
        allowed = list(allowed)
        bad = ~na & ~per_row(np.isin(np.asarray(cats, dtype=object), allowed))
        if bad.any():
            probs.add(col, f"invalid value(s) {_examples(s[bad])} ({_rows(bad)})",
                      f"use one of {', '.join(allowed)}" + (" or leave empty" if nullable else ""))


def _coerce_bool(df: pd.DataFrame, col: str, probs: _Problems) -> None:
    s = df[col]
    if pd.api.types.is_bool_dtype(s) and not s.isna().any():
        df[col] = s.astype(bool)
        return
    # 1 and 0 find the True and False keys (equal, same hash)
    mapping = {True: True, False: False, "true": True, "false": False,
               "True": True, "False": False, "1": True, "0": False}
    mapped = s.map(lambda v: mapping.get(v, None) if not (isinstance(v, float) and np.isnan(v)) and v is not pd.NA else None)
    bad = mapped.isna().to_numpy()
    if bad.any():
        probs.add(col, f"{int(bad.sum())} value(s) are not true/false ({_rows(bad)}: {_examples(s[bad])})",
                  f"store booleans in '{col}'")
        return
    df[col] = mapped.astype(bool)


def _missing_columns(df: pd.DataFrame, required: list[str], probs: _Problems, what: str) -> bool:
    missing = [c for c in required if c not in df.columns]
    for c in missing:
        probs.add(c, f"required {what} column is missing", f"add '{c}' ({FIX_EXPORT})")
    return bool(missing)


def _ballot_class_column(players: pd.DataFrame, probs: _Problems, notes: list[str], name: str) -> None:
    """Check an export's ``ballot_class`` (an extra column) or derive it where it is absent
    (exports written before it existed), and make ``ballot_valid`` agree with it."""
    given = "ballot_class" in players.columns
    if given:
        s = players["ballot_class"].astype(object)
        bad = s.notna().to_numpy() & ~s.isin(BALLOT_CLASSES).to_numpy()
        if bad.any():
            probs.add("ballot_class", f"invalid value(s) {_examples(s[bad])} ({_rows(bad)})",
                      f"use one of {', '.join(BALLOT_CLASSES)}, or leave it empty to derive it")
            return
    if given and "ballot_valid" in players.columns:
        _coerce_bool(players, "ballot_valid", probs)
        if probs.items:
            return
        cls = players["ballot_class"].astype(object)
        mism = (cls.notna() & (players["ballot_valid"] != cls.isin(LEGAL_BALLOT_CLASSES))).to_numpy()
        if mism.any():
            probs.add("ballot_valid", f"{int(mism.sum())} value(s) disagree with ballot_class ({_rows(mism)})",
                      f"ballot_valid is true exactly for the legal classes {', '.join(LEGAL_BALLOT_CLASSES)}; "
                      f"{FIX_EXPORT}")
            return
    if given and isinstance(players["ballot_class"].dtype, pd.CategoricalDtype) and players["ballot_class"].notna().all():
        classes = players["ballot_class"]  # recorded on every row and checked above: kept as read
    else:
        classes = ballot_classes(players)
    if not given or players["ballot_class"].isna().any():
        notes.append(f"{name}: ballot_class was absent for some rows (written before it existed) and was derived "
                     "from vote, ballot_error, self_declared and ballot_valid (docs/rules.md, Ballot classes).")
    players["ballot_class"] = classes
    players["ballot_valid"] = classes.isin(LEGAL_BALLOT_CLASSES).to_numpy()


def _validate_games(games: pd.DataFrame, name: str, notes: list[str]) -> None:
    """Contract columns present and typed, mode/difficulty/winner valid, game_id unique."""
    gp = _Problems(name)
    if not _missing_columns(games, CONTRACT_GAME_COLUMNS, gp, "games"):
        if len(games) == 0:
            gp.add("game_id", "the table has no rows", "export at least one finished game")
        else:
            for c in _GAME_INT:
                _coerce_int(games, c, gp, *( (0, MAX_SEATS - 1) if c != "game_index" else (0, 2**62) ))
            _group_columns(games, gp)
            _language_column(games)
            for c in _GAME_STR:
                allowed = {"mode": MODES, "difficulty": DIFFICULTIES, "winner": ("impostor", "majority")}.get(c)
                _coerce_str(games, c, gp, allowed=allowed)
            if not gp.items:
                dup = games["game_id"].duplicated(keep=False).to_numpy()
                if dup.any():
                    gp.add("game_id", f"{int(dup.sum())} rows share a game_id ({_examples(games['game_id'][dup])})",
                           "make game_id unique over the whole export (drop duplicated runs)")
                unknown = sorted(set(games["win_condition"].unique()) - set(WIN_CONDITIONS))
                if unknown:
                    notes.append(f"{name}: unknown win_condition value(s) {unknown}; kept as given.")
                _check_winner(games, gp)
    gp.raise_if_any()


def _group_columns(games: pd.DataFrame, gp: _Problems) -> None:
    """``n_players``/``n_impostors``/``impostor_seats`` (the group size, docs/data-contract.md): an
    export written before they existed holds the paper's four players and one impostor."""
    for col, default, lo, hi in (("n_players", PAPER_PLAYERS, MIN_PLAYERS, MAX_PLAYERS),
                                 ("n_impostors", PAPER_IMPOSTORS, 1, max_impostors(MAX_PLAYERS))):
        if col not in games.columns:
            games[col] = np.int64(default)
        else:
            games[col] = games[col].fillna(default) if games[col].isna().any() else games[col]
            _coerce_int(games, col, gp, lo, hi)
    if "impostor_seats" not in games.columns:
        games["impostor_seats"] = None


def _language_column(games: pd.DataFrame) -> None:
    """``language`` (docs/data-contract.md): an export written before it existed, or a game without
    it, was played in English, the paper's language."""
    if "language" not in games.columns:
        games["language"] = "en"
    elif games["language"].isna().any():
        games["language"] = games["language"].astype(object).where(games["language"].notna(), "en")


def _check_winner(games: pd.DataFrame, gp: _Problems) -> None:
    """``winner`` is the side its (known) ``win_condition`` makes the winner (WINNER_OF): a
    swapped winner would silently invert every win rate; the first bad row is named."""
    want = games["win_condition"].astype(object).map(WINNER_OF)
    bad = (want.notna() & (games["winner"].astype(object) != want)).to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        gp.add("winner", f"{int(bad.sum())} game(s) contradict their win_condition, first row {i} "
               f"(game_id {games['game_id'].iloc[i]!r}: winner {games['winner'].iloc[i]!r} but win_condition "
               f"{games['win_condition'].iloc[i]!r} is {'an' if want.iloc[i] == 'impostor' else 'a'} {want.iloc[i]} win)",
               f"{FIX_EXPORT}; the games' records decide both columns")


def _coerce_vote_confidence(players: pd.DataFrame, pp: _Problems) -> None:
    """vote: a nullable seat 0-3; confidence: a nullable number in [0, 1]."""
    v = pd.to_numeric(players["vote"], errors="coerce")
    top = MAX_SEATS - 1
    bad = (players["vote"].notna().to_numpy() & v.isna().to_numpy()) | (v.notna() & ((v < 0) | (v > top) | (v % 1 != 0))).to_numpy()
    if bad.any():
        pp.add("vote", f"{int(bad.sum())} value(s) are not a seat 0-{top} ({_rows(bad)}: {_examples(players['vote'][bad])})",
               f"store the voted seat 0-{top}, or null for an invalid ballot")
    else:
        players["vote"] = v.astype("Int64")
    conf = pd.to_numeric(players["confidence"], errors="coerce")
    bad = (players["confidence"].notna().to_numpy() & conf.isna().to_numpy()) | (conf.notna() & ((conf < 0) | (conf > 1))).to_numpy()
    if bad.any():
        pp.add("confidence", f"{int(bad.sum())} value(s) outside [0, 1] ({_rows(bad)}: {_examples(players['confidence'][bad])})",
               "store confidence as a number in [0, 1] or null")
    else:
        players["confidence"] = conf.astype(float)


def _validate_players(players: pd.DataFrame, name: str, notes: list[str]) -> None:
    """Contract columns present and typed; ballot_class checked or derived."""
    pp = _Problems(name)
    if not _missing_columns(players, CONTRACT_PLAYER_COLUMNS, pp, "players"):
        for c in _PLAYER_INT:
            _coerce_int(players, c, pp, 0, MAX_SEATS - 1)
        for c in _PLAYER_STR:
            _coerce_str(players, c, pp, allowed=("impostor", "majority") if c == "role" else None)
        _coerce_str(players, "team", pp, nullable=True, allowed=("A", "B"))
        _coerce_str(players, "word_guess", pp, nullable=True)
        for c in _PLAYER_BOOL:
            _coerce_bool(players, c, pp)
        _coerce_vote_confidence(players, pp)
    pp.raise_if_any()
    _ballot_class_column(players, pp, notes, name)
    pp.raise_if_any()


def _seat_masks(players: pd.DataFrame, games: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """Per game: rows, bit masks of the seats and speaking positions present, impostors, and
    whether they are the game's seats 0..n_players-1 (four without ``games``)."""
    tmp = pd.DataFrame({
        "game_id": players["game_id"], "seat": players["seat"],
        "seat_bit": np.left_shift(1, players["seat"].to_numpy()),
        "pos_bit": np.left_shift(1, players["speaking_position"].to_numpy()),
        "is_imp": (players["role"] == "impostor").to_numpy().astype(np.int64),
    })
    per_game = tmp.groupby("game_id", sort=False, observed=True).agg(
        n=("seat", "size"), seat_mask=("seat_bit", "sum"), pos_mask=("pos_bit", "sum"), n_imp=("is_imp", "sum"),
    )
    n_players = pd.Series(PAPER_PLAYERS, index=per_game.index, dtype=np.int64)
    n_impostors = pd.Series(PAPER_IMPOSTORS, index=per_game.index, dtype=np.int64)
    if games is not None:
        g = games.set_index("game_id")
        n_players = g["n_players"].reindex(per_game.index).fillna(PAPER_PLAYERS).astype(np.int64)
        n_impostors = g["n_impostors"].reindex(per_game.index).fillna(PAPER_IMPOSTORS).astype(np.int64)
    full = np.left_shift(1, n_players.to_numpy()) - 1
    # each of the seats (positions) 0..N-1 exactly once <=> N rows whose bits sum to 2^N - 1
    per_game["seats_ok"] = (per_game.n == n_players) & (per_game.seat_mask == full)
    per_game["pos_ok"] = per_game.pos_mask == full
    per_game["n_players"], per_game["n_impostors"] = n_players, n_impostors
    return per_game


_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


def _check_seats(games: pd.DataFrame, players: pd.DataFrame, games_name: str, players_name: str) -> None:
    """Every player row belongs to a game; every game has seats 0..N-1, its K impostors, positions 0..N-1
    (N = ``n_players``, K = ``n_impostors``: four and one in the paper's game)."""
    xp = _Problems(players_name)
    game_ids = pd.Index(games["game_id"].to_numpy(dtype=object))
    orphan = index_positions(game_ids, players["game_id"]) < 0
    if orphan.any():
        xp.add("game_id", f"{int(orphan.sum())} player rows belong to no game in {games_name} "
               f"({_examples(players['game_id'][orphan])})",
               f"export {games_name} and {players_name} together from the same runs")
    xp.raise_if_any()

    n_of_row = games["n_players"].to_numpy(np.int64)[index_positions(game_ids, players["game_id"])]
    for col in ("seat", "speaking_position"):
        out = players[col].to_numpy(np.int64) >= n_of_row
        if out.any():
            n0 = int(n_of_row[out][0])
            xp.add(col, f"{int(out.sum())} value(s) outside 0-{n0 - 1}, the seats of a game of n_players={n0} "
                   f"({_rows(out)}: {_examples(players[col][out])})",
                   f"use seat/position numbers 0-{n0 - 1} (0-3 in the paper's game), or the game's n_players")
    vote = pd.to_numeric(players["vote"], errors="coerce").to_numpy(float)
    out = ~np.isnan(vote) & (vote >= n_of_row)
    if out.any():
        n0 = int(n_of_row[out][0])
        xp.add("vote", f"{int(out.sum())} value(s) are not a seat 0-{n0 - 1} of their game (n_players={n0}) "
               f"({_rows(out)}: {_examples(players['vote'][out])})",
               f"store the voted seat 0-{n0 - 1}, or null for an invalid ballot")
    xp.raise_if_any()

    per_game = _seat_masks(players, games)
    no_players = per_game.index.get_indexer(game_ids) < 0
    if no_players.any():
        xp.add("game_id", f"{int(no_players.sum())} game(s) of {games_name} have no player rows "
               f"({_examples(game_ids[no_players])})", f"export the four seats of every game into {players_name}")
    wrong = per_game[~per_game.seats_ok]
    if len(wrong):
        n0 = int(wrong.n_players.iloc[0])
        xp.add("seat", f"{len(wrong)} game(s) do not have exactly the {_WORDS.get(n0, n0)} seats 0-{n0 - 1} "
               f"(e.g. {wrong.index[0]!r} has {int(wrong.n.iloc[0])} row(s), seats {sorted(players.loc[players.game_id == wrong.index[0], 'seat'])})",
               "write one row per seat 0, 1, ..., n_players - 1 (0-3 in the paper's game) for every game")
    bad_imp = per_game[per_game.n_imp != per_game.n_impostors]
    if len(bad_imp):
        k0 = int(bad_imp.n_impostors.iloc[0])
        xp.add("role", f"{len(bad_imp)} game(s) do not have exactly {_WORDS.get(k0, k0)} impostor{'s' if k0 > 1 else ''} "
               f"(e.g. {bad_imp.index[0]!r} has {int(bad_imp.n_imp.iloc[0])}, n_impostors {k0})",
               "mark exactly n_impostors seats per game (one in the paper's game) with role 'impostor'")
    bad_pos = per_game[~per_game.pos_ok]
    if len(bad_pos) and not len(wrong):
        xp.add("speaking_position", f"{len(bad_pos)} game(s) repeat a speaking position (e.g. {bad_pos.index[0]!r})",
               "give the four seats the speaking positions 0-3 once each")
    xp.raise_if_any()


def _check_impostor_agrees(games: pd.DataFrame, players: pd.DataFrame, games_name: str, players_name: str) -> None:
    """The game's impostor seat, model and speaking position are those of its (lowest) impostor row,
    and ``impostor_seats`` lists its impostor rows' seats."""
    imp_rows = players.loc[players["role"] == "impostor", ["game_id", "seat", "model", "speaking_position"]]
    several = games["n_impostors"].to_numpy() > 1
    if several.any():
        listed = games.loc[several, ["game_id", "impostor_seats"]].set_index("game_id")["impostor_seats"]
        seats = imp_rows.assign(seat=imp_rows["seat"].astype(str)).groupby("game_id", sort=False, observed=True)[
            "seat"].agg(lambda s: ",".join(sorted(s)))
        mism = (listed.astype(object) != seats.reindex(listed.index).astype(object)).to_numpy()
        if mism.any():
            sp = _Problems(f"{games_name}/{players_name}")
            sp.add("impostor_seats", f"{int(mism.sum())} game(s) of several impostors do not list their impostor "
                   f"rows' seats (e.g. {listed.index[mism][0]!r}: {listed[mism].iloc[0]!r})",
                   "export both tables from the same game records")
            sp.raise_if_any()
        imp_rows = imp_rows.sort_values(["game_id", "seat"], kind="stable").drop_duplicates("game_id")
    imp = imp_rows.set_index("game_id")
    g = games.set_index("game_id")[["impostor_seat", "impostor_model", "impostor_speaking_position"]].join(imp, how="left")
    cp = _Problems(f"{games_name}/{players_name}")
    for gcol, pcol in (("impostor_seat", "seat"), ("impostor_model", "model"), ("impostor_speaking_position", "speaking_position")):
        mism = (g[gcol].astype(object) != g[pcol].astype(object)).to_numpy()  # categoricals: compare values
        if mism.any():
            cp.add(gcol, f"{int(mism.sum())} game(s) disagree with the impostor row's '{pcol}' in {players_name} "
                   f"(e.g. {g.index[mism][0]!r}: {g[gcol][mism].iloc[0]!r} vs {g[pcol][mism].iloc[0]!r})",
                   "export both tables from the same game records")
    cp.raise_if_any()


# The one-round win conditions, in the order ``impostor_bench.core.rules.decide`` checks them.
_DECLARED = ("majority_self_declared", "impostor_guess_correct", "impostor_guess_wrong")
_BY_VOTES = ("conviction", "strict_plurality", "tie", "no_conviction")


def _one_round(games: pd.DataFrame) -> np.ndarray:
    """(G,) bool: games of one round (``max_rounds``, else ``rounds_played``, absent or <= 1); a
    multi-round game's players rows hold its first round only (docs/data-contract.md)."""
    for col in ("max_rounds", "rounds_played"):
        if col in games.columns:
            return (pd.to_numeric(games[col], errors="coerce").fillna(1) <= 1).to_numpy()
    return np.ones(len(games), bool)


def _check_outcome_agrees(games: pd.DataFrame, players: pd.DataFrame, games_name: str, players_name: str) -> None:
    """A one-round game's ``win_condition`` is the one its ballots give (docs/rules.md, "Winner
    logic"): who self-declared, then the counted votes (conviction, strict plurality, top tie,
    none).  The win rates read ``winner`` (checked against ``win_condition`` above) while the tie
    and detection tables recount the ballots, so a record where the two disagree (a
    ``conviction`` whose ballots name no impostor) would report contradictory numbers; it is
    refused.  Whether a declared impostor's guess was right is not re-judged (that rule has
    changed between versions; the ballots keep the guess only)."""
    n = len(games)
    gi = index_positions(pd.Index(games["game_id"].astype(object)), players["game_id"])
    seat = players["seat"].to_numpy(np.int64)
    imp_seat = games["impostor_seat"].to_numpy(np.int64)
    vote = pd.to_numeric(players["vote"], errors="coerce").to_numpy(float)
    counted = (players["ballot_class"].astype(object) == "valid").to_numpy() & ~np.isnan(vote) & (vote != seat)
    decl = players["self_declared"].to_numpy(bool)
    is_imp = (players["role"].astype(object) == "impostor").to_numpy()
    nonimp_decl = np.bincount(gi, weights=decl & ~is_imp, minlength=n) > 0
    imp_decl = np.bincount(gi, weights=decl & is_imp, minlength=n) > 0
    imp_mask = np.zeros((n, MAX_SEATS), bool)  # the impostor seats of each game
    imp_mask[gi[is_imp], seat[is_imp]] = True
    counts = np.zeros((n, MAX_SEATS), np.int64)
    np.add.at(counts, (gi[counted], vote[counted].astype(np.int64)), 1)
    by_majority = np.zeros((n, MAX_SEATS), np.int64)  # counted votes of majority players, by seat voted for
    from_majority = counted & ~is_imp
    np.add.at(by_majority, (gi[from_majority], vote[from_majority].astype(np.int64)), 1)
    threshold = conviction_threshold(games["n_players"].to_numpy(np.int64), games["n_impostors"].to_numpy(np.int64))
    convicted = (np.where(imp_mask, by_majority, 0).max(1) >= threshold)
    plurality = (imp_mask & (counts > counts.sum(1, keepdims=True) - counts)).any(1)
    on_imp = np.where(imp_mask, counts, 0).sum(1)
    others = counts.sum(1) - on_imp
    top = counts.max(1)
    tied = ((counts == top[:, None]) & (top[:, None] > 0)).sum(1) >= 2
    by_votes = np.select([convicted, plurality, tied], ["conviction", "strict_plurality", "tie"],
                         "no_conviction").astype(object)
    recorded = games["win_condition"].astype(object).to_numpy()
    ok = np.where(nonimp_decl, recorded == "majority_self_declared",
                  np.where(imp_decl, np.isin(recorded, _DECLARED[1:]), recorded == by_votes))
    checked = _one_round(games) & np.isin(recorded, _DECLARED + _BY_VOTES)
    bad = checked & ~ok
    if not bad.any():
        return
    i = int(np.flatnonzero(bad)[0])
    given = ("a non-impostor's self-declaration (majority_self_declared)" if nonimp_decl[i] else
             "the impostor's self-declaration (impostor_guess_correct or impostor_guess_wrong)" if imp_decl[i] else
             f"{by_votes[i]} ({int(on_imp[i])} counted vote(s) on impostor seat {int(imp_seat[i])}, "
             f"{int(others[i])} on other seats, no self-declaration)")
    cp = _Problems(f"{games_name}/{players_name}")
    cp.add("win_condition", f"{int(bad.sum())} one-round game(s) contradict their ballots, first game_id "
           f"{games['game_id'].iloc[i]!r}: win_condition {recorded[i]!r} but its players rows (vote, "
           f"ballot_class, self_declared) give {given}", f"{FIX_EXPORT}; the games' records decide both tables")
    cp.raise_if_any()


def _coerce_model_columns(models: pd.DataFrame, mp: _Problems) -> None:
    """model text, provider/family nullable, params_b positive, params_source published|estimated|simulated."""
    _coerce_str(models, "model", mp)
    for c in ("provider", "family"):
        models[c] = models[c].astype(object).where(models[c].notna(), None)
    pb = pd.to_numeric(models["params_b"], errors="coerce")
    bad = (models["params_b"].notna().to_numpy() & pb.isna().to_numpy()) | (pb <= 0).to_numpy()
    if bad.any():
        mp.add("params_b", f"{int(bad.sum())} value(s) are not a positive number of billions "
               f"({_rows(bad)}: {_examples(models['params_b'][bad])})", "write parameters in billions, or leave empty if unknown")
    else:
        models["params_b"] = pb.astype(float)
    if "params_source" in models.columns:  # added column: published | estimated | simulated (empty = published)
        src = models["params_source"].astype(object)
        bad = (src.notna() & ~src.isin(["published", "estimated", "simulated"])).to_numpy()
        if bad.any():
            mp.add("params_source", f"{int(bad.sum())} value(s) are not 'published', 'estimated' or 'simulated' "
                   f"({_rows(bad)}: {_examples(src[bad])})", "write published or estimated, or leave empty")


def _validate_models(models: Optional[pd.DataFrame], players: pd.DataFrame, name: str,
                     notes: list[str]) -> Optional[pd.DataFrame]:
    """models.csv (optional): typed columns, each model once; notes the models it does not describe."""
    if models is None:
        notes.append(f"{name} not provided: the size and provider analyses (Tables 2 and 10 size rows) are left out.")
        return None
    mp = _Problems(name)
    models = models.copy()
    if not _missing_columns(models, MODEL_COLUMNS, mp, "models"):
        _coerce_model_columns(models, mp)
        if not mp.items and models["model"].duplicated().any():
            mp.add("model", f"duplicated model(s) {_examples(models['model'][models['model'].duplicated()])}",
                   "list each model once")
    mp.raise_if_any()
    missing = sorted(set(players["model"].unique()) - set(models["model"]))
    if missing:
        notes.append(f"{name}: no metadata for model(s) {', '.join(missing)}; size/provider analyses leave them out.")
    return models


def validate_tables(
    games: pd.DataFrame,
    players: pd.DataFrame,
    models: Optional[pd.DataFrame] = None,
    *,
    games_name: str = GAMES_FILE,
    players_name: str = PLAYERS_FILE,
    models_name: str = MODELS_FILE,
    copy: bool = True,
) -> AnalysisData:
    """Validate and normalise the three tables; returns ``AnalysisData`` (copies; ``copy=False``
    normalises the caller's frames in place, for loaders that own them)."""
    notes: list[str] = []
    if copy:
        games = games.copy()
        players = players.copy()
    _validate_games(games, games_name, notes)
    _validate_players(players, players_name, notes)
    _check_seats(games, players, games_name, players_name)
    _check_impostor_agrees(games, players, games_name, players_name)
    _check_outcome_agrees(games, players, games_name, players_name)
    models = _validate_models(models, players, models_name, notes)
    return AnalysisData(games=games.reset_index(drop=True), players=players.reset_index(drop=True), models=models, notes=notes)
