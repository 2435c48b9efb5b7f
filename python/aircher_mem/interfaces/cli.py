"""``aircher-mem``: the project's memory from the command line.

The first job on any repository::

    aircher-mem index .                      # build the code graph (.aircher/ in the repo)
    aircher-mem preview-context "why does login fail for admins?" --show

Long-term memory, what the agent was told and decided::

    aircher-mem add-turn s1 user "I prefer tabs."
    aircher-mem recall "tabs or spaces?"      # memories and turns, who said them and when
    aircher-mem explain 1                     # every score term, rules, source turns, gc outlook

Tables for people, ``--json`` for scripts (the same JSON the MCP tools return).
When ``aircher-mem serve`` runs for the project, every command is its client over
HTTP (the server is the store's one writer) and gives the same output.
Errors are one line on stderr and an exit code: 1 an error, 2 a bad argument or
path, 3 not found (no store, not indexed, no such symbol or task), 4 the store is
open in another process, 130 interrupted. Every command is one call to a
:class:`aircher_mem.Memory` verb.
"""

from __future__ import annotations

import argparse
import collections.abc
import dataclasses
import importlib
import inspect
import json
import logging
import math
import os
import sys
import threading
import time
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, TextIO

from .. import verbs
from ..checks import Arg, Parse
from ..config import Policy
from ..errors import AircherError, InvalidInputError, StoreNotFoundError
from ..memory import STORE_DIR, Memory, find_root
from ..results import Doctor, IndexReport, InitResult, StoreCopy, Users
from ..verbs import verb
from . import command_line, hook_command, wire
from .client import connect, server_check
from .command_line import CommandUnavailable
from .render import Output, ProgressLine

log = logging.getLogger("aircher_mem.cli")

__all__ = ["main", "build_parser"]


def _index_showing(memory: Verbs, line: ProgressLine, poll: float, **kwargs: Any) -> IndexReport:
    """``memory.index(**kwargs)`` while another thread asks ``memory.index_progress()``
    every ``poll`` seconds and shows what it says on ``line`` (the same for a
    Memory and for a server's: it answers without waiting for the index)."""
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(poll):
            try:
                status = memory.index_progress()
            except AircherError as exc:  # e.g. a server without the verb: no line, the index goes on
                log.debug("no index progress: %s", exc)
                return
            if status.running and not stop.is_set():
                line.show(status)

    watcher = threading.Thread(target=watch, name="aircher-mem-progress", daemon=True)
    watcher.start()
    try:
        report: IndexReport = memory.index(**kwargs)
        return report
    finally:
        stop.set()
        watcher.join()
        line.finish()


Verbs = Any  # a Memory, or a client.RemoteMemory: the same verbs and results


def _connect(root: Path, *, create: bool) -> Verbs:
    """The project's memory: its server's when one runs (``aircher-mem serve``), so
    this process never opens the store the server holds; else the store itself."""
    return connect(root, create=create)


# -- commands: arguments in, one verb, the result out ----------------------------------------


@dataclasses.dataclass(frozen=True)
class Run:
    """What a command gets besides its declared arguments: the parsed command line
    (``--root``, ``--json`` and the commands' own presentation options) and where
    it writes."""

    args: argparse.Namespace
    out: Output

    @property
    def root(self) -> Path:
        """``--root``, else the nearest folder with a store, else the current one."""
        if self.args.root is not None:
            return Path(self.args.root)
        try:
            return find_root()
        except StoreNotFoundError:
            return Path.cwd()


def _verb_result(v: verbs.Verb, args: argparse.Namespace) -> Any:
    """Runs the service verb ``v`` with the command line's arguments (checked
    against its declaration) on the project's memory."""
    kwargs = _given(v, args)
    if v.name in ("create_store", "index"):  # they may create the store; PATH names the project
        where = Path(args.path if args.path is not None else args.root if args.root is not None else ".")
        with _connect(where, create=True) as memory:
            local = isinstance(memory, Memory)  # else a server runs for it: the store exists, the server indexes
            if v.name == "create_store":
                if local:
                    return memory.create_store()
                return InitResult(str(memory.root), str(memory.root / STORE_DIR), False)
            if local:  # this process ends with its report: a full build is written, not kept
                kwargs["hold"] = False
            if args.quiet:
                return memory.index(**kwargs)
            graph = Policy.load(where).graph
            line = ProgressLine(sys.stderr, redraw=graph.progress_redraw_seconds, every=graph.progress_line_seconds)
            return _index_showing(memory, line, graph.progress_poll_seconds, **kwargs)
    with _open(args) as memory:
        return getattr(memory, v.name)(**kwargs)


def _open(args: argparse.Namespace) -> Verbs:
    """The memory of ``--root``, else of the nearest folder with a store."""
    return _connect(Path(args.root) if args.root is not None else find_root(), create=False)


def _unavailable(what: str, exc: ImportError) -> CommandUnavailable:
    return CommandUnavailable(f"{what} is not available in this installation ({exc})")


# -- the commands that are not service verbs: they serve, install or check -------------------


@verb(name="doctor", surfaces=("cli",), python_only=("run",))
def cmd_doctor(
    run: Run, *, deep: Annotated[bool, Arg(description="Also compare the graph with a fresh build (slow).")] = False
) -> Doctor:
    """Checks the store, the versions, the encodings and the languages."""
    return Memory.doctor(run.args.root, deep=deep, server=server_check)


@verb(name="copy_store", surfaces=("cli",), python_only=("run",))
def cmd_copy_store(
    run: Run,
    source: Annotated[
        str, Arg(min_length=1, description="A postgresql:// URL, a store file, or a project folder (its store).")
    ],
    target: Annotated[
        str,
        Arg(min_length=1, description="Where the copy goes: a URL of a database without a store, or a new file."),
    ],
) -> StoreCopy:
    """Copies a store between its file and a PostgreSQL server, verified row for row."""
    from .. import transfer  # imports psycopg only here

    shown: dict[str, float] = {}

    def progress(table: str, rows: int) -> None:
        now = time.monotonic()
        if now - shown.get(table, -math.inf) >= _COPY_PROGRESS_SECONDS:
            shown[table] = now
            print(f"copying {table}: {rows} rows", file=sys.stderr, flush=True)

    return transfer.copy_store(source, target, progress=progress)


# How often a copy says how far it is, per table.
_COPY_PROGRESS_SECONDS = 5.0


@verb(name="mcp", surfaces=("cli",), python_only=("run",))
def cmd_mcp(
    run: Run,
    *,
    index: Annotated[
        bool | None, Arg(description="Refresh the graph at start (default: [server] index_at_start).")
    ] = None,
    refresh_seconds: Annotated[
        float | None,
        Arg(
            ge=0,
            le=86_400,
            description="Look for changed files before a graph query at most this often "
            "(default: [server] refresh_seconds).",
        ),
    ] = None,
) -> int:
    """Serves the memory to an agent over MCP (stdio)."""
    from .mcp import serve  # imports the MCP SDK only when serving

    serve(run.root, index=index, refresh_seconds=refresh_seconds)
    return wire.EXIT_OK


@verb(name="serve", surfaces=("cli",), python_only=("run",))
def cmd_serve(
    run: Run,
    *,
    host: Annotated[str, Arg(description="The address to bind: 127.0.0.1, localhost or ::1.")] = "127.0.0.1",
    port: Annotated[int, Arg(ge=0, le=65_535, description="The port (0: any free port).")] = 8787,
    idle_exit_seconds: Annotated[
        float, Arg(ge=0, description="Exit after this many seconds without a request (0: never).")
    ] = 0.0,
    yields: Annotated[
        bool,
        Arg(description="Give the store up, and exit, when another process opens it (as a hook's server does)."),
    ] = False,
) -> int:
    """Serves the memory over HTTP on 127.0.0.1, the project's one writer."""
    try:
        # Its dependencies load only when serving. (The ignore covers checkouts without the module.)
        from .http import serve  # type: ignore[import-not-found, unused-ignore]
    except ImportError as exc:
        raise _unavailable("the HTTP server", exc) from None
    serve(run.root, host=host, port=port, idle_exit_seconds=idle_exit_seconds, yields=yields)
    return wire.EXIT_OK


@verb(name="hooks", surfaces=("cli",), python_only=("run",))
def cmd_hooks(
    run: Run,
    action: Annotated[Literal["install", "uninstall"], Arg(description="Install or uninstall the hooks.")],
    *,
    scope: Annotated[
        Literal["project", "user"], Arg(description="The project's .claude/settings.json, or the user's.")
    ] = "project",
    settings: Annotated[str | None, Arg(description="This settings file instead.")] = None,
) -> int:
    """Installs or uninstalls aircher-mem's Claude Code hooks."""
    try:
        from .hooks import install, uninstall  # type: ignore[import-not-found, unused-ignore]
    except ImportError as exc:
        raise _unavailable("the Claude Code hooks module", exc) from None
    act = install if action == "install" else uninstall
    summary = act(run.root, scope=scope, settings=None if settings is None else Path(settings))
    if run.out.as_json:
        run.out.json(summary)
    else:
        for key, value in summary.items():
            run.out.line(f"{key}: {value if isinstance(value, str) else wire.dumps(value)}")
    return wire.EXIT_OK


@verb(name="hook", surfaces=("cli",), python_only=("run",))
def cmd_hook(
    run: Run,
    event: Annotated[
        str, Arg(min_length=1, description="The hook event, e.g. SessionStart, UserPromptSubmit, PostToolUse.")
    ],
) -> int:
    """Runs a Claude Code hook: the event's JSON on stdin, the hook's output on stdout.

    Claude Code runs this with the event's JSON on stdin. It never fails or blocks
    the agent's action (exit 2 would block it): stdin not closed within ``[hooks]
    stdin_seconds`` or over ``[hooks] payload_max_bytes`` is a ``HookInputError`` on
    stderr and exit 1, which Claude Code reports as a non-blocking error; anything
    else exits 0 with problems on stderr, and when the hook's work passes ``[hooks]
    deadline_seconds`` it prints nothing and the process exits at once."""
    try:
        hooks = importlib.import_module(f"{__package__}.hooks")
    except ImportError as exc:
        raise _unavailable("the Claude Code hooks module", exc) from None
    root = Path(run.args.root) if run.args.root is not None else None
    return hook_command.run(hooks, event, root, run.out.out)


@verb(name="users", surfaces=("cli",), python_only=("run",))
def cmd_users(
    run: Run,
    action: Annotated[
        Literal["list", "add", "remove"],
        Arg(description="list the users with a token; add one (its token is printed once); remove one's token."),
    ] = "list",
    name: Annotated[str | None, Arg(description="The user to add or remove (their name on the team's store).")] = None,
) -> Users:
    """Per-user tokens for the project's server on a team's store: each request acts for the user its token names."""
    from . import accounts

    root = run.root
    token = None
    if action != "list":
        if name is None:
            raise InvalidInputError(f"users {action} needs the user's name")
        if action == "add":
            if not Policy.load(root).store.url:
                raise InvalidInputError(
                    "per-user tokens are for a team's store: set [store] url in .aircher/config.toml first"
                )
            token = accounts.add(root, name)
        else:
            accounts.remove(root, name)
    elif name is not None:
        raise InvalidInputError("users list takes no name")
    return Users(accounts.listed(root), token)


# -- parsing: each command's arguments from its declaration ----------------------------------


def _kind_of(p: verbs.Param) -> Literal["bool", "list", "json", "value"]:
    base = p.base
    origin = typing.get_origin(base) or base
    if base is bool:
        return "bool"
    if origin in (list, tuple, collections.abc.Sequence) and base is not str:
        args = typing.get_args(base)
        if origin is tuple and args and all(a is not Ellipsis for a in args):
            return "json"  # a pair: [first, last]
        return "list"
    if origin in (dict, collections.abc.Mapping) or base is Any or typing.is_typeddict(base):
        return "json"
    return "value"


def _given(v: verbs.Verb, args: argparse.Namespace) -> dict[str, Any]:
    """The verb's arguments the command line gave (converted and bounded by the
    parser; the verb checks the rest, as for any Python caller). A typed object (a
    snapshot) is checked field by field against its declaration, as the servers
    check it: a bad field is an :class:`InvalidInputError` naming it."""
    given = {p.name: getattr(args, p.name) for p in v.params if getattr(args, p.name, None) is not None}
    for p in v.params:
        if p.name in given and typing.is_typeddict(p.base):
            given[p.name] = v.argument_json(p.name, given[p.name])
    return given


def _convert_of(p: verbs.Param) -> str:
    """How the command line reads the argument: "time", "int", "float" or "str"."""
    if any(isinstance(item, Parse) for item in verbs.metadata(p.annotation)):
        return "time"
    return {int: "int", float: "float"}.get(p.base, "str")


def _param_spec(p: verbs.Param) -> dict[str, Any]:
    help = p.help or None
    if p.default not in (inspect.Parameter.empty, None, ()) and help is not None:
        help = f"{help} (default: {p.default})"
    return {
        "name": p.name,
        "positional": p.positional,
        "required": p.required,
        "kind": _kind_of(p),
        "convert": _convert_of(p),
        "minimum": p.minimum,
        "maximum": p.maximum,
        "choices": list(p.choices) or None,
        "help": help,
    }


def command_specs() -> list[dict[str, Any]]:
    """Every command of the CLI described from the verb registry (what
    :func:`command_line.parser_of` builds the parser from): its name, summary,
    whether it prints a result (``--json``), its parameters with their types,
    bounds and help, its presentation options, and for a service verb a server
    can answer, its route and result type. ``data/cli.json`` in the package holds
    this description (:func:`write_command_specs`)."""
    specs = []
    for v in verbs.all_verbs("cli"):
        served = "python" in v.surfaces and v.http is not None and v.name not in ("create_store", "index")
        specs.append(
            {
                "name": v.name,
                "command": v.cli_name,
                "summary": v.summary,
                # a table, or --json: a verb's result, or the summary hooks prints
                "printed": "python" in v.surfaces or dataclasses.is_dataclass(v.result) or v.name == "hooks",
                "path_argument": v.name in ("create_store", "index"),
                "params": [_param_spec(p) for p in v.params],
                "options": [list(option) for option in CLI_OPTIONS.get(v.name, ())],
                "route": list(v.http) if served and v.http is not None else None,
                "result": v.result.__name__ if served and isinstance(v.result, type) else None,
            }
        )
    return specs


def specs_text() -> str:
    """:func:`command_specs` as the text of ``data/cli.json``."""
    return json.dumps(command_specs(), indent=1, sort_keys=True) + "\n"


def write_command_specs(path: str | os.PathLike[str]) -> None:
    """Writes :func:`specs_text` to ``path`` (the package's ``data/cli.json``, after
    a change to a verb's declaration)."""
    Path(path).write_text(specs_text(), encoding="utf-8")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line: a subcommand per verb of the registry offered on the CLI
    (the name with dashes), its arguments from the verb's parameters. Built from
    ``data/cli.json`` when it describes the verbs declared now (a test keeps it
    equal to :func:`command_specs`; reading it spares making every verb of the
    registry for one command), else from the registry (a verb declared at run time).
    With ``command`` (a command line's first word) naming a subcommand, that one
    alone: it parses its command line as the whole parser does, and building all
    of them took longer than some commands run."""
    try:
        shipped = command_line.load_specs()
    except (OSError, ValueError):
        shipped = None
    if shipped is not None and sorted(s["name"] for s in shipped) == verbs.declared("cli"):
        specs = shipped
    else:
        specs = command_specs()
    chosen = [spec for spec in specs if spec["command"] == command]
    return command_line.parser_of(chosen or specs)


#: Options of a command's presentation, not of its verb.
CLI_OPTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "index": (("--quiet", "no progress line"),),
    "preview_context": (("--show", "print the messages too"),),
}


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None) -> int:
    """Runs one command; returns the exit code (the console script exits with it)."""
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words[0] if words else None)
    try:
        args = parser.parse_args(words)
    except SystemExit as exc:  # --help, --version, usage errors: argparse has printed
        return int(exc.code) if isinstance(exc.code, int) else wire.EXIT_USAGE
    out = Output(getattr(args, "json", False), stdout or sys.stdout)
    v = verbs.get(args.command)

    def produce() -> Any:
        if "python" not in v.surfaces:  # a command of the CLI itself: it writes its own output
            return v.function(Run(args, out), **_given(v, args))
        return _verb_result(v, args)

    return command_line.answer(args.command, out, produce, show_messages=bool(getattr(args, "show", False)))
