"""Policy: every weight, threshold and budget, with defaults.

Built in code (``Policy()``, ``Policy(max_tokens=32_000)``) or loaded from TOML, by
default ``<project>/.aircher/config.toml``::

    [context]
    max_tokens = 180000          # the model's window, less a reply buffer
    encoding = "cl100k_base"
    prune_threshold = 0.8        # any field of ContextPolicy
    weight_code_snippet = 0.7

    [graph]                      # GraphPolicy: indexing and ranking
    max_file_bytes = 1000000

    [episodic]                   # EpisodicPolicy: recording and co-edit learning
    co_edit_seconds = 300

    [retrieval]                  # RetrievalPolicy: relevant code and lexical search
    code_share = 0.25            # relevant code may take this share of max_tokens
    max_code_tokens = 16000

    [longterm]                   # LongtermPolicy: turns, memories, recall, gc
    short_term_turns = 100

    [server]                     # ServerPolicy: the MCP server
    refresh_seconds = 2.0

Every section and key is optional; an unknown one is a PolicyError naming the file
and the key.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from ._core import ContextPolicy
from .errors import InvalidInputError, PolicyError
from .plain import Plain, frozen
from .root import CONFIG_NAME, STORE_DIR

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

__all__ = [
    "Policy",
    "StorePolicy",
    "GraphPolicy",
    "EpisodicPolicy",
    "RetrievalPolicy",
    "LongtermPolicy",
    "ServerPolicy",
    "HooksPolicy",
    "AssemblyPolicy",
    "DecisionsPolicy",
    "LifecyclePolicy",
    "KnowledgePolicy",
    "ChainsPolicy",
    "ContradictionsPolicy",
    "CONFIG_FILE",
]

CONFIG_FILE = Path(STORE_DIR) / CONFIG_NAME
_FLAGS = ("drop_stale_views", "supersede_views")
_INT_MAX = 2**63 - 1


def _default_context() -> ContextPolicy:
    # The unweighted reference formula with code worth 3x instead of 0.7x: replaying
    # real agent trajectories (benches/README.md), its weights drop exactly the code the
    # agent reads again. Fitted on the first half of the trajectories, reported on the
    # second (benches/fit_policy.py).
    return ContextPolicy(weight_code_snippet=3.0)


class _Section(Plain):
    """A frozen section of plain numbers and flags. Each field's metadata gives its
    bounds (``lo``/``hi``, inclusive unless ``lo_open``); ``__post_init__`` checks
    types and bounds, so a bad value is a PolicyError naming the key."""

    section: ClassVar[str]

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, field.name)
            key = f"{self.section}.{field.name}"
            kind = field.type
            if kind == "bool":
                if not isinstance(value, bool):
                    raise PolicyError(f"{key} must be true or false, got {value!r}")
                continue
            if kind == "int":
                if isinstance(value, bool) or not isinstance(value, int):
                    raise PolicyError(f"{key} must be an integer, got {value!r}")
            elif kind == "float":
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                    raise PolicyError(f"{key} must be a finite number, got {value!r}")
                object.__setattr__(self, field.name, float(value))
                value = float(value)
            else:  # str
                if field.metadata.get("any_text"):
                    if not isinstance(value, str):
                        raise PolicyError(f"{key} must be a string, got {value!r}")
                    continue
                prefixes = field.metadata.get("empty_or")
                if prefixes is not None:
                    if not isinstance(value, str) or (value and not value.startswith(prefixes)):
                        raise PolicyError(f"{key} must be empty or start with {' or '.join(prefixes)}, got {value!r}")
                    continue
                if not isinstance(value, str) or not value:
                    raise PolicyError(f"{key} must be a non-empty string, got {value!r}")
                choices = field.metadata.get("choices")
                if choices and value not in choices:
                    raise PolicyError(f"{key} must be one of {', '.join(choices)}, got {value!r}")
                continue
            lo, hi = field.metadata.get("lo"), field.metadata.get("hi", _INT_MAX)
            low_ok = lo is None or (value > lo if field.metadata.get("lo_open") else value >= lo)
            if not low_ok or value > hi:
                left = "(" if field.metadata.get("lo_open") else "["
                raise PolicyError(f"{key} must be in {left}{lo}, {hi}], got {value!r}")

    @classmethod
    def keys(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.keys()}


def _bound(default: Any, lo: float | None = None, hi: float = _INT_MAX, *, lo_open: bool = False) -> Any:
    return dataclasses.field(default=default, metadata={"lo": lo, "hi": hi, "lo_open": lo_open})


def _choice(default: str, *choices: str) -> Any:
    return dataclasses.field(default=default, metadata={"choices": choices})


def _any_text(default: str) -> Any:
    """A string that may be empty (a path, a name)."""
    return dataclasses.field(default=default, metadata={"any_text": True})


@frozen
class GraphPolicy(_Section):
    """``[graph]``: what the code graph indexes and how it ranks."""

    section: ClassVar[str] = "graph"
    #: Files larger than this are skipped (listed with the reason).
    max_file_bytes: int = _bound(1_000_000, 1)
    #: Personalized PageRank: probability of following an edge rather than jumping
    #: back to the query's definitions.
    pagerank_damping: float = _bound(0.85, 0.0, 0.99)
    pagerank_iterations: int = _bound(30, 1, 1000)
    #: A first index in a server (``aircher-mem serve``) first builds the graph of
    #: ``first_batch_share`` of the files (at most ``first_batch_files``), and
    #: answers ``find_symbol`` and ``search_code`` from it (saying so) while the
    #: whole graph is built: those files are parsed twice.
    first_batch_files: int = _bound(1000, 1)
    first_batch_share: float = _bound(0.1, 0.0, 1.0, lo_open=True)
    #: ``aircher-mem index`` on a terminal: the progress line is redrawn at most
    #: this often (seconds; and at each new phase).
    progress_redraw_seconds: float = _bound(0.1, 0.0, 3600.0, lo_open=True)
    #: ``aircher-mem index`` with stderr not a terminal: a plain progress line this
    #: often (seconds; and at each new phase).
    progress_line_seconds: float = _bound(5.0, 0.0, 86_400.0, lo_open=True)
    #: ``aircher-mem index``: how often it asks where the index is (seconds), of
    #: the server through which it indexes, or of the index it runs.
    progress_poll_seconds: float = _bound(0.1, 0.0, 3600.0, lo_open=True)


@frozen
class EpisodicPolicy(_Section):
    """``[episodic]``: how what the agent did is recorded and learned from."""

    section: ClassVar[str] = "episodic"
    #: Buffered records are written in batches of this many rows.
    batch_size: int = _bound(256, 1, 1_000_000)
    #: Two files edited within one task at most this many seconds apart are co-edited.
    co_edit_seconds: int = _bound(300, 1)
    #: Co-edited pairs seen fewer times than this are not reported by default.
    co_edit_min_count: int = _bound(3, 1)
    #: Similar past tasks shown by ``prepare_context``.
    similar_tasks: int = _bound(3, 0, 100)


@frozen
class RetrievalPolicy(_Section):
    """``[retrieval]``: finding the code (and past tasks) relevant to a message."""

    section: ClassVar[str] = "retrieval"
    #: Share of the window's ``max_tokens`` that relevant code may take per message.
    code_share: float = _bound(0.25, 0.0, 1.0, lo_open=True)
    #: ... but never more than this many tokens.
    max_code_tokens: int = _bound(16_000, 1)
    #: Ranked definitions considered before the token budget cuts.
    candidates: int = _bound(200, 1, 100_000)
    #: A snippet longer than this many lines is cut there.
    snippet_max_lines: int = _bound(120, 1, 100_000)
    #: Relevant code scoring below this share of the best hit's score is left out
    #: of the context, however much budget is left.
    min_relevance: float = _bound(0.1, 0.0, 1.0)
    #: Once a snippet does not fit the code budget, at most this many more
    #: candidates are tried (each costs a token count).
    fill_attempts: int = _bound(8, 0, 100_000)
    #: BM25 constants for lexical search (code, past tasks).
    bm25_k1: float = _bound(1.2, 0.0, 100.0)
    bm25_b: float = _bound(0.75, 0.0, 1.0)
    #: BM25F weight of each field of a code document: a definition's name, its
    #: qualified name (``Class.method``), signature, docstring, body and path; a
    #: file's top-level names (its path and module docstring use ``path``/``doc``).
    weight_name: float = _bound(3.0, 0.0, 100.0)
    weight_qualified: float = _bound(1.0, 0.0, 100.0)
    weight_signature: float = _bound(1.0, 0.0, 100.0)
    weight_doc: float = _bound(2.0, 0.0, 100.0)
    weight_body: float = _bound(1.0, 0.0, 100.0)
    weight_path: float = _bound(1.0, 0.0, 100.0)
    weight_names: float = _bound(1.0, 0.0, 100.0)
    #: How each channel's scores are put on one scale before fusion: ``minmax``
    #: (0 to 1 over the channel's hits) or ``zscore`` (standard scores, shifted so
    #: the channel's lowest hit is 0).
    normalization: str = _choice("minmax", "minmax", "zscore")
    #: Fusion weights of the channels: BM25F over code documents, the walk over the
    #: code graph, and embeddings (``pip install aircher-mem[embeddings]``).
    lexical_weight: float = _bound(1.0, 0.0, 100.0)
    graph_weight: float = _bound(0.5, 0.0, 100.0)
    dense_weight: float = _bound(0.5, 0.0, 100.0)
    #: The dense channel (``pip install 'aircher-mem[embeddings]'``): ``on`` makes
    #: ``index`` embed every function, class and file and ``search_code`` the
    #: query. Off by default: on 2 cores the model embeds about 30-60 definitions a
    #: second, so a first index of a large repository takes minutes.
    dense: str = _choice("off", "off", "on")
    #: Dense hits less similar than this (cosine) to the query are ignored: every
    #: text has nearest neighbours, related or not.
    dense_min_similarity: float = _bound(0.3, -1.0, 1.0)
    #: The best lexical hits that seed the graph walk.
    graph_seeds: int = _bound(20, 0, 10_000)
    #: Seed weight of the files a message mentions (paths, module names) and of the
    #: focus files, each as a share of the lexical seeds' total weight.
    path_weight: float = _bound(1.0, 0.0, 100.0)
    focus_weight: float = _bound(0.5, 0.0, 100.0)
    #: The walk's precision: a node passes its weight on while it holds more than
    #: this times its degree (smaller: more of the graph visited, slower). 1e-3 and
    #: 1e-4 rank alike on the stdlib dev set and SWE-bench (benches/README.md);
    #: 1e-3 is about 4x faster.
    walk_epsilon: float = _bound(1e-3, 1e-9, 1.0, lo_open=True)
    #: At most this many steps of the walk per query.
    walk_max_pushes: int = _bound(200_000, 1, 100_000_000)
    #: Weight of the other forms of a query word in code search (those with its
    #: Snowball stem: ``parse`` and ``parses`` for "parsed", ``reply`` for
    #: "replies") in names, signatures and paths, the word's own form weighing 1;
    #: 0 matches the exact forms only.
    word_forms_weight: float = _bound(0.25, 0.0, 1.0)
    #: Each query word's idf (how rare it is among the project's documents) is
    #: raised to this power in code search: above 1 (BM25F's own), words that many
    #: documents have ("used", "handled") weigh less against the rare ones.
    idf_exponent: float = _bound(1.0, 0.0, 4.0)
    #: Weight of a query word the project writes in prose only (comments, doc
    #: strings, bodies) and in no name, signature or path, measured in the index at
    #: each query, when the query writes it as a plain word (a word written as an
    #: identifier, ``to_datetime`` or ``TypeError``, keeps its weight). 1 weighs it
    #: like any other word.
    prose_only_weight: float = _bound(1.0, 0.0, 1.0)
    #: The same weight for the verbs a question uses to point at code without
    #: naming it ("where is gitignore handled", "how is it implemented": the
    #: engine's list of filler words), in place of ``prose_only_weight``. A project
    #: whose names have the word keeps it at full weight.
    filler_weight: float = _bound(0.25, 0.0, 1.0)
    #: Score factors of code that is not the product, each unless the message names
    #: the file or the kind ("test", "benchmark", "example", "docs", "vendored"):
    #: test and fixture files, benchmarks, examples and samples, documentation,
    #: vendored code. Found by folder and file names, and by the project's own
    #: configuration (pytest ``testpaths``, ``.gitattributes`` ``linguist-vendored``
    #: and ``linguist-documentation``).
    test_factor: float = _bound(0.5, 0.0, 1.0)
    bench_factor: float = _bound(0.5, 0.0, 1.0)
    example_factor: float = _bound(0.5, 0.0, 1.0)
    docs_factor: float = _bound(0.5, 0.0, 1.0)
    vendor_factor: float = _bound(0.5, 0.0, 1.0)
    #: A file's score is its best document's plus this times its next two's.
    file_spread: float = _bound(0.25, 0.0, 10.0)
    #: At file level, factor of a file's own document (path, module docstring,
    #: top-level names) when the query words it has are all in its path: a file
    #: found by its name, not its content.
    name_only_factor: float = _bound(1.0, 0.0, 1.0)

    def code_tokens(self, max_tokens: int) -> int:
        """The code budget of a window of ``max_tokens``: ``code_share`` of it, at
        least 1 and at most ``max_code_tokens``."""
        return max(1, min(self.max_code_tokens, int(max_tokens * self.code_share)))


@frozen
class LongtermPolicy(_Section):
    """``[longterm]``: conversation turns and the memories kept from them, their
    scoring, lifecycle and similarity thresholds."""

    section: ClassVar[str] = "longterm"
    #: The short-term window: the last this many turns of a session.
    short_term_turns: int = _bound(100, 1, 1_000_000)
    #: Extract memories from assistant turns too (user turns always).
    extract_assistant: bool = False
    #: ``heuristic`` rules only; ``llm`` the extractor callable only (the rules when
    #: it fails); ``hybrid`` both (the default). Without an extractor: heuristic.
    extractor_mode: str = _choice("hybrid", "heuristic", "llm", "hybrid")
    #: Seconds an extractor callable may take before the rules alone are used.
    llm_timeout_seconds: float = _bound(8.0, 0.0, 3600.0, lo_open=True)
    #: Items of an extractor callable's answer read at most (the rest are skipped
    #: as invalid).
    llm_max_items: int = _bound(200, 1, 100_000)
    #: The rules examine only this many leading characters of a turn (bounds the
    #: time a turn's extraction takes) ...
    extract_scan_chars: int = _bound(8192, 1, 10_000_000)
    #: ... and an extracted memory's content (by the rules or the extractor
    #: callable) is cut to this many characters.
    extract_content_chars: int = _bound(500, 10, 1_000_000)
    #: A new memory whose token set overlaps an existing one's at least this much
    #: (Jaccard) merges into it: hits + 1, last seen now, the turn linked.
    merge_jaccard: float = _bound(0.7, 0.0, 1.0, lo_open=True)
    #: With embeddings: a memory at least ``merge_cosine`` similar to an older
    #: one merges into it (0.85-0.95); above ``duplicate_cosine`` it is a duplicate.
    #: Both are absorbed the same way (hits, turns; the newer one archived), and
    #: explain tells which it was; below ``merge_cosine`` it stays a memory of its own.
    merge_cosine: float = _bound(0.85, 0.0, 1.0, lo_open=True)
    duplicate_cosine: float = _bound(0.95, 0.0, 1.0, lo_open=True)
    #: The cosine merge looks for the older memory among this many nearest items
    #: (turns and memories) of the new one.
    cosine_window: int = _bound(1000, 1, 1_000_000)
    #: A memory's score: w_freq ln(1 + hits) + w_recency exp(-lambda age_days) +
    #: w_importance importance, age counted from the memory's last sighting.
    w_freq: float = _bound(1.0, 0.0, 100.0)
    w_recency: float = _bound(1.0, 0.0, 100.0)
    w_importance: float = _bound(2.0, 0.0, 100.0)
    decay_lambda: float = _bound(0.05, 0.0, 100.0)
    #: gc: a mid-term memory seen at least ``promote_hits`` times, last within
    #: ``promote_days``, moves to the long-term layer.
    promote_hits: int = _bound(3, 1)
    promote_days: float = _bound(7.0, 0.0, 1e6)
    #: gc: a mid-term memory scoring below ``archive_score`` or not seen for more
    #: than ``archive_days`` is archived; beyond ``mid_capacity`` active mid-term
    #: memories, the lowest scoring are archived.
    archive_score: float = _bound(0.5, 0.0, 1e6)
    archive_days: float = _bound(30.0, 0.0, 1e6)
    mid_capacity: int = _bound(500, 1)
    #: Recall: each hit's retrieval score (lexical and dense channels fused with
    #: ``[retrieval]``'s weights and normalization) plus these times its recency
    #: (exp(-decay_lambda age_days) at the time asked about), its importance (0 or
    #: 1) and its usage ((cited - ignored) / (cited + ignored + 1), memories only).
    #: ... and a turn gets this times its session's BM25 score over the best
    #: session's (the conversation around it is about the query too).
    recall_session_weight: float = _bound(0.5, 0.0, 100.0)
    recall_recency_weight: float = _bound(0.1, 0.0, 100.0)
    recall_importance_weight: float = _bound(0.1, 0.0, 100.0)
    recall_usage_weight: float = _bound(0.1, 0.0, 100.0)
    #: BM25F weights of a turn's text (without the names it addresses:
    #: ``longterm.dialogue``), its speaker, its date (day, month, year, weekday),
    #: the turns around it in its session (``context``), the questions of the turn
    #: it replies to (``question``: 1.0 counts them as the turn's own words, 0 turns
    #: the rule off), and of a memory's content (``text``) and tags.
    weight_text: float = _bound(1.0, 0.0, 100.0)
    weight_speaker: float = _bound(1.0, 0.0, 100.0)
    weight_date: float = _bound(1.0, 0.0, 100.0)
    weight_context: float = _bound(0.5, 0.0, 100.0)
    weight_question: float = _bound(1.0, 0.0, 100.0)
    weight_tags: float = _bound(0.5, 0.0, 100.0)
    #: Buffered writes go to the store in batches of this many rows (and before
    #: any read, at ``flush()`` and ``close()``).
    batch_rows: int = _bound(1024, 1, 1_000_000)
    #: Writes of a store file keep the lexical indexes saved beside it (read by the
    #: next process instead of indexing every row): each logs the keys of the
    #: documents it changes (a row each) for the next load to make again, until
    #: the log would pass this many rows; then the indexes are saved anew at close
    #: (0: every write deletes them and every close after one saves them).
    index_log_rows: int = _bound(256, 0, 10_000_000)


@frozen
class AssemblyPolicy(_Section):
    """``[assembly]``: the four tiers of an assembled context, the router that
    loads the hierarchy's memories into it, and the predictive engine."""

    section: ClassVar[str] = "assembly"
    #: The budget of ``assemble`` when none is given (tokens).
    budget: int = _bound(8000, 1, 10_000_000)
    #: The tiers' shares of the budget: critical, relevant, background; the index
    #: gets the rest. A tier that does not fill its share passes the rest on.
    critical_share: float = _bound(0.25, 0.0, 1.0)
    relevant_share: float = _bound(0.375, 0.0, 1.0)
    background_share: float = _bound(0.25, 0.0, 1.0)
    #: The shares while debugging (activity "debugging"): critical grows, background shrinks.
    debugging_critical_share: float = _bound(0.375, 0.0, 1.0)
    debugging_relevant_share: float = _bound(0.3125, 0.0, 1.0)
    debugging_background_share: float = _bound(0.1875, 0.0, 1.0)
    #: Characters of one assembled line (a longer memory, turn or error is cut).
    line_chars: int = _bound(300, 20, 100_000)
    #: Memories and turns recalled for the query, before they are placed.
    recall_k: int = _bound(30, 1, 1000)
    #: Failed tool calls this recent count as recent errors (hours).
    error_hours: float = _bound(24.0, 0.0, 1e6)
    #: Open contradictions offered in the critical tier (those about what the query
    #: recalls first, then the newest).
    contradictions: int = _bound(5, 0, 1000)
    #: Router: a domain is loaded when this share of the query's words is in it.
    route_threshold: float = _bound(0.5, 0.0, 1.0)
    #: Router: L1 memories fill up to this share of the budget, L2 and L3 up to the next;
    #: the rest is kept for metadata.
    route_l1_share: float = _bound(0.7, 0.0, 1.0)
    route_l2_share: float = _bound(0.95, 0.0, 1.0)
    #: Router: below this confidence, the best domains under the threshold are loaded too.
    route_min_confidence: float = _bound(0.5, 0.0, 1.0)
    #: Router: how many domains under the threshold a low confidence adds.
    route_widen: int = _bound(2, 0, 1000)
    #: Router: at most this many memories added by cross-references.
    cross_references: int = _bound(5, 0, 1000)
    #: Prediction: files predicted at most.
    predict_files: int = _bound(10, 1, 1000)
    #: Prediction: recent files looked at, and each one's confidence (the newest
    #: gets recent_weight, each older one decay times the one before).
    predict_recent: int = _bound(10, 0, 1000)
    recent_weight: float = _bound(0.9, 0.0, 1.0)
    recent_decay: float = _bound(0.85, 0.0, 1.0)
    #: Prediction: tool calls whose named files count, files taken from them, and
    #: their confidence (the newest, then decay per older file).
    predict_calls: int = _bound(5, 0, 1000)
    predict_mentions: int = _bound(20, 0, 1000)
    mention_weight: float = _bound(0.8, 0.0, 1.0)
    mention_decay: float = _bound(0.8, 0.0, 1.0)
    #: Prediction: the recent files whose companions in past tasks count, and the
    #: confidence of a companion per share of those tasks it was in.
    predict_companions_of: int = _bound(3, 0, 100)
    companion_weight: float = _bound(0.5, 0.0, 1.0)
    #: Prediction: the confidence of the current file's imports and importers (code graph).
    graph_weight: float = _bound(0.3, 0.0, 1.0)
    #: Prediction: memories about the predicted files, at most.
    predict_memories: int = _bound(10, 0, 1000)
    #: The branch signal: the tasks started on the branch looked at (newest first),
    #: and the confidence of a file they touched per share of those tasks it was in.
    branch_tasks: int = _bound(20, 0, 1000)
    branch_weight: float = _bound(0.5, 0.0, 1.0)
    #: The collaborator signal: their preferences (memories tagged "preference" from
    #: their turns) at most.
    collaborator_memories: int = _bound(5, 0, 1000)
    #: Time of day: the tools run within an hour of now's time of day over this many
    #: days, shown as a workflow hint when run at least ``hour_min_runs`` times.
    hour_days: float = _bound(30.0, 0.0, 1e6)
    hour_min_runs: int = _bound(5, 1, 1_000_000)
    #: ``prepare_context`` assembles a context of this share of the window's
    #: ``max_tokens`` for each message (0: none).
    window_share: float = _bound(0.05, 0.0, 1.0)
    #: The relevance each tier of that context gets in the window (the message and
    #: code carry their own): what the window prunes first when it must.
    critical_relevance: float = _bound(1.0, 0.0, 100.0)
    relevant_relevance: float = _bound(0.8, 0.0, 100.0)
    background_relevance: float = _bound(0.6, 0.0, 100.0)
    index_relevance: float = _bound(0.4, 0.0, 100.0)

    def window_relevance(self) -> dict[str, float]:
        """The window relevance of each tier, by tier name."""
        return {
            "critical": self.critical_relevance,
            "relevant": self.relevant_relevance,
            "background": self.background_relevance,
            "index": self.index_relevance,
        }

    def shares(self, activity: str | None) -> tuple[float, float, float, float]:
        """The four tiers' shares for ``activity`` (critical, relevant,
        background, index), scaled to sum to 1 when they sum to more."""
        if activity == "debugging":
            three = (self.debugging_critical_share, self.debugging_relevant_share, self.debugging_background_share)
        else:
            three = (self.critical_share, self.relevant_share, self.background_share)
        total = sum(three)
        if total > 1.0:
            three = (three[0] / total, three[1] / total, three[2] / total)
        return (*three, max(0.0, 1.0 - sum(three)))


@frozen
class ServerPolicy(_Section):
    """``[server]``: long-running processes (``aircher-mem serve``, ``aircher-mem
    mcp``) and their HTTP clients."""

    section: ClassVar[str] = "server"
    #: Look for changed files before a graph query at most this often (seconds);
    #: a one-shot CLI command looks once, before its first graph query.
    refresh_seconds: float = _bound(2.0, 0.0, 86_400.0)
    #: On: when ``refresh_seconds`` have passed, a graph query answers from the graph
    #: as it is and the look runs right after it, on a thread of its own, so a file
    #: changed without a recorded edit (by a person, or by an agent without the
    #: hooks) is seen one query late; a look walks the whole tree (30-40 ms on
    #: Django, about 0.6 s on the Linux kernel). A process's first graph query, and
    #: one after an edit was recorded, look first either way. Off: every look first.
    refresh_after_answer: bool = False
    #: Refresh the graph (index incrementally) when the server starts.
    index_at_start: bool = True
    #: ``aircher-mem serve``: the largest request body accepted (bytes; larger is a 413).
    max_body_bytes: int = _bound(2 * 1024 * 1024, 1024, 1 << 30)
    #: Seconds a client (the CLI, the MCP server) waits for the HTTP server's answer.
    client_timeout_seconds: float = _bound(60.0, 0.0, 86_400.0, lo_open=True)
    #: Seconds a client waits for the server's answer to ``index`` (a first index of
    #: a large project takes minutes; the CLI shows its progress meanwhile).
    index_timeout_seconds: float = _bound(86_400.0, 0.0, 31_536_000.0, lo_open=True)
    #: Seconds a client waits for the server named in server.json to prove it knows
    #: the file's token (``GET /health?challenge=``) before it sends the token or any
    #: request; no proof in time: the file is stale.
    proof_timeout_seconds: float = _bound(3.0, 0.0, 600.0, lo_open=True)
    #: HTTP connections the server keeps open at most: a new one past it closes the
    #: connection idle longest (no request under way), or itself when all are busy.
    max_connections: int = _bound(256, 1, 1_000_000)
    #: Seconds a connection has to send a complete request (head and body), from
    #: when it opens or from its last answer: an idle or slow connection is closed then.
    request_seconds: float = _bound(5.0, 0.0, 3600.0, lo_open=True)
    #: Seconds an idle connection stays open after an answer (HTTP keep-alive).
    keep_alive_seconds: int = _bound(5, 1, 3600)
    #: Bytes of a request head at most (request line and headers): more is a 400.
    max_header_bytes: int = _bound(64 * 1024, 1024, 16 * 1024 * 1024)
    #: Connections waiting to be accepted (the listen backlog), and accepted at most
    #: in one go; lowered, like ``max_connections``, to fit the open files limit.
    backlog: int = _bound(128, 1, 65_535)
    #: Seconds a process that opens the store waits for a server that offers it
    #: (one a hook started: ``[hooks] start_server``) to give it up; 0: never asks.
    #: Also how long such a server, starting, waits for a store another process
    #: holds (the hook that started it past its deadline, exiting).
    yield_wait_seconds: float = _bound(10.0, 0.0, 600.0)


@frozen
class HooksPolicy(_Section):
    """``[hooks]``: the Claude Code hooks (``aircher-mem hook EVENT``)."""

    section: ClassVar[str] = "hooks"
    #: Seconds a hook may take: past it, it prints nothing and exits 0 (work still
    #: under way is abandoned; what was stored stays stored).
    deadline_seconds: float = _bound(2.0, 0.0, 600.0, lo_open=True)
    #: Characters of context a hook prints at most (Claude Code caps injected text
    #: at 10,000 characters).
    context_chars: int = _bound(4000, 100, 10_000)
    #: Tokens of the context a hook assembles (``assemble``'s budget): all four tiers
    #: at SessionStart, the critical and relevant ones at UserPromptSubmit.
    context_tokens: int = _bound(1000, 1, 100_000)
    #: The least recall score a memory needs to be injected at a prompt: a recall score is the
    #: channels' min-max normalized, weighted match (1.0 for the best lexical match,
    #: 0.0 for the weakest of the pool) plus small recency, importance and usage
    #: terms, so 0.5 keeps the upper half of the matches.
    recall_min_score: float = _bound(0.5, 0.0, 100.0)
    #: The confidence a predicted file needs to be injected at a prompt.
    predict_min_confidence: float = _bound(0.5, 0.0, 1.0)
    #: Characters of one injected line (a memory, an open task) at most; a longer
    #: one is cut and ends in "...".
    line_chars: int = _bound(300, 10, 10_000)
    #: Characters of the query for the memories to inject: the prompt's
    #: (UserPromptSubmit), the open tasks' descriptions (SessionStart).
    query_chars: int = _bound(10_000, 1, 1_000_000)
    #: Characters of one tool parameter PostToolUse stores (a longer one is cut) ...
    parameter_chars: int = _bound(500, 10, 1_000_000)
    #: ... and of one turn a prompt or the transcript gives (the rest is not stored).
    turn_chars: int = _bound(100_000, 1, 1_000_000)
    #: Bytes of the transcript one Stop (or PreCompact) reads at most.
    transcript_max_bytes: int = _bound(2_000_000, 1, 1 << 34)
    #: Seconds ``aircher-mem hook`` waits for its stdin to be closed (Claude Code
    #: writes the event's JSON and closes it); past it the hook exits 1, a
    #: non-blocking error, having done nothing. The deadline starts after.
    stdin_seconds: float = _bound(3.0, 0.0, 600.0, lo_open=True)
    #: Bytes of the event's JSON a hook reads at most (a Read of a large file carries
    #: its content); more is the same non-blocking error, and the rest is not read.
    payload_max_bytes: int = _bound(32_000_000, 1024, 1 << 34)
    #: A hook that found no server for the project, and opened the store itself,
    #: starts ``aircher-mem serve --yields`` for it in the background once done (or at
    #: its deadline, when it runs past it), so the next hooks are its clients (the
    #: thin path). That server gives the store up to any other process that opens it
    #: (``[server] yield_wait_seconds``) ...
    start_server: bool = True
    #: ... which exits after this many seconds without a request.
    server_idle_seconds: float = _bound(1800.0, 0.0, 31_536_000.0, lo_open=True)
    #: DuckDB's worker threads in a hook that opens the store itself (0: DuckDB's
    #: default, one per core): a hook's queries are small, and each runs faster
    #: without handing its work to other threads.
    store_threads: int = _bound(1, 0, 1024)
    #: Bytes the journal may hold (``.aircher/journal.jsonl``): a ``PostToolUse`` with
    #: no server and nobody holding the store appends its records there, redacted and
    #: flushed to disk, instead of opening the store; whoever opens the store next
    #: writes them into it, once. A journal this large, or 0, sends the hook to the
    #: store itself.
    journal_max_bytes: int = _bound(4_000_000, 0, 1 << 30)
    #: ``Stop`` (the agent's turn is over) turns the work tree's changes into facts
    #: (``extract_facts``): what the agent's edits added, removed or changed, deduplicated
    #: against what is known; the uncertain ones wait for review. Not in a git work tree:
    #: nothing.
    facts_at_stop: bool = True
    #: ``PostToolUse`` after an ``Edit``, ``MultiEdit`` or ``Write`` turns that one save into
    #: facts (``extract_facts`` with source ``edit``: the file's text before, which
    #: Claude Code sends, against its text now; no git needed), sent to the server. A
    #: hook without a server only journals the tool call (``Stop`` reads the changes).
    facts_on_edit: bool = True


@frozen
class LifecyclePolicy(_Section):
    """``[lifecycle]``: how memories age (seeds 000, 001, 003): episodes, the hot,
    warm and cold layers with their priority, the four compression levels, TTL and
    the consolidation pass."""

    section: ClassVar[str] = "lifecycle"
    #: Episodes: a session's turns split where the time between two turns exceeds
    #: ``episode_gap_minutes`` ...
    episode_gap_minutes: float = _bound(30.0, 0.0, 1e9, lo_open=True)
    #: ... or at a topic shift: a point where the ``episode_window`` turns before it
    #: and as many after it are least alike, its depth below the most alike points
    #: on both sides at least ``episode_shift_depth`` (TextTiling; alike: the cosine
    #: of their content-word counts, blended with that of their summed vectors by
    #: ``episode_meaning_weight`` when they are embedded, the dense channel on),
    #: each episode it makes at least ``episode_min_turns`` turns long ...
    episode_shift_depth: float = _bound(0.2, 0.0, 2.0)
    episode_meaning_weight: float = _bound(0.7, 0.0, 1.0)
    episode_window: int = _bound(4, 1, 1000)
    episode_min_turns: int = _bound(4, 1, 100_000)
    #: ... or where it reaches ``episode_max_turns`` turns.
    episode_max_turns: int = _bound(40, 1, 1_000_000)
    #: Layers (003): hot until ``hot_days`` without access, warm until
    #: ``warm_days``, then cold ...
    hot_days: float = _bound(14.0, 0.0, 1e6)
    warm_days: float = _bound(90.0, 0.0, 1e6)
    #: ... unless the priority (recency 0-``recency_weight``, frequency
    #: 0-``frequency_weight``, anchor ``anchor_weight``, relevance to the query
    #: 0-``relevance_weight``) is above ``priority_hot`` (hot) or above
    #: ``priority_cold`` (never colder than warm). Recency halves every
    #: ``recency_half_life_days``; frequency saturates at ``frequency_saturation``
    #: accesses. Anchors never go cold.
    priority_hot: float = _bound(0.7, 0.0, 1.0)
    priority_cold: float = _bound(0.3, 0.0, 1.0)
    recency_weight: float = _bound(0.3, 0.0, 1.0)
    frequency_weight: float = _bound(0.2, 0.0, 1.0)
    anchor_weight: float = _bound(0.3, 0.0, 1.0)
    relevance_weight: float = _bound(0.2, 0.0, 1.0)
    recency_half_life_days: float = _bound(14.0, 0.0, 1e6, lo_open=True)
    frequency_saturation: int = _bound(10, 1, 1_000_000)
    #: What recall finds a warm or cold item by: ``raw``, its raw text as a hot
    #: one's (the layer decides only what is served); ``served``, what its layer
    #: serves (003's lazy unpacking: a warm or cold turn or memory is found only when
    #: its summary or compressed form holds a word of the question, and unpacked when
    #: other words it matched are only in its raw text). Measured on LoCoMo in
    #: ``benches/aging.py``.
    recall_finds_by: str = _choice("raw", "raw", "served")
    #: Compression (001): consolidation forms episodes older than
    #: ``summarize_after_days`` (their summary, and their compressed and index
    #: forms, counted compressed past ``compress_after_days``); a summary keeps
    #: ``summary_sentences`` sentences.
    summarize_after_days: float = _bound(7.0, 0.0, 1e6)
    compress_after_days: float = _bound(30.0, 0.0, 1e6)
    summary_sentences: int = _bound(3, 1, 100)
    #: A consolidation pass forms episodes for at most this many seconds; the
    #: rest wait for the next pass.
    consolidate_forms_seconds: float = _bound(3.0, 0.0, 86_400.0)
    #: Seconds the optional summarizer callable may take before the extractive
    #: summary is used.
    summarizer_timeout_seconds: float = _bound(8.0, 0.0, 3600.0, lo_open=True)
    #: Consolidation (001): facts at least this similar merge ...
    merge_similarity: float = _bound(0.92, 0.0, 1.0, lo_open=True)
    #: ... memories never cited and unseen for ``forget_unused_days`` are forgotten,
    #: as are superseded ones, except those cited within ``keep_cited_days`` ...
    forget_unused_days: float = _bound(90.0, 0.0, 1e6)
    keep_cited_days: float = _bound(30.0, 0.0, 1e6)
    #: ... and those superseded less than this long ago (until then recall "as of"
    #: before their successor still finds them) ...
    keep_superseded_days: float = _bound(30.0, 0.0, 1e6)
    #: ... and episodes sharing ``link_shared_entities`` entities are linked, and
    #: (with vectors) an episode made or extended by the pass and its nearest of
    #: another session when each is the other's nearest and the cosine of their
    #: turns' mean vectors is at least ``link_cosine``.
    link_shared_entities: int = _bound(2, 1, 1000)
    link_cosine: float = _bound(0.6, -1.0, 1.0)
    #: A server consolidates every this many seconds (0: never).
    consolidate_interval_seconds: float = _bound(86_400.0, 0.0, 31_536_000.0)
    #: A server that exits when idle (the hooks') runs a due pass once it has had no
    #: request for this long.
    consolidate_idle_seconds: float = _bound(60.0, 0.0, 86_400.0)
    #: TTL defaults (000) by a memory's tag: ``architecture`` (marked stale after 30
    #: days), ``api`` (7 days, refreshed by a change to a file matching
    #: ``ttl_api_refresh``), ``implementation`` (archived after 3 days), ``session``
    #: (deleted after 24 hours). On expiry: mark_stale, archive or delete.
    ttl_architecture_days: float = _bound(30.0, 0.0, 1e6, lo_open=True)
    ttl_architecture_expire: str = _choice("mark_stale", "mark_stale", "archive", "delete")
    ttl_api_days: float = _bound(7.0, 0.0, 1e6, lo_open=True)
    ttl_api_refresh: str = "**/api/**"
    ttl_api_expire: str = _choice("mark_stale", "mark_stale", "archive", "delete")
    ttl_implementation_days: float = _bound(3.0, 0.0, 1e6, lo_open=True)
    ttl_implementation_expire: str = _choice("archive", "mark_stale", "archive", "delete")
    ttl_session_hours: float = _bound(24.0, 0.0, 1e8, lo_open=True)
    ttl_session_expire: str = _choice("delete", "mark_stale", "archive", "delete")


@frozen
class DecisionsPolicy(_Section):
    """``[decisions]``: causal chains (seed 000's tracker), contradictions between
    memories (seed 001's scanner) and how they are resolved."""

    section: ClassVar[str] = "decisions"
    #: A new memory is checked against this many of its nearest active memories
    #: (lexical; with embeddings, as many more by meaning in consolidation).
    scan_neighbours: int = _bound(20, 1, 1000)
    #: A memory that explicitly corrects another ("actually X, not Y", "no longer
    #: Y") wins their contradiction at once (b_wins, the older one superseded).
    auto_resolve_corrections: bool = True
    #: An optional judge callable (``Memory.open(judge=...)``) is asked about a
    #: pair the offline rules passed over whose word overlap (Jaccard) is at least
    #: this, and given at most ``judge_timeout_seconds`` per pair.
    judge_min_overlap: float = _bound(0.3, 0.0, 1.0)
    judge_timeout_seconds: float = _bound(8.0, 0.0, 3600.0, lo_open=True)
    #: A new memory's scan asks the judge (the nearest first) and waits for it this
    #: long at most, a model's load included, as do the checks by meaning of the
    #: memories embedded together; the pairs left are asked by the next
    #: consolidation pass.
    judge_scan_seconds: float = _bound(0.5, 0.0, 3600.0)
    #: The judge when ``Memory.open`` is given none: an NLI model
    #: (:class:`aircher_mem.nli.NliJudge`), a folder holding its ``.onnx`` file and
    #: ``tokenizer.json`` or an installed package's import name, loaded at its first
    #: pair; empty: no judge. ``nli_contradiction`` is its contradiction output (-1:
    #: the ``config.json`` beside it says), ``nli_threshold`` the probability (the
    #: smaller of both orders) at which a pair contradicts. A judge with a ``pair``
    #: method (an NLI model) is asked about the pairs whose word overlap is at least
    #: ``nli_min_overlap``: a contradiction that needs knowledge of the world shares
    #: few words ("I follow a vegan diet" / "Had a cheeseburger for lunch"). With
    #: the dense channel on, only about pairs whose embeddings' cosine is at least
    #: ``nli_min_similarity`` (-1: every pair): neighbours that share a word but
    #: not a subject ("We use npm as the package manager" / "My manager is Priya")
    #: are where such a model says contradiction wrongly most often.
    nli_model: str = _any_text("")
    nli_contradiction: int = _bound(-1, -1, 10_000)
    nli_threshold: float = _bound(0.9, 0.0, 1.0)
    nli_min_overlap: float = _bound(0.0, 0.0, 1.0)
    nli_min_similarity: float = _bound(0.3, -1.0, 1.0)
    #: Decisions and their reasons are read from the assistant's turns too (the
    #: agent says what it chose and why), not only from the user's.
    chains_from_assistant: bool = True
    #: The strength of the edges an LLM extractor's reasons, consequences and
    #: constraints of a decision get (the rules' own come with the connective).
    extractor_strength: float = _bound(0.8, 0.0, 1.0)
    #: Causal chains: a reason or consequence whose words overlap another decision's
    #: this much (Jaccard) joins the two chains (the earlier decision causes the later).
    chain_link_similarity: float = _bound(0.5, 0.0, 1.0, lo_open=True)
    #: query_chain: when recall finds no decision with a chain, the chain sharing the
    #: largest share of the question's words, if at least this share.
    chain_min_overlap: float = _bound(0.3, 0.0, 1.0)
    #: A consolidation pass checks the memories stored before contradictions were
    #: checked at write (a store made by an older version), for at most this long.
    consolidate_scan_seconds: float = _bound(1.0, 0.0, 3600.0)


@frozen
class KnowledgePolicy(_Section):
    """``[knowledge]``: facts from the code itself (seed 000's auto-extraction from
    changes and its cold start)."""

    section: ClassVar[str] = "knowledge"
    #: A fact extracted from a code change with at least this confidence is kept at
    #: once; below it, it waits (status pending) for approve_fact or reject_fact.
    approve_confidence: float = _bound(0.8, 0.0, 1.0)
    #: A candidate whose stemmed words have at least this cosine with a memory (or
    #: a pending fact) updates it instead of adding one (000's merge band) ...
    merge_similarity: float = _bound(0.85, 0.0, 1.0, lo_open=True)
    #: ... and at least this, is that memory already (skipped).
    skip_similarity: float = _bound(0.95, 0.0, 1.0, lo_open=True)
    #: extract_facts keeps at most this many candidates of one call (the rest are
    #: counted, not kept).
    max_candidates: int = _bound(200, 1, 100_000)
    #: Every index refresh (``index``, and the look for changed files a graph verb
    #: makes) turns the files it finds added, changed or removed since the last index
    #: into candidate facts: their text now against the definitions the graph held of
    #: them (no git needed; at most ``max_candidates`` files). Off by default: the hooks
    #: already take facts from the agent's own edits; on, a change made outside the
    #: agent in a tree without git history is learned too.
    facts_on_index: bool = False
    #: discover_project: how many suggested domains, and how many files a task
    #: hint's code search may bring facts from.
    domains: int = _bound(8, 1, 100)
    task_files: int = _bound(8, 0, 100)


@frozen
class ChainsPolicy(_Section):
    """``[chains]``: the rules that read decisions with their reasons, consequences
    and constraints from turns (seed 000's causal chains): how much each connective
    commits to a cause (an edge's strength, 0-1), and how much is read."""

    section: ClassVar[str] = "chains"
    #: "because", "due to", "the reason is", "which is why", "that's why": said to be the cause.
    explicit: float = _bound(0.9, 0.0, 1.0)
    #: "since", "as", "given": causal here, but the same words also mark time or manner.
    since: float = _bound(0.8, 0.0, 1.0)
    #: "to avoid Y", "so that Y", "in order to Y", "so we can Y": the aim, which justifies.
    purpose: float = _bound(0.8, 0.0, 1.0)
    #: A later sentence opening with a reason or consequence lead ("The main reason was
    #: ..."): explicit, but tied to the decision only by being near it.
    follow: float = _bound(0.8, 0.0, 1.0)
    #: "Y, so we X", "Y. So we X": Y came first and the decision followed; "so" also
    #: just sequences.
    cause: float = _bound(0.7, 0.0, 1.0)
    #: "X, so Y", "X, which means Y", "That means Y": what the decision brings.
    consequence: float = _bound(0.7, 0.0, 1.0)
    #: "X: Y", a clause after a decision's colon: an explanation, by punctuation only.
    colon: float = _bound(0.6, 0.0, 1.0)
    #: The sentence right after a decision said alone, in the same turn, with no lead
    #: at all ("We decided against GraphQL. All the clients are ours."): often the
    #: reason, sometimes just the next remark.
    adjacent: float = _bound(0.4, 0.0, 1.0)
    #: Any of the above under "probably", "maybe", "perhaps", "I think", "I guess" (a
    #: lower figure stays).
    hedged: float = _bound(0.5, 0.0, 1.0)
    #: A follow-up sentence attaches to a decision at most this many sentences back
    #: (questions not counted) ...
    follow_gap: int = _bound(2, 0, 100)
    #: ... and a turn is read with this many turns of its session before it (a
    #: decision, a question why, the answer).
    window_turns: int = _bound(2, 0, 100)
    #: Only the first this many characters of a text are read ...
    scan_chars: int = _bound(8192, 1, 10_000_000)
    #: ... a longer sentence is cut to this many before the rules run ...
    sentence_chars: int = _bound(1000, 1, 1_000_000)
    #: ... and a decision's or link's text is cut to this many.
    text_chars: int = _bound(300, 1, 100_000)


@frozen
class ContradictionsPolicy(_Section):
    """``[contradictions]``: the numbers of the offline rules that find two memories
    disagreeing (seed 001's scanner; where and when it looks is ``[decisions]``)."""

    section: ClassVar[str] = "contradictions"
    #: Characters of a text analysed; the rest is ignored (bounds the time of any call).
    max_chars: int = _bound(600, 1, 1_000_000)
    #: Clauses of a text analysed, and amounts (numbers, dates...) kept per text.
    max_clauses: int = _bound(24, 1, 10_000)
    max_amounts: int = _bound(32, 1, 10_000)
    #: Digits of a number read as a number; longer ones are compared as text.
    max_digits: int = _bound(18, 1, 300)
    #: Relative difference under which two amounts in base units count as equal.
    amount_tolerance: float = _bound(1e-6, 0.0, 1.0)
    #: Words of a corrected-away phrase kept by ``correction()``.
    correction_words: int = _bound(6, 1, 1000)
    #: Words before "is"/"uses" read as the subject, and after it as the value.
    subject_words: int = _bound(3, 1, 100)
    value_words: int = _bound(4, 1, 100)
    #: Tokens before a setting's value searched for "not"/"never"/"instead of"/"from".
    negation_window: int = _bound(3, 0, 100)
    #: Word overlap (Jaccard, negations and opposite words left out) for the opposite rule.
    opposite_overlap: float = _bound(0.6, 0.0, 1.0)
    #: Content words each side needs before the opposite rule applies.
    opposite_min_words: int = _bound(2, 0, 1000)
    #: Content words the affirming side may say besides all the negated side says
    #: for the negated side to deny it ("pytest is not allowed here" / "we write our
    #: tests with pytest").
    denied_rest: int = _bound(3, 0, 1000)
    #: Words between an amount and a word another amount's text shares for the two to
    #: count the same thing (when neither context holds the other).
    shared_word_distance: int = _bound(8, 0, 1000)
    #: Clauses of a text compared one by one by the opposite rule.
    opposite_clauses: int = _bound(6, 1, 1000)
    #: Content words after a change of state read as what changed ("lost his job at
    #: the bank": job), up to the first preposition.
    state_object_words: int = _bound(4, 1, 100)
    #: Words two statements about one activity share, and words the two may say
    #: beside them (together), before two different names for it count as two answers
    #: ("we review code on GitLab" / "code review happens on GitHub": code, review; happen).
    name_shared: int = _bound(2, 0, 100)
    name_rest: int = _bound(1, 0, 100)
    #: The confidence each rule reports (the opposite rule's is scaled by the overlap).
    score_correction: float = _bound(0.9, 0.0, 1.0)
    score_attribute: float = _bound(0.85, 0.0, 1.0)
    score_number: float = _bound(0.8, 0.0, 1.0)
    score_opposite: float = _bound(0.75, 0.0, 1.0)
    score_value: float = _bound(0.6, 0.0, 1.0)
    score_state: float = _bound(0.65, 0.0, 1.0)
    score_name: float = _bound(0.55, 0.0, 1.0)
    score_status: float = _bound(0.6, 0.0, 1.0)


@frozen
class StorePolicy(_Section):
    """``[store]``: where episodic and long-term memory live (the code graph stays
    in the project's folder)."""

    section: ClassVar[str] = "store"
    #: Empty: the project's DuckDB file. A ``postgresql://`` URL: a team's database,
    #: shared by every process and machine given the same URL (a password is better
    #: given to libpq by ``PGPASSWORD`` or ``~/.pgpass`` than written here).
    url: str = dataclasses.field(default="", metadata={"empty_or": ("postgresql://", "postgres://")})
    #: Seconds a write waits for another process's write on a team's database
    #: before it fails with StoreLockedError.
    lock_seconds: float = _bound(30.0, 0.0, 3600.0, lo_open=True)
    #: Days the team's change log keeps an entry: a process that has not caught up
    #: for longer reads every row again.
    changes_days: float = _bound(7.0, 0.0, 3650.0, lo_open=True)
    #: Connections to the team's database a process keeps at most, shared by its
    #: stores and its users' views (psycopg's pool): each is taken for a statement,
    #: or for a transaction, and given back.
    pool_size: int = _bound(8, 1, 1000)


_SECTIONS: dict[str, type[_Section]] = {
    "graph": GraphPolicy,
    "episodic": EpisodicPolicy,
    "retrieval": RetrievalPolicy,
    "longterm": LongtermPolicy,
    "server": ServerPolicy,
    "hooks": HooksPolicy,
    "assembly": AssemblyPolicy,
    "lifecycle": LifecyclePolicy,
    "decisions": DecisionsPolicy,
    "knowledge": KnowledgePolicy,
    "chains": ChainsPolicy,
    "contradictions": ContradictionsPolicy,
    "store": StorePolicy,
}


@frozen
class Policy(Plain):
    """Everything tunable. ``context`` holds the relevance formula's constants; the
    sections ``graph``, ``episodic``, ``retrieval``, ``longterm``, ``server`` and ``hooks`` the rest.

    The default is the relevance formula tuned on real trajectories (code weighs 3.0,
    stale and repeated views are dropped); ``Policy.unweighted()`` is the reference
    policy (the formula's constants as first specified, views kept) and
    ``Policy.fifo()`` the oldest-first baseline."""

    max_tokens: int = 180_000
    encoding: str = "cl100k_base"
    context: ContextPolicy = dataclasses.field(default_factory=_default_context)
    #: When a file is edited, drop the code views of it shown before the edit.
    drop_stale_views: bool = True
    #: When a file's lines are shown again, drop older views those lines cover.
    supersede_views: bool = True
    graph: GraphPolicy = dataclasses.field(default_factory=GraphPolicy)
    episodic: EpisodicPolicy = dataclasses.field(default_factory=EpisodicPolicy)
    retrieval: RetrievalPolicy = dataclasses.field(default_factory=RetrievalPolicy)
    longterm: LongtermPolicy = dataclasses.field(default_factory=LongtermPolicy)
    server: ServerPolicy = dataclasses.field(default_factory=ServerPolicy)
    hooks: HooksPolicy = dataclasses.field(default_factory=HooksPolicy)
    assembly: AssemblyPolicy = dataclasses.field(default_factory=AssemblyPolicy)
    lifecycle: LifecyclePolicy = dataclasses.field(default_factory=LifecyclePolicy)
    decisions: DecisionsPolicy = dataclasses.field(default_factory=DecisionsPolicy)
    knowledge: KnowledgePolicy = dataclasses.field(default_factory=KnowledgePolicy)
    chains: ChainsPolicy = dataclasses.field(default_factory=ChainsPolicy)
    contradictions: ContradictionsPolicy = dataclasses.field(default_factory=ContradictionsPolicy)
    store: StorePolicy = dataclasses.field(default_factory=StorePolicy)

    def __post_init__(self) -> None:
        if (
            isinstance(self.max_tokens, bool)
            or not isinstance(self.max_tokens, int)
            or not 0 < self.max_tokens <= _INT_MAX
        ):
            raise PolicyError(f"max_tokens must be a positive integer below 2**63, got {self.max_tokens!r}")
        if not isinstance(self.encoding, str) or not self.encoding:
            raise PolicyError(f"encoding must be a non-empty string, got {self.encoding!r}")
        if not isinstance(self.context, ContextPolicy):
            raise PolicyError(f"context must be a ContextPolicy, got {type(self.context).__name__}")
        for flag in _FLAGS:
            if not isinstance(getattr(self, flag), bool):
                raise PolicyError(f"{flag} must be true or false, got {getattr(self, flag)!r}")
        for name, kind in _SECTIONS.items():
            if not isinstance(getattr(self, name), kind):
                raise PolicyError(f"{name} must be a {kind.__name__}, got {type(getattr(self, name)).__name__}")

    @property
    def code_tokens(self) -> int:
        """The token budget of relevant code per message in this policy's window."""
        return self.retrieval.code_tokens(self.max_tokens)

    @classmethod
    def unweighted(cls, **overrides: Any) -> Policy:
        """The unweighted reference policy: the relevance formula with its reference
        constants (:class:`ContextPolicy`'s defaults: code weighs 0.7), and code
        views kept when a file is edited or shown again."""
        return cls(**{"context": ContextPolicy(), "drop_stale_views": False, "supersede_views": False, **overrides})

    @classmethod
    def fifo(cls, **overrides: Any) -> Policy:
        """Drop the oldest non-sticky items first (a baseline): every weight and boost
        is 1 and decay is instant, so all items older than a minute score 0 and ties
        go oldest first."""
        weights = {name: 1.0 for name in ContextPolicy.fields if name.startswith("weight_")}
        context = ContextPolicy(decay_minutes=1e-9, current_task_boost=1.0, dependent_boost=0.0, **weights)
        return cls(**{"context": context, "drop_stale_views": False, "supersede_views": False, **overrides})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "policy") -> Policy:
        """Builds a policy from the TOML layout; unknown sections and keys, and values
        of the wrong type or range, are PolicyErrors naming ``source`` and the key."""
        known = ["context", *_SECTIONS]
        unknown = set(data) - set(known)
        if unknown:
            raise PolicyError(f"{source}: unknown section(s) {sorted(unknown)}; known: {known}")
        for name, value in data.items():
            if not isinstance(value, Mapping):
                raise PolicyError(f"{source}: [{name}] must be a table of keys, got {type(value).__name__} {value!r}")
        section = dict(data.get("context", {}))
        top: dict[str, Any] = {}
        for key in ("max_tokens", "encoding", *_FLAGS):
            if key in section:
                top[key] = section.pop(key)
        for key, value in section.items():
            if key not in ContextPolicy.fields:
                keys = ", ".join(["max_tokens", "encoding", *_FLAGS, *ContextPolicy.fields])
                raise PolicyError(f"{source}: unknown key context.{key}; known keys: {keys}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise PolicyError(f"{source}: context.{key} must be a finite number, got {value!r}")
        for name, kind in _SECTIONS.items():
            values = dict(data.get(name, {}))
            allowed = kind.keys()
            for key in values:
                if key not in allowed:
                    raise PolicyError(f"{source}: unknown key {name}.{key}; known keys: {', '.join(allowed)}")
            try:
                top[name] = kind(**values)
            except PolicyError as exc:
                raise PolicyError(f"{source}: {exc}") from None
        try:
            return cls(context=_default_context().replace(**section), **top)
        except (InvalidInputError, OverflowError) as exc:
            raise PolicyError(f"{source}: {exc}") from None

    @classmethod
    def from_toml(cls, path: str | Path) -> Policy:
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise PolicyError(f"{path}: no such config file") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise PolicyError(f"{path}: not valid TOML: {exc}") from None
        return cls.from_dict(data, source=str(path))

    @classmethod
    def load(cls, root: str | Path) -> Policy:
        """The project's policy: ``<root>/.aircher/config.toml`` if present, else defaults."""
        path = Path(root) / CONFIG_FILE
        return cls.from_toml(path) if path.is_file() else cls()

    def to_dict(self) -> dict[str, Any]:
        """The TOML layout; ``Policy.from_dict(p.to_dict()) == p``."""
        flags = {flag: getattr(self, flag) for flag in _FLAGS}
        out: dict[str, Any] = {
            "context": {"max_tokens": self.max_tokens, "encoding": self.encoding, **flags, **self.context.to_dict()}
        }
        for name in _SECTIONS:
            out[name] = getattr(self, name).to_dict()
        return out

    def to_toml(self) -> str:
        blocks = []
        for name, values in self.to_dict().items():
            lines = [f"[{name}]"] + [f"{key} = {json.dumps(value)}" for key, value in values.items()]
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks) + "\n"
