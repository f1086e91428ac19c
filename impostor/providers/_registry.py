"""Entry point module for Inspect: importing it registers our model providers.

``bot/<random|embedding|script>``  baseline and scripted players (bots/api.py)
``local/<alias or path.gguf>``     in-process llama.cpp model (local.py)
``litellm/<provider>/<model>``     any litellm-supported API (litellm_api.py)
``human/web``                      a person on a local page (human/api.py)

Provider classes are imported lazily, so importing this module is cheap and
does not need llama-cpp-python or litellm to be installed.
"""

from inspect_ai.model import ModelAPI, modelapi


@modelapi(name="bot")
def bot() -> type[ModelAPI]:
    from impostor.providers.bots.api import BotAPI

    return BotAPI


@modelapi(name="local")
def local() -> type[ModelAPI]:
    from impostor.providers.local import LocalLlamaAPI

    return LocalLlamaAPI


@modelapi(name="litellm")
def litellm() -> type[ModelAPI]:
    from impostor.providers.litellm_api import LiteLLMAPI

    return LiteLLMAPI


@modelapi(name="human")
def human() -> type[ModelAPI]:
    from impostor.providers.human.api import HumanAPI

    return HumanAPI
