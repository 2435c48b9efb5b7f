"""Hostile-input probes against the installed package, as real processes with time
limits: each probe prints one row of RELIABILITY.md's table (crash = killed by a
signal, hang = over its time limit, untyped = a traceback or exit 70, lost = a good
record missing afterwards).

    python benches/probe.py            # every probe, the table on stdout
    python benches/probe.py --quick    # smaller inputs (CI)

Exit status 1 if any probe found a crash, hang, untyped error, leak or lost record.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

SCRIPT = str(Path(sys.executable).with_name("aircher-mem"))
PY = sys.executable


class Outcome:
    def __init__(self) -> None:
        self.runs = 0
        self.crashes = 0
        self.hangs = 0
        self.untyped = 0
        self.lost = 0
        self.leaks = 0
        self.notes: list[str] = []

    def run(self, argv: list[str], *, timeout: float, cwd: Path | None = None, ok: tuple[int, ...] = (0,)) -> str:
        """Runs one process; returns its stdout. Counts what went wrong."""
        self.runs += 1
        start = time.perf_counter()
        try:
            done = subprocess.run(argv, capture_output=True, timeout=timeout, cwd=cwd)
        except subprocess.TimeoutExpired:
            self.hangs += 1
            self.notes.append(f"{' '.join(argv[:3])}: over {timeout:.0f} s")
            return ""
        seconds = time.perf_counter() - start
        err = done.stderr.decode("utf-8", "replace")
        if done.returncode < 0:
            self.crashes += 1
            self.notes.append(f"killed by signal {-done.returncode}")
        elif b"Traceback" in done.stderr or done.returncode == 70:
            self.untyped += 1
            self.notes.append(err.strip().splitlines()[-1][:120] if err.strip() else f"exit {done.returncode}")
        elif done.returncode not in ok:
            self.notes.append(f"exit {done.returncode}: {err.strip()[:100]}")
            self.untyped += 1
        if seconds > 5:
            self.notes.append(f"{seconds:.1f} s")
        return done.stdout.decode("utf-8", "replace")

    @property
    def clean(self) -> bool:
        return not (self.crashes or self.hangs or self.untyped or self.lost or self.leaks)


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return root


BASE = {
    "app/models.py": "class User:\n    def save(self):\n        return store(self)\n\ndef store(o):\n    return o\n"
}


def probe_pathological(o: Outcome, tmp: Path, scale: int) -> None:
    files = {
        "nested_use.rs": "use " + "a::{b::" * (10_000 // scale) + "c" + "}" * (10_000 // scale) + ";\n",
        "imports.js": "import {" + ", ".join(f"a{i}" for i in range(2_500 // scale)) + '} from "./m";\n',
        "nested_calls.py": "x = " + "f(" * (60_000 // scale) + "1" + ")" * (60_000 // scale) + "\n",
        "chain.py": "x = a" + ".b" * (200_000 // scale) + "\n",
        "deep_brackets.js": "x = " + "[" * (100_000 // scale) + "]" * (100_000 // scale) + ";\n",
    }
    for name, text in files.items():
        root = write(tmp / name.replace(".", "_"), {**BASE, name: text})
        o.run([SCRIPT, "index", str(root), "--quiet"], timeout=120)
        o.run([SCRIPT, "preview-context", "store save", "--root", str(root)], timeout=60)


def probe_random_bytes(o: Outcome, tmp: Path, scale: int) -> None:
    """Random bytes without NUL (fixed seed) as a .lua and a .scala file: `index`
    (each file alone, timed in the notes), then `context`."""
    rng = random.Random(20_240_501)
    noise = bytes(rng.randrange(1, 256) for _ in range(500_000 // scale))
    for name in ("noise.lua", "noise.scala"):
        root = write(tmp / name.replace(".", "_"), {**BASE, name: noise})
        start = time.perf_counter()
        o.run([SCRIPT, "index", str(root), "--quiet"], timeout=120)
        o.notes.append(f"{name} {len(noise) // 1000} KB: index {time.perf_counter() - start:.1f} s")
        o.run([SCRIPT, "preview-context", "store save", "--root", str(root)], timeout=60)


def probe_fifo(o: Outcome, tmp: Path) -> None:
    root = write(tmp / "fifo", BASE)
    o.run([SCRIPT, "index", str(root), "--quiet"], timeout=60)
    (root / "app/models.py").unlink()
    os.mkfifo(root / "app/models.py")
    o.run([SCRIPT, "preview-context", "store save User", "--root", str(root)], timeout=30)
    o.run([SCRIPT, "relevant-code", "store", "--root", str(root)], timeout=30)
    o.run([SCRIPT, "index", str(root), "--full", "--quiet"], timeout=30)


def probe_records(o: Outcome, tmp: Path) -> None:
    root = write(tmp / "records", BASE)
    script = (
        "import sys, aircher_mem as am\n"
        "from aircher_mem.engine import EpisodicMemory\n"
        "m = EpisodicMemory(sys.argv[1])\n"
        "bad = [dict(duration_ms=2**63), dict(timestamp=1e13), dict(context_tokens=2**63),"
        " dict(error_message='\\ud800'), dict(parameters={'k': float('nan')})]\n"
        "refused = 0\n"
        "for n in range(13):\n"
        "    m.record_tool_execution('good', {'n': n}, success=True, duration_ms=2**31)\n"
        "    kw = dict(bad[n % len(bad)]); params = kw.pop('parameters', {'n': n})\n"
        "    try:\n"
        "        m.record_tool_execution('bad', params, success=True, **kw)\n"
        "    except am.AircherError:\n"
        "        refused += 1\n"
        "m.close()\n"
        "m = EpisodicMemory(sys.argv[1])\n"
        "print(refused, m.counts()['tool_executions'])\n"
    )
    out = o.run([PY, "-c", script, str(root / "store.duckdb")], timeout=60)
    refused, stored = (int(x) for x in out.split()) if out else (0, 0)
    if refused != 13 or stored != 13:
        o.lost += 13 - stored
        o.notes.append(f"{refused} of 13 bad records refused, {stored} of 13 good ones stored")


def probe_symlink_out(o: Outcome, tmp: Path) -> None:
    root = write(tmp / "symlink", BASE)
    outside = write(tmp / "elsewhere", {"secret.py": "def store(o):\n    return 'SECRET-OUTSIDE'\n"})
    o.run([SCRIPT, "index", str(root), "--quiet"], timeout=60)
    (root / "app/models.py").unlink()
    (root / "app/models.py").symlink_to(outside / "secret.py")
    for argv in (["preview-context", "store save", "--show"], ["relevant-code", "store"]):
        if "SECRET-OUTSIDE" in o.run([SCRIPT, *argv, "--root", str(root)], timeout=30):
            o.leaks += 1
            o.notes.append(f"{argv[0]} read through a symlink out of the project")
    o.run([SCRIPT, "index", str(root), "--quiet"], timeout=30)


def probe_skipped_then_symlink_out(o: Outcome, tmp: Path) -> None:
    """A file `index` skipped (binary) replaced by a symlink out of the project:
    `index` twice, `doctor`; the outside file must not be read."""
    root = write(tmp / "skipped", {**BASE, "app/blob.py": b"x = 1\0\n"})
    outside = write(tmp / "elsewhere", {"secret.py": "def leaked():\n    return 'SECRET-OUTSIDE'\n"})
    o.run([SCRIPT, "index", str(root), "--quiet"], timeout=60)
    (root / "app/blob.py").unlink()
    (root / "app/blob.py").symlink_to(outside / "secret.py")
    o.run([SCRIPT, "doctor", "--root", str(root)], timeout=60)
    o.run([SCRIPT, "index", str(root), "--quiet"], timeout=60)
    o.run([SCRIPT, "index", str(root), "--quiet"], timeout=60)
    if "SECRET-OUTSIDE" in o.run([SCRIPT, "relevant-code", "leaked", "--root", str(root)], timeout=30):
        o.leaks += 1
        o.notes.append("code read through a symlink out of the project")


def probe_damaged_state(o: Outcome, tmp: Path) -> None:
    root = write(tmp / "damaged", BASE)
    o.run([SCRIPT, "index", str(root), "--quiet"], timeout=60)
    manifest = root / ".aircher" / "files.json"
    good = manifest.read_text()
    column = {"paths": "a.py", "mtimes": [1], "sizes": [2], "digests": "h"}
    for files in ([1, 2], {**column, "paths": "../x.py"}, "x", {**column, "mtimes": [None]}):
        data = json.loads(good)
        data["files"] = files
        manifest.write_text(json.dumps(data))
        o.run([SCRIPT, "index", str(root), "--quiet"], timeout=60)
    config = root / ".aircher" / "config.toml"
    for text in ("context = 5\n", 'context = "ab"\n', "[[context]]\n", "[context]\nmax_tokens = 9223372036854775808\n"):
        config.write_text(text)
        o.run([SCRIPT, "stats", "--root", str(root)], timeout=30, ok=(2,))
        o.run([SCRIPT, "doctor", "--root", str(root)], timeout=30, ok=(1,))
    config.unlink()
    db = root / ".aircher" / "memory.duckdb"
    o.run([SCRIPT, "create-store", str(root)], timeout=30)
    original = db.read_bytes()
    for damaged in (original[: len(original) // 2], original[:100], b"", os.urandom(20_000)):
        db.write_bytes(damaged)  # refused (exit 1), or read when only unused blocks were cut (exit 0)
        o.run([SCRIPT, "tasks", "--root", str(root)], timeout=30, ok=(0, 1))
        if db.read_bytes() != damaged:
            o.lost += 1
            o.notes.append("a damaged store was changed")
    db.unlink()
    sqlite3.connect(db).execute("CREATE TABLE t (x)").connection.commit()
    o.run([SCRIPT, "tasks", "--root", str(root)], timeout=30, ok=(1,))


def probe_arguments(o: Outcome, tmp: Path) -> None:
    root = write(tmp / "args", BASE)
    o.run([SCRIPT, "index", str(root), "--quiet"], timeout=60)
    huge = str(2**70)
    for argv in (
        ["preview-context", "x", "--max-tokens", huge],
        ["tasks", "--limit", huge],
        ["file-history", "a.py", "--limit", huge],
        ["relevant-code", "store", "--max-tokens", huge],
        ["find-symbol", "\udcff"],
        ["callers", "x" * 100_000],
    ):
        o.run([SCRIPT, *argv, "--root", str(root)], timeout=30, ok=(0, 2, 3))


def probe_names(o: Outcome, tmp: Path) -> None:
    root = write(tmp / "names", BASE)
    for raw in (b"a\xff.py", b"a\xfe.py"):
        (root / "app").joinpath(os.fsdecode(raw)).write_text("def dup():\n    pass\n")
    out = o.run([SCRIPT, "index", str(root), "--json", "--quiet"], timeout=60)
    again = o.run([SCRIPT, "index", str(root), "--json", "--quiet"], timeout=60)
    if out and again and json.loads(out)["files"] != json.loads(again)["files"]:
        o.lost += 1
        o.notes.append("file counts differ between two indexes")


def probe_secrets(o: Outcome, tmp: Path) -> None:
    root = write(tmp / "secrets", BASE)
    secrets = ["AKIAIOSFODNN7EXAMPLE", "ghp_" + "A1b2C3d4" * 4 + "Z9y8", "hunter2-very-secret"]
    script = (
        "import sys, aircher_mem as am\n"
        "with am.Memory.open(sys.argv[1]) as m:\n"
        f"    m.record_tool_call('aws', {{'key': {secrets[0]!r}, 'token': {secrets[1]!r}}}, success=False,\n"
        f"                       error_message='https://admin:{secrets[2]}@db.example.com failed')\n"
    )
    o.run([PY, "-c", script, str(root)], timeout=60)
    store = root / ".aircher"
    blob = b"".join(p.read_bytes() for p in store.iterdir() if p.is_file())
    for secret in secrets:
        if secret.encode() in blob:
            o.leaks += 1
            o.notes.append(f"{secret[:6]}... stored in clear")
    if stat.S_IMODE(store.stat().st_mode) != 0o700:
        o.leaks += 1
        o.notes.append(".aircher/ is not 0700")
    for path in store.iterdir():
        if path.is_file() and stat.S_IMODE(path.stat().st_mode) != 0o600:
            o.leaks += 1
            o.notes.append(f"{path.name} is {oct(stat.S_IMODE(path.stat().st_mode))}")


PROBES: dict[str, Callable[..., None]] = {
    "pathological files (deep nesting, 2.5K imports, 60K calls, 200K chain)": probe_pathological,
    "an indexed file replaced by a FIFO": probe_fifo,
    "bad records among good ones": probe_records,
    "an indexed file replaced by a symlink out of the project": probe_symlink_out,
    "a skipped (binary) file replaced by a symlink out of the project": probe_skipped_then_symlink_out,
    "500 KB of random bytes (no NUL) as .lua and .scala": probe_random_bytes,
    "damaged manifest, config and store": probe_damaged_state,
    "huge, negative and non-UTF-8 arguments": probe_arguments,
    "non-UTF-8 file names": probe_names,
    "secrets and file modes": probe_secrets,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller pathological and random files")
    args = parser.parse_args()
    print("| probe | runs | crashes | hangs | untyped errors | leaks | records lost | notes |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    clean = True
    for name, probe in PROBES.items():
        outcome = Outcome()
        tmp = Path(tempfile.mkdtemp(prefix="aircher-probe-"))
        try:
            if probe in (probe_pathological, probe_random_bytes):
                probe(outcome, tmp, 10 if args.quick else 1)
            else:
                probe(outcome, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        clean &= outcome.clean
        notes = "; ".join(dict.fromkeys(outcome.notes))[:300]
        print(
            f"| {name} | {outcome.runs} | {outcome.crashes} | {outcome.hangs} | {outcome.untyped} | "
            f"{outcome.leaks} | {outcome.lost} | {notes} |",
            flush=True,
        )
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
