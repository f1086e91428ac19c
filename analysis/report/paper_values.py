"""The paper's published numbers beside ours (``impostor report --compare-paper``).

``analysis/paper_data/paper_values.csv`` holds the numbers of Tables 1-12 (Table 4 repeats Table 2:
"Table 2/4") and the headline statistics of Sections 3.2-3.4 (and B.2's overall rate), one row each
(tests/analysis/report/test_paper_values.py checks each against the paper's cell, column and sign):
where in the paper it is (``paper_table``, ``line`` = line of the paper's text,
/work/shared/seed/000_bbe86ea630e89cb0.txt in the project, "Who's the Impostor?"), the
model (our alias; empty for pooled rows), the value and the paper's interval where it
prints one, and where the same quantity lives in a bundle: ``table``, the row
(``match``: ``col=value;...``) and ``column``.

``compare(results, settings, manifest=...)`` looks each one up in the bundle's tables (with the one interval
:mod:`impostor_bench.analysis.intervals` picks for it) and says whether the paper's value lies inside
our interval, and whether that interval is of the paper's kind (``comparable``); ``differences``
says what else differs (models, word pairs, schedule), so the comparison does not read as a
replication. Rows of models the bundle does not have are left out; pooled rows stay.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from impostor_bench.analysis.intervals import lookup

__all__ = ["PAPER_VALUES", "PAPER_SOURCE", "PAPER_METHODS", "load_paper_values", "compare", "comparable", "differences",
           "comparison_text"]

PAPER_VALUES = Path(__file__).resolve().parents[1] / "paper_data" / "paper_values.csv"
PAPER_SOURCE = "Who's the Impostor? Multi-Agent Social Deduction for Evaluating LLM Social Reasoning (NeurIPS 2025 submission)"

COLUMNS = ["paper_table", "quantity", "model", "paper_value", "paper_ci_low", "paper_ci_high", "paper_method",
           "estimate", "ci_low", "ci_high", "inside", "interval", "calibrated", "comparable", "line", "table", "match",
           "column", "data", "data_note", "reason"]

#: (bundle table, column) whose true value ``impostor simulate`` takes from the paper by default: the
#: nine default models' detection and self-declaration rates (Table 1 Det Acc, Table 11 SelfDecl;
#: analysis/sim/effects.py). The planted odds ratios and the pooled ITT are read from the run's
#: arguments (``report.planted``), so a run that changed them is not marked.
PLANTED_BY_MODEL = {("headline", "det_acc_pct"), ("coordination", "self_decl_pct")}
#: Tables defined on one-round games and computed on the first round of longer games (stats/ties.py).
FIRST_ROUND_TABLES = {"tie_sizes", "tiebreak_mode", "tiebreak_mode_difficulty"}
PLANTED_NOTE = "agrees because the simulator plants the paper's value (not a replication)"
SIMULATED_NOTE = "simulated data: the simulator's games, not the paper's; a hit or a miss says nothing about the paper"

#: How the paper computed each table's intervals and p-values (from its captions), as (kind, words). Kind
#: "games" = games as independent units; "experiments" = clustered or resampled by experiment; "exact"
#: = a count or recomputation without sampling error; "unstated" = the paper does not say.
PAPER_METHODS: dict[str, tuple[str, str]] = {
    "Table 1": ("games", "95% binomial CIs, games independent"),
    "Table 2/4": ("games", "Wald CIs and p, games independent"),
    "Table 3": ("games", "Pearson chi-squared, games as units"),
    "Table 5": ("experiments", "Wald, cluster-robust by experiment; BH q"),
    "Table 6": ("experiments", "experiment-level block bootstrap CI; two-sided p"),
    "Table 7": ("exact", "counts"),
    "Table 8": ("exact", "recomputation from the ballots"),
    "Table 9": ("exact", "recomputation from the ballots"),
    "Table 10": ("experiments", "Wald, cluster-robust by experiment"),
    "Table 11": ("unstated", "'provided CIs' (method not stated)"),
    "Table 12": ("unstated", "± 95% CI (method not stated)"),
}
#: The paper's design (Appendix B, Dataset): what a bundle is compared against.
PAPER_DESIGN = {"games": 90_720, "experiments": 756, "models": 9, "word_pairs": "own pairs (not released)"}
#: Columns whose published number is a count or a statistic of the games themselves (no sampling
#: method involved), so it is computed the paper's way whatever the interval method.
DESCRIPTIVE_COLUMNS = {"chi2", "df", "cramers_v", "n", "n_mid", "ties", "k2", "k3", "k4"}


def _kind_of(method: str) -> str:
    """The kind (see ``PAPER_METHODS``) of one of our methods, from its words."""
    m = str(method).lower()
    if not m or m == "nan" or m.startswith("not "):
        return ""
    if m.startswith("paper") or "games independent" in m or "wilson" in m or "pearson" in m or "game-level" in m:
        return "games"
    if "experiment" in m or "cluster" in m or "design" in m:
        return "experiments"
    return "other"


#: Tables whose estimator, not only its interval, departs from the paper's: only the estimates can be
#: read side by side, whatever the kind of units the intervals share.
ESTIMATOR_DEPARTS = {
    "Table 5": ("its baseline is cross-fitted over two folds of experiments with fold-crossed fixed effects "
                "(the paper's: from the other experiments, which biases the slope upward under a true null)"),
}


def comparable(paper_table: str, has_estimate: bool, has_interval: bool, ours: str, column: str = "") -> str:
    """How a published number may be read beside ours: "same method" (the same kind of interval
    or an exact recomputation), "estimate only" (our interval is of another kind than the paper's,
    so only the estimates are comparable, and those only as far as models, pairs and schedule
    agree), or "not in this bundle"."""
    if not has_estimate:
        return "not in this bundle"
    kind, _ = PAPER_METHODS.get(str(paper_table), ("unstated", ""))
    if str(paper_table) in ESTIMATOR_DEPARTS and column not in DESCRIPTIVE_COLUMNS:
        return f"estimate only (another estimator: {ESTIMATOR_DEPARTS[str(paper_table)]})"
    if kind == "exact" or column in DESCRIPTIVE_COLUMNS:
        return "same method (exact recomputation)"
    if has_interval and kind == _kind_of(ours):
        return f"same method kind ({kind} as units)"
    return "estimate only (interval methods differ or one is not stated)"


def load_paper_values(path: Path = PAPER_VALUES) -> pd.DataFrame:
    df = pd.read_csv(path, dtype={"model": "string", "match": "string"}, keep_default_na=False,
                     na_values={"paper_ci_low": [""], "paper_ci_high": [""]})
    return df


_SNAPSHOT_SUFFIX = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$")


def _model_key(name: str) -> str:
    """A model id as the paper table names it: route prefix and a dated snapshot suffix dropped
    (``openai/gpt-4o-2024-08-06``, ``gpt-3.5-turbo-0125``: configs/models.yaml pins them), lower case."""
    return _SNAPSHOT_SUFFIX.sub("", str(name).rsplit("/", 1)[-1].strip().lower())


def _bundle_models(results: dict[str, pd.DataFrame]) -> dict[str, str]:
    """paper alias -> the model id the bundle uses (``openai/gpt-4o`` and ``gpt-4o`` both match)."""
    head = results.get("headline")
    if head is None or "model" not in head.columns:
        return {}
    return {_model_key(m): str(m) for m in head["model"].astype(str)}


def data_kind(manifest: Optional[dict]) -> dict:
    """What the bundle's data are, from its manifest: ``simulated`` (simulate's arguments, or None
    for played games), ``max_rounds`` (sorted; empty = not recorded) and ``multi_round_games``."""
    m = manifest or {}
    src = m.get("source") or {}
    sim = src.get("simulated")
    if isinstance(sim, dict) and "args" in sim and isinstance(sim["args"], dict):
        sim = sim["args"]
    rounds = (m.get("data") or {}).get("rounds") or {}
    if not rounds and isinstance(sim, dict) and sim.get("rounds"):
        r = int(sim["rounds"])
        rounds = {"max_rounds": [r], "multi_round_games": int((m.get("data") or {}).get("games") or 0) if r > 1 else 0}
    return {"simulated": dict(sim) if isinstance(sim, dict) else None, "max_rounds": list(rounds.get("max_rounds") or []),
            "multi_round_games": int(rounds.get("multi_round_games") or 0)}


def _data_label(kind: dict) -> str:
    rounds = kind["max_rounds"]
    played = "simulated" if kind["simulated"] is not None else "played"
    if not rounds:
        return f"{played}, rounds not recorded"
    return f"{played}, " + "/".join(map(str, rounds)) + (" round" if rounds == [1] else " rounds")


def data_note(kind: dict, table: str, match: str, column: str, paper_value: float) -> str:
    """How a row's agreement may be read given what the data are (empty: played one-round games)."""
    from impostor_bench.analysis.report.planted import planted, planted_value

    notes = []
    sim = kind["simulated"]
    if sim is not None:
        truth = planted_value(planted(sim), table, match, column)
        # the self-declaration rate is planted per model only by the one-round simulator, without --self-decl-rate
        own_decl = int(sim.get("rounds") or 1) > 1 or sim.get("self_decl_rate") is not None
        by_model = ((table, column) in PLANTED_BY_MODEL and not (sim.get("models") or "")
                    and not (column == "self_decl_pct" and own_decl))
        notes.append(PLANTED_NOTE if by_model or (truth is not None and round(truth, 2) == round(paper_value, 2))
                     else SIMULATED_NOTE)
    if kind["multi_round_games"]:
        notes.append("first round of each multi-round game, under the one-round rules (as the paper defines it)"
                     if table in FIRST_ROUND_TABLES else
                     f"{kind['multi_round_games']:,} games of more than one round, the paper's are one round: not the "
                     "same game")
    return "; ".join(notes)


def compare(results: dict[str, pd.DataFrame], settings: Optional[dict] = None,
            paper: Optional[pd.DataFrame] = None, manifest: Optional[dict] = None) -> pd.DataFrame:
    """One row per paper number the bundle can hold: paper value (and interval, where it prints
    one) and method, our estimate and interval, ``inside`` (True/False; NA where we have no
    interval or no estimate), ``comparable`` (:func:`comparable`) and, from the manifest, what the
    data are (``data``) and how that bears on the row (``data_note``: :func:`data_note`)."""
    paper = load_paper_values() if paper is None else paper
    kind = data_kind(manifest)
    label = _data_label(kind)
    ours = _bundle_models(results)
    rows = []
    texts: dict = {}  # each looked-up column as text, once (intervals._select)
    for r in paper.itertuples(index=False):
        model = str(r.model or "")
        match = str(r.match)
        if model:
            if model not in ours:
                continue
            match = match.replace(f"model={model}", f"model={ours[model]}")
        got = lookup(results, r.table, match, r.column, settings, texts)
        lo, hi, est = got["low"], got["high"], got["estimate"]
        has_int = bool(np.isfinite(lo) and np.isfinite(hi))
        inside = pd.NA if not has_int else bool(lo <= r.paper_value <= hi)
        rows.append({"paper_table": r.paper_table, "quantity": r.quantity, "model": ours.get(model, ""),
                     "paper_value": float(r.paper_value), "paper_ci_low": _float(getattr(r, "paper_ci_low", None)),
                     "paper_ci_high": _float(getattr(r, "paper_ci_high", None)),
                     "paper_method": PAPER_METHODS.get(str(r.paper_table), ("", "as stated in the text"))[1],
                     "estimate": est, "ci_low": lo, "ci_high": hi,
                     "inside": inside, "interval": got["method"] or ("no interval" if np.isfinite(est) else
                                                                     "not in this bundle"),
                     "calibrated": got["calibrated"],
                     "comparable": comparable(r.paper_table, bool(np.isfinite(est)), has_int, got["method"], r.column),
                     "line": int(r.line), "table": r.table, "match": match, "column": r.column, "data": label,
                     "data_note": data_note(kind, r.table, match, r.column, float(r.paper_value))
                     if np.isfinite(est) else "", "reason": "" if np.isfinite(est) else _reason(results, r.table, match)})
    out = pd.DataFrame(rows, columns=COLUMNS)
    if len(out):  # Tables 1-12 in order, then the numbers of the running text
        order = out["paper_table"].map(_table_order)
        out = out.iloc[np.argsort(order.to_numpy(), kind="stable")].reset_index(drop=True)
    out["inside"] = out["inside"].astype("boolean")
    return out


def _reason(results: dict[str, pd.DataFrame], table: str, match: str) -> str:
    """Why the bundle has no estimate for a row: its table's ``reason`` column where it has one."""
    df = results.get(table)
    if df is None or "reason" not in getattr(df, "columns", []):
        return ""
    sel = np.ones(len(df), bool)
    for part in filter(None, str(match).split(";")):
        col, _, val = part.partition("=")
        if col not in df.columns:
            return ""
        sel &= df[col].astype(str).to_numpy() == val
    hits = df.loc[sel, "reason"].dropna().astype(str)
    return hits.iloc[0] if len(hits) == 1 else ""


def _table_order(name: str) -> float:
    import re

    m = re.match(r"Table (\d+)", str(name))
    return float(m[1]) if m else 100.0


def _float(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return np.nan


def _fmt(v: float) -> str:
    if v is None or not np.isfinite(v):
        return "--"
    return f"{v:.3g}" if abs(v) < 1e-3 and v != 0 else (f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}")


def differences(cmp: pd.DataFrame, manifest: Optional[dict] = None) -> list[str]:
    """What differs between the paper's study and this bundle, in words: models, word pairs,
    schedule, methods. The comparison is not a replication test unless all four agree."""
    d = (manifest or {}).get("data") or {}
    ours = [str(m) for m in d.get("models") or []]
    shared = sorted({str(m) for m in cmp["model"] if str(m)})
    pair_text = _pairs_text(d)
    kinds = cmp["comparable"].value_counts()
    return _what_data(cmp, manifest) + [
        "What differs between the paper's study and this bundle (so 'inside' is not a replication test):",
        f"- Models: the paper's {PAPER_DESIGN['models']}; this bundle's {len(ours) or '?'}"
        + (f" ({', '.join(ours)})" if ours and len(ours) <= 12 else "")
        + f"; {len(shared)} shared by name (a name does not pin a model version).",
        f"- Word pairs: the paper's {PAPER_DESIGN['word_pairs']}; this bundle's: {pair_text}.",
        f"- Schedule: the paper {PAPER_DESIGN['games']:,} games in {PAPER_DESIGN['experiments']} experiments; this "
        f"bundle {int(d.get('games') or 0):,} games in {int(d.get('experiments') or 0):,} experiments (modes "
        f"{', '.join(d.get('modes') or []) or '?'}; difficulties {', '.join(d.get('difficulties') or []) or '?'}).",
        "- Methods: each row's 'comparable' says whether our interval is of the paper's kind ("
        + "; ".join(f"{k}: {v}" for k, v in kinds.items()) + "). 'inside' = the paper's number lies in OUR "
        "interval; where the methods differ, or the models, pairs or schedule do, a miss says nothing about the "
        "paper and a hit does not replicate it.",
    ]


def _what_data(cmp: pd.DataFrame, manifest: Optional[dict]) -> list[str]:
    """The first lines of the comparison: what these data are (played or simulated, models,
    rounds, word pairs, schedule), from the manifest, and how that marks the rows."""
    kind = data_kind(manifest)
    d = (manifest or {}).get("data") or {}
    models = [str(m) for m in d.get("models") or []]
    notes = cmp["data_note"].astype(str) if "data_note" in cmp else pd.Series([], dtype=str)
    planted = int(notes.str.contains("plants the paper's value", regex=False).sum())
    if kind["simulated"] is not None:
        sim = kind["simulated"]
        what = ("THESE DATA ARE SIMULATED (impostor simulate, simulated.json: "
                + ", ".join(f"{k}={sim[k]}" for k in ("experiments", "games", "rounds", "seed") if k in sim)
                + "). The simulator plants the paper's own values (by default: Table 1's detection and Table 11's "
                  f"self-declaration rates per model, Table 2/4's odds ratios, Table 6's pooled ITT), so {planted} "
                  "rows marked 'planted' agree by construction; every other row compares the simulator's games, not "
                  "the paper's, with the paper.")
    else:
        what = "These data are played games (not simulated)."
    rounds = kind["max_rounds"]
    if not rounds:
        rtext = "not recorded in the manifest (an older bundle)"
    elif kind["multi_round_games"]:
        rtext = (f"{kind['multi_round_games']:,} games of more than one round (max_rounds "
                 + "/".join(map(str, rounds)) + "); the paper's games are one round, so every row compares a "
                 "different game ('multi-rd'); Tables 7-9 use each game's first round under the one-round rules "
                 "('1st rd'), as the paper defines them")
    else:
        rtext = "one round per game, as the paper's"
    return [
        "What these data are:",
        f"- Source: {what}",
        f"- Models: {len(models) or '?'}" + (f" ({', '.join(models)})" if models and len(models) <= 12 else "") + ".",
        f"- Rounds: {rtext}.",
        f"- Word pairs: {_pairs_text(d)}.",
        f"- Schedule: {int(d.get('games') or 0):,} games in {int(d.get('experiments') or 0):,} experiments.",
        "",
    ]


def _pairs_text(d: dict) -> str:
    pairs = d.get("word_pairs") or []
    return ("; ".join(f"{p.get('file') or '(file not recorded)'} (sha256 {str(p.get('sha256') or 'not recorded')[:12]})"
                      for p in pairs) or "not recorded (simulated data, or exported before the columns existed)")


def _mark(note: str) -> str:
    """The short mark of a row's data note in the text table."""
    out = []
    if "plants the paper's value" in note:
        out.append("planted")
    elif note.startswith("simulated data"):
        out.append("sim")
    if "first round of each" in note:
        out.append("1st rd")
    elif "more than one round" in note:
        out.append("multi-rd")
    return ", ".join(out)


def comparison_text(cmp: pd.DataFrame, manifest: Optional[dict] = None) -> str:
    """The comparison as a plain-text table for the terminal: what differs first, then one block
    per paper table (columns as wide as their longest entry: no name is cut)."""
    lines = [f"Paper: {PAPER_SOURCE}.", "Beside it: this bundle's estimate and 95% interval, per published number.",
             ""] + differences(cmp, manifest)
    cells = []
    for r in cmp.itertuples(index=False):
        ci = "--" if not np.isfinite(r.ci_low) else f"[{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]"
        pci = "" if not np.isfinite(r.paper_ci_low) else f" [{_fmt(r.paper_ci_low)}, {_fmt(r.paper_ci_high)}]"
        ins = "--" if pd.isna(r.inside) else ("yes" if r.inside else "NO")
        cells.append((r.paper_table, [f"line {r.line}", str(r.quantity), str(r.model), _fmt(r.paper_value) + pci,
                                      _fmt(r.estimate), ci, ins, str(r.comparable).split(" (")[0],
                                      _mark(str(getattr(r, "data_note", "") or ""))]))
    head = ["where", "quantity", "model", "paper", "ours", "our interval", "inside", "comparable", "data"]
    width = [max([len(h)] + [len(c[1][i]) for c in cells]) for i, h in enumerate(head)]
    right = {3, 4, 5}

    def fmt(row: list[str]) -> str:
        return "  ".join(v.rjust(w) if i in right else v.ljust(w) for i, (v, w) in enumerate(zip(row, width))).rstrip()

    for tab, grp in cmp.groupby("paper_table", sort=False):
        known = grp["inside"].dropna()
        same = grp["comparable"].astype(str).str.startswith("same")
        marks = grp["data_note"].astype(str).map(_mark) if "data_note" in grp else pd.Series([""] * len(grp))
        planted = int(marks.str.startswith("planted").sum())
        lines += ["", f"{tab} (paper: {PAPER_METHODS.get(str(tab), ('', 'as stated in the text'))[1]}): "
                      f"{len(grp)} numbers, {int(same.sum())} same-method; {int(known.sum())}/{len(known)} inside "
                      "our interval" + (f", {len(grp) - len(known)} without one" if len(grp) > len(known) else "")
                  + (f"; {planted} planted by the simulator from the paper (agreement by construction)" if planted
                     else ""),
                  fmt(head)]
        lines += [fmt(c[1]) for c in cells if c[0] == tab]
    known = cmp["inside"].dropna()
    same = cmp["comparable"].astype(str).str.startswith("same")
    why = [(r.paper_table, r.quantity, str(r.model or ""), r.reason) for r in cmp.itertuples(index=False)
           if not np.isfinite(r.estimate) and str(getattr(r, "reason", "") or "")]
    if why:
        lines += ["", "Published numbers without an estimate here, and why:"]
        lines += [f"- {t}, {q}{' (' + m + ')' if m else ''}: {w}" for t, q, m, w in why]
    kind = data_kind(manifest)
    caveat = ("; THE DATA ARE SIMULATED" if kind["simulated"] is not None else "") + (
        "; multi-round games" if kind["multi_round_games"] else "")
    lines += ["", f"All: {len(cmp)} paper numbers compared, {int(same.sum())} by the same kind of method; "
                  f"{int(known.sum())}/{len(known)} inside our interval{caveat} (see 'What these data are' and "
                  "'What differs' above)."]
    return "\n".join(lines) + "\n"
