"""Inspect model providers shipped with impostor-bench (bots, local llama.cpp, litellm)."""
