"""Game tables (games.parquet / players.parquet / moves.parquet / models.csv) from Inspect logs.

The scorer stores each finished game as ``{"game": GameRow, "players": [PlayerRow x 4]}``
in the metadata of the ``impostor_winner`` score.  This module turns the
samples of one or more Inspect logs into the contract tables
(``docs/data-contract.md``), validating every row with :mod:`impostor_bench.core.records`.

Rules:

* only successfully scored games become rows; errored games are *reported*
  (count, ids, reason) and never silently dropped;
* the same game (``game_id``) may appear in several logs (an eval-set retry
  writes a new log that reuses finished samples): it is kept once, a completed
  copy wins over an errored one, then the copy from the best log (status
  ``success`` first, then the most recent);
* games scheduled in a log header but present nowhere are reported as missing.

The module also holds the tables' typed frames (the contract's dtypes), the
re-validation of frames downloaded from MLflow and the rows of models.csv: one concept, the
exported tables, past the 400-line smell threshold on purpose (docs/architecture.md).

Used by ``impostor export`` and by the MLflow tracking (one run's tables).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Optional

import pandas as pd

from impostor_bench.core import experiment
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.judging import labels_of
from impostor_bench.core.records import (  # noqa: F401 - the file names are re-exported to the tracking adapter
    ERRORS_FILE,
    GAME_COLUMNS,
    GAMES_FILE,
    MODELS_FILE,
    MOVE_COLUMNS,
    MOVES_FILE,
    PLAYER_COLUMNS,
    PLAYERS_FILE,
    GameRow,
    MoveRow,
    PlayerRow,
    moves_of_player_rows,
    moves_of_players,
)
from impostor_bench.pricing import add_costs
from impostor_bench.registry import MODELS_CSV_COLUMNS, default_models_path, load_registry, unregistered_row

SCORER = "impostor_winner"
#: Sample fields we never need for the tables (they dominate log size).
EXCLUDE_FIELDS = {"events", "messages", "attachments"}
IMPOSTOR_TASK = "impostor"


# ------------------------------------------------------------------ identity


def is_impostor_task(task_name: str | None) -> bool:
    """True for our task however it was named (``impostor``, ``tasks/impostor.py@impostor``, ``pkg/impostor``)."""
    if not task_name:
        return False
    name = task_name.rsplit("@", 1)[-1].rsplit("/", 1)[-1]
    return name == IMPOSTOR_TASK


def role_models(spec: Any) -> dict[str, str]:
    """Model string per game role of an EvalSpec (missing roles fall back to ``--model``)."""
    mode = (spec.task_args or {}).get("mode", "homogeneous")
    return experiment.role_models(mode, spec.model, {k: v.model for k, v in (spec.model_roles or {}).items()})


def experiment_id_of(spec: Any) -> str:
    """The experiment id the solver derives (``impostor_bench.solvers.seating.experiment_id_for``), from a log header."""
    args = spec.task_args or {}
    if args.get("experiment_id"):
        return str(args["experiment_id"])
    return experiment.identity_of(args, role_models(spec))


# ------------------------------------------------------------------ records


@dataclass
class GameRecord:
    game: dict
    players: list[dict]
    rank: tuple  # higher is better (log status, log time)
    source: str
    usage: dict = field(default_factory=dict)  # model -> {"input", "output", "total"} tokens of this game
    time_s: float = 0.0
    moves: list[dict] = field(default_factory=list)  # a multi-round game's rows; [] = one round (from players)
    checked: bool = False  # players are PlayerRow dumps validated here: one-round moves need no validation


def _one_round_moves(r: GameRecord) -> list[dict]:
    players = sorted(r.players, key=lambda p: p["seat"])
    return moves_of_player_rows(players) if r.checked else moves_of_players(players)


@dataclass
class GameError:
    game_id: str
    experiment_id: str
    sample_id: str
    reason: str
    source: str


@dataclass
class Tables:
    """Validated tables plus what was left out and why."""

    games: pd.DataFrame
    players: pd.DataFrame
    errors: list[GameError] = field(default_factory=list)
    missing: list[GameError] = field(default_factory=list)
    duplicates: int = 0
    logs: list[str] = field(default_factory=list)
    usage: dict = field(default_factory=dict)  # model -> tokens over the kept games
    game_time_s: float = 0.0
    unreadable: list[str] = field(default_factory=list)  # logs that could not be read (with the reason)
    # experiment runs whose games were never logged (a sweep still running, or killed before it
    # logged them): one entry per run, game_id "<experiment>/*"; not errors, nothing failed
    unfinished: list[GameError] = field(default_factory=list)
    moves: Optional[pd.DataFrame] = None  # moves.parquet: one row per seat and round (None: not built)

    @property
    def n_games(self) -> int:
        return len(self.games)

    def problems_text(self, limit: int = 10) -> list[str]:
        """Human-readable lines about errored / missing games (empty when none), scrubbed of the
        environment's secrets and credential-shaped tokens (a console is an output too)."""
        from impostor_bench.tracking.redact import redactor, secret_values

        scrub = redactor(secret_values())
        return [scrub(line) for line in self._problems_text(limit)]

    def _problems_text(self, limit: int) -> list[str]:
        lines = [f"log skipped: {u}" for u in self.unreadable]
        if self.unfinished:
            lines.append(f"{len(self.unfinished)} experiment run(s) unfinished, their games not in the tables yet:")
            lines += [f"  {e.experiment_id}: {e.reason}" for e in self.unfinished[:limit]]
            if len(self.unfinished) > limit:
                lines.append(f"  ... and {len(self.unfinished) - limit} more (see {ERRORS_FILE})")
        for what, items in (("errored", self.errors), ("missing (scheduled but never run)", self.missing)):
            if not items:
                continue
            lines.append(f"{len(items)} game(s) {what} and left out of the tables:")
            for e in items[:limit]:
                lines.append(f"  {e.game_id}: {e.reason}")
            if len(items) > limit:
                lines.append(f"  ... and {len(items) - limit} more (see {ERRORS_FILE})")
        return lines

    def errors_frame(self) -> pd.DataFrame:
        rows = [dict(kind="errored", **e.__dict__) for e in self.errors]
        rows += [dict(kind="missing", **e.__dict__) for e in self.missing]
        rows += [dict(kind="unfinished", **e.__dict__) for e in self.unfinished]
        return pd.DataFrame(rows, columns=["kind", "game_id", "experiment_id", "sample_id", "reason", "source"])


def _status_rank(status: str | None) -> int:
    return {"success": 3, "cancelled": 1, "error": 1, "started": 0}.get(status or "", 0)


def _validate(md: dict) -> tuple[dict, list[dict], list[dict]]:
    game = GameRow.model_validate(md["game"]).model_dump()
    moves = [MoveRow.model_validate(m).model_dump() for m in md.get("moves") or []]
    players = [PlayerRow.model_validate(p).model_dump() for p in md["players"]]
    n = game["n_players"]  # four in the paper's game (and in records written before the column)
    if len(players) != n or sorted(p["seat"] for p in players) != list(range(n)):
        raise ValueError(f"expected {n} player rows with seats 0-{n - 1}, got {len(players)}")
    if any(p["game_id"] != game["game_id"] for p in players):
        raise ValueError("player rows do not share the game's game_id")
    if any(m["game_id"] != game["game_id"] for m in moves):
        raise ValueError("move rows do not share the game's game_id")
    return game, players, moves


def _error_reason(sample: Any) -> str | None:
    if sample.error is not None:
        msg = (sample.error.message or "error").strip().splitlines()
        return msg[0][:300] if msg else "error"
    score = (sample.scores or {}).get(SCORER)
    if score is None:
        return "not scored"
    if not isinstance(score.metadata, dict) or "game" not in score.metadata:
        return "score has no game record"
    return None


def _add_judge_labels(players: list[dict], scores: Any) -> None:
    """The ``judge_*`` columns from a judge score the sample holds (scorers/judge.py); else left None."""
    found = labels_of(scores)
    if found is None:
        return
    for p in players:
        lab = found["labels"].get(str(p["seat"]))
        if lab:
            p.update(judge_strategy=lab["strategy"], judge_trust=bool(lab["trust"]),
                     judge_coord_intent=bool(lab["coord_intent"]), judge_model=found["judge"])


def records_from_log(log: Any, source: str | None = None) -> tuple[list[GameRecord], list[GameError], list[tuple[str, str, str]]]:
    """Game records, errors and the scheduled ``(game_id, experiment_id, sample_id)`` of one EvalLog
    (read with samples)."""
    from impostor_bench.tracking.redact import redact_strings, redactor, spec_secret_values

    source = source or str(log.location or "")
    spec = log.eval
    # a provider's error (HTTP 401 "Incorrect API key provided: <key>") or a player that repeats
    # a key: every text of the records is scrubbed of this log's secrets before any table holds it
    scrub = redactor(spec_secret_values(spec))
    exp = experiment_id_of(spec)
    rank = (_status_rank(log.status), str(log.stats.completed_at or log.stats.started_at or spec.created or ""))
    records, errors = [], []
    for sample in log.samples or []:
        sid = str(sample.id)
        reason = _error_reason(sample)
        if reason is None:
            try:
                game, players, moves = _validate(sample.scores[SCORER].metadata)
                _add_judge_labels(players, sample.scores)
            except Exception as exc:  # noqa: BLE001 - reported, not dropped
                reason = f"invalid game record: {str(exc).splitlines()[0][:300]}"
            else:
                for key in ("word_pairs_file", "word_pairs_sha256"):  # one file per run: from the log header
                    if game.get(key) is None:
                        game[key] = (spec.metadata or {}).get(key)
                usage = {m: {"input": float(u.input_tokens or 0), "output": float(u.output_tokens or 0),
                             "total": float(u.total_tokens or 0)} for m, u in (sample.model_usage or {}).items()}
                records.append(GameRecord(redact_strings(game, scrub), redact_strings(players, scrub), rank, source,
                                          usage, float(sample.total_time or 0.0), redact_strings(moves, scrub),
                                          checked=True))
                continue
        sexp = (sample.metadata or {}).get("experiment_id") or exp
        errors.append(GameError(f"{sexp}/{sid}", sexp, sid, scrub(reason), source))
    scheduled = [(f"{exp}/{sid}", exp, str(sid)) for sid in (spec.dataset.sample_ids or [])]
    return records, errors, scheduled


def build_tables(records: Iterable[GameRecord], errors: Iterable[GameError] = (),
                 scheduled: Iterable[tuple[str, str, str]] = (), logs: Optional[list[str]] = None) -> Tables:
    """Deduplicate by game_id (completed > errored; best log first) and build validated frames."""
    best: dict[str, GameRecord] = {}
    n = 0
    for r in records:
        n += 1
        gid = r.game["game_id"]
        if gid not in best or r.rank > best[gid].rank:
            best[gid] = r
    err_by_id: dict[str, GameError] = {}
    for e in errors:
        if e.game_id not in best:
            err_by_id.setdefault(e.game_id, e)
    missing = {}
    for gid, exp, sid in scheduled:
        if gid not in best and gid not in err_by_id and gid not in missing:
            missing[gid] = GameError(gid, exp, sid, "scheduled in a log that stopped before this game finished", "")
    chosen = sorted(best.values(), key=lambda r: (r.game["experiment_id"], r.game["game_index"], r.game["game_id"]))
    games = games_frame([r.game for r in chosen])
    players = add_costs(players_frame([p for r in chosen for p in sorted(r.players, key=lambda p: p["seat"])]))
    moves = moves_frame([m for r in chosen for m in (r.moves or _one_round_moves(r))])
    usage: dict[str, dict[str, float]] = {}
    for r in chosen:
        for m, u in r.usage.items():
            acc = usage.setdefault(m, {"input": 0.0, "output": 0.0, "total": 0.0})
            for k in acc:
                acc[k] += u.get(k, 0.0)
    return Tables(games, players, sorted(err_by_id.values(), key=lambda e: e.game_id),
                  sorted(missing.values(), key=lambda e: e.game_id), n - len(best), logs or [], usage,
                  sum(r.time_s for r in chosen), moves=moves)


def tables_from_log(log: Any) -> Tables:
    """Tables of one EvalLog (with samples)."""
    records, errors, scheduled = records_from_log(log)
    return build_tables(records, errors, scheduled, logs=[str(log.location or "")])


# ------------------------------------------------------------------ typed frames


def games_frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=GAME_COLUMNS)
    for col in ("game_index", "impostor_seat", "impostor_speaking_position", "seed", "tie_k", "n_valid_votes",
                "n_invalid_ballots", "n_invalid_descriptions", "votes_on_impostor", "rounds_played", "max_rounds",
                "n_players", "n_impostors"):
        df[col] = df[col].astype("int64")
    df["private_notes"] = df["private_notes"].astype(bool)
    for col in ("p_imp_default", "p_imp_sym_candidate", "p_imp_sym_side"):
        df[col] = df[col].astype("float64")
    df["impostor_in_tie"] = df["impostor_in_tie"].astype(bool)
    for col in ("length_budget", "truncate_to"):  # None: the option was not set
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("Int64")
    return df


def players_frame(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=PLAYER_COLUMNS)
    for col in ("seat", "speaking_position", "description_attempts", "ballot_attempts"):
        df[col] = df[col].astype("int64")
    df["vote"] = pd.array([None if v is None or (isinstance(v, float) and math.isnan(v)) else int(v)
                           for v in df["vote"]], dtype="Int64")
    df["confidence"] = pd.to_numeric(df["confidence"], errors="coerce").astype("float64")
    for col in ("input_tokens", "output_tokens", "eliminated_round"):  # None = not recorded / not eliminated
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("Int64")
    for col in ("cost_usd", "top_p"):  # None: unknown / not sent
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64")
    for col in ("description_valid", "self_declared", "ballot_valid"):
        df[col] = df[col].astype(bool)
    for col in ("judge_trust", "judge_coord_intent"):  # None until a judge labelled the game
        df[col] = df[col].astype("boolean")
    return df


def moves_frame(rows: list[dict]) -> pd.DataFrame:
    """moves.parquet (docs/data-contract.md): nullable integers where a value may be absent."""
    df = pd.DataFrame(rows, columns=MOVE_COLUMNS)
    for col in ("round", "seat", "speaking_position"):
        df[col] = df[col].astype("int64")
    for col in ("vote", "input_tokens", "output_tokens"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("Int64")
    df["confidence"] = pd.to_numeric(df["confidence"], errors="coerce").astype("float64")
    for col in ("description_valid", "self_declared", "eliminated"):
        df[col] = df[col].astype(bool)
    return df


def table_rows(df: pd.DataFrame, keys: Optional[list[str]] = None, nan_as_none: bool = False) -> list[dict]:
    """``df[keys].to_dict("records")`` (NA as None; NaN too with ``nan_as_none``) from each column's
    ``tolist()``: ``to_dict`` boxes cell by cell, most of the time of an export of 90,720 games."""
    keys = list(df.columns) if keys is None else keys
    cols = []
    for c in keys:
        values = df[c].tolist()
        if df[c].hasnans:
            values = [None if v is pd.NA or (nan_as_none and isinstance(v, float) and v != v) else v
                      for v in values]
        cols.append(values)
    return [dict(zip(keys, row)) for row in zip(*cols)]


def _records(df: pd.DataFrame, fields: frozenset[str]) -> list[dict]:
    """The rows of ``df`` as dicts of the schema's columns only, NaN and NA as None."""
    return table_rows(df, [c for c in df.columns if c in fields], nan_as_none=True)


_GAME_FIELDS, _PLAYER_FIELDS = frozenset(GAME_COLUMNS), frozenset(PLAYER_COLUMNS)


def validate_frames(games: pd.DataFrame, players: pd.DataFrame, shown: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Re-validate downloaded frames row by row with the record schema (the field sets are
    looked up once: per cell, ``Model.model_fields`` made this ~1 min of CPU for the paper's grid)."""
    grows, prows = [], []
    for i, row in enumerate(_records(games, _GAME_FIELDS)):
        try:
            grows.append(GameRow.model_validate(row).model_dump())
        except Exception as exc:  # noqa: BLE001
            raise ImpostorError(f"{shown} games.parquet row {i}: {str(exc).splitlines()[0:3]}; fix: re-sync the run") from exc
    for i, r in enumerate(_records(players, _PLAYER_FIELDS)):
        try:
            if r.get("vote") is not None:
                r["vote"] = int(r["vote"])
            prows.append(PlayerRow.model_validate(r).model_dump())
        except Exception as exc:  # noqa: BLE001
            raise ImpostorError(f"{shown} players.parquet row {i}: {str(exc).splitlines()[0:3]}; fix: re-sync the run") from exc
    return games_frame(grows), players_frame(prows)


# ------------------------------------------------------------------ logs on disk


def find_logs(path: str | Path) -> list[str]:
    """Inspect ``.eval``/``.json`` logs under a directory (recursive) or a single file."""
    from inspect_ai.log import list_eval_logs

    p = Path(path)
    if not p.exists():
        raise ImpostorError(f"{path}: no such file or directory; fix: pass an Inspect log file or log directory")
    if p.is_file():
        return [str(p.resolve())]
    infos = list_eval_logs(str(p.resolve()), recursive=True)
    # the task name in a log's file name is a hint only (files get renamed): callers check the header
    return [i.name.removeprefix("file://") for i in infos]


def read_log(path: str) -> Any:
    from inspect_ai.log import read_eval_log

    try:
        return read_eval_log(path, exclude_fields=EXCLUDE_FIELDS)
    except Exception as exc:  # noqa: BLE001
        raise ImpostorError(f"{path}: cannot read the Inspect log ({str(exc).splitlines()[0]}); "
                            f"fix: remove or repair the file (inspect log recover)") from exc


def tables_from_logs(path: str | Path, with_players: bool = True) -> Tables:
    """Tables of every impostor log under ``path``; ``with_players=False`` leaves the players
    table empty and keeps no player rows while reading (a shard's end-of-sweep summary of
    378 logs held them all at once)."""
    records, errors, scheduled, used, unreadable = [], [], [], [], []
    for lp in find_logs(path):
        try:
            log = read_log(lp)
        except ImpostorError as exc:
            unreadable.append(str(exc))
            continue
        if not is_impostor_task(log.eval.task):
            continue
        used.append(lp)
        r, e, s = records_from_log(log, source=lp)
        if not with_players:
            for rec in r:
                rec.players, rec.moves = [], []
        records += r
        errors += e
        scheduled += s
    if not used:
        raise ImpostorError(f"{path}: holds no readable Inspect logs of the impostor task"
                            + (f" ({unreadable[0]})" if unreadable else "")
                            + "; fix: pass the --log-dir of a sweep or an `inspect eval` log directory")
    t = build_tables(records, errors, scheduled, logs=used)
    t.unreadable = unreadable
    return t


# ------------------------------------------------------------------ models.csv


MODELS_COLUMNS = list(MODELS_CSV_COLUMNS)  # contract columns, then route, params_source, ...


def models_frame(models: Iterable[str]) -> pd.DataFrame:
    """models.csv rows for these models: from the registry (configs/models.yaml) where it knows them,
    else the route from the model string, the maker where the string tells it, empty family/params_b."""
    models = tuple(sorted({m for m in models if m}))
    path = default_models_path()
    try:
        st = path.stat()
        version: tuple = (st.st_mtime_ns, st.st_size)
    except OSError:
        version = ()
    rows = _models_rows(str(path), version, models)
    return pd.DataFrame([dict(r) for r in rows], columns=MODELS_COLUMNS)


@lru_cache(maxsize=64)
def _models_rows(path: str, version: tuple, models: tuple[str, ...]) -> tuple[tuple[tuple[str, Any], ...], ...]:
    """models.csv rows of ``models`` from the registry file at ``path`` as it is at ``version``
    (mtime, size): parsing the YAML was ~15 ms of every tracked run's end."""
    rows = None
    try:
        rows = load_registry(path).models_csv_rows(list(models))
    except Exception:  # noqa: BLE001 - registry missing or broken: fall back, never block an export
        rows = None
    if rows is None:
        rows = [unregistered_row(m) for m in models]
    return tuple(tuple((c, r.get(c)) for c in MODELS_COLUMNS) for r in rows)


def table_models(tables: Tables) -> list[str]:
    return sorted(set(tables.players["model"].astype(str))) if len(tables.players) else []


# ------------------------------------------------------------------ writing


def write_tables(tables: Tables, out: str | Path, models: bool = True) -> list[Path]:
    """Write games.parquet, players.parquet, moves.parquet, models.csv (and errors.csv when games were left out)."""
    from impostor_bench.core.output_files import present, write_file
    from impostor_bench.outdir import make_dir

    from impostor_bench.tracking.redact import scrub_frame, secret_values

    d = make_dir(out, "--out")
    # the one scrubber (``redact.scrub_frame``) once more at the door: tables read back from MLflow
    # runs logged before it existed, and keys of this environment
    secrets = secret_values()
    games, players = scrub_frame(tables.games, secrets), scrub_frame(tables.players, secrets)
    written = [write_file(d / GAMES_FILE, lambda p: games.to_parquet(p, index=False)),
               write_file(d / PLAYERS_FILE, lambda p: players.to_parquet(p, index=False))]
    if tables.moves is not None:
        moves = scrub_frame(tables.moves, secrets)
        written.append(write_file(d / MOVES_FILE, lambda p: moves.to_parquet(p, index=False)))
    if models:
        written.append(write_file(d / MODELS_FILE, lambda p: models_frame(table_models(tables)).to_csv(p, index=False)))
    err = d / ERRORS_FILE
    if tables.errors or tables.missing or tables.unfinished:
        errors = scrub_frame(tables.errors_frame(), secrets)
        written.append(write_file(err, lambda p: errors.to_csv(p, index=False)))
    elif present(err):
        err.unlink()  # a link: the link itself, not what it names
    return written


def merge_tables(parts: list[Tables]) -> Tables:
    """Merge per-run tables (e.g. downloaded from MLflow), deduplicating games by id."""
    records: list[GameRecord] = []
    errors: list[GameError] = []
    missing: dict[str, GameError] = {}
    for i, t in enumerate(parts):
        players: dict[str, list[dict]] = {}  # one to_dict per run (per game: ~1 ms x 90,720 games)
        for row in table_rows(t.players):
            players.setdefault(row["game_id"], []).append(row)
        moves: dict[str, list[dict]] = {}  # a run's moves; absent (an older export): derived from players
        for row in table_rows(t.moves) if t.moves is not None else []:
            moves.setdefault(row["game_id"], []).append(row)
        for g in table_rows(t.games):
            game_moves = moves.get(g["game_id"], []) if int(g.get("max_rounds") or 1) > 1 else []
            records.append(GameRecord(g, players.get(g["game_id"], []), (0, i), "", moves=game_moves))
        errors += t.errors
        missing.update((e.game_id, e) for e in t.missing)
    merged = build_tables(records, errors)
    done = set(merged.games["game_id"]) | {e.game_id for e in merged.errors}
    merged.missing = sorted((e for gid, e in missing.items() if gid not in done), key=lambda e: e.game_id)
    merged.unfinished = [e for t in parts for e in t.unfinished]
    return merged


