"""The ``aircher-mem`` console script: a small dispatcher in front of the CLI.

``aircher-mem --version`` and ``aircher-mem hook EVENT`` (a Claude Code hook, run on
every prompt and every tool call; also what :mod:`aircher_mem.hook`, the installed
command, runs) start here and import only what they need: the version from the
native module; for ``UserPromptSubmit`` and ``PostToolUse`` with a server running for
the project, the thin path (:mod:`.thin`: C modules of the standard library besides
its own); for the other hooks the hooks module and the HTTP client, and the service
when no server runs. A service verb with a server running for the project is sent
to it by :func:`.command_line.run`, which imports the result types, the renderers
and the HTTP client only. Every other command line, and any form of these the
dispatcher does not recognise (``--help``, an abbreviated option, a bad argument),
goes to :func:`aircher_mem.interfaces.cli.main` unchanged, which parses it and
answers exactly as before: the output and exit codes are the CLI's."""

from __future__ import annotations

import os
import sys

from ..errors import AircherError
from . import hook_command

TYPE_CHECKING = False  # not typing's: importing typing is a cost here; checkers treat any TYPE_CHECKING as true
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import NoReturn

__all__ = ["main", "console", "hook_arguments"]

EXIT_OK = 0  # wire.EXIT_OK (a test holds these equal)
EXIT_INTERNAL = 70  # wire.EXIT_INTERNAL
EXIT_INTERRUPTED = 130  # wire.EXIT_INTERRUPTED


def main(argv: Sequence[str] | None = None) -> int:
    """Runs one command line; returns the exit code (the console script exits with it)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:
        from .._core import __version__

        try:
            sys.stdout.write(f"aircher-mem {__version__}\n")
            sys.stdout.flush()
        except BrokenPipeError:  # `aircher-mem --version | true`
            from .command_line import quiet_broken_pipe

            return quiet_broken_pipe()
        return EXIT_OK
    parsed = _hook_words(args)
    if parsed is not None:
        return _hook(*parsed)
    from .command_line import run

    code = run(args, sys.stdout)  # a service verb, answered by the project's server
    if code is not None:
        return code
    from .cli import main as cli_main

    return cli_main(args)


def console() -> NoReturn:
    """The ``aircher-mem`` console script (and ``python -m aircher_mem``): :func:`main`
    on the command line, then the process ends. Once the command has closed every
    store it opened and no thread of its own is left, it ends at once
    (:func:`.hook_command.leave`): the interpreter's teardown (a large project's
    graph freed piece by piece, the modules taken apart) would only make the user
    wait. Otherwise (a store still held, a thread still working) it exits the usual
    way, whose exit handlers close them."""
    code = main()
    store = sys.modules.get("aircher_mem.store")
    held = bool(getattr(store, "_HOLDS", None))
    threading = sys.modules.get("threading")  # never imported: no thread was started
    working = threading is not None and any(
        not t.daemon and t is not threading.main_thread() for t in threading.enumerate()
    )
    if held or working:
        sys.exit(code)
    hook_command.leave(code)


def hook_arguments(args: Sequence[str]) -> tuple[str, Path | None] | None:
    """The event and ``--root`` of ``hook EVENT [--root DIR]`` (``--root DIR`` or
    ``--root=DIR``, before or after the event); None for anything else, which the
    CLI's own parser handles."""
    words = _hook_words(args)
    if words is None:
        return None
    from pathlib import Path

    return words[0], None if words[1] is None else Path(words[1])


def _hook_words(args: Sequence[str]) -> tuple[str, str | None] | None:
    """:func:`hook_arguments` with ``--root`` as given (no pathlib to import)."""
    if len(args) < 2 or args[0] != "hook":
        return None
    rest = list(args[1:])
    root: str | None = None
    for n, word in enumerate(rest):
        if word.startswith("--root="):
            root = word[len("--root=") :]
            del rest[n]
            break
        if word == "--root" and n + 1 < len(rest) and not rest[n + 1].startswith("-"):
            root = rest[n + 1]
            del rest[n : n + 2]
            break
    if len(rest) != 1 or not rest[0] or rest[0].startswith("-"):
        return None
    return rest[0], root


def _hook(event: str, root: str | None) -> int:
    """``aircher-mem hook EVENT`` as the CLI runs it, its failures answered as
    ``cli.main`` answers them: on the thin path (:mod:`.thin`) when a server runs
    for the project, else with the hooks module."""
    try:
        from . import thin

        code = thin.run(event, root, sys.stdout, lambda payload: _full(event, root, payload))
        return _full(event, root, None) if code is None else code
    except BrokenPipeError:
        from .command_line import quiet_broken_pipe

        return quiet_broken_pipe()
    except KeyboardInterrupt:
        hook_command.say("aircher-mem: interrupted")
        return EXIT_INTERRUPTED
    except (AircherError, OSError) as exc:
        from .wire import exit_code

        hook_command.say(f"aircher-mem hook: {exc}")
        return exit_code(exc)
    except Exception as exc:
        if os.environ.get("AIRCHER_DEBUG"):
            raise
        hook_command.say(
            f"aircher-mem hook: internal error: {type(exc).__name__}: {exc} "
            "(set AIRCHER_DEBUG=1 for the traceback, and please report it)"
        )
        return EXIT_INTERNAL


def _full(event: str, root: str | None, payload: str | None) -> int:
    """The hook on the full path (:mod:`.hooks`): the event read from stdin, or
    run on ``payload`` when the thin path read it already. The process then ends at
    once (:func:`.hook_command.leave`)."""
    from pathlib import Path

    from .thin import site_packages

    site_packages()
    where = None if root is None else Path(root)
    try:
        from . import hooks
    except ImportError:
        from .cli import main as cli_main  # it reports the missing module

        return cli_main(["hook", event] if root is None else ["hook", event, "--root", root])
    if payload is None:
        code = hook_command.run(hooks, event, where, sys.stdout)
    else:
        code = hook_command.finish(hooks, event, payload, where, sys.stdout)
    hook_command.leave(code)
