"""Play the bad-output corpus through the real task: one game per case, one eval."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

from . import scripted
from .bad_outputs import CASES, GOOD, WORD_POOL, Case, Ctx

MODEL = "corpus"


@dataclass
class Game:
    case: Case
    metadata: dict[str, Any]
    ctx_base: dict[str, Any]


def word_pairs(cases: list[Case]) -> list[tuple[str, str]]:
    pinned = {w for c in cases if c.words for w in c.words}
    pool = iter(w for w in WORD_POOL if w not in pinned)
    pairs = []
    for c in cases:
        pairs.append(c.words if c.words else (next(pool), next(pool)))
    return pairs


def write_word_pairs(path: Path, cases: list[Case]) -> dict[str, Case]:
    """A one-tier word-pair file, pair i for case i; returns {pair_id: case}."""
    pairs = word_pairs(cases)
    path.write_text(json.dumps({"easy": [list(p) for p in pairs]}))
    return {f"easy-{i + 1:03d}": c for i, c in enumerate(cases)}


def _labels(md: dict, case: Case) -> dict[str, int]:
    imp = md["impostor_seat"] + 1
    majority = [s + 1 for s in range(4) if s + 1 != imp]
    target = imp if case.target == "impostor" else majority[0]
    other = next(label for label in majority if label != target)
    return {"imp": imp, "target": target, "other": other}


def make_script(games: dict[str, Game]):
    """The responder for ``reliability/corpus``: the case's bad output for the target seat."""

    def respond(call: scripted.Call) -> str:
        game = games[call.word]
        case, base = game.case, game.ctx_base
        ctx = Ctx(own=call.label, word=call.word, **base)
        is_target = case.target == "all" or call.label == ctx.target
        if is_target and call.phase == case.phase:
            r = case.responses[min(call.attempt, len(case.responses)) - 1]
            return r(ctx) if callable(r) else r
        if call.phase == "describe":
            return GOOD
        lowest_majority = min(label for label in range(1, 5) if label != ctx.imp)
        return scripted.ballot(f"Player {ctx.imp if call.label != ctx.imp else lowest_majority}")

    return respond


def play_corpus(tmp: Path, cases: list[Case] = CASES) -> tuple[EvalLog, dict[str, Game]]:
    """Play every case (homogeneous mode, one game each) and return the log and games by pair id."""
    from impostor_bench.core.experiment import ALL_SEATS, experiment_id
    from impostor_bench.core.schedule import GameSpec
    from impostor_bench.tasks.impostor import game_samples, impostor

    wp = tmp / "corpus_pairs.json"
    by_pair = write_word_pairs(wp, cases)
    samples = game_samples("homogeneous", "easy", len(cases), 0, str(wp), None)
    games_by_word: dict[str, Game] = {}
    games: dict[str, Game] = {}
    # the impostor seat is the experiment's own draw: make it here as the solver will
    identity = experiment_id("homogeneous", "easy", {ALL_SEATS: f"reliability/{MODEL}"}, 0)
    for s in samples:
        md = GameSpec.from_metadata(s.metadata or {}).for_experiment(identity).to_metadata()
        case = by_pair[md["pair_id"]]
        base = _labels(md, case) | {"majority": md["majority_word"], "impostor": md["impostor_word"]}
        game = Game(case, md, base)
        games_by_word[md["majority_word"]] = games_by_word[md["impostor_word"]] = game
        games[str(s.id)] = game
    scripted.SCRIPTS[MODEL] = make_script(games_by_word)
    logs = inspect_eval(
        impostor(mode="homogeneous", difficulty="easy", n_games=len(cases), word_pairs=str(wp)),
        model=f"reliability/{MODEL}", log_dir=str(tmp / "logs"), display="none",
        max_samples=len(cases), max_connections=64, log_level="error",
    )
    return logs[0], games
