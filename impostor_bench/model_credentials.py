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
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional

from impostor_bench.tracking.redact import url_secrets

#: Model args Inspect logs that hold a URL.
URL_ARGS = ("base_url", "api_base")
#: Model args Inspect logs that hold HTTP headers.
HEADER_ARGS = ("extra_headers", "default_headers", "headers")
# A header whose name says it carries a credential.
_CREDENTIAL_HEADER = re.compile(r"auth|key|token|secret|passw|cookie|signature|credential|session", re.IGNORECASE)
FIX = ("fix: give it without the credential and pass the key by environment variable (e.g. OPENAI_API_KEY, "
       "LITELLM_API_KEY, or the provider's own variable) or -M api_key=... (Inspect leaves api_key out of its logs)")


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
    return None


def model_credential_problem(where: str, model: Any) -> Optional[str]:
    """:func:`logged_credential` of an Inspect ``Model`` (its explicit base URL and model args)."""
    return logged_credential(where, getattr(model, "explicit_base_url", None), getattr(model, "model_args", None))
