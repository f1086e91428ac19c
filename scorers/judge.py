"""Scorer ``strategy_judge``: the judge pass over finished games.

Run over finished logs with Inspect's own re-scoring, any Inspect model as the judge::

    inspect score --scorer impostor_bench/strategy_judge -S judge=bot/judge LOG.eval
    impostor annotate --experiment NAME --judge local/smollm2     # cost estimate first

It reads the game record the ``impostor_winner`` score holds, asks the judge once per game
(``impostor_bench.core.judging``: the coding scheme of configs/judge_scheme.json) and stores
the labels in the score's metadata (``{"labels": {seat: {strategy, trust, coord_intent}},
"judge": MODEL, "scheme_version": N}``), so the log keeps them: a later pass with the same
judge and scheme finds them among the sample's scores and returns them without a call, and
the exporter turns them into the players-table columns ``judge_*``. The score value is the
share of seats labelled ``coord_intent`` (a number Inspect can average); a reply that breaks
the format is asked again once, then the game's score says why (value NaN, no labels).
"""

from __future__ import annotations

import math
from typing import Any, Optional

from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, Model, ResponseSchema, get_model
from inspect_ai.util import JSONSchema
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from impostor_bench.core.judging import (JUDGE_SCORER, SYSTEM, JudgeReplyError, judge_prompt, judge_record,
                                         load_scheme, parse_reply, reply_json_schema)

WINNER_SCORER = "impostor_winner"
RETRY = "Your answer could not be used: {error}. Answer again with JSON only, in the format asked."


def game_record_of(scores: Optional[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """The ``{"game", "players"}`` record of a sample's ``impostor_winner`` score (None: not a scored game)."""
    s = (scores or {}).get(WINNER_SCORER)
    md = getattr(s, "metadata", None)
    return md if isinstance(md, dict) and "game" in md and "players" in md else None


def cached_labels(scores: Optional[dict[str, Any]], judge: str, version: int) -> Optional[Score]:
    """An earlier judge score of the same judge and scheme version among a sample's scores."""
    for name, s in (scores or {}).items():
        md = getattr(s, "metadata", None) or {}
        if (name.startswith(JUDGE_SCORER) and md.get("judge") == judge and md.get("scheme_version") == version
                and md.get("labels")):
            return s
    return None


def reply_schema(record: dict[str, Any], scheme: dict[str, Any]) -> ResponseSchema:
    """The reply's JSON schema (``structured=True``: a provider that supports it, e.g. the local
    llama.cpp models through a grammar, can only answer in the format; ``reply_json_schema``)."""
    return ResponseSchema(name="judge_labels", json_schema=JSONSchema.model_validate(reply_json_schema(record, scheme)))


async def label_game(model: Model, record: dict[str, Any], scheme: dict[str, Any],
                     max_tokens: int, structured: bool = False) -> tuple[Optional[dict[int, dict]], str, str]:
    """(labels by seat or None, the last reply, the parse error) of one judge call on a game's
    record (``judge_record``), asked again once when the reply breaks the format."""
    seats = [int(p["player"]) - 1 for p in record["players"]]
    config = GenerateConfig(temperature=0.0, max_tokens=max_tokens,
                            response_schema=reply_schema(record, scheme) if structured else None)
    messages: list[Any] = [ChatMessageSystem(content=SYSTEM), ChatMessageUser(content=judge_prompt(record, scheme))]
    error, reply = "", ""
    for _attempt in range(2):
        out = await model.generate(messages, config=config)
        reply = out.completion
        try:
            return parse_reply(reply, seats, scheme), reply, ""
        except JudgeReplyError as e:
            error = str(e)
            messages += [out.message, ChatMessageUser(content=RETRY.format(error=error))]
    return None, reply, error


@scorer(metrics=[mean()])
def strategy_judge(judge: str = "bot/judge", max_tokens: int = 400, structured: bool = False) -> Scorer:
    """Label every player's strategy, trust statements and coordination intent with ``judge``
    (an Inspect model string), from the finished game's record."""
    scheme = load_scheme()
    version = int(scheme["version"])
    model: Optional[Model] = None

    async def score(state: TaskState, target: Target) -> Score:
        nonlocal model
        cached = cached_labels(state.scores, judge, version)
        if cached is not None:
            return Score(value=cached.value, answer=cached.answer, explanation=cached.explanation,
                         metadata={**(cached.metadata or {}), "cached": True})
        record = game_record_of(state.scores)
        if record is None:
            return Score(value=math.nan, explanation=f"no {WINNER_SCORER} game record in this sample: run "
                                                      "`inspect score` on a finished impostor log",
                         metadata={"judge": judge, "scheme_version": version, "labels": None})
        model = model or get_model(judge)
        labels, reply, error = await label_game(model, judge_record(record["game"], record["players"]), scheme,
                                                max_tokens, structured)
        if labels is None:
            return Score(value=math.nan, explanation=f"judge reply unusable twice: {error}",
                         metadata={"judge": judge, "scheme_version": version, "labels": None, "error": error})
        coord = sum(lab["coord_intent"] for lab in labels.values()) / len(labels)
        return Score(value=coord, answer=", ".join(f"P{s + 1}:{labels[s]['strategy']}" for s in sorted(labels)),
                     explanation=reply, metadata={"judge": judge, "scheme_version": version,
                                                  "labels": {str(s): lab for s, lab in sorted(labels.items())}})

    return score
