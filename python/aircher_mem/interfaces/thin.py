"""The hooks' thin path: what a hook that is a server's client runs, on every prompt
(``UserPromptSubmit``) and every tool call (``PostToolUse``), importing only C
modules of the standard library (``_json``, ``_socket``, ``select``, the SHA-256
one) besides this module, :mod:`aircher_mem.brief` and the errors.

:func:`run` takes ``aircher-mem hook EVENT`` when a server runs for the project:
the limits from server.json's snapshot of config.toml (while config.toml has the
SHA-256 written there), the event's JSON read from stdin, the server proved to know
the token, and the event's handler run against it. Anything else (another event,
no server, a stale or unproven server.json, a payload that is not a JSON object,
an event for another project that has no server) goes to the full path
(:mod:`.hooks`) before anything is sent, with the payload already read, so output
and exit codes are those of :func:`hooks.run_hook`.

The pieces both paths share live here, once: the HTTP exchange and its answer, the
server's proof, the errors of the client, the reading of stdin, server.json, and
the ``UserPromptSubmit`` and ``PostToolUse`` handlers (:mod:`.hooks` and
:mod:`.client` import them).
"""

from __future__ import annotations

import os
import sys
import time

from ..brief import MARKER, one_line, prompt_brief
from ..digest import sha256, sha256_hex
from ..errors import AircherError, InvalidInputError, StoreError, StoreLockedError
from ..mentions import paths_in
from ..root import STORE_DIR, git_branch, root_folder

TYPE_CHECKING = False  # not typing's: importing typing is a cost here; checkers treat any TYPE_CHECKING as true
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import IO, Any, Protocol, TypeVar

    from ..config import HooksPolicy, Policy
    from ..memory import Memory

    R = TypeVar("R")

    class _Receiver(Protocol):
        """What :func:`read_answer` reads from: a socket's ``recv``."""

        def recv(self, size: int, /) -> bytes: ...


__all__ = [
    "run",
    "THIN_EVENTS",
    "Logger",
    "loads",
    "dumps",
    "proof",
    "proof_key",
    "presented",
    "opening_alone",
    "TOKEN_ENV",
    "user_of",
    "is_user_name",
    "USER_NAME_PATTERN",
    "query",
    "HTTPError",
    "ServerUnavailableError",
    "ServerGoneError",
    "ServerNotProvenError",
    "HookInputError",
    "Link",
    "read_answer",
    "read_payload",
    "server_data",
    "info_of",
    "snapshot_in",
    "config_digest",
    "alive",
    "Limits",
    "Verbs",
    "open_store",
    "site_packages",
    "Remote",
    "Call",
    "State",
    "prompt_hash",
    "user_prompt",
    "post_tool",
    "int_of",
    "write_private",
    "SERVER_FILE",
    "HOOKS_FILE",
    "DB_FILE",
    "Journaled",
    "NotJournaled",
    "LOOPBACK",
    "PENDING_PROMPTS",
    "STATE_FILE",
    "STATE_SESSIONS",
]

#: The events the thin path runs; the others always take the full path.
THIN_EVENTS = ("UserPromptSubmit", "PostToolUse")
MENTION_CHARS = 100_000  # of a tool's input, and as much of its response, read for the files they name
SERVER_FILE = "server.json"
#: The ``[hooks]`` and ``[server]`` sections the full path last loaded, with the
#: config's digest (server.json's ``policy``): a hook without a server reads them here.
HOOKS_FILE = "hooks.json"
#: The store file (``aircher_mem.memory.DB_FILE``; a test holds the two equal).
DB_FILE = "memory.duckdb"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: Bytes of server.json read at most.
_SERVER_FILE_MAX_BYTES = 65_536
#: Bytes of an answer's status line and headers read at most.
_HEAD_MAX_BYTES = 65_536
STATE_FILE = "hooks-state.json"
STATE_SESSIONS = 50  # sessions remembered in the state file
PENDING_PROMPTS = 20  # prompts stored by UserPromptSubmit that Stop has not met yet


class Logger:
    """The logger ``name``, imported on first use: a hook that logs nothing does
    not pay for importing :mod:`logging`."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, attribute: str) -> Any:
        import logging

        return getattr(logging.getLogger(self.name), attribute)


log = Logger("aircher_mem.hooks")

# -- JSON, hashing ------------------------------------------------------------------------
# The C halves of :mod:`json` (whose Python half imports :mod:`re`): the same text
# both ways, ``json.loads`` and ``json.dumps(..., separators=(",", ":"))``.


def _native(*names: str) -> Any:
    """The first of the C modules ``names`` this Python has; None when none."""
    for name in names:
        try:
            return __import__(name)
        except ImportError:
            continue
    return None


_c_json = _native("_json")


class _Scanning:
    """What ``_json.make_scanner`` reads from a ``json.JSONDecoder``: its defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


def _not_json(value: object) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_WHITESPACE = " \t\n\r"
if _c_json is not None:
    _scan = _c_json.make_scanner(_Scanning())
    _encode = _c_json.make_encoder(None, _not_json, _c_json.encode_basestring, None, ":", ",", False, False, False)
    _encode_ascii = _c_json.make_encoder(
        None, _not_json, _c_json.encode_basestring_ascii, None, ":", ",", False, False, False
    )


def loads(text: str) -> Any:
    """``json.loads(text)``: ValueError (``json.JSONDecodeError``) when ``text`` is not
    one JSON value. The C scanner reads it; what the scanner refuses, ``json.loads``
    reads again for its error (the scanner raises that error only once
    :mod:`json.decoder` is imported)."""
    start, size = 0, len(text)
    while start < size and text[start] in _WHITESPACE:
        start += 1
    if _c_json is not None:
        try:
            value, end = _scan(text, start)
        except Exception:  # its error, or a SystemError for want of json.decoder
            end = -1
        while 0 <= end < size and text[end] in _WHITESPACE:
            end += 1
        if end == size:
            return value
    import json

    return json.loads(text)


def dumps(value: Any, *, ensure_ascii: bool = False) -> str:
    """``json.dumps(value, allow_nan=False, ensure_ascii=ensure_ascii,
    separators=(",", ":"))``."""
    if _c_json is None:  # pragma: no cover - CPython has _json
        import json

        return json.dumps(value, allow_nan=False, ensure_ascii=ensure_ascii, separators=(",", ":"))
    return "".join((_encode_ascii if ensure_ascii else _encode)(value, 0))


_INNER = bytes(x ^ 0x36 for x in range(256))
_OUTER = bytes(x ^ 0x5C for x in range(256))


def proof(token: str, challenge: str, pid: int) -> str:
    """What a server holding ``token`` answers to ``challenge`` (hex HMAC-SHA256,
    RFC 2104: what :mod:`hmac` computes)."""
    key = token.encode("utf-8")
    if len(key) > 64:
        key = sha256(key).digest()
    key = key.ljust(64, b"\0")
    message = f"aircher-mem {pid} {challenge}".encode("ascii")
    inner = sha256(key.translate(_INNER) + message).digest()
    return sha256_hex(key.translate(_OUTER) + inner)


_URL_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_NAME_CHARS = _URL_SAFE | frozenset("@.")
#: The length of a user token's secret (32 bytes in URL-safe base64).
SECRET_LENGTH = 43
#: :func:`is_user_name` as a regular expression (the OpenAPI description's).
USER_NAME_PATTERN = r"^[A-Za-z0-9_@-][A-Za-z0-9_.@-]{0,63}$"


def is_user_name(name: str) -> bool:
    """Whether ``name`` is a user's name: 1 to 64 letters, digits and ``_ - @ .``
    (not a dot first): ``USER_NAME_PATTERN``, without importing :mod:`re`."""
    return 0 < len(name) <= 64 and name[0] != "." and set(name) <= _NAME_CHARS


def user_of(token: str) -> str | None:
    """The user a per-user token names (``<user>.<secret>``,
    :mod:`.accounts`); None for any other token (server.json's)."""
    user, dot, secret = token.rpartition(".")
    if dot and is_user_name(user) and len(secret) == SECRET_LENGTH and set(secret) <= _URL_SAFE:
        return user
    return None


#: The environment variable holding a user's token (``aircher-mem users add``): a
#: client of the project's server presents it instead of server.json's token, and
#: acts for that user.
TOKEN_ENV = "AIRCHER_MEM_TOKEN"


def presented(token: str) -> str:
    """The token a client sends: ``AIRCHER_MEM_TOKEN`` when set, else server.json's."""
    return os.environ.get(TOKEN_ENV) or token


def opening_alone() -> None:
    """Called before a client opens the store itself because no server answers:
    :class:`ServerUnavailableError` when ``AIRCHER_MEM_TOKEN`` holds a user's token,
    whose holder acts through the server only (opening the store would act as this
    login instead)."""
    user = user_of(os.environ.get(TOKEN_ENV) or "")
    if user is not None:
        raise ServerUnavailableError(
            f"{TOKEN_ENV} holds the token of {user}, a user of the project's server, and no server answers: "
            f"start it (aircher-mem serve), or unset {TOKEN_ENV} to act as yourself"
        )


def proof_key(token: str) -> str:
    """What a user's token is kept as, and the key of the server's proof to its
    holder: the token's SHA-256 in hex (server.json's token is its own key)."""
    return token if user_of(token) is None else sha256_hex(token.encode("utf-8"))


def _same(a: bytes, b: bytes) -> bool:
    """``hmac.compare_digest``: equal, in constant time."""
    from _operator import _compare_digest

    return _compare_digest(a, b)


_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")


def _quote(text: str) -> str:
    return "".join(chr(b) if b in _SAFE else "+" if b == 32 else f"%{b:02X}" for b in text.encode("utf-8"))


def query(pairs: list[tuple[str, str]]) -> str:
    """``urllib.parse.urlencode(pairs)``."""
    return "&".join(f"{_quote(k)}={_quote(v)}" for k, v in pairs)


# -- errors -----------------------------------------------------------------------------


class HTTPError(AircherError):
    """The server refused a request for a reason of HTTP itself (no token, a bad
    Host, a body too large, no such route) or failed (``internal``): ``status`` is
    the HTTP status, ``code`` the error body's code."""

    code = "http"

    def __init__(self, message: str, *, status: int = 500, code: str = "http") -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class ServerUnavailableError(StoreError):
    """No answer from the server named in server.json (not listening, timed out)."""

    code = "server_unavailable"


class ServerGoneError(ServerUnavailableError):
    """Nothing listens where server.json said: the connection was refused, so the
    request was not sent (safe to make elsewhere)."""

    code = "server_gone"


class ServerNotProvenError(ServerGoneError):
    """What listens where server.json said did not prove it knows the file's token
    (a stale file: its pid and port now belong to other programs); neither the
    token nor the request was sent to it."""

    code = "server_not_proven"


class HookInputError(InvalidInputError):
    """The hook's stdin was not closed within ``[hooks] stdin_seconds``, or held more
    than ``[hooks] payload_max_bytes``: the hook does nothing and ``aircher-mem hook``
    exits 1 (a non-blocking error for Claude Code)."""

    code = "hook_input"


def _subclasses(cls: type[AircherError]) -> list[type[AircherError]]:
    found = [cls]
    for sub in cls.__subclasses__():
        found += _subclasses(sub)
    return found


def _error_of(status: int, body: Any) -> AircherError:
    """The error an answer with ``status`` >= 400 and JSON ``body`` stands for: the
    AircherError subclass (loaded here) of its code, else :class:`HTTPError`."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return HTTPError(f"HTTP {status}: {str(body)[:200]}", status=status)
    code, message = str(error.get("code", "http")), str(error.get("message", ""))
    classes: dict[str, type[AircherError]] = {}
    for found in _subclasses(AircherError):
        classes.setdefault(found.code, found)
    cls = classes.get(code)
    if cls is None or cls is HTTPError or cls is AircherError:
        return HTTPError(message, status=status, code=code)
    try:
        return cls(message)
    except TypeError:  # pragma: no cover - a class that needs more arguments
        return HTTPError(message, status=status, code=code)


# -- HTTP -------------------------------------------------------------------------------


class _BadAnswer(OSError):
    """What came back is not an HTTP answer (cut short, or malformed)."""


def read_answer(sock: _Receiver, limit: int | None) -> tuple[int, bytes]:
    """Reads an HTTP/1.1 answer from ``sock``: its status and body (a
    Content-Length, chunked, or up to the end of the connection), at most ``limit``
    bytes of the body when given."""
    buffer = b""
    while b"\r\n\r\n" not in buffer:
        if len(buffer) > _HEAD_MAX_BYTES:
            raise _BadAnswer(f"an answer head over {_HEAD_MAX_BYTES:,} bytes")
        chunk = sock.recv(65_536)
        if not chunk:
            raise _BadAnswer("the connection closed before an answer" if not buffer else "an answer cut short")
        buffer += chunk
    head, _, rest = buffer.partition(b"\r\n\r\n")
    status_line, *fields = head.decode("latin-1").split("\r\n")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise _BadAnswer(f"not an HTTP answer: {status_line[:80]!r}")
    status = int(parts[1])
    found: dict[str, str] = {}
    for field in fields:
        name, _, value = field.partition(":")
        found[name.strip().lower()] = value.strip()
    cap = limit

    def more() -> bytes:
        chunk = sock.recv(65_536)
        if not chunk:
            raise _BadAnswer("an answer cut short")
        return chunk

    if "chunked" in found.get("transfer-encoding", "").lower():
        body = b""
        while True:
            while b"\r\n" not in rest:
                rest += more()
            size_line, _, rest = rest.partition(b"\r\n")
            try:
                size = int(size_line.split(b";")[0].strip(), 16)
            except ValueError:
                raise _BadAnswer(f"a bad chunk size {size_line[:20]!r}") from None
            if size == 0 or (cap is not None and len(body) >= cap):
                break
            while len(rest) < size + 2:
                rest += more()
            body += rest[:size]
            rest = rest[size + 2 :]
        return status, body if cap is None else body[:cap]
    length = found.get("content-length")
    if length is not None:
        if not length.isdigit():
            raise _BadAnswer(f"a bad Content-Length {length[:20]!r}")
        want = int(length) if cap is None else min(int(length), cap)
        while len(rest) < want:
            rest += more()
        return status, rest[:want]
    while cap is None or len(rest) < cap:  # the body runs to the end of the connection
        chunk = sock.recv(65_536)
        if not chunk:
            break
        rest += chunk
    return status, rest if cap is None else rest[:cap]


class Link:
    """A client of a running server: ``request(method, path, json=, params=)``
    returns the result's JSON or raises the :class:`AircherError` subclass named by
    the error's code (:class:`HTTPError` for HTTP's own,
    :class:`ServerUnavailableError` when nothing answers within ``timeout``
    seconds). Before its first request (and after a request the server did not
    answer) the server proves it knows the token (:meth:`prove`). One connection
    a request, over ``_socket`` (``socket`` imports :mod:`enum`, ``http.client``
    the email package)."""

    def __init__(
        self, host: str, port: int, token: str, *, timeout: float, pid: int | None, proof_timeout: float
    ) -> None:
        self.host, self.port, self.token, self.timeout = host, port, token, timeout
        #: The pid the server must report (server.json's); None: any.
        self.pid = pid
        self.proof_timeout = proof_timeout
        self.proven = False

    def prove(self) -> None:
        """Sends ``GET /health?challenge=<random hex>`` (no token, nothing else) and
        checks, in constant time, that the answer is the token's HMAC of the
        challenge and the pid (server.json's, when given); raises
        :class:`ServerNotProvenError` (or :class:`ServerGoneError`: nothing
        listens) when it is not. With a user's token (``user=`` sent along) the key
        is the token's SHA-256 (:func:`proof_key`), and the server with
        server.json's pid not proving it is :class:`HTTPError` 401: the token was
        removed. Proven once, a client does not ask again until a
        request goes unanswered."""
        challenge = os.urandom(16).hex()  # secrets.token_hex(16), without importing random
        user = user_of(self.token)
        try:
            status, data = self._exchange(
                "GET",
                f"/health?challenge={challenge}" + ("" if user is None else f"&user={_quote(user)}"),
                None,
                {"Accept": "application/json"},
                min(self.timeout, self.proof_timeout),
                limit=65_536,
            )
        except ServerGoneError:
            raise
        except ServerUnavailableError as exc:
            raise ServerNotProvenError(
                f"{self.host}:{self.port} gave no proof that it knows the token ({exc}); nothing was sent to it"
            ) from None
        try:
            answer = loads(data.decode("utf-8"))
        except ValueError:
            answer = None
        pid = answer.get("pid") if isinstance(answer, dict) else None
        given = answer.get("proof") if isinstance(answer, dict) else None
        if (
            status != 200
            or not isinstance(pid, int)
            or isinstance(pid, bool)
            or not isinstance(given, str)
            or (self.pid is not None and pid != self.pid)
            or not _same(given.encode("utf-8"), proof(proof_key(self.token), challenge, pid).encode("ascii"))
        ):
            if user is not None and status == 200 and self.pid in (None, pid):  # the token is refused
                raise HTTPError(
                    f"the server at {self.host}:{self.port} does not know the token of {user} ({TOKEN_ENV}): "
                    "it was removed, or another server made it; nothing was sent to it",
                    status=401,
                    code="unauthorized",
                )
            raise ServerNotProvenError(
                f"what answers at {self.host}:{self.port} does not prove it knows the token "
                f"(HTTP {status}); nothing was sent to it"
            )
        self.proven = True

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, object] | None = None,
        timeout: float | None = None,
    ) -> Any:
        """Sends one request (``path`` already %-quoted; ``params`` None values are
        left out, booleans sent as true/false) and returns the decoded JSON body,
        waiting ``timeout`` seconds for it (default: the client's)."""
        if not self.proven:
            self.prove()
        if params:
            pairs = [
                (k, ("true" if x else "false") if isinstance(x, bool) else str(x))
                for k, v in params.items()
                if v is not None
                for x in (v if isinstance(v, list) else [v])
            ]
            if pairs:
                path = f"{path}?{query(pairs)}"
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        body: bytes | None = None
        if json is not None:
            body = _body(json)
            headers["Content-Type"] = "application/json"
        try:
            status, data = self._exchange(method, path, body, headers, self.timeout if timeout is None else timeout)
        except ServerUnavailableError:
            self.proven = False  # whatever listens there next proves itself first
            raise
        try:
            decoded = loads(data.decode("utf-8"))
        except ValueError:
            raise HTTPError(f"HTTP {status}: not JSON: {data[:200]!r}", status=status, code="http") from None
        if status < 400:
            return decoded
        raise _error_of(status, decoded)

    def _exchange(
        self,
        method: str,
        path: str,
        body: bytes | None,
        headers: dict[str, str],
        timeout: float,
        *,
        limit: int | None = None,
    ) -> tuple[int, bytes]:
        """One HTTP/1.1 request on a fresh connection (closed after the answer): the
        status and (up to ``limit`` bytes of) the body."""
        import _socket

        address = "127.0.0.1" if self.host == "localhost" else self.host
        try:
            sock = _socket.socket(_socket.AF_INET6 if ":" in address else _socket.AF_INET, _socket.SOCK_STREAM)
        except OSError as exc:
            raise self._unanswered(exc) from None
        try:
            sock.settimeout(timeout)
            try:
                sock.connect((address, self.port))
            except ConnectionRefusedError:
                raise ServerGoneError(
                    f"no aircher-mem server listens at {self.host}:{self.port} any more (the request was not sent)"
                ) from None
            netloc = f"[{address}]:{self.port}" if ":" in address else f"{address}:{self.port}"
            lines = [f"{method} {path} HTTP/1.1", f"Host: {netloc}", "Accept-Encoding: identity", "Connection: close"]
            lines += [f"{key}: {value}" for key, value in headers.items()]
            if body is not None or method == "POST":
                lines.append(f"Content-Length: {len(body or b'')}")
            sock.sendall("\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + (body or b""))
            return read_answer(sock, limit)
        except OSError as exc:
            raise self._unanswered(exc) from None
        finally:
            sock.close()

    def _unanswered(self, exc: OSError) -> ServerUnavailableError:
        return ServerUnavailableError(
            f"the aircher-mem server at {self.host}:{self.port} did not answer: {exc or type(exc).__name__}"
        )


def _body(value: Any) -> bytes:
    try:
        return dumps(value).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"the request is not JSON: {exc}") from None
    except UnicodeEncodeError:
        return dumps(value, ensure_ascii=True).encode("ascii")


# -- server.json ------------------------------------------------------------------------


def server_data(path: str | os.PathLike[str]) -> Any:
    """The JSON of server.json at ``path``; None when it cannot be read or is not JSON."""
    try:
        with open(path, "rb") as f:
            return loads(f.read(_SERVER_FILE_MAX_BYTES).decode("utf-8"))
    except (OSError, ValueError):
        return None


def info_of(data: Any) -> tuple[str, int, int, str] | None:
    """(host, port, pid, token) of what serve writes to server.json; None for
    anything else."""
    try:
        host, port, pid, token = data["host"], data["port"], data["pid"], data["token"]
    except (KeyError, TypeError):
        return None
    if (
        host not in LOOPBACK
        or not isinstance(port, int)
        or isinstance(port, bool)
        or not 1 <= port <= 65535
        or not isinstance(pid, int)
        or isinstance(pid, bool)
        or pid <= 0
        or not isinstance(token, str)
        or not token
    ):
        return None
    return host, port, pid, token


def config_digest(root: str | os.PathLike[str]) -> str | None:
    """The SHA-256 of the project's ``.aircher/config.toml`` (hex), None without one
    (OSError when it cannot be read)."""
    try:
        with open(os.path.join(root, STORE_DIR, "config.toml"), "rb") as f:
            return sha256_hex(f.read())
    except FileNotFoundError:
        return None


def snapshot_in(data: Any, root: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The policy snapshot server.json's ``data`` holds (``client.policy_snapshot``)
    when it still describes the project's config.toml (the same SHA-256); None
    otherwise."""
    snapshot = data.get("policy") if isinstance(data, dict) else None
    if (
        not isinstance(snapshot, dict)
        or not isinstance(snapshot.get("hooks"), dict)
        or not isinstance(snapshot.get("server"), dict)
    ):
        return None
    try:
        current = config_digest(root)
    except OSError:  # loading the Policy reports it
        return None
    return snapshot if snapshot.get("config") == current else None


def alive(pid: int) -> bool:
    """Whether the process ``pid`` lives (this one does)."""
    if pid == os.getpid():
        return True
    if os.name == "nt":  # pragma: no cover - os.kill(pid, 0) would signal it
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    except OSError:
        return False
    return True


# -- reading the event ---------------------------------------------------------------------


def read_payload(stream: IO[Any], *, seconds: float, max_bytes: int) -> str:
    """The event's JSON from ``stream`` (the hook's stdin) as text, read until it is
    closed: :class:`HookInputError` when that takes more than ``seconds`` or the
    text is over ``max_bytes`` bytes (nothing past the limit is read). A stream on
    a descriptor is waited for with ``select`` (on POSIX); any other is read in a
    daemon thread. Either way a stream held open is left behind, never waited for."""
    chunks: list[bytes] = []
    size = 0
    try:
        fd: int | None = stream.fileno()
    except (AttributeError, OSError, ValueError):  # an in-memory stream
        fd = None
    late = HookInputError(f"stdin was not closed within {seconds:g} s ([hooks] stdin_seconds); nothing done")
    if fd is not None and os.name != "nt":
        import select

        end = time.monotonic() + seconds
        while size <= max_bytes:
            left = end - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise late
            chunk = os.read(fd, 65_536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    else:
        size = _read_in_thread(stream, fd, seconds, max_bytes, chunks, late)
    if size > max_bytes:
        raise HookInputError(
            f"the payload on stdin is over {max_bytes:,} bytes ([hooks] payload_max_bytes); nothing done"
        )
    return b"".join(chunks).decode("utf-8", "replace")


_READER = "aircher-mem-hook-stdin"


def _read_in_thread(
    stream: IO[Any], fd: int | None, seconds: float, max_bytes: int, chunks: list[bytes], late: HookInputError
) -> int:
    import threading

    size = 0
    failed: list[OSError] = []
    done = threading.Event()

    def pump() -> None:
        nonlocal size
        try:
            while size <= max_bytes:
                chunk = os.read(fd, 65_536) if fd is not None else stream.read(65_536)
                if not chunk:
                    break
                data = chunk.encode("utf-8", "surrogateescape") if isinstance(chunk, str) else chunk
                chunks.append(data)
                size += len(data)
        except OSError as exc:
            failed.append(exc)
        finally:
            done.set()

    threading.Thread(target=pump, name=_READER, daemon=True).start()
    if not done.wait(seconds):
        raise late
    if failed:
        raise failed[0]
    return size


# -- where the hooks read and write ------------------------------------------------------


class Verbs:
    """The verbs the hooks use, on a :class:`Memory` or on the project's server (a
    :class:`Remote`: the same verbs, their results' JSON), answering with
    :mod:`.wire` JSON; a store another process holds is retried until the deadline."""

    def __init__(self, memory: Any, deadline: float) -> None:
        self.memory = memory
        self.deadline = deadline
        #: The results' JSON: the server's answer as it is, a Memory's result through wire.
        self.json: Callable[[Any], Any] = _as_is
        if not isinstance(memory, Remote):
            from .wire import to_json

            self.json = to_json

    @property
    def served(self) -> bool:
        """Whether a server answers (else this process opened the store)."""
        return isinstance(self.memory, Remote)

    def _retry(self, call: Callable[[], R]) -> R:
        pause = 0.02
        while True:
            tried = time.monotonic()
            try:
                return call()
            except StoreLockedError:
                # No attempt that would end past the deadline (one takes about what
                # the last took): the store's being held is then what is reported,
                # not the deadline.
                now = time.monotonic()
                if now + pause + (now - tried) > self.deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.2)

    def tasks(self) -> Any:
        return self.json(self._retry(lambda: self.memory.tasks(limit=10)))

    def assemble(self, budget: int, query: str | None, branch: str | None) -> Any:
        return self.json(self._retry(lambda: self.memory.assemble(budget=budget, query=query, branch=branch)))

    def add_turn(self, session_id: str, role: str, text: str, at: float | None, metadata: dict[str, Any]) -> None:
        self._retry(lambda: self.memory.add_turn(session_id, role, text, at=at, metadata=metadata))

    def record_tool_call(
        self,
        tool: str,
        parameters: dict[str, Any],
        success: bool,
        error: str | None,
        path: str | None,
        mentions: list[str],
    ) -> None:
        self._retry(
            lambda: self.memory.record_tool_call(
                tool, parameters, success=success, error_message=error, file_path=path, mentions=mentions
            )
        )

    def record_file(self, path: str, operation: str, lines: tuple[int, int] | None, summary: str | None) -> None:
        self._retry(
            lambda: self.memory.record_file_interaction(path, operation, line_range=lines, changes_summary=summary)
        )

    def snapshot(self, snapshot: dict[str, Any]) -> None:
        self._retry(lambda: self.memory.record_snapshot(snapshot))

    @property
    def journaling(self) -> bool:
        """Whether the calls go to the journal (no server, the store not opened)."""
        return isinstance(self.memory, Journaled)

    def extract_facts(self, source: str = "working", path: str | None = None, before: str | None = None) -> Any:
        return self.json(self._retry(lambda: self.memory.extract_facts(source, path=path, before=before)))


def _as_is(answer: Any) -> Any:
    return answer


def site_packages() -> None:
    """Adds site-packages (and its ``.pth`` files) to the path when Python started
    without them (``-S``: the command :mod:`aircher_mem.hook` is run with), before
    the full path imports what lives there (numpy, DuckDB, ...)."""
    if sys.flags.no_site and "site" not in sys.modules:
        import site

        site.main()


def open_store(root: str | os.PathLike[str], policy: Policy | None) -> Memory:
    """The store, opened here (``policy`` None: the project's), its DuckDB on
    ``[hooks] store_threads`` threads. A hook never asks the project's server to
    give the store up: it is that server's client."""
    site_packages()
    from pathlib import Path

    from ..config import Policy
    from ..memory import Memory
    from ..store import set_threads

    if policy is None:
        policy = Policy.load(Path(root))
    set_threads(policy.hooks.store_threads)
    memory = Memory.open(root, create=False, policy=policy)
    memory.take_offered_store = False
    return memory


class Remote:
    """The verbs the hooks use, sent to the project's server as
    ``client.RemoteMemory`` sends them (the same routes and bodies; a test holds
    the two equal), answered with the server's JSON as it is: no verb registry, no
    result classes to import. When the server went away (the connection refused:
    nothing was sent) the store is opened here for this call and the next ones."""

    def __init__(self, client: Link, root: str | os.PathLike[str], policy: Policy | None) -> None:
        self.client = client
        self.root = root
        self.policy = policy
        self.local: Memory | None = None

    def close(self) -> None:
        if self.local is not None:
            self.local.close()

    def _send(self, method: str, route: str, arguments: dict[str, Any], verb: str, *args: Any, **kwargs: Any) -> Any:
        if self.local is None:
            try:
                if method == "GET":
                    return self.client.request(method, route, params=arguments)
                return self.client.request(method, route, json=arguments)
            except ServerGoneError:
                opening_alone()
                log.warning("no aircher-mem server answers for %s; opening the store here", self.root)
                self.local = open_store(self.root, self.policy)
        from .wire import to_json

        return to_json(getattr(self.local, verb)(*args, **kwargs))

    def tasks(self, *, limit: int) -> Any:
        return self._send("GET", "/tasks", {"limit": limit}, "tasks", limit=limit)

    def assemble(self, *, budget: int, query: str | None, branch: str | None) -> Any:
        body = {"budget": budget, "query": query, "branch": branch}
        return self._send("POST", "/assemble", body, "assemble", budget=budget, query=query, branch=branch)

    def add_turn(self, session_id: str, role: str, text: str, *, at: float | None, metadata: dict[str, Any]) -> Any:
        body = {"session_id": session_id, "role": role, "text": text, "at": at, "metadata": metadata}
        return self._send("POST", "/add-turn", body, "add_turn", session_id, role, text, at=at, metadata=metadata)

    def record_tool_call(
        self,
        tool_name: str,
        parameters: dict[str, Any],
        *,
        success: bool,
        error_message: str | None,
        file_path: str | None,
        mentions: list[str] | None = None,
    ) -> Any:
        body = {
            "tool_name": tool_name,
            "parameters": parameters,
            "success": success,
            "error_message": error_message,
            "file_path": file_path,
        }
        if mentions is not None:
            body["mentions"] = mentions
        return self._send(
            "POST",
            "/record-tool-call",
            body,
            "record_tool_call",
            tool_name,
            parameters,
            success=success,
            error_message=error_message,
            file_path=file_path,
            mentions=mentions,
        )

    def record_file_interaction(
        self, path: str, operation: str, *, line_range: tuple[int, int] | None, changes_summary: str | None
    ) -> Any:
        body = {
            "path": path,
            "operation": operation,
            "line_range": None if line_range is None else list(line_range),
            "changes_summary": changes_summary,
        }
        return self._send(
            "POST",
            "/record-file-interaction",
            body,
            "record_file_interaction",
            path,
            operation,
            line_range=line_range,
            changes_summary=changes_summary,
        )

    def record_snapshot(self, snapshot: dict[str, Any]) -> Any:
        return self._send("POST", "/record-snapshot", {"snapshot": snapshot}, "record_snapshot", snapshot)

    def extract_facts(self, source: str, *, path: str | None = None, before: str | None = None) -> Any:
        body: dict[str, Any] = {"source": source}
        if path is not None:
            body.update(path=path, before=before)
        return self._send("POST", "/extract-facts", body, "extract_facts", source, path=path, before=before)


class NotJournaled(Exception):
    """A record the journal does not take (the hook opens the store instead)."""


class Journaled(Remote):
    """The write verbs ``PostToolUse`` uses, kept as journal lines
    (:mod:`aircher_mem.journal`) instead of sent: the arguments a server would get
    (the bodies :class:`Remote` makes), with the time of the call and their secrets
    redacted; :meth:`write` appends them. Another verb, or a path that redaction
    would change, is :class:`NotJournaled`."""

    _TEXTS = ("error_message", "changes_summary")  # redacted as the store redacts them
    _PATHS = ("file_path", "path")  # stored as given: journaled only when redaction leaves them

    def __init__(self, root: str, limits: Limits) -> None:
        from ..redact import redact, redact_value

        # no server: Remote's link is never used (_send is this class's)
        self.root, self.policy, self.local = root, None, None
        self.limits = limits
        self.lines: list[str] = []
        self._redact = redact
        self._redact_value = redact_value

    def _send(self, method: str, route: str, arguments: dict[str, Any], verb: str, *args: Any, **kwargs: Any) -> Any:
        from .. import journal

        if verb not in journal.VERBS:
            raise NotJournaled(f"{verb} is not journaled")
        kept: dict[str, Any] = {}
        for key, value in arguments.items():
            if key in self._PATHS and value is not None and self._redact(value) != value:
                raise NotJournaled("a path that redaction would change")
            if key == "parameters":
                value = self._redact_value(value)
            elif key == "mentions":  # a path holding a secret is left out, not stored redacted
                value = [p for p in value if self._redact(p) == p]
            elif key in self._TEXTS and value is not None:
                value = self._redact(value)
            kept[key] = value
        kept["at"] = time.time()
        self.lines.append(dumps({"verb": verb, "arguments": kept}, ensure_ascii=True))
        return None

    def write(self) -> bool:
        """Appends the lines kept (none: True); False when the journal does not take
        them (the store is held, the journal is full)."""
        from .. import journal

        if not self.lines:
            return True
        header = dumps({"journal": os.urandom(16).hex(), "version": journal.VERSION})
        folder = os.path.join(self.root, STORE_DIR)
        return journal.append(folder, DB_FILE, self.lines, header, max_bytes=_journal_bytes(self.limits))


class Limits:
    """The ``[hooks]`` limits as server.json's snapshot holds them (every field of
    ``HooksPolicy.to_dict()``); KeyError when one the thin path reads is missing."""

    deadline_seconds: float
    context_chars: int
    context_tokens: int
    recall_min_score: float
    predict_min_confidence: float
    line_chars: int
    query_chars: int
    parameter_chars: int
    turn_chars: int
    transcript_max_bytes: int
    stdin_seconds: float
    payload_max_bytes: int
    facts_at_stop: bool
    facts_on_edit: bool

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.__dict__.update(values)
        for name in Limits.__annotations__:
            if name not in values:
                raise KeyError(name)


class Call:
    """One hook run: where to read and write, the event's fields, the deadline."""

    def __init__(
        self,
        backend: Verbs,
        data: dict[str, Any],
        root: str | os.PathLike[str],
        deadline: float,
        policy: HooksPolicy | Limits,
    ) -> None:
        self.backend = backend
        self.data = data
        self.root = root
        self.deadline = deadline
        self.policy = policy

    @property
    def late(self) -> bool:
        return time.monotonic() > self.deadline

    def text(self, field: str, max_chars: int | None = None) -> str | None:
        """The payload's ``field`` if it is text, cut to ``max_chars`` (by default
        ``[hooks] turn_chars``); None when absent or blank."""
        value = self.data.get(field)
        if not isinstance(value, str) or not value.strip():
            return None
        return value[: self.policy.turn_chars if max_chars is None else max_chars]

    @property
    def session(self) -> str | None:
        return self.text("session_id", 1000)


def listed(answer: Any, key: str) -> list[dict[str, Any]]:
    found = answer.get(key) if isinstance(answer, dict) else None
    return [x for x in found if isinstance(x, dict)] if isinstance(found, list) else []


# -- UserPromptSubmit and PostToolUse ----------------------------------------------------


def prompt_hash(text: str) -> str:
    return sha256_hex(" ".join(text.split()).encode("utf-8", "surrogatepass"))[:32]


def user_prompt(call: Call) -> str:
    prompt = call.text("prompt")
    if prompt is None:
        return ""
    branch = git_branch(call.root)
    assembled = call.backend.assemble(call.policy.context_tokens, prompt[: call.policy.query_chars], branch)
    text = prompt_brief(
        assembled if isinstance(assembled, dict) else None,
        budget=call.policy.context_chars,
        min_score=call.policy.recall_min_score,
        line_chars=call.policy.line_chars,
        min_confidence=call.policy.predict_min_confidence,
    )
    session = call.session
    if session is None or call.late or MARKER in prompt:
        return text
    try:  # what was recalled is printed even when the prompt cannot be stored
        call.backend.add_turn(session, "user", prompt, None, {"source": "claude-code", "hook": "UserPromptSubmit"})
    except Exception as exc:  # Stop stores it from the transcript later
        log.warning("aircher-mem hook UserPromptSubmit: the prompt was not stored: %s: %s", type(exc).__name__, exc)
        return text
    with State(call.root) as state:
        entry = state.session(session)
        entry["prompts"] = [*entry.get("prompts", []), prompt_hash(prompt)][-PENDING_PROMPTS:]
    return text


def _pure(path: str) -> str:
    """``str(pathlib.PurePosixPath(path))``: empty and ``.`` parts dropped, two
    leading slashes kept (POSIX leaves them to the system), three or more made one."""
    root = ""
    if path.startswith("/"):
        root = "//" if path.startswith("//") and not path.startswith("///") else "/"
    parts = [p for p in path.split("/") if p and p != "."]
    return root + "/".join(parts) if root or parts else "."


def _resolved(path: str) -> str:
    """``str(pathlib.Path(path).resolve())``, a symlink loop its RuntimeError."""
    real = os.path.realpath(path)
    try:
        os.stat(real)
    except OSError as exc:
        import errno

        if exc.errno == errno.ELOOP:
            raise RuntimeError(f"Symlink loop from {exc.filename!r}") from None
    return real


def _inside(call: Call, value: object) -> str | None:
    """``value`` as an absolute path (normalized as :mod:`pathlib` does) when it
    names something inside the project."""
    if not isinstance(value, str) or not value or "\0" in value:
        return None
    if os.name == "nt":  # pragma: no cover - pathlib's Windows rules
        from pathlib import Path

        path = Path(value)
        if not path.is_absolute():
            cwd = call.data.get("cwd")
            path = Path(cwd if isinstance(cwd, str) else call.root) / path
        try:
            path.resolve().relative_to(call.root)
        except (ValueError, OSError):
            return None
        return str(path)
    text = _pure(value)
    if not text.startswith("/"):
        cwd = call.data.get("cwd")
        text = _pure(os.path.join(cwd if isinstance(cwd, str) else os.fspath(call.root), text))
    root = _pure(os.fspath(call.root))
    try:
        real = _pure(_resolved(text))
    except OSError:
        return None
    if real != root and not real.startswith(root.rstrip("/") + "/"):
        return None
    return text


def _parameters(tool_input: Mapping[str, Any], drop: str | None, max_chars: int) -> dict[str, Any]:
    """The tool's input, short: strings longer than ``max_chars`` clipped, nested
    values as JSON clipped to ``max_chars``."""
    out: dict[str, Any] = {}
    for key, value in list(tool_input.items())[:50]:
        if key == drop:
            continue
        if value is None or isinstance(value, (bool, int, float)):
            out[str(key)] = value
        elif isinstance(value, str):
            out[str(key)] = value if len(value) <= max_chars else value[:max_chars] + "..."
        else:
            try:
                out[str(key)] = one_line(_spaced(value), max_chars)
            except (TypeError, ValueError):
                continue
    return out


def _spaced(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``: the default separators."""
    if _c_json is None:  # pragma: no cover - CPython has _json
        import json

        return json.dumps(value, ensure_ascii=False)
    encoder = _c_json.make_encoder({}, _not_json, _c_json.encode_basestring, None, ": ", ", ", False, False, True)
    return "".join(encoder(value, 0))


def int_of(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _patch_lines(response: object) -> tuple[tuple[int, int] | None, int, int]:
    """The new-file lines an Edit/Write's structuredPatch changed (first, last), and
    the lines added and removed."""
    hunks = response.get("structuredPatch") if isinstance(response, dict) else None
    changed: list[int] = []
    added = removed = 0
    for hunk in hunks if isinstance(hunks, list) else []:
        if not isinstance(hunk, dict):
            continue
        start, count = int_of(hunk.get("newStart")), int_of(hunk.get("newLines"))
        if start is None:
            continue
        lines = hunk.get("lines")
        if not isinstance(lines, list):
            changed += [max(start, 1), max(start + (count or 1) - 1, 1)]
            continue
        line = start
        for text in lines:
            if not isinstance(text, str) or text.startswith("\\"):
                continue
            if text.startswith("+"):
                changed.append(line)
                added += 1
                line += 1
            elif text.startswith("-"):
                changed.append(line)
                removed += 1
            else:
                line += 1
    span = (max(min(changed), 1), max(max(changed), 1)) if changed else None
    return span, added, removed


def _read_lines(tool_input: Mapping[str, Any], response: object) -> tuple[int, int] | None:
    file = response.get("file") if isinstance(response, dict) else None
    if isinstance(file, dict):
        start, count = int_of(file.get("startLine")), int_of(file.get("numLines"))
        if start and count:
            return start, start + count - 1
    offset, limit = int_of(tool_input.get("offset")), int_of(tool_input.get("limit"))
    if limit:
        first = offset or 1
        return first, first + limit - 1
    return None


def _strings(value: object, out: list[str], budget: int, depth: int = 0) -> int:
    """Appends the strings inside ``value`` (a tool's input or response) to ``out``,
    ``budget`` characters at most in all, nesting bounded; returns what is left."""
    if budget <= 0 or depth > 8:
        return budget
    if isinstance(value, str):
        out.append(value[:budget])
        return budget - min(len(value), budget)
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for item in items:
        budget = _strings(item, out, budget, depth + 1)
        if budget <= 0:
            break
    return budget


def _mentions(call: Call, tool_input: Mapping[str, Any], response: object) -> list[str]:
    """The files a tool's input and response name (``grep`` matches, a traceback),
    absolute (relative ones taken from the session's ``cwd``); the service keeps
    those inside the project."""
    texts: list[str] = []
    _strings(response, texts, _strings(tool_input, texts, MENTION_CHARS) + MENTION_CHARS)
    cwd = call.data.get("cwd")
    base = cwd if isinstance(cwd, str) and cwd.startswith("/") else os.fspath(call.root)
    return [p if p.startswith("/") else _pure(os.path.join(base, p)) for p in paths_in("\n".join(texts))]


def post_tool(call: Call) -> str:
    tool = call.text("tool_name", 200)
    if tool is None:
        return ""
    tool_input = call.data.get("tool_input")
    tool_input = tool_input if isinstance(tool_input, dict) else {}
    response = call.data.get("tool_response")
    path_key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    path = _inside(call, tool_input.get(path_key))
    failed = isinstance(response, dict) and (
        response.get("success") is False or response.get("is_error") is True or response.get("interrupted") is True
    )
    error = response.get("error") if isinstance(response, dict) else None
    call.backend.record_tool_call(
        tool,
        _parameters(tool_input, path_key if path is not None else None, call.policy.parameter_chars),
        not failed,
        one_line(error, 2000) if failed and isinstance(error, str) else None,
        path,
        _mentions(call, tool_input, response),
    )
    if path is None or failed or call.late:
        return ""
    if tool == "Read":
        call.backend.record_file(path, "read", _read_lines(tool_input, response), None)
    elif tool in ("Edit", "MultiEdit", "NotebookEdit"):
        span, added, removed = _patch_lines(response)
        call.backend.record_file(path, "edit", span, f"{tool}: +{added} -{removed} lines" if span else None)
    elif tool == "Write":
        span, added, removed = _patch_lines(response)
        content = tool_input.get("content")
        if span is None and isinstance(content, str) and content:
            added = content.count("\n") + (0 if content.endswith("\n") else 1)
            span = (1, added)
        call.backend.record_file(path, "write", span, f"Write: +{added} -{removed} lines" if span else None)
    if tool in ("Edit", "MultiEdit", "Write") and call.policy.facts_on_edit and not call.backend.journaling:
        _facts_of_edit(call, tool, path, response)
    return ""


def _facts_of_edit(call: Call, tool: str, path: str, response: object) -> None:
    """The facts of one file save (``extract_facts`` with source ``edit``): Claude
    Code's response holds the file's text before (``originalFile``), or says a
    ``Write`` created it. Without either, or past the deadline, nothing."""
    before = response.get("originalFile") if isinstance(response, dict) else None
    if not isinstance(before, str):
        if not (tool == "Write" and isinstance(response, dict) and response.get("type") == "create"):
            return
        before = None
    if call.late:
        return
    try:
        call.backend.extract_facts("edit", path, before)
    except AircherError as exc:  # the tool call is recorded all the same
        log.warning("aircher-mem hook PostToolUse: no facts from the edit of %s: %s", path, exc)


# -- the state file -----------------------------------------------------------------------


class State:
    """``.aircher/hooks-state.json`` (0600): per session, the transcript offset read
    and the prompts stored by UserPromptSubmit; saved when the block ends."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.path = os.path.join(root, STORE_DIR, STATE_FILE)
        self.data: dict[str, Any] = {}

    def __enter__(self) -> State:
        try:
            with open(self.path, encoding="utf-8") as handle:
                loaded = loads(handle.read())
        except (OSError, ValueError):
            loaded = {}
        sessions = loaded.get("sessions") if isinstance(loaded, dict) else None
        self.data = (
            {"sessions": {k: v for k, v in sessions.items() if isinstance(v, dict)}}
            if isinstance(sessions, dict)
            else {"sessions": {}}
        )
        return self

    def session(self, session_id: str) -> dict[str, Any]:
        entry: dict[str, Any] = self.data["sessions"].setdefault(session_id, {})
        entry["updated"] = time.time()
        return entry

    def __exit__(self, *exc: object) -> None:
        sessions = self.data["sessions"]
        newest = sorted(sessions, key=lambda s: -float(sessions[s].get("updated") or 0))[:STATE_SESSIONS]
        self.data["sessions"] = {s: sessions[s] for s in newest}
        try:
            write_private(self.path, _spaced(self.data))
        except (OSError, ValueError) as exc:
            log.warning("aircher-mem hook: cannot write %s: %s", self.path, exc)


def write_private(path: str, text: str) -> None:
    """Writes ``text`` to a temporary file beside ``path`` (private to the user:
    0600) and renames it over: a reader sees the old file or the new one."""
    from _thread import get_ident

    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.{get_ident()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# -- the thin path --------------------------------------------------------------------------


_THIN_HANDLERS: dict[str, Callable[[Call], str]] = {"UserPromptSubmit": user_prompt, "PostToolUse": post_tool}


class _Served:
    """A project whose server.json names a live server and describes its config.toml."""

    def __init__(self, root: str, info: tuple[str, int, int, str], limits: Limits, proof_timeout: float) -> None:
        self.root = root
        self.info = info
        self.limits = limits
        self.proof_timeout = proof_timeout


def _served(start: str | os.PathLike[str]) -> _Served | None:
    """The project found from ``start`` upward when a live server's server.json
    describes its current config.toml; None otherwise (the full path decides)."""
    try:
        root = root_folder(start)
    except (AircherError, OSError):
        return None
    data = server_data(os.path.join(root, STORE_DIR, SERVER_FILE))
    info = info_of(data)
    snapshot = snapshot_in(data, root)
    if info is None or snapshot is None or not alive(info[2]):
        return None
    try:
        return _Served(root, info, Limits(snapshot["hooks"]), float(snapshot["server"]["proof_timeout_seconds"]))
    except (KeyError, TypeError, ValueError):
        return None


def _journal_bytes(limits: Limits) -> int:
    """``[hooks] journal_max_bytes`` (0, journaling off, in a snapshot older than it)."""
    return int_of(getattr(limits, "journal_max_bytes", None)) or 0


class _Alone:
    """A project no live server serves, whose store exists and whose hooks.json
    describes its current config.toml with journaling on: ``PostToolUse`` journals."""

    def __init__(self, root: str, limits: Limits) -> None:
        self.root = root
        self.limits = limits


def _alone(start: str | os.PathLike[str]) -> _Alone | None:
    try:
        root = root_folder(start)
    except (AircherError, OSError):
        return None
    folder = os.path.join(root, STORE_DIR)
    info = info_of(server_data(os.path.join(folder, SERVER_FILE)))
    if info is not None and alive(info[2]):
        return None  # a server: its clients' path, or the full one
    if not os.path.isfile(os.path.join(folder, DB_FILE)):
        return None  # making the store is the full path's
    snapshot = snapshot_in(server_data(os.path.join(folder, HOOKS_FILE)), root)
    try:
        limits = Limits(snapshot["hooks"]) if snapshot is not None else None
    except (KeyError, TypeError, ValueError):
        return None
    return _Alone(root, limits) if limits is not None and _journal_bytes(limits) else None


def _journal(project: _Alone, data: dict[str, Any], started: float, payload: str, full: Callable[[str], int]) -> int:
    """``PostToolUse`` without a server: its records appended to the journal, or,
    when the journal does not take them, the full path on the payload."""
    from .hook_command import EXIT_OK

    limits = project.limits
    deadline = started + limits.deadline_seconds
    journaled = Journaled(project.root, limits)
    try:
        post_tool(Call(Verbs(journaled, deadline), data, project.root, deadline, limits))
        if journaled.write():
            return EXIT_OK
    except NotJournaled:
        pass
    except OSError as exc:
        log.warning("aircher-mem hook PostToolUse: cannot write the journal of %s: %s", project.root, exc)
    except Exception as exc:  # nothing was written: the full path reports it, as it would have
        log.debug("aircher-mem hook PostToolUse: not journaled: %s: %s", type(exc).__name__, exc)
    return full(payload)


def run(event: str, root: str | None, out: IO[str], full: Callable[[str], int]) -> int | None:
    """``aircher-mem hook EVENT [--root root]`` on the thin path; None (stdin not
    read) when it is not for it. ``full(payload)`` runs the full path on a payload
    already read, for an event the thin path hands over after reading it."""
    if event not in _THIN_HANDLERS or os.name == "nt":
        return None
    try:
        here: _Served | _Alone | None = _served(root if root is not None else os.getcwd())
        if here is None and event == "PostToolUse":
            here = _alone(root if root is not None else os.getcwd())
    except OSError:
        return None
    if here is None or sys.stdin is None:
        return None
    from .hook_command import EXIT_ERROR, EXIT_OK, say

    try:
        payload = read_payload(sys.stdin, seconds=here.limits.stdin_seconds, max_bytes=here.limits.payload_max_bytes)
    except HookInputError as exc:
        say(f"aircher-mem hook {event}: {type(exc).__name__}: {exc}")
        return EXIT_ERROR  # non-blocking: Claude Code shows it and goes on
    except OSError as exc:
        say(f"aircher-mem hook {event}: {exc}")
        return EXIT_OK
    started = time.monotonic()
    try:
        data = loads(payload.lstrip("\ufeff"))
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict) or data.get("hook_event_name") not in (None, event):
        return full(payload)  # it says what is wrong
    start = root if root is not None else data.get("cwd")
    if not isinstance(start, str) or not start:
        return full(payload)
    project = _served(start)
    if project is None:
        alone = _alone(start) if event == "PostToolUse" else None
        return full(payload) if alone is None else _journal(alone, data, started, payload, full)
    limits = project.limits
    deadline = started + limits.deadline_seconds
    host, port, pid, token = project.info
    token = presented(token)
    left = max(0.05, deadline - time.monotonic())
    link = Link(host, port, token, timeout=left, pid=pid, proof_timeout=min(left, project.proof_timeout))
    try:
        link.prove()
    except ServerUnavailableError:
        return full(payload)  # nothing was sent: the full path finds the store
    link.timeout = max(0.05, deadline - time.monotonic())
    remote = Remote(link, project.root, None)
    text = ""
    try:
        text = _THIN_HANDLERS[event](Call(Verbs(remote, deadline), data, project.root, deadline, limits))
    except Exception as exc:  # a hook never fails the agent's action
        log.warning("aircher-mem hook %.40s: %s: %s", event, type(exc).__name__, exc)
    finally:
        remote.close()
    if time.monotonic() > deadline:
        log.warning(
            "aircher-mem hook %s: no answer within %g s ([hooks] deadline_seconds); printed nothing",
            event,
            limits.deadline_seconds,
        )
        text = ""
    if text:
        out.write(text)
    out.flush()
    return EXIT_OK
