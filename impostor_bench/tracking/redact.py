"""Keep secrets out of MLflow: API keys in model args, the environment, URLs, or an uploaded log.

Names are judged word by word (``OPENAI_API_KEY``, ``hf_token``, ``password``
are secret; ``max_tokens`` is not).  Values of secret-named environment
variables and model args are then scrubbed from any text we log.

URL-shaped values get one pass of their own (:func:`redact_urls`) wherever they are
found (a base URL, a param, ``resolved.json``, a log, a trace): the userinfo
(``http://user:pw@host``) and the value of every secret-named query parameter
(``?api-key=...``, ``&token=...``, ``&sig=...``) are masked.  The credentials held by the
URLs of model args, base URLs and the environment are secret values too
(:func:`url_secrets`), so a log that repeats them anywhere is scrubbed before upload.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

REDACTED = "***REDACTED***"
_SECRET_WORDS = {"key", "apikey", "token", "secret", "secrets", "password", "passwd", "credential",
                 "credentials", "auth", "authorization", "bearer", "cookie"}
_NOT_SECRET = {"LITELLM_LOCAL_MODEL_COST_MAP", "TOKENIZERS_PARALLELISM"}
_MIN_SECRET_LEN = 8
# A URL as it appears in text or JSON: a scheme, then up to a space, quote, bracket or backslash.
_URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>\\`]+")
_USERINFO = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://(?P<userinfo>[^/?#]*)@")
_QUERY_PARAM = re.compile(r"[?&;](?P<name>[^=&#?;]+)=(?P<value>[^&#;]*)")
# Credentials sit after a URL's "://" and before its end: userinfo ends in "@", a query starts at "?".
# A text where no "://" is followed by "@" or "?" before a URL's end has none: this search jumps
# from "://" to "://", where ``_URL`` tries every letter of the text as a scheme's start (~2 ms for
# a game's log member, and every member of a log has "attachment://" references).
_URL_CREDENTIAL_HINT = re.compile(r"://[^\s\"'<>\\`@?]*[@?]")
# The same test on a log member's bytes, before decoding it (decoding 10 MB of JSON was half the
# cost of checking a 200-game log): a byte outside ASCII never stops it where the decoded text's
# Unicode whitespace would, so it matches wherever the text's pattern does (and maybe more: then
# the member is decoded and checked exactly).  Possessive: the class excludes "@" and "?", so
# backtracking over a long "attachment://..." reference can never find one.
_URL_CREDENTIAL_HINT_BYTES = re.compile(rb"://[^\s\"'<>\\`@?]*+[@?]")
_URL_SECRET_PARAMS = {"sig", "signature", "pass", "pwd", "code", "apikey", "api_key", "key"}


def is_secret_name(name: str) -> bool:
    if name.upper() in _NOT_SECRET:
        return False
    words = [w for w in re.split(r"[^a-zA-Z0-9]+|(?<=[a-z])(?=[A-Z])", name) if w]
    low = [w.lower() for w in words]
    if "api" in low and "key" in low:
        return True
    return any(w in _SECRET_WORDS for w in low) or "apikey" in name.lower().replace("_", "").replace("-", "")


def _url_credentials(url: str) -> list[tuple[int, int]]:
    """The (start, end) spans of a URL's credentials: its userinfo, secret query values."""
    spans = []
    m = _USERINFO.match(url)
    if m and m["userinfo"]:
        spans.append(m.span("userinfo"))
    query = url.find("?")
    if query >= 0:
        for q in _QUERY_PARAM.finditer(url, query):
            if q["value"] and (is_secret_name(q["name"]) or q["name"].lower() in _URL_SECRET_PARAMS):
                spans.append(q.span("value"))
    return spans


def _redact_url(m: re.Match[str]) -> str:
    url = m.group(0)
    for a, b in reversed(_url_credentials(url)):
        url = url[:a] + REDACTED + url[b:]
    return url


def redact_urls(text: str) -> str:
    """``text`` with the credentials of every URL in it masked (userinfo, secret query values)."""
    if "://" not in text:  # the pattern needs it; scanning every prompt with the regex cost ~0.1 ms each
        return text
    if _URL_CREDENTIAL_HINT.search(text) is None:  # no URL in it can hold a credential
        return text
    return _URL.sub(_redact_url, text)


def url_secrets(text: str) -> set[str]:
    """The credentials held by the URLs in ``text``.  A short one is kept with its delimiters
    (``user:pw@``, ``key=abc``) so that scrubbing a log does not mask every "pw" in it."""
    out: set[str] = set()
    if "://" not in text:
        return out
    for m in _URL.finditer(text):
        url = m.group(0)
        for a, b in _url_credentials(url):
            password = url[a:b].partition(":")[2] if url[b:b + 1] == "@" else ""
            if len(password) >= _MIN_SECRET_LEN:  # also alone: a log may repeat it without the user
                out.add(password)
            if b - a >= _MIN_SECRET_LEN:
                out.add(url[a:b])
            elif url[a - 1] == "=":  # a query value: from its parameter name
                out.add(url[max(url.rfind(c, 0, a) for c in "?&;") + 1 : b])
            else:  # userinfo: with the scheme's slashes and the @
                out.add("//" + url[a:b] + "@")
    return out


def _strings(value: Any):
    """Every string in a nested structure of mappings and sequences."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple, set)):
        for v in value:
            yield from _strings(v)


def _collect_urls(value: Any, out: set[str]) -> None:
    for s in _strings(value):
        out |= url_secrets(s)


def _collect(value: Any, out: set[str]) -> None:
    out.update(s for s in _strings(value) if len(s) >= _MIN_SECRET_LEN)


def secret_values(*mappings: Any, env: Mapping[str, str] | None = None) -> set[str]:
    """Values to scrub: secret-named env vars, secret-named entries of the given mappings
    (recursively), and the credentials of every URL in either (:func:`url_secrets`)."""
    out: set[str] = set()
    for k, v in (os.environ if env is None else env).items():
        if is_secret_name(k) and v and len(v) >= _MIN_SECRET_LEN and v.lower() not in {"true", "false"}:
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
            _collect_urls(m, out)
    for v in (os.environ if env is None else env).values():
        out |= url_secrets(v)
    return out


def redact_text(text: str, secrets: Iterable[str]) -> str:
    return redactor(secrets)(text)


def redactor(secrets: Iterable[str]) -> Callable[[str], str]:
    """``redact_text`` for many texts with the same secrets: the secrets are sorted (longest
    first) and JSON-escaped once, not once per text (a game's trace scrubs ~30 texts)."""
    pairs = []
    for s in sorted(secrets, key=len, reverse=True):
        esc = json.dumps(s)[1:-1]
        pairs.append((s, esc if esc != s else None))

    def redact(text: str) -> str:
        text = redact_urls(text)
        for s, esc in pairs:
            if s in text:
                text = text.replace(s, REDACTED)
            if esc is not None and esc in text:
                text = text.replace(esc, REDACTED)
        return text

    return redact


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


def _dirty(data: bytes, needles: list[bytes]) -> bool:
    """Whether a log member holds a secret value, or a URL with credentials."""
    if any(n in data for n in needles):
        return True
    if b"@" not in data and b"?" not in data:  # a credential needs one after "://"; two memchr, no regex
        return False
    if _URL_CREDENTIAL_HINT_BYTES.search(data) is None:
        return False
    text = data.decode("utf-8", "replace")
    return redact_urls(text) != text


def redacted_log_copy(path: str | Path, secrets: Iterable[str], tmpdir: str | Path) -> Path:
    """The log file itself, or a scrubbed copy in ``tmpdir`` when it contains a secret value
    or a URL with credentials."""
    path = Path(path)
    secrets = [s for s in secrets if s]
    needles = [s.encode() for s in secrets] + [json.dumps(s)[1:-1].encode() for s in secrets]
    out = Path(tmpdir) / path.name
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zin:
            dirty = [info.filename for info in zin.infolist() if _dirty(zin.read(info), needles)]
            if not dirty:
                return path
            with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zout:
                for info in zin.infolist():
                    data = zin.read(info)
                    if info.filename in dirty:
                        data = redact_text(data.decode("utf-8", "replace"), secrets).encode()
                    zout.writestr(info, data)
        return out
    data = path.read_bytes()
    if not _dirty(data, needles):
        return path
    out.write_text(redact_text(data.decode("utf-8", "replace"), secrets))
    return out


def copy_redacted_file(path: str | Path, secrets: Iterable[str], dest: str | Path) -> Path:
    src = redacted_log_copy(path, secrets, tempfile.mkdtemp(prefix="impostor-redact-"))
    shutil.copyfile(src, dest)
    return Path(dest)
