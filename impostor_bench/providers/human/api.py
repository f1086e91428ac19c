"""Inspect provider ``human/web``: a person answers a seat's calls on a local page.

    inspect eval tasks/impostor.py --model local/smollm2 -T mode=cross_play \\
        --model-role 'impostor={model: human/web, model_args: {participant: ada, timeout: 120}}'

The model is recorded as ``human/<participant>`` (``-M participant=...``, default
``anon``), so the tables put people next to models.  The answer goes back to the
engine as the completion text (a ballot as the vote prompt's JSON), and the engine
applies the same rules to it as to a model's.  A move not made within ``timeout``
seconds is an empty completion: the engine records an empty description or a
``missing`` ballot, and the re-prompt that follows is not asked again.
"""

from __future__ import annotations

import math
import re
import sys
from typing import Any, Optional

import anyio
from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelCall, ModelOutput, ModelUsage
from inspect_ai.tool import ToolChoice, ToolInfo

from impostor_bench.core.errors import ImpostorError
from impostor_bench.providers.human.server import PageServer
from impostor_bench.providers.human.session import HumanSession
from impostor_bench.providers.prompt_parse import PromptParseError, parse_messages

TRANSPORTS = ("web",)
MODEL_ARGS = ("participant", "port", "host", "timeout")
_PARTICIPANT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
POLL_S = 0.1


def _tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4)) if text else 0


def _timeout(value: Any) -> Optional[float]:
    if value is None or str(value).strip().lower() in ("", "none", "0"):
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise ImpostorError(f"human/web: -M timeout={value!r} is not valid; fix: seconds per move (> 0), or 0 for no limit")
    return seconds


class HumanAPI(ModelAPI):
    """One person in one or more seats; the page server lives as long as the model."""

    def __init__(
        self,
        model_name: str,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        if model_name not in TRANSPORTS:
            raise ImpostorError(f"human/{model_name}: unknown; use human/web (name the player with -M participant=...)")
        unknown = sorted(set(model_args) - set(MODEL_ARGS))
        if unknown:
            raise ImpostorError(f"human/web: unknown model arg(s) {unknown}; known: {list(MODEL_ARGS)}")
        participant = str(model_args.get("participant") or "anon")
        if not _PARTICIPANT.match(participant):
            raise ImpostorError(f"human/web: participant {participant!r} is not valid; "
                                f"fix: letters, digits, '.', '_' or '-' (at most 64)")
        try:
            port = int(model_args.get("port") or 0)
        except ValueError:
            port = -1
        if not 0 <= port <= 65535:
            raise ImpostorError(f"human/web: -M port={model_args.get('port')!r} is not valid; fix: 1-65535, or 0 for any free port")
        # Recorded as human/<participant>: Inspect names a model <provider>/<api.model_name>.
        super().__init__(participant, base_url, api_key, [], config)
        self.transport = model_name
        self.session = HumanSession(participant=participant, timeout=_timeout(model_args.get("timeout")))
        self.server = PageServer(self.session, host=str(model_args.get("host") or "127.0.0.1"), port=port)
        print(f"\nhuman/{participant}: play at {self.server.url}\n", file=sys.stderr, flush=True)

    @property
    def url(self) -> str:
        return self.server.url

    def max_connections(self) -> int:
        return 16  # every waiting call is a move on the page (one shown at a time)

    def connection_key(self) -> str:
        return f"human/{self.model_name}"

    async def count_text_tokens(self, text: str) -> int:
        return _tokens(text)

    async def aclose(self) -> None:
        self.server.close()

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> tuple[ModelOutput | Exception, ModelCall]:
        try:
            view = parse_messages(input)
        except PromptParseError as e:
            return ImpostorError(f"human/{self.model_name} can only answer Impostor Game prompts ({e})"), \
                ModelCall.create({"participant": self.model_name}, {"error": str(e)})
        move = self.session.ask(input, view)
        timed_out = False
        try:
            if self.session.expired(move):
                text, timed_out = "", True
                self.session.skip(move)
            else:
                while True:
                    answer, timed_out = self.session.poll(move)
                    if answer is not None:
                        text = answer
                        break
                    await anyio.sleep(POLL_S)
        finally:
            self.session.release(move)
        waited = round(self.session.clock() - move.asked_at, 3)
        # usage given explicitly (about 4 characters a token), so Inspect never reaches for tiktoken
        in_tok = max(1, math.ceil(sum(len(getattr(m, "text", "") or "") for m in input) / 4))
        output = ModelOutput.from_content(model=f"human/{self.model_name}", content=text)
        output.usage = ModelUsage(input_tokens=in_tok, output_tokens=_tokens(text), total_tokens=in_tok + _tokens(text))
        request = {"participant": self.model_name, "transport": self.transport, "move": move.id,
                   "phase": view.phase, "player": view.player, "attempt": view.attempt}
        return output, ModelCall.create(request, {"text": text, "seconds": waited, "timed_out": timed_out},
                                        time=waited)
