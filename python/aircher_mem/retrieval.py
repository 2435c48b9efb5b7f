"""Finding code by meaning: one hybrid search over the code graph.

The engine is Rust (``_core.KnowledgeGraph.search``): BM25F over one document per
definition (name, qualified name, signature, docstring, body, path) and one per file
(path, module docstring, top-level names), kept exact as the graph is updated and
saved beside ``graph.bin``; a personalized PageRank over the graph seeded by the
best lexical hits, by the files a text mentions (paths, absolute or under
``site-packages/``, and dotted module names) and by focus files; optional dense
similarities. Each channel's scores are normalized and fused with the weights of the
Policy's ``[retrieval]`` section. A query word also meets its other forms (same
Snowball stem), weighing less than its own. Tests, benchmarks, examples, docs and
vendored code are scored down, each by its factor, unless the text names the file or
the kind (:func:`declared_kinds` reads what the project's configuration declares);
at file level every other file of the project follows the channels' files when
``limit`` asks for them. Every hit says which channels found it and which words
matched.

This module turns a Policy into the engine's parameters, hits into results, and
definitions into snippets that fit a token budget (what ``prepare_context`` adds).
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from . import _core
from ._core import GraphView, KnowledgeGraph, SearchParams, VectorIndex
from .config import Policy
from .errors import InvalidInputError, StoreError
from .graph import read_source
from .results import ChannelScore, CodeHit, CodeSearch, Definition, RelevantCode
from .root import stamp

if TYPE_CHECKING:  # imported where used: a code search needs neither
    from .embeddings import Embedder
    from .tokens import TokenCounter

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

#: What a code search reads: the graph loaded, or the saved graph searched in place.
Searched = KnowledgeGraph | GraphView

__all__ = [
    "LEVELS",
    "VECTORS_SUFFIX",
    "Searched",
    "DenseIndex",
    "declared_kinds",
    "generated_bundles",
    "project_kinds",
    "dense_channel",
    "dense_embedder",
    "search_params",
    "search_code",
    "find_relevant_to_query",
    "graph_code_provider",
]

log = logging.getLogger(__name__)

Level = Literal["definition", "file"]
LEVELS: tuple[Level, ...] = ("definition", "file")

#: The retrieval policy's field weights, by the document field they weigh.
_FIELDS = ("name", "qualified", "signature", "doc", "body", "path", "names")

_PARAMS: dict[int, tuple[Policy, SearchParams]] = {}


def search_params(policy: Policy) -> SearchParams:
    """The engine's parameters for ``policy`` (its ``[retrieval]`` section and the
    graph's PageRank damping)."""
    cached = _PARAMS.get(id(policy))
    if cached is not None and cached[0] is policy:
        return cached[1]
    r = policy.retrieval
    params = SearchParams(
        k1=r.bm25_k1,
        b=r.bm25_b,
        field_weights=[(field, getattr(r, f"weight_{field}")) for field in _FIELDS],
        normalization=r.normalization,
        lexical_weight=r.lexical_weight,
        graph_weight=r.graph_weight,
        dense_weight=r.dense_weight,
        candidates=r.candidates,
        graph_seeds=r.graph_seeds,
        path_weight=r.path_weight,
        focus_weight=r.focus_weight,
        damping=policy.graph.pagerank_damping,
        epsilon=r.walk_epsilon,
        max_pushes=r.walk_max_pushes,
        forms=r.word_forms_weight,
        idf_exponent=r.idf_exponent,
        prose_only=r.prose_only_weight,
        filler=r.filler_weight,
        test_factor=r.test_factor,
        bench_factor=r.bench_factor,
        example_factor=r.example_factor,
        docs_factor=r.docs_factor,
        vendor_factor=r.vendor_factor,
        file_spread=r.file_spread,
        name_only_factor=r.name_only_factor,
    )
    if len(_PARAMS) > 64:
        _PARAMS.clear()
    _PARAMS[id(policy)] = (policy, params)
    return params


# -- what the project's configuration says is not product code ---------------------------

#: The files :func:`declared_kinds` reads, under a project's root.
_CONFIG_FILES = (
    "pyproject.toml",
    "pytest.ini",
    "tox.ini",
    "setup.cfg",
    ".gitattributes",
    "package.json",
    "pnpm-workspace.yaml",
    "Cargo.toml",
)
#: At most this many workspace members are read (a pattern matching more is cut).
_MAX_MEMBERS = 1000
#: Bundles: scripts this large at least, their head read for a bundler's runtime.
_SCRIPT_SUFFIXES = (".js", ".mjs", ".cjs")
_BUNDLE_MIN_BYTES = 64 * 1024
_BUNDLE_HEAD_BYTES = 8 * 1024
_BUNDLE_MARKERS = (b"__commonJS(", b"__webpack_require__", b"parcelRequire", b"function r(e,n,t){function o(i,f)")
_BUNDLES: dict[str, tuple[int, list[str]]] = {}
#: Per root: the configuration files' (size, mtime) and what they declared.
_DECLARED: dict[str, tuple[tuple[tuple[int, int] | None, ...], list[tuple[str, str]]]] = {}
_GLOB = frozenset("*?[")


def declared_kinds(root: Path) -> list[tuple[str, str]]:
    """The folders and files (relative paths) the configuration at ``root`` gives a
    kind of non-product code, as (path, kind), sorted: pytest's ``testpaths``
    (``pyproject.toml`` ``[tool.pytest.ini_options]``, ``pytest.ini``/``tox.ini``
    ``[pytest]``, ``setup.cfg`` ``[tool:pytest]``) as ``test``; ``.gitattributes``
    patterns marked ``linguist-vendored`` or ``linguist-generated`` as ``vendor`` and
    ``linguist-documentation`` as ``docs``; workspace members (``package.json``
    ``workspaces``, ``pnpm-workspace.yaml`` ``packages``, ``Cargo.toml``
    ``[workspace] members``) whose package name ends in a kind's word
    (``@zod/benchmarks``, ``app-examples``) as that kind. A pattern that is a path
    (``vendor/``, ``/lib/ext/**``) is taken, and a member pattern may end in one
    ``*``; others (``*.min.js``) are skipped with a log line, as is a file that
    cannot be read. Read again only when one of the root files changes."""
    stamps = tuple(stamp(root / name) for name in _CONFIG_FILES)
    cached = _DECLARED.get(str(root))
    if cached is not None and cached[0] == stamps:
        return cached[1]
    found: set[tuple[str, str]] = set()
    for path in _testpaths(root):
        found.add((path, "test"))
    found.update(_linguist(root))
    found.update(_workspace_kinds(root))
    out = sorted(found)
    if len(_DECLARED) > 64:
        _DECLARED.clear()
    _DECLARED[str(root)] = (stamps, out)
    return out


def _relative(pattern: str) -> str | None:
    """A configuration's path pattern as a relative path (None: a wildcard)."""
    path = pattern.strip().replace("\\", "/").lstrip("/")
    for tail in ("/**", "/*", "/"):
        if path.endswith(tail):
            path = path[: -len(tail)]
    if path.startswith("./"):
        path = path[2:]
    if not path or path == "." or _GLOB & set(path):
        return None
    return path


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        log.info("%s not read for test paths (%s)", path, exc)
        return None


def _testpaths(root: Path) -> list[str]:
    values: list[str] = []
    text = _read(root / "pyproject.toml")
    if text is not None:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            log.info("%s not read for test paths (%s)", root / "pyproject.toml", exc)
        else:
            options = data.get("tool", {}).get("pytest", {}).get("ini_options", {})
            paths = options.get("testpaths", []) if isinstance(options, dict) else []
            values.extend([paths] if isinstance(paths, str) else [p for p in paths if isinstance(p, str)])
    for name, section in (("pytest.ini", "pytest"), ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        text = _read(root / name)
        if text is None or f"[{section}]" not in text:  # (no such section: nothing to parse)
            continue
        import configparser

        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text)
        except configparser.Error as exc:
            log.info("%s not read for test paths (%s)", root / name, exc)
            continue
        if parser.has_option(section, "testpaths"):
            values.extend(parser.get(section, "testpaths").split())
    out: list[str] = []
    for value in values:
        path = _relative(value)
        if path is None:
            log.info("testpaths entry %r skipped: not a path", value)
        else:
            out.append(path)
    return out


def _linguist(root: Path) -> list[tuple[str, str]]:
    text = _read(root / ".gitattributes")
    if text is None:
        return []
    out: list[tuple[str, str]] = []
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        for attribute, kind in (
            ("linguist-vendored", "vendor"),
            ("linguist-generated", "vendor"),
            ("linguist-documentation", "docs"),
        ):
            if attribute in words[1:] or f"{attribute}=true" in words[1:]:
                path = _relative(words[0])
                if path is None:
                    log.info(".gitattributes pattern %r skipped: only paths are read", words[0])
                else:
                    out.append((path, kind))
    return out


def project_kinds(graph: Searched) -> list[tuple[str, str]]:
    """:func:`declared_kinds` and the project's generated bundles
    (:func:`generated_bundles`, scored as vendored code) for ``graph``."""
    return sorted({*declared_kinds(Path(graph.root)), *((p, "vendor") for p in generated_bundles(graph))})


def generated_bundles(graph: Searched) -> list[str]:
    """The JavaScript files of ``graph`` of at least ``_BUNDLE_MIN_BYTES`` whose first
    ``_BUNDLE_HEAD_BYTES`` carry a bundler's runtime (esbuild's ``__commonJS(``,
    webpack's ``__webpack_require__``, Parcel's ``parcelRequire``, browserify's
    prelude): copies of other code, built rather than written. Looked for again when
    the number of files changes; a file that cannot be read is not one."""
    root = Path(graph.root)
    count = graph.file_count
    cached = _BUNDLES.get(str(root))
    if cached is not None and cached[0] == count:
        return cached[1]
    found: list[str] = []
    for path in graph.files_ending(list(_SCRIPT_SUFFIXES)):
        head = _head(root / path)
        if head is not None and any(marker in head for marker in _BUNDLE_MARKERS):
            found.append(path)
    if len(_BUNDLES) > 64:
        _BUNDLES.clear()
    _BUNDLES[str(root)] = (count, found)
    return found


def _head(path: Path) -> bytes | None:
    """The first ``_BUNDLE_HEAD_BYTES`` of ``path`` if it is a regular file (not through
    a symlink) of at least ``_BUNDLE_MIN_BYTES``, else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size < _BUNDLE_MIN_BYTES:
            return None
        return os.read(fd, _BUNDLE_HEAD_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)


def _workspace_patterns(root: Path) -> list[str]:
    """The member patterns of the workspaces declared at ``root``."""
    patterns: list[str] = []
    text = _read(root / "package.json")
    if text is not None:
        try:
            data = json.loads(text)
        except ValueError as exc:
            log.info("%s not read for workspaces (%s)", root / "package.json", exc)
            data = None
        spaces = data.get("workspaces") if isinstance(data, dict) else None
        if isinstance(spaces, dict):
            spaces = spaces.get("packages")
        if isinstance(spaces, list):
            patterns.extend(p for p in spaces if isinstance(p, str))
    text = _read(root / "pnpm-workspace.yaml")
    if text is not None:
        inside = False
        for line in text.splitlines():
            if line and not line[0].isspace() and not line.startswith("-"):
                inside = line.split("#")[0].strip() == "packages:"
            elif inside and line.strip().startswith("-"):
                patterns.append(line.strip()[1:].split("#")[0].strip().strip("'\""))
    text = _read(root / "Cargo.toml")
    if text is not None:
        try:
            workspace = tomllib.loads(text).get("workspace", {})
        except tomllib.TOMLDecodeError as exc:
            log.info("%s not read for workspaces (%s)", root / "Cargo.toml", exc)
            workspace = {}
        members = workspace.get("members", []) if isinstance(workspace, dict) else []
        patterns.extend(p for p in members if isinstance(p, str))
    return patterns


def _workspace_members(root: Path) -> list[str]:
    """The member folders (relative paths) of the workspaces declared at ``root``: each
    pattern a path, or a path whose last part is ``*``."""
    members: list[str] = []
    for pattern in _workspace_patterns(root):
        if pattern.startswith("!"):
            continue
        parent, _, last = pattern.rstrip("/").rpartition("/")
        base = _relative(parent) if parent else ""
        path = None if _GLOB & set(last) else _relative(pattern)
        if path is not None and ".." not in path.split("/"):
            members.append(path)
        elif last == "*" and base is not None and ".." not in base.split("/"):
            folder = root / base if base else root
            try:
                names = sorted(e.name for e in folder.iterdir() if e.is_dir() and not e.is_symlink())
            except OSError as exc:
                log.info("workspace pattern %r skipped (%s)", pattern, exc)
                continue
            members.extend(f"{base}/{name}" if base else name for name in names)
        else:
            log.info("workspace pattern %r skipped: only paths and a last '*' are read", pattern)
        if len(members) >= _MAX_MEMBERS:
            log.info("workspace members after the first %d skipped", _MAX_MEMBERS)
            break
    return members[:_MAX_MEMBERS]


def _package_name(folder: Path) -> str | None:
    """The package name a workspace member's manifest gives, if any."""
    text = _read(folder / "package.json")
    if text is not None:
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("name"), str):
            return str(data["name"])
    text = _read(folder / "Cargo.toml")
    if text is not None:
        try:
            package = tomllib.loads(text).get("package", {})
        except tomllib.TOMLDecodeError:
            package = {}
        if isinstance(package, dict) and isinstance(package.get("name"), str):
            return str(package["name"])
    return None


def _workspace_kinds(root: Path) -> list[tuple[str, str]]:
    """(member folder, kind) for each workspace member whose package name's last word
    names a kind of non-product code (``zod-benchmarks``: ``bench``)."""
    out: list[tuple[str, str]] = []
    for member in _workspace_members(root):
        name = _package_name(root / member)
        words = [w for w in re.split(r"[^a-z0-9]+", (name or "").lower()) if w]
        kind = _core.path_kind(f"{words[-1]}/x") if words else None
        if kind is not None:
            out.append((member, kind))
    return out


def _info(s: _core.Definition) -> Definition:
    return Definition(s.name, s.kind, s.scope, s.path, s.line, s.end_line, s.signature)


def _lines(graph: Searched, path: str, policy: Policy, cache: dict[str, list[str] | None]) -> list[str] | None:
    if path not in cache:
        data = read_source(graph.root, path, policy.graph.max_file_bytes)
        cache[path] = None if data is None else data.decode("utf-8", "replace").splitlines()
    return cache[path]


def _snippet(lines: list[str], symbol: _core.Definition, max_lines: int) -> tuple[int, str]:
    end = min(symbol.end_line, symbol.line + max_lines - 1, len(lines))
    return end, "\n".join(lines[symbol.line - 1 : end])


def search_code(
    graph: Searched,
    text: str,
    *,
    policy: Policy,
    level: Level = "definition",
    limit: int = 10,
    focus_files: Sequence[str] = (),
    code: bool = True,
    dense: Sequence[tuple[str, float]] = (),
    notes: Sequence[str] = (),
) -> CodeSearch:
    """The definitions (or files) of ``graph`` most relevant to ``text``, best
    first (see the module's docstring). With ``code``, a definition hit carries its
    source (cut at the policy's ``snippet_max_lines``)."""
    if level not in LEVELS:
        raise InvalidInputError(f"level must be 'definition' or 'file', got {level!r}")
    hits, mentioned, reason = graph.search(
        text,
        search_params(policy),
        level=level,
        limit=limit,
        focus=list(focus_files),
        dense=list(dense),
        kinds=project_kinds(graph),
    )
    cache: dict[str, list[str] | None] = {}
    found = [_found(graph, hit, level, policy, cache if code else None) for hit in hits]
    channels = ["lexical", "graph"] + (["dense"] if dense else [])
    return CodeSearch(text, level, found, channels, mentioned, reason, list(notes))


def _found(
    graph: Searched, hit: _core.CodeHit, level: Level, policy: Policy, cache: dict[str, list[str] | None] | None
) -> CodeHit:
    s = hit.symbol
    content = None
    end_line = s.end_line
    if cache is not None and level == "definition":
        lines = _lines(graph, s.path, policy, cache)
        if lines is not None:
            end_line, content = _snippet(lines, s, policy.retrieval.snippet_max_lines)
    return CodeHit(
        path=s.path,
        name=None if level == "file" else s.name,
        kind=s.kind,
        scope=s.scope,
        line=s.line,
        end_line=end_line,
        signature="" if level == "file" else s.signature,
        score=hit.score,
        channels=[ChannelScore(*c) for c in hit.channels],
        matched=list(hit.matched),
        via=[_info(v) for v in hit.via],
        test=hit.test,
        code=content,
    )


# -- the dense channel ------------------------------------------------------------------

#: The file of a graph's vectors: ``graph.vectors`` beside ``graph.bin``.
VECTORS_SUFFIX = ".vectors"
_SEPARATOR = "\x1f"


def _vector_key(key: str, text: str) -> str:
    """A document's vector key: its key and a digest of the text embedded, so a
    changed definition is embedded again and a stale vector is found and dropped."""
    import hashlib

    return f"{key}{_SEPARATOR}{hashlib.blake2b(text.encode('utf-8', 'replace'), digest_size=8).hexdigest()}"


class DenseIndex:
    """The dense channel of code search: an embedding of each function, class and
    file (name, signature, docstring; path, module docstring, names), kept in a
    :class:`VectorIndex` saved beside the graph file and brought in step with the
    graph by :meth:`sync`."""

    def __init__(self, path: Path, embedder: Embedder) -> None:
        self.path = path
        self.embedder = embedder
        self.vectors = VectorIndex(embedder.dim)
        if path.is_file():
            try:
                loaded = VectorIndex.load(path)
            except StoreError as exc:  # damaged: embedded again by the next sync
                log.warning("vectors at %s not read (%s): they will be rebuilt", path, exc)
            else:
                if loaded.dim == embedder.dim:
                    self.vectors = loaded

    def __len__(self) -> int:
        return len(self.vectors)

    def sync(self, graph: KnowledgeGraph, progress: Callable[[int, int], object] | None = None) -> tuple[int, int]:
        """Embeds the documents the index lacks and drops the vectors of documents
        gone or changed; saves when anything changed. Returns (embedded, dropped).
        ``progress(done, total)`` is called after each batch."""
        wanted = {_vector_key(key, text): text for key, text in graph.embedding_texts()}
        have = set(self.vectors.keys())
        stale = sorted(have - set(wanted))
        missing = sorted(set(wanted) - have)
        if stale:
            self.vectors.remove(stale)
        batch = 256
        for start in range(0, len(missing), batch):
            keys = missing[start : start + batch]
            self.vectors.upsert(keys, self.embedder.embed([wanted[k] for k in keys]))
            if progress is not None:
                progress(min(start + batch, len(missing)), len(missing))
        if stale or missing:
            self.vectors.save(self.path)
        return len(missing), len(stale)

    def scores(self, text: str, limit: int, minimum: float) -> list[tuple[str, float]]:
        """(document key, cosine similarity) of the ``limit`` documents nearest to
        ``text`` that are at least ``minimum`` similar."""
        if not len(self.vectors):
            return []
        query = self.embedder.embed([text])[0]
        return [
            (key.split(_SEPARATOR, 1)[0], float(score))
            for key, score in self.vectors.search(query, limit)
            if score >= minimum
        ]


def dense_embedder(policy: Policy) -> tuple[Callable[[], Embedder] | None, str]:
    """What loads the embedding model under ``policy``, or None and why not (empty
    when the policy leaves the dense channel off)."""
    if policy.retrieval.dense == "off":
        return None, ""  # (before the import: a search with the channel off never pays for it)
    from .embeddings import Embedder, available

    ok, why = available()
    if not ok:
        return None, f"dense channel off: {why}"
    return Embedder.load, ""


def dense_channel(policy: Policy, graph_path: Path) -> tuple[DenseIndex | None, str]:
    """The dense channel for a graph file under ``policy``, or None and why not
    (empty when the policy leaves it off)."""
    load, why = dense_embedder(policy)
    if load is None:
        return None, why
    return DenseIndex(graph_path.with_suffix(VECTORS_SUFFIX), load()), ""


def find_relevant_to_query(
    graph: Searched,
    text: str,
    *,
    max_tokens: int,
    focus_files: Sequence[str] = (),
    tokens: TokenCounter | None = None,
    policy: Policy | None = None,
) -> list[RelevantCode]:
    """Code snippets (path, line range, content, relevance in (0, 1], tokens)
    relevant to ``text``, best first, whose token counts add up to at most
    ``max_tokens``: the functions and classes :func:`search_code` ranks best
    (among the policy's ``retrieval.candidates``, scoring at least
    ``retrieval.min_relevance`` of the best), read from disk and taken in order
    while they fit; after the first that does not, ``retrieval.fill_attempts``
    more are tried. A snippet overlapping one already taken (a method of a
    taken class, a class around a taken method) is skipped; snippets longer than
    ``retrieval.snippet_max_lines`` are cut there. Files that cannot be read any
    more are skipped."""
    from .tokens import TokenCounter

    policy = policy or Policy()
    counter = tokens or TokenCounter(policy.encoding)
    hits, _, _ = graph.search(
        text,
        search_params(policy),
        level="definition",
        limit=policy.retrieval.candidates,
        focus=list(focus_files),
        kinds=project_kinds(graph),
    )
    top = hits[0].score if hits and hits[0].score > 0 else 1.0
    chosen: list[RelevantCode] = []
    budget = max_tokens
    cache: dict[str, list[str] | None] = {}
    attempts = policy.retrieval.fill_attempts
    for hit in hits:
        symbol = hit.symbol
        if hit.score < policy.retrieval.min_relevance * top or attempts < 0:
            break
        if symbol.kind not in ("function", "class") or _overlaps(chosen, symbol):
            continue
        lines = _lines(graph, symbol.path, policy, cache)
        if lines is None:
            continue
        end, content = _snippet(lines, symbol, policy.retrieval.snippet_max_lines)
        cost = counter.count(content)
        if cost > budget:
            attempts -= 1
            continue
        budget -= cost
        chosen.append(RelevantCode(symbol.path, (symbol.line, end), content, min(1.0, hit.score / top), cost))
        if budget <= 0:
            break
    return chosen


def _overlaps(chosen: list[RelevantCode], symbol: _core.Definition) -> bool:
    return any(
        c.file_path == symbol.path and c.line_range[0] <= symbol.end_line and symbol.line <= c.line_range[1]
        for c in chosen
    )


def graph_code_provider(
    graph: KnowledgeGraph,
    *,
    max_tokens: int | None = None,
    tokens: TokenCounter | None = None,
    policy: Policy | None = None,
) -> Callable[[str], list[RelevantCode]]:
    """A ``code_provider`` for :class:`DynamicContextManager`: each message brings in
    up to ``max_tokens`` (default: the policy's code budget) of the code most
    relevant to it."""
    policy = policy or Policy()
    budget = policy.code_tokens if max_tokens is None else max_tokens

    def provide(message: str) -> list[RelevantCode]:
        return find_relevant_to_query(graph, message, max_tokens=budget, tokens=tokens, policy=policy)

    return provide
