"""The bare Inspect task that ``overhead_bench.py`` measures the game against.

Eight model calls per sample, shaped like a game (four sequential, four
concurrent) and with the prompts of a real game (built once), and nothing else:
no parsing, no store, no transcript, a constant score.  It lives in a file of
its own so that both tasks are loaded the way ``inspect eval <file>`` loads
them (see ``overhead_bench.py``).
"""

from __future__ import annotations

import asyncio

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, get_model
from inspect_ai.scorer import Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, TaskState, solver

from impostor_bench.core import prompts


def _canned_prompts() -> tuple[list[str], list[str]]:
    """The eight user prompts of one real game: the bare task sends the same bytes as
    the game task, so the comparison isolates game logic, not prompt size."""
    shown: list[tuple[int, str]] = []
    describe, vote = [], []
    for label in (2, 4, 1, 3):
        describe.append(prompts.description_prompt(mode="homogeneous", word="apple", player_label=label,
                                                   previous=list(shown)))
        shown.append((label, "Something many people come across in everyday life."))
    for label in range(1, 5):
        vote.append(prompts.voting_prompt(mode="homogeneous", word="apple", player_label=label, descriptions=shown))
    return describe, vote


DESCRIBE_PROMPTS, VOTE_PROMPTS = _canned_prompts()


@solver
def bare_calls():
    """Eight model calls per sample, shaped like a game, with no game logic."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        for user in DESCRIBE_PROMPTS:
            await model.generate([ChatMessageSystem(content=prompts.DESCRIPTION_SYSTEM), ChatMessageUser(content=user)])

        async def vote(user: str) -> None:
            await model.generate([ChatMessageSystem(content=prompts.VOTING_SYSTEM), ChatMessageUser(content=user)])

        await asyncio.gather(*(vote(user) for user in VOTE_PROMPTS))
        return state

    return solve


@scorer(metrics=[accuracy()])
def bare_score():
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=1.0)

    return score


@task
def bare(n_games: int = 100) -> Task:
    samples = [Sample(id=f"g{i:05d}", input=f"game {i}", target="x") for i in range(n_games)]
    return Task(dataset=MemoryDataset(samples), solver=[bare_calls()], scorer=bare_score())
