"""Where a project's store is: the ``.aircher/`` folder, found from a folder upward.
Standard library only, so that a hook or a client of ``aircher-mem serve`` finds
the project without importing the service."""

from __future__ import annotations

import os

from .errors import StoreNotFoundError

TYPE_CHECKING = False  # not typing's: importing typing is a cost here; checkers treat any TYPE_CHECKING as true
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["STORE_DIR", "CONFIG_NAME", "find_root", "root_folder", "git_branch", "shipped", "stamp", "sync_folder"]

#: The store's folder in a project.
STORE_DIR = ".aircher"
#: The project's configuration file, in :data:`STORE_DIR`.
CONFIG_NAME = "config.toml"


def shipped(*parts: str) -> str:
    """The path of a file shipped in this package's ``data`` folder (the package is
    installed as files, never zipped: a path, without :mod:`importlib.resources` and
    the tens of milliseconds its import costs a hook)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", *parts)


def stamp(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """A file's (mtime_ns, size), None when it is not there: what tells a cache or an
    index that the file was written since it read it."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


def find_root(start: str | os.PathLike[str] | None = None) -> Path:
    """The nearest folder holding ``.aircher/`` from ``start`` (default: the current
    directory) upward; :class:`StoreNotFoundError` if there is none."""
    from pathlib import Path  # not at import: the hooks' thin path finds the root without it

    return Path(root_folder(start))


def root_folder(start: str | os.PathLike[str] | None = None) -> str:
    """:func:`find_root` as text (no :mod:`pathlib` to import): the nearest folder
    holding ``.aircher/`` from ``start`` upward, symbolic links resolved."""
    here = os.path.realpath(start if start is not None else os.getcwd())
    folder = here
    while not os.path.isdir(os.path.join(folder, STORE_DIR)):
        parent = os.path.dirname(folder)
        if parent == folder:
            raise StoreNotFoundError(
                f"no aircher-mem store in {here} or its parents; "
                "run `aircher-mem index <repository>` first, or pass --root"
            )
        folder = parent
    return folder


def git_branch(root: str | os.PathLike[str]) -> str | None:
    """The branch checked out in the git repository at ``root``, from its
    ``.git/HEAD`` (``ref: refs/heads/<branch>``); None without one, for a detached
    head, or when ``.git`` is a file (a worktree's: its HEAD is outside the
    project) or ``HEAD`` a link or unreadable. Reads at most 1 KB, never follows a
    link."""
    path = os.path.join(os.fspath(root), ".git", "HEAD")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if os.fstat(fd).st_mode & 0o170000 != 0o100000:  # not a regular file (stat.S_ISREG, unimported)
            return None
        head = os.read(fd, 1024)
    except OSError:
        return None
    finally:
        os.close(fd)
    text = head.decode("utf-8", "replace").strip()
    prefix = "ref: refs/heads/"
    if not text.startswith(prefix) or "\n" in text:
        return None
    branch = text[len(prefix) :]
    return branch if branch and branch.isprintable() else None


def sync_folder(folder: str | os.PathLike[str], flags: int = 0) -> None:
    """fsync of ``folder`` itself: a file created, renamed or removed in it stays so
    after a crash (OSError as ``os.open`` and ``os.fsync`` raise it)."""
    fd = os.open(folder, os.O_RDONLY | flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
