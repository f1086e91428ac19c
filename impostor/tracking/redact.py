"""Keep secrets out of MLflow: API keys in model args, the environment, or an uploaded log.

Names are judged word by word (``OPENAI_API_KEY``, ``hf_token``, ``password``
are secret; ``max_tokens`` is not).  Values of secret-named environment
variables and model args are then scrubbed from any text we log.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Iterable, Mapping

REDACTED = "***REDACTED***"
_SECRET_WORDS = {"key", "apikey", "token", "secret", "secrets", "password", "passwd", "credential",
                 "credentials", "auth", "authorization", "bearer", "cookie"}
_NOT_SECRET = {"LITELLM_LOCAL_MODEL_COST_MAP", "TOKENIZERS_PARALLELISM"}
_MIN_SECRET_LEN = 8
_URL_CREDS = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s:]+:[^/@\s]+@")


def is_secret_name(name: str) -> bool:
    if name.upper() in _NOT_SECRET:
        return False
    words = [w for w in re.split(r"[^a-zA-Z0-9]+|(?<=[a-z])(?=[A-Z])", name) if w]
    low = [w.lower() for w in words]
    if "api" in low and "key" in low:
        return True
    return any(w in _SECRET_WORDS for w in low) or "apikey" in name.lower().replace("_", "").replace("-", "")


def _collect(value: Any, out: set[str]) -> None:
    if isinstance(value, str):
        if len(value) >= _MIN_SECRET_LEN:
            out.add(value)
    elif isinstance(value, Mapping):
        for v in value.values():
            _collect(v, out)
    elif isinstance(value, (list, tuple, set)):
        for v in value:
            _collect(v, out)


def secret_values(*mappings: Mapping[str, Any] | None, env: Mapping[str, str] | None = None) -> set[str]:
    """Values to scrub: secret-named env vars plus secret-named entries of the given mappings (recursively)."""
    out: set[str] = set()
    for k, v in (os.environ if env is None else env).items():
        if is_secret_name(k) and v and len(v) >= _MIN_SECRET_LEN and not v.lower() in {"true", "false"}:
            out.add(v)

    def walk(m: Any) -> None:
        if isinstance(m, Mapping):
            for k, v in m.items():
                if is_secret_name(str(k)):
                    _collect(v, out)
                else:
                    walk(v)
        elif isinstance(m, (list, tuple)):
            for v in m:
                walk(v)

    for m in mappings:
        if m:
            walk(m)
    return out


def redact_text(text: str, secrets: Iterable[str]) -> str:
    if "://" in text:  # the pattern needs it; scanning every prompt with the regex cost ~0.1 ms each
        text = _URL_CREDS.sub(lambda m: f"{m['scheme']}{REDACTED}@", text)
    for s in sorted(secrets, key=len, reverse=True):
        if s in text:
            text = text.replace(s, REDACTED)
        esc = json.dumps(s)[1:-1]
        if esc != s and esc in text:
            text = text.replace(esc, REDACTED)
    return text


def redact_mapping(value: Any, secrets: Iterable[str] = ()) -> Any:
    """Copy with secret-named keys masked and secret values scrubbed from strings."""
    secrets = list(secrets)
    if isinstance(value, Mapping):
        return {k: (REDACTED if is_secret_name(str(k)) and v not in (None, "", {}) else redact_mapping(v, secrets))
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_mapping(v, secrets) for v in value]
    if isinstance(value, str):
        return redact_text(value, secrets)
    return value


def redacted_log_copy(path: str | Path, secrets: Iterable[str], tmpdir: str | Path) -> Path:
    """The log file itself, or a scrubbed copy in ``tmpdir`` when it contains a secret value."""
    path = Path(path)
    secrets = [s for s in secrets if s]
    if not secrets:
        return path
    needles = [s.encode() for s in secrets] + [json.dumps(s)[1:-1].encode() for s in secrets]
    out = Path(tmpdir) / path.name
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zin:
            dirty = any(any(n in zin.read(i) for n in needles) for i in zin.infolist())
            if not dirty:
                return path
            with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zout:
                for info in zin.infolist():
                    data = zin.read(info)
                    if any(n in data for n in needles):
                        data = redact_text(data.decode("utf-8", "replace"), secrets).encode()
                    zout.writestr(info, data)
        return out
    data = path.read_bytes()
    if not any(n in data for n in needles):
        return path
    out.write_text(redact_text(data.decode("utf-8", "replace"), secrets))
    return out


def copy_redacted_file(path: str | Path, secrets: Iterable[str], dest: str | Path) -> Path:
    src = redacted_log_copy(path, secrets, tempfile.mkdtemp(prefix="impostor-redact-"))
    shutil.copyfile(src, dest)
    return Path(dest)
