"""The local HTTP server: one process per project store, the single writer of its
DuckDB file (the CLI, the MCP server and the hooks reach it through
:mod:`aircher_mem.interfaces.client`).

``serve_in_thread(memory)`` serves an open :class:`Memory` from a background thread:
it takes the store, binds 127.0.0.1 (port 0: a free port), writes
``<root>/.aircher/server.json`` (mode 0600: host, port, pid and a random token) and
returns a :class:`RunningServer` whose ``stop()`` removes the file. ``serve(root)``
(``aircher-mem serve``) is ``Memory.open(root)`` and that until SIGINT or SIGTERM;
``aircher-mem mcp`` starts one too when it holds the store.

Every route is a verb of the registry (:mod:`aircher_mem.verbs`): ``GET /<name>`` with
the arguments in the query string for a verb that only reads (``GET
/find-symbol?name=User.save``), ``POST /<name>`` with a JSON object for the others
(``POST /recall`` ``{"query": "tabs?"}``). The arguments are checked against the
verb's declared parameters; ``GET /openapi.json`` is generated from the same
declarations. A result body is exactly ``wire.to_json(result)``, the JSON of
``aircher-mem ... --json`` and the MCP tools; an error is ``{"error": {"code", "type",
"message"}}`` with the error's stable code.

Status codes: 400 bad input (``invalid_input`` and its subclasses; malformed JSON,
wrong types, NaN, lone surrogates, unknown or missing arguments); 401 no or wrong
token (``unauthorized``); 403 a non-loopback ``Origin`` (``bad_origin``); 404 unknown
memory, task, symbol or file, no store or not indexed, or no such route
(``not_found``); 405 with an ``Allow`` header (``method_not_allowed``); 409 a
project that is no git work tree, or git failing, for a verb that reads its
changes (``git_error``); 413 a body
over ``[server] max_body_bytes``, 2 MiB by default (``too_large``); 421 a ``Host``
header other than 127.0.0.1/localhost/[::1] with the server's port (``bad_host``,
against DNS rebinding); 503 ``store_locked`` (another process holds
the DuckDB file: retry later) and other store failures; 500 ``internal`` for a bug
(logged, no traceback in the body).

Security: loopback only (``host`` must be 127.0.0.1, localhost or ::1); every
request but ``GET /health`` needs ``Authorization: Bearer <token>`` (compared in
constant time); the token lives only in server.json, readable by its owner. ``GET
/health`` answers ``{"ok": true, "version"}`` and nothing else without a token; with
``?challenge=<32-128 hex digits>`` it adds ``pid`` and ``proof``, the hex
HMAC-SHA256 keyed by the token of ``aircher-mem <pid> <challenge>``, which a client
checks (in constant time) before it sends the token. The Host and Origin checks
apply to it too. Connections are bounded by the Policy's ``[server]`` section:
``max_connections`` open at most (a new one closes the one idle longest), each
closed when it has not sent a complete request within ``request_seconds``,
``keep_alive_seconds`` after an answer, heads up to ``max_header_bytes``; the open
files soft limit is raised to the hard limit when serving starts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import json
import logging
import math
import os
import re
import secrets
import signal
import socket
import sys
import threading
import time
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from .. import checks, store, verbs
from .._core import __version__
from ..config import Policy, ServerPolicy
from ..errors import (
    AircherError,
    EncodingUnavailableError,
    FileMissingError,
    GitError,
    InvalidInputError,
    NotIndexedError,
    StoreError,
    StoreLockedError,
    StoreNotFoundError,
    UnknownItemError,
    UnknownMemoryError,
    UnknownSymbolError,
    UnknownTaskError,
)
from ..memory import Memory
from . import wire
from .accounts import Accounts, check_name
from .client import (
    LOOPBACK,
    HTTPError,
    ServerInfo,
    _live,
    _read_info,
    policy_snapshot,
    proof,
    server_file,
)
from .thin import USER_NAME_PATTERN

if typing.TYPE_CHECKING:  # imported when serving or testing only
    from starlette.applications import Starlette

__all__ = [
    "serve",
    "serve_in_thread",
    "warm",
    "RunningServer",
    "Consolidating",
    "build_app",
    "openapi",
    "status_of",
    "MAX_BODY",
    "DEFAULT_PORT",
]

log = logging.getLogger("aircher_mem.http")

DEFAULT_PORT = 8787
MAX_BODY = ServerPolicy().max_body_bytes  # the default; [server] max_body_bytes sets it
_MAX_INT = 2**63 - 1
# How often `serve` looks whether it idled long enough, or was asked for the store.
_WATCH_SECONDS = 0.05
_RUNNING: set[Path] = set()  # roots served by this process


def status_of(exc: BaseException) -> int:
    """The HTTP status of an error the service raised."""
    if isinstance(exc, HTTPError):
        return exc.status
    if isinstance(exc, InvalidInputError):
        return 400
    if isinstance(
        exc,
        (
            UnknownMemoryError,
            UnknownTaskError,
            UnknownSymbolError,
            UnknownItemError,
            NotIndexedError,
            StoreNotFoundError,
            FileMissingError,
        ),
    ):
        return 404
    if isinstance(exc, GitError):  # the project is no git work tree (or git failed)
        return 409
    if isinstance(exc, (StoreError, EncodingUnavailableError)):
        return 503
    return 500


@dataclasses.dataclass(frozen=True)
class Health:
    ok: bool
    version: str


@dataclasses.dataclass(frozen=True)
class HealthProof:
    """``GET /health?challenge=...``: the server's pid, and the HMAC of the challenge
    and that pid keyed by the token, which only the server that wrote server.json can
    compute."""

    ok: bool
    version: str
    pid: int
    proof: str


_CHALLENGE = re.compile(r"[0-9a-f]{32,128}")


#: The proof key for a user without a token: a proof nobody can check.
_NOBODY = secrets.token_hex(32)


def _health(token: str, accounts: Accounts, args: Mapping[str, Any]) -> Health | HealthProof:
    challenge = args.get("challenge")
    user = args.get("user")
    if challenge is None:
        if user is not None:
            raise _bad("user goes with a challenge")
        return Health(True, __version__)
    if not _CHALLENGE.fullmatch(challenge):
        raise _bad("challenge must be 32 to 128 lowercase hex digits")
    if user is not None:  # proven to the holder of that user's token
        token = accounts.key(check_name(user)) or _NOBODY
    pid = os.getpid()
    return HealthProof(True, __version__, pid, proof(token, challenge, pid))


# -- request parsing --------------------------------------------------------------------


def _bad(message: str) -> InvalidInputError:
    return InvalidInputError(message)


def _reject_constant(name: str) -> Any:
    raise _bad(f"the body is not valid JSON: {name} is not a number JSON allows")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _bad(f"the body holds a number out of range: {text[:40]}")
    return value


def _check_text(value: object) -> None:
    """Refuses strings UTF-8 cannot carry (lone surrogates from \\ud800 escapes)."""
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise _bad(f"the body holds a lone surrogate: {item!r:.80}") from None
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def parse_json(body: bytes) -> Any:
    """A request body as JSON: strict (no NaN/Infinity, finite numbers, valid UTF-8,
    no lone surrogates); any fault is :class:`InvalidInputError`."""
    try:
        text = body.decode("utf-8")
        data = json.loads(text, parse_constant=_reject_constant, parse_float=_finite)
    except InvalidInputError:
        raise
    except UnicodeDecodeError:
        raise _bad("the body is not UTF-8 text") from None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, too many digits, too deep
        raise _bad(f"the body is not valid JSON: {str(exc)[:200]}") from None
    _check_text(data)
    return data


def _kind(value: object) -> str:
    names: dict[type, str] = {dict: "an object", list: "an array", str: "a string", type(None): "null"}
    return names.get(type(value), type(value).__name__)


# -- the routes ---------------------------------------------------------------------------


def _query_values(v: verbs.Verb, pairs: list[tuple[str, str]]) -> dict[str, object]:
    """A query string's pairs as argument values: a list parameter may repeat
    (``?kinds=fact&kinds=turn``), no other may; an empty value of an optional text
    parameter is left out (the OpenAPI allows it: an empty string is text), while
    one of a number, a flag or a choice is checked, so refused as the OpenAPI says."""
    lists = {p.name for p in v.params if _is_list(p)}
    values: dict[str, object] = {}
    repeated: set[str] = set()
    for key, value in pairs:
        if key in lists:
            found = values.setdefault(key, [])
            assert isinstance(found, list)
            found.append(value)
        elif key in values:
            repeated.add(key)
        else:
            values[key] = value
    if repeated:
        raise _bad(f"repeated query parameter: {', '.join(sorted(repeated))}")
    optional = {p.name for p in v.params if not p.required and _is_text(p)}
    return {k: x for k, x in values.items() if not (x == "" and k in optional)}


def _is_text(p: verbs.Param) -> bool:
    """Whether ``p`` takes free text (a string or a path, not a choice)."""
    base = p.base
    if typing.get_origin(base) in (typing.Union, types.UnionType):
        return set(typing.get_args(base)) <= {str, Path}
    return base is str


def _is_list(p: verbs.Param) -> bool:
    base = p.base
    origin = typing.get_origin(base)
    return origin in (list, tuple) or (origin is not None and getattr(origin, "__name__", "") == "Sequence")


# -- the ASGI app -----------------------------------------------------------------------


def _error_response(
    status: int, code: str, message: str, type_name: str = "HTTPError", headers: Mapping[str, str] | None = None
) -> Any:
    from starlette.responses import Response

    body = wire.dumps({"error": {"code": code, "type": type_name, "message": message}})
    extra = dict(headers or {})
    if status == 401:
        extra["WWW-Authenticate"] = "Bearer"
    return Response(body.encode("utf-8"), status_code=status, media_type="application/json", headers=extra or None)


def _json_response(value: Any) -> Any:
    from starlette.responses import Response

    return Response(wire.dumps(value).encode("utf-8"), media_type="application/json")


def _allowed_origin(origin: str) -> bool:
    try:
        parts = urlsplit(origin)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and host in ("127.0.0.1", "localhost", "::1")


#: The ASGI scope's key for the user a per-user token names (absent: server.json's token).
USER_KEY = "aircher_mem.user"


class _Guard:
    """Host, Origin, token and body-size checks in front of every route; a user's
    token puts the user in the scope (``USER_KEY``)."""

    def __init__(
        self, app: Any, *, token: str, accounts: Accounts, team: bool, hosts: frozenset[str], max_body: int
    ) -> None:
        self.app = app
        self.token = token.encode("ascii")
        self.accounts = accounts
        self.team = team
        self.hosts = hosts
        self.max_body = max_body
        #: Requests under way, and when the last one ended (or the app was built).
        self.busy = 0
        self.last = time.monotonic()

    def idle_seconds(self) -> float:
        """Seconds since the last request ended; 0 while one is under way."""
        return 0.0 if self.busy else time.monotonic() - self.last

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.busy += 1
        try:
            await self._guarded(scope, receive, send)
        finally:
            self.busy -= 1
            self.last = time.monotonic()

    async def _guarded(self, scope: Any, receive: Any, send: Any) -> None:
        headers: dict[bytes, bytes] = {}
        for key, value in scope["headers"]:
            if key in headers:  # a repeated security header is refused below
                headers[key] = b"\x00"
            else:
                headers[key] = value
        problem = self.check(scope, headers)
        if problem is not None:
            await _error_response(*problem)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def check(self, scope: Any, headers: dict[bytes, bytes]) -> tuple[int, str, str] | None:
        host = headers.get(b"host", b"").decode("latin-1").lower()
        if host not in self.hosts:
            return 421, "bad_host", "the Host header must name this server on 127.0.0.1, localhost or [::1]"
        origin = headers.get(b"origin")
        if origin is not None and not _allowed_origin(origin.decode("latin-1")):
            return 403, "bad_origin", "requests from web pages are refused (Origin is not loopback)"
        if not (scope["method"] == "GET" and scope["path"] == "/health"):
            given = headers.get(b"authorization", b"")
            scheme, _, token = given.partition(b" ")
            token = token.strip()
            if scheme.lower() != b"bearer":
                token = b""
            if not hmac.compare_digest(token, self.token):
                user = self.accounts.user(token)
                if user is None:
                    return (
                        401,
                        "unauthorized",
                        "missing or wrong token: send Authorization: Bearer <token from server.json or "
                        "`aircher-mem users add`>",
                    )
                if not self.team:
                    return 401, "unauthorized", "per-user tokens are for a team's store ([store] url); this is a file"
                scope[USER_KEY] = user
        length = headers.get(b"content-length")
        if length is not None:
            if not length.isdigit():
                return 400, "invalid_input", "Content-Length is not a number"
            if int(length) > self.max_body:
                return 413, "too_large", f"the body is larger than {self.max_body:,} bytes"
        return None


async def _read_body(request: Any, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPError(f"the body is larger than {limit:,} bytes", status=413, code="too_large")
        chunks.append(chunk)
    return b"".join(chunks)


def build_app(
    memory: Memory,
    *,
    token: str,
    hosts: tuple[str, ...] = ("127.0.0.1:8787", "localhost:8787", "[::1]:8787"),
    max_body: int | None = None,
) -> Any:
    """The ASGI app over ``memory``: ``hosts`` are the Host headers accepted,
    ``token`` the bearer token every route but ``GET /health`` needs (or a user's
    token from the project's users.json, :mod:`.accounts`: the request then acts
    for that user), ``max_body`` the largest body (default: the policy's ``[server]
    max_body_bytes``)."""
    if max_body is None:
        max_body = memory.policy.server.max_body_bytes
    accounts = Accounts(memory.root)
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.requests import ClientDisconnect, Request
    from starlette.routing import Route as StarletteRoute

    spec = openapi()

    def handler(route: str, call: Callable[[Request], Any]) -> Callable[[Request], Any]:
        async def handle(request: Request) -> Any:
            try:
                return _json_response(await call(request))
            except ClientDisconnect:  # closed before its body was whole (or timed out): nobody to answer
                return _error_response(400, "invalid_input", "the client went away before the body was complete")
            except AircherError as exc:
                status = status_of(exc)
                if status >= 500:
                    log.warning("%s: %s", route, exc)
                return _error_response(status, exc.code, str(exc), type(exc).__name__)
            except Exception as exc:
                log.exception("%s failed", route)
                return _error_response(500, "internal", f"internal error ({type(exc).__name__}); see the server log")

        return handle

    def query(request: Request) -> list[tuple[str, str]]:
        pairs = request.query_params.multi_items()
        _check_text(pairs)
        return pairs

    def run(v: verbs.Verb) -> Callable[[Request], Any]:
        async def call(request: Request) -> Any:
            if v.http_method == "POST":
                body = await _read_body(request, max_body)
                if body:  # none: no arguments (whitespace is not JSON)
                    values = parse_json(body)
                    if not isinstance(values, dict):
                        raise _bad(f"the body must be a JSON object, got {_kind(values)}")
                    args = v.arguments_json(body)
                else:
                    args = v.arguments({})
                if request.query_params:
                    raise _bad(f"POST {v.http_path} takes its arguments in the JSON body, not the query string")
            else:
                args = v.arguments(_query_values(v, query(request)), text=True)
            return await run_in_threadpool(acting, request, v.name, args)

        return call

    def acting(request: Request, name: str, args: dict[str, Any]) -> Any:
        """The verb ``name``, for the user the request's token names (if any)."""
        user = request.scope.get(USER_KEY)
        if user is None:
            return getattr(memory, name)(**args)
        with memory.as_user(user):
            return getattr(memory, name)(**args)

    async def health(request: Request) -> Any:
        pairs = dict(query(request))
        unknown = sorted(set(pairs) - {"challenge", "user"})
        if unknown:
            raise _bad(f"unknown argument {', '.join(unknown)}; allowed: challenge, user")
        return _health(token, accounts, pairs)

    async def spec_of(request: Request) -> Any:
        return spec

    def seed(path: str) -> Callable[[Request], Any]:
        name, shape = SEED_ROUTES[path]

        async def call(request: Request) -> Any:
            body = await _read_body(request, max_body)
            values = parse_json(body) if body else {}
            if request.query_params:
                raise _bad(f"POST {path} takes its arguments in the JSON body, not the query string")
            arguments = seed_arguments(path, values, dict(request.path_params))
            args = verbs.get(name).arguments_json(json.dumps(arguments).encode("utf-8"))
            return shape(wire.to_json(await run_in_threadpool(acting, request, name, args)))

        return call

    calls: dict[tuple[str, str], Callable[[Request], Any]] = {
        ("GET", "/health"): health,
        ("GET", "/openapi.json"): spec_of,
    }
    for v in verbs.all_verbs("http"):
        calls[(v.http_method, v.http_path)] = run(v)
    for path in SEED_ROUTES:
        calls[("POST", path)] = seed(path)

    async def http_error(request: Request, exc: Exception) -> Any:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 405:  # with Starlette's Allow header (RFC 9110)
            message = f"{request.method} is not allowed on {request.url.path}"
            return _error_response(405, "method_not_allowed", message, headers=exc.headers)
        if exc.status_code == 404:
            return _error_response(404, "not_found", f"no route {request.url.path}")
        return _error_response(exc.status_code, "http", str(exc.detail))

    # One Starlette route per path, dispatching on the method, so that a 405 names
    # every method the path allows in its Allow header.
    by_path: dict[str, dict[str, Callable[[Request], Any]]] = {}
    for (method, path), call in calls.items():
        by_path.setdefault(path, {})[method] = handler(f"{method} {path}", call)

    def dispatch(handlers: dict[str, Callable[[Request], Any]]) -> Callable[[Request], Any]:
        async def handle(request: Request) -> Any:
            method = "GET" if request.method == "HEAD" else request.method
            return await handlers[method](request)

        return handle

    routes = [
        StarletteRoute(path, dispatch(handlers), methods=list(handlers), name=path)
        for path, handlers in by_path.items()
    ]
    app: Starlette = Starlette(routes=routes, exception_handlers={HTTPException: http_error})
    return _Guard(
        app,
        token=token,
        accounts=accounts,
        team=bool(memory.policy.store.url),
        hosts=frozenset(h.lower() for h in hosts),
        max_body=max_body,
    )


def _hosts(port: int) -> tuple[str, ...]:
    return (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}")


# -- OpenAPI ----------------------------------------------------------------------------

_REF = "#/components/schemas/{model}"


def type_schema(tp: Any, components: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema of a type hint (results' dataclasses go to ``components``)."""
    if tp is Any:
        return {}
    if tp is type(None):
        return {"type": "null"}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        name = tp.__name__
        if name not in components:
            components[name] = {}  # a placeholder against recursion
            hints = typing.get_type_hints(tp)
            props = {f.name: type_schema(hints[f.name], components) for f in dataclasses.fields(tp)}
            required = [
                f.name
                for f in dataclasses.fields(tp)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            ]
            for prop in getattr(tp, "json_properties", ()):
                getter = getattr(tp, prop).fget
                props[prop] = type_schema(typing.get_type_hints(getter)["return"], components)
                required.append(prop)
            schema: dict[str, Any] = {"type": "object", "properties": props, "required": required}
            if tp.__doc__ and not tp.__doc__.startswith(f"{name}("):
                schema["description"] = " ".join(tp.__doc__.split())
            components[name] = schema
        return {"$ref": f"#/components/schemas/{name}"}
    simple = {str: "string", int: "integer", float: "number", bool: "boolean"}
    if tp in simple:
        return {"type": simple[tp]}
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [type_schema(a, components) for a in args]}
    if origin is list:
        return {"type": "array", "items": type_schema(args[0], components)}
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": type_schema(args[0], components)}
        items = [type_schema(a, components) for a in args]
        if all(item == items[0] for item in items):  # (first, last) and the like: plain items, any draft reads it
            return {"type": "array", "items": items[0], "minItems": len(items), "maxItems": len(items)}
        return {"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}
    if origin is dict:
        return {"type": "object", "additionalProperties": type_schema(args[1], components)}
    raise TypeError(f"no JSON schema for {tp!r}")  # pragma: no cover - a new result type


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """A parameter's schema without its null branch (a query string has no null)."""
    options = schema.get("anyOf")
    if isinstance(options, list):
        kept = [o for o in options if o != {"type": "null"}]
        if len(kept) != len(options):
            rest = {k: x for k, x in schema.items() if k not in ("anyOf", "default")}
            return {**(kept[0] if len(kept) == 1 else {"anyOf": kept}), **rest}
    return {k: x for k, x in schema.items() if not (k == "default" and x is None)}


def _arguments_schema(v: verbs.Verb, components: dict[str, Any]) -> dict[str, Any]:
    schema = verbs.arguments_model(v).model_json_schema(ref_template=_REF)
    components.update(schema.pop("$defs", {}))
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def _error_schema() -> dict[str, Any]:
    detail = {
        "type": "object",
        "properties": {"code": {"type": "string"}, "type": {"type": "string"}, "message": {"type": "string"}},
        "required": ["code", "type", "message"],
    }
    return {"type": "object", "properties": {"error": detail}, "required": ["error"]}


def _operation(summary: str, result: dict[str, Any], operation_id: str) -> dict[str, Any]:
    error = {
        "description": "An error",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }
    return {
        "operationId": operation_id,
        "summary": summary,
        "responses": {
            "200": {"description": "OK", "content": {"application/json": {"schema": result}}},
            **{str(s): error for s in (400, 401, 403, 404, 405, 409, 413, 421, 500, 503)},
        },
    }


# -- seed 001's context routes ------------------------------------------------------------

_SIGNALS = ("query", "current_file", "recent_errors", "activity", "branch", "task_id", "collaborator")
_PREDICT_SIGNALS = ("query", "recent_errors", "activity", "branch", "task_id")  # and file_opened


def seed_arguments(path: str, values: object, in_path: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The verb's arguments from a body in seed 001's shape: ``/context/assemble``
    ``{budget, signals: {query, current_file, recent_errors, activity, branch,
    task_id, collaborator}}``; ``/context/predict`` ``{file_opened}`` and the same
    signals beside it but ``current_file`` and ``collaborator``;
    ``/contradictions/{contradiction_id}/resolve`` ``{resolution, note}`` (and
    ``content`` for merged) with the id from the path (``in_path``)."""
    if not isinstance(values, dict):
        raise _bad(f"the body must be a JSON object, got {_kind(values)}")
    if path == RESOLVE_ROUTE:
        unknown = sorted(set(values) - {"resolution", "note", "content"})
        if unknown:
            raise _bad(f"unknown field {', '.join(unknown)}; allowed: resolution, note, content")
        raw = (in_path or {}).get("contradiction_id", "")
        if not raw.isascii() or not raw.isdigit():
            raise _bad(f"the contradiction id must be a positive integer, got {raw!r:.40}")
        return {**values, "contradiction_id": int(raw)}
    if path == "/context/assemble":
        unknown = sorted(set(values) - {"budget", "signals"})
        signals = values.get("signals", {})
        if not isinstance(signals, dict):
            raise _bad(f"signals must be a JSON object, got {_kind(signals)}")
        args = {"budget": values["budget"]} if "budget" in values else {}
    else:
        unknown, signals, args = [], {k: v for k, v in values.items() if k != "file_opened"}, {}
        if "file_opened" in values:
            args["current_file"] = values["file_opened"]
    allowed = _SIGNALS if path == "/context/assemble" else _PREDICT_SIGNALS
    unknown += sorted(set(signals) - set(allowed))
    if unknown:
        raise _bad(f"unknown field {', '.join(unknown)}; signals: {', '.join(allowed)}")
    return {**signals, **args}


def _assembled(answer: dict[str, Any]) -> dict[str, Any]:
    tiers = {f"tier{i}": t["tokens"] for i, t in enumerate(answer["tiers"], 1)}
    return {"context": answer["context"], "token_count": answer["token_count"], "tiers": tiers, "assembled": answer}


def _predicted(answer: dict[str, Any]) -> dict[str, Any]:
    return {
        "predicted_memories": answer["memories"],
        "predicted_files": answer["files"],
        "confidence": answer["confidence"],
        "prediction": answer,
    }


RESOLVE_ROUTE = "/contradictions/{contradiction_id}/resolve"

#: Seed 001's request and response shapes over the ``assemble``, ``predict`` and
#: ``resolve_contradiction`` verbs: the path, the verb, and how its answer is reshaped.
SEED_ROUTES: dict[str, tuple[str, Callable[[dict[str, Any]], dict[str, Any]]]] = {
    "/context/assemble": ("assemble", _assembled),
    "/context/predict": ("predict", _predicted),
    RESOLVE_ROUTE: ("resolve_contradiction", dict),
}


def openapi() -> dict[str, Any]:
    """The OpenAPI 3.1 description of the routes, generated from the verb registry."""
    components: dict[str, Any] = {"Error": _error_schema()}
    health = _operation(
        "Liveness: ok and the version (no token needed); with a challenge, the server's pid and its proof "
        "that it knows the token.",
        {"anyOf": [type_schema(t, components) for t in (Health, HealthProof)]},
        "health",
    )
    health["security"] = []
    health["parameters"] = [
        {
            "name": "challenge",
            "in": "query",
            "required": False,
            "schema": {"type": "string", "pattern": "^[0-9a-f]{32,128}$"},
            "description": "Random hex: the answer adds pid and proof, "
            "HMAC-SHA256(token, 'aircher-mem <pid> <challenge>') in hex.",
        },
        {
            "name": "user",
            "in": "query",
            "required": False,
            "schema": {"type": "string", "pattern": USER_NAME_PATTERN},
            "description": "With a challenge, for the holder of a user's token: the proof's key is "
            "the token's SHA-256 in hex.",
        },
    ]
    paths: dict[str, Any] = {
        "/health": {"get": health},
        "/openapi.json": {"get": _operation("This API's OpenAPI 3.1 description.", {"type": "object"}, "openapi")},
    }
    for v in verbs.all_verbs("http"):
        operation = _operation(v.summary, type_schema(v.result, components), v.name)
        arguments = _arguments_schema(v, components)
        if v.http_method == "POST":
            required = arguments.get("required", [])
            operation["requestBody"] = {
                "required": bool(required),
                "content": {"application/json": {"schema": arguments}},
            }
        else:
            required = set(arguments.get("required", []))
            parameters = [
                {"name": name, "in": "query", "required": name in required, "schema": _without_null(prop)}
                for name, prop in arguments.get("properties", {}).items()
            ]
            if parameters:
                operation["parameters"] = parameters
        paths[v.http_path] = {v.http_method.lower(): operation}
    properties = _arguments_schema(verbs.get("assemble"), components).get("properties", {})
    assemble_body = {
        "type": "object",
        "properties": {
            "budget": properties["budget"],
            "signals": {
                "type": "object",
                "properties": {name: properties[name] for name in _SIGNALS},
                "additionalProperties": False,
            },
        },
        "additionalProperties": False,
    }
    predicting = _arguments_schema(verbs.get("predict"), components).get("properties", {})
    predict_body = {
        "type": "object",
        "properties": {
            "file_opened": predicting["current_file"],
            **{name: predicting[name] for name in _PREDICT_SIGNALS},
        },
        "additionalProperties": False,
    }
    for path, body, summary in (
        ("/context/assemble", assemble_body, "assemble in seed 001's shape: {context, token_count, tiers, assembled}."),
        ("/context/predict", predict_body, "predict in seed 001's shape: {predicted_memories, confidence, ...}."),
    ):
        operation = _operation(summary, {"type": "object"}, path.strip("/").replace("/", "_"))
        operation["requestBody"] = {"required": False, "content": {"application/json": {"schema": body}}}
        paths[path] = {"post": operation}
    resolving = _arguments_schema(verbs.get("resolve_contradiction"), components)
    props = resolving.get("properties", {})
    operation = _operation(
        "resolve_contradiction in seed 001's shape: {resolution, note} (content for merged), the id in the path.",
        type_schema(verbs.get("resolve_contradiction").result, components),
        "contradictions_resolve",
    )
    operation["parameters"] = [
        {"name": "contradiction_id", "in": "path", "required": True, "schema": props["contradiction_id"]}
    ]
    operation["requestBody"] = {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "properties": {name: props[name] for name in ("resolution", "note", "content")},
                    "required": ["resolution"],
                    "additionalProperties": False,
                }
            }
        },
    }
    paths[RESOLVE_ROUTE] = {"post": operation}
    return {
        "openapi": "3.1.0",
        "info": {"title": "aircher-mem", "version": __version__},
        "servers": [{"url": f"http://127.0.0.1:{DEFAULT_PORT}"}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }


# -- server.json ------------------------------------------------------------------------


def _write_info(path: Path, info: ServerInfo, *, proof_timeout: float | None = None) -> None:
    """Writes server.json (0600) atomically and exclusively: a live server's file
    (one whose server proves it knows its token) is never replaced
    (:class:`StoreLockedError`), a stale one is. Besides the server's address, pid
    and token it holds the project's :func:`client.policy_snapshot`: the limits a
    hook takes from it while config.toml stays as it was."""
    wait = ServerPolicy().proof_timeout_seconds if proof_timeout is None else proof_timeout
    data = json.dumps({**info._asdict(), "policy": policy_snapshot(path.parent.parent)}).encode("utf-8")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            os.fchmod(fd, 0o600)
        except (AttributeError, OSError):  # pragma: no cover - Windows
            pass
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        for _ in range(3):
            try:
                os.link(tmp, path)
                return
            except FileExistsError:
                other = _read_info(path)
                if other is not None and other != info and _live(other, wait):
                    raise _already(path, other) from None
                path.unlink(missing_ok=True)
            except OSError:  # no hard links here: replace (the live check above was done)
                os.replace(tmp, path)
                return
        raise StoreLockedError(f"could not write {path}: another server keeps replacing it")
    finally:
        tmp.unlink(missing_ok=True)


def _already(path: Path, info: ServerInfo) -> StoreLockedError:
    return StoreLockedError(
        f"a server already runs for this project (pid {info.pid}, http://{info.host}:{info.port}; {path}); "
        "use it, or stop it first"
    )


def _remove_info(path: Path, token: str) -> None:
    info = _read_info(path)
    if info is not None and info.token == token:
        path.unlink(missing_ok=True)


# -- serving ----------------------------------------------------------------------------


def _bind(host: str, port: int, backlog: int = 128) -> socket.socket:
    family = socket.AF_INET6 if host == "::1" else socket.AF_INET
    address = "127.0.0.1" if host == "localhost" else host
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if os.name != "nt":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, port))
        sock.listen(backlog)
    except OSError as exc:
        sock.close()
        raise InvalidInputError(
            f"cannot listen on {host} port {port}: {exc.strerror or exc}; pick another with --port (0: any free port)"
        ) from None
    sock.setblocking(False)
    return sock


def _raise_open_files() -> None:
    """Raises this process's soft limit of open files to its hard limit, so that many
    clients at once do not run the server out of descriptors (POSIX only)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 65_536)
    if soft == resource.RLIM_INFINITY or soft >= target:
        return
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError) as exc:  # e.g. macOS caps it below an infinite hard limit
        log.debug("could not raise the open files limit from %d to %d: %s", soft, target, exc)


#: Open files kept free for the store, the graph, logs and the interpreter when the
#: connection bounds are fitted to the open files limit.
_FILES_RESERVED = 64


def _connection_bounds(policy: ServerPolicy) -> tuple[int, int]:
    """``[server] max_connections`` and ``backlog``, lowered to fit this process's
    open files limit: asyncio accepts up to ``backlog`` connections in one go, the
    protocol sees them two loop turns later and a connection it closes frees its
    descriptor one turn after that, so ``max_connections`` plus four times
    ``backlog`` must fit beside the store's files (else accept fails with EMFILE and
    asyncio stops accepting for a second each time)."""
    connections, backlog = policy.max_connections, policy.backlog
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return connections, backlog
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return connections, backlog
    room = soft - _FILES_RESERVED
    backlog = max(1, min(backlog, room // 8))
    connections = max(1, min(connections, room - 4 * backlog))
    if connections < policy.max_connections:
        log.warning(
            "open files limit %d: at most %d connections ([server] max_connections %d)",
            soft,
            connections,
            policy.max_connections,
        )
    return connections, backlog


def _unread(transport: asyncio.BaseTransport) -> bool:
    """Whether bytes wait unread in ``transport``'s socket (``FIONREAD``; False where
    the platform cannot tell)."""
    try:
        import fcntl
        import termios
    except ImportError:  # pragma: no cover - Windows
        return False
    sock = transport.get_extra_info("socket")
    if sock is None:
        return False
    try:
        count = fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0")
    except (OSError, ValueError):
        return False
    return int.from_bytes(count, sys.byteorder) > 0


def _bounded_protocol(policy: ServerPolicy, limit: int) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with the connection bounds of ``policy``: at most
    ``limit`` connections open (``max_connections`` as it fits the open files
    limit; a new one past it closes the one idle longest, or itself when every one
    has a request under way), and each closed when it has not sent a complete
    request (head and body) within ``request_seconds`` of opening or of its last
    answer.
    (uvicorn's own ``limit_concurrency`` counts idle connections too and would
    answer real requests 503 while idle ones pile up, so it is not used.)"""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    request_seconds = policy.request_seconds
    incomplete = (h11.IDLE, h11.SEND_BODY)  # the client's side of a request not yet received whole

    class Bounded(H11Protocol):
        _timer: asyncio.TimerHandle | None = None
        _since = 0.0

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            self._arm()
            self._make_room()

        def _arm(self) -> None:
            self._disarm()
            self._since = self.loop.time()
            self._timer = self.loop.call_later(request_seconds, self._late)

        def _disarm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _idle(self) -> bool:
            return self.conn.their_state is h11.IDLE and (self.cycle is None or self.cycle.response_complete)

        def _make_room(self) -> None:
            """Closes one connection when more than ``limit`` are open (not closing)."""
            open_ = [c for c in self.connections if isinstance(c, Bounded) and not c.transport.is_closing()]
            if len(open_) <= limit:
                return
            idle = sorted((c for c in open_ if c is not self and c._idle()), key=lambda c: c._since)
            # A connection whose request waits unread (accepted a turn ago, not read yet) is not idle.
            victim = next((c for c in idle if not _unread(c.transport)), self)
            victim.transport.close()

        def _late(self) -> None:
            self._timer = None
            if self.conn.their_state in incomplete and not self.transport.is_closing():
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state not in incomplete:  # the whole request arrived
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return Bounded


def _check_address(host: object, port: object) -> None:
    if not isinstance(host, str) or host not in LOOPBACK:
        raise InvalidInputError(f"host must be loopback ({', '.join(LOOPBACK)}), got {host!r:.80}")
    checks.integer("port", port, 0, 65535)


def warm(memory: Memory) -> None:
    """Reads the store in (the long-term memory's rows and indexes, the episodic
    store, the code graph) as a read-only verb does, so that the first requests
    do not wait for it: a hook's deadline is shorter than a large store's first
    read. Requests that come meanwhile wait for the verb's lock; a failure is
    logged and left to the verb that meets it."""
    started = time.perf_counter()
    try:
        memory.stats()
    except (AircherError, OSError) as exc:
        log.warning("could not read the store of %s in: %s", memory.root, exc)
        return
    log.info("read the store of %s in %.2f s", memory.root, time.perf_counter() - started)


def _claim(memory: Memory, wait_seconds: float = 0.0) -> None:
    """Refuses (:class:`StoreLockedError`) when a live server runs for the project,
    then takes the store (:class:`StoreLockedError` when another process still has
    it after ``wait_seconds``)."""
    if memory.root in _RUNNING:
        raise StoreLockedError(f"this process already serves {memory.root}")
    path = server_file(memory.root)
    other = _read_info(path)
    if other is not None and _live(other, memory.policy.server.proof_timeout_seconds):
        if store.offered_by(memory.db_path) != other.pid:
            raise _already(path, other)
        # a hook's server: it gives the store up below, and its server.json with it
    give_up = time.monotonic() + wait_seconds
    while True:
        try:
            memory.episodic  # noqa: B018 - the store is ours from now on (StoreLockedError if not)
            return
        except StoreLockedError:
            if time.monotonic() >= give_up:
                raise
            time.sleep(0.05)


class RunningServer:
    """A server started by :func:`serve_in_thread`: ``info`` is what its server.json
    says, ``url`` where it listens; ``stop()`` (or leaving a ``with`` block) shuts it
    down and removes the file. The Memory stays its owner's to close, after
    ``stop()``."""

    def __init__(
        self,
        memory: Memory,
        info: ServerInfo,
        sock: socket.socket,
        server: Any,
        thread: threading.Thread,
        app: Any = None,
    ) -> None:
        self.memory = memory
        self.info = info
        self._sock = sock
        self._server = server
        self._thread = thread
        self._app = app
        self._stopped = False

    def idle_seconds(self) -> float:
        """Seconds since the server last answered (or started); 0 while a request is
        under way."""
        return self._app.idle_seconds() if isinstance(self._app, _Guard) else 0.0

    @property
    def url(self) -> str:
        host = f"[{self.info.host}]" if ":" in self.info.host else self.info.host
        return f"http://{host}:{self.info.port}"

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def __repr__(self) -> str:
        return f"RunningServer({self.memory.root}, {self.url})"

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self, timeout: float = 30.0) -> None:
        """Stops serving (requests under way finish first) and removes server.json;
        safe to call twice."""
        if self._stopped:
            return
        self._stopped = True
        try:
            self._server.should_exit = True
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("the HTTP server of %s did not stop within %g s", self.memory.root, timeout)
        finally:
            self.memory.partial_answers = False
            _remove_info(server_file(self.memory.root), self.info.token)
            self._sock.close()
            _RUNNING.discard(self.memory.root)


def serve_in_thread(memory: Memory, *, host: str = "127.0.0.1", port: int = 0) -> RunningServer:
    """Serves ``memory`` over HTTP from a background thread of this process, as
    ``aircher-mem serve`` does: it takes the store, binds ``host`` (loopback only)
    and ``port`` (0: a free one), writes server.json and returns once the server
    accepts, so the CLI, the hooks and :func:`connect` in other processes go through
    it. ``aircher-mem serve`` and ``aircher-mem mcp`` both start their server with
    it; a long-running Python process can too::

        with Memory.open(".") as memory, serve_in_thread(memory):
            ...  # other processes of the project reach this store

    Refuses (:class:`StoreLockedError`) when a live server already runs for the
    project or another process holds the store; a stale server.json is replaced."""
    _check_address(host, port)
    import uvicorn

    _claim(memory)
    _raise_open_files()
    bounds = memory.policy.server
    connections, backlog = _connection_bounds(bounds)
    sock = _bind(host, port, backlog)
    token = secrets.token_urlsafe(32)
    info = ServerInfo(host, sock.getsockname()[1], os.getpid(), token)
    path = server_file(memory.root)
    written = False
    try:
        _write_info(path, info, proof_timeout=memory.policy.server.proof_timeout_seconds)
        written = True
        _RUNNING.add(memory.root)
        app = build_app(memory, token=token, hosts=_hosts(info.port))
        config = uvicorn.Config(
            app,
            http=_bounded_protocol(bounds, connections),
            backlog=backlog,
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            server_header=False,
            timeout_graceful_shutdown=10,
            timeout_keep_alive=bounds.keep_alive_seconds,
            h11_max_incomplete_event_size=bounds.max_header_bytes,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(
            target=lambda: asyncio.run(server.serve(sockets=[sock])), name="aircher-mem-http", daemon=True
        )
        thread.start()
        while not server.started and thread.is_alive():
            thread.join(0.01)
        if not server.started:
            raise StoreError(f"the HTTP server for {memory.root} did not start (see the log)")
    except BaseException:
        _RUNNING.discard(memory.root)
        if written:
            _remove_info(path, token)
        sock.close()
        raise
    memory.partial_answers = True  # a first index lets the other requests in (Memory.index)
    log.info("aircher-mem serves %s on http://%s:%d", memory.root, host, info.port)
    return RunningServer(memory, info, sock, server, thread, app)


class Consolidating:
    """A server's consolidation passes (``Memory.consolidate``), every ``[lifecycle]
    consolidate_interval_seconds`` (0: never): once the server has run that long, a
    pass is due when the store's last one is that old (or there was none). A server
    that exits when idle (the one the hooks start, given ``idle``: its idle seconds)
    never runs that long: its pass is due once it has had no request for
    ``consolidate_idle_seconds`` (a pass holds the memory's lock: not while the
    agent works) and the last pass is an interval old or there was none. The check
    and the pass run in a thread of their own, one at a time (the store is read
    under the memory's lock, never beside a request opening it); a failure is
    logged. Looked at every ``CHECK_SECONDS``. A pass runs as the server's user,
    then as each user served with a token (:meth:`Memory.served_users`), whose
    private rows only their own view holds."""

    CHECK_SECONDS = 30.0

    def __init__(
        self, memory: Memory, *, started: float | None = None, idle: Callable[[], float] | None = None
    ) -> None:
        self.memory = memory
        self.interval = memory.policy.lifecycle.consolidate_interval_seconds
        self.idle_wait = memory.policy.lifecycle.consolidate_idle_seconds
        self.started = time.time() if started is None else started
        self.idle = idle
        self._next_check = time.monotonic()
        self._thread: threading.Thread | None = None
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()

    def _may_run(self) -> bool:
        if not self.interval:
            return False
        if self.idle is not None:
            return self.idle() >= self.idle_wait
        return time.time() - self.started >= self.interval

    def due(self) -> bool:
        """Whether a pass is due now (reads the store's last pass)."""
        if not self._may_run():
            return False
        last = self.memory.last_consolidated()
        return last is None or time.time() - last >= self.interval

    def when_due(self) -> None:
        """Starts the check (and the pass, when due) unless one runs or it is too early."""
        if time.monotonic() < self._next_check or (self._thread is not None and self._thread.is_alive()):
            return
        self._next_check = time.monotonic() + self.CHECK_SECONDS
        if not self._may_run():
            return
        self._thread = threading.Thread(target=self._run, name="aircher-consolidate", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            if not self.due():
                return
            report = self.memory.consolidate()
            log.info(
                "consolidated %s: %d episodes, %d merged, %d forgotten",
                self.memory.root,
                report.episodes,
                report.deduped,
                report.forgotten,
            )
            # then as each user served with a token: their private rows are theirs to consolidate
            for user in self.memory.served_users():
                with self.memory.as_user(user):
                    report = self.memory.consolidate()
                log.info("consolidated %s as %s: %d episodes", self.memory.root, user, report.episodes)
        except (AircherError, OSError) as exc:
            log.warning("the consolidation of %s failed: %s", self.memory.root, exc)

    def in_background(self) -> Consolidating:
        """Looks every ``CHECK_SECONDS`` from a daemon thread of its own (for a holder
        whose main thread serves something else: ``aircher-mem mcp``) until
        :meth:`stop`."""
        self._stop = threading.Event()

        def tick() -> None:
            while not self._stop.wait(self.CHECK_SECONDS):
                self.when_due()

        self._ticker = threading.Thread(target=tick, name="aircher-consolidate-schedule", daemon=True)
        self._ticker.start()
        return self

    def stop(self) -> None:
        """Stops looking (:meth:`in_background`) and waits for a pass under way."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        self.join()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)


def serve(
    root: str | os.PathLike[str],
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    policy: Policy | None = None,
    idle_exit_seconds: float = 0.0,
    yields: bool = False,
) -> None:
    """Serves the project's memory over HTTP on ``host`` (loopback only) and ``port``
    (0: a free one) until SIGINT or SIGTERM, or, when ``idle_exit_seconds`` is not
    0, until that long has passed without a request (what a server a hook started
    does: ``[hooks] start_server``), as the store's single writer
    (:func:`serve_in_thread`; the graph is refreshed first when ``[server]
    index_at_start``), and reads the store in once it accepts (the long-term memory,
    the episodic store and the graph, as ``stats`` does), so that the first
    requests, a hook's among them, do not wait for a large store's first read. With
    ``yields`` (a hook's server), it also exits as soon as another process opening
    the store asks for it (:func:`store.taken`), so that ``Memory.open`` elsewhere
    never finds the store held by it. Refuses (:class:`StoreLockedError`) when a
    live server that does not yield already runs for the project or another process
    holds the store; a stale server.json is replaced, and a live yielding server is
    asked to give the store up."""
    _check_address(host, port)
    idle_exit_seconds = checks.number("idle_exit_seconds", idle_exit_seconds)
    yields = checks.flag("yields", yields)
    memory = Memory.open(root, policy=policy)
    stop = threading.Event()
    previous: dict[signal.Signals, Any] = {}
    running: RunningServer | None = None
    consolidating: Consolidating | None = None
    try:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                previous[sig] = signal.signal(sig, lambda *_: stop.set())
        if yields:
            store.offer(memory.db_path)  # from when it holds the store
        # before indexing: never rewrite the graph of a live server. A hook's server
        # waits for the store: the hook that started it past its deadline may hold it
        # a moment longer, while its process exits.
        _claim(memory, memory.policy.server.yield_wait_seconds if yields else 0.0)
        if memory.indexed and memory.policy.server.index_at_start:
            try:
                memory.index()
            except (AircherError, OSError) as exc:
                log.warning("could not refresh the code graph of %s: %s", memory.root, exc)
        if not stop.is_set() and not (yields and store.wanted(memory.db_path)):
            running = serve_in_thread(memory, host=host, port=port)
            consolidating = Consolidating(memory, idle=running.idle_seconds if idle_exit_seconds else None)
            warm(memory)
            memory.watch_team()
            while running.running and not stop.wait(_WATCH_SECONDS):
                consolidating.when_due()
                if idle_exit_seconds and running.idle_seconds() > idle_exit_seconds:
                    log.info("no request for %g s: the server of %s exits", idle_exit_seconds, memory.root)
                    break
                if yields and store.wanted(memory.db_path):
                    log.info("another process opens the store: the server of %s gives it up", memory.root)
                    break
    finally:
        try:
            if running is not None:
                running.stop()
            if consolidating is not None:
                consolidating.join()  # a pass under way ends before the store closes
        finally:
            try:
                memory.close()
            finally:
                if yields:
                    store.withdraw(memory.db_path)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
