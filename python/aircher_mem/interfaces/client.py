"""The client of a project's HTTP server, stdlib only: what the CLI, the MCP server
and the hooks use to reach the store's one writer.

``discover(root)`` reads ``<root>/.aircher/server.json`` (None when it is missing,
unreadable or its pid is dead) and :class:`Client` talks to the server once the
server has proved it knows the file's token (``GET /health?challenge=``: the token
and the requests never go to a stranger that took over a stale file's pid and port).
:class:`RemoteMemory` is the :class:`aircher_mem.Memory` verbs over that client (each
verb's route from the verb registry, the answer decoded back into the verb's result
dataclass), and :func:`connect` gives it when a server runs for the project and
``Memory.open(root)`` otherwise, so with a server no other process opens the store
it holds, and every caller prints the same either way.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import socket
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlencode

from ..errors import AircherError, InvalidInputError, StoreError
from ..root import STORE_DIR, find_root

# The client is what a hook or a command imports to reach a server, so it imports
# nothing heavy at module level: the service, the verb registry, the Policy and the
# results load inside the functions that need them. (Not typing.TYPE_CHECKING: type
# checkers treat any name TYPE_CHECKING as true.)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .. import verbs
    from ..config import Policy
    from ..memory import Memory
    from ..results import Check

__all__ = [
    "Client",
    "RemoteMemory",
    "connect",
    "discover",
    "server_file",
    "server_check",
    "proof",
    "ServerInfo",
    "HTTPError",
    "ServerUnavailableError",
    "ServerGoneError",
    "ServerNotProvenError",
    "SERVER_FILE",
    "STORE_DIR",
    "LOOPBACK",
    "find_root",
    "config_digest",
    "policy_snapshot",
    "snapshot_of",
    "Logger",
]


class Logger:
    """The logger ``name``, imported on first use: a hook that logs nothing does
    not pay for importing :mod:`logging`."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, attribute: str) -> Any:
        import logging

        return getattr(logging.getLogger(self.name), attribute)


log = Logger("aircher_mem.http")

SERVER_FILE = "server.json"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
#: Bytes of an answer's status line and headers read at most.
_HEAD_MAX_BYTES = 65_536

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


def _subclasses(cls: type[AircherError]) -> Iterator[type[AircherError]]:
    yield cls
    for sub in cls.__subclasses__():
        yield from _subclasses(sub)


def _error_classes() -> dict[str, type[AircherError]]:
    """Every AircherError subclass by its stable code (errors.py and this module)."""
    found: dict[str, type[AircherError]] = {}
    for cls in _subclasses(AircherError):
        found.setdefault(cls.code, cls)
    return found


def proof(token: str, challenge: str, pid: int) -> str:
    """What a server holding ``token`` answers to ``challenge`` (hex HMAC-SHA256)."""
    message = f"aircher-mem {pid} {challenge}".encode("ascii")
    return hmac.new(token.encode("utf-8"), message, hashlib.sha256).hexdigest()


# -- server.json ------------------------------------------------------------------------


class ServerInfo(NamedTuple):
    """What server.json says: where the server listens, its pid and token."""

    host: str
    port: int
    pid: int
    token: str


def server_file(root: str | os.PathLike[str]) -> Path:
    return Path(root) / STORE_DIR / SERVER_FILE


def config_digest(root: str | os.PathLike[str]) -> str | None:
    """The SHA-256 of the project's ``.aircher/config.toml`` (hex), None without one
    (OSError when it cannot be read)."""
    try:
        with open(Path(root) / STORE_DIR / "config.toml", "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except FileNotFoundError:
        return None


def policy_snapshot(root: str | os.PathLike[str]) -> dict[str, Any] | None:
    """What the project's config.toml sets for the clients of its server: the
    ``[hooks]`` and ``[server]`` sections of ``Policy.load(root)`` with the
    config's :func:`config_digest`. ``serve`` writes it into server.json, so a hook
    whose config.toml still has that digest takes its limits from there instead of
    importing the Policy. None when the config does not load or changed meanwhile."""
    from ..config import Policy

    try:
        before = config_digest(root)
        policy = Policy.load(Path(root))
        if config_digest(root) != before:
            return None
    except (AircherError, OSError):
        return None
    return {"config": before, "hooks": policy.hooks.to_dict(), "server": policy.server.to_dict()}


def snapshot_of(root: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The :func:`policy_snapshot` that server.json holds when it still describes
    the project's config.toml (the same digest); None otherwise."""
    try:
        with open(server_file(root), "rb") as f:
            data = json.loads(f.read(65_536).decode("utf-8"))
    except (OSError, ValueError):
        return None
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


def _alive(pid: int) -> bool:
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


def _read_info(path: Path) -> ServerInfo | None:
    """server.json's content, or None when it is missing or not what serve writes."""
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read(65_536).decode("utf-8"))
        host, port, pid, token = data["host"], data["port"], data["pid"], data["token"]
    except (OSError, ValueError, KeyError, TypeError):
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
    return ServerInfo(host, port, pid, token)


def discover(root: str | os.PathLike[str]) -> ServerInfo | None:
    """What the project's server.json says, when its pid lives; None when there is
    no file, it is unreadable or its pid is dead. It does not connect: a pid can
    live on in another program, so :meth:`Client.discover` (and :func:`connect`)
    also ask the server to prove it knows the token before trusting the file."""
    info = _read_info(server_file(root))
    if info is None or not _alive(info.pid):
        return None
    return info


def _live(info: ServerInfo, timeout: float) -> bool:
    """Whether the server ``info`` names runs: its pid lives and what listens on its
    port proves it knows the token."""
    if not _alive(info.pid):
        return False
    try:
        Client(info.host, info.port, info.token, pid=info.pid, timeout=timeout, proof_timeout=timeout).prove()
    except ServerUnavailableError:
        return False
    return True


def _stale(path: Path, info: ServerInfo) -> str:
    return f"{path.name} names pid {info.pid} at {info.host}:{info.port} but nothing there proves the token: stale"


def server_check(root: str | os.PathLike[str], *, timeout: float | None = None) -> Check:
    """``doctor``'s look at the project's server.json: ok when there is none or its
    server proves it knows the token (within ``timeout`` seconds, default the
    project's ``[server] proof_timeout_seconds``), a warning when the file is stale."""
    from ..config import Policy, ServerPolicy
    from ..results import Check

    path = server_file(root)
    if not path.exists():
        return Check("server", "ok", f"no {SERVER_FILE}: no server runs for this project")
    info = _read_info(path)
    if info is None:
        return Check("server", "warn", f"{SERVER_FILE} is not what serve writes: stale")
    if not _alive(info.pid):
        return Check("server", "warn", f"{SERVER_FILE} names pid {info.pid}, which is not running: stale")
    if timeout is None:
        try:
            timeout = Policy.load(Path(root)).server.proof_timeout_seconds
        except AircherError:  # a bad config.toml: doctor reports it in its own check
            timeout = ServerPolicy().proof_timeout_seconds
    if not _live(info, timeout):
        return Check("server", "warn", _stale(path, info))
    return Check("server", "ok", f"pid {info.pid} serves this project at http://{info.host}:{info.port}")


# -- the client -------------------------------------------------------------------------


class Client:
    """A client of a running server, stdlib only: ``Client.discover(root)`` (None
    when no server runs), then ``request(method, path, json=, params=)`` returns the
    result's JSON or raises the :class:`AircherError` subclass named by the error's
    code (:class:`HTTPError` for HTTP's own, :class:`ServerUnavailableError` when
    nothing answers within ``timeout`` seconds).

    Before its first request (and after a request the server did not answer) the
    client has the server prove it knows the token (:meth:`prove`): what listens at
    ``host:port`` gets the token and a request only once it has."""

    def __init__(
        self,
        host: str,
        port: int,
        token: str,
        *,
        timeout: float = 10.0,
        pid: int | None = None,
        proof_timeout: float | None = None,
    ) -> None:
        self.host, self.port, self.token, self.timeout = host, port, token, timeout
        #: The pid the server must report (server.json's); None: any.
        self.pid = pid
        if proof_timeout is None:
            from ..config import ServerPolicy

            proof_timeout = ServerPolicy().proof_timeout_seconds
        self.proof_timeout = proof_timeout
        self.proven = False

    @classmethod
    def discover(
        cls, root: str | os.PathLike[str], *, timeout: float = 10.0, proof_timeout: float | None = None
    ) -> Client | None:
        """A proven client of the server named in the project's server.json; None
        when there is no file, its pid is dead, or nothing at its port proves it
        knows the token (a stale file: logged as a warning and ignored)."""
        info = discover(root)
        if info is None:
            return None
        client = cls(info.host, info.port, info.token, timeout=timeout, pid=info.pid, proof_timeout=proof_timeout)
        try:
            client.prove()
        except ServerUnavailableError as exc:
            log.warning("%s; ignored (%s)", _stale(server_file(root), info), exc)
            return None
        return client

    def __repr__(self) -> str:
        return f"Client(http://{self.host}:{self.port})"

    def prove(self) -> None:
        """Sends ``GET /health?challenge=<random hex>`` (no token, nothing else) and
        checks, in constant time, that the answer is the token's HMAC of the
        challenge and the pid (server.json's, when given); raises
        :class:`ServerNotProvenError` (or :class:`ServerGoneError`: nothing
        listens) when it is not. Proven once, a client does not ask again until a
        request goes unanswered."""
        challenge = os.urandom(16).hex()  # secrets.token_hex(16), without importing random
        try:
            status, data = self._exchange(
                "GET",
                f"/health?challenge={challenge}",
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
            answer = _loads(data)
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
            or not hmac.compare_digest(given.encode("utf-8"), proof(self.token, challenge, pid).encode("ascii"))
        ):
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
            query = [
                (k, ("true" if x else "false") if isinstance(x, bool) else str(x))
                for k, v in params.items()
                if v is not None
                for x in (v if isinstance(v, list) else [v])
            ]
            if query:
                path = f"{path}?{urlencode(query)}"
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        body: bytes | None = None
        if json is not None:
            body = _dumps(json)
            headers["Content-Type"] = "application/json"
        try:
            status, data = self._exchange(method, path, body, headers, self.timeout if timeout is None else timeout)
        except ServerUnavailableError:
            self.proven = False  # whatever listens there next proves itself first
            raise
        try:
            decoded = _loads(data)
        except ValueError:
            raise HTTPError(f"HTTP {status}: not JSON: {data[:200]!r}", status=status, code="http") from None
        if status < 400:
            return decoded
        raise _client_error(status, decoded)

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
        status and (up to ``limit`` bytes of) the body. Plain sockets rather than
        http.client, whose import (the email package, ssl) costs a hook more than
        its request does."""
        address = "127.0.0.1" if self.host == "localhost" else self.host
        try:
            sock = socket.create_connection((address, self.port), timeout=timeout)
        except ConnectionRefusedError:
            raise ServerGoneError(
                f"no aircher-mem server listens at {self.host}:{self.port} any more (the request was not sent)"
            ) from None
        except OSError as exc:
            raise self._unanswered(exc) from None
        try:
            netloc = f"[{address}]:{self.port}" if ":" in address else f"{address}:{self.port}"
            lines = [f"{method} {path} HTTP/1.1", f"Host: {netloc}", "Accept-Encoding: identity", "Connection: close"]
            lines += [f"{key}: {value}" for key, value in headers.items()]
            if body is not None or method == "POST":
                lines.append(f"Content-Length: {len(body or b'')}")
            sock.sendall("\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + (body or b""))
            return _answer(sock, limit)
        except OSError as exc:
            raise self._unanswered(exc) from None
        finally:
            sock.close()

    def _unanswered(self, exc: OSError) -> ServerUnavailableError:
        return ServerUnavailableError(
            f"the aircher-mem server at {self.host}:{self.port} did not answer: {exc or type(exc).__name__}"
        )


class _BadAnswer(OSError):
    """What came back is not an HTTP answer (cut short, or malformed)."""


def _answer(sock: socket.socket, limit: int | None) -> tuple[int, bytes]:
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


# -- Memory over HTTP -------------------------------------------------------------------


def _remote(name: str) -> verbs.Verb | None:
    """The verb ``name`` when the server offers it."""
    from .. import memory, verbs  # noqa: F401 - the service declares the verbs

    try:
        v = verbs.get(name)
    except InvalidInputError:
        return None
    return v if "http" in v.surfaces and v.name == name else None


def _encode(value: Any) -> Any:
    """An argument as JSON: datetimes as ISO-8601, paths as text, tuples as lists."""
    import datetime as dt

    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return {str(k): _encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    return value


class RemoteMemory:
    """The verbs of :class:`Memory` answered by the project's server: ``remote.recall(
    "tabs?")`` sends ``POST /recall`` and returns the :class:`results.Recall` the
    server's Memory returned (the body decoded by :func:`wire.from_json`, so its
    ``wire.to_json`` is the body itself). Arguments are bound to the verb's own
    signature (a wrong call is the same TypeError); an argument no route field
    takes (``index``'s ``progress``) is an :class:`InvalidInputError` unless it is
    None. Errors are the server's, as :class:`Client` raises them. The answer to
    ``index`` is awaited ``index_timeout`` seconds (``[server]
    index_timeout_seconds`` from :func:`connect`), the others the client's timeout."""

    def __init__(
        self,
        client: Client,
        root: str | os.PathLike[str],
        *,
        fallback: Callable[[], Memory] | None = None,
        index_timeout: float | None = None,
    ) -> None:
        self.client = client
        self.root = Path(root)
        self.fallback = fallback
        self.local: Memory | None = None
        self.index_timeout = index_timeout  # for the answer to ``index`` (None: the client's timeout)

    def __repr__(self) -> str:
        return f"RemoteMemory({self.root}, http://{self.client.host}:{self.client.port})"

    def __enter__(self) -> RemoteMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the store opened by the fallback, if it was (requests hold nothing)."""
        if self.local is not None:
            self.local.close()

    def __getattr__(self, verb: str) -> Callable[..., Any]:
        if verb.startswith("_") or _remote(verb) is None:
            raise AttributeError(f"{type(self).__name__} has no verb {verb!r}")

        def call(*args: Any, **kwargs: Any) -> Any:
            return self.call(verb, *args, **kwargs)

        call.__name__ = verb
        return call

    def call(self, verb: str, /, *args: Any, **kwargs: Any) -> Any:
        """``Memory.<verb>(*args, **kwargs)`` on the server. With a ``fallback``, a
        server that went away (the connection refused: it stopped, or server.json
        names a pid that lives on in another process) hands over to ``fallback()``,
        a Memory on the store, for this call and the next ones."""
        if self.local is not None:
            return getattr(self.local, verb)(*args, **kwargs)
        try:
            return self._call(verb, *args, **kwargs)
        except ServerGoneError:
            if self.fallback is None:
                raise
            # Nothing was sent. If a server still held the store after all, DuckDB's
            # lock would refuse this process (StoreLockedError): never two writers.
            log.warning("no aircher-mem server answers for %s; opening the store here", self.root)
            self.local = self.fallback()
            return getattr(self.local, verb)(*args, **kwargs)

    def _call(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        v = _remote(name)
        if v is None:
            raise InvalidInputError(f"the server has no verb {name!r}")
        import inspect

        from . import wire

        bound = inspect.signature(v.function).bind(self, *args, **kwargs)
        values = dict(bound.arguments)
        del values[next(iter(values))]  # self
        declared = {p.name: p for p in v.params}
        sent: dict[str, Any] = {}
        for key, value in values.items():
            param = declared.get(key)
            if value is None and (param is None or param.default is not None):
                continue  # the verb's default, on the server too
            if param is None:
                raise InvalidInputError(f"{name}: {key} cannot be sent to the server")
            sent[key] = _encode(value)
        if v.http_method == "POST":
            timeout = self.index_timeout if name == "index" else None
            answer = self.client.request("POST", v.http_path, json=sent, timeout=timeout)
        else:
            answer = self.client.request("GET", v.http_path, params=sent)
        try:
            return wire.from_json(v.result, answer)
        except TypeError as exc:
            raise HTTPError(
                f"the server's answer to {name} does not fit: {exc}", status=502, code="bad_response"
            ) from None


def connect(
    root: str | os.PathLike[str] | None = None, *, create: bool = False, policy: Policy | None = None
) -> Memory | RemoteMemory:
    """The project's memory: a :class:`RemoteMemory` when a server runs for it
    (:meth:`Client.discover`: it proved it knows server.json's token), else
    ``Memory.open(root, create=create)`` (a stale server.json is ignored). ``root``
    defaults to the nearest folder with a store from here upward. The remote one
    falls back to the store itself when nothing listens where server.json says."""
    from ..config import Policy
    from ..memory import Memory

    if root is None:
        root = find_root()
    server = (policy or Policy.load(Path(root))).server
    client = Client.discover(root, timeout=server.client_timeout_seconds, proof_timeout=server.proof_timeout_seconds)
    if client is None:
        return Memory.open(root, create=create, policy=policy)
    where = Path(root)
    return RemoteMemory(
        client,
        where.resolve(),
        fallback=lambda: Memory.open(where, create=create, policy=policy),
        index_timeout=server.index_timeout_seconds,
    )


def _dumps(value: Any) -> bytes:
    try:
        return json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"the request is not JSON: {exc}") from None
    except UnicodeEncodeError:
        return json.dumps(value, allow_nan=False, separators=(",", ":")).encode("ascii")


def _loads(data: bytes) -> Any:
    return json.loads(data.decode("utf-8"))


def _client_error(status: int, body: Any) -> AircherError:
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return HTTPError(f"HTTP {status}: {str(body)[:200]}", status=status)
    code, message = str(error.get("code", "http")), str(error.get("message", ""))
    cls = _error_classes().get(code)
    if cls is None or cls is HTTPError or cls is AircherError:
        return HTTPError(message, status=status, code=code)
    try:
        return cls(message)
    except TypeError:  # pragma: no cover - a class that needs more arguments
        return HTTPError(message, status=status, code=code)
