"""Inspect provider ``bot``: ``bot/random``, ``bot/embedding``, ``bot/vague``, ``bot/script``, and
``bot/judge`` (the judge pass's deterministic rule coder, ``impostor_bench.core.judging``).

Instant, offline and deterministic: the answer depends only on the bot, its
model args, ``GenerateConfig.seed`` and the full prompt text (see
``players.seeded_rng``).  Usage is reported explicitly (about 4 characters per
token) so Inspect never falls back to tiktoken, which would try to download.
"""

from __future__ import annotations

import math
from typing import Any, Optional

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelCall,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from impostor_bench.core.errors import ImpostorError
from impostor_bench.providers.prompt_parse import PromptParseError, parse_messages
from impostor_bench.providers.bots import players
from impostor_bench.providers.bots.script import ScriptedError, load_script, scripted_answer

BOTS = ("random", "embedding", "vague", "script", "judge")
#: bot/vague = bot/embedding describing with looser associations: its neighbours ranked
#: SKIP+1..SKIP+pool instead of 1..pool (a harder-to-spot impostor, a less telling majority)
VAGUE_SKIP = 16
NOT_A_GAME = "I am an Impostor Game bot and can only answer Impostor Game prompts."


def approx_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4)) if text else 0


class BotAPI(ModelAPI):
    """One provider for all bots; ``model_name`` picks the bot."""

    def __init__(
        self,
        model_name: str,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_name not in BOTS:
            raise ImpostorError(
                f"bot/{model_name}: unknown bot; use one of "
                + ", ".join(f"bot/{b}" for b in BOTS)
            )
        self.model_args = dict(model_args)
        self._script = None
        self._embedding: Optional[players.EmbeddingPlayer] = None
        if model_name == "script":
            self._script = load_script(model_args.pop("script", None))
        elif model_name in ("embedding", "vague"):
            from impostor_bench.providers.bots.vocab import shipped_table

            known = {"declare_margin", "pool", "skip"}
            unknown = set(model_args) - known
            if unknown:
                raise ImpostorError(
                    f"bot/{model_name}: unknown model arg(s) {sorted(unknown)}; known: {sorted(known)}"
                )
            self._embedding = _embedding_player(
                float(model_args.get("declare_margin", 0.08)), int(model_args.get("pool", 8)),
                int(model_args.get("skip", VAGUE_SKIP if model_name == "vague" else 0)),
            )
            shipped_table()  # load now, not inside the first game

    def max_connections(self) -> int:
        return 64

    def connection_key(self) -> str:
        return f"bot/{self.model_name}"

    async def count_text_tokens(self, text: str) -> int:
        return approx_tokens(text)

    def answer(self, input: list[Any], config: GenerateConfig) -> tuple[str, dict[str, Any]]:
        """(text, facts) for one call; usable without an event loop."""
        if self.model_name == "judge":
            return _judge_answer(input)
        try:
            view = parse_messages(input)
        except PromptParseError as e:
            return NOT_A_GAME, {"parse_error": str(e)}
        rng = players.seeded_rng(self.model_name, config.seed, view.prompt_text)
        schema = config.response_schema.json_schema.model_dump(exclude_none=True) if config.response_schema else None
        facts: dict[str, Any] = {"phase": view.phase, "player": view.player, "attempt": view.attempt}
        if self._script is not None:
            text = scripted_answer(self._script, view)
            if text is not None:
                facts["scripted"] = True
                return text, facts
        if view.phase == "note":  # a multi-round game's private note: whom it suspects now
            voted = (self._embedding.vote if self._embedding is not None else players.random_vote)(view, rng)
            return players.note_text(voted), facts
        if view.phase == "description":
            if self._embedding is not None:
                return self._embedding.describe(view, rng), facts
            return players.random_description(view, rng), facts
        if self._embedding is not None:
            ballot = self._embedding.vote(view, rng)
        else:
            ballot = players.random_vote(view, rng)
        return players.render_ballot(ballot, schema), facts

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> tuple[ModelOutput | Exception, ModelCall]:
        request = {"bot": f"bot/{self.model_name}", "seed": config.seed}
        try:
            text, facts = self.answer(input, config)
        except ScriptedError as e:
            return e, ModelCall.create(request, {"error": str(e)})
        prompt_chars = sum(len(getattr(m, "text", "") or "") for m in input)
        in_tok = max(1, math.ceil(prompt_chars / 4))
        out_tok = approx_tokens(text)
        output = ModelOutput.from_content(model=f"bot/{self.model_name}", content=text)
        output.usage = ModelUsage(input_tokens=in_tok, output_tokens=out_tok, total_tokens=in_tok + out_tok)
        return output, ModelCall.create({**request, **facts}, {"text": text})


def _judge_answer(input: list[Any]) -> tuple[str, dict[str, Any]]:
    """bot/judge: the rule coder's labels for the game record in the last user message."""
    from impostor_bench.core.judging import JudgeReplyError, bot_reply

    prompt = next((str(getattr(m, "text", "")) for m in reversed(input) if getattr(m, "role", "") == "user"), "")
    try:
        return bot_reply(prompt), {"phase": "judge"}
    except (JudgeReplyError, ValueError) as e:
        return "bot/judge can only answer judge prompts (impostor_bench.core.judging.judge_prompt).", {
            "parse_error": str(e)}


_players: dict[tuple[float, int, int], players.EmbeddingPlayer] = {}


def _embedding_player(margin: float, pool: int, skip: int = 0) -> players.EmbeddingPlayer:
    """One EmbeddingPlayer (and neighbour cache) per setting, shared across instances."""
    from impostor_bench.providers.bots.vocab import shipped_table

    key = (margin, pool, skip)
    if key not in _players:
        _players[key] = players.EmbeddingPlayer(shipped_table(), pool=pool, declare_margin=margin, skip=skip)
    return _players[key]
