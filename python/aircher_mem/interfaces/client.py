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

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

from ..errors import AircherError, InvalidInputError
from ..root import STORE_DIR, find_root
from .thin import (
    LOOPBACK,
    SERVER_FILE,
    HTTPError,
    Link,
    Logger,
    ServerGoneError,
    ServerNotProvenError,
    ServerUnavailableError,
    alive,
    config_digest,
    info_of,
    opening_alone,
    presented,
    proof,
    server_data,
    snapshot_in,
)

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
    "decode_answer",
    "encode_argument",
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


log = Logger("aircher_mem.http")


# The errors, the exchange and the proof are the thin path's (:mod:`.thin`), which a
# hook runs without importing this module.

# -- server.json ------------------------------------------------------------------------


class ServerInfo(NamedTuple):
    """What server.json says: where the server listens, its pid and token."""

    host: str
    port: int
    pid: int
    token: str


def server_file(root: str | os.PathLike[str]) -> Path:
    return Path(root) / STORE_DIR / SERVER_FILE


def policy_snapshot(
    root: str | os.PathLike[str], *, loaded: tuple[str | None, Policy] | None = None
) -> dict[str, Any] | None:
    """What the project's config.toml sets for the clients of its server: the
    ``[hooks]`` and ``[server]`` sections of ``Policy.load(root)`` with the
    config's :func:`config_digest`. ``serve`` writes it into server.json, and a hook
    into hooks.json, so a hook whose config.toml still has that digest takes its
    limits from there instead of importing the Policy. ``loaded``: the digest read
    before a ``Policy.load(root)`` already made, and that Policy. None when the
    config does not load or changed meanwhile."""
    try:
        if loaded is None:
            from ..config import Policy

            before = config_digest(root)
            policy = Policy.load(Path(root))
        else:
            before, policy = loaded
        if config_digest(root) != before:
            return None
    except (AircherError, OSError):
        return None
    return {"config": before, "hooks": policy.hooks.to_dict(), "server": policy.server.to_dict()}


def snapshot_of(root: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The :func:`policy_snapshot` that server.json holds when it still describes
    the project's config.toml (the same digest); None otherwise."""
    return snapshot_in(server_data(server_file(root)), root)


_alive = alive


def _read_info(path: Path) -> ServerInfo | None:
    """server.json's content, or None when it is missing or not what serve writes."""
    info = info_of(server_data(path))
    return None if info is None else ServerInfo(*info)


def discover(root: str | os.PathLike[str]) -> ServerInfo | None:
    """What the project's server.json says, when its pid lives, with the token to
    present (``AIRCHER_MEM_TOKEN``, a user's, when set); None when there is no
    file, it is unreadable or its pid is dead. It does not connect: a pid can
    live on in another program, so :meth:`Client.discover` (and :func:`connect`)
    also ask the server to prove it knows the token before trusting the file."""
    info = _read_info(server_file(root))
    if info is None or not _alive(info.pid):
        return None
    return info._replace(token=presented(info.token))


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


class Client(Link):
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
        if proof_timeout is None:
            from ..config import ServerPolicy

            proof_timeout = ServerPolicy().proof_timeout_seconds
        super().__init__(host, port, token, timeout=timeout, pid=pid, proof_timeout=proof_timeout)

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


# -- Memory over HTTP -------------------------------------------------------------------


def _remote(name: str) -> verbs.Verb | None:
    """The verb ``name`` when the server offers it."""
    from .. import memory, verbs  # noqa: F401 - the service declares the verbs

    try:
        v = verbs.get(name)
    except InvalidInputError:
        return None
    return v if "http" in v.surfaces and v.name == name else None


def encode_argument(value: Any) -> Any:
    """An argument as JSON: datetimes as ISO-8601, paths as text, tuples as lists."""
    import datetime as dt

    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return {str(k): encode_argument(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode_argument(v) for v in value]
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
            opening_alone()
            log.warning("no aircher-mem server answers for %s; opening the store here", self.root)
            self.local = self.fallback()
            return getattr(self.local, verb)(*args, **kwargs)

    def _call(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        v = _remote(name)
        if v is None:
            raise InvalidInputError(f"the server has no verb {name!r}")
        import inspect

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
            sent[key] = encode_argument(value)
        if v.http_method == "POST":
            timeout = self.index_timeout if name == "index" else None
            answer = self.client.request("POST", v.http_path, json=sent, timeout=timeout)
        else:
            answer = self.client.request("GET", v.http_path, params=sent)
        return decode_answer(name, v.result, answer)


def decode_answer(verb: str, result: Any, data: Any) -> Any:
    """The server's JSON answer to ``verb`` as its result type ``result``; an
    answer that does not fit it is an :class:`HTTPError` (502)."""
    from . import wire

    try:
        return wire.from_json(result, data)
    except TypeError as exc:
        raise HTTPError(f"the server's answer to {verb} does not fit: {exc}", status=502, code="bad_response") from None


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
        opening_alone()
        return Memory.open(root, create=create, policy=policy)
    where = Path(root)
    return RemoteMemory(
        client,
        where.resolve(),
        fallback=lambda: Memory.open(where, create=create, policy=policy),
        index_timeout=server.index_timeout_seconds,
    )
