"""Typed surface of the Rust core (aircher_mem._core). Users import from aircher_mem."""

from collections.abc import Callable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import ClassVar, Literal, final

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

__version__: str
__all__ = [
    "__version__",
    "ContextItem",
    "ContextItemType",
    "ContextPolicy",
    "ContextWindow",
    "PruneResult",
    "KnowledgeGraph",
    "GraphView",
    "Definition",
    "Reference",
    "SearchParams",
    "CodeHit",
    "TokenEncoding",
    "sha256_hex",
    "VectorIndex",
    "LexicalIndex",
    "ProseAnalysis",
    "prose_content_words",
    "prose_digests",
    "prose_levels",
    "prose_sentences",
    "segment_sessions",
    "similar_pairs",
    "tokenize",
    "fuse",
    "outline",
    "path_kind",
    "read_project_file",
    "relative_path",
]

@disjoint_base
class ContextItemType:
    """The kind of a context item and its fields."""

    @final
    class SystemPrompt(ContextItemType):
        __match_args__: ClassVar[tuple[()]]
        def __new__(cls) -> ContextItemType.SystemPrompt: ...

    @final
    class UserMessage(ContextItemType):
        __match_args__: ClassVar[tuple[str]]
        def __new__(cls, intent: str | None = None) -> ContextItemType.UserMessage: ...
        @property
        def intent(self) -> str | None: ...

    @final
    class AssistantResponse(ContextItemType):
        __match_args__: ClassVar[tuple[str]]
        def __new__(cls, tool_calls: Sequence[str] = ...) -> ContextItemType.AssistantResponse: ...
        @property
        def tool_calls(self) -> list[str]: ...

    @final
    class ToolResult(ContextItemType):
        __match_args__: ClassVar[tuple[str, str]]
        def __new__(cls, tool_name: str, file_path: str | None = None) -> ContextItemType.ToolResult: ...
        @property
        def tool_name(self) -> str: ...
        @property
        def file_path(self) -> str | None: ...

    @final
    class CodeSnippet(ContextItemType):
        __match_args__: ClassVar[tuple[str, str]]
        def __new__(cls, file_path: str, line_range: tuple[int, int]) -> ContextItemType.CodeSnippet: ...
        @property
        def file_path(self) -> str: ...
        @property
        def line_range(self) -> tuple[int, int]: ...

    @final
    class TaskState(ContextItemType):
        __match_args__: ClassVar[tuple[str, str]]
        def __new__(cls, task_id: str, description: str) -> ContextItemType.TaskState: ...
        @property
        def task_id(self) -> str: ...
        @property
        def description(self) -> str: ...

    @final
    class KnowledgeGraphQuery(ContextItemType):
        __match_args__: ClassVar[tuple[str, str]]
        def __new__(cls, query: str, result_summary: str) -> ContextItemType.KnowledgeGraphQuery: ...
        @property
        def query(self) -> str: ...
        @property
        def result_summary(self) -> str: ...

    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class ContextItem:
    """One immutable item of the context window."""

    def __new__(
        cls,
        id: str,
        content: str,
        item_type: ContextItemType,
        *,
        token_cost: int,
        timestamp: float,
        relevance_score: float = 1.0,
        task_id: str | None = None,
        dependencies: Sequence[str] = ...,
        sticky: bool = False,
    ) -> ContextItem: ...
    @property
    def id(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def item_type(self) -> ContextItemType: ...
    @property
    def type_name(self) -> str: ...
    @property
    def timestamp(self) -> float: ...
    @property
    def relevance_score(self) -> float: ...
    @property
    def token_cost(self) -> int: ...
    @property
    def task_id(self) -> str | None: ...
    @property
    def dependencies(self) -> list[str]: ...
    @property
    def sticky(self) -> bool: ...

@final
class ContextPolicy:
    """Constants of the relevance formula and pruning rule; the defaults are the
    unweighted reference constants."""

    fields: ClassVar[list[str]]
    def __new__(cls, **overrides: float) -> ContextPolicy: ...
    def replace(self, **overrides: float) -> ContextPolicy: ...
    def to_dict(self) -> dict[str, float]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...
    @property
    def prune_threshold(self) -> float: ...
    @property
    def prune_fraction(self) -> float: ...
    @property
    def decay_minutes(self) -> float: ...
    @property
    def current_task_boost(self) -> float: ...
    @property
    def dependent_boost(self) -> float: ...
    @property
    def max_score(self) -> float: ...
    @property
    def weight_system_prompt(self) -> float: ...
    @property
    def weight_task_state(self) -> float: ...
    @property
    def weight_user_message(self) -> float: ...
    @property
    def weight_assistant_tool_calls(self) -> float: ...
    @property
    def weight_assistant_text(self) -> float: ...
    @property
    def weight_tool_result(self) -> float: ...
    @property
    def weight_code_snippet(self) -> float: ...
    @property
    def weight_graph_query(self) -> float: ...

@final
class PruneResult:
    """What one prune removed and why."""

    @property
    def removed(self) -> list[ContextItem]: ...
    @property
    def removed_scores(self) -> list[float]: ...
    @property
    def tokens_before(self) -> int: ...
    @property
    def tokens_after(self) -> int: ...
    @property
    def target_tokens(self) -> int: ...
    @property
    def threshold(self) -> int: ...
    @property
    def reason(self) -> str: ...

@final
class ContextWindow:
    """The working memory: items scored and pruned under a token budget. Thread-safe;
    scoring and pruning release the GIL."""

    def __new__(cls, max_tokens: int, policy: ContextPolicy | None = None) -> ContextWindow: ...
    def add(self, item: ContextItem) -> None: ...
    def extend(self, items: Sequence[ContextItem]) -> None: ...
    def remove(self, id: str) -> ContextItem: ...
    def get(self, id: str) -> ContextItem: ...
    def items(self) -> list[ContextItem]: ...
    def __len__(self) -> int: ...
    def __contains__(self, key: str, /) -> bool: ...
    @property
    def token_count(self) -> int: ...
    @property
    def max_tokens(self) -> int: ...
    @property
    def threshold(self) -> int: ...
    @property
    def pruning_count(self) -> int: ...
    @property
    def current_task(self) -> str | None: ...
    @property
    def policy(self) -> ContextPolicy: ...
    def set_current_task(self, task_id: str | None) -> None: ...
    def scores(self, now: float) -> npt.NDArray[np.float64]: ...
    def prune(self, now: float) -> PruneResult: ...
    def maybe_prune(self, now: float) -> PruneResult | None: ...
    def copy(self) -> ContextWindow: ...

@final
class Definition:
    """A node of the knowledge graph: a file, a definition (function, class,
    variable) or an import."""

    @property
    def kind(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def language(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def end_line(self) -> int: ...
    @property
    def signature(self) -> str: ...
    @property
    def scope(self) -> str: ...
    @property
    def items(self) -> list[str]: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class Reference:
    """An edge seen from a definition: the other end, the kind, the line, the resolution's confidence."""

    @property
    def symbol(self) -> Definition: ...
    @property
    def kind(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def confidence(self) -> float: ...
    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...

@final
class SearchParams:
    """The weights of a code search; the Policy's ``[retrieval]`` section builds one
    (:func:`aircher_mem.retrieval.search_params`)."""

    def __new__(
        cls,
        *,
        k1: float,
        b: float,
        field_weights: Sequence[tuple[str, float]],
        normalization: str,
        lexical_weight: float,
        graph_weight: float,
        dense_weight: float,
        candidates: int,
        graph_seeds: int,
        path_weight: float,
        focus_weight: float,
        damping: float,
        epsilon: float,
        max_pushes: int,
        forms: float,
        idf_exponent: float,
        prose_only: float,
        filler: float,
        test_factor: float,
        bench_factor: float,
        example_factor: float,
        docs_factor: float,
        vendor_factor: float,
        file_spread: float,
        name_only_factor: float,
    ) -> SearchParams: ...

@final
class CodeHit:
    """A code search result: the definition or file, its fused score, each channel's
    (name, raw, normalized, weight), the query terms it matched, a file's best
    definitions, and whether it is a test or fixture file."""

    @property
    def symbol(self) -> Definition: ...
    @property
    def score(self) -> float: ...
    @property
    def channels(self) -> list[tuple[str, float, float, float]]: ...
    @property
    def matched(self) -> list[str]: ...
    @property
    def via(self) -> list[Definition]: ...
    @property
    def test(self) -> bool: ...

@final
class TokenEncoding:
    """A byte-pair encoding from a tiktoken ranks file's bytes and its pattern; counts
    tokens as tiktoken's ``encode_ordinary`` makes them."""

    def __new__(cls, ranks: bytes, pattern: str) -> TokenEncoding: ...
    def count(self, text: str) -> int: ...
    def count_many(self, texts: list[str]) -> list[int]: ...

def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data`` in lowercase hex, computed without the GIL."""

@final
class VectorIndex:
    """Dense vectors by key in one contiguous float32 matrix, searched by brute force (cosine)."""

    def __new__(cls, dim: int) -> VectorIndex: ...
    @property
    def dim(self) -> int: ...
    def __len__(self) -> int: ...
    def keys(self) -> list[str]: ...
    def upsert(self, keys: Sequence[str], vectors: npt.NDArray[np.float32] | npt.NDArray[np.float64]) -> None: ...
    def get(self, keys: Sequence[str]) -> npt.NDArray[np.float32]:
        """The stored (normalized) vectors of ``keys``, a row each; a row of NaN for a
        key without one."""
    def remove(self, keys: Sequence[str]) -> int: ...
    def search(
        self, query: npt.NDArray[np.float32] | npt.NDArray[np.float64], limit: int
    ) -> list[tuple[str, float]]: ...
    def save(self, path: str | PathLike[str]) -> None: ...
    @staticmethod
    def load(path: str | PathLike[str]) -> VectorIndex: ...

@final
class LexicalIndex:
    """BM25F index of generic documents (kind, key, group, fields), saved to and loaded from
    one file. Limits: at most 32 distinct field names in use at a time (MAX_FIELDS), the first
    100 000 tokens of a field are indexed (MAX_FIELD_TOKENS), the first 512 distinct known
    terms of a query are searched for (MAX_QUERY_TERMS). Text is tokenized by :func:`tokenize`.
    With ``stem=True`` (for prose: conversation turns, memories; off for code), documents and
    queries alike are tokenized by ``tokenize(text, stem=True)``: "parties" finds "party", the
    matched terms :meth:`search` returns are stems ("parti"), and the flag is saved with the
    index and restored by :meth:`load`.
    Not locked: the long calls release the GIL, and while one thread changes the index (upsert,
    remove, remove_group) any other call on it raises RuntimeError ("Already mutably borrowed"),
    as does a change while another thread searches it; searches may run side by side."""

    def __new__(cls, *, stem: bool = False) -> LexicalIndex: ...
    @property
    def stem(self) -> bool:
        """Whether documents and queries are stemmed (fixed when the index is made)."""
    def __len__(self) -> int:
        """The number of documents."""
    def __contains__(self, key: object, /) -> bool:
        """Whether a document has this key (False for anything but a str)."""
    def keys(self) -> list[str]:
        """The keys of the documents, sorted."""
    def upsert(self, documents: Sequence[tuple[str, str, str, Mapping[str, str]]]) -> None:
        """Indexes each ``(kind, key, group, {field: text})``; a key already present (or met
        earlier in the batch) is replaced. All or nothing: the whole batch is checked first,
        and InvalidInputError with nothing indexed for a field name twice in a document, more
        than 32 distinct field names between those in use and the batch's, a str with a lone
        surrogate or a value of the wrong type. Tokenizes in parallel with the GIL released."""
    def remove(self, keys: Sequence[str]) -> int:
        """Removes the documents with these keys; returns how many there were."""
    def remove_group(self, group: str) -> int:
        """Removes every document of ``group``; returns how many there were."""
    def search(
        self,
        query: str,
        limit: int,
        *,
        kinds: Sequence[str] = (),
        field_weights: Mapping[str, float] | None = None,
        k1: float = 1.2,
        b: float = 0.75,
    ) -> list[tuple[str, float, list[str]]]:
        """The ``limit`` documents that score highest for ``query`` with BM25F, best first
        (equal scores by key), as ``(key, score, matched query terms)`` (stems if the index
        stems); only documents of
        ``kinds`` (all if empty). A field's weight is 1.0 unless given; 0 ignores the field.
        InvalidInputError for ``k1 < 0``, ``b`` outside [0, 1], a weight < 0, any of them
        not finite, or a negative ``limit``."""
    def save(self, path: str | PathLike[str], *, generation: int = 0) -> None:
        """Writes the index to ``path`` (temporary file, then rename; mode 0600), with
        ``generation`` (an unsigned 64-bit number) that :attr:`generation` gives back after
        :meth:`load`: what a caller ties the file to (InvalidInputError outside 0..2**64-1)."""
    @property
    def generation(self) -> int:
        """The ``generation`` the file this index was loaded from was saved with; 0 for an
        index made in memory."""
    @staticmethod
    def load(path: str | PathLike[str]) -> LexicalIndex:
        """Reads an index written by :meth:`save`, stemming if it did; a file written before
        stemming existed loads as a non-stemming index. StoreCorruptError for a damaged file.
        The index keeps reading its posting lists from the file, mapped: replace the file by
        renaming another over it (as :meth:`save` does), never rewrite it in place while an
        index loaded from it is in use (see RELIABILITY.md)."""

def segment_sessions(
    sessions: Sequence[tuple[Sequence[str], Sequence[float], Sequence[int], int]],
    *,
    gap: float,
    min_len: int,
    window: int,
    depth: float,
    max_len: int,
    vectors: Sequence[npt.NDArray[np.float32] | npt.NDArray[np.float64] | None] | None = None,
    meaning: float = 0.0,
) -> list[list[tuple[int, str]]]:
    """For each session ``(texts, times, groups, keep)`` (texts said at ``times``, in
    ``groups``, the first ``keep`` of them a run already made, never split), where its
    topical runs start after those, and why: (index, "gap" | "group" | "size" |
    "topic"), in order. A run starts at a gap of more than ``gap`` seconds or a change
    of group; between those, at a topic shift: a point where the ``window`` texts
    before it and the ``window`` after it are least alike (the cosine of their stemmed
    token counts, blended by the weight ``meaning`` with the cosine of their summed
    vectors where ``vectors`` embed both sides: one 2-D array or None per session, a
    row per text, NaN rows for texts without one), its depth below the nearest peaks
    on both sides at least ``depth``, deepest first, at least ``min_len`` texts after a
    run's start and from another shift; a run of more than ``max_len`` texts is cut.
    The sessions are segmented on every core."""

def similar_pairs(texts: Sequence[str], fresh: Sequence[bool], threshold: float) -> list[tuple[int, int, float]]:
    """The pairs of ``texts`` (by index) whose sets of stemmed tokens (as
    ``tokenize(text, stem=True)`` gives them) have a cosine of at least ``threshold``,
    each later text that is ``fresh`` against every earlier one: (later, earlier,
    cosine), by later text, each one's best first. An exact all-pairs join (prefix and
    size filtering), in Rust without the GIL."""

@final
class ProseAnalysis:
    """Cleaned texts read once (control characters and lone surrogates already spaces,
    already cut): their sentences and words classified, without the GIL. Each method
    gives one form of them; :mod:`aircher_mem.longterm.compress` documents each."""

    MAX_SENTENCES: ClassVar[int]
    KEY_POINT_SENTENCES: ClassVar[int]
    HEADLINE_CHARS: ClassVar[int]

    def __new__(cls, texts: Sequence[str]) -> ProseAnalysis: ...
    def summary(self, sentences: int) -> str: ...
    def key_point(self, chars: int) -> str: ...
    def compressed(self, max_words: int, fillers: bool) -> str: ...
    def terms(self) -> list[str]: ...
    def headline(self, max_words: int) -> str: ...
    def tags(self, n: int) -> list[str]: ...
    def entities(self) -> list[str]: ...
    def decisions(self) -> list[str]: ...
    def questions(self) -> list[str]: ...

def prose_sentences(text: str) -> list[str]:
    """The sentences of a cleaned text (:func:`aircher_mem.longterm.compress.sentences`)."""

def prose_content_words(text: str) -> list[str]:
    """The words of a cleaned text that are not stop words, lowercased, in order."""

def prose_levels(texts: Sequence[str], sentences: int) -> list[tuple[str, str, str]]:
    """The levels (summary, compressed, index) of each cleaned text, in order, on the
    thread pool."""

def prose_digests(
    batches: Sequence[Sequence[str]], sentences: int
) -> list[tuple[str, str, str, str, list[str], list[str], list[str], list[str], list[str]]]:
    """The digest of each batch of cleaned texts, in order, on the thread pool:
    (headline, summary, compressed, index, key_points, entities, decisions,
    questions, tags)."""

def tokenize(text: str, *, stem: bool = False) -> list[str]:
    """The tokens of ``text`` the lexical index indexes and searches for, in order: each word
    lowercased, then its parts (snake_case, camelCase, digits); stop words, code noise and
    tokens of fewer than 2 characters or more than 64 bytes are left out. With ``stem=True``
    each token is replaced by its Snowball English stem, identifiers and their parts included
    (``"The parties were running late"`` -> ``["parti", "run", "late"]``,
    ``"parseHTTPResponse"`` -> ``["parsehttprespons", "pars", "http", "respons"]``), and a stem
    that is a stop word is left out, as a :class:`LexicalIndex` made with ``stem=True`` does."""

def fuse(
    channels: Sequence[tuple[str, float, Sequence[tuple[str, float]]]], normalization: str = "minmax"
) -> list[tuple[str, float, list[tuple[str, float, float, float]]]]:
    """Fuses retrieval channels ``(name, weight, [(key, raw score)])`` into one ranking: each
    channel's scores are normalized over what it returned (``"minmax"``: (s - min) / (max - min);
    ``"zscore"``: (s - min) / std; 1.0 for all when they are equal), weighted and summed. Returns
    every key some channel returned as ``(key, fused score, [(channel, raw, normalized, weight)])``,
    best first, equal scores by key. A key listed twice in a channel counts once with its highest
    score, non-finite scores are skipped, a non-finite weight counts as 0. InvalidInputError for
    another normalization."""

@final
class KnowledgeGraph:
    """The codebase as a graph: files, functions, classes, variables, imports and their edges."""

    @staticmethod
    def build(
        root: str | PathLike[str],
        *,
        max_file_bytes: int = 1_000_000,
        progress: Callable[[int, int], object] | None = None,
        phase: Callable[[str], object] | None = None,
        only: Sequence[str] | None = None,
    ) -> KnowledgeGraph: ...
    @staticmethod
    def build_into(
        root: str | PathLike[str],
        path: str | PathLike[str],
        *,
        max_file_bytes: int = 1_000_000,
        progress: Callable[[int, int], object] | None = None,
        phase: Callable[[str], object] | None = None,
    ) -> tuple[int, list[tuple[str, str]], list[tuple[str, str]]]:
        """Builds as :meth:`build` and saves as :meth:`save` (the same bytes) without keeping
        the graph: less memory at the peak. Returns (file count, skipped, warnings)."""
    @staticmethod
    def discover(
        root: str | PathLike[str], *, max_file_bytes: int = 1_000_000
    ) -> tuple[list[str], list[tuple[str, str]], dict[str, int]]: ...
    @staticmethod
    def tracked(
        root: str | PathLike[str], *, record: str | PathLike[str] | None = None
    ) -> tuple[list[str], list[int], list[int], dict[str, int]]:
        """Every source file ``build`` would index under ``root`` (whatever its size),
        sorted by path, in columns: the paths, each one's ``st_mtime_ns`` and size as the
        walk saw them (``lstat``); and the count of files of each language the graph
        does not parse. With ``record``,
        the file where the walk is kept: a later call on a tree as the walk left it
        stats the files instead of walking again."""
    @staticmethod
    def supported_languages() -> list[str]: ...
    @property
    def files(self) -> list[str]: ...
    def files_ending(self, suffixes: list[str]) -> list[str]:
        """The files in the graph whose path ends with one of ``suffixes`` (``.js``...),
        sorted: ``files`` filtered without a string for each of the others."""
    @property
    def file_count(self) -> int: ...
    @property
    def node_count(self) -> int: ...
    @property
    def edge_count(self) -> int: ...
    @property
    def lexical_read(self) -> bool:
        """Whether the lexical index is in memory: false after :meth:`load` until it is first
        needed (a search, a save, :meth:`embedding_texts`)."""
    @property
    def skipped(self) -> list[tuple[str, str]]: ...
    @property
    def warnings(self) -> list[tuple[str, str]]: ...
    @property
    def root(self) -> Path: ...
    def save(self, path: str | PathLike[str]) -> None: ...
    @staticmethod
    def load(
        path: str | PathLike[str],
        *,
        root: str | PathLike[str] | None = None,
        max_file_bytes: int = 1_000_000,
        read_index: Literal["when_needed", "with_graph"] = "when_needed",
    ) -> KnowledgeGraph:
        """Reads a graph written by :meth:`save` (StoreCorruptError if damaged). The lexical
        index saved beside it is read when first needed (a search, a save; see
        :attr:`lexical_read`), or with ``read_index="with_graph"`` beside the graph, for a
        caller about to search."""
    def update_file(self, path: str | PathLike[str]) -> None: ...
    def remove_file(self, path: str | PathLike[str]) -> bool: ...
    def find_symbol(self, name: str, *, prefix: bool = False, fuzzy: bool = False) -> list[Definition]: ...
    def get_file_contents(self, path: str) -> list[Definition]: ...
    def get_callers(self, name: str) -> list[Reference]: ...
    def get_callees(self, name: str) -> list[Reference]: ...
    def get_references(self, name: str, *, kind: str | None = None) -> list[Reference]: ...
    def get_references_from(self, path: str) -> list[tuple[Definition, Reference]]: ...
    def get_dependencies(self, path: str) -> list[str]: ...
    def get_dependents(self, path: str) -> list[str]: ...
    def edges(self) -> list[tuple[str, str, str]]: ...
    def neighbourhood(self, name: str, hops: int = 1) -> list[tuple[Definition, int]]: ...
    def embedding_texts(self) -> list[tuple[str, str]]: ...
    def search(
        self,
        text: str,
        params: SearchParams,
        *,
        level: str = "definition",
        limit: int = 10,
        focus: Sequence[str] = ...,
        dense: Sequence[tuple[str, float]] = ...,
        kinds: Sequence[tuple[str, str]] = ...,
    ) -> tuple[list[CodeHit], list[str], str]: ...
    def rank(
        self,
        names: Sequence[str],
        files: Sequence[str] = ...,
        *,
        limit: int = 50,
        damping: float = 0.85,
        iterations: int = 30,
    ) -> list[tuple[Definition, float]]: ...

@final
class GraphView:
    """A saved graph searched where it lies (its view and lexical index mapped), without
    loading it: :meth:`search`, :meth:`find_symbol`, :meth:`get_file_contents`, the
    edges into and out of definitions and files (callers, callees, references,
    dependencies, dependents, neighbourhood) answer as the loaded graph's do (a damaged
    block read is StoreCorruptError)."""

    @staticmethod
    def open(path: str | PathLike[str], *, root: str | PathLike[str]) -> GraphView:
        """The view and lexical index saved beside the graph file ``path``, for the project
        at ``root``. StoreCorruptError when either is damaged or was not written with that
        graph file, SchemaVersionError for another format, FileMissingError when either is missing."""
    @property
    def root(self) -> Path: ...
    @property
    def file_count(self) -> int: ...
    @property
    def files(self) -> list[str]: ...
    def files_ending(self, suffixes: list[str]) -> list[str]: ...
    def find_symbol(self, name: str, *, prefix: bool = False, fuzzy: bool = False) -> list[Definition]: ...
    def get_file_contents(self, path: str) -> list[Definition]: ...
    def get_callers(self, name: str) -> list[Reference]: ...
    def get_callees(self, name: str) -> list[Reference]: ...
    def get_references(self, name: str, *, kind: str | None = None) -> list[Reference]: ...
    def get_dependencies(self, path: str) -> list[str]: ...
    def get_dependents(self, path: str) -> list[str]: ...
    def neighbourhood(self, name: str, hops: int = 1) -> list[tuple[Definition, int]]: ...
    def search(
        self,
        text: str,
        params: SearchParams,
        *,
        level: str = "definition",
        limit: int = 10,
        focus: Sequence[str] = ...,
        dense: Sequence[tuple[str, float]] = ...,
        kinds: Sequence[tuple[str, str]] = ...,
    ) -> tuple[list[CodeHit], list[str], str]: ...

def relative_path(root: str | PathLike[str], path: str | PathLike[str]) -> str:
    """``path`` relative to the project ``root`` with ``/`` separators; InvalidInputError
    for an empty path, a NUL byte, the root itself or a path outside the root."""

def outline(path: str, source: bytes, *, max_bytes: int = 1000000) -> list[Definition]:
    """The definitions and imports of ``source`` read as the file at ``path`` (root-relative,
    ``/``), as ``KnowledgeGraph.get_file_contents`` gives them, without a graph. The language
    is the one the graph gives ``path`` (its extension, else its ``#!`` line); ``[]`` for a
    path the graph does not parse and for binary text. InvalidInputError for a source over
    ``max_bytes``."""

def path_kind(path: str) -> str | None:
    """The kind of non-product code a project-relative ``path`` is by its folder and file
    names (``test``, ``bench``, ``example``, ``docs``, ``vendor``), or None."""

def read_project_file(root: str | PathLike[str], path: str | PathLike[str], *, max_bytes: int) -> bytes:
    """The bytes of project file ``path`` (relative to ``root`` or absolute inside it), read
    without following any symlink and only if it is a regular file of at most ``max_bytes``.
    InvalidInputError for a path outside the root, through or to a symlink, or a bad
    ``max_bytes``; FileMissingError for an absent file; StoreError for a FIFO, socket, device,
    folder or a file larger than ``max_bytes``."""
