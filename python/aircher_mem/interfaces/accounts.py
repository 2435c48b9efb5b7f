"""Per-user tokens of a project's HTTP server, for a team's store served to several
people from one server (``[store] url``).

A token is ``<user>.<secret>`` (the secret: 32 random bytes, URL-safe base64); the
project's ``.aircher/users.json`` (mode 0600, replaced atomically and synced) keeps
each user's name, when the token was made and the SHA-256 of the token, never the
token: ``aircher-mem users add NAME`` prints it once. A request whose bearer token is
a user's acts for that user (:meth:`aircher_mem.Memory.as_user`); server.json's token
still acts for the server's own user. The server reads users.json again whenever it
changes, so a token removed is refused from the next request on.

A client with a user's token proves the server the other way round too: ``GET
/health?challenge=...&user=NAME`` answers the HMAC keyed by the token's SHA-256 (hex),
which only a server holding users.json can compute (:func:`proof_key`).
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from ..errors import DuplicateItemError, InvalidInputError, StoreError, UnknownItemError
from ..results import UserAccount
from ..root import STORE_DIR, sync_folder
from .thin import TOKEN_ENV, is_user_name, proof_key, user_of

__all__ = ["USERS_FILE", "TOKEN_ENV", "Accounts", "add", "remove", "listed", "check_name"]

USERS_FILE = "users.json"
_MAX_BYTES = 4 << 20
log = logging.getLogger("aircher_mem.http")


def check_name(name: object) -> str:
    """``name`` when it is a user's name; InvalidInputError otherwise."""
    if not isinstance(name, str) or not is_user_name(name):
        raise InvalidInputError(
            f"a user's name is 1 to 64 letters, digits, '_', '-', '@' or '.' (not first), got {name!r:.80}"
        )
    return name


def _path(root: str | os.PathLike[str]) -> Path:
    return Path(root) / STORE_DIR / USERS_FILE


def _read(path: Path) -> dict[str, dict[str, object]]:
    """users.json's users ({} without the file); StoreError when it is not what
    :func:`add` writes."""
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read(_MAX_BYTES + 1).decode("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise StoreError(f"cannot read {path}: {exc}") from None
    users = data.get("users") if isinstance(data, dict) else None
    if not isinstance(users, dict) or not all(
        isinstance(entry, dict)
        and isinstance(entry.get("sha256"), str)
        and isinstance(entry.get("created_at"), (int, float))
        and is_user_name(name)
        for name, entry in users.items()
    ):
        raise StoreError(f"{path} is not a list of users as aircher-mem writes it")
    return users


def _write(path: Path, users: dict[str, dict[str, object]]) -> None:
    """Replaces users.json (0600) by a synced copy holding ``users``."""
    text = json.dumps({"users": users}, indent=1, sort_keys=True).encode("utf-8")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, text)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        sync_folder(path.parent)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise StoreError(f"cannot write {path}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def _editing(root: str | os.PathLike[str]) -> Iterator[tuple[Path, dict[str, dict[str, object]]]]:
    """users.json's users under an exclusive lock (two edits never lose one)."""
    path = _path(root)
    if not path.parent.is_dir():
        raise InvalidInputError(f"{path.parent} does not exist: not an aircher-mem project (run `aircher-mem init`)")
    fd = os.open(path.with_name(".users.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - Windows: edits are not locked
            pass
        yield path, _read(path)
    finally:
        os.close(fd)


def add(root: str | os.PathLike[str], name: str, *, now: float | None = None) -> str:
    """Makes a token for the user ``name`` and returns it (the only time it is
    shown); DuplicateItemError when the user has one (remove it first)."""
    check_name(name)
    with _editing(root) as (path, users):
        if name in users:
            raise DuplicateItemError(f"{name} has a token already: `aircher-mem users remove {name}` first")
        token = f"{name}.{secrets.token_urlsafe(32)}"
        users[name] = {"sha256": proof_key(token), "created_at": time.time() if now is None else now}
        _write(path, users)
    return token


def remove(root: str | os.PathLike[str], name: str) -> None:
    """Removes the user ``name``'s token: refused from the server's next request on.
    UnknownItemError when there is none."""
    check_name(name)
    with _editing(root) as (path, users):
        if users.pop(name, None) is None:
            raise UnknownItemError(f"no user {name} (see `aircher-mem users list`)")
        _write(path, users)


def listed(root: str | os.PathLike[str]) -> list[UserAccount]:
    """The users with a token, by name."""
    users = _read(_path(root))
    return [UserAccount(name, float(entry["created_at"])) for name, entry in sorted(users.items())]  # type: ignore[arg-type]


class Accounts:
    """The server's view of users.json: read again when the file changes (its
    size, time or inode), so additions and removals apply to the next request."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.path = _path(root)
        self._lock = threading.Lock()
        self._seen: tuple[int, int, int] | None = None
        self._keys: dict[str, str] = {}

    def _current(self) -> dict[str, str]:
        try:
            st = os.stat(self.path)
            seen: tuple[int, int, int] | None = (st.st_ino, st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            seen = None
        with self._lock:
            if seen != self._seen:
                try:
                    users = _read(self.path)
                except StoreError as exc:  # refuse every user's token rather than guess
                    log.warning("%s; per-user tokens are refused until it is fixed", exc)
                    users = {}
                self._keys = {name: str(entry["sha256"]) for name, entry in users.items()}
                self._seen = seen
            return self._keys

    def any(self) -> bool:
        """Whether any user has a token."""
        return bool(self._current())

    def user(self, token: bytes) -> str | None:
        """The user whose token ``token`` is; None when it is no user's (compared in
        constant time against the name's entry)."""
        try:
            text = token.decode("ascii")
        except UnicodeDecodeError:
            return None
        name = user_of(text)
        key = self._current().get(name) if name is not None else None
        if key is None or not hmac.compare_digest(proof_key(text), key):
            return None
        return name

    def key(self, name: str) -> str | None:
        """The proof key of ``name``'s token; None for a name without one."""
        return self._current().get(name)
