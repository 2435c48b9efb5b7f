"""Claude Code hooks: project memory injected into the agent's context and its work
recorded, without the agent calling a tool.

``install(root)`` writes our entries into Claude Code's settings and ``uninstall``
removes exactly them; ``run_hook(event, payload)`` is what ``aircher-mem hook EVENT``
runs with the event's JSON (read from stdin by the CLI). The command installed is
``<python> -I -S <site-packages>/aircher_mem/hook.py EVENT`` (:mod:`aircher_mem.hook`:
``aircher-mem hook EVENT`` without the console script's imports; on Windows, or
when the interpreter is not known, ``<path>/aircher-mem hook EVENT``). The settings
layout written::

    {"hooks": {
      "SessionStart": [{"hooks": [{"type": "command",
                                   "command": "/venv/bin/python3 -I -S /venv/.../aircher_mem/hook.py SessionStart",
                                   "timeout": 10}]}],
      "UserPromptSubmit": [{"hooks": [{"type": "command", "command": ".../hook.py UserPromptSubmit", ...}]}],
      "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": ".../hook.py PostToolUse", ...}]}],
      "PreCompact": [{"hooks": [{"type": "command", "command": ".../hook.py PreCompact", ...}]}],
      "Stop": [{"hooks": [{"type": "command", "command": ".../hook.py Stop", ...}]}]}}

An entry is ours when its command runs ``aircher_mem/hook.py`` (any folder, any
interpreter and options before it) or its first word is the ``aircher-mem`` script
(any folder) and its second ``hook``, as installed before: ``install`` updates such
an entry to the current command. Everything else in the file is kept as it was: the
JSON is written back in the file's own style (indentation of spaces or tabs, or one
line; separators; escaped or raw non-ASCII; line ends; a final newline or not: the
style that reproduces the file exactly when one does, so ``install`` then
``uninstall`` gives the file back byte for byte), key order kept, and not written at
all when nothing changes.

What each event does (the store is ``find_root(root or payload["cwd"])``; without one
a hook does nothing):

- ``SessionStart`` (source startup, resume, clear or compact): prints the open tasks,
  then the four tiers ``assemble`` gives for them within ``[hooks] context_tokens``
  (recent errors and their fixes, decisions; memories and past tasks the tasks
  recall; the project's conventions; what else memory holds), one line each
  (``[memory N] (kind) text`` for a memory), within ``[hooks] context_chars``.
- ``UserPromptSubmit``: prints the critical and relevant tiers ``assemble`` gives
  for the prompt (a memory when it scores at least ``recall_min_score``, a
  predicted file at ``predict_min_confidence``), then stores the prompt as a user
  turn (extraction runs).
- ``PostToolUse``: records the tool call with the files its input and response name
  (``mentions``), and for Read, Edit, MultiEdit, Write and
  NotebookEdit the file interaction (read, edit, write) with the lines read or changed
  when the tool's input or response gives them. A recorded edit marks the memory's
  graph stale (``Recorded.graph_stale``): through a server, the server refreshes the
  graph before its next graph verb; a one-shot process looks at modification times
  anyway.
- ``PreCompact`` (trigger manual or auto): stores a context snapshot (the shape of
  ``Memory.record_snapshot``) of the transcript's last messages, with the context
  size the last answer reported.
- ``Stop``: adds the session's user and assistant turns not stored yet from the
  transcript (the offset read so far is kept per session in ``.aircher/hooks-state.json``,
  0600), skipping the prompts ``UserPromptSubmit`` stored; extraction runs on them.

A hook never fails or blocks the agent: ``run_hook`` never raises, always exits 0, and
anything wrong (a malformed payload, no store, a store another process holds past the
deadline, an error) is logged as a warning (stderr) and prints nothing. The deadline
is the Policy's ``[hooks] deadline_seconds`` (2 s) from the start: the work runs in a
thread, and when it has not answered by then the hook prints nothing and
``aircher-mem hook`` exits 0 at once. Work is also checked against the deadline
between steps, so it stops early rather than late; ``Stop`` resumes where it stopped
the next time. Reading the event is bounded as well (:func:`read_payload`): stdin
not closed within ``[hooks] stdin_seconds`` or over ``[hooks] payload_max_bytes`` is a
:class:`HookInputError`, and ``aircher-mem hook`` says so on stderr and exits 1, which
Claude Code reports as a non-blocking error (only exit 2 blocks).

When a server runs for the project (``client.Client.discover(root)`` finds one), the
hooks are its clients (``GET /tasks``, ``POST /assemble``, ``POST /add-turn``, ``POST
/record-tool-call``, ``POST /record-file-interaction``, ``POST /record-snapshot``): the requests
``client.RemoteMemory`` would send, the answers' JSON used as it is; otherwise they
open the store themselves. With a server a hook imports neither the service nor the
Policy: its ``[hooks]`` limits come from server.json (:func:`client.snapshot_of`)
while config.toml has the digest written there. ``UserPromptSubmit`` and
``PostToolUse`` with a server run on the thin path (:mod:`.thin`), which imports
only C modules of the standard library besides its own. Without a server,
``PostToolUse`` appends its records to the hooks' journal when nobody holds the
store (:mod:`aircher_mem.journal`), its limits read from hooks.json, which this
path writes whenever it loads the Policy; the other events, ``UserPromptSubmit``
without a server and a ``PostToolUse`` the journal does not take come here. A hook
that opened the store itself starts ``aircher-mem serve --yields`` for the project
once done when ``[hooks] start_server`` says so (the default), exiting after
``[hooks] server_idle_seconds`` without a request, or as soon as another process
opens the store (it gives the store up: :func:`aircher_mem.store.taken`).

Sources relied on (third-party pages found by search, not authority):

- Claude Code's hooks reference (docs.anthropic.com/en/docs/claude-code/hooks, now
  code.claude.com/docs/en/hooks; its translations, and a copy in the claude-mem
  project's ``docs/reference``): the settings files
  (``~/.claude/settings.json`` user, ``.claude/settings.json`` project), the
  ``{"hooks": {Event: [{"matcher", "hooks": [{"type": "command", "command", "timeout"}]}]}}``
  layout (``matcher`` only for tool events, ``*`` every tool, omitted elsewhere), the
  stdin fields (``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``;
  ``prompt``; ``tool_name``, ``tool_input``, ``tool_response``; ``source``
  startup|resume|clear|compact; ``trigger`` manual|auto), and that stdout on exit 0 is
  added to the context for SessionStart and UserPromptSubmit (JSON
  ``hookSpecificOutput.additionalContext`` being the other way), exit 2 blocking.
- The size: injected hook output is capped at 10,000 characters (longer becomes a
  preview) per users who measured it (dev.to "rulestack" UserPromptSubmit lab;
  colbymchenry/codegraph pull request 1695); the reference prose gives no number, so
  ``[hooks] context_chars`` (4,000) stays well under it.
- Tool payloads, which the reference leaves to each tool: Read's ``tool_response``
  ``{"type": "text", "file": {"filePath", "content", "numLines", "startLine", "totalLines"}}``
  and Edit/Write's ``{"filePath", "structuredPatch": [{"oldStart", "oldLines",
  "newStart", "newLines", "lines"}]}`` (CloudNimble.ClaudeEssentials' hook payload
  documentation); transcript lines ``{"type": "user"|"assistant", "message": {"role",
  "content"}, "uuid", "timestamp", "isMeta", "isSidechain"}`` (the Agent SDK's sessions
  page and notes on the transcript format).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import NamedTuple, cast

from ..brief import MARKER, session_brief, task_query
from ..errors import AircherError, GitError, InvalidInputError, StoreNotFoundError
from ..root import STORE_DIR, git_branch
from .client import Client, find_root, policy_snapshot, snapshot_of
from .hook_command import EXIT_OK
from .thin import (
    DB_FILE,
    HOOKS_FILE,
    STATE_FILE,
    TOKEN_ENV,
    HookInputError,
    Logger,
    config_digest,
    opening_alone,
    read_payload,
    server_data,
    write_private,
)
from .thin import Call as _Call
from .thin import Remote as _Remote
from .thin import State as _State
from .thin import Verbs as _Verbs
from .thin import int_of as _int
from .thin import listed as _list
from .thin import open_store as _open
from .thin import post_tool as _post_tool
from .thin import prompt_hash as _prompt_hash
from .thin import user_prompt as _user_prompt

# A hook runs on every prompt and every tool call: with a server it imports only this,
# the client and the assembly's text (no Policy, no service, no numpy or DuckDB); the
# store, the Policy and the results load when the hook opens the store itself. (Not
# typing.TYPE_CHECKING: type checkers treat any name TYPE_CHECKING as true.)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from ..config import HooksPolicy, Policy

    R = TypeVar("R")

__all__ = [
    "EVENTS",
    "STATE_FILE",
    "install",
    "uninstall",
    "run_hook",
    "abandoned",
    "settings_path",
    "read_payload",
    "input_policy",
    "HookInputError",
]

log = Logger("aircher_mem.hooks")

EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "Stop")
# The events whose hook assembles a context (and counts its tokens).
_ASSEMBLING = frozenset(("SessionStart", "UserPromptSubmit"))
# The events whose hook opens the store when no server runs (PostToolUse journals).
_OPENING = frozenset(("SessionStart", "UserPromptSubmit", "PreCompact", "Stop"))
SCRIPT = "aircher-mem"
HOOK_FILE = "hook.py"  # aircher_mem/hook.py: what the installed command runs
SCOPES = ("project", "user")
MATCHERS = {"PostToolUse": "*"}  # every tool; the other events take no matcher
HOOK_TIMEOUT_SECONDS = 10  # Claude Code's own limit on our command (a backstop)

# -- limits: the tunable ones are the Policy's ``[hooks]`` (deadline_seconds,
# context_tokens, context_chars, line_chars, query_chars, parameter_chars, turn_chars,
# recall_min_score, transcript_max_bytes, ...) ------------------------------------------

#: Characters of a hook payload :func:`run_hook` takes at most (a Read of a large file
#: carries it whole): the default of ``[hooks] payload_max_bytes``, which bounds what
#: ``aircher-mem hook`` reads from stdin (a test holds the two equal).
PAYLOAD_MAX_CHARS = 32_000_000
#: Where a transcript may be: inside these folders (``~`` is the user's home).
TRANSCRIPT_DIRS: tuple[str, ...] = ("~", "/tmp")


# -- settings ---------------------------------------------------------------------------


def settings_path(root: str | os.PathLike[str], *, scope: str = "project", settings: Path | None = None) -> Path:
    """Claude Code's settings file for ``scope``: ``<root>/.claude/settings.json``
    ("project") or ``~/.claude/settings.json`` ("user"); ``settings`` overrides both."""
    if scope not in SCOPES:
        raise InvalidInputError(f"scope must be 'project' or 'user', got {scope!r:.80}")
    if settings is not None:
        path = Path(settings).expanduser()
    elif scope == "user":
        path = Path.home() / ".claude" / "settings.json"
    else:
        path = Path(root).expanduser() / ".claude" / "settings.json"
    if path.is_symlink():  # a settings file kept elsewhere (dotfiles): write the real one
        path = path.resolve()
    if path.is_dir():
        raise InvalidInputError(f"Claude Code settings {path} is a directory, not a file")
    return path


def _script() -> str:
    """What runs a hook, before its event: ``<python> -I -S <aircher_mem/hook.py>``
    (:mod:`aircher_mem.hook`: no console script, site-packages only when the full
    path needs it) with the interpreter running this; the console script's
    ``aircher-mem hook`` on Windows or when that interpreter is not known."""
    python = sys.executable
    hook = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), HOOK_FILE)
    if os.name != "nt" and python and os.path.isabs(python) and os.path.isfile(hook):
        return f"{shlex.quote(python)} -I -S {shlex.quote(hook)}"
    import shutil

    found = shutil.which(SCRIPT)
    return f"{shlex.quote(os.path.abspath(found) if found else SCRIPT)} hook"


def _command(script: str, event: str) -> str:
    return f"{script} {event}"


def _ours(command: object, event: str | None = None) -> bool:
    """Whether ``command`` runs our hook (for ``event``, when given): the console
    script's ``aircher-mem hook EVENT`` (any folder), or an interpreter with
    options running ``aircher_mem/hook.py EVENT`` (any folder)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) >= 2 and os.path.basename(words[0]) in (SCRIPT, f"{SCRIPT}.exe") and words[1] == "hook":
        rest = words[2:]
    else:
        n = next((i for i, word in enumerate(words[1:], 1) if not word.startswith("-")), len(words))
        file = words[n] if n < len(words) else ""
        if os.path.basename(file) != HOOK_FILE or os.path.basename(os.path.dirname(file)) != "aircher_mem":
            return False
        rest = words[n + 1 :]
    return event is None or rest[:1] == [event]


def _entry(event: str, command: str) -> dict[str, Any]:
    hook = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECONDS}
    entry: dict[str, Any] = {"matcher": MATCHERS[event]} if event in MATCHERS else {}
    entry["hooks"] = [hook]
    return entry


class _Style(NamedTuple):
    """How a settings file is written: ``json.dumps``' indent (spaces, a tab, or
    None: one line), separators and ASCII escaping, the line ending and whether the
    file ends with one."""

    indent: int | str | None = 2
    separators: tuple[str, str] = (",", ": ")
    ensure_ascii: bool = False
    newline: str = "\n"
    final: bool = True

    def dumps(self, data: Mapping[str, Any]) -> str:
        text = json.dumps(data, indent=self.indent, separators=self.separators, ensure_ascii=self.ensure_ascii)
        if self.newline != "\n":  # a newline inside a JSON string is the escape \n, never the character
            text = text.replace("\n", self.newline)
        return text + (self.newline if self.final else "")


def _style(text: str, data: Mapping[str, Any]) -> _Style:
    """The style that writes ``data`` back as exactly ``text`` (so that install then
    uninstall gives the file back byte for byte) when there is one; else the
    file's indentation and line ends with ``json.dumps``' separators."""
    newline = "\r\n" if "\r\n" in text else "\n"
    final = text.endswith("\n")
    ensure_ascii = text.isascii() and "\\u" in text
    first = re.search(r"\n([ \t]+)\S", text)
    if first is None:
        indents: list[int | str | None] = [None]
        separators = [(", ", ": "), (",", ":"), (",", ": "), (", ", ":")]
    else:
        unit = first.group(1)
        indents = [len(unit) if set(unit) == {" "} else unit]
        separators = [(",", ": "), (",", ":")]
    for indent in indents:
        for pair in separators:
            style = _Style(indent, pair, ensure_ascii, newline, final)
            if style.dumps(data) == text:
                return style
    return _Style(indents[0], separators[0], ensure_ascii, newline, final)


def _read_settings(path: Path) -> tuple[dict[str, Any], bool, _Style]:
    """The settings as a dict, whether the file exists and its style; InvalidInputError
    naming the file when it is not a JSON object with an object ``hooks``."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:  # line ends as they are
            text = handle.read()
    except FileNotFoundError:
        return {}, False, _Style()
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"Claude Code settings {path} is not UTF-8 text: {exc}") from None
    except OSError as exc:
        raise AircherError(f"cannot read Claude Code settings {path}: {exc}") from None
    if not text.strip():
        return {}, True, _Style()
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidInputError(f"Claude Code settings {path} is not valid JSON ({exc}); left unchanged") from None
    if not isinstance(data, dict):
        raise InvalidInputError(f"Claude Code settings {path} is not a JSON object; left unchanged")
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise InvalidInputError(f"Claude Code settings {path}: 'hooks' is not an object; left unchanged")
    for event in EVENTS:
        groups = (hooks or {}).get(event)
        if groups is not None and not isinstance(groups, list):
            raise InvalidInputError(f"Claude Code settings {path}: hooks.{event} is not a list; left unchanged")
    return data, True, _style(text, data)


def _write_settings(path: Path, data: Mapping[str, Any], style: _Style) -> None:
    """Writes ``data`` in ``style`` atomically, keeping the file's mode."""
    text = style.dumps(data)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            mode = 0o644
        import tempfile

        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            with _quiet():
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise AircherError(f"cannot write Claude Code settings {path}: {exc}") from None


@contextmanager
def _quiet() -> Iterator[None]:
    try:
        yield
    except OSError:
        pass


def _groups(hooks: Mapping[str, Any], event: str) -> list[Any]:
    groups = hooks.get(event)
    return groups if isinstance(groups, list) else []


def _commands(group: object) -> list[dict[str, Any]]:
    if isinstance(group, dict) and isinstance(group.get("hooks"), list):
        return [h for h in group["hooks"] if isinstance(h, dict)]
    return []


def install(root: str | os.PathLike[str], *, scope: str = "project", settings: Path | None = None) -> dict[str, Any]:
    """Adds ``aircher-mem hook <event>`` for each of :data:`EVENTS` to Claude Code's
    settings (see :func:`settings_path`), keeping everything else. Idempotent: an
    event that has our hook already is left alone (its command is updated if the
    script moved). Returns ``{"path", "scope", "command", "added", "updated",
    "unchanged", "written"}``."""
    path = settings_path(root, scope=scope, settings=settings)
    data, _existed, style = _read_settings(path)
    hooks: dict[str, Any] = data.get("hooks") or {}
    script = _script()
    added: list[str] = []
    updated: list[str] = []
    unchanged: list[str] = []
    for event in EVENTS:
        command = _command(script, event)
        mine = [h for g in _groups(hooks, event) for h in _commands(g) if _ours(h.get("command"), event)]
        if not mine:
            hooks.setdefault(event, []).append(_entry(event, command))
            added.append(event)
            continue
        stale = [h for h in mine if h.get("command") != command]
        for hook in stale:
            hook["command"] = command
        (updated if stale else unchanged).append(event)
    written = bool(added or updated)
    if written:
        data["hooks"] = hooks
        _write_settings(path, data, style)
    return {
        "path": str(path),
        "scope": scope,
        "command": _command(script, "EVENT"),
        "added": added,
        "updated": updated,
        "unchanged": unchanged,
        "written": written,
    }


def uninstall(root: str | os.PathLike[str], *, scope: str = "project", settings: Path | None = None) -> dict[str, Any]:
    """Removes every hook of ours (any event) from Claude Code's settings, and the
    matcher groups, event lists and ``hooks`` object left empty by it; a file left
    holding nothing (``{}``) is deleted. Returns ``{"path", "scope", "removed",
    "written", "deleted"}``."""
    path = settings_path(root, scope=scope, settings=settings)
    data, existed, style = _read_settings(path)
    summary: dict[str, Any] = {"path": str(path), "scope": scope, "removed": [], "written": False, "deleted": False}
    hooks = data.get("hooks")
    if not existed or not isinstance(hooks, dict):
        return summary
    removed: list[str] = []
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups: list[Any] = []
        touched = False
        for group in groups:
            inner = _commands(group)
            kept = [h for h in inner if not _ours(h.get("command"))]
            if len(kept) != len(inner):
                touched = True
                if not kept and len(group["hooks"]) == len(inner):
                    continue  # the group held only ours
                group["hooks"] = [h for h in group["hooks"] if not (isinstance(h, dict) and _ours(h.get("command")))]
            kept_groups.append(group)
        if touched:
            removed.append(event)
            if kept_groups:
                hooks[event] = kept_groups
            else:
                del hooks[event]
    if not removed:
        return summary
    if not hooks:
        del data["hooks"]
    if data:
        _write_settings(path, data, style)
        summary["written"] = True
    else:
        try:
            path.unlink()
        except OSError as exc:
            raise AircherError(f"cannot remove Claude Code settings {path}: {exc}") from None
        summary["deleted"] = True
    summary["removed"] = removed
    return summary


# -- where the hooks read and write ------------------------------------------------------


class _Settings(NamedTuple):
    """What a hook run takes from the Policy: the ``[hooks]`` limits, how long a
    server has to prove itself, and the Policy itself when it was loaded (None
    when the limits came from server.json's snapshot of the same config)."""

    hooks: HooksPolicy
    proof_timeout: float
    policy: Policy | None


def _settings(root: Path, event: str | None = None) -> _Settings:
    """The project's settings: from server.json's :func:`client.policy_snapshot`
    while config.toml is what it describes (no Policy to import), else from
    ``Policy.load(root)`` (a bad config.toml is its PolicyError). Without a server,
    the store of a hook for ``event`` that opens it (every event but ``PostToolUse``,
    which journals) starts opening on a thread of its own (:func:`store.open_ahead`)
    while the Policy and the service are imported."""
    snapshot = snapshot_of(root)
    if snapshot is not None:
        try:
            hooks = cast("HooksPolicy", SimpleNamespace(**snapshot["hooks"]))
            return _Settings(hooks, float(snapshot["server"]["proof_timeout_seconds"]), None)
        except (KeyError, TypeError, ValueError):  # not what serve writes: the config decides
            pass
    elif event in _OPENING and not os.environ.get(TOKEN_ENV):
        from ..store import open_ahead

        open_ahead(root / STORE_DIR / DB_FILE)
    from ..config import Policy

    before = config_digest(root)
    policy = Policy.load(root)
    if policy.hooks.journal_max_bytes and (root / STORE_DIR / DB_FILE).is_file():
        _keep_snapshot(root, before, policy)
    return _Settings(policy.hooks, policy.server.proof_timeout_seconds, policy)


def _keep_snapshot(root: Path, digest: str | None, policy: Policy) -> None:
    """Writes hooks.json (server.json's ``policy``: the ``[hooks]`` and ``[server]``
    sections with the digest of the config.toml they came from) when it does not
    hold them already: the next ``PostToolUse`` without a server reads its limits
    there and journals. Not when config.toml changed while it was loaded."""
    snapshot = policy_snapshot(root, loaded=(digest, policy))
    if snapshot is None:
        return
    data = {"policy": snapshot}
    path = root / STORE_DIR / HOOKS_FILE
    if server_data(path) == data:
        return
    try:
        write_private(str(path), json.dumps(data))
    except OSError as exc:
        log.warning("aircher-mem hook: cannot write %s: %s", path, exc)


@contextmanager
def _backend(root: Path, settings: _Settings, deadline: float) -> Iterator[_Verbs]:
    """The project's server when one runs (``.aircher/server.json``, and the server
    proves it knows the file's token), else the store opened here."""
    left = max(0.05, deadline - time.monotonic())
    client = Client.discover(root, timeout=left, proof_timeout=min(left, settings.proof_timeout))
    if client is not None:
        client.timeout = max(0.05, deadline - time.monotonic())
        remote = _Remote(client, root, settings.policy)
        try:
            yield _Verbs(remote, deadline)
        finally:
            remote.close()
        return
    opening_alone()
    with _open(root, settings.policy) as memory:
        yield _Verbs(memory, deadline)


# The servers this process started, by project (a process of its own each).
_SERVERS: dict[str, Any] = {}


def _start_server(root: Path, idle_seconds: float) -> None:
    """Starts ``aircher-mem serve --root ROOT --port 0 --idle-exit-seconds
    IDLE_SECONDS`` in a session of its own, detached from the hook (no stdin,
    stdout or stderr of the agent's): the next hooks find its server.json. Another
    process holding the store by then makes it exit at once; the next hook without
    a server starts one again."""
    import subprocess

    argv = [sys.executable, "-m", "aircher_mem", "serve", "--root", str(root), "--port", "0"]
    argv += ["--idle-exit-seconds", f"{idle_seconds:g}", "--yields"]
    try:
        _SERVERS[str(root)] = subprocess.Popen(  # kept: it runs on after the hook
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=root,
            start_new_session=True,
        )
    except OSError as exc:
        log.warning("aircher-mem hook: could not start a server for %s: %s", root, exc)


# -- reading the event ---------------------------------------------------------------------


def input_policy(root: Path | None, event: str | None = None) -> HooksPolicy:
    """The ``[hooks]`` limits for reading the event: those of the project at
    ``root`` (else of the current folder's), the defaults when there is none or its
    config does not load. Given the hook's ``event``, a store the hook opens starts
    opening (see :func:`_settings`)."""
    try:
        return _settings(find_root(root if root is not None else Path.cwd()), event).hooks
    except (AircherError, OSError):
        from ..config import HooksPolicy

        return HooksPolicy()


# -- running a hook ----------------------------------------------------------------------


_WORKER = "aircher-mem-hook"


def run_hook(event: str, payload: str, *, root: Path | None = None) -> tuple[str, int]:
    """Runs the hook for ``event`` (one of :data:`EVENTS`) on its JSON ``payload``;
    returns the text to print on stdout (context for SessionStart and
    UserPromptSubmit, else "") and the exit code, always 0. Never raises: every
    problem is logged as a warning and the hook prints nothing.

    The work runs in a thread given the Policy's ``[hooks] deadline_seconds`` from
    the call: past it, ``run_hook`` returns ``("", 0)`` and leaves the thread
    (:func:`abandoned` says so; ``aircher-mem hook`` then exits at once)."""
    started = time.monotonic()
    try:
        prepared = _prepare(event, payload, root)
    except Exception as exc:  # a hook never fails the agent's action
        log.warning("aircher-mem hook %.40s: %s: %s", event, type(exc).__name__, exc)
        return "", EXIT_OK
    if prepared is None:
        return "", EXIT_OK
    handler, data, project, settings = prepared
    if event in _ASSEMBLING and settings.policy is not None:
        # no server's snapshot: this process likely opens the store; the encoding
        # loads on a thread of its own (in Rust) while the service is imported
        from ..tokens import prefetch

        prefetch(settings.policy.encoding)
    limit = settings.hooks.deadline_seconds
    deadline = started + limit
    answer: list[str] = []
    # whether this hook opened the store itself (no server answers), and whether it
    # has started a server for the next hooks: once, from the work or at the deadline
    alone: list[bool] = []
    starting = threading.Lock()

    def start_server() -> None:
        # (a snapshot written by an older server has no start_server)
        with starting:
            if alone == [True] and getattr(settings.hooks, "start_server", False):
                alone.append(False)  # started: not again
                _start_server(project, settings.hooks.server_idle_seconds)

    def work() -> None:
        try:
            with _backend(project, settings, deadline) as backend:
                alone.append(not isinstance(backend.memory, _Remote))
                answer.append(handler(_Call(backend, data, project, deadline, settings.hooks)))
            start_server()  # the store is closed: the server can open it
        except Exception as exc:
            log.warning("aircher-mem hook %.40s: %s: %s", event, type(exc).__name__, exc)

    worker = threading.Thread(target=work, name=_WORKER, daemon=True)
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    if worker.is_alive():
        log.warning(
            "aircher-mem hook %s: no answer within %g s ([hooks] deadline_seconds); printed nothing", event, limit
        )
        # A store too large to open within the deadline (or a slow machine): the
        # next hooks would all run out of time the same way. The server started now
        # opens the store once this process has let it go, and holds it for them.
        start_server()
        return "", EXIT_OK
    return (answer[0] if answer else ""), EXIT_OK


def abandoned() -> bool:
    """Whether a hook's work is still running after :func:`run_hook` gave up on it."""
    return any(t.name == _WORKER and t.is_alive() for t in threading.enumerate())


def _prepare(
    event: str, payload: str, root: Path | None
) -> tuple[Callable[[_Call], str], dict[str, Any], Path, _Settings] | None:
    """The handler, the payload, the project and its settings; None (logged) when
    there is nothing to do."""
    handler = _HANDLERS.get(event) if isinstance(event, str) else None
    if handler is None:
        log.warning("aircher-mem hook: unknown event %r (known: %s)", event, ", ".join(EVENTS))
        return None
    data = _payload(payload)
    if data is None:
        return None
    named = data.get("hook_event_name")
    if named is not None and named != event:
        log.warning("aircher-mem hook %s: the payload is for %r; ignored", event, named)
        return None
    start = root if root is not None else data.get("cwd")
    if not isinstance(start, (str, os.PathLike)) or not os.fspath(start):
        log.warning("aircher-mem hook %s: no project folder (no cwd in the payload)", event)
        return None
    try:
        project = find_root(start)
    except StoreNotFoundError:
        log.debug("aircher-mem hook %s: no store for %s", event, start)
        return None
    return handler, data, project, _settings(project)


def _payload(payload: object) -> dict[str, Any] | None:
    if not isinstance(payload, str):
        log.warning("aircher-mem hook: the payload is not text")
        return None
    if len(payload) > PAYLOAD_MAX_CHARS:
        log.warning("aircher-mem hook: payload of %d characters is over %d; ignored", len(payload), PAYLOAD_MAX_CHARS)
        return None
    try:
        data = json.loads(payload.lstrip("\ufeff"))
    except (ValueError, RecursionError) as exc:
        log.warning("aircher-mem hook: the payload is not JSON: %s", exc)
        return None
    if not isinstance(data, dict):
        log.warning("aircher-mem hook: the payload is not a JSON object")
        return None
    return data


# -- the events ---------------------------------------------------------------------------


def _session_start(call: _Call) -> str:
    b = call.backend
    tasks = _list(b.tasks(), "tasks")
    assembled = None
    if not call.late:
        query = task_query(tasks, call.policy.query_chars)
        assembled = b.assemble(call.policy.context_tokens, query if query.strip() else None, git_branch(call.root))
    return session_brief(
        tasks,
        assembled if isinstance(assembled, dict) else None,
        budget=call.policy.context_chars,
        line_chars=call.policy.line_chars,
    )


def _pre_compact(call: _Call) -> str:
    path = _transcript(call.data.get("transcript_path"))
    if path is None:
        return ""
    trigger = call.text("trigger", 40) or "unknown"
    size = path.stat().st_size
    cap = call.policy.transcript_max_bytes
    start = max(0, size - cap)
    with path.open("rb") as handle:
        handle.seek(start)
        chunk = handle.read(cap)
    lines = chunk.split(b"\n")
    if start:
        lines = lines[1:]  # the first is cut
    now = time.time()
    items: list[dict[str, Any]] = []
    used: int | None = None
    for number, raw in enumerate(lines):
        entry = _json_line(raw)
        if entry is None or entry.get("type") not in ("user", "assistant"):
            continue
        message = entry.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        if content is None:
            continue
        if entry["type"] == "assistant":
            kind = "AssistantResponse"
            usage = message.get("usage") if isinstance(message, Mapping) else None
            if isinstance(usage, Mapping):
                parts = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
                used = sum(_int(usage.get(p)) or 0 for p in parts)
        elif isinstance(content, list) and any(
            isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content
        ):
            kind = "ToolResult"
        else:
            kind = "UserMessage"
        at = _timestamp(entry.get("timestamp"))
        items.append(
            {
                "id": str(entry.get("uuid") or f"line {number}")[:100],
                "type": kind,
                "tokens": len(json.dumps(content, ensure_ascii=False)) // 4,  # estimated: 4 characters a token
                "relevance": 1.0,  # not scored: the agent's window, not ours
                "age_minutes": int((now - at) // 60) if at is not None and at <= now else 0,
            }
        )
    items = items[-500:]
    call.backend.snapshot(
        {
            "timestamp": now,
            "session_id": call.session or "claude-code",
            "task_id": None,
            "total_tokens": used if used is not None else sum(i["tokens"] for i in items),
            "item_count": len(items),
            "items": items,
            "pruned_items": [],
            "reason": f"pre-compact ({trigger})",
        }
    )
    return ""


def _stop(call: _Call) -> str:
    session = call.session
    path = _transcript(call.data.get("transcript_path"))
    if session is None or path is None:
        return ""
    cap = call.policy.transcript_max_bytes
    with _State(call.root) as state:
        entry = state.session(session)
        offset = _int(entry.get("offset")) or 0
        skip = entry.get("skip") is True
        size = path.stat().st_size
        if offset > size:  # a new or rewritten transcript
            log.warning("aircher-mem hook Stop: %s is shorter than what was read; reading it again", path)
            offset, skip = 0, False
        with path.open("rb") as handle:
            handle.seek(offset)
            chunk = handle.read(cap)
        pending = [p for p in entry.get("prompts", []) if isinstance(p, str)]
        pos = 0
        if skip:  # the rest of a line longer than the cap
            newline = chunk.find(b"\n")
            pos = len(chunk) if newline < 0 else newline + 1
            skip = newline < 0
        done = offset + pos
        try:
            while pos < len(chunk) and not call.late:
                newline = chunk.find(b"\n", pos)
                if newline < 0:
                    if pos == 0 and len(chunk) == cap:
                        done, skip = offset + len(chunk), True  # one line longer than the cap
                    break
                turn = _turn(chunk[pos:newline], call.policy.turn_chars)
                pos = newline + 1
                if turn is not None:
                    role, text, at, uuid = turn
                    digest = _prompt_hash(text)
                    if role == "user" and digest in pending:
                        pending.remove(digest)  # stored by UserPromptSubmit
                    else:
                        metadata = {"source": "claude-code", "hook": "Stop", "uuid": uuid}
                        call.backend.add_turn(session, role, text, at, metadata)
                done = offset + pos
        finally:
            entry.update(offset=done, skip=skip, prompts=pending)
    if call.policy.facts_at_stop and not call.late:
        try:
            call.backend.extract_facts()
        except GitError:
            pass  # no git work tree: no changes to learn from
        except AircherError as exc:
            log.warning("aircher-mem hook Stop: no facts from the changes: %s", exc)
    return ""


_HANDLERS: dict[str, Callable[[_Call], str]] = {
    "SessionStart": _session_start,
    "UserPromptSubmit": _user_prompt,
    "PostToolUse": _post_tool,
    "PreCompact": _pre_compact,
    "Stop": _stop,
}


# -- transcripts --------------------------------------------------------------------------


def _transcript(value: object) -> Path | None:
    """The transcript file, when it is a regular ``.jsonl`` file inside the user's
    home or /tmp (:data:`TRANSCRIPT_DIRS`) once symlinks are resolved."""
    if not isinstance(value, str) or not value or "\0" in value:
        return None
    path = Path(value).expanduser()
    if not path.is_absolute() or path.suffix != ".jsonl":
        log.warning("aircher-mem hook: transcript %.200r is not an absolute .jsonl path; not read", value)
        return None
    try:
        real = path.resolve(strict=True)
        allowed = [Path(d).expanduser().resolve() for d in TRANSCRIPT_DIRS]
        if not any(real.is_relative_to(folder) for folder in allowed):
            log.warning("aircher-mem hook: transcript %s is outside %s; not read", real, ", ".join(TRANSCRIPT_DIRS))
            return None
        if not stat.S_ISREG(real.stat().st_mode):
            return None
    except (OSError, RuntimeError):
        return None
    return real


def _json_line(raw: bytes) -> dict[str, Any] | None:
    if not raw.strip():
        return None
    try:
        entry = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return entry if isinstance(entry, dict) else None


def _timestamp(value: object) -> float | None:
    if not isinstance(value, str):
        return None
    from datetime import datetime

    from ..checks import unix_time

    try:  # without an offset: UTC (not this machine's zone), as everywhere else
        return unix_time("timestamp", datetime.fromisoformat(value.replace("Z", "+00:00")))
    except ValueError:  # InvalidInputError too
        return None


def _turn(raw: bytes, max_chars: int) -> tuple[str, str, float | None, str | None] | None:
    """(role, text (its first ``max_chars`` characters), when, uuid) of a transcript
    line that is something the user typed or the assistant wrote; None for tool
    calls and results, meta lines (hook output, command echoes), compaction
    summaries and subagents' lines."""
    entry = _json_line(raw)
    if entry is None or entry.get("type") not in ("user", "assistant"):
        return None
    if entry.get("isMeta") or entry.get("isSidechain") or entry.get("isCompactSummary"):
        return None
    message = entry.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "\n".join(
            b["text"]
            for b in content
            if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    else:
        return None
    text = text.strip()[:max_chars]
    if not text or MARKER in text or text.startswith(("<command-", "<local-command-")):
        return None
    uuid = entry.get("uuid")
    return str(entry["type"]), text, _timestamp(entry.get("timestamp")), uuid if isinstance(uuid, str) else None


# -- the state file -----------------------------------------------------------------------
