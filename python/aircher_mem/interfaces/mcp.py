"""The MCP server: a project's memory as tools for an agent, over stdio, with the
official ``mcp`` SDK.

Each tool is one verb of the registry (:mod:`aircher_mem.verbs`), with the verb's
name, its parameters and its docstring as the description; it answers the verb's result as
compact JSON, the same keys as ``aircher-mem <command> --json``. Paths are relative
to the project root (absolute ones must lie inside it). An unknown name or file, a
bad or missing argument, and an argument the tool does not take (a misspelt name:
refused, never ignored) come back as an error result ``{"error": {"code", "type",
"message"}}`` the model can read, the same JSON the HTTP server answers, and the
server keeps serving.

The long-term tools (``remember``, ``recall``, ``forget``, ``explain``, ``feedback``,
``add_turn``) keep what the agent was told and decided across sessions; their
descriptions tell the model when to remember, what makes a good memory and how to
cite one.

The graph is refreshed (incrementally) at start, and by the service before a graph
query when the agent recorded an edit or ``[server] refresh_seconds`` passed. When a
server runs for the project at start (``aircher-mem serve``, or another ``aircher-mem
mcp``), the tools are its clients over HTTP (the same JSON) and this process never
opens the store. Otherwise this process holds the store and is the project's server
as ``aircher-mem serve`` would be: it serves the HTTP API on a free loopback port and
writes server.json, so the CLI and the hooks beside it go through it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

from .. import verbs
from .._core import __version__
from ..config import Policy
from ..errors import AircherError, InvalidInputError
from ..memory import Memory
from . import wire
from .client import Client, RemoteMemory
from .http import Consolidating, RunningServer, serve_in_thread, warm
from .thin import opening_alone

__all__ = ["build_server", "serve", "tools", "description", "input_schema"]

log = logging.getLogger("aircher_mem.mcp")

INSTRUCTIONS = (
    "Memory of this repository for a coding agent. The code graph answers where things are defined "
    "(find_symbol), who calls what (callers, callees), what refers to a definition (references), "
    "what lies around it (neighbourhood), which files import which (dependencies), "
    "what a file defines (file_definitions), which code answers a question in plain words (search_code) and "
    "which code matters for a task (relevant_code, within a token budget). "
    "The episodic memory remembers earlier sessions: file_history, co_edited_files, tasks, patterns. Report your "
    "own work with task (start one before working, complete it when done), record_tool_call and "
    "record_file_interaction so later sessions can use it. "
    "The long-term memory keeps what you were told and decided: recall(query) before you answer or act on "
    "something the user may have said before (preferences, decisions, facts about the project); remember(content) "
    "one self-contained fact, decision or preference with its why when the user states one; feedback(memory_id, "
    "'cited') for each recalled memory you used and 'ignored' for those shown but irrelevant; forget(memory_id) "
    "when the user asks or a memory is wrong; explain(memory_id) says why a memory ranks where it does; add_turn "
    "stores a conversation turn and extracts memories from it. Paths are relative to the project root. Names may "
    'be qualified as Class.method. Errors come back as {"error": {"code", "type", "message"}}.'
)


def description(v: verbs.Verb) -> str:
    """A verb's docstring as a tool description (see :func:`aircher_mem.verbs.plain`)."""
    return verbs.plain(v.description)


def tools() -> tuple[str, ...]:
    """The tools the server offers: every verb of the registry offered over MCP."""
    return tuple(v.name for v in verbs.all_verbs("mcp"))


def input_schema(v: verbs.Verb) -> dict[str, Any]:
    """The JSON schema of ``v``'s arguments, as its tool shows it: the registry's
    model of the verb (:func:`aircher_mem.verbs.arguments_model`, which refuses an
    argument it does not declare: ``additionalProperties`` false), a typed object
    among them (a snapshot) written out in place rather than referred to."""
    schema = verbs.arguments_model(v).model_json_schema()
    schema["title"] = f"{v.name}Arguments"
    definitions = schema.pop("$defs", {})
    inlined = _inline(schema, definitions)
    assert isinstance(inlined, dict)
    return inlined


_DEFS = "#/$defs/"


def _inline(node: Any, definitions: dict[str, Any]) -> Any:
    """``node`` with each ``$ref`` into ``definitions`` replaced by the definition
    (keys beside the ``$ref``, a parameter's description, win). The registry's
    typed objects do not refer to themselves, so this ends."""
    if isinstance(node, list):
        return [_inline(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _inline(value, definitions) for key, value in node.items() if key != "$ref"}
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(_DEFS):
        return {**_inline(definitions[ref.removeprefix(_DEFS)], definitions), **out}
    return out


def _answer(call: Callable[[], Any]) -> CallToolResult:
    """Runs one verb: its result as JSON, or its error as an error result holding
    the error JSON (and nothing else, so the model can parse it). An error that is
    not the service's (a bug) is logged here and answered as ``internal``."""
    try:
        return CallToolResult(content=[TextContent(type="text", text=wire.dumps(call()))])
    except (AircherError, OSError) as exc:
        return _error(exc)
    except Exception as exc:  # the last resort: the model gets an answer, the log the traceback
        log.exception("a tool failed")
        error = wire.error_json(exc)
        error["error"]["message"] = f"internal error ({type(exc).__name__}); see the server log"
        return CallToolResult(content=[TextContent(type="text", text=wire.dumps(error))], is_error=True)


def _error(exc: BaseException) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=wire.dumps(wire.error_json(exc)))], is_error=True)


def _run(memory: Memory | RemoteMemory, v: verbs.Verb, arguments: dict[str, Any]) -> Any:
    """``v`` on ``memory`` with the tool call's arguments, checked as the HTTP server
    checks a request's JSON body (:meth:`aircher_mem.verbs.Verb.arguments_json`): an
    argument the verb does not declare (a misspelt name), a missing one or a value
    of the wrong type is an :class:`InvalidInputError`, and the verb does not run."""
    try:
        body = json.dumps(arguments, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"the arguments must be JSON: {exc}") from None
    return getattr(memory, v.name)(**v.arguments_json(body))


def build_server(memory: Memory | RemoteMemory) -> Server[Any]:
    """An MCP server over ``memory`` (a :class:`Memory`, or the project's HTTP server
    as a :class:`RemoteMemory`: the same results) with a tool per verb the registry
    offers over MCP (:func:`tools`), named as the verb, described by its docstring
    (:func:`description`), taking the arguments of :func:`input_schema`.

    The SDK's low-level server: a tool call reaches :func:`_run` with its arguments
    as the client sent them, so that they are checked once, by the registry, and an
    unknown one is refused rather than dropped."""
    offered = {v.name: v for v in verbs.all_verbs("mcp")}
    listed = ListToolsResult(
        tools=[Tool(name=v.name, description=description(v), input_schema=input_schema(v)) for v in offered.values()]
    )
    schemas = {tool.name: tool.input_schema for tool in listed.tools}

    async def list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        return listed

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        v = offered.get(params.name)
        if v is None:
            return _error(InvalidInputError(f"no tool named {params.name!r}; tools: {', '.join(offered)}"))
        arguments = dict(params.arguments or {})
        return await anyio.to_thread.run_sync(_answer, functools.partial(_run, memory, v, arguments))

    return Server(
        "aircher-mem",
        version=__version__,
        instructions=INSTRUCTIONS,
        get_tool_input_schema=schemas.get,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _serve_stdio(server: Server[Any]) -> None:
    """Serves ``server`` on stdin/stdout until the client disconnects."""

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


def serve(root: str | os.PathLike[str], *, index: bool | None = None, refresh_seconds: float | None = None) -> None:
    """Serves MCP on stdin/stdout until the client disconnects. When a server runs
    for the project (``aircher-mem serve``, or another ``aircher-mem mcp``), every
    tool is a request to it (it holds the store and refreshes the graph itself); if
    it stops, the tools open the store here. Otherwise this opens (or creates) the
    project's memory, refreshes the graph (unless ``index`` is False, or None and
    the policy's ``[server] index_at_start`` is off), serves the HTTP API on a free
    loopback port for the project's other processes (:func:`.http.serve_in_thread`:
    server.json written, removed at exit), consolidates on the server's schedule
    (:class:`.http.Consolidating`), reads the store in beside the handshake
    (:func:`.http.warm`), serves MCP, then flushes and closes;
    ``refresh_seconds`` overrides the policy's ``[server] refresh_seconds``."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    policy = None
    if refresh_seconds is not None:
        loaded = Policy.load(Path(root))
        policy = dataclasses.replace(loaded, server=dataclasses.replace(loaded.server, refresh_seconds=refresh_seconds))
    server = (policy or Policy.load(Path(root))).server
    client = Client.discover(root, timeout=server.client_timeout_seconds, proof_timeout=server.proof_timeout_seconds)
    if client is not None:  # the project's HTTP server holds the store: be its client
        print(f"aircher-mem: {root}: using the server at http://{client.host}:{client.port}", file=sys.stderr)
        with RemoteMemory(
            client, Path(root).resolve(), fallback=lambda: Memory.open(Path(root), policy=policy)
        ) as remote:
            _serve_stdio(build_server(remote))
        return
    opening_alone()
    with Memory.open(Path(root), policy=policy) as memory:
        if index if index is not None else memory.policy.server.index_at_start:
            report = memory.index()
            print(
                f"aircher-mem: {memory.root}: {report.files} files indexed "
                f"({'full build' if report.full else 'incremental'}, {report.seconds:.2f} s)",
                file=sys.stderr,
            )
        running = _share(memory)
        schedule = Consolidating(memory).in_background()
        # the store read in beside the MCP handshake, for the hooks and the first tool
        warming = threading.Thread(target=warm, args=(memory,), name="aircher-mem-warm", daemon=True)
        warming.start()
        try:
            _serve_stdio(build_server(memory))
        finally:
            warming.join()  # a read under way ends before the store closes
            schedule.stop()  # a pass under way ends before the store closes
            if running is not None:
                running.stop()


def _share(memory: Memory) -> RunningServer | None:
    """The HTTP API over ``memory`` for the project's other processes (the CLI, the
    hooks), as ``aircher-mem serve`` gives it; None (logged) when it cannot start:
    the tools work all the same."""
    try:
        running = serve_in_thread(memory)
    except (AircherError, OSError) as exc:
        log.warning("aircher-mem: %s: the store is not served to other processes: %s", memory.root, exc)
        return None
    print(f"aircher-mem: {memory.root}: serving the store to other processes at {running.url}", file=sys.stderr)
    return running
