"""Continuous batching: several calls decoded together in one llama.cpp context.

On a small model and few cores one decode step over k sequences costs little more
than over one (the weights are read once per step), so concurrent game calls share
one step loop, as in llama.cpp's ``examples/parallel`` and ``llama-server``:

* ``plan_chat`` turns a chat request into exactly what llama-cpp-python's own
  ``create_chat_completion`` would run (chat template, prompt tokens, stop strings,
  JSON-schema grammar, sampling settings, seed): its chat handler is called with a
  stand-in ``Llama`` whose ``create_completion`` captures the arguments instead of
  generating.  Each plan gets its own sampler chain (``Llama._init_sampler``: the
  same penalties/grammar/top-k/typical/top-p/min-p/temperature/dist chain and seed).
* ``BatchEngine`` runs one thread over one context with ``n_seq`` sequences.  Each
  step it admits waiting calls to free sequences (prompt prefill, reusing the longest
  token prefix cached by any sequence: its own, or copied from another with
  ``llama_memory_seq_cp``; the KV cache is unified so a copy shares cells), decodes
  one token for every generating sequence plus prompt chunks up to ``n_batch`` in a
  single ``llama_decode``, samples each sequence with its own chain, and finishes
  each at end-of-generation, a stop string or ``max_tokens``, as
  ``Llama._create_completion`` does.
* A call is a ``concurrent.futures.Future`` of a chat-completion dict; cancelling
  it frees its sequence at the next step; an engine error fails the calls it hit.
"""

from __future__ import annotations

import collections
import random
import threading
import time
import uuid
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass, field
from typing import Any, Optional

import llama_cpp
from llama_cpp import Llama
from llama_cpp import _internals as internals
from llama_cpp._utils import suppress_stdout_stderr

COPY_MIN = 16  # copy another sequence's prefix only when it saves at least this many tokens


@dataclass
class Plan:
    """One chat call as llama-cpp-python would run it."""

    prompt: list[int]
    stop: list[bytes]
    max_tokens: int
    sampler: Any  # llama_cpp._internals.LlamaSampler, used by this call only
    model: str


class _Captured(Exception):
    def __init__(self, kwargs: dict[str, Any]) -> None:
        self.kwargs = kwargs


class _Stand:
    """Stands in for a ``Llama`` inside its own chat handler and sampler factory."""

    def __init__(self, llm: Llama, seed: int = 0) -> None:
        self._llm = llm
        self._seed = seed

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)

    def create_completion(self, **kwargs: Any) -> Any:
        raise _Captured(kwargs)


def plan_chat(llm: Llama, n_ctx: int, **request: Any) -> Plan:
    """The prompt tokens, stop strings, grammar, sampler and token budget of a chat
    request (``Llama.create_chat_completion`` arguments), without generating."""
    try:
        Llama.create_chat_completion(_Stand(llm), **request)  # type: ignore[arg-type]
    except _Captured as c:
        kw = c.kwargs
    else:  # pragma: no cover - a handler that does not call create_completion
        raise RuntimeError("the chat handler did not call create_completion")
    if kw.get("logits_processor") is not None or kw.get("logit_bias") or kw.get("stream"):
        raise ValueError("logit_bias, logits processors and streaming are not supported by the batched engine")
    prompt = list(kw["prompt"])
    if len(prompt) >= n_ctx:
        raise ValueError(f"Requested tokens ({len(prompt)}) exceed context window of {n_ctx}")
    max_tokens = kw.get("max_tokens")  # as Llama._create_completion: bounded by the context
    if max_tokens is None or max_tokens <= 0 or max_tokens + len(prompt) >= n_ctx:
        max_tokens = n_ctx - len(prompt)
    seed = kw.get("seed")
    seed = random.Random(llm._seed).randint(0, 2**32) if seed is None else seed
    sampler = Llama._init_sampler(
        _Stand(llm, seed),  # type: ignore[arg-type]
        top_k=kw["top_k"], top_p=kw["top_p"], min_p=kw["min_p"], typical_p=kw["typical_p"],
        temp=kw["temperature"], repeat_penalty=kw["repeat_penalty"],
        frequency_penalty=kw["frequency_penalty"], presence_penalty=kw["presence_penalty"],
        mirostat_mode=kw["mirostat_mode"], mirostat_tau=kw["mirostat_tau"], mirostat_eta=kw["mirostat_eta"],
        grammar=kw.get("grammar"),
    )
    stop = kw.get("stop") or []
    stop = [stop] if isinstance(stop, str) else list(stop)
    return Plan(prompt, [s.encode("utf-8") for s in stop], int(max_tokens), sampler, kw.get("model") or llm.model_path)


def _incomplete_utf8(b: bytes) -> bool:
    """True when ``b`` ends inside a multi-byte UTF-8 character (stop checks wait)."""
    for k in range(1, min(4, len(b)) + 1):
        c = b[-k]
        if c & 0xC0 != 0x80:  # lead byte (or ASCII): how long should its sequence be?
            need = 2 if c & 0xE0 == 0xC0 else 3 if c & 0xF0 == 0xE0 else 4 if c & 0xF8 == 0xF0 else 1
            return need > k
    return False


@dataclass
class _Call:
    plan: Plan
    future: Future
    seq: int = -1
    todo: list[int] = field(default_factory=list)  # prompt tokens still to evaluate
    next_token: Optional[int] = None  # sampled, not yet in the KV cache
    completion: list[int] = field(default_factory=list)
    text: bytes = b""
    out_index: int = -1  # this step's logits row
    start: float = field(default_factory=time.perf_counter)


class BatchEngine:
    """One llama.cpp context decoding up to ``n_seq`` calls per step (see module doc)."""

    def __init__(self, llm: Llama, n_seq: int, n_ctx: int, n_batch: int = 512, n_threads: int = 2) -> None:
        self.llm, self.n_seq, self.n_ctx, self.n_batch = llm, n_seq, n_ctx, n_batch
        params = llama_cpp.llama_context_params.from_buffer_copy(llm.context_params)
        params.n_ctx = n_ctx * n_seq
        params.n_seq_max = n_seq
        params.kv_unified = True  # one pool of cells: copied prefixes are shared, not duplicated
        params.n_batch = params.n_ubatch = n_batch
        params.n_threads = params.n_threads_batch = n_threads
        with suppress_stdout_stderr(disable=llm.verbose):  # as Llama: llama.cpp logs to stderr
            self.ctx = internals.LlamaContext(model=llm._model, params=params, verbose=False)
        self.mem = self.ctx.memory
        self.batch = internals.LlamaBatch(n_tokens=n_batch, embd=0, n_seq_max=n_seq, verbose=False)
        self.cached: list[list[int]] = [[] for _ in range(n_seq)]  # tokens in each sequence's KV
        self.busy: list[Optional[_Call]] = [None] * n_seq
        self.last_used = [0.0] * n_seq
        self.pending: collections.deque[_Call] = collections.deque()
        self.stats: collections.Counter[str] = collections.Counter()
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name="llama-batch", daemon=True)
        self._thread.start()

    # --- callers' side -------------------------------------------------------------
    def plan(self, **request: Any) -> Plan:
        return plan_chat(self.llm, self.n_ctx, **request)

    def submit(self, plan: Plan) -> Future:
        """Queue a planned call; the future's result is a chat-completion dict."""
        call = _Call(plan, Future())
        with self._cond:
            if self._closed:
                raise RuntimeError("the batched llama.cpp engine is closed")
            self.pending.append(call)
            self._cond.notify()
        return call.future

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join(timeout=30)

    # --- engine thread -------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._closed and not self.pending and not any(self.busy):
                    self._cond.wait()
                if self._closed:
                    for call in [*self.pending, *filter(None, self.busy)]:
                        _fail(call, RuntimeError("the batched llama.cpp engine was closed"))
                    return
            try:
                self._admit()
                self._step()
            except Exception as e:  # noqa: BLE001 - fail the calls it hit, keep serving
                for s, busy in enumerate(self.busy):
                    if busy is not None:
                        _fail(busy, e)
                        self.busy[s] = None
                llama_cpp.llama_memory_clear(self.mem, True)
                self.cached = [[] for _ in range(self.n_seq)]

    def _admit(self) -> None:
        for s, call in enumerate(self.busy):  # a cancelled call gives its sequence back
            if call is not None and call.future.cancelled():
                self._finish(s)
        while True:
            free = [s for s in range(self.n_seq) if self.busy[s] is None]
            with self._cond:
                while self.pending and self.pending[0].future.cancelled():
                    self.pending.popleft()
                if not free or not self.pending:
                    return
                call = self.pending.popleft()
            prompt = call.plan.prompt
            common = [_common(self.cached[s], prompt) for s in range(self.n_seq)]
            # the free sequence holding most of this prompt (then the least recently used)
            seq = max(free, key=lambda s: (common[s], -self.last_used[s]))
            self.busy[seq] = call  # from here on an engine error fails this call too
            keep = common[seq]
            donor = max(range(self.n_seq), key=lambda s: common[s])
            if common[donor] >= keep + COPY_MIN:  # another sequence holds more: share its cells
                llama_cpp.llama_memory_seq_rm(self.mem, seq, 0, -1)
                llama_cpp.llama_memory_seq_cp(self.mem, donor, seq, 0, common[donor])
                self.cached[seq] = self.cached[donor][: common[donor]]
                keep = common[donor]
                self.stats["copied_prefixes"] += 1
            keep = min(keep, len(prompt) - 1)  # the last prompt token is evaluated for its logits
            llama_cpp.llama_memory_seq_rm(self.mem, seq, keep, -1)
            del self.cached[seq][keep:]
            call.seq, call.todo = seq, prompt[keep:]
            self.stats["reused_tokens"] += keep
            self.stats["prompt_tokens"] += len(prompt)

    def _step(self) -> None:
        calls = [c for c in self.busy if c is not None]
        if not calls:
            return
        entries: list[tuple[int, int, int, bool]] = []
        for call in calls:  # one token per generating sequence first
            if call.next_token is not None:
                call.out_index = len(entries)
                entries.append((call.next_token, len(self.cached[call.seq]), call.seq, True))
                self.cached[call.seq].append(call.next_token)
                call.next_token = None
            else:
                call.out_index = -1
        for call in calls:  # then prompt chunks, as many tokens as the batch holds
            room = self.n_batch - len(entries)
            if not call.todo or room <= 0:
                continue
            chunk, call.todo = call.todo[:room], call.todo[room:]
            pos = len(self.cached[call.seq])
            for i, t in enumerate(chunk):
                last = not call.todo and i == len(chunk) - 1
                if last:
                    call.out_index = len(entries)
                entries.append((t, pos + i, call.seq, last))
            self.cached[call.seq].extend(chunk)
        b = self.batch.batch
        b.n_tokens = len(entries)
        for i, (t, pos, seq, out) in enumerate(entries):
            b.token[i], b.pos[i], b.n_seq_id[i], b.logits[i] = t, pos, 1, out
            b.seq_id[i][0] = seq
        rc = llama_cpp.llama_decode(self.ctx.ctx, b)
        if rc != 0:
            raise RuntimeError(f"llama_decode returned {rc} (KV cache full: fewer n_slots or a larger n_ctx)")
        self.stats["steps"] += 1
        self.stats["batched_tokens"] += len(entries)
        vocab = self.llm._model.vocab
        for call in calls:
            if call.out_index < 0:
                continue
            token = call.plan.sampler.sample(self.ctx, call.out_index)
            if llama_cpp.llama_vocab_is_eog(vocab, token):
                self._finish(call.seq, "stop")
                continue
            call.completion.append(token)
            call.text += self.llm.detokenize([token])
            if call.plan.stop and not _incomplete_utf8(call.text):
                hit = [s for s in call.plan.stop if s in call.text]
                if hit:
                    call.text = call.text[: call.text.index(hit[0])]
                    self._finish(call.seq, "stop", cut=True)
                    continue
            if len(call.completion) >= call.plan.max_tokens:
                self._finish(call.seq, "length")
                continue
            call.next_token = token

    def _finish(self, seq: int, reason: Optional[str] = None, cut: bool = False) -> None:
        call = self.busy[seq]
        self.busy[seq] = None
        self.last_used[seq] = time.perf_counter()
        if call is None or reason is None:
            return
        text = call.text if cut else self.llm.detokenize(call.completion)
        n_in, n_out = len(call.plan.prompt), len(call.completion)
        response = {
            "id": f"chatcmpl-{uuid.uuid4()}", "object": "chat.completion", "created": int(time.time()),
            "model": call.plan.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text.decode("utf-8", errors="ignore")},
                         "logprobs": None, "finish_reason": reason}],
            "usage": {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out},
        }
        try:
            call.future.set_result(response)
        except InvalidStateError:  # cancelled meanwhile
            pass


def _common(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _fail(call: _Call, error: BaseException) -> None:
    try:
        call.future.set_exception(error)
    except InvalidStateError:
        pass
