"""One list of every p-value and interval the report prints (``tables/inference.csv``).

Each :class:`Inference` entry says where a table prints inference (its estimate, interval
and p-value columns), which method produced it and under which calibration key its size and
coverage are measured (``analysis/calibration_matrix.py`` writes one row per key, scenario and
design size to ``benchmarks/calibration.csv``; docs/analysis.md has the figures). The
``inference`` table flattens every entry over the computed tables: one row per printed
p-value or interval. The multiple-comparison families are built from it, and only from rows
whose method is calibrated (``calibrated``): a paper-reproduction method (``paper_methods``,
labelled "paper" in its method) or a row that was not computed never enters a family.

A test (tests/analysis/stats/test_inference_registry.py) fails when a table prints a p-value or
interval column that no entry lists, or when an entry has no calibration row, so nothing
uncalibrated can be added later without it showing.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from impostor_bench.analysis.stats._base import REGISTRY, StatsUnavailable, table
from impostor_bench.analysis.stats.session import Analysis
from impostor_bench.analysis.stats.config import StatsConfig
from impostor_bench.analysis.stats.declaration import WILD, WILD_PERCENTILE, Inference  # noqa: F401 - re-exported

INFERENCE_COLUMNS = ["table", "quantity", "estimate", "ci_low", "ci_high", "p", "method", "calibration", "calibrated",
                     "family", "estimand"]

#: What a printed interval or p-value is about, by its method (``estimand_of``).
ESTIMAND_DESIGN = ("conditional on this benchmark's design: its models, word pairs and schedule (experiments as "
                   "the independent units)")
ESTIMAND_PAIRS = ("over a population of word pairs of each tier (pairs and experiments as units, two-way "
                  "clustered), conditional on the models")
ESTIMAND_PAPER = "the paper's procedure (games as independent units); not a calibrated estimand"
ESTIMAND_NONE = "not computed"


def estimand_of(method: object) -> str:
    """The estimand of a row's interval / p-value, from its method label."""
    m = str(method)
    if not m or m == "nan" or "not computed" in m:
        return ESTIMAND_NONE
    if m.startswith("paper"):
        return ESTIMAND_PAPER
    if "word pair" in m:
        return ESTIMAND_PAIRS
    return ESTIMAND_DESIGN


def estimand_sentence(inference: Optional[pd.DataFrame], tables) -> str:
    """The caption's sentence on what the intervals and p-values of ``tables`` are about, from their
    rows of the ``inference`` table (its ``estimand`` column, ``estimand_of`` of the method: the one
    definition); "" when they print none. Several estimands are listed with their row counts."""
    if inference is None or not len(inference) or "table" not in inference.columns:
        return ""
    rows = inference[inference["table"].astype(str).isin(list(tables))]
    est = rows["estimand"] if "estimand" in rows.columns else rows["method"].map(estimand_of)
    est = est.astype(str)
    est = est[~est.isin([ESTIMAND_NONE, "nan", ""])]
    if not len(est):
        return ""
    counts = est.value_counts(sort=False)
    if len(counts) == 1:
        return f" Estimand of the intervals and p-values: {counts.index[0]}."
    return " Estimands of the intervals and p-values: " + "; ".join(f"{e} ({n} rows)" for e, n in counts.items()) + "."


def specs() -> tuple[Inference, ...]:
    """Every printed p-value and interval of the report: the ``inference`` of each table's
    declaration (``@table``), in the bundle's table order (tables that declare none print none)."""
    from impostor_bench.analysis.stats import TABLES  # the package discovers every table module

    return tuple(i for fn in TABLES.values() for i in fn.spec.inference)


def __getattr__(name: str):
    """``SPECS``: :func:`specs`, read when asked for (every table module must be imported first)."""
    if name == "SPECS":
        return specs()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_calibrated(method: object) -> bool:
    """A printed method that the calibration covers: not the paper's reproduction, not skipped."""
    m = str(method)
    return bool(m) and m != "nan" and not m.startswith("paper") and "not computed" not in m


def rows_of(spec: Inference, frame: pd.DataFrame) -> pd.DataFrame:
    """The inference rows one spec contributes from its computed table (empty if absent)."""
    need = [*spec.keys, spec.estimate, *(spec.ci or ()), *((spec.p,) if spec.p else ())]
    if frame is None or len(frame) == 0 or any(c not in frame.columns for c in need):
        return pd.DataFrame(columns=INFERENCE_COLUMNS)
    quantity = frame[spec.keys[0]].astype(str)
    for k in spec.keys[1:]:
        quantity = quantity + "/" + frame[k].astype(str)
    method = frame[spec.method].astype(str) if spec.method in frame.columns else pd.Series(spec.method, index=frame.index)
    num = lambda c: pd.to_numeric(frame[c], errors="coerce") / spec.scale  # noqa: E731
    nan = pd.Series(np.nan, index=frame.index)
    out = pd.DataFrame({
        "table": spec.table, "quantity": spec.name + ":" + quantity, "estimate": num(spec.estimate),
        "ci_low": num(spec.ci[0]) if spec.ci else nan, "ci_high": num(spec.ci[1]) if spec.ci else nan,
        "p": pd.to_numeric(frame[spec.p], errors="coerce") if spec.p else nan,
        "method": method, "calibration": spec.calibration, "family": spec.family,
    })
    if spec.family is not None and spec.pooled_out:  # a pooled row summarises the family, it is not in it
        pooled = np.zeros(len(frame), bool)
        for k in spec.keys:
            pooled |= frame[k].astype(str).to_numpy() == "ALL"
        out.loc[pooled, "family"] = None
    out["calibrated"] = out["method"].map(is_calibrated)
    out["estimand"] = out["method"].map(estimand_of)
    keep = out[["ci_low", "ci_high", "p"]].notna().any(axis=1) | ~out["calibrated"]
    return out[keep].reset_index(drop=True)


def inference_rows(data, config, tables=None) -> pd.DataFrame:
    """The rows of :func:`specs` over the computed tables (only ``tables`` when given: the calibration
    matrix re-runs a subset); empty, with the ``inference`` columns, when nothing is printed."""
    by_table: dict[str, list[Inference]] = {}
    for s in specs():
        by_table.setdefault(s.table, []).append(s)
    parts = []
    for name, entries in by_table.items():
        if tables is not None and name not in tables:
            continue
        frame = REGISTRY[name](data, config)
        parts += [rows_of(s, frame) for s in entries]
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=INFERENCE_COLUMNS)


def printing_tables() -> tuple[str, ...]:
    """The tables whose declaration prints inference: what ``inference`` reads."""
    return tuple(dict.fromkeys(s.table for s in specs()))


@table("inference", columns=INFERENCE_COLUMNS,
    title="Every printed p-value and interval: its method, calibration key and multiple-comparison family",
    section="robustness", needs=printing_tables,
)
def inference(data: Analysis, config: StatsConfig) -> pd.DataFrame:
    """One row per printed p-value or interval of the bundle (see the module docstring)."""
    rows = inference_rows(data, config)
    if len(rows) == 0:
        raise StatsUnavailable("no table printed a p-value or interval")
    return rows
