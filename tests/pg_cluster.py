"""A PostgreSQL server for the tests that need one.

``AIRCHER_TEST_POSTGRES`` names one (a URL of a database whose user may create
databases: ``.ci/run`` starts a private cluster and sets it). Without it, a private
cluster is started in a temporary folder (``initdb`` from Debian's ``postgresql``
package, as the ``postgres`` user when the tests run as root), listening on a Unix
socket only, and stopped at the end. Where neither works, the tests skip and say why.
Each test gets a database of its own (:func:`database`)."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ENV = "AIRCHER_TEST_POSTGRES"


class Unavailable(Exception):
    """No cluster can be started here; the message says why."""


def _binaries() -> Path:
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if not versions:
        raise Unavailable(f"PostgreSQL is not installed (no initdb): apt-get install postgresql, or set {ENV}")
    return Path(versions[-1]).parent


def _as_user() -> list[str]:
    """The prefix that runs the server's programs: none, or ``runuser -u postgres``
    for root (PostgreSQL refuses to run as root)."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        raise Unavailable("PostgreSQL refuses to run as root and there is no postgres user to run it as") from None
    return ["runuser", "-u", "postgres", "--"]


def _pg_ctl(folder: Path) -> list[str]:
    return [*_as_user(), str(_binaries() / "pg_ctl"), "-D", str(folder / "data")]


def start(folder: Path) -> str:
    """Starts a fresh cluster in ``folder`` (new, empty); returns the URL of its
    postgres database."""
    prefix = _as_user()
    if prefix:
        shutil.chown(folder, "postgres")
    initdb = [*prefix, str(_binaries() / "initdb"), "-D", str(folder / "data"), "-A", "trust", "-U", "aircher"]
    made = subprocess.run(
        [*initdb, "-E", "UTF8", "--locale=C.UTF-8", "--no-instructions"], capture_output=True, text=True, timeout=120
    )
    if made.returncode:
        raise Unavailable(f"initdb failed: {made.stderr.strip()[-500:]}")
    return restart(folder)


def restart(folder: Path) -> str:
    """Starts the server of the cluster in ``folder`` (after :func:`kill`, say)."""
    options = f"-k {folder} -c listen_addresses='' -c fsync=off"
    started = subprocess.run(
        [*_pg_ctl(folder), "-o", options, "-l", str(folder / "log"), "-w", "-t", "60", "start"],
        capture_output=True,
        text=True,
        timeout=90,
    )
    if started.returncode:
        log = (folder / "log").read_text(errors="replace") if (folder / "log").exists() else ""
        raise Unavailable(f"the private PostgreSQL cluster did not start: {started.stderr.strip()} {log[-500:]}")
    return f"postgresql://aircher@/postgres?host={folder}&port=5432"


def kill(folder: Path) -> None:
    """Stops the server at once, as a crash would (``pg_ctl stop -m immediate``)."""
    subprocess.run([*_pg_ctl(folder), "-m", "immediate", "stop"], capture_output=True, timeout=60, check=True)


def stop(folder: Path) -> None:
    """Stops the cluster in ``folder`` and removes the folder."""
    with contextlib.suppress(Unavailable):
        subprocess.run([*_pg_ctl(folder), "-m", "immediate", "stop"], capture_output=True, timeout=60)
    shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def private_cluster() -> Iterator[str]:
    """A fresh cluster in a temporary folder, stopped afterwards; skips the test
    where none can be started."""
    pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install 'aircher-mem[team]')")
    folder = Path(tempfile.mkdtemp(prefix="aircher-pg-"))
    try:
        try:
            url = start(folder)
        except Unavailable as exc:
            pytest.skip(str(exc))
        yield url
    finally:
        stop(folder)


@contextlib.contextmanager
def server() -> Iterator[str]:
    """The URL of a database the tests may create databases from."""
    given = os.environ.get(ENV)
    if given:
        yield given
        return
    with private_cluster() as url:
        yield url


def with_database(url: str, name: str) -> str:
    """``url`` with its database replaced by ``name``."""
    head, _, rest = url.partition("?")
    base = head.rsplit("/", 1)[0]
    return f"{base}/{name}" + (f"?{rest}" if rest else "")


def with_user(url: str, user: str) -> str:
    """``url`` with its user replaced by ``user`` (no password: the test cluster trusts)."""
    scheme, _, rest = url.partition("://")
    head, slash, tail = rest.partition("/")
    return f"{scheme}://{user}@{head.rpartition('@')[2]}{slash}{tail}"


#: A role that is no superuser: it may not create pgvector (an untrusted extension).
PLAIN_ROLE = "aircher_plain"


@contextlib.contextmanager
def database(admin_url: str, *, plain: bool = False) -> Iterator[str]:
    """A new, empty database on the server; dropped afterwards. ``plain``: owned by
    and reached as :data:`PLAIN_ROLE`, which may not create extensions."""
    import psycopg

    name = f"aircher_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as con:
        if plain:
            con.execute(
                f"DO $$ BEGIN CREATE ROLE {PLAIN_ROLE} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$"
            )
        con.execute(f"CREATE DATABASE {name}" + (f" OWNER {PLAIN_ROLE}" if plain else ""))
    try:
        made = with_database(admin_url, name)
        yield with_user(made, PLAIN_ROLE) if plain else made
    finally:
        with psycopg.connect(admin_url, autocommit=True) as con:
            con.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def has_pgvector(url: str) -> bool:
    """Whether the server offers pgvector (its store's vectors then use its type)."""
    import psycopg

    with psycopg.connect(url) as con:
        return con.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone() is not None


@contextlib.contextmanager
def scratch(url: str | None = None, *, private: bool = False) -> Iterator[tuple[str, Path | None]]:
    """For a benchmark: a new database on the server ``url`` names (else
    ``AIRCHER_TEST_POSTGRES``'s), or on a private cluster started for it (always with
    ``private``). Yields the database's URL and the private cluster's folder (None
    on a given server); drops the database, or stops the cluster, afterwards."""
    admin = None if private else url or os.environ.get(ENV)
    folder = None
    if admin is None:
        folder = Path(tempfile.mkdtemp(prefix="aircher-pg-"))
        try:
            admin = start(folder)
        except BaseException:
            stop(folder)
            raise
    try:
        with database(admin) as made:
            yield made, folder
    finally:
        if folder is not None:
            stop(folder)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """The URL of a server's database the tests may create databases from."""
    with server() as url:
        yield url


@pytest.fixture
def pg_url(pg_server: str) -> Iterator[str]:
    """A new, empty database of its own for the test."""
    with database(pg_server) as url:
        yield url


if __name__ == "__main__":  # .ci/run: start FOLDER (prints the URL) | stop FOLDER
    import sys

    action, where = sys.argv[1], Path(sys.argv[2])
    if action == "start":
        try:
            print(start(where))
        except Unavailable as exc:
            sys.exit(f"no PostgreSQL for the tests: {exc}")
    else:
        stop(where)
