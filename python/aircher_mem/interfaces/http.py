"""The local HTTP server (seed 004's API): one process per project store, the single
writer of its DuckDB file, and a small stdlib client for the CLI, the MCP server and
hooks.

``serve_in_thread(memory)`` serves an open :class:`Memory` from a background thread:
it takes the store, binds 127.0.0.1 (port 0: a free port), writes
``<root>/.aircher/server.json`` (mode 0600: host, port, pid and a random token) and
returns a :class:`RunningServer` whose ``stop()`` removes the file. ``serve(root)``
(``aircher-mem serve``) is ``Memory.open(root)`` and that until SIGINT or SIGTERM;
``aircher-mem mcp`` starts one too when it holds the store. ``discover(root)``
reads server.json (None when it is missing, unreadable or its pid is dead) and
``Client`` talks to the server once the server has proved it knows the file's token
(``GET /health?challenge=``: the token and the requests never go to a stranger that
took over a stale file's pid and port). ``RemoteMemory`` is the :class:`Memory`
verbs over that client (the route of each verb from the same table, the answer
decoded back into the verb's result dataclass), and ``connect(root)`` gives it when a
server runs for the project and ``Memory.open(root)`` otherwise: the CLI, the MCP
server and the hooks use it, so with a server they never open the store it holds,
and print the same either way.

Every endpoint is one row of :data:`ROUTES`: method, path, the :class:`Memory` verb,
the request fields (JSON body for POST/PATCH, query string for GET/DELETE) mapped
explicitly to the verb's keyword arguments, and the result dataclass. The handlers,
the argument checks and ``GET /openapi.json`` all come from that table. A result
body is exactly ``wire.to_json(result)``, the JSON of ``aircher-mem ... --json`` and
the MCP tools; an error is ``{"error": {"code", "type", "message"}}`` with the
error's stable code.

Status codes: 400 bad input (``invalid_input`` and its subclasses; malformed JSON,
wrong types, NaN, lone surrogates, unknown or missing fields); 401 no or wrong token
(``unauthorized``); 403 a non-loopback ``Origin`` (``bad_origin``); 404 unknown
memory, task, symbol or file, no store or not indexed, or no such route
(``not_found``); 405 with an ``Allow`` header (``method_not_allowed``); 413 a body
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
import datetime as dt
import hashlib
import hmac
import http.client
import inspect
import json
import logging
import math
import os
import re
import secrets
import signal
import socket
import threading
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote, urlencode, urlsplit

from .. import results
from .._core import __version__
from ..config import Policy, ServerPolicy
from ..errors import (
    AircherError,
    EncodingUnavailableError,
    FileMissingError,
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
from ..longterm.store import KINDS
from ..memory import STORE_DIR, Memory, find_root
from ..results import Check
from . import wire

if typing.TYPE_CHECKING:  # imported when serving or testing only
    from starlette.applications import Starlette

__all__ = [
    "serve",
    "serve_in_thread",
    "RunningServer",
    "build_app",
    "discover",
    "ServerInfo",
    "Client",
    "RemoteMemory",
    "connect",
    "HTTPError",
    "ServerUnavailableError",
    "ServerGoneError",
    "ServerNotProvenError",
    "server_check",
    "ROUTES",
    "Route",
    "Field",
    "openapi",
    "SERVER_FILE",
    "MAX_BODY",
    "DEFAULT_PORT",
]

log = logging.getLogger("aircher_mem.http")

SERVER_FILE = "server.json"
DEFAULT_PORT = 8787
MAX_BODY = ServerPolicy().max_body_bytes  # the default; [server] max_body_bytes sets it
LOOPBACK = ("127.0.0.1", "localhost", "::1")
_MAX_INT = 2**63 - 1
_RUNNING: set[Path] = set()  # roots served by this process


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
    if isinstance(exc, (StoreError, EncodingUnavailableError)):
        return 503
    return 500


# -- the route table --------------------------------------------------------------------

FieldType = Literal[
    "string", "integer", "number", "boolean", "strings", "object", "objects", "any", "time", "line_range"
]


@dataclasses.dataclass(frozen=True)
class Field:
    """A request field: its JSON ``name``, type, whether it is required, and the
    verb's keyword argument it becomes (``arg``, default: ``name``). An optional
    field left out (or null) is not passed, so the verb's default applies."""

    name: str
    type: FieldType = "string"
    required: bool = False
    arg: str | None = None
    choices: tuple[str, ...] = ()
    description: str = ""
    #: What a client sends when the verb's argument is None on purpose (the verb's
    #: None is not its default): e.g. ``status=None`` (any status) is ``"all"``.
    none_value: str | None = None
    #: Bounds of an integer, stated in the OpenAPI (the verb checks its own upper
    #: bounds: a limit over them is a 400 too).
    minimum: int | None = None
    maximum: int | None = None

    @property
    def kwarg(self) -> str:
        return self.arg or self.name


@dataclasses.dataclass(frozen=True)
class Route:
    """One endpoint: ``verb`` is the :class:`Memory` method called with the fields'
    values (``call`` replaces that when the endpoint does more); ``path_fields``
    are the ``{...}`` parts of ``path``; ``fields`` come from the JSON body (POST,
    PATCH) or the query string (GET, DELETE)."""

    method: Literal["GET", "POST", "PATCH", "DELETE"]
    path: str
    verb: str
    result: tuple[type, ...]
    summary: str
    fields: tuple[Field, ...] = ()
    path_fields: tuple[Field, ...] = ()
    call: Callable[[Memory, dict[str, Any]], Any] | None = None
    auth: bool = True
    #: The verb takes the whole body as one mapping argument of this name.
    body_arg: str | None = None

    @property
    def body(self) -> bool:
        return self.method in ("POST", "PATCH")


def _list_memories(memory: Memory, args: dict[str, Any]) -> results.MemoryList | results.Recall:
    """``GET /memories``: with a non-empty ``q``, recall restricted to memory kinds
    (``kind`` one of them, ``layer`` filtering the hits); else ``Memory.memories``."""
    query = args.pop("q", None)
    if not query:
        if args.get("status") == "all":
            args["status"] = None
        return memory.memories(**args)
    for name in ("status", "sort"):
        if name in args:
            raise InvalidInputError(f"{name} applies to listing memories, not to a search (q)")
    limit = args.get("limit", 50)
    kind = args.get("kind")
    layer = args.get("layer")
    kinds = (kind,) if kind is not None else KINDS
    if layer is None:
        return memory.recall(query, k=limit, kinds=kinds)
    if not isinstance(limit, int) or not 1 <= limit <= 1000:
        raise InvalidInputError(f"limit must be an integer from 1 to 1000 with q, got {limit!r}")
    in_layer = {m.id for m in memory.memories(layer=layer, status=None, limit=1_000_000).memories}
    found = memory.recall(query, k=min(1000, limit * 5), kinds=kinds)
    hits = [h for h in found.hits if h.id in in_layer][:limit]
    return dataclasses.replace(found, hits=hits)


def _forget(memory: Memory, args: dict[str, Any]) -> results.Forgotten:
    if sum(k in args for k in ("memory_id", "text", "session_id")) != 1:
        raise InvalidInputError("give exactly one of memory_id, text and session_id")
    return memory.forget(args.get("memory_id"), text=args.get("text"), session_id=args.get("session_id"))


_MEMORY_ID = Field("id", "integer", required=True, arg="memory_id", description="A memory id.", minimum=1)
_FILE = Field("path", required=True, description="A file path relative to the project root.")
_LIMIT = Field("limit", "integer", description="At most this many results.", minimum=1)
_TASK = Field("task_id", description="The task this belongs to.")

ROUTES: tuple[Route, ...] = (
    Route(
        "GET",
        "/health",
        "health",
        (),
        "Liveness: ok and the version (no token needed); with a challenge, the server's pid and its proof "
        "that it knows the token.",
        (
            Field(
                "challenge",
                description="32 to 128 lowercase hex digits, random: the answer adds pid and proof, "
                "HMAC-SHA256(token, 'aircher-mem <pid> <challenge>') in hex.",
            ),
        ),
        auth=False,
    ),
    Route("GET", "/openapi.json", "openapi", (), "This API's OpenAPI 3.1 description."),
    # long-term memory (seed 004)
    Route(
        "POST",
        "/turns",
        "add_turn",
        (results.TurnAdded,),
        "Stores a conversation turn and extracts memories from it.",
        (
            Field("session_id", required=True),
            Field("role", required=True, choices=("user", "assistant")),
            Field("text", required=True),
            Field("speaker"),
            Field("at", "time", description="When it was said: ISO-8601 or Unix seconds (default now)."),
            Field("metadata", "object"),
            Field("auto_extract", "boolean", arg="extract", description="Extract memories (default true)."),
        ),
    ),
    Route(
        "GET",
        "/context",
        "get_context",
        (results.ConversationContext,),
        "The session's last turns and the top k memories by score.",
        (Field("session_id", required=True), Field("k", "integer", minimum=1)),
    ),
    Route(
        "POST",
        "/memories",
        "remember",
        (results.Remembered,),
        "Keeps a memory on purpose (dedup and slot conflicts apply).",
        (
            Field("content", required=True),
            Field("importance", "integer", description="0 or 1.", minimum=0, maximum=1),
            Field("tags", "strings"),
            Field("kind", choices=KINDS),
            Field("level", choices=("L0", "L1", "L2", "L3")),
            Field("domain"),
            Field("module"),
            Field("code_ref"),
            Field("parent_id", "integer", minimum=1),
            Field("at", "time"),
        ),
    ),
    Route(
        "GET",
        "/memories",
        "memories",
        (results.MemoryList, results.Recall),
        "Memories by layer, status and kind (status=all: any); with q, a search over memories.",
        (
            Field("layer", choices=("mid", "long")),
            Field("q", description="Search memories for this text (recall restricted to memory kinds)."),
            _LIMIT,
            Field("status", choices=("active", "archived", "all"), none_value="all"),
            Field("kind", choices=KINDS),
            Field("sort", choices=("score", "recent", "id")),
        ),
        call=_list_memories,
    ),
    Route(
        "PATCH",
        "/memories/{id}",
        "update",
        (results.MemoryRecord,),
        "Changes a memory's content, tags or status.",
        (Field("content"), Field("tags", "strings"), Field("status", choices=("active", "archived"))),
        (_MEMORY_ID,),
    ),
    Route("DELETE", "/memories/{id}", "forget", (results.Forgotten,), "Forgets a memory for good.", (), (_MEMORY_ID,)),
    Route(
        "POST",
        "/forget",
        "forget",
        (results.Forgotten,),
        "Forgets for good a memory (memory_id), the memories and turns holding a text, or a session's turns "
        "and the memories only they support; with the turns the memories came from.",
        (Field("memory_id", "integer", minimum=1), Field("text"), Field("session_id")),
        call=_forget,
    ),
    Route(
        "GET",
        "/memories/{id}/why",
        "explain",
        (results.MemoryExplanation,),
        "Why a memory is where it is: score terms, rules, source turns, history.",
        (),
        (_MEMORY_ID,),
    ),
    Route(
        "GET",
        "/memories/{id}/subtree",
        "subtree",
        (results.MemoryList,),
        "A memory and its descendants.",
        (),
        (_MEMORY_ID,),
    ),
    Route(
        "POST",
        "/memories/{id}/promote",
        "promote",
        (results.MemoryRecord,),
        "Moves a memory to another level of the hierarchy.",
        (Field("level", required=True, choices=("L0", "L1", "L2", "L3")),),
        (_MEMORY_ID,),
    ),
    Route(
        "GET",
        "/facts",
        "facts",
        (results.MemoryList,),
        "Active memories at a level of the hierarchy.",
        (Field("level", choices=("L0", "L1", "L2", "L3")), Field("domain")),
    ),
    Route(
        "POST",
        "/gc",
        "gc",
        (results.GcReport,),
        "Rescores memories, promotes mid -> long, archives what decayed.",
        (Field("dry_run", "boolean"),),
    ),
    Route(
        "POST",
        "/recall",
        "recall",
        (results.Recall,),
        "Memories and raw turns relevant to a query, best first.",
        (
            Field("query", required=True),
            Field("k", "integer", minimum=1),
            Field("session_id"),
            Field("kinds", "strings", description="Memory kinds and/or 'turn'."),
            Field("at", "time", description="What was valid then: ISO-8601 or Unix seconds."),
        ),
    ),
    Route(
        "POST",
        "/feedback",
        "feedback",
        (results.FeedbackResult,),
        "Tells memory that a recalled memory was cited (used) or ignored.",
        (
            Field("memory_id", "integer", required=True, minimum=1),
            Field("signal", required=True, choices=("cited", "ignored")),
        ),
    ),
    # the code graph
    Route(
        "GET",
        "/symbols",
        "symbol",
        (results.Symbols,),
        "Where a name (or Class.method) is defined; prefix or fuzzy matches.",
        (Field("name", required=True), Field("prefix", "boolean"), Field("fuzzy", "boolean")),
    ),
    Route("GET", "/callers", "callers", (results.Calls,), "Who calls a name.", (Field("name", required=True),)),
    Route("GET", "/callees", "callees", (results.Calls,), "What a name calls.", (Field("name", required=True),)),
    Route(
        "GET",
        "/references",
        "references",
        (results.ReferenceList,),
        "Every edge into the definitions named name.",
        (Field("name", required=True), Field("kind", choices=("calls", "references", "inherits", "uses", "imports"))),
    ),
    Route(
        "GET",
        "/neighbourhood",
        "neighbourhood",
        (results.Neighbourhood,),
        "Definitions within hops edges of a name.",
        (Field("name", required=True), Field("hops", "integer", minimum=1)),
    ),
    Route(
        "POST",
        "/search/code",
        "search_code",
        (results.CodeSearch,),
        "The definitions or files most relevant to a question in plain words.",
        (
            Field("text", required=True),
            Field("k", "integer", minimum=1),
            Field("level", choices=("definition", "file")),
            Field("focus_files", "strings"),
            Field("code", "boolean", description="Include each definition's source (default true)."),
        ),
    ),
    Route(
        "POST",
        "/code/relevant",
        "relevant_code",
        (results.CodeResult,),
        "The code most relevant to a query within a token budget.",
        (Field("query", required=True), Field("max_tokens", "integer", minimum=1), Field("focus_files", "strings")),
    ),
    Route(
        "GET",
        "/files/{path}/history",
        "file_history",
        (results.FileHistory,),
        "What was done with a file in earlier sessions, and failed tool runs on it.",
        (_LIMIT,),
        (_FILE,),
    ),
    Route(
        "GET",
        "/files/{path}/outline",
        "outline",
        (results.FileOutline,),
        "What a file defines, in line order.",
        (),
        (_FILE,),
    ),
    Route(
        "GET",
        "/files/{path}/dependencies",
        "dependencies",
        (results.Dependencies,),
        "The project files a file imports and those importing it.",
        (),
        (_FILE,),
    ),
    # episodic memory
    Route(
        "GET",
        "/tasks",
        "tasks",
        (results.Tasks,),
        "Open tasks; with query, the most similar past tasks.",
        (Field("query"), _LIMIT),
    ),
    Route(
        "GET",
        "/co-edits",
        "co_edited_files",
        (results.CoEdits,),
        "Files edited together at least min_count times.",
        (Field("path"), Field("min_count", "integer", minimum=1)),
    ),
    Route(
        "GET",
        "/patterns",
        "patterns",
        (results.Patterns,),
        "Learned patterns, most observed first.",
        (Field("type", arg="pattern_type", choices=("co-edit", "error-fix")), Field("min_count", "integer", minimum=1)),
    ),
    Route(
        "POST",
        "/record/tool",
        "record_tool_call",
        (results.Recorded,),
        "Remembers a tool call.",
        (
            Field("tool_name", required=True),
            Field("parameters", "any"),
            Field("success", "boolean", required=True),
            Field("error_message"),
            Field("duration_ms", "integer", minimum=0),
            Field("file_path"),
            _TASK,
        ),
    ),
    Route(
        "POST",
        "/record/file",
        "record_file_interaction",
        (results.Recorded,),
        "Remembers a read, write, edit, search or analysis of a file.",
        (
            Field("path", required=True),
            Field("operation", required=True),
            Field("line_range", "line_range"),
            Field("success", "boolean"),
            Field("changes_summary"),
            _TASK,
        ),
    ),
    Route(
        "POST",
        "/record/snapshot",
        "record_snapshot",
        (results.Recorded,),
        "Remembers a context-window snapshot (seed 002's shape), e.g. before the agent compacts.",
        (
            Field("timestamp", "number", required=True, description="Unix seconds."),
            Field("session_id", required=True),
            Field("task_id"),
            Field("total_tokens", "integer", required=True, minimum=0),
            Field("item_count", "integer", minimum=0),
            Field("items", "objects", required=True, description="The window's items: id, type, tokens, ..."),
            Field("pruned_items", "objects"),
            Field("reason", required=True),
        ),
        body_arg="snapshot",
    ),
    Route(
        "POST",
        "/task",
        "task",
        (results.TaskStatus,),
        "A task lifecycle step (start needs a description).",
        (
            Field("action", required=True, choices=("start", "pause", "resume", "complete", "fail")),
            Field("task_id", required=True),
            Field("description"),
            Field("outcome"),
        ),
    ),
    # overview
    Route("GET", "/stats", "stats", (results.Stats,), "Sizes of the graph and the store, tool success rates."),
    Route(
        "POST",
        "/index",
        "index",
        (results.IndexReport,),
        "Builds the code graph, or updates it incrementally.",
        (Field("full", "boolean"),),
    ),
    Route(
        "POST",
        "/context/preview",
        "preview_context",
        (results.ContextPreview,),
        "What prepare_context(message) puts in a fresh window.",
        (
            Field("message", required=True),
            Field("max_tokens", "integer", minimum=1),
            Field("code_tokens", "integer", minimum=1),
        ),
    ),
)


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


def proof(token: str, challenge: str, pid: int) -> str:
    """What a server holding ``token`` answers to ``challenge`` (hex HMAC-SHA256)."""
    message = f"aircher-mem {pid} {challenge}".encode("ascii")
    return hmac.new(token.encode("utf-8"), message, hashlib.sha256).hexdigest()


def _health(token: str, args: Mapping[str, Any]) -> Health | HealthProof:
    challenge = args.get("challenge")
    if challenge is None:
        return Health(True, __version__)
    if not _CHALLENGE.fullmatch(challenge):
        raise _bad("challenge must be 32 to 128 lowercase hex digits")
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


_INT = re.compile(r"-?[0-9]{1,19}")
_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")


def _parse_time(name: str, value: object) -> float | dt.datetime:
    if isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", text):
            return _finite(text)
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            return dt.datetime.fromisoformat(text)
        except ValueError:
            raise _bad(f"{name} must be ISO-8601 (2024-05-07T12:00:00Z) or Unix seconds, got {value!r:.80}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(f"{name} must be ISO-8601 text or Unix seconds, got {_kind(value)}")
    if isinstance(value, int) and abs(value) > _MAX_INT:
        raise _bad(f"{name} is out of range: {value}")
    return float(value)


def _kind(value: object) -> str:
    names: dict[type, str] = {dict: "an object", list: "an array", str: "a string", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def convert(field: Field, value: object, *, query: bool) -> Any:
    """``value`` (JSON, or a query string's text when ``query``) as the verb's
    argument for ``field``; :class:`InvalidInputError` when it does not fit."""
    name, kind = field.name, field.type
    if query and isinstance(value, str):
        if kind == "integer":
            if not _INT.fullmatch(value.strip()):
                raise _bad(f"{name} must be an integer, got {value!r:.80}")
            value = int(value)
        elif kind == "boolean":
            low = value.strip().lower()
            if low not in _TRUE + _FALSE:
                raise _bad(f"{name} must be true or false, got {value!r:.80}")
            value = low in _TRUE
    if kind == "time":
        return _parse_time(name, value)
    if kind == "any":
        return value
    if kind == "string":
        if not isinstance(value, str):
            raise _bad(f"{name} must be a string, got {_kind(value)}")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise _bad(f"{name} holds a lone surrogate: {value!r:.80}") from None
        if field.choices and value not in field.choices:
            raise _bad(f"{name} must be one of {', '.join(field.choices)}, got {value!r:.80}")
        return value
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            raise _bad(f"{name} must be an integer, got {_kind(value)}")
        if abs(value) > _MAX_INT:
            raise _bad(f"{name} is out of range: {value}")
        if (field.minimum is not None and value < field.minimum) or (
            field.maximum is not None and value > field.maximum
        ):
            low = "" if field.minimum is None else f" from {field.minimum}"
            high = "" if field.maximum is None else f" to {field.maximum}"
            raise _bad(f"{name} must be an integer{low}{high}, got {value}")
        return value
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _bad(f"{name} must be a number, got {_kind(value)}")
        return value
    if kind == "boolean":
        if not isinstance(value, bool):
            raise _bad(f"{name} must be true or false, got {_kind(value)}")
        return value
    if kind == "strings":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _bad(f"{name} must be an array of strings, got {_kind(value)}")
        return list(value)
    if kind == "object":
        if not isinstance(value, dict):
            raise _bad(f"{name} must be an object, got {_kind(value)}")
        return value
    if kind == "objects":
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise _bad(f"{name} must be an array of objects, got {_kind(value)}")
        return value
    if kind == "line_range":
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= _MAX_INT for v in value)
        ):
            raise _bad(f"{name} must be [first, last] line numbers, got {value!r:.80}")
        return (value[0], value[1])
    raise AssertionError(f"unknown field type {kind}")  # pragma: no cover


def arguments(route: Route, values: Mapping[str, object], *, query: bool) -> dict[str, Any]:
    """The verb's keyword arguments from a request's fields: unknown fields, missing
    required ones and values of the wrong type are :class:`InvalidInputError`;
    null (or, in a query, an empty value for a free-text field) for an optional
    field leaves it out."""
    known = {f.name: f for f in route.fields}
    unknown = sorted(set(values) - set(known))
    if unknown:
        allowed = ", ".join(known) or "none"
        raise _bad(f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; allowed: {allowed}")
    out: dict[str, Any] = {}
    for field in route.fields:
        value = values.get(field.name)
        if value is None or (query and value == "" and field.type == "string" and not field.choices):
            if field.required:
                raise _bad(f"{field.name} is required")
            continue
        out[field.kwarg] = convert(field, value, query=query)
    return out


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


class _Guard:
    """Host, Origin, token and body-size checks in front of every route."""

    def __init__(self, app: Any, *, token: str, hosts: frozenset[str], max_body: int) -> None:
        self.app = app
        self.token = token.encode("ascii")
        self.hosts = hosts
        self.max_body = max_body

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
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
            if scheme.lower() != b"bearer" or not hmac.compare_digest(token.strip(), self.token):
                return (
                    401,
                    "unauthorized",
                    "missing or wrong token: send Authorization: Bearer <token from server.json>",
                )
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


def _starlette_path(route: Route) -> str:
    path = route.path
    for field in route.path_fields:
        if field.name == "path":
            path = path.replace("{path}", "{path:path}")
    return path


def _path_value(field: Field, text: str) -> Any:
    if field.type == "integer":
        if not _INT.fullmatch(text):
            raise _bad(f"{field.name} must be an integer, got {text!r:.80}")
        return convert(field, int(text), query=False)
    return convert(field, text, query=True)


def build_app(
    memory: Memory,
    *,
    token: str,
    hosts: tuple[str, ...] = ("127.0.0.1:8787", "localhost:8787", "[::1]:8787"),
    max_body: int | None = None,
) -> Any:
    """The ASGI app over ``memory``: ``hosts`` are the Host headers accepted,
    ``token`` the bearer token every route but ``GET /health`` needs, ``max_body``
    the largest body (default: the policy's ``[server] max_body_bytes``)."""
    if max_body is None:
        max_body = memory.policy.server.max_body_bytes
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.requests import ClientDisconnect, Request
    from starlette.routing import Route as StarletteRoute

    spec = openapi()

    def handler(route: Route) -> Callable[[Request], Any]:
        async def handle(request: Request) -> Any:
            try:
                if route.verb == "openapi":
                    return _json_response(spec)
                args: dict[str, Any] = {}
                for field in route.path_fields:
                    args[field.kwarg] = _path_value(field, request.path_params[field.name])
                if route.body:
                    body = await _read_body(request, max_body)
                    values = parse_json(body) if body.strip(b" \t\n\r") else {}  # JSON whitespace only
                    if not isinstance(values, dict):
                        raise _bad(f"the body must be a JSON object, got {_kind(values)}")
                    args.update(arguments(route, values, query=False))
                else:
                    pairs = request.query_params.multi_items()
                    names = [k for k, _ in pairs]
                    repeated = sorted({k for k in names if names.count(k) > 1})
                    if repeated:
                        raise _bad(f"repeated query parameter: {', '.join(repeated)}")
                    _check_text(pairs)
                    args.update(arguments(route, dict(pairs), query=True))
                if route.verb == "health":
                    return _json_response(_health(token, args))
                if route.call is not None:
                    result = await run_in_threadpool(route.call, memory, args)
                elif route.body_arg is not None:
                    result = await run_in_threadpool(getattr(memory, route.verb), **{route.body_arg: args})
                else:
                    result = await run_in_threadpool(getattr(memory, route.verb), **args)
                return _json_response(result)
            except ClientDisconnect:  # closed before its body was whole (or timed out): nobody to answer
                return _error_response(400, "invalid_input", "the client went away before the body was complete")
            except AircherError as exc:
                status = status_of(exc)
                if status >= 500:
                    log.warning("%s %s: %s", route.method, route.path, exc)
                return _error_response(status, exc.code, str(exc), type(exc).__name__)
            except Exception as exc:
                log.exception("%s %s failed", route.method, route.path)
                return _error_response(500, "internal", f"internal error ({type(exc).__name__}); see the server log")

        return handle

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
    for r in ROUTES:
        by_path.setdefault(_starlette_path(r), {})[r.method] = handler(r)

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
    return _Guard(app, token=token, hosts=frozenset(h.lower() for h in hosts), max_body=max_body)


def _hosts(port: int) -> tuple[str, ...]:
    return (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}")


# -- OpenAPI ----------------------------------------------------------------------------

_FIELD_SCHEMAS: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "integer": {"type": "integer", "minimum": -_MAX_INT, "maximum": _MAX_INT},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
    "strings": {"type": "array", "items": {"type": "string"}},
    "object": {"type": "object"},
    "objects": {"type": "array", "items": {"type": "object"}},
    "any": {},
    "time": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "number"}]},
    "line_range": {"type": "array", "items": {"type": "integer", "minimum": 0}, "minItems": 2, "maxItems": 2},
}


def _field_schema(field: Field, *, nullable: bool = False) -> dict[str, Any]:
    """A field's JSON schema; ``nullable`` adds null (an optional body field sent as
    null is left out, as if absent)."""
    schema = dict(_FIELD_SCHEMAS[field.type])
    if field.choices:
        schema["enum"] = list(field.choices)
    if field.minimum is not None:
        schema["minimum"] = field.minimum
    if field.maximum is not None:
        schema["maximum"] = field.maximum
    if nullable and field.type != "any":
        schema = {"anyOf": [schema, {"type": "null"}]}
    if field.description:
        schema["description"] = field.description
    return schema


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


def openapi() -> dict[str, Any]:
    """The OpenAPI 3.1 description of :data:`ROUTES`."""
    components: dict[str, Any] = {
        "Error": {
            "type": "object",
            "properties": {
                "error": {
                    "type": "object",
                    "properties": {
                        "code": {"type": "string"},
                        "type": {"type": "string"},
                        "message": {"type": "string"},
                    },
                    "required": ["code", "type", "message"],
                }
            },
            "required": ["error"],
        }
    }
    error = {
        "description": "An error",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }
    paths: dict[str, Any] = {}
    for route in ROUTES:
        if route.verb == "health":
            result: dict[str, Any] = {"anyOf": [type_schema(t, components) for t in (Health, HealthProof)]}
        elif route.verb == "openapi":
            result = {"type": "object"}
        elif len(route.result) == 1:
            result = type_schema(route.result[0], components)
        else:
            result = {"anyOf": [type_schema(t, components) for t in route.result]}
        operation: dict[str, Any] = {
            "operationId": f"{route.method.lower()}_{route.verb}" + ("_search" if route.call is _forget else ""),
            "summary": route.summary,
            "responses": {
                "200": {"description": "OK", "content": {"application/json": {"schema": result}}},
                **{str(s): error for s in (400, 401, 403, 404, 405, 413, 421, 500, 503)},
            },
        }
        if not route.auth:
            operation["security"] = []
        parameters = [
            {"name": f.name, "in": "path", "required": True, "schema": _field_schema(f)} for f in route.path_fields
        ]
        if route.body:
            properties = {f.name: _field_schema(f, nullable=not f.required) for f in route.fields}
            body_schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
            required = [f.name for f in route.fields if f.required]
            if required:
                body_schema["required"] = required
            operation["requestBody"] = {
                "required": bool(required),
                "content": {"application/json": {"schema": body_schema}},
            }
        else:
            parameters += [
                {"name": f.name, "in": "query", "required": f.required, "schema": _field_schema(f)}
                for f in route.fields
            ]
        if parameters:
            operation["parameters"] = parameters
        paths.setdefault(route.path, {})[route.method.lower()] = operation
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


@dataclasses.dataclass(frozen=True)
class ServerInfo:
    """What server.json says: where the server listens, its pid and token."""

    host: str
    port: int
    pid: int
    token: str


def server_file(root: str | os.PathLike[str]) -> Path:
    return Path(root) / STORE_DIR / SERVER_FILE


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


def _write_info(path: Path, info: ServerInfo, *, proof_timeout: float | None = None) -> None:
    """Writes server.json (0600) atomically and exclusively: a live server's file
    (one whose server proves it knows its token) is never replaced
    (:class:`StoreLockedError`), a stale one is."""
    wait = ServerPolicy().proof_timeout_seconds if proof_timeout is None else proof_timeout
    data = json.dumps(dataclasses.asdict(info)).encode("utf-8")
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
            idle = [c for c in open_ if c is not self and c._idle()]
            victim = min(idle, key=lambda c: c._since) if idle else self
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
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise InvalidInputError(f"port must be an integer from 0 to 65535, got {port!r:.80}")


def _claim(memory: Memory) -> None:
    """Refuses (:class:`StoreLockedError`) when a live server runs for the project,
    then takes the store (:class:`StoreLockedError` when another process has it)."""
    if memory.root in _RUNNING:
        raise StoreLockedError(f"this process already serves {memory.root}")
    path = server_file(memory.root)
    other = _read_info(path)
    if other is not None and _live(other, memory.policy.server.proof_timeout_seconds):
        raise _already(path, other)
    memory.episodic  # noqa: B018 - the store is ours from now on (StoreLockedError if not)


class RunningServer:
    """A server started by :func:`serve_in_thread`: ``info`` is what its server.json
    says, ``url`` where it listens; ``stop()`` (or leaving a ``with`` block) shuts it
    down and removes the file. The Memory stays its owner's to close, after
    ``stop()``."""

    def __init__(
        self, memory: Memory, info: ServerInfo, sock: socket.socket, server: Any, thread: threading.Thread
    ) -> None:
        self.memory = memory
        self.info = info
        self._sock = sock
        self._server = server
        self._thread = thread
        self._stopped = False

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
    log.info("aircher-mem serves %s on http://%s:%d", memory.root, host, info.port)
    return RunningServer(memory, info, sock, server, thread)


def serve(
    root: str | os.PathLike[str],
    *,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    policy: Policy | None = None,
) -> None:
    """Serves the project's memory over HTTP on ``host`` (loopback only) and
    ``port`` (0: a free one) until SIGINT or SIGTERM, as the store's single writer
    (:func:`serve_in_thread`; the graph is refreshed first when ``[server]
    index_at_start``). Refuses (:class:`StoreLockedError`) when a live server
    already runs for the project or another process holds the store; a stale
    server.json is replaced."""
    _check_address(host, port)
    memory = Memory.open(root, policy=policy)
    stop = threading.Event()
    previous: dict[signal.Signals, Any] = {}
    running: RunningServer | None = None
    try:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                previous[sig] = signal.signal(sig, lambda *_: stop.set())
        _claim(memory)  # before indexing: never rewrite the graph of a live server
        if memory.indexed and memory.policy.server.index_at_start:
            try:
                memory.index()
            except (AircherError, OSError) as exc:
                log.warning("could not refresh the code graph of %s: %s", memory.root, exc)
        if not stop.is_set():
            running = serve_in_thread(memory, host=host, port=port)
            while running.running and not stop.wait(0.2):
                pass
    finally:
        try:
            if running is not None:
                running.stop()
        finally:
            memory.close()
            for sig, handler in previous.items():
                signal.signal(sig, handler)


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
        self.proof_timeout = ServerPolicy().proof_timeout_seconds if proof_timeout is None else proof_timeout
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
        challenge = secrets.token_hex(16)
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
    ) -> Any:
        """Sends one request (``path`` already %-quoted; ``params`` None values are
        left out, booleans sent as true/false) and returns the decoded JSON body."""
        if not self.proven:
            self.prove()
        if params:
            query = {
                k: ("true" if v else "false") if isinstance(v, bool) else str(v)
                for k, v in params.items()
                if v is not None
            }
            if query:
                path = f"{path}?{urlencode(query)}"
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        body: bytes | None = None
        if json is not None:
            body = _dumps(json)
            headers["Content-Type"] = "application/json"
        try:
            status, data = self._exchange(method, path, body, headers, self.timeout)
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
        """One request on a fresh connection: the status and (up to ``limit`` bytes
        of) the body."""
        address = "127.0.0.1" if self.host == "localhost" else self.host
        conn = http.client.HTTPConnection(address, self.port, timeout=timeout)
        try:
            try:
                conn.connect()
            except ConnectionRefusedError:
                raise ServerGoneError(
                    f"no aircher-mem server listens at {self.host}:{self.port} any more (the request was not sent)"
                ) from None
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            return response.status, response.read() if limit is None else response.read(limit)
        except (OSError, http.client.HTTPException) as exc:
            raise ServerUnavailableError(
                f"the aircher-mem server at {self.host}:{self.port} did not answer: {exc or type(exc).__name__}"
            ) from None
        finally:
            conn.close()


# -- Memory over HTTP -------------------------------------------------------------------


def _client_routes() -> dict[str, Route]:
    """The route a client calls for each verb: the first of ``ROUTES`` naming it,
    but ``POST /forget`` for ``forget`` (it takes an id or a text)."""
    found: dict[str, Route] = {}
    for route in ROUTES:
        if route.verb in ("health", "openapi") or (route.verb == "forget" and route.call is not _forget):
            continue
        found.setdefault(route.verb, route)
    return found


_CLIENT_ROUTES = _client_routes()


def _returns(verb: str) -> Any:
    return typing.get_type_hints(getattr(Memory, verb))["return"]


def _encode(value: Any) -> Any:
    """An argument as JSON: datetimes as ISO-8601, paths as text, tuples as lists."""
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
    None. Errors are the server's, as :class:`Client` raises them."""

    def __init__(
        self, client: Client, root: str | os.PathLike[str], *, fallback: Callable[[], Memory] | None = None
    ) -> None:
        self.client = client
        self.root = Path(root)
        self.fallback = fallback
        self.local: Memory | None = None

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
        if verb.startswith("_") or verb not in _CLIENT_ROUTES:
            raise AttributeError(f"{type(self).__name__} has no verb {verb!r}")

        def call(*args: Any, **kwargs: Any) -> Any:
            return self.call(verb, *args, **kwargs)

        call.__name__ = verb
        return call

    def call(self, verb: str, *args: Any, **kwargs: Any) -> Any:
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

    def _call(self, verb: str, *args: Any, **kwargs: Any) -> Any:
        route = _CLIENT_ROUTES[verb]
        bound = inspect.signature(getattr(Memory, verb)).bind(self, *args, **kwargs)
        values = dict(bound.arguments)
        del values[next(iter(values))]  # self
        path = route.path
        fields = {f.kwarg: f for f in route.fields + route.path_fields}
        sent: dict[str, Any] = {}
        if route.body_arg is not None:
            whole = values.pop(route.body_arg)
            if not isinstance(whole, Mapping):
                raise InvalidInputError(f"{route.body_arg} must be a mapping, got {type(whole).__name__}")
            sent.update(_encode(whole))
        for kwarg, value in values.items():
            field = fields.get(kwarg)
            if value is None and (field is None or field.none_value is None):
                continue  # the verb's default, on the server too
            if field is None:
                raise InvalidInputError(f"{verb}: {kwarg} cannot be sent to the server")
            value = field.none_value if value is None else _encode(value)
            if field in route.path_fields:
                path = path.replace(f"{{{field.name}}}", quote(str(value), safe=""))
            else:
                sent[field.name] = value
        if route.body:
            answer = self.client.request(route.method, path, json=sent)
        else:
            answer = self.client.request(route.method, path, params=sent)
        try:
            return wire.from_json(_returns(verb), answer)
        except TypeError as exc:
            raise HTTPError(
                f"the server's answer to {verb} does not fit: {exc}", status=502, code="bad_response"
            ) from None


def connect(
    root: str | os.PathLike[str] | None = None, *, create: bool = False, policy: Policy | None = None
) -> Memory | RemoteMemory:
    """The project's memory: a :class:`RemoteMemory` when a server runs for it
    (:meth:`Client.discover`: it proved it knows server.json's token), else
    ``Memory.open(root, create=create)`` (a stale server.json is ignored). ``root``
    defaults to the nearest folder with a store from here upward. The remote one
    falls back to the store itself when nothing listens where server.json says."""
    if root is None:
        root = find_root()
    server = (policy or Policy.load(Path(root))).server
    client = Client.discover(root, timeout=server.client_timeout_seconds, proof_timeout=server.proof_timeout_seconds)
    if client is None:
        return Memory.open(root, create=create, policy=policy)
    where = Path(root)
    return RemoteMemory(client, where.resolve(), fallback=lambda: Memory.open(where, create=create, policy=policy))


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
