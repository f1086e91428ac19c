"""``impostor annotate``: the judge pass over finished games, with its cost estimate first.

    impostor annotate --experiment NAME --judge MODEL    # the Inspect logs of an MLflow experiment's runs
    impostor annotate --logs DIR --judge bot/judge       # straight from Inspect logs
    impostor annotate --logs DIR --judge gpt-4o --plan   # the estimate only
    impostor annotate --agreement --judge local/smollm2  # Cohen's kappa against the hand-coded sample

Runs Inspect's own re-scoring (``inspect score`` with the scorer ``impostor_bench/strategy_judge``,
action append) on every log and writes the labels into the log (scorers/judge.py); games a pass
with the same judge and coding-scheme version already labelled are skipped and cost nothing.
With ``--experiment`` the runs' tables are logged again (``impostor sync --force`` of each
labelled log), so ``impostor export --experiment`` sees the labels; ``impostor export`` then fills
the players columns ``judge_*`` and the report's Table 12 uses
them (Strategy Align., Alignment Gap), naming the judge. The estimate counts one judge call a
game: the prompt (~4 characters a token) in, ``--max-tokens`` out, a retry not counted.
``--agreement`` runs the judge on the hand-coded sample shipped in configs/judge_sample.json and
prints its agreement with the hand codes per label (Cohen's kappa with its 95% interval).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any, Optional

from impostor_bench.core.errors import ImpostorError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("annotate", help="label strategies, trust and coordination intent with a judge model",
                              description=__doc__.splitlines()[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--logs", metavar="DIR", help="Inspect log directory (recursive) or one .eval file")
    src.add_argument("--experiment", metavar="NAME", help="MLflow experiment name (its runs' Inspect logs)")
    src.add_argument("--agreement", action="store_true",
                     help="judge the hand-coded sample (configs/judge_sample.json) and print Cohen's kappa")
    p.add_argument("--judge", required=True, metavar="MODEL",
                   help="the judge: an alias of configs/models.yaml or any Inspect model string (bot/judge: the "
                        "deterministic rule coder)")
    p.add_argument("--max-tokens", type=int, default=400, help="judge reply limit (default 400)")
    p.add_argument("--plan", action="store_true", help="print the estimate and stop")
    p.add_argument("--structured", action="store_true",
                   help="ask for the reply's JSON schema (providers that support it answer only in the format; "
                        "always on for local/ judges, which hold it through a llama.cpp grammar)")
    p.add_argument("--tracking-uri", help="with --experiment; default MLFLOW_TRACKING_URI, else sqlite:///mlruns/mlflow.db")
    p.set_defaults(func=_cmd)


@dataclass
class AnnotatePlan:
    """What a pass will do: per log, the games to label and the games already labelled."""

    judge: str
    logs: dict[str, int] = field(default_factory=dict)  # log -> games to label
    cached: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    usd: Optional[float] = None
    price_source: str = "unknown"

    @property
    def games(self) -> int:
        return sum(self.logs.values())

    def text(self) -> str:
        usd = "unknown" if self.usd is None else f"${self.usd:,.4f}"
        return (f"annotate plan: judge {self.judge}; {self.games:,} game(s) to label in "
                f"{sum(1 for n in self.logs.values() if n)} log(s), {self.cached:,} already labelled by this judge "
                f"(reused, no cost)\n"
                f"estimated cost (one call a game, ~4 characters a token, retries not counted): {self.games:,} calls, "
                f"{self.input_tokens:,} input tokens, <= {self.output_tokens:,} output tokens, {usd}"
                f"  price: {self.price_source}")


def make_plan(paths: list[str], judge: str, max_tokens: int) -> AnnotatePlan:
    """Read every log once and count (and price) the judge calls a pass would make."""
    from impostor_bench.core.judging import SYSTEM, judge_prompt, judge_record, load_scheme
    from impostor_bench.pricing import price_of
    from impostor_bench.scorers.judge import cached_labels, game_record_of
    from inspect_ai.log import read_eval_log

    scheme = load_scheme()
    pl = AnnotatePlan(judge)
    for path in paths:
        log = read_eval_log(path)
        todo = 0
        for s in log.samples or []:
            rec = game_record_of(s.scores)
            if rec is None:
                continue
            if cached_labels(s.scores, judge, int(scheme["version"])) is not None:
                pl.cached += 1
                continue
            todo += 1
            chars = len(SYSTEM) + len(judge_prompt(judge_record(rec["game"], rec["players"]), scheme))
            pl.input_tokens += -(-chars // 4)
            pl.output_tokens += max_tokens
        pl.logs[path] = todo
    price = price_of(judge)
    if price is not None:
        pl.usd = pl.input_tokens * price.input_per_token + pl.output_tokens * price.output_per_token
        pl.price_source = price.source
    return pl


def annotate_logs(pl: AnnotatePlan, max_tokens: int, structured: bool = False) -> int:
    """Score each log that has games to label with the judge scorer (append) and write it back."""
    from inspect_ai import score
    from inspect_ai.log import read_eval_log, write_eval_log

    from impostor_bench.scorers.judge import strategy_judge

    done = 0
    for path, todo in pl.logs.items():
        if not todo:
            continue
        log = read_eval_log(path)
        scored = score(log, [strategy_judge(judge=pl.judge, max_tokens=max_tokens, structured=structured)],
                       action="append",
                       display="none")
        write_eval_log(scored, path)
        done += todo
    return done


def logs_of_experiment(experiment: str, tracking_uri: Optional[str]) -> list[str]:
    """The Inspect log files the experiment runs of an MLflow experiment name (tag ``impostor.log_file``)."""
    from pathlib import Path

    from impostor_bench.tracking.logrun import TAG
    from impostor_bench.tracking.store import get_client

    client, uri = get_client(tracking_uri)
    exp = client.get_experiment_by_name(experiment)
    if exp is None:
        raise ImpostorError(f"{uri}: no MLflow experiment {experiment!r}; fix: check the name (`mlflow experiments "
                            f"search`) or pass the logs with --logs DIR")
    files = []
    for run in client.search_runs([exp.experiment_id], max_results=50000):
        f = run.data.tags.get(f"{TAG}log_file")
        if f and Path(f).exists():
            files.append(f)
    if not files:
        raise ImpostorError(f"MLflow experiment {experiment!r}: no run names an Inspect log file that exists here; "
                            f"fix: pass the logs with --logs DIR")
    return sorted(set(files))


def sample_path():
    from pathlib import Path

    return Path(__file__).resolve().parents[1] / "configs" / "judge_sample.json"


def agreement(judge: str, max_tokens: int, path=None, structured: bool = False):
    """The judge's labels of the hand-coded sample and their agreement with the hand codes
    (``analysis.stats.judge_labels.judge_agreement``): (table, judged rows, games it could not label)."""
    import asyncio
    import json

    import pandas as pd
    from inspect_ai.model import get_model

    from impostor_bench.analysis.stats.judge_labels import judge_agreement
    from impostor_bench.core.judging import load_scheme
    from impostor_bench.scorers.judge import label_game

    sample = json.loads((path or sample_path()).read_text(encoding="utf-8"))
    scheme = load_scheme()
    if sample.get("scheme_version") != scheme["version"]:
        raise ImpostorError(f"{path or sample_path()}: coded with scheme version {sample.get('scheme_version')}, the "
                            f"scheme is version {scheme['version']}; fix: recode the sample")
    model = get_model(judge)
    hand: list[dict] = []
    judged: list[dict] = []
    failed: list[str] = []

    async def run() -> None:
        for g in sample["games"]:
            labels, _reply, error = await label_game(model, g["record"], scheme, max_tokens, structured)
            for seat, (st, tr, co) in g["hand"].items():
                hand.append({"game": g["game"], "seat": int(seat), "strategy": st, "trust": tr, "coord_intent": co})
            if labels is None:
                failed.append(f"{g['game']}: {error}")
                continue
            judged.extend({"game": g["game"], "seat": s + 1, **lab} for s, lab in labels.items())

    asyncio.run(run())
    cols = ["game", "seat", "strategy", "trust", "coord_intent"]
    return judge_agreement(pd.DataFrame(hand, columns=cols), pd.DataFrame(judged, columns=cols)), judged, failed


def _cmd(args: argparse.Namespace) -> int:
    from impostor_bench.export import find_logs
    from impostor_bench.registry import load_registry

    if args.max_tokens <= 0:
        raise ImpostorError(f"--max-tokens {args.max_tokens}: must be positive; fix: e.g. --max-tokens 400")
    judge = load_registry().resolve(args.judge)
    # a local judge answers in the format only under the reply's grammar (a 135M model wrote no JSON without it)
    args.structured = args.structured or judge.startswith("local/")
    if args.agreement:
        table, _judged, failed = agreement(judge, args.max_tokens, structured=args.structured)
        print(f"agreement of judge {judge} with the hand-coded sample ({sample_path().name}; "
              f"{len(failed)} game(s) unusable):")
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        for f in failed:
            print(f"  unusable: {f}")
        return 0
    paths = find_logs(args.logs) if args.logs else logs_of_experiment(args.experiment, args.tracking_uri)
    if not paths:
        raise ImpostorError(f"{args.logs or args.experiment}: no Inspect logs; fix: pass the folder a sweep wrote")
    pl = make_plan(paths, judge, args.max_tokens)
    print(pl.text(), flush=True)
    if args.plan or pl.games == 0:
        return 0
    done = annotate_logs(pl, args.max_tokens, args.structured)
    print(f"labelled {done:,} game(s) with {judge}; `impostor export` puts the labels in players.parquet (judge_*)")
    if args.experiment:  # the runs' tables/ artifacts were logged before the labels: log them again
        from impostor_bench.tracking.sync import sync

        for path, todo in pl.logs.items():
            if todo:
                sync(path, experiment=args.experiment, tracking_uri=args.tracking_uri, force=True)
        print(f"re-logged the tables of {sum(1 for n in pl.logs.values() if n)} run(s) of MLflow experiment "
              f"{args.experiment!r} with the labels")
    return 0
