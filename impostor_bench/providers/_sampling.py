"""Inspect ``GenerateConfig`` -> OpenAI-style chat-completion arguments, shared by providers."""

from __future__ import annotations

from typing import Any

from inspect_ai.model import GenerateConfig


def sampling_kwargs(config: GenerateConfig, *, top_k: bool = False) -> dict[str, Any]:
    """temperature, max_tokens, top_p, (top_k), seed and stop, where set."""
    fields = {
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "top_p": config.top_p,
        "top_k": config.top_k if top_k else None,
        "seed": config.seed,
        "stop": list(config.stop_seqs) if config.stop_seqs else None,
    }
    return {k: v for k, v in fields.items() if v is not None}


def json_object_format(config: GenerateConfig) -> dict[str, Any]:
    """llama.cpp's (and OpenAI-compatible servers') ``json_object`` form of a response schema."""
    assert config.response_schema is not None
    return {"type": "json_object", "schema": config.response_schema.json_schema.model_dump(exclude_none=True)}
