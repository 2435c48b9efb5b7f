"""``aircher-mem hook EVENT``: the event's JSON from stdin, the hook's text to stdout.
Both ways in run it: the console script's dispatcher (:mod:`.dispatch`) and the
CLI's ``hook`` command (:mod:`.cli`), given the hooks module (:mod:`.hooks`)."""

from __future__ import annotations

import os
import sys

from ..errors import AircherError

TYPE_CHECKING = False  # not typing's: importing typing is a cost here; checkers treat any TYPE_CHECKING as true
if TYPE_CHECKING:
    from pathlib import Path
    from types import ModuleType
    from typing import NoReturn, TextIO

__all__ = ["run", "finish", "leave", "say"]

EXIT_OK = 0  # wire.EXIT_OK
EXIT_ERROR = 1  # wire.EXIT_ERROR (a test holds these equal)


def run(hooks: ModuleType, event: str, root: Path | None, out: TextIO) -> int:
    """Runs a Claude Code hook with ``hooks`` (:mod:`.hooks`): the event's JSON read
    from stdin within the ``[hooks]`` limits, the hook's text written to ``out``.
    Stdin not closed in time or over the size limit is the ``HookInputError`` on
    stderr and exit 1 (non-blocking for Claude Code); anything else exits 0 with
    problems on stderr. When the hook's work passed its deadline the process exits
    at once, leaving it."""
    try:
        limits = hooks.input_policy(root, event)
        stdin = sys.stdin
        if stdin is None:
            payload = ""
        else:
            payload = hooks.read_payload(stdin, seconds=limits.stdin_seconds, max_bytes=limits.payload_max_bytes)
    except hooks.HookInputError as exc:
        say(f"aircher-mem hook {event}: {type(exc).__name__}: {exc}")
        return EXIT_ERROR  # non-blocking: Claude Code shows it and goes on
    except (AircherError, OSError) as exc:
        say(f"aircher-mem hook {event}: {exc}")
        return EXIT_OK
    return finish(hooks, event, payload, root, out)


def finish(hooks: ModuleType, event: str, payload: str, root: Path | None, out: TextIO) -> int:
    """The rest of :func:`run` once the payload is read: the hook run on it with
    ``hooks`` (:mod:`.hooks`) and its text written to ``out``."""
    try:
        text, code = hooks.run_hook(event, payload, root=root)
    except (AircherError, OSError, UnicodeDecodeError) as exc:
        say(f"aircher-mem hook {event}: {exc}")
        return EXIT_OK
    if text:
        out.write(text)
    out.flush()
    abandoned = getattr(hooks, "abandoned", None)
    if callable(abandoned) and abandoned():  # work past the deadline: do not wait for it
        sys.stderr.flush()
        os._exit(int(code))
    return int(code)


def leave(code: int) -> NoReturn:
    """Ends the process with ``code`` once stdout, stderr and the log are flushed,
    without the interpreter's teardown (its modules, DuckDB's engine and the
    threads' pools taken apart one by one: 10-20 ms on every prompt). For a caller
    that has closed every store it opened (a hook once its work is done, the console
    script after a command): what they wrote is on disk, nothing else is left to run."""
    if "logging" in sys.modules:
        sys.modules["logging"].shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can reach it
            pass
    os._exit(code)


def say(text: str) -> None:
    """One line on stderr; what UTF-8 cannot carry (a lone surrogate) is escaped."""
    sys.stderr.write(text.encode("utf-8", "backslashreplace").decode("utf-8") + "\n")
