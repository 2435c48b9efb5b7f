"""Secrets never reach the store in clear; personal data is tagged, not removed.

:func:`redact` replaces every secret found in a text by a stable marker
``[REDACTED:<kind>:<first 12 hex digits of sha256(secret)>]``: equal secrets give
equal markers, so records still group by them, and the secret cannot be read back.
:func:`redact_value` does the same through JSON-like data (dicts, lists, tuples,
strings; dict keys too), and also redacts a value stored under a key named like a
credential (password, passwd, pwd, passphrase, secret, private_key, credential:
any non-placeholder string; token, api_key, apikey, access_key, authorization,
auth, session: a string that looks like a secret, i.e. an auth header value or a
high-entropy string of :data:`MIN_SECRET_LENGTH` or more characters).

Detectors (the ``kind`` in the marker): ``aws_access_key`` (AKIA/ASIA + 16),
``aws_secret_key`` (40 characters assigned to an aws secret key name),
``github_token`` (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_), ``slack_token``
(xoxa-, xoxb-, xoxp-, xoxr-), ``stripe_key`` (sk_live_, rk_live_),
``google_api_key`` (AIza + 35), ``anthropic_key`` (sk-ant-...), ``openai_key``
(sk-..., 20+ characters), ``jwt`` (three base64url segments, the first starting
eyJ), ``bearer_token`` (the credentials of an Authorization header), ``private_key``
(a -----BEGIN ... PRIVATE KEY----- block, to its END line or, cut off, to the end of
the text), ``url_password`` (scheme://user:password@host), ``password`` (password-
like assignments: ``password=...``, ``"password": "..."``, ``PASSWORD: ...``,
``--password ...``) and ``high_entropy`` (under a token-like key name).

Not redacted on purpose: git commit hashes, UUIDs and ordinary identifiers (no
detector matches them outside a credential key), code that assigns a password
from an expression (``password = get_password()``, ``password=self.password``),
and placeholders (``***``, ``<password>``, ``${PASSWORD}``, ``%s``).

PII: e-mail addresses and phone numbers stay in the text; :func:`pii_tags` says
which kinds occur (``"email"``, ``"phone"``). The episodic store records them under
the key ``"_pii"`` of the stored JSON: in a tool execution's ``parameters`` (tags
of its parameters, result and error message together) and in a learning's
``data``, e.g. ``{"to": "ana@example.com", "_pii": ["email"]}``. File interactions,
tasks and snapshots have no JSON column of their own for it and are not tagged.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from .errors import InvalidInputError

__all__ = [
    "redact",
    "redact_value",
    "pii_tags",
    "marker",
    "entropy",
    "MIN_SECRET_LENGTH",
    "ENTROPY_THRESHOLD",
    "MAX_DEPTH",
]

MIN_SECRET_LENGTH = 20
"""The shortest string the high-entropy test considers."""

ENTROPY_THRESHOLD = 3.5
"""Shannon entropy (bits per character) from which a string under a token-like key
counts as a secret (it must also mix letters and digits)."""

MAX_DEPTH = 64
"""How deeply :func:`redact_value` walks nested data (deeper raises InvalidInputError)."""

_MARKER = re.compile(r"\[REDACTED:[a-z_]+:[0-9a-f]{12}\]")
_MARKER_SPLIT = re.compile(r"(\[REDACTED:[a-z_]+:[0-9a-f]{12}\])")
_MAX_ENTROPY_TEXT = 4096  # a longer value under a token key is not one token


def marker(kind: str, secret: str) -> str:
    """The marker that replaces ``secret``."""
    digest = hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"[REDACTED:{kind}:{digest}]"


def _placeholder(value: str) -> bool:
    """Not a secret: empty, masked, a template, or already redacted."""
    v = value.strip().strip("\"'")
    return (
        not v
        or _MARKER.search(v) is not None
        or set(v) <= set("*xX.•#-_")
        or v.startswith("<")
        or v.startswith(("${", "$(", "{{", "%"))
        or re.fullmatch(r"\$[A-Za-z_]\w*", v) is not None
        or v.lower() in ("none", "null", "nil", "true", "false", "undefined", "redacted", "changeme", "password")
    )


def _code(value: str) -> bool:
    """An unquoted assignment's value that is code, not a literal: a call, a
    subscript or a dotted name (``get_password()``, ``os.environ[...]``, ``self.pw``)."""
    return re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:[(\[].*)?", value) is not None and (
        "(" in value or "[" in value or "." in value
    )


def entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character."""
    if not text:
        return 0.0
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values())


def _high_entropy(value: str) -> bool:
    v = value.strip()
    return (
        MIN_SECRET_LENGTH <= len(v) <= _MAX_ENTROPY_TEXT
        and not any(ch.isspace() for ch in v)
        and any(ch.isdigit() for ch in v)
        and any(ch.isalpha() for ch in v)
        and not _placeholder(v)
        and entropy(v) >= ENTROPY_THRESHOLD
    )


# Key names (lowercased, words joined by "_"): a password-like key's every value is
# secret; a token-like key's value is when it looks like one.
_PASSWORD_WORDS = r"password|passwd|pwd|passphrase|secret|private[_-]?key|credentials?"
_TOKEN_WORDS = r"token|api[_-]?key|apikey|access[_-]?key|authorization|auth|session|cookie"
_PASSWORD_KEY = re.compile(rf"(?:^|_)(?:{_PASSWORD_WORDS})(?:_|$)")
_TOKEN_KEY = re.compile(rf"(?:^|_)(?:{_TOKEN_WORDS})(?:_|$)")
_AUTH_VALUE = re.compile(r"(?i)^\s*(?:bearer|basic|token|digest)\s+(\S{8,})\s*$")


def _key_words(key: str) -> str:
    """``apiKey``, ``X-Api-Key``, ``API_KEY`` -> ``api_key``."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key[:200])
    return re.sub(r"[^a-z0-9]+", "_", spaced.lower()).strip("_")


def _key_class(key: str) -> str | None:
    words = _key_words(key)
    if _PASSWORD_KEY.search(words):
        return "password"
    if _TOKEN_KEY.search(words):
        return "token"
    return None


def _secret_under(key_class: str | None, value: str) -> str | None:
    """The kind of secret ``value`` is under a key of ``key_class``, or None."""
    if key_class is None or _placeholder(value):
        return None
    if key_class == "password":
        return "password"
    if _AUTH_VALUE.match(value):
        return "bearer_token"
    if _high_entropy(value):
        return "high_entropy"
    return None


# -- detectors over free text ---------------------------------------------------------

# (kind, substrings of which one must occur in the lowercased text for the rule to
# run: a cheap test that keeps a 10 MB text fast, pattern, replacement).
_Rule = tuple[str, tuple[str, ...], "re.Pattern[str]", Callable[["re.Match[str]"], str | None]]


def _whole(kind: str) -> Callable[[re.Match[str]], str | None]:
    return lambda m: marker(kind, m.group(0))


def _group(kind: str, group: str = "secret") -> Callable[[re.Match[str]], str | None]:
    def replace(m: re.Match[str]) -> str | None:
        secret = m.group(group)
        if _placeholder(secret):
            return None
        start, end = m.span(group)
        base = m.start(0)
        whole = m.group(0)
        return whole[: start - base] + marker(kind, secret) + whole[end - base :]

    return replace


def _assignment(m: re.Match[str]) -> str | None:
    """``key = value`` for a credential-like key: any literal for a password-like
    key; a high-entropy one for a token-like key."""
    secret = m.group("secret")
    quoted = m.group("quote") is not None
    if _placeholder(secret) or (not quoted and _code(secret)):
        return None
    kind = _secret_under(_key_class(m.group("key")), secret)
    if kind is None:
        return None
    start, end = m.span("secret")
    base = m.start(0)
    whole = m.group(0)
    return whole[: start - base] + marker(kind, secret) + whole[end - base :]


_KEY_NAME = rf"[A-Za-z0-9_.-]{{0,40}}?(?:{_PASSWORD_WORDS}|{_TOKEN_WORDS})[A-Za-z0-9_-]{{0,20}}"
_RULES: list[_Rule] = [
    (
        "private_key",
        ("private key",),
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----"
            r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----|.*\Z)",
            re.DOTALL,
        ),
        _whole("private_key"),
    ),
    (
        "aws_secret_key",
        ("secret",),
        re.compile(
            r"(?i)aws_?secret(?:_?access)?_?key[\"']?\s*[:=]\s*[\"']?(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        _group("aws_secret_key"),
    ),
    (
        "aws_access_key",
        ("akia", "asia"),
        re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])"),
        _whole("aws_access_key"),
    ),
    (
        "github_token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        re.compile(
            r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_])"
        ),
        _whole("github_token"),
    ),
    ("slack_token", ("xox",), re.compile(r"(?<![A-Za-z0-9])xox[abpr]-[A-Za-z0-9-]{10,250}"), _whole("slack_token")),
    (
        "stripe_key",
        ("_live_",),
        re.compile(r"(?<![A-Za-z0-9_])[sr]k_live_[A-Za-z0-9]{16,247}(?![A-Za-z0-9])"),
        _whole("stripe_key"),
    ),
    (
        "google_api_key",
        ("aiza",),
        re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
        _whole("google_api_key"),
    ),
    (
        "anthropic_key",
        ("sk-ant-",),
        re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,250}"),
        _whole("anthropic_key"),
    ),
    (
        "openai_key",
        ("sk-",),
        re.compile(r"(?<![A-Za-z0-9_-])sk-(?:proj-)?[A-Za-z0-9_-]{20,250}"),
        _whole("openai_key"),
    ),
    (
        "jwt",
        ("eyj",),
        re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{7,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}(?![A-Za-z0-9_-])"),
        _whole("jwt"),
    ),
    (
        "bearer_token",
        ("bearer", "authorization"),
        re.compile(
            r"(?i)(?:authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest)\s+|\bbearer\s+)"
            r"(?P<secret>[A-Za-z0-9._~+/=-]{16,})"
        ),
        _group("bearer_token"),
    ),
    (
        "url_password",
        ("://",),
        re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s:/@\"'<>]{1,256}:(?P<secret>[^\s/@\"'<>]{1,256})@"),
        _group("url_password"),
    ),
    (
        "password",
        ("pass", "pwd", "secret", "token", "api-key"),
        re.compile(
            r"(?i)(?<![A-Za-z0-9_.-])(?:--?)(?P<key>passw(?:or)?d|pass|pwd|passphrase|secret|token|api-key)"
            r"(?:=|\s+)(?P<quote>[\"'])?(?P<secret>(?(quote)[^\"'\n]+|[^\s\"']+))(?(quote)[\"'])"
        ),
        _assignment,
    ),
    (
        "password",
        ("pass", "pwd", "secret", "private", "credential", "token", "key", "auth", "session", "cookie"),
        re.compile(
            rf"(?i)(?<![A-Za-z0-9_.-])[\"']?(?P<key>{_KEY_NAME})[\"']?\s*(?:==?|:=?)\s*"
            r"(?P<quote>[\"'])?(?P<secret>(?(quote)[^\"'\n]+|[^\s\"',;&)}\]]+))(?(quote)[\"'])"
        ),
        _assignment,
    ),
]


def redact(text: str) -> str:
    """``text`` with every secret replaced by its marker (see the module docstring)."""
    if not isinstance(text, str):
        raise InvalidInputError(f"redact takes a str, got {type(text).__name__}")
    lowered = text.lower()
    for _, triggers, pattern, replace in _RULES:
        if not any(t in lowered for t in triggers):
            continue

        def substitute(m: re.Match[str], replace: Callable[[re.Match[str]], str | None] = replace) -> str:
            found = replace(m)
            return m.group(0) if found is None else found

        # Markers already in the text are left alone (redacting twice changes nothing).
        parts = _MARKER_SPLIT.split(text)
        parts[::2] = [pattern.sub(substitute, part) for part in parts[::2]]
        text = "".join(parts)
    return text


def redact_value(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, tuples, strings, numbers) with every string
    redacted, keys included, and the values under credential-like keys redacted when
    they look like secrets. Tuples come back as lists; other values unchanged; data
    nested deeper than :data:`MAX_DEPTH` raises InvalidInputError."""
    return _redact_value(value, 0)


def _redact_value(value: Any, _depth: int) -> Any:
    if _depth > MAX_DEPTH:
        raise InvalidInputError(f"value is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            kind = _key_class(key) if isinstance(key, str) else None
            if isinstance(item, str):
                new = redact(item)  # a detector names the kind best
                if new == item:
                    secret = _secret_under(kind, item)
                    new = marker(secret, item) if secret else item
            else:
                new = _redact_value(item, _depth + 1)
            out[redact(key) if isinstance(key, str) else key] = new
        return out
    if isinstance(value, (list, tuple)):
        return [_redact_value(item, _depth + 1) for item in value]
    return value


_EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}\b(?!:)"
)
# 415-555-0132, 415.555.0132, (415) 555-0132, +1 415 555 0132, +44 20 7946 0958,
# +14155550132; not dates, versions, IP addresses or bare numbers.
_PHONE = re.compile(
    r"(?<![\w+.-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{2,4}\)\s?|\d{2,4}[ .-])\d{3,4}[ .-]\d{4}(?![\w.-])"
    r"|(?<![\w+])\+\d{8,15}(?![\w.-])"
)


def pii_tags(value: Any) -> list[str]:
    """Which kinds of personal data occur in ``value`` (a text, or JSON-like data:
    its strings and keys): a sorted sublist of ``["email", "phone"]``."""
    found: set[str] = set()
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack and len(found) < 2:
        item, depth = stack.pop()
        if isinstance(item, str):
            if "email" not in found and _EMAIL.search(item):
                found.add("email")
            if "phone" not in found and _PHONE.search(item):
                found.add("phone")
        elif depth < MAX_DEPTH and isinstance(item, dict):
            stack.extend((k, depth + 1) for k in item)
            stack.extend((v, depth + 1) for v in item.values())
        elif depth < MAX_DEPTH and isinstance(item, (list, tuple)):
            stack.extend((v, depth + 1) for v in item)
    return sorted(found)
