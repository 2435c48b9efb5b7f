"""The command line from its description, and a command answered by the project's
server without the service.

:func:`aircher_mem.interfaces.cli.command_specs` describes every command (its
arguments, their types and bounds, its route and result type) from the verb
registry; ``data/cli.json`` in the package holds that description (a test keeps
the two equal). :func:`parser_of` builds the ``argparse`` parser from it: the CLI
builds it from the registry, and :func:`run` from the file, so that a command a
running server answers (every service verb but ``create-store`` and ``index``)
imports the result types, the renderers and the HTTP client, not the service, its
stores or its engine. Whatever :func:`run` cannot answer that way (no server, a
config.toml the server does not describe, ``--help``, a bad argument, a server gone
before the request was sent) goes to the full CLI, which answers it as it always
has: the output and exit codes are the same either way.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from ..errors import AircherError
from . import wire
from .render import Output, show

__all__ = [
    "SPEC_FILE",
    "CommandUnavailable",
    "answer",
    "load_specs",
    "parser_of",
    "quiet_broken_pipe",
    "run",
    "say",
]

#: The commands' description in the package's ``data`` folder.
SPEC_FILE = "cli.json"


class CommandUnavailable(Exception):
    """A command whose module is not part of this installation."""


# -- the parser ------------------------------------------------------------------------------


def _json_value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None


def _words(text: str) -> list[str]:
    """A comma-separated list (``a,b``); blanks dropped, so ``""`` is the empty list."""
    return [part.strip() for part in text.split(",") if part.strip()]


class _Extend(argparse.Action):
    """A list option: each use adds its comma-separated values."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest) or []), *values])


def _converter(p: dict[str, Any]) -> Callable[[str], Any]:
    """The argument's text as the parameter's type: an integer or a number within
    its declared bounds, a time (ISO-8601 or Unix seconds), or the text itself."""
    convert = p["convert"]
    if convert == "time":
        from ..checks import parse_time

        def parse(text: str) -> Any:
            try:
                return parse_time(text)
            except ValueError as exc:
                raise argparse.ArgumentTypeError(str(exc)) from None

        return parse
    if convert not in ("int", "float"):
        return str
    base: type = int if convert == "int" else float
    low, high = p["minimum"], p["maximum"]

    def number(text: str) -> Any:
        try:
            value = base(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if base is int else 'a number'}") from None
        if base is float and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
        if low is not None and value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {text}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be <= {high}, got {text}")
        return value

    return number


def _add_param(parser: argparse.ArgumentParser, p: dict[str, Any]) -> None:
    kind, help, choices, name = p["kind"], p["help"], p["choices"], p["name"]
    if p["positional"]:
        nargs = None if p["required"] else "?"
        convert = _json_value if kind == "json" else _converter(p)
        parser.add_argument(name, nargs=nargs, choices=choices, type=convert, help=help, metavar=name.upper())
        return
    flag = ("-" if len(name) == 1 else "--") + name.replace("_", "-")
    if kind == "bool":
        parser.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction, default=None, help=help)
    elif kind == "list":
        parser.add_argument(
            flag, dest=name, action=_Extend, type=_words, metavar="A,B", help=f"{help or ''} (comma-separated)"
        )
    else:
        convert = _json_value if kind == "json" else _converter(p)
        metavar = "JSON" if kind == "json" else None
        parser.add_argument(
            flag, dest=name, required=p["required"], choices=choices, type=convert, metavar=metavar, help=help
        )


def parser_of(
    specs: Sequence[dict[str, Any]], parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser
) -> argparse.ArgumentParser:
    """The command line of the commands ``specs`` describes: a subcommand each, its
    arguments from its parameters."""
    from .._core import __version__

    rooted = parser_class(add_help=False)
    rooted.add_argument(
        "--root",
        metavar="DIR",
        help="the project (default: the nearest folder with .aircher/ from here upward)",
    )
    common = parser_class(add_help=False, parents=[rooted])
    common.add_argument("--json", action="store_true", help="print JSON (the MCP tools' shapes) instead of tables")
    parser = parser_class(
        prog="aircher-mem",
        description="Memory for LLM coding agents: code graph, episodic and long-term memory, context.",
        epilog='start with: aircher-mem index .  then: aircher-mem preview-context "<what you are about to do>" '
        "--show; exit codes: 1 error, 2 bad argument or path, 3 not found (no store, not indexed, no such symbol "
        "or memory), 4 store locked",
    )
    parser.add_argument("--version", action="version", version=f"aircher-mem {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for spec in specs:
        p = sub.add_parser(
            spec["command"],
            parents=[common if spec["printed"] else rooted],
            help=spec["summary"],
            description=spec["summary"],
        )
        if spec["path_argument"]:
            p.add_argument("path", nargs="?", help="the project folder (default: --root, else .)")
        for param in spec["params"]:
            _add_param(p, param)
        for flag, help in spec["options"]:
            p.add_argument(flag, action="store_true", help=help)
    return parser


# -- answering -------------------------------------------------------------------------------


def say(text: str) -> None:
    """One line on stderr; what UTF-8 cannot carry (a lone surrogate) is escaped."""
    sys.stderr.write(text.encode("utf-8", "backslashreplace").decode("utf-8") + "\n")


def quiet_broken_pipe() -> int:
    """The reader went away (``aircher-mem ... | head``): stop quietly, as Unix tools do."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141  # 128 + SIGPIPE


def answer(command: str, out: Output, produce: Callable[[], Any], *, show_messages: bool = False) -> int:
    """Shows what ``produce()`` returns (an int: the exit code of a command that
    wrote its own output) and returns the exit code; an error is one line on
    stderr (and its JSON with ``--json``) and the exit code of its kind."""
    from ..results import Doctor

    try:
        result = produce()
        if isinstance(result, int):
            return result
        show(result, out, show_messages=show_messages)
        out.out.flush()
        return wire.EXIT_OK if not isinstance(result, Doctor) or result.ok else wire.EXIT_ERROR
    except BrokenPipeError:
        return quiet_broken_pipe()
    except KeyboardInterrupt:
        say("aircher-mem: interrupted")
        return wire.EXIT_INTERRUPTED
    except CommandUnavailable as exc:
        say(f"aircher-mem {command}: {exc}")
        return wire.EXIT_INTERNAL
    except (AircherError, OSError) as exc:
        if out.as_json:
            out.json(wire.error_json(exc))
        say(f"aircher-mem {command}: {exc}")
        return wire.exit_code(exc)
    except Exception as exc:
        if os.environ.get("AIRCHER_DEBUG"):
            raise
        say(
            f"aircher-mem {command}: internal error: {type(exc).__name__}: {exc} "
            "(set AIRCHER_DEBUG=1 for the traceback, and please report it)"
        )
        return wire.EXIT_INTERNAL


# -- a command answered by the server --------------------------------------------------------


def load_specs() -> list[dict[str, Any]]:
    """The commands' description shipped in the package (``data/cli.json``)."""
    from ..root import shipped

    with open(shipped(SPEC_FILE), "rb") as f:
        specs: list[dict[str, Any]] = json.loads(f.read())
    return specs


class _Declined(Exception):
    """The command line is not one :func:`run` answers (the full CLI will)."""


class _Quiet(argparse.ArgumentParser):
    """A parser that never prints or exits: a bad command line is the full CLI's to report."""

    def error(self, message: str) -> Any:
        raise _Declined(message)

    def exit(self, status: int = 0, message: str | None = None) -> Any:
        raise _Declined(message or "")


def run(argv: Sequence[str], stdout: TextIO) -> int | None:
    """Answers the command line ``argv`` through the project's running server
    without importing the service, and returns the exit code; None when the full
    CLI must answer it (nothing was sent, nothing printed)."""
    if not argv or argv[0].startswith("-") or any(a in ("-h", "--help") for a in argv):
        return None
    try:
        specs = load_specs()
    except (OSError, ValueError):
        return None
    spec = next((s for s in specs if s["command"] == argv[0]), None)
    if spec is None or spec["route"] is None:
        return None
    try:
        args = parser_of([spec], _Quiet).parse_args(list(argv))
    except _Declined:
        return None
    call = _remote_call(spec, args)
    if call is None:
        return None
    from .client import ServerGoneError

    try:
        result = call()
    except ServerGoneError:  # nothing was sent: the full CLI opens the store, or finds another server
        return None
    except (Exception, KeyboardInterrupt) as exc:  # answered as the full CLI answers it
        failure = exc

        def fail() -> Any:
            raise failure

        return answer(spec["command"], Output(args.json, stdout), fail)
    show_messages = bool(getattr(args, "show", False))
    return answer(spec["command"], Output(args.json, stdout), lambda: result, show_messages=show_messages)


def _remote_call(spec: dict[str, Any], args: argparse.Namespace) -> Callable[[], Any] | None:
    """The request to the project's proven server, as a call that returns the
    decoded result; None when no server runs for it (or its server.json does not
    describe the project's config.toml: the full CLI reads the config)."""
    from ..errors import StoreNotFoundError
    from ..root import root_folder
    from .client import Client, decode_answer, encode_argument, snapshot_of

    try:
        root = args.root if args.root is not None else root_folder()
    except StoreNotFoundError:
        return None
    snapshot = snapshot_of(root)
    if snapshot is None:
        return None
    server = snapshot["server"]
    try:
        client = Client.discover(
            root, timeout=server["client_timeout_seconds"], proof_timeout=server["proof_timeout_seconds"]
        )
    except (AircherError, OSError):
        return None
    if client is None:
        return None
    method, path = spec["route"]
    values = {
        p["name"]: encode_argument(getattr(args, p["name"]))
        for p in spec["params"]
        if getattr(args, p["name"], None) is not None
    }

    def call() -> Any:
        from .. import results

        if method == "POST":
            data = client.request("POST", path, json=values)
        else:
            data = client.request("GET", path, params=values)
        return decode_answer(spec["name"], getattr(results, spec["result"]), data)

    return call
