"""Baseline and test players: ``bot/random``, ``bot/embedding``, ``bot/script``.

The game logic of each bot lives in a plain function of a parsed
:class:`~impostor_bench.providers.prompt_parse.GameView` (no Inspect needed);
``api.BotAPI`` wraps them as one Inspect model provider named ``bot``.
"""
