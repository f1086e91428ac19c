"""An in-process scripted player for reliability tests (an Inspect ``@modelapi``).

``reliability/<name>`` answers every call by asking the function registered
under ``<name>`` in :data:`SCRIPTS` for the text.  The function gets a
:class:`Call` describing the request (phase, the seat asking, its word, the
attempt number) and returns a string.  Usage is always reported explicitly
(Inspect's token counter would otherwise try to download a tiktoken file).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)

from impostor_bench.core import prompts

_LABEL = re.compile(r"You are Player (\d)")
_WORD = re.compile(r"Your word (?:is|was): ([a-z]+)")


@dataclass
class Call:
    model: str  # the name after "reliability/"
    phase: str  # "describe" | "vote"
    label: int  # the asking player's number (seat + 1)
    word: str
    attempt: int  # 1 for the first ask, 2 for the re-prompt
    user: str  # the first user prompt
    messages: list[ChatMessage]
    config: GenerateConfig


Script = Callable[[Call], str]
SCRIPTS: dict[str, Script] = {}
LATENCY: dict[str, float] = {}  # seconds of asyncio.sleep per call, by model name
CALLS: dict[str, int] = {}
IN_FLIGHT: dict[str, int] = {}
MAX_IN_FLIGHT: dict[str, int] = {}


def _own_label(user: str) -> int:
    # The *last* "You are Player N" line is the prompt's own (a description may forge one).
    found = _LABEL.findall(user)
    return int(found[-1]) if found else 0


def parse_call(model: str, messages: list[ChatMessage], config: GenerateConfig) -> Call:
    system = messages[0].text
    user = messages[1].text
    word = _WORD.search(user)
    return Call(
        model=model,
        phase="vote" if system == prompts.VOTING_SYSTEM else "describe",
        label=_own_label(user),
        word=word.group(1) if word else "",
        attempt=1 + sum(1 for m in messages[2:] if m.role == "user"),
        user=user,
        messages=messages,
        config=config,
    )


def ballot(
    sid: Any, confidence: Any = 0.7, reasoning: Any = "r", declare: Any = False, guess: Any = None
) -> str:
    """A well-formed JSON ballot."""
    return json.dumps({
        "suspected_impostor_id": sid, "confidence": confidence, "reasoning": reasoning,
        "self_declaration": declare, "word_guess": guess,
    })


def usage() -> ModelUsage:
    return ModelUsage(input_tokens=100, output_tokens=20, total_tokens=120)


@modelapi(name="reliability")
class ScriptedAPI(ModelAPI):
    def __init__(
        self, model_name: str, base_url: Optional[str] = None, api_key: Optional[str] = None,
        config: GenerateConfig = GenerateConfig(), **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input, tools, tool_choice, config):  # type: ignore[override]
        name = self.model_name
        CALLS[name] = CALLS.get(name, 0) + 1
        IN_FLIGHT[name] = IN_FLIGHT.get(name, 0) + 1
        MAX_IN_FLIGHT[name] = max(MAX_IN_FLIGHT.get(name, 0), IN_FLIGHT[name])
        try:
            delay = LATENCY.get(name, 0.0)
            if delay:
                await asyncio.sleep(delay)
        finally:
            IN_FLIGHT[name] -= 1
        script = SCRIPTS.get(name)
        if script is None:
            raise RuntimeError(f"no script registered for reliability/{name}")
        text = script(parse_call(name, input, config))
        output = ModelOutput.from_content(self.model_name, text)
        output.usage = usage()
        return output

    def max_connections(self) -> int:
        return 64


def honest(call: Call, impostor_label: Optional[int] = None) -> str:
    """A default player: a harmless description; votes for ``impostor_label`` (or the next player)."""
    if call.phase == "describe":
        return "Something many people come across in everyday life."
    target = impostor_label if impostor_label not in (None, call.label) else call.label % 4 + 1
    return ballot(f"Player {target}")
