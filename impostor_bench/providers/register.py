"""Entry point module for Inspect: importing it registers our model providers.

``bot/<random|embedding|script>``  baseline and scripted players (bots/api.py)
``local/<alias or path.gguf>``     in-process llama.cpp model (local.py)
``litellm/<provider>/<model>``     any litellm-supported API (litellm_api.py)
``human/web``                      a person on a local page (human/api.py)

Provider classes are imported lazily, so importing this module is cheap and
does not need llama-cpp-python or litellm to be installed.

Importing it only registers providers: Inspect loads the package's entry points in every
``inspect eval`` on the machine, so nothing here changes how Inspect resolves other names.
Registry aliases (``gpt-4o``) are resolved where the package reads model names itself
(``-T models=``, sweep configs, ``impostor`` commands; docs/models.md), not in ``--model``.
"""

from inspect_ai.model import ModelAPI, modelapi


class ModelInfoLookupRefused(Exception):
    """A provider of ours is not built for Inspect's model-info lookup (``get_model_info``)."""


def _plain_errors(cls: type[ModelAPI]) -> type[ModelAPI]:
    """``cls`` whose set-up errors (a bad -M arg, a missing model file: ImpostorError) reach
    ``inspect eval`` as its prerequisite errors, printed without a traceback.

    Inspect's model-info lookup builds a provider again from its bare name (``bot/script``
    without its script, ``human/<participant>``), only to read a canonical name that no
    database holds for our providers: that construction is refused at once and quietly
    (Inspect takes the exception as "no info"), so it prints no set-up error of a successful
    run, opens no second human page and loads no model weights twice."""
    import functools

    from impostor_bench.core.errors import ImpostorError
    from impostor_bench.inspect_compat import UserInputError, is_model_info_lookup

    class Provider(cls):  # type: ignore[valid-type,misc]
        # the provider's own signature for introspection (mypy cannot type a wrapped __init__)
        @functools.wraps(cls.__init__)  # type: ignore[misc]
        def __init__(self, *args, **kwargs) -> None:
            if is_model_info_lookup(kwargs.get("api_key")):
                raise ModelInfoLookupRefused(f"{cls.__name__} has no model info to look up")
            try:
                super().__init__(*args, **kwargs)
            except ImpostorError as exc:
                raise UserInputError.of(exc) from None

    Provider.__name__, Provider.__qualname__, Provider.__doc__ = cls.__name__, cls.__qualname__, cls.__doc__
    return Provider


@modelapi(name="bot")
def bot() -> type[ModelAPI]:
    from impostor_bench.providers.bots.api import BotAPI

    return _plain_errors(BotAPI)


@modelapi(name="local")
def local() -> type[ModelAPI]:
    from impostor_bench.providers.local import LocalLlamaAPI

    return _plain_errors(LocalLlamaAPI)


@modelapi(name="litellm")
def litellm() -> type[ModelAPI]:
    from impostor_bench.providers.litellm_api import LiteLLMAPI

    return _plain_errors(LiteLLMAPI)


@modelapi(name="human")
def human() -> type[ModelAPI]:
    from impostor_bench.providers.human.api import HumanAPI

    return _plain_errors(HumanAPI)
