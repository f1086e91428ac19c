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
                 "credentials", "auth", "authorization", "bearer", "cookie", "pass", "pwd", "pat", "passphrase"}
# Secret words that also hide inside one run-together word (PGPASSWORD, GHTOKEN, MYSECRET): a
# short one ("pass", "pwd", "pat", "key") would not (PGPASSFILE, PATH, PWD's folder, MONKEY).
_SECRET_PARTS = ("password", "passwd", "passphrase", "secret", "credential", "apikey")
_NOT_SECRET = {"LITELLM_LOCAL_MODEL_COST_MAP", "TOKENIZERS_PARALLELISM", "PWD", "OLDPWD"}
_MIN_SECRET_LEN = 8
# A URL as it appears in text or JSON: a scheme, then up to a space, quote, bracket or backslash.
_URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>\\`]+")
_USERINFO = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://(?P<userinfo>[^/?#]*)@")
_QUERY_PARAM = re.compile(r"[?&;#](?P<name>[^=&#?;]+)=(?P<value>[^&#;]*)")
# Credentials sit after a URL's "://" and before its end: userinfo ends in "@", a query starts at "?".
# A text where no "://" is followed by "@" or "?" before a URL's end has none: this search jumps
# from "://" to "://", where ``_URL`` tries every letter of the text as a scheme's start (~2 ms for
# a game's log member, and every member of a log has "attachment://" references).
_URL_CREDENTIAL_HINT = re.compile(r"://[^\s\"'<>\\`@?#]*[@?#]")
# The same test on a log member's bytes, before decoding it (decoding 10 MB of JSON was half the
# cost of checking a 200-game log): a byte outside ASCII never stops it where the decoded text's
# Unicode whitespace would, so it matches wherever the text's pattern does (and maybe more: then
# the member is decoded and checked exactly).  Possessive: the class excludes "@" and "?", so
# backtracking over a long "attachment://..." reference can never find one.
_URL_CREDENTIAL_HINT_BYTES = re.compile(rb"://[^\s\"'<>\\`@?#]*+[@?#]")
_URL_SECRET_PARAMS = {"sig", "signature", "pass", "pwd", "code", "apikey", "api_key", "key"}
# A mapping of URL query parameters (``-M default_query={"code": ...}``, ``params``): its entries are
# judged as a URL's query parameters are (``code``, ``sig`` are secret there).
_QUERY_MAPPING = re.compile(r"(?i)(query|params)$")

# Credentials recognised by their shape, for keys this process was never told (a provider that
# answers 401 "Incorrect API key provided: <key>" for a key read from elsewhere, a model that
# repeats a token): the group ``v`` is masked.  Shapes, not words: a player's description of the
# secret word ("the secret is...") must stay as written.
_TOKEN_SHAPES = [re.compile(p) for p in (
    r"\b(?P<v>sk-[A-Za-z0-9_-]{16,})",  # OpenAI, Anthropic (sk-ant-), OpenRouter (sk-or-)
    r"\b(?P<v>hf_[A-Za-z0-9]{20,})",  # Hugging Face
    r"\b(?P<v>(?:gh[pousr]_|github_pat_)[A-Za-z0-9_]{20,})",  # GitHub
    r"\b(?P<v>AKIA[0-9A-Z]{16})\b",  # AWS access key id
    r"\b(?P<v>AIza[0-9A-Za-z_-]{35})",  # Google API key
    r"\b(?P<v>xox[abprs]-[A-Za-z0-9-]{10,})",  # Slack
    # "Bearer <token>" (a token holds a digit: "the bearer of bad news" is no credential)
    r"(?i)\bbearer\s+(?P<v>(?=[A-Za-z0-9._~+/-]*[0-9])[A-Za-z0-9._~+/-]{12,}=*)",
    # an Authorization header's value, and a provider's "API key provided: <key>"
    r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?(?:basic|bearer|token)?\s*(?P<v>[^\s\"',;&#?]{8,})",
    r"(?i)\b(?:api[ _-]?key|access[ _-]?token)(?: provided)?[\"']?\s*[:=]\s*[\"']?(?P<v>[^\s\"',;.&#?]{8,})",
)]
_TOKEN_HINT = re.compile("|".join(f"(?:{p.pattern})" for p in _TOKEN_SHAPES).replace("(?i)", "").replace("?P<v>", ""),
                         re.IGNORECASE)


def redact_tokens(text: str) -> str:
    """``text`` with every credential-shaped token (:data:`_TOKEN_SHAPES`) masked."""
    if _TOKEN_HINT.search(text) is None:
        return text
    for shape in _TOKEN_SHAPES:
        text = shape.sub(lambda m: m.group(0)[:m.start("v") - m.start()] + REDACTED
                         + m.group(0)[m.end("v") - m.start():], text)
    return text


def is_secret_name(name: str) -> bool:
    """Whether a variable or argument named ``name`` holds a secret, judged word by word
    (``DB_PASS``, ``MYSQL_PWD``, ``GITHUB_PAT``) and by the long secret words inside one word
    (``PGPASSWORD``); ``max_tokens``, ``PGPASSFILE``, ``PWD`` (the current folder) are not."""
    if name.upper() in _NOT_SECRET:
        return False
    words = [w for w in re.split(r"[^a-zA-Z0-9]+|(?<=[a-z])(?=[A-Z])", name) if w]
    low = [w.lower() for w in words]
    if "api" in low and "key" in low:
        return True
    if any(w in _SECRET_WORDS or w.endswith("token") or any(p in w for p in _SECRET_PARTS) for w in low):
        return True
    return "apikey" in name.lower().replace("_", "").replace("-", "")


def _url_credentials(url: str) -> list[tuple[int, int]]:
    """The (start, end) spans of a URL's credentials: its userinfo, secret query values."""
    spans = []
    m = _USERINFO.match(url)
    if m and m["userinfo"]:
        spans.append(m.span("userinfo"))
    # the query and the fragment (``#token=...``, ``#access_token=...``: OAuth's implicit flow)
    query = min((i for i in (url.find("?"), url.find("#")) if i >= 0), default=-1)
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


def _is_secret_key(key: str, in_query: bool) -> bool:
    """A secret-named key, or (inside a query mapping) a URL's secret parameter (``code``, ``sig``)."""
    return is_secret_name(key) or (in_query and key.lower() in _URL_SECRET_PARAMS)


def _json_mapping(text: str) -> Any:
    """``text`` read as a JSON object when it is one (a ``-M default_query='{...}'`` string), else ``text``."""
    if text.lstrip().startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            return text
        return value if isinstance(value, dict) else text
    return text


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

    def walk(m: Any, query: bool = False) -> None:
        if isinstance(m, str) and query:  # a query mapping given as JSON text
            m = _json_mapping(m)
        if isinstance(m, Mapping):
            for k, v in m.items():
                if _is_secret_key(str(k), query):
                    _collect(v, out)
                else:
                    walk(v, bool(_QUERY_MAPPING.search(str(k))))
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


def spec_secret_values(spec: Any) -> set[str]:
    """``secret_values`` of an Inspect eval header (``EvalSpec``): its model args, each model role's
    args and base URL, its base URL, and the environment."""
    roles = {r: {"args": c.args, "base_url": c.base_url} for r, c in (spec.model_roles or {}).items()}
    return secret_values(spec.model_args or {}, roles, {"model_base_url": spec.model_base_url or ""})


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
        text = redact_tokens(redact_urls(text))
        for s, esc in pairs:
            if s in text:
                text = text.replace(s, REDACTED)
            if esc is not None and esc in text:
                text = text.replace(esc, REDACTED)
        return text

    return redact


def redact_mapping(value: Any, secrets: Iterable[str] = ()) -> Any:
    """Copy with secret-named keys masked (and, in a query mapping such as ``default_query``, a
    URL's secret parameters: ``code``, ``sig``) and secret values scrubbed from strings."""
    return _redact_value(value, redactor(secrets), False)


def _redact_value(value: Any, redact: Callable[[str], str], query: bool) -> Any:
    if isinstance(value, str) and query and isinstance(_json_mapping(value), dict):
        return json.dumps(_redact_value(_json_mapping(value), redact, True))
    if isinstance(value, Mapping):
        return {k: (REDACTED if _is_secret_key(str(k), query) and v not in (None, "", {})
                    else _redact_value(v, redact, bool(_QUERY_MAPPING.search(str(k)))))
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redact_value(v, redact, False) for v in value]
    if isinstance(value, str):
        return redact(value)
    return value


def redact_strings(value: Any, redact: Callable[[str], str]) -> Any:
    """A copy of ``value`` (mappings, lists, scalars) with every string scrubbed by ``redact``
    (a ``redactor``); keys and non-text values are kept as they are (a game record's fields)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {k: redact_strings(v, redact) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_strings(v, redact) for v in value]
    return value


def scrub_frame(df: Any, secrets: Iterable[str] = ()) -> Any:
    """A copy of the DataFrame ``df`` with every text cell scrubbed (``redactor``): the tables an
    MLflow run or an export holds carry provider error messages and the players' texts, either of
    which may repeat a key.  Only the cells that may hold one are rewritten (a quick search for
    the secrets, a URL credential or a token shape first: a 90,000-game players table stays fast)."""
    secrets = [s for s in secrets if s]
    redact = redactor(secrets)
    alts = [re.escape(x) for s in secrets for x in {s, json.dumps(s)[1:-1]}]
    hint = re.compile("|".join(alts + [_URL_CREDENTIAL_HINT.pattern, _TOKEN_HINT.pattern]), re.IGNORECASE)
    out = df
    for col in df.columns:
        column = df[col]
        if column.dtype != object and str(column.dtype) not in ("string", "str"):
            continue
        dirty = column.map(lambda v: isinstance(v, str) and hint.search(v) is not None)
        if dirty.any():
            if out is df:
                out = df.copy()
            out.loc[dirty, col] = column[dirty].map(redact)
    return out


# The literal part of every token shape, for a log member's bytes: a superset of where a shape
# can match (no \b or \s, whose bytes meaning differs from the decoded text's), checked exactly after.
_TOKEN_ANCHOR_BYTES = re.compile(rb"(?i)sk-|hf_|gh[pousr]_|github_pat_|akia|aiza|xox[abprs]-|bearer|authorization"
                                 rb"|api[ _-]?key|access[ _-]?token")


def _dirty(data: bytes, needles: list[bytes]) -> bool:
    """Whether a log member holds a secret value, a credential-shaped token or a URL with credentials."""
    if any(n in data for n in needles):
        return True
    urls = (b"@" in data or b"?" in data or b"#" in data) and _URL_CREDENTIAL_HINT_BYTES.search(data) is not None
    if not urls and _TOKEN_ANCHOR_BYTES.search(data) is None:  # a credential needs one after "://"
        return False
    text = data.decode("utf-8", "replace")
    return redact_tokens(redact_urls(text)) != text


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
