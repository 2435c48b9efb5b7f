"""The MCP server (seed 000's "MCP Interface Layer"): a project's memory as tools
for an agent, over stdio, with the official ``mcp`` SDK.

Every tool answers compact JSON. Paths are relative to the project root (absolute
ones must lie inside it); anything else, an unknown file or a bad argument comes
back as an error result the model can read, and the server keeps serving.

The graph is refreshed (incrementally: only changed files are parsed) at start, and
again before a graph query when the agent recorded an edit or
``refresh_seconds`` passed since the last check, so answers follow the agent's edits.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from ._core import KnowledgeGraph, __version__
from .cli import call_json, symbol_json
from .errors import AircherError, InvalidInputError
from .memory import Memory

__all__ = ["build_server", "serve", "TOOLS"]

log = logging.getLogger("aircher_mem.mcp")

TOOLS = (
    "find_symbol", "get_callers", "get_callees", "get_dependencies", "get_file_contents", "relevant_code",
    "file_history", "co_edited_files", "tasks", "task", "record_tool_call", "record_file_interaction",
)

INSTRUCTIONS = (
    "Memory of this repository for a coding agent. The code graph answers where things are defined "
    "(find_symbol), who calls what (get_callers, get_callees), which files import which (get_dependencies), "
    "what a file defines (get_file_contents) and which code matters for a task (relevant_code, within a token "
    "budget). The episodic memory remembers earlier sessions: file_history, co_edited_files, tasks. Report your "
    "own work with task (start one before working, complete it when done), record_tool_call and "
    "record_file_interaction so later sessions can use it. Paths are "
    "relative to the project root."
)

T = TypeVar("T")

Name = Annotated[str, Field(min_length=1, description="A function, method, class or constant name, e.g. 'save'.")]
FilePath = Annotated[str, Field(min_length=1, description="A file path relative to the project root, e.g. 'app/models.py'.")]
Limit = Annotated[int, Field(ge=1, le=200, description="At most this many results.")]
TaskId = Annotated[str | None, Field(description="Optional id of the task this belongs to; co-edit patterns are "
                                                  "learned from edits within one task.")]


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class _Service:
    """The memory behind the tools: one lock (the SDK runs tools on worker threads,
    the DuckDB connection takes one caller at a time) and the graph kept fresh."""

    def __init__(self, memory: Memory, refresh_seconds: float) -> None:
        self.memory = memory
        self.refresh_seconds = refresh_seconds
        self.lock = threading.Lock()
        self.checked = time.monotonic()
        self.stale = False

    def graph(self) -> KnowledgeGraph:
        if self.stale or not self.memory.indexed or time.monotonic() - self.checked >= self.refresh_seconds:
            self.memory.index()
            self.checked = time.monotonic()
            self.stale = False
        return self.memory.graph

    def run(self, body: Callable[[], T]) -> T:
        with self.lock:
            try:
                return body()
            except (AircherError, OSError) as exc:
                raise ToolError(str(exc)) from None


def build_server(memory: Memory, *, refresh_seconds: float = 2.0) -> MCPServer[Any]:
    """An MCP server over ``memory`` with the tools named in ``TOOLS``."""
    service = _Service(memory, refresh_seconds)
    server: MCPServer[Any] = MCPServer("aircher-mem", version=__version__, instructions=INSTRUCTIONS,
                                       log_level="WARNING")
    tool = server.tool

    @tool(structured_output=False)
    def find_symbol(name: Name, prefix: Annotated[bool, Field(
            description="Match every definition whose name starts with `name`.")] = False,
                    fuzzy: Annotated[bool, Field(
            description="Match names holding the letters of `name` in order, ignoring case (when unsure of "
                        "the exact name); best match first.")] = False) -> str:
        """Where a function, class or module-level constant is defined. Returns a JSON list of
        {name, kind, path, line, end_line, signature}; [] if nothing has that name."""
        return service.run(lambda: _compact([symbol_json(s) for s in service.graph().find_symbol(name, prefix=prefix, fuzzy=fuzzy)]))

    @tool(structured_output=False)
    def get_callers(name: Name) -> str:
        """The functions that call `name`: a JSON list of {name, kind, path, line, end_line, signature, call_line,
        confidence}. confidence < 1 means the call's name matches several definitions."""
        return service.run(lambda: _compact([call_json(c) for c in service.graph().get_callers(name)]))

    @tool(structured_output=False)
    def get_callees(name: Name) -> str:
        """The functions and classes that `name` calls, resolved in the project: a JSON list of {name, kind, path,
        line, end_line, signature, call_line, confidence}."""
        return service.run(lambda: _compact([call_json(c) for c in service.graph().get_callees(name)]))

    @tool(structured_output=False)
    def get_dependencies(path: FilePath) -> str:
        """The project files that `path` imports ("dependencies") and the files that import it ("dependents"):
        JSON {path, dependencies, dependents}. Use before changing a module's interface."""
        def body() -> str:
            rel = memory.relative(path)
            graph = service.graph()
            return _compact({"path": rel, "dependencies": graph.get_dependencies(rel),
                             "dependents": graph.get_dependents(rel)})
        return service.run(body)

    @tool(structured_output=False)
    def get_file_contents(path: FilePath) -> str:
        """The outline of a source file: its functions, classes and constants in line order, as a JSON list of
        {name, kind, path, line, end_line, signature}. Cheaper than reading the file; read the lines you need
        afterwards."""
        def body() -> str:
            rel = memory.relative(path)
            return _compact([symbol_json(s) for s in service.graph().get_file_contents(rel)])
        return service.run(body)

    @tool(structured_output=False)
    def relevant_code(
        query: Annotated[str, Field(min_length=1, description="What you are about to do, in words; name the "
                                                               "functions, classes or files involved if you know them.")],
        max_tokens: Annotated[int, Field(ge=1, le=100_000, description="Token budget for all returned code.")] = 2000,
    ) -> str:
        """The code most relevant to a task, ranked over the code graph (definitions and files the query names,
        and what they call or are called by), cut to fit `max_tokens`. JSON list of {path, lines: [start, end],
        relevance (0-1], tokens, content}, best first."""
        def body() -> str:
            service.graph()
            found = memory.relevant_code(query, max_tokens=max_tokens)
            return _compact([{"path": c.file_path, "lines": list(c.line_range), "relevance": round(c.relevance, 4),
                              "tokens": memory.tokens.count(c.content), "content": c.content} for c in found])
        return service.run(body)

    @tool(structured_output=False)
    def file_history(path: FilePath, limit: Limit = 10) -> str:
        """What was done with a file in earlier sessions (reads, edits, failed tool runs), newest first: JSON list
        of {when (Unix seconds), operation, lines, success, task_id, summary}."""
        def body() -> str:
            rel = memory.relative(path)
            return _compact([{"when": round(f.timestamp, 3), "operation": f.operation,
                              "lines": list(f.line_range) if f.line_range else None, "success": f.success,
                              "task_id": f.task_id, "summary": f.changes_summary or f.context}
                             for f in memory.episodic.file_history(rel, limit=limit)])
        return service.run(body)

    @tool(structured_output=False)
    def co_edited_files(
        path: Annotated[str | None, Field(description="Only pairs that include this file (relative path).")] = None,
        min_count: Annotated[int, Field(ge=1, description="Edited together at least this many times.")] = 3,
    ) -> str:
        """Files that were edited together (same task, within 5 minutes) in earlier sessions: when you change one,
        check the other. JSON list of {files: [a, b], count}, most frequent first."""
        def body() -> str:
            rel = memory.relative(path) if path is not None else None
            pairs = memory.episodic.co_edited_files(min_count=min_count)
            return _compact([{"files": [p.file1, p.file2], "count": p.count} for p in pairs
                             if rel is None or rel in (p.file1, p.file2)])
        return service.run(body)

    @tool(structured_output=False)
    def tasks(
        query: Annotated[str | None, Field(description="Find past tasks similar to this text instead of the "
                                                        "open ones.")] = None,
        limit: Limit = 10,
    ) -> str:
        """Without `query`: the open (active or paused) tasks, newest first. With `query`: past tasks most similar
        to it, with their outcome, so earlier solutions can be reused. JSON list of {task_id, status, description,
        outcome, files_touched?, score?}."""
        def body() -> str:
            if query:
                return _compact([{"task_id": t.task_id, "status": t.status, "description": t.description,
                                  "outcome": t.outcome, "score": round(t.score, 4)}
                                 for t in memory.episodic.find_similar_tasks(query, limit=limit)])
            return _compact([{"task_id": t.task_id, "status": t.status, "description": t.description,
                              "outcome": t.outcome, "started": round(t.started_at, 3),
                              "files_touched": t.files_touched} for t in memory.episodic.open_tasks()[:limit]])
        return service.run(body)

    @tool(structured_output=False)
    def task(
        action: Annotated[Literal["start", "pause", "resume", "complete", "fail"], Field(
            description="start a new task, pause or resume it, complete or fail it when done.")],
        task_id: Annotated[str, Field(min_length=1, description="Your id for the task, e.g. 'fix-login-302'.")],
        description: Annotated[str | None, Field(description="For start: what the task is, one sentence.")] = None,
        outcome: Annotated[str | None, Field(description="For complete or fail: what came of it, one sentence; "
                                                          "later sessions read it.")] = None,
    ) -> str:
        """Start a task before working on it and complete (or fail) it when done. Records made with its task_id
        are grouped under it, files edited together within a task are learned as co-edited, and later sessions
        find the task and its outcome with tasks(query=...). Returns {task_id, status}."""
        def body() -> str:
            store = memory.episodic
            if action == "start":
                if not description:
                    raise InvalidInputError("starting a task needs a description")
                store.start_task(task_id, description)
            elif action == "pause":
                store.pause_task(task_id)
            elif action == "resume":
                store.resume_task(task_id)
            elif action == "complete":
                store.complete_task(task_id, outcome)
            else:
                store.fail_task(task_id, outcome)
            memory.flush()
            status = {"start": "active", "pause": "paused", "resume": "active", "complete": "completed",
                      "fail": "failed"}[action]
            return _compact({"task_id": task_id, "status": status})
        return service.run(body)

    @tool(structured_output=False)
    def record_tool_call(
        tool_name: Annotated[str, Field(min_length=1, description="The tool you ran, e.g. 'pytest' or 'bash'.")],
        success: Annotated[bool, Field(description="Whether it succeeded.")],
        parameters: Annotated[dict[str, Any] | None, Field(description="Its arguments (JSON object).")] = None,
        error_message: Annotated[str | None, Field(description="The error, if it failed.")] = None,
        duration_ms: Annotated[int | None, Field(ge=0, description="How long it took.")] = None,
        file_path: Annotated[str | None, Field(description="The file it was about, if any (relative path).")] = None,
        task_id: TaskId = None,
    ) -> str:
        """Remember a tool call you made (a test run, a build, a search), so later sessions know which tools fail
        and which edits fixed an error. Returns {"recorded": true}."""
        def body() -> str:
            rel = memory.relative(file_path) if file_path is not None else None
            memory.episodic.record_tool_execution(tool_name, parameters, success=success, error_message=error_message,
                                                  duration_ms=duration_ms, file_path=rel, task_id=task_id)
            memory.flush()
            return _compact({"recorded": True})
        return service.run(body)

    @tool(structured_output=False)
    def record_file_interaction(
        path: FilePath,
        operation: Annotated[Literal["read", "write", "edit", "search", "analyze"], Field(
            description="What you did with the file.")],
        line_start: Annotated[int | None, Field(ge=1, description="First line involved, if known.")] = None,
        line_end: Annotated[int | None, Field(ge=1, description="Last line involved, if known.")] = None,
        success: Annotated[bool, Field(description="Whether it worked.")] = True,
        changes_summary: Annotated[str | None, Field(description="For edits: what changed and why, one line.")] = None,
        task_id: TaskId = None,
    ) -> str:
        """Remember that you read, wrote, edited, searched or analyzed a file, so later sessions find it in
        file_history and learn which files change together. After a write or edit the code graph is refreshed
        before the next query. Returns {"recorded": true}."""
        def body() -> str:
            rel = memory.relative(path)
            if (line_start is None) != (line_end is None):
                raise InvalidInputError("give both line_start and line_end, or neither")
            span = (line_start, line_end) if line_start is not None and line_end is not None else None
            memory.episodic.record_file_interaction(rel, operation, line_range=span, success=success,
                                                    changes_summary=changes_summary, task_id=task_id)
            memory.flush()
            if operation in ("write", "edit"):
                service.stale = True
            return _compact({"recorded": True})
        return service.run(body)

    return server


def serve(root: str | os.PathLike[str], *, index: bool = True, refresh_seconds: float = 2.0) -> None:
    """Opens (or creates) the project's memory, refreshes the graph, and serves MCP on
    stdin/stdout until the client disconnects; then flushes and closes."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    with Memory.open(Path(root)) as memory:
        if index:
            report = memory.index()
            print(f"aircher-mem: {memory.root}: {report.files} files indexed "
                  f"({'full build' if report.full else 'incremental'}, {report.seconds:.2f} s)", file=sys.stderr)
        build_server(memory, refresh_seconds=refresh_seconds).run("stdio")
