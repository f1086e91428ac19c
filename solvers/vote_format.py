"""Ballot forms, and the fallback when a server refuses structured output (docs/reliability.md).

A structured ballot asks the provider for one of three forms, strongest first:

* ``json_schema`` -- the task's vote schema (``GenerateConfig.response_schema``);
* ``json_object`` -- OpenAI's JSON mode, ``response_format: {"type": "json_object"}``, on the
  OpenAI-compatible chat APIs that take it (Inspect's ``openai-api`` family, our ``litellm/``);
* ``prompt``      -- no format at all: the prompt asks for JSON and the ballot is parsed as always.

Some servers answer every schema-bearing request with an error (llama-cpp-python's
``llama_cpp.server`` takes ``response_format`` types ``text`` and ``json_object`` only and
answers ``json_schema`` with HTTP 500).  Inspect retries a 500, so such a call could never
succeed and a game, with it a plain ``inspect eval``, would hang.  Here the first
structured call of each model is a *probe* made without Inspect's retries: if the server
refuses the form (:func:`refusal_reason`) the model falls back to the next weaker form
for the rest of the eval, once, noted as a warning, a transcript info event and the
sample's ``vote_format_fallbacks`` metadata (each seat records the form it used, see
``impostor_bench.solvers.game``); any other error takes the normal retry path.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Iterator, Optional

import anyio
from inspect_ai.log import transcript
from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput

from impostor_bench.core.parsing import bounded_answer
from impostor_bench.inspect_compat import active_generate_config
from impostor_bench.solvers.seating import model_name
from impostor_bench.solvers.usage import count

logger = logging.getLogger(__name__)

FORMS = ("json_schema", "json_object", "prompt")
#: Statuses a server uses to reject a request it cannot serve (400/422) or fails on (500/501).
REFUSAL_STATUSES = frozenset({400, 422, 500, 501})
#: What a refusal of the output format says about it (OpenAI, llama.cpp, vLLM, TGI, Groq, litellm wording).
REFUSAL_WORDS = re.compile(r"response_format|response.format|json_schema|json_object|response_schema"
                           r"|structured.output|guided.(?:json|decoding)|grammar", re.IGNORECASE)
#: Provider classes (of ``model.api``) whose requests take ``response_format`` through ``extra_body``.
JSON_MODE_APIS = frozenset({"OpenAICompatibleAPI", "LiteLLMAPI"})


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, what it wraps (tenacity's RetryError holds the last attempt's error) and its causes."""
    todo: list[Optional[BaseException]] = [exc]
    seen: set[int] = set()
    while todo and len(seen) < 10:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        last = getattr(e, "last_attempt", None)
        if last is not None and hasattr(last, "exception"):
            try:
                todo.append(last.exception())
            except BaseException:  # noqa: BLE001 - a cancelled attempt has no exception
                pass
        todo += [e.__cause__, e.__context__]


def refusal_reason(exc: BaseException) -> Optional[str]:
    """One line saying why ``exc`` is a refusal of the requested output format, else None.

    A refusal is an HTTP 400/422/500/501 from the provider (the error's ``status_code``, as
    the OpenAI, Anthropic and litellm clients and Inspect's ModelGenerateError set it) whose
    message (the provider's, never the quoted request) names the format
    (``response_format``, ``json_schema``, ...).  Anything else -- rate limits, other 5xx,
    dropped connections, timeouts, a 400 about something else -- is not: it keeps Inspect's
    normal retry path and, if it persists, fails the game as before.
    """
    for e in _chain(exc):
        status = getattr(e, "status_code", None)
        if status is None:
            status = getattr(getattr(e, "response", None), "status_code", None)
        text = getattr(e, "provider_message", None) or getattr(e, "message", None)
        if not isinstance(text, str):
            if type(e).__name__ == "ModelGenerateError":  # its text quotes the whole request: read its cause
                continue
            text = str(e)
        if status in REFUSAL_STATUSES and REFUSAL_WORDS.search(text):
            return f"HTTP {status} {type(e).__name__}: {' '.join(text.split())[:200]}"
    return None


def json_mode_ok(model: Model) -> bool:
    """Whether ``model``'s provider takes OpenAI's ``response_format`` in the request body."""
    return any(c.__name__ in JSON_MODE_APIS for c in type(model.api).__mro__)


def answer_of(output: ModelOutput) -> str:
    """A model's answer as the game keeps it (``bounded_answer``: cut to ``MAX_ANSWER_CHARS``),
    its tokens counted.  What Inspect's own model event records is the provider's: our
    ``litellm/`` provider cuts there too (``impostor_bench.providers.litellm_api``)."""
    count(output)  # the seat's tokens (impostor_bench.solvers.usage)
    return bounded_answer(output.completion or "")


def _eval_attempt_timeout(model: Model, asked: Optional[float]) -> Optional[float]:
    """The eval's ``attempt_timeout`` (task default or --attempt-timeout) for a call that sets none
    itself on a model whose config sets none, else None (the call keeps what it has).

    Inspect gives a model role the eval's ``max_retries`` and ``timeout`` but not its
    ``attempt_timeout``; passing it per call bounds the calls of every seat alike.
    """
    if asked is not None or model.config.attempt_timeout is not None:
        return None
    return active_generate_config().attempt_timeout


def with_call_limits(model: Model, config: GenerateConfig) -> GenerateConfig:
    """``config`` with the eval's ``attempt_timeout`` where it has none (``_eval_attempt_timeout``)."""
    attempt_timeout = _eval_attempt_timeout(model, config.attempt_timeout)
    return config if attempt_timeout is None else config.model_copy(update={"attempt_timeout": attempt_timeout})


def call_config(model: Model, **fields: Any) -> GenerateConfig:
    """``with_call_limits(model, GenerateConfig(**fields))`` built in one validation, without the
    copy that adds ``attempt_timeout`` (two calls a seat, every game)."""
    attempt_timeout = _eval_attempt_timeout(model, fields.get("attempt_timeout"))
    if attempt_timeout is not None:
        fields["attempt_timeout"] = attempt_timeout
    return GenerateConfig(**fields)


def form_config(config: GenerateConfig, form: str, probe: bool = False) -> GenerateConfig:
    """``config`` (which carries the schema) asking for ``form``; a probe is not retried by Inspect."""
    update: dict[str, Any] = {}
    if form != "json_schema":
        update["response_schema"] = None
    if form == "json_object":
        update["extra_body"] = {**(config.extra_body or {}), "response_format": {"type": "json_object"}}
    if probe:
        update["max_retries"] = 0
    return config.model_copy(update=update) if update else config


class VoteFormats:
    """The ballot form each model takes, learnt once per eval (one instance per task's solver)."""

    def __init__(self) -> None:
        self.form: dict[str, str] = {}  # model -> the strongest form it has not refused
        self.confirmed: set[str] = set()  # models whose form has answered a call
        self.fallbacks: list[dict[str, str]] = []  # every fallback made, in order
        self._locks: dict[str, anyio.Lock] = {}

    async def _call(self, model: Model, messages: list[ChatMessage], config: GenerateConfig, form: str,
                    probe: bool = False) -> str:
        output = await model.generate(messages, config=form_config(with_call_limits(model, config), form, probe))
        return answer_of(output)

    def _fall_back(self, model: Model, name: str, form: str, reason: str, metadata: dict[str, Any]) -> None:
        weaker = "json_object" if form == "json_schema" and json_mode_ok(model) else "prompt"
        self.form[name] = weaker
        event: dict[str, Any] = {"model": name, "from": form, "to": weaker, "reason": reason}
        self.fallbacks.append(event)
        metadata.setdefault("vote_format_fallbacks", []).append(event)
        transcript().info({"vote_format_fallback": event}, source="impostor")
        logger.warning(f"{name} refuses {form} ballots ({reason}); its ballots use {weaker} "
                       f"for the rest of this eval")

    async def generate(self, model: Model, messages: list[ChatMessage], config: GenerateConfig,
                       metadata: dict[str, Any]) -> tuple[str, str]:
        """A structured ballot from ``model`` in the strongest form it takes: (text, form used)."""
        name = model_name(model)
        if name not in self.confirmed:
            async with self._locks.setdefault(name, anyio.Lock()):
                while name not in self.confirmed:
                    form = self.form.get(name, FORMS[0])
                    if form == "prompt":
                        self.confirmed.add(name)
                        break
                    try:
                        try:
                            text = await self._call(model, messages, config, form, probe=True)
                        except Exception as probe_error:  # noqa: BLE001 - classified below
                            if refusal_reason(probe_error) is not None:
                                raise
                            text = await self._call(model, messages, config, form)  # the normal retry path
                    except Exception as exc:  # noqa: BLE001 - a refusal falls back, anything else is raised
                        reason = refusal_reason(exc)
                        if reason is None:
                            raise
                        self._fall_back(model, name, form, reason, metadata)
                        continue
                    self.confirmed.add(name)
                    return text, form
        form = self.form.get(name, FORMS[0])
        return await self._call(model, messages, config, form), form
