"""The paper's published numbers beside ours (``impostor report --compare-paper``).

``analysis/paper_data/paper_values.csv`` holds the numbers of Tables 1, 2/4, 5, 6, 8, 10, 11,
12 and the headline statistics of Sections 3.2-3.4 (and B.2's overall rate), one row each:
where in the paper it is (``paper_table``, ``line`` = line of the paper's text,
/work/shared/seed/000_bbe86ea630e89cb0.txt in the project, "Who's the Impostor?"), the
model (our alias; empty for pooled rows), the value and the paper's interval where it
prints one, and where the same quantity lives in a bundle: ``table``, the row
(``match``: ``col=value;...``) and ``column``.

``compare(results)`` looks each one up in the bundle's tables (with the one interval
:mod:`impostor_bench.analysis.intervals` picks for it) and says whether the paper's value lies inside
our interval. Rows of models the bundle does not have are left out; pooled rows stay.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from impostor_bench.analysis.intervals import lookup

__all__ = ["PAPER_VALUES", "PAPER_SOURCE", "load_paper_values", "compare", "comparison_text"]

PAPER_VALUES = Path(__file__).resolve().parents[1] / "paper_data" / "paper_values.csv"
PAPER_SOURCE = "Who's the Impostor? Multi-Agent Social Deduction for Evaluating LLM Social Reasoning (NeurIPS 2025 submission)"

COLUMNS = ["paper_table", "quantity", "model", "paper_value", "estimate", "ci_low", "ci_high", "inside",
           "interval", "calibrated", "line", "table", "match", "column"]


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


def compare(results: dict[str, pd.DataFrame], settings: Optional[dict] = None,
            paper: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """One row per paper number the bundle can hold: paper value, our estimate and interval,
    and ``inside`` (True/False; NA where we have no interval or no estimate)."""
    paper = load_paper_values() if paper is None else paper
    ours = _bundle_models(results)
    rows = []
    for r in paper.itertuples(index=False):
        model = str(r.model or "")
        match = str(r.match)
        if model:
            if model not in ours:
                continue
            match = match.replace(f"model={model}", f"model={ours[model]}")
        got = lookup(results, r.table, match, r.column, settings)
        lo, hi, est = got["low"], got["high"], got["estimate"]
        inside = pd.NA if not (np.isfinite(lo) and np.isfinite(hi)) else bool(lo <= r.paper_value <= hi)
        rows.append({"paper_table": r.paper_table, "quantity": r.quantity, "model": ours.get(model, ""),
                     "paper_value": float(r.paper_value), "estimate": est, "ci_low": lo, "ci_high": hi,
                     "inside": inside, "interval": got["method"] or ("no interval" if np.isfinite(est) else
                                                                     "not in this bundle"),
                     "calibrated": got["calibrated"], "line": int(r.line), "table": r.table, "match": match,
                     "column": r.column})
    out = pd.DataFrame(rows, columns=COLUMNS)
    out["inside"] = out["inside"].astype("boolean")
    return out


def _fmt(v: float) -> str:
    if v is None or not np.isfinite(v):
        return "--"
    return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"


def comparison_text(cmp: pd.DataFrame, width: int = 118) -> str:
    """The comparison as a plain-text table for the terminal, with a one-line summary per paper table."""
    lines = [f"Paper ({PAPER_SOURCE}) beside this bundle: paper value, our estimate [95% interval], "
             "inside = the paper's value lies in our interval."]
    head = f"{'paper':<18} {'quantity':<46} {'model':<17} {'paper':>8} {'ours':>8} {'interval':>19} inside"
    for tab, grp in cmp.groupby("paper_table", sort=False):
        known = grp["inside"].dropna()
        lines += ["", f"{tab}: {len(grp)} numbers, {int(known.sum())}/{len(known)} inside our interval"
                  + (f", {len(grp) - len(known)} without an interval" if len(grp) > len(known) else ""), head]
        for r in grp.itertuples(index=False):
            ci = "--" if not np.isfinite(r.ci_low) else f"[{_fmt(r.ci_low)}, {_fmt(r.ci_high)}]"
            ins = "--" if pd.isna(r.inside) else ("yes" if r.inside else "NO")
            lines.append(f"{('line ' + str(r.line)):<18} {str(r.quantity)[:46]:<46} {str(r.model)[:17]:<17} "
                         f"{_fmt(r.paper_value):>8} {_fmt(r.estimate):>8} {ci:>19} {ins}")
    known = cmp["inside"].dropna()
    lines += ["", f"All: {len(cmp)} paper numbers compared, {int(known.sum())}/{len(known)} inside our interval."]
    return "\n".join(line[:width + 40] for line in lines) + "\n"
