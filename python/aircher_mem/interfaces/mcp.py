"""The MCP server: a project's memory as tools for an agent, over stdio, with the
official ``mcp`` SDK.

Each tool is one verb of the registry (:mod:`aircher_mem.verbs`), with the verb's
name, its parameters and its docstring as the description; it answers the verb's result as
compact JSON, the same keys as ``aircher-mem <command> --json``. Paths are relative
to the project root (absolute ones must lie inside it); an unknown name or file or a
bad argument comes back as an error result ``{"error": {"code", "type",
"message"}}`` the model can read, and the server keeps serving.

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
import inspect
import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import WithJsonSchema

from .. import verbs
from .._core import __version__
from ..config import Policy
from ..errors import AircherError
from ..memory import Memory
from . import wire
from .client import Client, RemoteMemory
from .http import RunningServer, serve_in_thread

__all__ = ["build_server", "serve", "tools", "description"]

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


def _answer(call: Callable[[], Any]) -> CallToolResult:
    """Runs one verb: its result as JSON, or its error as an error result holding
    the error JSON (and nothing else, so the model can parse it)."""
    try:
        return CallToolResult(content=[TextContent(type="text", text=wire.dumps(call()))])
    except (AircherError, OSError) as exc:
        return CallToolResult(content=[TextContent(type="text", text=wire.dumps(wire.error_json(exc)))], is_error=True)


def _tool(memory: Memory | RemoteMemory, v: verbs.Verb) -> Callable[..., CallToolResult]:
    """The tool function of ``v``. Its parameters show the SDK the verb's own JSON
    schema but take any value, so that the arguments are checked here, as the HTTP
    server checks them, and a bad one comes back as the error JSON the model reads."""
    properties = verbs.arguments_model(v).model_json_schema()["properties"]

    def run(**arguments: Any) -> CallToolResult:
        def call() -> Any:
            body = json.dumps(arguments, ensure_ascii=False, allow_nan=False).encode("utf-8")
            return getattr(memory, v.name)(**v.arguments_json(body))

        return _answer(call)

    parameters = [
        inspect.Parameter(
            p.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=p.default,
            annotation=Annotated[Any, WithJsonSchema({k: x for k, x in properties[p.name].items() if k != "title"})],
        )
        for p in v.params
    ]
    run.__signature__ = inspect.Signature(parameters, return_annotation=CallToolResult)  # type: ignore[attr-defined]
    run.__name__ = run.__qualname__ = v.name
    run.__doc__ = description(v)
    return run


def build_server(memory: Memory | RemoteMemory) -> MCPServer[Any]:
    """An MCP server over ``memory`` (a :class:`Memory`, or the project's HTTP server
    as a :class:`RemoteMemory`: the same results) with a tool per verb the registry
    offers over MCP (:func:`tools`)."""
    server: MCPServer[Any] = MCPServer(
        "aircher-mem", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    for v in verbs.all_verbs("mcp"):
        server.add_tool(_tool(memory, v), name=v.name, description=description(v), structured_output=False)
    return server


def serve(root: str | os.PathLike[str], *, index: bool | None = None, refresh_seconds: float | None = None) -> None:
    """Serves MCP on stdin/stdout until the client disconnects. When a server runs
    for the project (``aircher-mem serve``, or another ``aircher-mem mcp``), every
    tool is a request to it (it holds the store and refreshes the graph itself); if
    it stops, the tools open the store here. Otherwise this opens (or creates) the
    project's memory, refreshes the graph (unless ``index`` is False, or None and
    the policy's ``[server] index_at_start`` is off), serves the HTTP API on a free
    loopback port for the project's other processes (:func:`.http.serve_in_thread`:
    server.json written, removed at exit), serves MCP, then flushes and closes;
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
            build_server(remote).run("stdio")
        return
    with Memory.open(Path(root), policy=policy) as memory:
        if index if index is not None else memory.policy.server.index_at_start:
            report = memory.index()
            print(
                f"aircher-mem: {memory.root}: {report.files} files indexed "
                f"({'full build' if report.full else 'incremental'}, {report.seconds:.2f} s)",
                file=sys.stderr,
            )
        running = _share(memory)
        try:
            build_server(memory).run("stdio")
        finally:
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
