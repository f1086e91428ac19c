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

from impostor_bench.core.errors import ImpostorError

_MARKUP = re.compile(r"\[/?[a-z][a-z ]*\]")  # rich console markup in Inspect's messages
_PIP = re.compile(r"pip install ([A-Za-z0-9_.\-\[\]]+)")
_ENV_VAR = re.compile(r"\b([A-Z][A-Z0-9]*_(?:API_KEY|KEY|TOKEN|SECRET|BASE_URL)[A-Z0-9_]*)\b")


def _cause(model: str, exc: BaseException) -> tuple[str, str]:
    """(what is wrong, the fix) for a model that cannot be created, from what Inspect said."""
    text = _MARKUP.sub("", str(getattr(exc, "message", None) or exc))
    text = " ".join(ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("ERROR:"))
    if isinstance(exc, ImpostorError) and "; fix: " in text:  # our providers' own line already names the fix
        what, fix = text.split("; fix: ", 1)
        return what, fix
    if "not recognized" in text:
        provider = model.split("/", 1)[0]
        return (f"provider {provider!r} is not an installed Inspect model provider",
                "check the spelling (e.g. openai/..., anthropic/..., litellm/..., local/smollm2, bot/random) "
                "or install the package that provides it")
    package = _PIP.search(text)
    if package:
        return (f"needs the Python package {package.group(1)!r}", f"pip install {package.group(1)} (in .venv)")
    envs = list(dict.fromkeys(_ENV_VAR.findall(text)))  # the first one the message names
    if envs:
        return (f"{envs[0]} is not set", f"export {envs[0]}=... (or put it in .env), "
                "or play an offline model such as local/smollm2 or bot/embedding")
    return f"cannot be created ({text[:300]})", "check the model string and its settings"


def _name(alias: str, model: str) -> str:
    return model if alias == model else f"{alias!r} ({model})"


def problem_of(alias: str, model: str, exc: BaseException) -> str:
    """One line for a model that cannot be created: what is wrong and the fix."""
    what, fix = _cause(model, exc)
    return f"model {_name(alias, model)}: {what}; fix: {fix}"


def model_problems(models: Mapping[str, str], model_args: Optional[Mapping[str, dict[str, Any]]] = None
                   ) -> dict[tuple[str, str], list[str]]:
    """Create each model (alias → Inspect model string) as the run will: (what is wrong, the
    fix) → the models it stops, for every model that cannot be created."""
    from inspect_ai.model import get_model

    causes: dict[tuple[str, str], list[str]] = {}
    for alias, model in models.items():
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # Inspect's "hooks enabled" banner
                get_model(model, memoize=False, **dict((model_args or {}).get(alias) or {}))
        except Exception as exc:  # noqa: BLE001 - any failure to create the model is the user's to fix
            causes.setdefault(_cause(model, exc), []).append(_name(alias, model))
    return causes


def is_config_error(cause: tuple[str, str]) -> bool:
    """A problem of the config itself (a provider that does not exist), as opposed to one of
    this machine (a key not set, a package not installed) that a plan made before having
    them should list rather than refuse."""
    return cause[0].startswith("provider ") and "not an installed Inspect model provider" in cause[0]


def problem_lines(causes: Mapping[tuple[str, str], list[str]]) -> list[str]:
    return [f"model{'s' if len(names) > 1 else ''} {', '.join(names)}: {what}; fix: {fix}"
            for (what, fix), names in causes.items()]


def check_models(models: Mapping[str, str], where: str, model_args: Optional[Mapping[str, dict[str, Any]]] = None) -> None:
    """Create each model as the run will; raise one ``ImpostorError`` naming every model
    that cannot be created, grouped by cause (nine models behind one missing key read as
    one problem, not nine)."""
    causes = model_problems(models, model_args)
    if causes:
        raise ImpostorError(f"{where}: " + " | ".join(problem_lines(causes)))
