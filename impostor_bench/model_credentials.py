"""Credentials that Inspect would write into a local .eval log's header, refused before a run.

Inspect records each model's explicit base URL (``--model-base-url``, a role's or a
registry alias's ``base_url``) and its model args (``-M``) in the log header as given,
leaving out only ``api_key`` and ``aws_*`` args.  A password or key inside a URL
(``http://user:PASSWORD@host``, ``?api-key=KEY``) or an ``Authorization`` / ``api-key``
header in ``-M extra_headers`` / ``default_headers`` would therefore sit in every log the
run writes.  The harness cannot change what Inspect logs of the command line, so such a run
is refused with one line naming the field and the fix: pass the key by environment variable
(or ``-M api_key=...``, which Inspect leaves out).  MLflow copies are scrubbed separately
(``impostor_bench.tracking.redact``); this module keeps the secret out of the local log.

Names alone miss a key under an unusual name (``X-Token: sk-...``, ``-M client_secret``...),
so values are judged too: every string of every logged model arg against the known
key shapes (:data:`_KEY_SHAPES`: OpenAI/Anthropic ``sk-``, AWS ``AKIA``, Google ``AIza``,
GitHub, Hugging Face ``hf_``, Slack, JWTs, ``Bearer``/``Basic`` credentials), and every header
value also as a high-entropy token (:func:`high_entropy_token`).  What stays out of reach:
a short or low-entropy secret under an innocent name (``X-Id: hunter2``) cannot be told from
an ordinary setting.
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterator, Mapping, Optional

from impostor_bench.tracking.redact import is_secret_name, url_secrets

#: Model args Inspect logs that hold a URL.
URL_ARGS = ("base_url", "api_base")
#: Model args Inspect logs that hold HTTP headers.
HEADER_ARGS = ("extra_headers", "default_headers", "headers")
# A header whose name says it carries a credential.
_CREDENTIAL_HEADER = re.compile(r"auth|key|token|secret|passw|cookie|signature|credential|session", re.IGNORECASE)
#: Shapes of API keys and credentials, whatever name they are given under.
_KEY_SHAPES = re.compile(
    r"\bsk-(?:ant-|proj-|or-v1-)?[A-Za-z0-9_-]{16,}"  # OpenAI, Anthropic, OpenRouter
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"  # AWS access key id
    r"|\bAIza[0-9A-Za-z_-]{30,}"  # Google API key
    r"|\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}"  # GitHub
    r"|\bhf_[A-Za-z0-9]{30,}"  # Hugging Face
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"  # Slack
    r"|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\."  # a JWT (header.payload.)
    r"|\b(?:Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{12,}",  # an HTTP credential
    re.IGNORECASE)
# A candidate token for the entropy test: 24+ characters of a key's alphabet.
_TOKEN = re.compile(r"[A-Za-z0-9_+/=.-]{24,}")
#: Bits per character above which a mixed token reads as random (a key), not as a word, a
#: path, a UUID or a hex digest (at most 4 bits: those stay below).
ENTROPY_BITS = 4.2
#: Model args that Inspect leaves out of its log (``api_key``, ``aws_*``): not judged here.
_UNLOGGED = re.compile(r"api_key$|aws_")
FIX = ("fix: give it without the credential and pass the key by environment variable (e.g. OPENAI_API_KEY, "
       "LITELLM_API_KEY, or the provider's own variable) or -M api_key=... (Inspect leaves api_key out of its logs)")


def high_entropy_token(text: str) -> bool:
    """Whether ``text`` holds a random-looking token of 24+ characters that mixes upper case,
    lower case and digits at more than :data:`ENTROPY_BITS` bits per character (a key).
    A hex digest, a UUID, a path or a sentence does not."""
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        if not (any(c.isupper() for c in tok) and any(c.islower() for c in tok) and any(c.isdigit() for c in tok)):
            continue
        counts = {c: tok.count(c) for c in set(tok)}
        bits = -sum(n / len(tok) * math.log2(n / len(tok)) for n in counts.values())
        if bits > ENTROPY_BITS:
            return True
    return False


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, (list, tuple, set)):
        for v in value:
            yield from _strings(v)


def _secret_value_in(value: Any, entropy: bool) -> bool:
    """Whether a model arg's value holds a key by its shape (and, for headers, ``entropy``)."""
    return any(_KEY_SHAPES.search(s) or (entropy and high_entropy_token(s)) for s in _strings(value))


def _header_names(value: Any) -> list[str]:
    """Names of the credential headers in a header arg (a mapping, or text naming them)."""
    if isinstance(value, Mapping):
        return [str(k) for k in value if _CREDENTIAL_HEADER.search(str(k))]
    if isinstance(value, str) and _CREDENTIAL_HEADER.search(value):
        return ["(in the text)"]
    return []


def logged_credential(where: str, base_url: Optional[str], model_args: Optional[Mapping[str, Any]]) -> Optional[str]:
    """One line naming the first credential a model's settings would put into the .eval log
    header (``where`` names the model: ``--model``, a role), with the fix; None if there is none."""
    if base_url and url_secrets(str(base_url)):
        return (f"{where}: its base URL holds a credential (a password or a key in the URL), which Inspect "
                f"writes into the .eval log's header; {FIX}")
    for arg in URL_ARGS:
        value = (model_args or {}).get(arg)
        if isinstance(value, str) and url_secrets(value):
            return (f"{where}: -M {arg} holds a credential (a password or a key in the URL), which Inspect "
                    f"writes into the .eval log's header; {FIX}")
    for arg in HEADER_ARGS:
        names = _header_names((model_args or {}).get(arg))
        if names:
            return (f"{where}: -M {arg} holds the credential header {names[0]!r}, which Inspect writes into "
                    f"the .eval log's header; {FIX}")
    for arg, value in (model_args or {}).items():
        if _UNLOGGED.match(str(arg)) or value in (None, "", {}, []):
            continue
        if is_secret_name(str(arg)) and not isinstance(value, (bool, int, float)):
            return (f"{where}: -M {arg} is a credential by its name, which Inspect writes into the .eval "
                    f"log's header; {FIX}")
        if _secret_value_in(value, entropy=arg in HEADER_ARGS):
            what = "a header value" if arg in HEADER_ARGS else "a value"
            return (f"{where}: -M {arg} holds {what} shaped like an API key or token, which Inspect writes "
                    f"into the .eval log's header; {FIX}")
    if base_url and _KEY_SHAPES.search(str(base_url)):
        return (f"{where}: its base URL holds a value shaped like an API key or token, which Inspect writes "
                f"into the .eval log's header; {FIX}")
    return None


def model_credential_problem(where: str, model: Any) -> Optional[str]:
    """:func:`logged_credential` of an Inspect ``Model`` (its explicit base URL and model args)."""
    return logged_credential(where, getattr(model, "explicit_base_url", None), getattr(model, "model_args", None))
