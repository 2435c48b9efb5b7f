"""Cold start's project detection on real projects: precision and recall of
``aircher_mem.longterm.coldstart.detect`` per field against hand labels.

The labels are ``benches/data/coldstart_truth.json``: for each project its types
(primary first), the frameworks it is built on and the commands its own files name
for running its tests, each with the file it was read from (the file's ``about``
says what counts). The sources are released packages, fetched with the ordinary
client of their registry into a cache folder (never into the repository):

- ``pypi-sdist``: ``pip download --no-deps --no-binary :all: NAME==VERSION``;
- ``crate``: ``cargo fetch`` of a throwaway crate that depends on ``NAME = "=VERSION"``
  (the crate is then in ``$CARGO_HOME/registry/src``);
- ``debian-source``: ``apt-get source --download-only`` of the Debian package, with a
  private ``deb-src`` list under the cache folder (the system's apt configuration is
  not touched); only the upstream ``.orig`` tarball is unpacked.

Without ``--fetch`` the script only looks in the cache (and cargo's registry); a
project that is not there is skipped with a message.

Fields, each over all projects (micro-averaged):

- ``type``: the set of type names detected against the labelled set;
- ``primary``: the first type detected is the first labelled (accuracy, as
  precision = recall when a type is detected);
- ``framework``: the set of frameworks, compared in lower case;
- ``test command``: ``commands["test"]`` against the labelled commands. Two commands
  match when, with option words (``-x``, ``--flag=v``) and a leading ``python -m``
  (or ``python -Im``) dropped, the words of one start with the words of the other (``ctest`` matches
  ``ctest --test-dir build``, ``pytest`` matches ``python -m pytest``; ``mvn test``
  does not match ``mvn clean test``). A detected command that matches none is a false
  positive and, when the project has one, also a false negative.

Each project is ``tune`` (its mismatches were looked at and general rules changed)
or ``heldout`` (labelled after the rules were frozen); ``--split`` picks one.

    python benches/coldstart.py [--cache DIR] [--fetch] [--split tune|heldout|all] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

TRUTH = Path(__file__).resolve().parent / "data" / "coldstart_truth.json"
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "aircher-mem-coldstart-bench"
FIELDS = ("type", "primary", "framework", "test command")
DEB_SRC = """Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""


@dataclasses.dataclass(frozen=True)
class Prediction:
    """What detect said about one project (only the scored parts)."""

    types: tuple[str, ...]
    frameworks: tuple[str, ...]
    test_command: str | None


@dataclasses.dataclass
class Tally:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


def command_words(command: str) -> list[str]:
    words = command.split()
    # `python -m X` and `python -Im X` (flags before -m run together) are X
    if len(words) > 2 and re.fullmatch(r"python[\d.]*", words[0]) and re.fullmatch(r"-[A-Za-z]*m", words[1]):
        words = words[2:]
    return [w for w in words if not w.startswith("-")]


def commands_match(a: str, b: str) -> bool:
    x, y = command_words(a), command_words(b)
    n = min(len(x), len(y))
    return n > 0 and x[:n] == y[:n]


def score(
    truth: Sequence[Mapping[str, Any]], predictions: Mapping[str, Prediction]
) -> tuple[dict[str, Tally], dict[str, list[str]]]:
    """Per field a tally over the projects that have a prediction, and per project the
    mismatches in words."""
    tallies = {field: Tally() for field in FIELDS}
    mismatches: dict[str, list[str]] = {}
    for project in truth:
        name = project["name"]
        if name not in predictions:
            continue
        got = predictions[name]
        notes: list[str] = []
        for field, want, have in (
            ("type", set(project["types"]), set(got.types)),
            ("framework", {f.lower() for f in project["frameworks"]}, {f.lower() for f in got.frameworks}),
        ):
            tally = tallies[field]
            tally.tp += len(want & have)
            tally.fp += len(have - want)
            tally.fn += len(want - have)
            if want != have:
                notes.append(f"{field}: missed {sorted(want - have)}, extra {sorted(have - want)}")
        primary = tallies["primary"]
        if got.types and project["types"] and got.types[0] == project["types"][0]:
            primary.tp += 1
        else:
            primary.fp += bool(got.types)
            primary.fn += bool(project["types"])
            notes.append(f"primary: {got.types[:1]} for {project['types'][:1]}")
        tests: list[str] = project["test_commands"]
        tally = tallies["test command"]
        if got.test_command is not None and any(commands_match(got.test_command, t) for t in tests):
            tally.tp += 1
        else:
            tally.fp += got.test_command is not None
            tally.fn += bool(tests)
            if got.test_command is not None or tests:
                notes.append(f"test command: {got.test_command!r} for {tests}")
        if notes:
            mismatches[name] = notes
    return tallies, mismatches


# ----------------------------------------------------------------------------- sources


def _run(args: Sequence[str], cwd: Path | None = None) -> bool:
    result = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    if result.returncode != 0:
        print(f"  {' '.join(args[:3])} ...: exit {result.returncode}: {result.stderr.strip()[-300:]}", file=sys.stderr)
    return result.returncode == 0


def _unpack(archive: Path, into: Path) -> Path:
    """The archive's tree in ``into`` (its single top folder stripped)."""
    if into.is_dir():
        return into
    tmp = Path(tempfile.mkdtemp(dir=into.parent))
    with tarfile.open(archive) as tar:
        tar.extractall(tmp, filter="data")
    entries = list(tmp.iterdir())
    top = entries[0] if len(entries) == 1 and entries[0].is_dir() else tmp
    top.rename(into)
    shutil.rmtree(tmp, ignore_errors=True)
    return into


def _upstream(version: str) -> str:
    return version.split(":", 1)[-1].rsplit("-", 1)[0]


def _apt_options(cache: Path) -> list[str]:
    return [
        "-o",
        "Dir::Etc::SourceList=/dev/null",
        "-o",
        f"Dir::Etc::SourceParts={cache / 'apt' / 'sources'}",
        "-o",
        f"Dir::State::Lists={cache / 'apt' / 'lists'}",
        "-o",
        f"Dir::Cache={cache / 'apt' / 'cache'}",
    ]


def _apt_ready(cache: Path) -> bool:
    sources = cache / "apt" / "sources"
    if (cache / "apt" / "updated").exists():
        return True
    for sub in ("sources", "lists/partial", "cache/archives/partial"):
        (cache / "apt" / sub).mkdir(parents=True, exist_ok=True)
    (sources / "debian-src.sources").write_text(DEB_SRC)
    if _run(["apt-get", *_apt_options(cache), "update"]):
        (cache / "apt" / "updated").write_text("")
        return True
    return False


def locate(project: Mapping[str, Any], cache: Path, fetch: bool) -> Path | None:
    """The unpacked source of a project, fetched first with ``fetch``; None when it is
    not to be had."""
    source = project["source"]
    kind, package, version = source["kind"], source["package"], source["version"]
    src = cache / "src"
    src.mkdir(parents=True, exist_ok=True)
    if kind == "pypi-sdist":
        folder = cache / "pypi"
        found = sorted(folder.glob(f"{package.replace('-', '_')}-{version}.tar.gz")) + sorted(
            folder.glob(f"{package}-{version}.tar.gz")
        )
        if not found and fetch:
            _run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
                 + [f"{package}=={version}", "-d", str(folder)])  # fmt: skip
            return locate(project, cache, False)
        return _unpack(found[0], src / f"pypi-{package}-{version}") if found else None
    if kind == "crate":
        home = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
        found = sorted(home.glob(f"registry/src/*/{package}-{version}"))
        if not found and fetch and shutil.which("cargo"):
            crate = Path(tempfile.mkdtemp())
            (crate / "src").mkdir()
            (crate / "src" / "lib.rs").write_text("")
            (crate / "Cargo.toml").write_text(
                f'[package]\nname = "fetch-{package}"\nversion = "0.0.0"\nedition = "2021"\n'
                f'[dependencies]\n{package} = "={version}"\n'
            )
            _run(["cargo", "fetch", "-q"], cwd=crate)
            shutil.rmtree(crate, ignore_errors=True)
            return locate(project, cache, False)
        return found[0] if found else None
    if kind == "debian-source":
        folder = cache / "deb"
        folder.mkdir(parents=True, exist_ok=True)
        found = sorted(folder.glob(f"{package}_{_upstream(version)}.orig.tar.*"))
        if not found and fetch and shutil.which("apt-get") and _apt_ready(cache):
            # a missing Debian part (.debian.tar) fails the command; the orig tarball may be there
            _run(["apt-get", *_apt_options(cache), "source", "--download-only", f"{package}={version}"], cwd=folder)
            return locate(project, cache, False)
        return _unpack(found[0], src / f"deb-{package}-{_upstream(version)}") if found else None
    print(f"  unknown source kind {kind!r}", file=sys.stderr)
    return None


# ----------------------------------------------------------------------------- run


def predict(root: Path) -> tuple[Prediction, float]:
    from aircher_mem.longterm.coldstart import detect

    start = time.perf_counter()
    profile = detect(root)
    elapsed = time.perf_counter() - start
    return Prediction(tuple(t.name for t in profile.types), profile.frameworks, profile.commands.get("test")), elapsed


def load(path: Path) -> list[dict[str, Any]]:
    projects: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["projects"]
    return projects


def report(tallies: Mapping[str, Tally], mismatches: Mapping[str, Iterable[str]]) -> None:
    print(f"{'field':<14} {'precision':>9} {'recall':>7} {'tp':>4} {'fp':>4} {'fn':>4}")
    for field, t in tallies.items():
        print(f"{field:<14} {t.precision:>9.1%} {t.recall:>7.1%} {t.tp:>4} {t.fp:>4} {t.fn:>4}")
    if mismatches:
        print("\nmismatches:")
        for name, notes in mismatches.items():
            for note in notes:
                print(f"  {name}: {note}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="where sources are fetched and unpacked")
    parser.add_argument("--fetch", action="store_true", help="fetch what is not in the cache")
    parser.add_argument("--truth", type=Path, default=TRUTH)
    parser.add_argument("--only", nargs="*", default=None, help="project names")
    parser.add_argument("--split", choices=("tune", "heldout", "all"), default="all")
    args = parser.parse_args(argv)
    truth = [
        p
        for p in load(args.truth)
        if (args.only is None or p["name"] in args.only) and args.split in ("all", p.get("split", "tune"))
    ]
    predictions: dict[str, Prediction] = {}
    times: list[float] = []
    languages: set[str] = set()
    for project in truth:
        root = locate(project, args.cache, args.fetch)
        if root is None:
            print(f"skipped {project['name']}: not in {args.cache} (run with --fetch)")
            continue
        predictions[project["name"]], elapsed = predict(root)
        times.append(elapsed)
        languages.update(project["types"])
    tallies, mismatches = score(truth, predictions)
    print(f"{len(predictions)} of {len(truth)} projects, types {sorted(languages)}")
    if times:
        times.sort()
        print(f"detect: median {times[len(times) // 2] * 1000:.1f} ms, max {times[-1] * 1000:.1f} ms per project\n")
    report(tallies, mismatches)
    return 0


if __name__ == "__main__":
    sys.exit(main())
