"""Secrets never reach the store in clear; personal data is tagged, not removed.

:func:`redact` replaces every secret found in a text by a stable marker
``[REDACTED:<kind>:<first 12 hex digits of sha256(secret)>]``: equal secrets give
equal markers, so records still group by them, and the secret cannot be read back.
Only the secret is replaced: the words around it (``password=``, ``Bearer``, a URL's
scheme, user and host) stay. :func:`redact_value` does the same through JSON-like data
(dicts, lists, tuples, strings; dict keys too), and also redacts a string stored under
a key named like a credential (see *Key names* below).

Detectors over free text (the ``kind`` in the marker):

- provider tokens, by their documented prefix and length: ``aws_access_key``
  (AKIA/ASIA + 16), ``github_token`` (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_),
  ``gitlab_token`` (glpat-, gloas-, gldt-, glrt-, glcbt-, glptt-, gltt-, glft-, glimt-,
  glagent-, glsoat-, glffct-, and runner registration tokens GR1348941...),
  ``slack_token`` (xoxa-, xoxb-, xoxe-, xoxo-, xoxp-, xoxr-, xoxs-, xapp-),
  ``stripe_key`` (sk_live_, rk_live_, whsec_), ``google_api_key`` (AIza + 35),
  ``google_oauth_secret`` (GOCSPX-), ``anthropic_key`` (sk-ant-...), ``openai_key``
  (sk-..., 20+ characters), ``npm_token`` (npm_ + 36), ``pypi_token`` (pypi-AgE...),
  ``huggingface_token`` (hf_ + 34 letters, api_org_ + 34), ``sendgrid_key``
  (SG.<22>.<43>), ``twilio_key`` (SK + 32 hex), ``discord_token`` (a bot token's
  three dot-separated parts), ``jwt`` (three base64url segments, the first eyJ);
- webhook URLs, whose path is the secret: ``slack_webhook``
  (hooks.slack.com/services|workflows|triggers/...), ``discord_webhook``
  (discord.com/api/webhooks/<id>/<token>);
- cloud credentials: ``aws_secret_key`` (40 characters assigned to an aws secret key
  name), ``azure_key`` (``AccountKey=`` / ``SharedAccessKey=`` in an Azure connection
  string), ``url_signature`` (the ``sig=`` of an Azure SAS URL, ``X-Amz-Signature=``,
  ``X-Goog-Signature=``);
- ``private_key``: a -----BEGIN ... PRIVATE KEY----- block, to its END line or, cut off,
  to the end of the text;
- ``bearer_token``: the credentials of an ``Authorization:`` header (Bearer, Basic,
  Token, Digest), and ``Bearer <token>`` anywhere;
- ``url_password``: the password of ``scheme://user:password@host``, the user possibly
  empty (``redis://:pw@host``) and the password possibly holding ``@`` or ``/`` (it
  runs to the last ``@`` before the query, else the last ``@`` of the URL);
- ``password``: assignments to a password-like key (``password=...``,
  ``"password": "..."``, ``DB_PASS=...``, ``PGPASSWORD=...``, ``--password ...``,
  ``--client-secret=...``); a password stated in prose (``the password is X``,
  ``password for prod: X``, ``passwd X``) when X is quoted or looks like a password
  (it has a digit, a symbol or an inner capital); passwords on a command line:
  ``mysql ... -pX`` (mysql, mysqldump, mysqladmin, mariadb...), ``sshpass -p X``,
  ``docker|podman|buildah|skopeo|nerdctl login ... -p X``, ``redis-cli ... -a X``,
  ``curl ... -u user:X``;
- ``high_entropy`` and ``credential``: a value assigned to a token-like key (see
  below);
- ``card_number``: 13 to 19 digits, bare or in groups of 4 (or 4-6-5 / 4-6-4)
  separated by one space or dash, that start like a card brand (Visa, Mastercard,
  Amex, Discover, JCB, Diners, UnionPay, Maestro) and pass the Luhn check;
- ``iban``: a country code, two check digits and 11 to 30 letters or digits, bare or
  in groups of 4, whose ISO 13616 checksum (mod 97) holds;
- ``ssn``: a US social security number written ``AAA-GG-SSSS`` (area not 000, 666
  or 9xx; group not 00; serial not 0000), or 9 digits right after ``SSN`` or
  ``social security number``.

Key names (lowercased, words joined by "_"): under a *password-like* key (a word
password, passwd, pwd, passphrase, secret, private_key, credential(s); a name ending
in password, passwd or passphrase such as PGPASSWORD; a name ending in _pass such as
DB_PASS, or pass alone: in free text ``pass: X`` only when X looks like a password,
since "first pass: tokenize" is prose) every literal value is a secret. Under a
*credential-like* key (a name ending in token, apikey or accesskey, or a compound name
ending in _key: API_KEY, ACCESS_TOKEN, MAILGUN_KEY) a value is a secret when it has
letters and digits, or a symbol, or mixed case, and is neither a number, a path nor a
file name (``credential``; ``high_entropy`` when it is also long and random). Under a *token-like* key (any word
token, api_key, apikey, access_key, authorization, auth, session, cookie) a value is a
secret when it is an auth header value or a high-entropy string of
:data:`MIN_SECRET_LENGTH` or more characters.

Not redacted on purpose: git commit hashes, UUIDs, version strings, dates, IP
addresses and ordinary identifiers (no detector matches them outside a credential
key); numbers that fail the Luhn or IBAN check or lack a card brand's prefix; code
that assigns a password from an expression (``password = get_password()``,
``password=self.password``); placeholders (``***``, ``<password>``, ``${PASSWORD}``,
``%s``, ``changeme``); a path under ``PWD``/``OLDPWD`` (the shell's directory);
plain words as values of credential-like keys (``sort_key: name``) and in prose
(``the password is swordfish``: a dictionary word stated in prose is not told apart
from ordinary English, quote it or write ``password: swordfish``); secrets with no
recognisable prefix, key or context (a bare random string in a sentence).

PII: e-mail addresses and phone numbers stay in the text; :func:`pii_tags` says
which kinds occur (``"email"``, ``"phone"``). The episodic store records them under
the key ``"_pii"`` of the stored JSON: in a tool execution's ``parameters`` (tags
of its parameters, result and error message together) and in a learning's
``data``, e.g. ``{"to": "ana@example.com", "_pii": ["email"]}``. File interactions,
tasks and snapshots have no JSON column of their own for it and are not tagged.
Card numbers, IBANs and social security numbers are redacted, not tagged: a memory
for coding agents has no use for them in clear.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from .digest import sha256_hex
from .errors import InvalidInputError
from .pattern import LazyPattern, lazy

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

_MARKER = lazy(r"\[REDACTED:[a-z_]+:[0-9a-f]{12}\]")
_MARKER_SPLIT = lazy(r"(\[REDACTED:[a-z_]+:[0-9a-f]{12}\])")
_MAX_ENTROPY_TEXT = 4096  # a longer value under a token key is not one token
# Each pass that changes a text turns some of it into markers, so passes end; the cap
# bounds the time on a text built to need many.
_MAX_PASSES = 8


def marker(kind: str, secret: str) -> str:
    """The marker that replaces ``secret``."""
    digest = sha256_hex(secret.encode("utf-8", "surrogatepass"))[:12]
    return f"[REDACTED:{kind}:{digest}]"


_MASK_CHARACTERS = frozenset("*xX.•#-_")
_PLACEHOLDER_WORDS = frozenset(
    ("none", "null", "nil", "true", "false", "undefined", "redacted", "changeme", "password")
)
_SHELL_VARIABLE = lazy(r"\$[A-Za-z_]\w*")


def _placeholder(value: str) -> bool:
    """Not a secret: empty, masked, a template, or already redacted."""
    v = value.strip().strip("\"'")
    return (
        not v
        or v.startswith(("<", "${", "$(", "{{", "%"))
        or v.lower() in _PLACEHOLDER_WORDS
        or _MASK_CHARACTERS.issuperset(v)
        or _SHELL_VARIABLE.fullmatch(v) is not None
        or ("[REDACTED:" in v and _MARKER.search(v) is not None)
    )


_CODE = lazy(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:[(\[].*)?")


def _code(value: str) -> bool:
    """An unquoted assignment's value that is code, not a literal: a call, a
    subscript or a dotted name (``get_password()``, ``os.environ[...]``, ``self.pw``)."""
    return ("(" in value or "[" in value or "." in value) and _CODE.fullmatch(value) is not None


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


# Key names (lowercased, words joined by "_"), three classes: under a password-like
# key every literal is secret; under a credential-like key one that looks like a
# credential; under a token-like key one that looks like a token (auth value, entropy).
_PASSWORD_KEY = lazy(
    r"(?:^|_)(?:password|passwd|pwd|passphrase|secret|private_key|credentials?)(?:_|$)"
    r"|(?:password|passwd|passphrase)$"  # PGPASSWORD, dbpassword
    r"|(?:^|_)pass$"  # DB_PASS, smtp_pass, {"pass": ...}
)
_CREDENTIAL_KEY = lazy(r"(?:token|apikey|accesskey)$|._key$")
_TOKEN_KEY = lazy(r"(?:^|_)(?:token|api_key|apikey|access_key|authorization|auth|session|cookie)(?:_|$)")
_AUTH_VALUE = lazy(r"(?i)^\s*(?:bearer|basic|token|digest)\s+(\S{8,})\s*$")
_SHELL_DIRECTORY_KEYS = ("pwd", "oldpwd")  # the shell's $PWD is a directory, not a password


_CAMEL = lazy(r"([a-z0-9])([A-Z])")
_NON_WORD = lazy(r"[^a-z0-9]+")


@functools.lru_cache(maxsize=1024)
def _key_words(key: str) -> str:
    """``apiKey``, ``X-Api-Key``, ``API_KEY`` -> ``api_key``."""
    spaced = _CAMEL.sub(r"\1_\2", key[:200])
    return _NON_WORD.sub("_", spaced.lower()).strip("_")


@functools.lru_cache(maxsize=1024)
def _key_class(key: str) -> str | None:
    words = _key_words(key)
    if _PASSWORD_KEY.search(words):
        return "password"
    if _CREDENTIAL_KEY.search(words):
        return "credential"
    if _TOKEN_KEY.search(words):
        return "token"
    return None


_FILE_NAME = lazy(r"[\w.-]*\.[A-Za-z]{1,5}")


def _credential_like(value: str) -> bool:
    """A short literal that reads as a credential rather than a word, a number or a
    path: letters and digits, or a symbol, or mixed case."""
    v = value.strip()
    if not 4 <= len(v) <= _MAX_ENTROPY_TEXT or any(ch.isspace() for ch in v) or "/" in v:
        return False
    if not any(ch.isalpha() for ch in v) or _FILE_NAME.fullmatch(v):
        return False  # a number (MAX_TOKEN=4096) or a file name (s3_key: a1.png)
    symbol = any(not ch.isalnum() and ch not in "_-.:" for ch in v)
    mixed = any(ch.isupper() for ch in v[1:]) and any(ch.islower() for ch in v)
    return any(ch.isdigit() for ch in v) or symbol or mixed


def _password_like(value: str) -> bool:
    """An unquoted word in prose that reads as a password, not as English or a path:
    a digit, a symbol or a capital past the first letter, and no path or flag shape."""
    v = value
    if len(v) < 4 or v.startswith(("-", "/", "~", "./", "../")) or "://" in v or _placeholder(v):
        return False
    digit = any(ch.isdigit() for ch in v)
    symbol = any(not ch.isalnum() and ch not in "_-.'" for ch in v)
    inner_capital = any(ch.isupper() for ch in v[1:])
    return digit or symbol or inner_capital


def _secret_under(key: str | None, value: str) -> str | None:
    """The kind of secret ``value`` is under the key ``key``, or None."""
    key_class = None if key is None else _key_class(key)
    if key_class is None or _placeholder(value):
        return None
    if key_class == "password":
        if _key_words(key or "") in _SHELL_DIRECTORY_KEYS and value.strip().startswith(("/", "~")):
            return None
        return "password"
    if _AUTH_VALUE.match(value):
        return "bearer_token"
    if _high_entropy(value):
        return "high_entropy"
    if key_class == "credential" and _credential_like(value):
        return "credential"
    return None


# -- detectors over free text ---------------------------------------------------------

# (kind, when the rule runs, pattern, replacement). The rule runs when one of the
# substrings occurs in the lowercased text, or, for a rule whose pattern needs digits
# or punctuation that every text has, when a cheap pattern is found in the text: a
# test that keeps a 10 MB text, and a short one, fast.
_Rule = tuple[str, "tuple[str, ...] | LazyPattern", LazyPattern, Callable[["re.Match[str]"], str | None]]


def _whole(kind: str, check: Callable[[str], bool] | None = None) -> Callable[[re.Match[str]], str | None]:
    def replace(m: re.Match[str]) -> str | None:
        secret = m.group(0)
        if check is not None and not check(secret):
            return None
        return marker(kind, secret)

    return replace


def _replace_span(m: re.Match[str], group: str, kind: str, secret: str | None = None) -> str:
    """``m``'s text with the span of ``group`` (or its first ``len(secret)`` characters)
    replaced by the marker of the secret."""
    start, end = m.span(group)
    if secret is not None:
        end = start + len(secret)
    base = m.start(0)
    whole = m.group(0)
    return whole[: start - base] + marker(kind, whole[start - base : end - base]) + whole[end - base :]


def _group(kind: str, group: str = "secret") -> Callable[[re.Match[str]], str | None]:
    def replace(m: re.Match[str]) -> str | None:
        if _placeholder(m.group(group)):
            return None
        return _replace_span(m, group, kind)

    return replace


def _assigned(m: re.Match[str], key: str, *, bare_key: bool) -> str | None:
    """``key = value`` for a credential-like key (see :func:`_secret_under`)."""
    secret = m.group("secret")
    quoted = m.group("quote") is not None
    if _placeholder(secret) or (not quoted and _code(secret)):
        return None
    if bare_key and key.lower() == "pass" and m.group("sep") == ":" and not _password_like(secret):
        return None  # prose, not a key: "first pass: tokenize the input"
    kind = _secret_under(key, secret)
    return None if kind is None else _replace_span(m, "secret", kind)


def _flag_assignment(m: re.Match[str]) -> str | None:
    return _assigned(m, m.group("key"), bare_key=False)


_KEY_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_KEY_PREFIX = 40  # how many characters of a key name may come before its credential word


def _key_assignment(m: re.Match[str]) -> str | None:
    """The match starts at the key's credential word (``PASS`` of ``DB_PASS``): read the
    rest of the name backwards, up to :data:`_KEY_PREFIX` characters, then decide."""
    text, start = m.string, m.start()
    begin = start
    while begin > 0 and start - begin <= _KEY_PREFIX and text[begin - 1] in _KEY_CHARACTERS:
        begin -= 1
    if start - begin > _KEY_PREFIX:
        return None  # a longer name: not a key this rule reads
    key = text[begin:start] + m.group(0)[: m.end("suffix") - start]
    keyquote = begin > 0 and text[begin - 1] in "\"'"
    return _assigned(m, key, bare_key=not keyquote)


def _prose_password(m: re.Match[str]) -> str | None:
    """``the password is X``: X when quoted, or when it reads as a password."""
    secret = m.group("secret")
    if m.group("quote") is None:
        secret = secret.rstrip(".,;:)]}")
        if not _password_like(secret) or _code(secret):
            return None
    elif _placeholder(secret):
        return None
    return _replace_span(m, "secret", "password", secret)


_AT = lazy("@")
_HOST = lazy(
    r"(?:(?:[A-Za-z0-9-]+\.)+[A-Za-z0-9-]+(?::\d{1,5})?|[A-Za-z0-9-]+:\d{1,5}|\[[0-9A-Fa-f:.]+\](?::\d{1,5})?)(?:[/?#]|$)"
)


def _url_password(m: re.Match[str]) -> str | None:
    """``scheme://user:`` then the rest of the URL. The password may hold ``@`` and
    ``/``: it runs to the first ``@`` followed by a host name with a dot, a port or an
    IP literal (``p@ss/w0rd@db.example.com``, ``pw@cdn.example.com/a@2x.png``), else to
    the last ``@`` before the query (``?``/``#``), else to the last ``@``. A port
    followed by a path (``host:8080/a?b=c@d``) is not a password."""
    rest = m.group("rest")
    ats = [found.start() for found in _AT.finditer(rest, 1, len(rest) - 1)]  # a host must follow
    if not ats:
        return None
    query = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    at = next(
        (i for i in ats if _HOST.match(rest, i + 1)),
        max((i for i in ats if i < query), default=ats[-1]),
    )
    secret = rest[:at]
    if re.match(r"\d{1,5}(?:[/?#]|$)", secret) or _placeholder(secret):
        return None
    return _replace_span(m, "rest", "url_password", secret)


_COMMAND_WINDOW = 300  # how far back from a flag its command is looked for


def _command_line(m: re.Match[str]) -> str:
    """The text before ``m`` on its command line: back to the last newline, pipe or
    command separator, at most :data:`_COMMAND_WINDOW` characters."""
    start = m.start()
    window = m.string[max(0, start - _COMMAND_WINDOW) : start]
    cut = max(window.rfind("\n"), window.rfind("|"), window.rfind(";"), window.rfind("&"))
    return window[cut + 1 :]


class _Command:
    """A command whose name is looked for before a flag (``names``: substrings of which
    one must occur before ``pattern`` is searched). Anchoring a rule on the flag and
    looking back keeps a long line linear; a rule anchored on the command would rescan
    the window after every occurrence of the command's name."""

    def __init__(self, pattern: str, names: tuple[str, ...]) -> None:
        self.pattern = lazy(pattern)
        self.names = names

    def on(self, line: str) -> bool:
        for name in self.names:
            if name in line:
                return self.pattern.search(line) is not None
        return False


def _flag_value(m: re.Match[str]) -> str | None:
    return None if _placeholder(m.group("secret")) else _replace_span(m, "secret", "password")


def _on_command(command: _Command) -> Callable[[re.Match[str]], str | None]:
    """A flag's value, when the flag belongs to ``command``."""
    return lambda m: _flag_value(m) if command.on(_command_line(m)) else None


_MYSQL = _Command(r"m(?<![\w-]m)(?:ysql[a-z]*|ariadb(?:-[a-z]+)?)\b", ("mysql", "mariadb"))
_SSHPASS_OR_LOGIN = _Command(
    r"s(?<![\w-]s)shpass\b"
    r"|login\b(?:(?<=docker login)|(?<=podman login)|(?<=buildah login)|(?<=skopeo login)|(?<=nerdctl login))",
    ("sshpass", "login"),
)


def _dash_p(m: re.Match[str]) -> str | None:
    """``-p``'s value: ``mysql ... -pX`` (mysql's ``-p X`` prompts, X is the database),
    ``sshpass -p X``, ``docker login ... -p X``."""
    line = _command_line(m)
    if _SSHPASS_OR_LOGIN.on(line) or (m.group("separated") is None and _MYSQL.on(line)):
        return _flag_value(m)
    return None


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def _card_number(text: str) -> bool:
    """13 to 19 digits with a card brand's prefix and length, passing the Luhn check."""
    d = re.sub(r"[ -]", "", text)
    n = len(d)
    if not 13 <= n <= 19 or not _luhn(d):
        return False
    two, three, four = int(d[:2]), int(d[:3]), int(d[:4])
    return (
        (d[0] == "4" and n in (13, 16, 19))  # Visa
        or (51 <= two <= 55 and n == 16)  # Mastercard
        or (2221 <= four <= 2720 and n == 16)  # Mastercard 2-series
        or (two in (34, 37) and n == 15)  # American Express
        or ((300 <= three <= 305 or two in (36, 38, 39)) and 14 <= n <= 19)  # Diners Club
        or (3528 <= four <= 3589 and 16 <= n <= 19)  # JCB
        or ((four == 6011 or 644 <= three <= 649 or two == 65) and 16 <= n <= 19)  # Discover
        or (two == 62 and 16 <= n <= 19)  # UnionPay
        or ((two == 50 or 56 <= two <= 69) and 13 <= n <= 19)  # Maestro
    )


# ISO 13616 (IBAN registry) country codes.
_IBAN_COUNTRIES = frozenset(
    "AD AE AL AT AZ BA BE BG BH BI BR BY CH CR CY CZ DE DJ DK DO EE EG ES FI FK FO FR GB GE GI GL GR GT HN HR "
    "HU IE IL IQ IS IT JO KW KZ LB LC LI LT LU LV LY MC MD ME MK MN MR MT MU NI NL NO OM PK PL PS PT QA RO RS "
    "RU SA SC SD SE SI SK SM SO ST SV TL TN TR UA VA VG XK YE".split()
)


def _ssn(text: str) -> bool:
    """AAA-GG-SSSS with an area the SSA issues (not 000, 666 or 900-999), a group other
    than 00 and a serial other than 0000."""
    area, group, serial = text.split("-")
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def _iban(text: str) -> bool:
    s = text.replace(" ", "")
    if s[:2] not in _IBAN_COUNTRIES or not 15 <= len(s) <= 34:
        return False
    rearranged = s[4:] + s[:4]
    return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


# A token pattern with a maximum length ends where the token's characters end, never
# in the middle of a run of them: the rest of the run would start a new part after the
# marker, look like a token to the next pass, and redaction would not be idempotent.
# Each pattern starts with a literal or a character class, and any lookbehind that
# bounds it on the left comes right after that first character ("A(?<![A-Z0-9]A)KIA"
# rather than "(?<![A-Z0-9])AKIA"): Python's re then skips ahead to the positions
# where that first character occurs instead of trying the pattern at every position.
_PREFIX_END = r"(?![A-Za-z0-9_-])"
_VALUE = r"(?P<quote>[\"'])?(?P<secret>(?(quote)[^\"'\n]+|[^\s\"']+))"
_KEY_WORD = r"(?:pass|pwd|secret|private|credential|token|key|auth|session|cookie)"
_RULES: list[_Rule] = [
    (
        "private_key",
        ("private key",),
        lazy(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----"
            r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----|.*\Z)",
            re.DOTALL,
        ),
        _whole("private_key"),
    ),
    (
        "aws_secret_key",
        ("secret",),
        lazy(
            r"(?i)aws_?secret(?:_?access)?_?key[\"']?\s*[:=]\s*[\"']?(?P<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        _group("aws_secret_key"),
    ),
    (
        "aws_access_key",
        ("akia", "asia"),
        lazy(r"A(?<![A-Z0-9]A)(?:KIA|SIA)[A-Z0-9]{16}(?![A-Z0-9])"),
        _whole("aws_access_key"),
    ),
    (
        "github_token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        lazy(r"g(?<![A-Za-z0-9_]g)(?:h[pousr]_[A-Za-z0-9]{36,255}|ithub_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_])"),
        _whole("github_token"),
    ),
    (
        "gitlab_token",
        ("gl", "gr1348941"),
        lazy(
            r"[gG](?<![A-Za-z0-9_-][gG])(?:"
            r"(?<=g)l(?:pat|oas|dt|rt|cbt|ptt|tt|ft|imt|agent|soat|ffct)-"
            r"[A-Za-z0-9_-]{20,300}(?:\.[A-Za-z0-9_-]{1,300}){0,3}"
            r"|(?<=G)R1348941[A-Za-z0-9_-]{20,300})" + _PREFIX_END
        ),
        _whole("gitlab_token"),
    ),
    (
        "slack_webhook",
        ("hooks.slack.com",),
        lazy(
            r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_+/-]{20,300})(?![A-Za-z0-9_+/-])"
        ),
        _group("slack_webhook"),
    ),
    (
        "slack_token",
        ("xox", "xapp-"),
        lazy(r"x(?<![A-Za-z0-9]x)(?:ox[abeoprs]-|app-)[A-Za-z0-9-]{10,250}(?![A-Za-z0-9-])"),
        _whole("slack_token"),
    ),
    (
        "stripe_key",
        ("_live_", "whsec_"),
        lazy(
            r"[srw](?<![A-Za-z0-9_][srw])"
            r"(?:(?<=[sr])k_live_[A-Za-z0-9]{16,247}|(?<=w)hsec_[A-Za-z0-9+/=]{24,247})(?![A-Za-z0-9+/=])"
        ),
        _whole("stripe_key"),
    ),
    (
        "google_api_key",
        ("aiza",),
        lazy(r"A(?<![A-Za-z0-9_-]A)Iza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
        _whole("google_api_key"),
    ),
    (
        "google_oauth_secret",
        ("gocspx-",),
        lazy(r"G(?<![A-Za-z0-9_-]G)OCSPX-[A-Za-z0-9_-]{24,64}" + _PREFIX_END),
        _whole("google_oauth_secret"),
    ),
    (
        "anthropic_key",
        ("sk-ant-",),
        lazy(r"s(?<![A-Za-z0-9_-]s)k-ant-[A-Za-z0-9_-]{20,250}" + _PREFIX_END),
        _whole("anthropic_key"),
    ),
    (
        "openai_key",
        ("sk-",),
        lazy(r"s(?<![A-Za-z0-9_-]s)k-(?:proj-)?[A-Za-z0-9_-]{20,250}" + _PREFIX_END),
        _whole("openai_key"),
    ),
    (
        "npm_token",
        ("npm_",),
        lazy(r"n(?<![A-Za-z0-9_]n)pm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])"),
        _whole("npm_token"),
    ),
    (
        "pypi_token",
        ("pypi-age",),
        lazy(r"p(?<![A-Za-z0-9_-]p)ypi-AgE[A-Za-z0-9_-]{50,2000}" + _PREFIX_END),
        _whole("pypi_token"),
    ),
    (
        "huggingface_token",
        ("hf_", "api_org_"),
        # 34 random letters: both cases occur (snake_case identifiers have one).
        lazy(
            r"[ha](?<![A-Za-z0-9_][ha])(?:(?<=h)f|(?<=a)pi_org)_"
            r"(?=[A-Za-z]{0,33}[A-Z])(?=[A-Za-z]{0,33}[a-z])[A-Za-z]{34}(?![A-Za-z0-9_])"
        ),
        _whole("huggingface_token"),
    ),
    (
        "sendgrid_key",
        ("sg.",),
        lazy(r"S(?<![A-Za-z0-9_.-]S)G\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _PREFIX_END),
        _whole("sendgrid_key"),
    ),
    (
        "twilio_key",
        ("sk",),
        lazy(r"S(?<![A-Za-z0-9_]S)K[0-9a-fA-F]{32}(?![A-Za-z0-9_])"),
        _whole("twilio_key"),
    ),
    (
        "discord_webhook",
        ("/webhooks/",),
        lazy(
            r"discord(?:app)?\.com/api/(?:v\d{1,2}/)?webhooks/\d{15,22}/(?P<secret>[A-Za-z0-9_-]{20,100})" + _PREFIX_END
        ),
        _group("discord_webhook"),
    ),
    (
        "discord_token",
        lazy(r"\.[\w-]{6}\."),
        lazy(r"[MNO](?<![A-Za-z0-9_.-][MNO])[A-Za-z0-9]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}" + _PREFIX_END),
        _whole("discord_token"),
    ),
    (
        "jwt",
        ("eyj",),
        lazy(r"e(?<![A-Za-z0-9_-]e)yJ[A-Za-z0-9_-]{7,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}(?![A-Za-z0-9_-])"),
        _whole("jwt"),
    ),
    (
        "azure_key",
        ("accountkey=", "sharedaccesskey="),
        lazy(
            r"key=(?:(?<=accountkey=)|(?<=sharedaccesskey=))(?P<secret>[A-Za-z0-9+/]{20,300}={0,2})(?![A-Za-z0-9+/=])",
            re.I,
        ),
        _group("azure_key"),
    ),
    (
        "url_signature",
        ("sig=", "signature="),
        lazy(
            r"[?&;](?:sig|x-amz-signature|x-goog-signature)=(?P<secret>[A-Za-z0-9%+/=_.-]{16,2048})(?![A-Za-z0-9%+/=_.-])",
            re.I,
        ),
        _group("url_signature"),
    ),
    (
        "bearer_token",
        ("bearer", "authorization"),
        lazy(
            r"[ab](?:(?<=[aA])uthorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest)\s+"
            r"|(?<=[bB])(?<![A-Za-z0-9_][bB])earer\s+)"
            r"(?P<secret>[A-Za-z0-9._~+/=-]{16,})",
            re.I,
        ),
        _group("bearer_token"),
    ),
    (
        "url_password",
        ("://",),
        lazy(r"://(?<=[A-Za-z0-9+.-]://)[^\s:/@\"'<>`]{0,256}:(?P<rest>[^\s\"'<>`]{1,2048})"),
        _url_password,
    ),
    (
        "card_number",
        # ASCII digits ([0-9], not \d, which is any Unicode digit and slower to scan)
        lazy(r"[0-9](?:[ -]?[0-9]){12}"),  # 13 digits or more, maybe grouped
        lazy(
            r"[0-9](?<![\w.+][0-9])(?<![0-9][ -][0-9])"
            r"(?:[0-9]{12,18}"
            r"|[0-9]{3}(?P<sep>[ -])[0-9]{4}(?P=sep)[0-9]{4}(?P=sep)[0-9]{1,4}(?:(?P=sep)[0-9]{1,3})?"
            r"|[0-9]{3}(?P<sep2>[ -])[0-9]{6}(?P=sep2)[0-9]{4,5})"
            r"(?![\w]|[ -][0-9]|[.,][0-9])"
        ),
        _whole("card_number", _card_number),
    ),
    (
        "iban",
        lazy(r"[A-Z][A-Z][0-9][0-9]"),
        lazy(r"[A-Z](?<![A-Za-z0-9][A-Z])[A-Z][0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?![A-Za-z0-9])"),
        _whole("iban", _iban),
    ),
    (
        "ssn",
        lazy(r"-[0-9][0-9]-[0-9]{4}"),  # starts with a literal: scans fast
        lazy(r"[0-9](?<![\w-][0-9])[0-9]{2}-[0-9]{2}-[0-9]{4}(?![\w-])"),
        _whole("ssn", _ssn),
    ),
    (
        "ssn",
        ("ssn", "social security"),
        lazy(
            r"s(?<![A-Za-z0-9_]s)(?:sn|ocial security (?:number|no\.?|#))\s*[:#=]?\s*(?P<secret>[0-9]{9})(?![0-9])",
            re.I,
        ),
        _group("ssn"),
    ),
    (
        "password",
        ("mysql", "mariadb", "sshpass", "login"),
        lazy(r"-(?<=\s-)p(?P<separated>\s+|=)?" + _VALUE),
        _dash_p,
    ),
    (
        "password",
        ("redis-cli",),
        lazy(r"-(?<=\s-)(?:a|-pass)(?:\s+|=)" + _VALUE),
        _on_command(_Command(r"r(?<![\w-]r)edis-cli\b", ("redis-cli",))),
    ),
    (
        "password",
        ("curl",),
        lazy(
            r"-(?<=\s-)(?:u|-user)(?:\s+|=)?(?P<quote>[\"'])?[^\s:\"']{1,256}:"
            r"(?P<secret>(?(quote)[^\"'\n]+|[^\s\"']+))"
        ),
        _on_command(_Command(r"c(?<![\w-]c)url\b", ("curl",))),
    ),
    (
        "password",
        ("pass", "pwd", "secret", "token", "key"),
        lazy(
            r"-(?<![A-Za-z0-9_.-]-)-?"
            r"(?P<key>(?:[a-z0-9]+-){0,3}(?:passw(?:or)?d|pass|pwd|passphrase|secret|token|api-?key))"
            r"(?:=|\s+)" + _VALUE + r"(?(quote)[\"'])",
            re.I,
        ),
        _flag_assignment,
    ),
    (
        "password",
        ("pass", "pwd", "secret", "private", "credential", "token", "key", "auth", "session", "cookie"),
        # Anchored on the key's credential word; the rest of the key name before it is
        # read backwards by _key_assignment.
        lazy(
            # (?=(?P<suffix>...))(?P=suffix): the suffix is taken whole, never backtracked
            # into (an atomic group that Python 3.10 lacks).
            _KEY_WORD + r"(?=(?P<suffix>[A-Za-z0-9_-]{0,20}))(?P=suffix)[\"']?\s*(?P<sep>==?|:=?)\s*"
            # an unquoted value never starts with "=": in "key==[REDACTED...]" the second
            # "=" belongs to the separator, whatever the pass
            r"(?P<quote>[\"'])?(?P<secret>(?(quote)[^\"'\n]+|(?!=)[^\s\"',;&)}\]]+))(?(quote)[\"'])",
            re.I,
        ),
        _key_assignment,
    ),
    (
        "password",
        ("pass", "pwd"),
        lazy(
            r"(?i:p(?<![\w$.-]p)(?:ass(?:word|wd|phrase)|wd)s?\b"
            r"(?:[ \t]+(?:for|of|on|at|to)[ \t]+(?:the[ \t]+|my[ \t]+|our[ \t]+)?[^\s:=]{1,64})?"
            r"(?:[ \t]+(?:(?:is|was|has[ \t]+been|got)[ \t]+)?(?:changed|set|reset|updated)[ \t]+to"
            r"|[ \t]+(?:is|was)(?:[ \t]+(?:now|still))?[ \t]*:?|[ \t]*:)?)"
            r"[ \t]+(?P<quote>[\"'`])?(?P<secret>(?(quote)[^\"'`\n]+|"
            # unquoted: a digit, a symbol or an inner capital within the word
            r"(?=[^\s\"'`]{0,255}?[0-9!#$%&*+=?@^|~]|[^\s\"'`]{1,255}?[A-Z])[^\s\"'`]+))(?(quote)[\"'`])"
        ),
        _prose_password,
    ),
]


_TRIGGERS = sorted({t for _, triggers, _, _ in _RULES if not isinstance(triggers, LazyPattern) for t in triggers})


def redact(text: str) -> str:
    """``text`` with every secret replaced by its marker (see the module docstring).

    The detectors run again on their own output until it no longer changes (at most
    :data:`_MAX_PASSES` times): replacing one secret can make its neighbour
    recognisable (in ``PASSWORD=4111 4111 1111 1111 1111`` the four groups left after
    the password are a card number), and redacting twice must change nothing."""
    if not isinstance(text, str):
        raise InvalidInputError(f"redact takes a str, got {type(text).__name__}")
    for _ in range(_MAX_PASSES):
        redacted = _redact_once(text)
        if redacted == text:
            break
        text = redacted
    return text


def _redact_once(text: str) -> str:
    lowered = text.lower()
    present = {t for t in _TRIGGERS if t in lowered}
    for _, triggers, pattern, replace in _RULES:
        if isinstance(triggers, LazyPattern):
            if triggers.search(text) is None:
                continue
        elif present.isdisjoint(triggers):
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
            if isinstance(item, str):
                new = redact(item)  # a detector names the kind best
                if new == item:
                    secret = _secret_under(key if isinstance(key, str) else None, item)
                    new = marker(secret, item) if secret else item
            else:
                new = _redact_value(item, _depth + 1)
            out[redact(key) if isinstance(key, str) else key] = new
        return out
    if isinstance(value, (list, tuple)):
        return [_redact_value(item, _depth + 1) for item in value]
    return value


_EMAIL = lazy(
    r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}\b(?!:)"
)
# 415-555-0132, 415.555.0132, (415) 555-0132, +1 415 555 0132, +44 20 7946 0958,
# +14155550132; not dates, versions, IP addresses or bare numbers.
_PHONE = lazy(
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
