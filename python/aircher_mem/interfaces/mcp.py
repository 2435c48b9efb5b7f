"""The MCP server (seed 000's "MCP Interface Layer"): a project's memory as tools
for an agent, over stdio, with the official ``mcp`` SDK.

Each tool is one :class:`aircher_mem.Memory` verb; it answers the verb's result as
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
import logging
import os
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from .._core import __version__
from ..config import Policy
from ..errors import AircherError, InvalidInputError
from ..longterm.store import KINDS
from ..memory import Memory
from . import wire
from .http import Client, RemoteMemory, RunningServer, serve_in_thread

__all__ = ["build_server", "serve", "TOOLS"]

log = logging.getLogger("aircher_mem.mcp")

TOOLS = (
    "find_symbol",
    "get_callers",
    "get_callees",
    "get_references",
    "get_neighbourhood",
    "get_dependencies",
    "get_file_contents",
    "relevant_code",
    "search_code",
    "file_history",
    "co_edited_files",
    "tasks",
    "task",
    "record_tool_call",
    "record_file_interaction",
    "remember",
    "recall",
    "forget",
    "explain",
    "feedback",
    "add_turn",
)

INSTRUCTIONS = (
    "Memory of this repository for a coding agent. The code graph answers where things are defined "
    "(find_symbol), who calls what (get_callers, get_callees), what refers to a definition (get_references), "
    "what lies around it (get_neighbourhood), which files import which (get_dependencies), "
    "what a file defines (get_file_contents), which code answers a question in plain words (search_code) and "
    "which code matters for a task (relevant_code, within a token budget). "
    "The episodic memory remembers earlier sessions: file_history, co_edited_files, tasks. Report your "
    "own work with task (start one before working, complete it when done), record_tool_call and "
    "record_file_interaction so later sessions can use it. "
    "The long-term memory keeps what you were told and decided: recall(query) before you answer or act on "
    "something the user may have said before (preferences, decisions, facts about the project); remember(content) "
    "one self-contained fact, decision or preference with its why when the user states one; feedback(id, 'cited') "
    "for each recalled memory you used and 'ignored' for those shown but irrelevant; forget(id) when the user asks "
    "or a memory is wrong; explain(id) says why a memory ranks where it does; add_turn stores a conversation turn "
    "and extracts memories from it. Paths are relative to the project root. Names may "
    'be qualified as Class.method. Errors come back as {"error": {"code", "type", "message"}}.'
)

Name = Annotated[
    str,
    Field(
        min_length=1,
        description="A function, method, class or constant name, e.g. 'save', or Class.method, e.g. 'User.save'.",
    ),
]
FilePath = Annotated[
    str, Field(min_length=1, description="A file path relative to the project root, e.g. 'app/models.py'.")
]
Limit = Annotated[int, Field(ge=1, le=200, description="At most this many results.")]
TaskId = Annotated[
    str | None,
    Field(
        description="Optional id of the task this belongs to; co-edit patterns are learned from edits within one task."
    ),
]


MemoryId = Annotated[int, Field(ge=1, description="A memory's id, as recall, remember or add_turn returned it.")]
Kind = Literal["fact", "decision", "episode", "pattern", "workflow"]
assert set(get_args(Kind)) == set(KINDS)  # one list of kinds, spelled out for the schema
IsoTime = Annotated[
    str | None,
    Field(
        description="An ISO-8601 date or time, e.g. '2024-05-01' or '2024-05-01T14:30:00+02:00' "
        "(without an offset: UTC)."
    ),
]


def _time(field: str, text: str | None) -> datetime | None:
    """An ISO-8601 string as a datetime (naive: UTC, as Memory reads it)."""
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError:
        raise InvalidInputError(
            f"{field} must be an ISO-8601 time like 2024-05-01T14:30:00+02:00, got {text!r:.80}"
        ) from None


def _answer(call: Callable[[], Any]) -> CallToolResult:
    """Runs one verb: its result as JSON, or its error as an error result holding
    the error JSON (and nothing else, so the model can parse it)."""
    try:
        return CallToolResult(content=[TextContent(type="text", text=wire.dumps(call()))])
    except (AircherError, OSError) as exc:
        return CallToolResult(content=[TextContent(type="text", text=wire.dumps(wire.error_json(exc)))], is_error=True)


def build_server(memory: Memory | RemoteMemory) -> MCPServer[Any]:
    """An MCP server over ``memory`` (a :class:`Memory`, or the project's HTTP server
    as a :class:`RemoteMemory`: the same results) with the tools named in ``TOOLS``."""
    server: MCPServer[Any] = MCPServer(
        "aircher-mem", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    tool = server.tool(structured_output=False)

    @tool
    def find_symbol(
        name: Name,
        prefix: Annotated[bool, Field(description="Match every definition whose name starts with `name`.")] = False,
        fuzzy: Annotated[
            bool,
            Field(
                description="Match names holding the letters of `name` in order, ignoring case (when unsure of "
                "the exact name); best match first."
            ),
        ] = False,
    ) -> CallToolResult:
        """Where a function, class or module-level constant is defined. Returns JSON {query, match, symbols:
        [{name, kind, scope, path, line, end_line, signature, qualified}]}; an exact name nothing defines is an
        unknown_symbol error with suggestions."""
        return _answer(lambda: memory.symbol(name, prefix=prefix, fuzzy=fuzzy))

    @tool
    def get_callers(name: Name) -> CallToolResult:
        """The functions that call `name`: JSON {name, direction, definitions, calls: [{symbol, call_line, kind,
        confidence}]}. confidence < 1 means the call's name matches several definitions."""
        return _answer(lambda: memory.callers(name))

    @tool
    def get_callees(name: Name) -> CallToolResult:
        """The functions and classes that `name` calls, resolved in the project: JSON {name, direction,
        definitions, calls: [{symbol, call_line, kind, confidence}]}."""
        return _answer(lambda: memory.callees(name))

    @tool
    def get_references(
        name: Name,
        kind: Annotated[
            Literal["calls", "references", "inherits", "uses", "imports"] | None,
            Field(description="Only this kind of reference (default: all)."),
        ] = None,
    ) -> CallToolResult:
        """Everything that refers to `name`: calls, base classes (inherits), type annotations and `new`
        (references), imports naming it, reads and writes of a variable (uses). Use before renaming or changing a
        definition. JSON {name, kind, references: [{symbol, call_line, kind, confidence}]}."""
        return _answer(lambda: memory.references(name, kind=kind))

    @tool
    def get_neighbourhood(
        name: Name,
        hops: Annotated[int, Field(ge=1, le=10, description="How many edges away to look.")] = 1,
    ) -> CallToolResult:
        """The definitions within `hops` edges of `name`, in either direction (what it calls, what calls it, its
        class, what it imports or uses), nearest first: JSON {name, hops, symbols: [{symbol, distance}]}."""
        return _answer(lambda: memory.neighbourhood(name, hops=hops))

    @tool
    def get_dependencies(path: FilePath) -> CallToolResult:
        """The project files that `path` imports ("dependencies") and the files that import it ("dependents"):
        JSON {path, dependencies, dependents}. Use before changing a module's interface."""
        return _answer(lambda: memory.dependencies(path))

    @tool
    def get_file_contents(path: FilePath) -> CallToolResult:
        """The outline of a source file: its functions, classes and constants in line order, as JSON {path,
        symbols: [{name, kind, scope, path, line, end_line, signature, qualified}]}. Cheaper than reading the file;
        read the lines you need afterwards."""
        return _answer(lambda: memory.outline(path))

    @tool
    def relevant_code(
        query: Annotated[
            str,
            Field(
                min_length=1,
                description="What you are about to do, in words; name the "
                "functions, classes or files involved if you know them.",
            ),
        ],
        max_tokens: Annotated[
            int | None,
            Field(ge=1, le=100_000, description="Token budget for all returned code (default: the project's policy)."),
        ] = None,
    ) -> CallToolResult:
        """The code most relevant to a task, ranked over the code graph (definitions and files the query names,
        and what they call or are called by), cut to fit `max_tokens`. JSON {query, max_tokens, tokens, snippets:
        [{file_path, line_range, content, relevance (0-1], tokens}]}, best first."""
        return _answer(lambda: memory.relevant_code(query, max_tokens=max_tokens))

    @tool
    def search_code(
        text: Annotated[
            str,
            Field(
                min_length=1,
                description="A question or task in plain words, an error message or a traceback, e.g. "
                "'how does shell completion work for zsh?'.",
            ),
        ],
        k: Annotated[int, Field(ge=1, le=200, description="How many hits.")] = 10,
        level: Annotated[
            Literal["definition", "file"], Field(description="Rank definitions (with their code) or files.")
        ] = "definition",
    ) -> CallToolResult:
        """Find code by meaning: the definitions (or files) that answer `text`, best first, from words matched in
        names, docstrings, bodies and paths, the code graph around them, and files the text names. JSON {query,
        level, hits: [{path, name, kind, scope, line, end_line, signature, score, channels: [{channel, raw,
        normalized, weight}], matched, via, test, code}], channels, mentioned, reason (why nothing was found),
        notes}."""
        return _answer(lambda: memory.search_code(text, k, level=level))

    @tool
    def file_history(path: FilePath, limit: Limit = 10) -> CallToolResult:
        """What was done with a file in earlier sessions, newest first, and the failed tool runs on it: JSON
        {path, interactions: [{timestamp, operation, line_range, success, task_id, context, changes_summary, ...}],
        failed_tool_runs: [{timestamp, tool_name, error_message, parameters, task_id, ...}]}."""
        return _answer(lambda: memory.file_history(path, limit=limit))

    @tool
    def co_edited_files(
        path: Annotated[str | None, Field(description="Only pairs that include this file (relative path).")] = None,
        min_count: Annotated[
            int | None,
            Field(ge=1, description="Edited together at least this many times (default: the project's policy, 3)."),
        ] = None,
    ) -> CallToolResult:
        """Files that were edited together (same task, within 5 minutes) in earlier sessions: when you change one,
        check the other. JSON {path, min_count, pairs: [{file1, file2, count}]}, most frequent first."""
        return _answer(lambda: memory.co_edited_files(path, min_count=min_count))

    @tool
    def tasks(
        query: Annotated[
            str | None, Field(description="Find past tasks similar to this text instead of the open ones.")
        ] = None,
        limit: Limit = 10,
    ) -> CallToolResult:
        """Without `query`: the open (active or paused) tasks, newest first. With `query`: past tasks most similar
        to it, with their outcome, so earlier solutions can be reused. JSON {query, tasks: [{task_id, status,
        description, outcome, started_at, files_touched, score}]}."""
        return _answer(lambda: memory.tasks(query, limit=limit))

    @tool
    def task(
        action: Annotated[
            Literal["start", "pause", "resume", "complete", "fail"],
            Field(description="start a new task, pause or resume it, complete or fail it when done."),
        ],
        task_id: Annotated[str, Field(min_length=1, description="Your id for the task, e.g. 'fix-login-302'.")],
        description: Annotated[str | None, Field(description="For start: what the task is, one sentence.")] = None,
        outcome: Annotated[
            str | None,
            Field(description="For complete or fail: what came of it, one sentence; later sessions read it."),
        ] = None,
    ) -> CallToolResult:
        """Start a task before working on it and complete (or fail) it when done. Records made with its task_id
        are grouped under it, files edited together within a task are learned as co-edited, and later sessions
        find the task and its outcome with tasks(query=...). Returns {task_id, status}."""
        return _answer(lambda: memory.task(action, task_id, description=description, outcome=outcome))

    @tool
    def record_tool_call(
        tool_name: Annotated[str, Field(min_length=1, description="The tool you ran, e.g. 'pytest' or 'bash'.")],
        success: Annotated[bool, Field(description="Whether it succeeded.")],
        parameters: Annotated[dict[str, Any] | None, Field(description="Its arguments (JSON object).")] = None,
        error_message: Annotated[str | None, Field(description="The error, if it failed.")] = None,
        duration_ms: Annotated[int | None, Field(ge=0, description="How long it took.")] = None,
        file_path: Annotated[str | None, Field(description="The file it was about, if any (relative path).")] = None,
        task_id: TaskId = None,
    ) -> CallToolResult:
        """Remember a tool call you made (a test run, a build, a search), so later sessions know which tools fail
        and which edits fixed an error. Returns {what, graph_stale}."""
        return _answer(
            lambda: memory.record_tool_call(
                tool_name,
                parameters,
                success=success,
                error_message=error_message,
                duration_ms=duration_ms,
                file_path=file_path,
                task_id=task_id,
            )
        )

    @tool
    def record_file_interaction(
        path: FilePath,
        operation: Annotated[
            Literal["read", "write", "edit", "search", "analyze"], Field(description="What you did with the file.")
        ],
        line_start: Annotated[int | None, Field(ge=1, description="First line involved, if known.")] = None,
        line_end: Annotated[int | None, Field(ge=1, description="Last line involved, if known.")] = None,
        success: Annotated[bool, Field(description="Whether it worked.")] = True,
        changes_summary: Annotated[str | None, Field(description="For edits: what changed and why, one line.")] = None,
        task_id: TaskId = None,
    ) -> CallToolResult:
        """Remember that you read, wrote, edited, searched or analyzed a file, so later sessions find it in
        file_history and learn which files change together. After a write or edit the code graph is refreshed
        before the next query. Returns {what, graph_stale}."""

        def call() -> Any:
            if (line_start is None) != (line_end is None):
                raise InvalidInputError("give both line_start and line_end, or neither")
            span = (line_start, line_end) if line_start is not None and line_end is not None else None
            return memory.record_file_interaction(
                path, operation, line_range=span, success=success, changes_summary=changes_summary, task_id=task_id
            )

        return _answer(call)

    # -- long-term memory ------------------------------------------------------------------

    @tool
    def remember(
        content: Annotated[
            str,
            Field(
                min_length=1,
                description="One self-contained fact, decision or preference, with its why, readable without "
                "the conversation: 'The API returns dates in UTC because clients live in many time zones', not "
                "'use UTC' or 'as discussed'.",
            ),
        ],
        kind: Annotated[
            Kind,
            Field(
                description="fact (how things are), decision (what was chosen and why), episode (what happened), "
                "pattern (something that recurs), workflow (how to do something here)."
            ),
        ] = "fact",
        importance: Annotated[
            Literal[0, 1],
            Field(
                description="1 for what must never be forgotten (a hard rule, a user's explicit "
                "instruction); 0 otherwise."
            ),
        ] = 0,
        tags: Annotated[list[str] | None, Field(description="A few short tags, e.g. ['deploy', 'ops'].")] = None,
        level: Annotated[
            Literal["L0", "L1", "L2", "L3"] | None,
            Field(
                description="L0 the whole project, L1 a domain, L2 a module, L3 a piece of code (default: "
                "from domain, module and code_ref)."
            ),
        ] = None,
        domain: Annotated[str | None, Field(description="The domain it is about, e.g. 'billing'.")] = None,
        module: Annotated[str | None, Field(description="The module it is about, e.g. 'app/models.py'.")] = None,
        code_ref: Annotated[
            str | None, Field(description="The code it is about, e.g. 'app/models.py:User.save'.")
        ] = None,
        parent_id: Annotated[
            int | None, Field(ge=1, description="The memory this one refines (a more specific case).")
        ] = None,
    ) -> CallToolResult:
        """Keep something for later sessions. Remember when the user states a preference, makes or confirms a
        decision, corrects you, or tells you a fact about the project you could not read from the code; not what
        the code or git already says, and not small talk. One memory per fact, decision or preference, with the
        reason. A memory equal to an existing one merges into it; a new value for the same thing (a changed
        preference) supersedes the old one. Returns JSON {memory_id, action: created|merged|superseded,
        superseded}."""
        return _answer(
            lambda: memory.remember(
                content,
                kind=kind,
                importance=importance,
                tags=tags or (),
                level=level,
                domain=domain,
                module=module,
                code_ref=code_ref,
                parent_id=parent_id,
            )
        )

    @tool
    def recall(
        query: Annotated[
            str,
            Field(
                min_length=1, description="What you need to know, in words, e.g. 'how does the user want tests run?'."
            ),
        ],
        k: Annotated[int, Field(ge=1, le=100, description="How many hits.")] = 10,
        session_id: Annotated[str | None, Field(description="Favour this conversation's turns.")] = None,
        kinds: Annotated[
            list[Literal["fact", "decision", "episode", "pattern", "workflow", "turn"]] | None,
            Field(description="Only these kinds; 'turn' is a raw conversation turn (default: all)."),
        ] = None,
        at: IsoTime = None,
    ) -> CallToolResult:
        """Memories and conversation turns relevant to `query`, best first, as valid now (or at `at`). Recall
        before answering or acting on something the user may have told you before. JSON {query, at, hits: [{kind,
        id, content, score, channels, matched, recency, importance, usage, turns: [{session_id, role, speaker, text,
        at}]}], channels, reason (why nothing was found), notes}. When you use a hit, say so and cite it (e.g.
        'memory 12: ...'), then call feedback(id, 'cited'); call feedback(id, 'ignored') for hits that were shown
        but irrelevant. Turn hits (kind 'turn') are raw evidence, not memories."""
        return _answer(lambda: memory.recall(query, k=k, session_id=session_id, kinds=kinds, at=_time("at", at)))

    @tool
    def forget(
        memory_id: Annotated[int | None, Field(ge=1, description="The memory to forget.")] = None,
        text: Annotated[
            str | None,
            Field(
                description="Instead of an id: forget the memories whose content is this text (else contains it) "
                "and every conversation turn containing it."
            ),
        ] = None,
        session_id: Annotated[
            str | None,
            Field(description="Instead: forget this session's turns and the memories that came only from them."),
        ] = None,
    ) -> CallToolResult:
        """Forget for good (no undo): when the user asks you to forget something, or a memory is wrong. Give one of
        memory_id, text or session_id. The turns a forgotten memory came from go too. A changed preference needs no
        forget: remember the new value and the old one is superseded. Returns JSON {ids, turns} (the memories and
        turns forgotten; empty when nothing matched)."""
        return _answer(lambda: memory.forget(memory_id, text=text, session_id=session_id))

    @tool
    def explain(memory_id: MemoryId) -> CallToolResult:
        """Why a memory ranks where it does: JSON {memory, age_days, score, terms: [{name, weight, value,
        contribution}], rules (what extracted it), links: [{turn, reason}] (its source turns), related: [{relation,
        memory_id, content}] (supersedes, superseded_by, parent, child), actions: [{at, action, detail}], outlook
        (what gc would do to it now)}."""
        return _answer(lambda: memory.explain(memory_id))

    @tool
    def feedback(
        memory_id: MemoryId,
        signal: Annotated[
            Literal["cited", "ignored"],
            Field(
                description="cited: you used the memory in your answer or action; ignored: it was shown but "
                "did not help."
            ),
        ],
    ) -> CallToolResult:
        """Tell memory how a recalled memory served you, so useful memories rise and noise sinks. Call it for the
        hits of recall you read: 'cited' for each one you used, 'ignored' for those that were irrelevant. Returns
        JSON {memory_id, signal, retrieved, cited, ignored}."""
        return _answer(lambda: memory.feedback(memory_id, signal))

    @tool
    def add_turn(
        session_id: Annotated[str, Field(min_length=1, description="The conversation's id, the same for each turn.")],
        role: Annotated[Literal["user", "assistant"], Field(description="Who spoke.")],
        text: Annotated[str, Field(min_length=1, description="What was said, verbatim.")],
        speaker: Annotated[str | None, Field(description="The speaker's name, if known.")] = None,
        at: IsoTime = None,
        metadata: Annotated[dict[str, Any] | None, Field(description="Anything else about the turn (JSON).")] = None,
        extract: Annotated[
            bool, Field(description="Extract memories (preferences, decisions, facts) from the turn.")
        ] = True,
    ) -> CallToolResult:
        """Store a conversation turn; memory extracts facts, decisions and preferences from it by rule (a changed
        preference supersedes the old one) and recall finds the turn itself later. Use it to log the user's
        messages when your client does not; prefer remember for a single thing worth keeping. Returns JSON
        {turn_id, session_id, extracted: [{action, memory_id, content, kind, rules, superseded}], notes}."""
        return _answer(
            lambda: memory.add_turn(
                session_id, role, text, speaker=speaker, at=_time("at", at), metadata=metadata, extract=extract
            )
        )

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
