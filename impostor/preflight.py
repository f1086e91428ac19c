"""Before the first game: can every model of a sweep be created the way the run will create it?

Creating an Inspect model instantiates its provider, which is where Inspect finds an
unknown provider (``Model API x not recognized``) and where API providers look up their
credentials (``No OPENAI_API_KEY defined``).  The sweep (``--dry-run`` included) does it
once per model before anything is written, and turns each failure into one line that
names the model, what is wrong and the fix, instead of a traceback mid-run.
"""

from __future__ import annotations

import contextlib
import io
import re
from typing import Any, Mapping, Optional

from impostor.errors import ImpostorError

_MARKUP = re.compile(r"\[/?[a-z][a-z ]*\]")  # rich console markup in Inspect's messages
_ENV_VAR = re.compile(r"\b([A-Z][A-Z0-9]*_(?:API_KEY|KEY|TOKEN|SECRET|BASE_URL)[A-Z0-9_]*)\b")


def problem_of(alias: str, model: str, exc: BaseException) -> str:
    """One line for a model that cannot be created: what Inspect said, without markup, and the fix."""
    text = _MARKUP.sub("", str(getattr(exc, "message", None) or exc))
    text = " ".join(ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("ERROR:"))
    name = model if alias == model else f"{alias!r} ({model})"
    if "not recognized" in text:
        provider = model.split("/", 1)[0]
        return (f"model {name}: provider {provider!r} is not an installed Inspect model provider; fix: check the "
                f"spelling (e.g. openai/..., anthropic/..., litellm/..., local/smollm2, bot/random) or install "
                f"the package that provides it")
    envs = sorted(set(_ENV_VAR.findall(text)))
    if envs:
        return (f"model {name}: {envs[0]} is not set; fix: export {envs[0]}=... (or put it in .env), "
                f"or play an offline model such as local/smollm2 or bot/embedding")
    return f"model {name}: cannot be created ({text[:300]}); fix: check the model string and its settings"


def check_models(models: Mapping[str, str], where: str, model_args: Optional[Mapping[str, dict[str, Any]]] = None) -> None:
    """Create each model (alias → Inspect model string) as the run will; raise one
    ``ImpostorError`` listing every model that cannot be created."""
    from inspect_ai.model import get_model

    problems = []
    for alias, model in models.items():
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # Inspect's "hooks enabled" banner
                get_model(model, memoize=False, **dict((model_args or {}).get(alias) or {}))
        except Exception as exc:  # noqa: BLE001 - any failure to create the model is the user's to fix
            problems.append(problem_of(alias, model, exc))
    if problems:
        raise ImpostorError(f"{where}: " + " | ".join(problems))
