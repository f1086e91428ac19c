"""Inspect provider ``litellm``: ``litellm/<provider>/<model>`` through ``litellm.acompletion``.

Examples: ``litellm/openai/gpt-4o``, ``litellm/anthropic/claude-sonnet-4-20250514``,
``litellm/openrouter/meta-llama/llama-4-scout``, or any OpenAI-compatible server
with ``litellm/openai/<name> -M api_base=http://host:port/v1``.

Model args (``-M``): ``api_base`` (alias ``base_url``), ``api_key``,
``response_format`` (``json_schema``, the default, or ``json_object`` for
servers such as llama.cpp's that take ``{"type": "json_object", "schema": ...}``),
``timeout`` (seconds); any other arg is passed to ``litellm.acompletion``.
Environment: ``LITELLM_BASE_URL`` and ``LITELLM_API_KEY`` (used when no arg
is given); otherwise litellm reads the provider's own variables
(``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``OPENROUTER_API_KEY``, ...).

Retries are Inspect's (litellm's ``num_retries`` and the OpenAI client's
``max_retries`` are 0); ``should_retry`` accepts rate limits, timeouts,
connection errors and 5xx.  litellm's model cost map is the local copy
(``LITELLM_LOCAL_MODEL_COST_MAP``), so nothing but the model call goes out.
Recorded ``ModelCall`` requests never contain the API key.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any, Optional

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_TELEMETRY", "False")

import litellm  # noqa: E402  (after the environment above)
from inspect_ai.model import (  # noqa: E402
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelCall,
    ModelOutput,
    ModelUsage,
    RetryDecision,
    StopReason,
)
from inspect_ai.tool import ToolChoice, ToolInfo  # noqa: E402

from impostor_bench.core.errors import ImpostorError  # noqa: E402
from impostor_bench.core.parsing import MAX_ANSWER_CHARS  # noqa: E402
from impostor_bench.providers._sampling import json_object_format, sampling_kwargs  # noqa: E402

litellm.suppress_debug_info = True
litellm.telemetry = False

BASE_URL_VAR = "LITELLM_BASE_URL"
API_KEY_VAR = "LITELLM_API_KEY"
_SECRET_NAMES = {"key", "apikey", "token", "secret", "password", "authorization", "cookie"}
_SECRET_SUFFIXES = ("key", "_token", "-token", "secret", "password", "authorization", "credentials")


def _is_secret(name: Any) -> bool:
    k = str(name).lower()
    return k in _SECRET_NAMES or k.endswith(_SECRET_SUFFIXES)


def redact(value: Any) -> Any:
    """A copy of a request with every credential-looking field removed
    (``api_key``, ``x-api-key``, ``Authorization``, ``*_token``...; not ``max_tokens``)."""
    if isinstance(value, dict):
        return {k: redact(v) for k, v in value.items() if not _is_secret(k)}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


def _message(m: ChatMessage) -> dict[str, str]:
    role = m.role if m.role in ("system", "user", "assistant") else "user"
    return {"role": role, "content": m.text or ""}


_STOP: dict[str, StopReason] = {"stop": "stop", "length": "max_tokens", "content_filter": "content_filter", "tool_calls": "tool_calls"}


def _check_keys(model_name: str) -> None:
    """Refuse a route whose API key is missing from the environment (litellm knows each
    route's variables), so the sweep's preflight names it instead of every call failing."""
    import litellm

    try:
        missing = litellm.validate_environment(model=model_name).get("missing_keys") or []
    except Exception:  # noqa: BLE001 - a route litellm cannot check is left to the call
        return
    if missing:
        raise ImpostorError(f"litellm/{model_name}: {missing[0]} is not set; fix: export {missing[0]}=..., "
                            f"pass -M api_key=..., or set {API_KEY_VAR}")


class LiteLLMAPI(ModelAPI):
    def __init__(
        self,
        model_name: str,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        config: GenerateConfig = GenerateConfig(),
        api_base: Optional[str] = None,
        response_format: str = "json_schema",
        timeout: Optional[float] = None,
        **model_args: Any,
    ) -> None:
        base = api_base or base_url or os.environ.get(BASE_URL_VAR)
        super().__init__(model_name, base, api_key, [API_KEY_VAR], config)
        if "/" not in model_name:
            raise ImpostorError(
                f"litellm/{model_name}: name the litellm provider too, e.g. "
                f"litellm/openai/{model_name} or litellm/openrouter/<org>/<model>"
            )
        if response_format not in ("json_schema", "json_object"):
            raise ImpostorError(
                f"litellm/{model_name}: -M response_format={response_format!r}; use json_schema or json_object"
            )
        self.response_format_style = response_format
        self.timeout = timeout
        self.extra = dict(model_args)
        if self.api_key is None:
            self.api_key = os.environ.get(API_KEY_VAR)
        if self.api_key is None and self.base_url is None and "mock_response" not in model_args:
            _check_keys(model_name)  # (litellm's mock_response needs no key)

    def max_connections(self) -> int:
        return 16

    def connection_key(self) -> str:
        return f"{self.base_url or 'default'}|{self.model_name}|{self.initial_api_key or ''}"

    async def count_text_tokens(self, text: str) -> int:
        return max(1, math.ceil(len(text) / 4)) if text else 0

    def request(self, input: list[ChatMessage], config: GenerateConfig) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model_name,
            "messages": [_message(m) for m in input],
            "num_retries": 0,
            "max_retries": 0,
            "drop_params": True,
        }
        if self.base_url:
            kwargs["api_base"] = self.base_url
        kwargs.update(sampling_kwargs(config))
        timeout = self.timeout or config.attempt_timeout or config.timeout
        if timeout:
            kwargs["timeout"] = float(timeout)
        if config.response_schema is not None:
            if self.response_format_style == "json_object":
                kwargs["response_format"] = json_object_format(config)
            else:
                schema = config.response_schema.json_schema.model_dump(exclude_none=True)
                spec: dict[str, Any] = {"name": config.response_schema.name, "schema": schema}
                if config.response_schema.strict is not None:
                    spec["strict"] = config.response_schema.strict
                kwargs["response_format"] = {"type": "json_schema", "json_schema": spec}
        if config.extra_body:  # e.g. the json_object ballot form (impostor_bench.solvers.vote_format)
            kwargs.update(config.extra_body)
        kwargs.update(self.extra)
        return kwargs

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> tuple[ModelOutput | Exception, ModelCall]:
        kwargs = self.request(input, config)
        recorded = redact(kwargs)
        if self.api_key:
            kwargs["api_key"] = self.api_key
        start = time.perf_counter()
        try:
            response = await litellm.acompletion(**kwargs)
        except Exception as ex:
            if self.should_retry(ex):
                raise  # Inspect's retry loop classifies it with should_retry()
            return ex, ModelCall.create(recorded, {"error": f"{type(ex).__name__}: {ex}"},
                                        time=time.perf_counter() - start)
        elapsed = time.perf_counter() - start
        data = response.model_dump() if hasattr(response, "model_dump") else dict(response)
        choices = []
        for ch in data.get("choices") or []:
            msg = ch.get("message") or {}
            if isinstance(msg.get("content"), str) and len(msg["content"]) > MAX_ANSWER_CHARS:
                # a provider ignoring max_tokens: bounded before Inspect records output and call
                msg["content"] = msg["content"][:MAX_ANSWER_CHARS]
            choices.append(
                ChatCompletionChoice(
                    message=ChatMessageAssistant(
                        content=msg.get("content") or "", model=data.get("model") or self.model_name,
                        source="generate",
                    ),
                    stop_reason=_STOP.get(ch.get("finish_reason") or "", "unknown"),
                )
            )
        usage = data.get("usage") or {}
        prompt = int(usage.get("prompt_tokens") or 0)
        completion = int(usage.get("completion_tokens") or 0)
        cached = int(((usage.get("prompt_tokens_details") or {}).get("cached_tokens")) or 0)
        reasoning = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens")
        cost = None
        hidden = getattr(response, "_hidden_params", None) or {}
        if isinstance(hidden, dict) and isinstance(hidden.get("response_cost"), (int, float)):
            cost = float(hidden["response_cost"])
        output = ModelOutput(
            model=data.get("model") or self.model_name,
            choices=choices,
            usage=ModelUsage(
                input_tokens=prompt - cached,
                output_tokens=completion,
                total_tokens=int(usage.get("total_tokens") or prompt + completion),
                input_tokens_cache_read=cached or None,
                reasoning_tokens=int(reasoning) if reasoning else None,
                total_cost=cost,
            ),
            time=elapsed,
        )
        return output, ModelCall.create(recorded, redact(data), time=elapsed)

    def should_retry(self, ex: Exception) -> bool | RetryDecision:
        if isinstance(ex, litellm.exceptions.RateLimitError):
            return RetryDecision.rate_limit()
        transient = (
            litellm.exceptions.Timeout,
            litellm.exceptions.APIConnectionError,
            litellm.exceptions.InternalServerError,
            litellm.exceptions.ServiceUnavailableError,
            litellm.exceptions.BadGatewayError,
        )
        if isinstance(ex, transient):
            return RetryDecision.transient()
        status = getattr(ex, "status_code", None)
        if isinstance(status, int) and (status >= 500 or status in (408, 429)):
            return RetryDecision.rate_limit() if status == 429 else RetryDecision.transient()
        return RetryDecision.no()

    def is_auth_failure(self, ex: Exception) -> bool:
        return isinstance(ex, litellm.exceptions.AuthenticationError)
