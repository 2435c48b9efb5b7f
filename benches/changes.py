"""Candidate facts from real histories: ``aircher_mem.longterm.changes.extract`` on the
last commits of git repositories, how many candidates a commit gives (mean, median,
max; by kind), how long a commit takes, and, on a labelled sample, the share of
candidates a careful reviewer would approve (overall, by kind, at confidence >= 0.8
and below).

Histories:

- ``--repo PATH``: a git repository's last ``--commits`` commits (first parents, so a
  merge counts once); by default this repository.
- ``--releases PACKAGE``: a history built from a PyPI package's source distributions,
  one release per commit, oldest first (the last ``--commits`` releases, each against
  the one before; a root commit is never counted): "commits" that are releases, so
  each is larger than a commit (a project that releases every merged pull request,
  such as hypothesis, gives pull-request-sized ones). The sdists come from PyPI's
  JSON API (``--index``), each checked against its published SHA-256, into
  ``--cache``; nothing is built.

Labels: ``benches/data/changes_labels.jsonl``, one candidate a line (``repo``,
``commit``, ``content``, ``kind``, ``confidence``, ``label`` ``approve`` or
``reject``, ``reason``): would a careful reviewer store it as a useful, true fact about
the project? ``--sample N --sample-out FILE`` writes an unlabelled sample (chosen by a
hash of repo, commit and content) to label. The labels are scored as given (with the
confidence the extractor gave then), and again for the labelled candidates of the
commits this run extracted, as the extractor gives them now (found again by commit
and subject, or dropped): a rule changed after the labels is measured on them there.

    python benches/changes.py --repo . --releases attrs --releases click --releases maturin --releases hypothesis
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from aircher_mem.config import KnowledgePolicy
from aircher_mem.longterm.changes import CandidateFact, extract

APPROVAL_THRESHOLD = KnowledgePolicy().approve_confidence

HERE = Path(__file__).resolve().parent
LABELS = HERE / "data" / "changes_labels.jsonl"
CACHE = Path(tempfile.gettempdir()) / "aircher-changes-releases"
PYPI = "https://pypi.org"


def git(root: Path, *args: str, input: bytes | None = None) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", *args],
        cwd=root,
        input=input,
        capture_output=True,
        check=True,
    )
    return done.stdout.decode("utf-8", "replace")


def last_commits(root: Path, count: int) -> list[str]:
    """The last `count` first-parent commits that have a parent, oldest first (a root
    commit adds a whole tree: it is no change)."""
    lines = git(root, "rev-list", "--first-parent", "--parents", "-n", str(count + 1), "HEAD").splitlines()
    return [line.split()[0] for line in lines if len(line.split()) > 1][:count][::-1]


def release_files(package: str, index: str) -> list[tuple[str, str, str, str]]:
    """The package's releases that have an sdist, oldest first by the sdist's upload
    time: (version, file name, URL, SHA-256), from ``{index}/pypi/{package}/json``."""
    listing = f"{index}/pypi/{package}/json"
    with urllib.request.urlopen(listing, timeout=60) as answer:
        releases = json.load(answer)["releases"]
    found = []
    for version, files in releases.items():
        sdists = [f for f in files if f.get("packagetype") == "sdist" and not f.get("yanked")]
        if sdists:
            f = sdists[0]
            url = urllib.parse.urljoin(listing, f["url"])  # a mirror may give it relative
            found.append((f["upload_time_iso_8601"], version, f["filename"], url, f["digests"]["sha256"]))
    return [(version, name, url, sha) for _, version, name, url, sha in sorted(found)]


def _download(url: str, sha256: str, into: Path) -> None:
    with urllib.request.urlopen(url, timeout=120) as answer:
        data = answer.read()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise RuntimeError(f"{url}: the download does not match the index's SHA-256")
    part = into.with_name(into.name + ".part")
    part.write_bytes(data)
    part.replace(into)


def release_history(package: str, count: int, cache: Path, index: str = PYPI) -> Path:
    """A git repository of the package's last `count` + 1 sdists, one commit a
    release, oldest first (the oldest is the base the `count` changes start from; a
    release whose sdist cannot be fetched is left out). Built once in `cache`."""
    repo = cache / package
    done = repo / ".git" / "aircher-releases"
    if done.exists() and int(done.read_text()) >= count:
        return repo
    downloads = cache / f"{package}-sdists"
    downloads.mkdir(parents=True, exist_ok=True)
    releases = release_files(package, index)[-(count + 1) :]
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    for version, name, url, sha256 in releases:
        archive = downloads / Path(name).name
        if not archive.exists():
            try:
                _download(url, sha256, archive)
            except (OSError, RuntimeError) as exc:
                print(f"  {package} {version}: not fetched ({exc})", file=sys.stderr)
                continue
        for child in repo.iterdir():
            if child.name != ".git":
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        _unpack(archive, repo)
        git(repo, "add", "-A", "-f")
        git(repo, "commit", "-q", "--allow-empty", "-m", f"{package} {version}")
    done.write_text(str(count))
    return repo


def _unpack(archive: Path, into: Path) -> None:
    """The sdist's files, its top folder dropped; links and special files skipped."""
    if archive.name.endswith(".zip"):
        import zipfile

        with zipfile.ZipFile(archive) as z:
            for info in z.infolist():
                parts = Path(info.filename).parts[1:]
                if info.is_dir() or not parts or ".." in parts:
                    continue
                target = into.joinpath(*parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(z.read(info))
        return
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            parts = Path(member.name).parts[1:]
            if not member.isfile() or not parts or ".." in parts:
                continue
            source = tar.extractfile(member)
            if source is None:
                continue
            target = into.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read())


def run(repo: Path, commits: Sequence[str]) -> tuple[list[list[CandidateFact]], list[float]]:
    """Each commit's candidates and the seconds its extraction took."""
    found: list[list[CandidateFact]] = []
    times: list[float] = []
    for sha in commits:
        start = time.perf_counter()
        found.append(extract(repo, source="commit", rev=sha))
        times.append(time.perf_counter() - start)
    return found, times


def summary(name: str, found: Sequence[Sequence[CandidateFact]], times: Sequence[float]) -> dict[str, Any]:
    counts = [len(c) for c in found]
    kinds = Counter(c.kind for commit in found for c in commit)
    return {
        "repo": name,
        "commits": len(counts),
        "candidates": sum(counts),
        "per_commit_mean": round(statistics.fmean(counts), 2) if counts else 0.0,
        "per_commit_median": statistics.median(counts) if counts else 0,
        "per_commit_max": max(counts, default=0),
        "commits_without": sum(1 for n in counts if n == 0),
        "kinds": dict(kinds.most_common()),
        "approval_share": round(
            sum(c.confidence < APPROVAL_THRESHOLD for cs in found for c in cs) / max(sum(counts), 1), 3
        ),
        "ms_per_commit_mean": round(1000 * statistics.fmean(times), 1) if times else 0.0,
        "ms_per_commit_median": round(1000 * statistics.median(times), 1) if times else 0.0,
        "ms_per_commit_max": round(1000 * max(times, default=0.0), 1),
    }


def sample(rows: Iterable[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """`count` rows chosen by a hash of repo, commit and content (the same every run)."""

    def key(row: dict[str, Any]) -> str:
        return hashlib.sha256(f"{row['repo']}\0{row['commit']}\0{row['content']}".encode()).hexdigest()

    return sorted(rows, key=key)[:count]


def _share(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    approved = sum(1 for r in rows if r["label"] == "approve")
    return {"n": len(rows), "approved": approved, "share": round(approved / len(rows), 3) if rows else None}


def score(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The approved share of labelled candidates: overall, by kind, by repository and
    at confidence >= APPROVAL_THRESHOLD against below. Rows without a label
    (``approve`` or ``reject``) are an error."""
    for row in rows:
        if row.get("label") not in ("approve", "reject"):
            raise ValueError(f"unlabelled or mislabelled row: {row.get('content')!r}")
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_kind[row["kind"]].append(row)
        by_repo[row["repo"]].append(row)
    return {
        "overall": _share(rows),
        "by_kind": {kind: _share(group) for kind, group in sorted(by_kind.items())},
        "by_repo": {repo: _share(group) for repo, group in sorted(by_repo.items())},
        "confident": _share([r for r in rows if r["confidence"] >= APPROVAL_THRESHOLD]),
        "needs_approval": _share([r for r in rows if r["confidence"] < APPROVAL_THRESHOLD]),
    }


def _subject(content: str) -> str:
    """What a candidate is about, without what it says changed ("Changed the
    signature of function f in a.py")."""
    return content.split(": ", 1)[0]


def as_now(
    labels: Sequence[dict[str, Any]], rows: Sequence[dict[str, Any]], ran: set[tuple[str, str]]
) -> dict[str, Any]:
    """The labels as the extractor stands now, for the labelled candidates of the
    commits this run extracted: each found again (the same commit and subject) with
    its confidence now, or dropped; the score of those found, and the labels of the
    dropped ones (a dropped rejection is noise gone, a dropped approval a fact lost).
    ``ran``: the (repo, commit) pairs extracted, with candidates or without."""
    now = {(r["repo"], r["commit"], _subject(r["content"])): r for r in rows}
    kept: list[dict[str, Any]] = []
    dropped: Counter[str] = Counter()
    for label in labels:
        if (label["repo"], label["commit"]) not in ran:
            continue
        found = now.get((label["repo"], label["commit"], _subject(label["content"])))
        if found is None:
            dropped[label["label"]] += 1
        else:
            kept.append({**label, "confidence": found["confidence"], "content": found["content"]})
    return {"score": score(kept) if kept else None, "dropped": dict(sorted(dropped.items()))}


def read_labels(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", action="append", type=Path, default=[], help="a git repository (repeatable)")
    parser.add_argument("--releases", action="append", default=[], help="a PyPI package's sdists as a history")
    parser.add_argument("--commits", type=int, default=200, help="the last N commits (releases) of each")
    parser.add_argument("--cache", type=Path, default=CACHE, help="where release histories are built")
    parser.add_argument("--index", default=PYPI, help="the package index whose JSON API lists the sdists")
    parser.add_argument("--labels", type=Path, default=LABELS, help="labelled candidates to score")
    parser.add_argument("--sample", type=int, default=0, help="write N unlabelled candidates to --sample-out")
    parser.add_argument("--sample-out", type=Path)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    repos: list[tuple[str, Path]] = [(p.resolve().name, p.resolve()) for p in args.repo]
    if not repos and not args.releases:
        repos = [(HERE.parent.name, HERE.parent)]
    for package in args.releases:
        repos.append((f"{package} (releases)", release_history(package, args.commits, args.cache, args.index)))
    report: dict[str, Any] = {"repos": []}
    rows: list[dict[str, Any]] = []
    ran: set[tuple[str, str]] = set()
    for name, root in repos:
        commits = last_commits(root, args.commits)
        found, times = run(root, commits)
        ran.update((name, sha) for sha in commits)
        report["repos"].append(summary(name, found, times))
        for sha, candidates in zip(commits, found):
            for c in candidates:
                rows.append(
                    {
                        "repo": name,
                        "commit": sha,
                        "content": c.content,
                        "kind": c.kind,
                        "confidence": c.confidence,
                        "label": "",
                        "reason": "",
                    }
                )
    if args.sample and args.sample_out:
        with args.sample_out.open("w", encoding="utf-8") as out:
            for row in sample(rows, args.sample):
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    if args.labels.exists():
        labels = read_labels(args.labels)
        report["labels"] = score(labels)
        report["labels_now"] = as_now(labels, rows, ran)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    for r in report["repos"]:
        print(
            f"{r['repo']}: {r['commits']} commits, {r['candidates']} candidates; per commit mean "
            f"{r['per_commit_mean']}, median {r['per_commit_median']}, max {r['per_commit_max']} "
            f"({r['commits_without']} commits without); {100 * r['approval_share']:.0f} % wait for approval; "
            f"{r['ms_per_commit_mean']} ms a commit (median {r['ms_per_commit_median']}, max {r['ms_per_commit_max']})"
        )
        print("  kinds: " + ", ".join(f"{k} {n}" for k, n in r["kinds"].items()))
    if "labels" in report:
        s = report["labels"]
        o = s["overall"]
        print(f"labelled: {o['approved']}/{o['n']} approved ({o['share']})")
        print(
            f"  confidence >= {APPROVAL_THRESHOLD}: {s['confident']['approved']}/{s['confident']['n']}; "
            f"below: {s['needs_approval']['approved']}/{s['needs_approval']['n']}"
        )
        print("  by kind: " + ", ".join(f"{k} {v['approved']}/{v['n']}" for k, v in s["by_kind"].items()))
        print("  by repo: " + ", ".join(f"{k} {v['approved']}/{v['n']}" for k, v in s["by_repo"].items()))
        now = report["labels_now"]
        if now["score"] is not None:
            s = now["score"]
            print(
                f"labelled candidates of this run's commits, as extracted now: confidence >= {APPROVAL_THRESHOLD}: "
                f"{s['confident']['approved']}/{s['confident']['n']}; below: "
                f"{s['needs_approval']['approved']}/{s['needs_approval']['n']}; no longer found: "
                + (", ".join(f"{n} {label}" for label, n in now["dropped"].items()) or "none")
            )
            print("  by repo: " + ", ".join(f"{k} {v['approved']}/{v['n']}" for k, v in s["by_repo"].items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
