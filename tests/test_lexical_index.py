"""The lexical index, the tokenizer and the fusion of channels as Python sees them
(aircher_mem._core.LexicalIndex, tokenize, fuse): exact rankings and scores on hand-made
corpora, persistence, refusals, and properties on random corpora."""

from __future__ import annotations

import itertools
import math
import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from aircher_mem import _core
from aircher_mem._core import LexicalIndex, fuse, tokenize
from aircher_mem.errors import InvalidInputError, SchemaVersionError, StoreCorruptError
from hypothesis import given, settings
from hypothesis import strategies as st

# Every document's field has two tokens, so length normalization is 1 and a matched
# term adds exactly its idf: ln(1 + (N - df + 0.5) / (df + 0.5)).
CORPUS = [
    ("memory", "a", "s1", {"text": "alpha beta"}),
    ("memory", "b", "s1", {"text": "alpha zeta"}),
    ("turn", "c", "s2", {"text": "gamma zeta"}),
    ("turn", "d", "s2", {"text": "gamma delta"}),
    ("turn", "e", "s3", {"text": "alpha epsilon"}),
]


def idf(n: int, df: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def corpus_index() -> LexicalIndex:
    index = LexicalIndex()
    index.upsert(CORPUS)
    return index


def keys(hits: list[tuple[str, float, list[str]]]) -> list[str]:
    return [key for key, _, _ in hits]


def test_upsert_then_search_exact_order_scores_and_matched_terms() -> None:
    index = corpus_index()
    assert len(index) == 5
    assert index.keys() == ["a", "b", "c", "d", "e"]
    assert "b" in index and "z" not in index
    assert 3 not in index and None not in index and "\ud800" not in index
    hits = index.search("zeta alpha", 10)
    # b has both terms; zeta (df 2) is rarer than alpha (df 3), so c beats a and e,
    # which tie and go by key; d has neither.
    assert keys(hits) == ["b", "c", "a", "e"]
    zeta, alpha = idf(5, 2), idf(5, 3)
    assert [score for _, score, _ in hits] == pytest.approx([zeta + alpha, zeta, alpha, alpha], rel=1e-12)
    assert hits[2][1] == hits[3][1]
    assert [matched for _, _, matched in hits] == [["zeta", "alpha"], ["zeta"], ["alpha"], ["alpha"]]
    assert keys(index.search("zeta alpha", 2)) == ["b", "c"]
    assert index.search("zeta alpha", 0) == []
    assert index.search("unknown words", 10) == []
    assert index.search("", 10) == []
    assert LexicalIndex().search("alpha", 10) == []


def test_field_weights_zero_ignores_a_field() -> None:
    index = LexicalIndex()
    index.upsert(
        [
            ("memory", "t1", "g", {"title": "needle", "body": "hay"}),
            ("memory", "t2", "g", {"title": "hay", "body": "needle hay"}),
        ]
    )
    assert sorted(keys(index.search("needle", 10))) == ["t1", "t2"]
    assert keys(index.search("needle", 10, field_weights={"title": 0.0})) == ["t2"]
    assert keys(index.search("needle", 10, field_weights={"body": 0})) == ["t1"]
    assert index.search("needle", 10, field_weights={"title": 0.0, "body": 0.0}) == []
    # Matched terms count only fields of weight > 0: hay is in both documents.
    [(key, score, matched)] = index.search("hay", 10, field_weights={"body": 0.0})
    assert (key, matched) == ("t2", ["hay"]) and score == pytest.approx(idf(2, 2), rel=1e-12)
    # Any Mapping will do; a weight for a field no document has is ignored.
    proxy = MappingProxyType({"title": 0.0, "nothing": 5.0})
    assert keys(index.search("needle", 10, field_weights=proxy)) == ["t2"]


def test_kinds_filter() -> None:
    index = corpus_index()
    assert keys(index.search("zeta alpha", 10, kinds=["turn"])) == ["c", "e"]
    assert keys(index.search("zeta alpha", 10, kinds=["memory"])) == ["b", "a"]
    assert keys(index.search("zeta alpha", 10, kinds=("memory", "turn"))) == ["b", "c", "a", "e"]
    assert index.search("zeta alpha", 10, kinds=["nothing"]) == []
    # The statistics are the whole index's: the filter does not change the scores.
    assert index.search("zeta alpha", 10, kinds=["turn"])[0][1] == pytest.approx(idf(5, 2), rel=1e-12)


def test_upsert_replaces_the_same_key() -> None:
    index = corpus_index()
    index.upsert([("turn", "a", "s9", {"text": "omega"})])
    assert len(index) == 5
    assert "a" not in keys(index.search("alpha beta", 10))
    # "omega" is 1 token where the average is now 9 / 5: BM25 with k1 1.2, b 0.75.
    tf = 1 / (0.25 + 0.75 * 1 / 1.8)
    [(key, score, matched)] = index.search("omega", 10)
    assert (key, matched) == ("a", ["omega"]) and score == pytest.approx(idf(5, 1) * tf * 2.2 / (1.2 + tf), rel=1e-12)
    assert keys(index.search("omega", 10, kinds=["memory"])) == []
    # Within one batch, the last document of a key wins.
    index.upsert([("turn", "n", "g", {"text": "first"}), ("turn", "n", "g", {"text": "second"})])
    assert len(index) == 6
    assert keys(index.search("first", 10)) == []
    assert keys(index.search("second", 10)) == ["n"]
    assert index.remove_group("s9") == 1 and "a" not in index


def test_remove_and_remove_group_counts() -> None:
    index = corpus_index()
    assert index.remove(["a", "missing", "a"]) == 1
    assert index.remove([]) == 0
    assert len(index) == 4 and "a" not in index
    assert "a" not in keys(index.search("alpha beta", 10))
    assert index.remove_group("s2") == 2
    assert index.remove_group("s2") == 0
    assert index.remove_group("never") == 0
    assert index.keys() == ["b", "e"]
    assert keys(index.search("zeta alpha gamma delta beta", 10)) == ["b", "e"]
    # Statistics follow the removals exactly: N = 2, df(alpha) = 2, df(zeta) = 1.
    assert index.search("zeta", 10)[0][1] == pytest.approx(idf(2, 1), rel=1e-12)
    assert index.remove(["b", "e"]) == 2
    assert len(index) == 0 and index.keys() == [] and index.search("alpha", 10) == []


def test_save_load_round_trip(tmp_path: Path) -> None:
    index = corpus_index()
    index.remove(["d"])
    index.upsert([("memory", "f", "s4", {"text": "zeta zeta kappa", "title": "alpha"})])
    path = tmp_path / "lexical.bin"
    index.save(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    loaded = LexicalIndex.load(str(path))
    assert len(loaded) == len(index) and loaded.keys() == index.keys()
    for query in ["zeta alpha", "gamma", "kappa alpha beta", "epsilon zeta"]:
        options: list[dict[str, Any]] = [
            {},
            {"kinds": ["turn"]},
            {"field_weights": {"title": 2.0}, "k1": 0.5, "b": 0.3},
        ]
        for kwargs in options:
            assert loaded.search(query, 10, **kwargs) == index.search(query, 10, **kwargs)
    # Saving again overwrites; an empty index round-trips too.
    LexicalIndex().save(path)
    assert len(LexicalIndex.load(path)) == 0


def test_the_generation_saved_is_the_one_loaded(tmp_path: Path) -> None:
    path = tmp_path / "lexical.bin"
    index = corpus_index()
    assert index.generation == 0
    index.save(path)
    assert LexicalIndex.load(path).generation == 0
    index.save(path, generation=2**64 - 1)
    loaded = LexicalIndex.load(path)
    assert loaded.generation == 2**64 - 1 and loaded.keys() == index.keys()
    for bad in (-1, 2**64, 1.5, "7"):
        with pytest.raises(InvalidInputError):
            index.save(path, generation=bad)  # type: ignore[arg-type]
    assert LexicalIndex.load(path).generation == 2**64 - 1  # the file was not touched


@pytest.mark.parametrize("damage", ["truncate", "flip_payload", "flip_header", "empty", "garbage"])
def test_damaged_file_is_store_corrupt(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "lexical.bin"
    corpus_index().save(path)
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[: len(data) - 5]
    elif damage == "flip_payload":
        data[len(data) // 2 + 20] ^= 0xFF
    elif damage == "flip_header":
        data[13] ^= 0x01  # the generation: the checksum no longer matches
    elif damage == "empty":
        data = bytearray()
    else:
        data = bytearray(b"AIRLEXIC" + (5).to_bytes(4, "little") + bytes(100))  # the format, then noise
    path.write_bytes(bytes(data))
    with pytest.raises(StoreCorruptError):
        # A load checks the header and the table of sections, a search each block
        # it reads, a change (which reads the index into memory) every block.
        LexicalIndex.load(path).remove([])


@pytest.mark.parametrize("version", [1, 2, 3, 4, 6, 2**32 - 1])
def test_a_file_of_another_format_version_is_schema_version_error(tmp_path: Path, version: int) -> None:
    # Only the current format (5) is read: a file of an older or newer one is
    # refused as such (the caller rebuilds it), whatever its payload.
    path = tmp_path / "lexical.bin"
    corpus_index().save(path)
    data = bytearray(path.read_bytes())
    assert data[8:12] == (5).to_bytes(4, "little")
    data[8:12] = version.to_bytes(4, "little")
    path.write_bytes(bytes(data))
    with pytest.raises(SchemaVersionError) as raised:
        LexicalIndex.load(path)
    assert str(raised.value) == (
        f"{path} has lexical index format version {version}; this aircher-mem reads version 5: "
        "rebuild the lexical index"
    )


def test_a_file_written_in_place_after_the_load_is_store_corrupt(tmp_path: Path) -> None:
    # A loaded index keeps reading its posting lists from the mapped file: another
    # program's write in place is refused before any read, never a crash or wrong hits.
    path = tmp_path / "lexical.bin"
    corpus_index().save(path)
    loaded = LexicalIndex.load(path)
    expected = loaded.search("alpha", 10)
    corpus_index().save(path)  # a save renames a new file over the name: still readable
    assert loaded.search("alpha", 10) == expected
    loaded = LexicalIndex.load(path)
    data = path.read_bytes()
    with open(path, "r+b") as f:  # the same bytes, in place
        f.write(data)
    os.utime(path, ns=(10**18, 10**18))  # the clock's tick may not have moved
    for call in (
        lambda: loaded.search("alpha", 10),
        lambda: loaded.remove(["a"]),
        lambda: loaded.remove_group("s1"),
        lambda: loaded.upsert([("memory", "z", "s9", {"text": "alpha"})]),
        lambda: loaded.save(tmp_path / "copy.bin"),
    ):
        with pytest.raises(StoreCorruptError, match="written in place"):
            call()
    assert len(loaded) == len(corpus_index()) and not (tmp_path / "copy.bin").exists()
    assert LexicalIndex.load(path).search("alpha", 10) == expected  # loaded again: fine


def test_missing_file_and_bad_paths(tmp_path: Path) -> None:
    from aircher_mem.errors import AircherError, FileMissingError

    with pytest.raises(FileMissingError):
        LexicalIndex.load(tmp_path / "absent.bin")
    with pytest.raises(InvalidInputError):
        LexicalIndex.load(42)  # type: ignore[arg-type]
    with pytest.raises(AircherError):
        corpus_index().save(tmp_path / "nul\0name")


BAD_CALLS: list[tuple[str, Any]] = [
    ("surrogate query", lambda i: i.search("\ud800", 10)),
    ("surrogate kind", lambda i: i.search("alpha", 10, kinds=["\udc80"])),
    ("kinds as a str", lambda i: i.search("alpha", 10, kinds="turn")),
    ("negative limit", lambda i: i.search("alpha", -1)),
    ("float limit", lambda i: i.search("alpha", 1.5)),
    ("k1 < 0", lambda i: i.search("alpha", 10, k1=-1)),
    ("k1 nan", lambda i: i.search("alpha", 10, k1=math.nan)),
    ("k1 inf", lambda i: i.search("alpha", 10, k1=math.inf)),
    ("b > 1", lambda i: i.search("alpha", 10, b=2)),
    ("b < 0", lambda i: i.search("alpha", 10, b=-0.1)),
    ("b as a str", lambda i: i.search("alpha", 10, b="0.5")),
    ("nan weight", lambda i: i.search("alpha", 10, field_weights={"text": math.nan})),
    ("negative weight", lambda i: i.search("alpha", 10, field_weights={"text": -1.0})),
    ("weights not a mapping", lambda i: i.search("alpha", 10, field_weights=[("text", 1.0)])),
    ("weight not a number", lambda i: i.search("alpha", 10, field_weights={"text": "1"})),
    ("surrogate field weight name", lambda i: i.search("alpha", 10, field_weights={"\ud800": 1.0})),
    ("upsert a non-sequence", lambda i: i.upsert(5)),
    ("upsert a str", lambda i: i.upsert("abc")),
    ("upsert a dict", lambda i: i.upsert({"k": "v"})),
    ("document too short", lambda i: i.upsert([("memory", "k", "g")])),
    ("document a list", lambda i: i.upsert([["memory", "k", "g", {"text": "x"}]])),
    ("fields not a mapping", lambda i: i.upsert([("memory", "k", "g", [("text", "x")])])),
    ("field text not a str", lambda i: i.upsert([("memory", "k", "g", {"text": 3})])),
    ("surrogate key", lambda i: i.upsert([("memory", "k\ud800", "g", {"text": "x"})])),
    ("surrogate text", lambda i: i.upsert([("memory", "k", "g", {"text": "x \udfff"})])),
    ("surrogate field name", lambda i: i.upsert([("memory", "k", "g", {"t\ud800": "x"})])),
    ("remove a str", lambda i: i.remove("a")),
    ("remove surrogate", lambda i: i.remove(["\ud800"])),
    ("remove_group not a str", lambda i: i.remove_group(3)),
]


@pytest.mark.parametrize("call", [c for _, c in BAD_CALLS], ids=[name for name, _ in BAD_CALLS])
def test_bad_inputs_raise_invalid_input(call: Any) -> None:
    index = corpus_index()
    before = [index.search(q, 10) for q in ["zeta alpha", "gamma delta beta"]]
    with pytest.raises(InvalidInputError):
        call(index)
    assert len(index) == 5
    assert [index.search(q, 10) for q in ["zeta alpha", "gamma delta beta"]] == before


class TwiceTheField(Mapping[str, str]):
    """A Mapping whose items() lists a name twice (a dict cannot)."""

    def __getitem__(self, name: str) -> str:
        return {"text": "x"}[name]

    def __iter__(self) -> Iterator[str]:
        return iter(["text"])

    def __len__(self) -> int:
        return 1

    def items(self) -> Any:
        return [("text", "x"), ("text", "y")]


def test_upsert_is_all_or_nothing() -> None:
    index = corpus_index()
    before = index.search("zeta alpha", 10)
    good = ("memory", "new", "g", {"text": "alpha"})
    with pytest.raises(InvalidInputError, match='field "text" appears twice in document "bad"'):
        index.upsert([good, ("memory", "bad", "g", TwiceTheField())])
    assert "new" not in index and len(index) == 5
    with pytest.raises(InvalidInputError, match="field names"):
        index.upsert([good, ("memory", "wide", "g", {f"f{i:02}": "word" for i in range(32)})])
    assert "new" not in index and len(index) == 5
    # A bad value anywhere in the batch: nothing is converted, nothing indexed.
    with pytest.raises(InvalidInputError):
        index.upsert([good, ("memory", "bad", "g", {"text": "\ud800"})])
    assert "new" not in index and index.search("zeta alpha", 10) == before
    # 31 names more than "text" is the limit: 32 in all.
    index.upsert(
        [
            good,
            ("memory", "proxy", "g", MappingProxyType({"text": "x"})),
            ("memory", "wide", "g", {f"f{i:02}": "word" for i in range(31)}),
        ]
    )
    assert len(index) == 8
    with pytest.raises(InvalidInputError, match="at most 32"):
        index.upsert([("memory", "x", "g", {"one_more": "word"})])
    # Once no document uses a name any more, its place is free again.
    assert index.remove(["wide"]) == 1
    index.upsert([("memory", "x", "g", {"one_more": "word"})])
    assert keys(index.search("word", 10)) == ["x"]


def test_nul_and_unicode_text_are_indexed() -> None:
    index = LexicalIndex()
    index.upsert([("memory", "k\0ey", "gr\0up", {"te\0xt": "größe_wert\0naïve"})])
    assert "k\0ey" in index and index.keys() == ["k\0ey"]
    assert [(k, m) for k, _, m in index.search("naïve größe", 5)] == [("k\0ey", ["naïve", "größe"])]
    assert index.remove_group("gr\0up") == 1


def test_tokenize() -> None:
    assert tokenize("parseHTTPResponse snake_case") == [
        "parsehttpresponse",
        "parse",
        "http",
        "response",
        "snake_case",
        "snake",
        "case",
    ]
    assert tokenize("How does the parser handle it when self is None?") == ["parser", "handle"]
    assert tokenize("getX2Value") == ["getx2value", "get", "value"]
    assert tokenize("") == []
    assert tokenize("a" * 65) == []
    with pytest.raises(InvalidInputError):
        tokenize("\ud800")
    with pytest.raises(InvalidInputError):
        tokenize(b"bytes")  # type: ignore[arg-type]


def test_fuse_minmax_exact() -> None:
    fused = fuse([("a", 1.0, [("x", 1.0), ("y", 3.0)]), ("b", 0.5, [("y", 2.0)])])
    # a: x -> 0, y -> 1; b returned y alone -> 1.0. y = 1 x 1 + 0.5 x 1, x = 0.
    assert fused == [
        ("y", 1.5, [("a", 3.0, 1.0, 1.0), ("b", 2.0, 1.0, 0.5)]),
        ("x", 0.0, [("a", 1.0, 0.0, 1.0)]),
    ]
    assert fuse([("a", 1.0, [("x", 1.0), ("y", 3.0)]), ("b", 0.5, [("y", 2.0)])], "minmax") == fused
    # Three values: (s - min) / (max - min); equal fused scores go by key.
    fused = fuse([("lex", 1, [("p", 3), ("q", 1), ("r", 2)]), ("vec", 0.5, [("s", 10), ("r", 10)])])
    assert [(k, s) for k, s, _ in fused] == [("p", 1.0), ("r", 1.0), ("s", 0.5), ("q", 0.0)]
    assert fused[1][2] == [("lex", 2.0, 0.5, 1.0), ("vec", 10.0, 1.0, 0.5)]


def test_fuse_zscore_exact() -> None:
    fused = fuse([("a", 1.0, [("x", 1.0), ("y", 3.0)]), ("b", 0.5, [("y", 2.0)])], "zscore")
    # a: mean 2, std 1, (s - min) / std: y 2, x 0; b alone: 1.0. y = 2 + 0.5 x 1.
    assert fused == [
        ("y", 2.5, [("a", 3.0, 2.0, 1.0), ("b", 2.0, 1.0, 0.5)]),
        ("x", 0.0, [("a", 1.0, 0.0, 1.0)]),
    ]
    fused = fuse([("lex", 2.0, [("a", 3.0), ("b", 1.0), ("c", 2.0)])], "zscore")
    # mean 2, std sqrt(2/3): a (3 - 1) / std = sqrt(6), c sqrt(6) / 2, b 0; weight 2.
    six = math.sqrt(6)
    assert [k for k, _, _ in fused] == ["a", "c", "b"]
    assert [s for _, s, _ in fused] == pytest.approx([2 * six, six, 0.0], rel=1e-12)
    assert [c[0][2] for _, _, c in fused] == pytest.approx([six, six / 2, 0.0], rel=1e-12)


def test_fuse_edge_cases() -> None:
    assert fuse([]) == []
    assert fuse([("a", 1.0, [])]) == []
    # Duplicates count once with the best score; non-finite scores are skipped; a
    # non-finite weight counts as 0 but still explains.
    fused = fuse([("a", 1.0, [("x", 1.0), ("x", 5.0), ("y", math.nan), ("z", 3.0)]), ("b", math.inf, [("z", 1.0)])])
    assert fused == [("x", 1.0, [("a", 5.0, 1.0, 1.0)]), ("z", 0.0, [("a", 3.0, 0.0, 1.0), ("b", 1.0, 1.0, 0.0)])]


@pytest.mark.parametrize(
    "args",
    [
        ([("a", 1.0, [("x", 1.0)])], "softmax"),
        ([("a", 1.0, [("x", 1.0)])], "MinMax"),
        ([("a", 1.0, [("x", 1.0)])], 3),
        (5, "minmax"),
        ("abc", "minmax"),
        ([("a", 1.0)], "minmax"),
        ([("a", "1", [("x", 1.0)])], "minmax"),
        ([("a", 1.0, [("x", "1")])], "minmax"),
        ([("a", 1.0, [("\ud800", 1.0)])], "minmax"),
        ([("\ud800", 1.0, [("x", 1.0)])], "minmax"),
        ([("a", 1.0, "xy")], "minmax"),
    ],
)
def test_fuse_bad_inputs(args: tuple[Any, Any]) -> None:
    with pytest.raises(InvalidInputError):
        fuse(*args)


def test_exported_documented_and_final() -> None:
    for name in ["LexicalIndex", "tokenize", "fuse"]:
        assert getattr(_core, name).__doc__
    assert getattr(LexicalIndex.search, "__text_signature__", None) == (
        "($self, query, limit, *, kinds=(), field_weights=None, k1=1.2, b=0.75)"
    )
    with pytest.raises(TypeError):
        type("Sub", (LexicalIndex,), {})


# Words the tokenizer keeps whole (checked below), so a corpus is easy to reason about.
WORDS = ["alpha", "beta", "gamma", "delta", "zeta", "omega", "kappa", "sigma"]
DOCS = st.lists(
    st.tuples(
        st.sampled_from(["memory", "turn"]),
        st.sampled_from([f"k{i}" for i in range(8)]),
        st.sampled_from(["g1", "g2", "g3"]),
        st.dictionaries(
            st.sampled_from(["text", "title"]),
            st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join),
            max_size=2,
        ),
    ),
    max_size=12,
)


def test_words_are_single_tokens() -> None:
    for word in WORDS:
        assert tokenize(word) == [word]


def check_sorted(hits: list[tuple[str, float, list[str]]]) -> None:
    for (k1, s1, _), (k2, s2, _) in itertools.pairwise(hits):
        assert s1 > s2 or (s1 == s2 and k1 < k2), hits


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    docs=DOCS,
    removed=st.sampled_from([f"k{i}" for i in range(8)]),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
    limit=st.integers(min_value=1, max_value=10),
)
def test_removed_keys_never_return_and_results_are_sorted(
    docs: list[tuple[str, str, str, dict[str, str]]], removed: str, query: str, limit: int
) -> None:
    index = LexicalIndex()
    index.upsert(docs)
    live = {key: (kind, key, group, fields) for kind, key, group, fields in docs}
    assert index.keys() == sorted(live)
    hits = index.search(query, limit)
    check_sorted(hits)
    assert len(hits) <= limit
    assert index.remove([removed]) == (1 if removed in live else 0)
    live.pop(removed, None)
    assert removed not in index and index.keys() == sorted(live)
    options: list[dict[str, Any]] = [{}, {"kinds": ["turn"]}, {"field_weights": {"title": 0.0}}]
    for kwargs in options:
        hits = index.search(query, limit, **kwargs)
        assert removed not in keys(hits)
        check_sorted(hits)
        # The statistics follow removals exactly: the same as an index that never had it.
        fresh = LexicalIndex()
        fresh.upsert(list(live.values()))
        assert hits == fresh.search(query, limit, **kwargs)


# Stemming (Snowball English, for prose): tokenize(text, stem=True) and LexicalIndex(stem=True).

PROSE = [
    ("turn", "t1", "s1", {"text": "The parties were running late"}),
    ("memory", "m1", "s1", {"text": "a party at the meeting"}),
    ("turn", "t2", "s2", {"text": "she runs every morning"}),
]


def test_tokenize_stem() -> None:
    assert tokenize("The parties were running late", stem=True) == ["parti", "run", "late"]
    assert tokenize("The parties were running late") == ["parties", "running", "late"]
    assert tokenize("The parties were running late", stem=False) == ["parties", "running", "late"]
    assert tokenize("meetings", stem=True) == tokenize("meeting", stem=True) == ["meet"]
    assert tokenize("ran runs", stem=True) == ["ran", "run"]
    # Identifiers are stemmed whole and part by part; a stem that is a stop word goes.
    assert tokenize("parseHTTPResponse", stem=True) == ["parsehttprespons", "pars", "http", "respons"]
    assert tokenize("others", stem=True) == []
    with pytest.raises(TypeError):
        tokenize("parties", True)  # type: ignore[call-arg]
    with pytest.raises(InvalidInputError):
        tokenize("parties", stem="yes")  # type: ignore[arg-type]


def test_stemming_is_off_by_default_and_read_only() -> None:
    assert LexicalIndex().stem is False
    assert LexicalIndex(stem=False).stem is False
    assert LexicalIndex(stem=True).stem is True
    with pytest.raises(AttributeError):
        LexicalIndex().stem = True  # type: ignore[misc]
    with pytest.raises(TypeError):
        LexicalIndex(True)  # type: ignore[call-arg]
    with pytest.raises(InvalidInputError):
        LexicalIndex(stem=1)  # type: ignore[arg-type]


def test_stemming_index_finds_other_forms() -> None:
    plain, stemming = LexicalIndex(), LexicalIndex(stem=True)
    plain.upsert(PROSE)
    stemming.upsert(PROSE)

    def found(index: LexicalIndex, query: str) -> list[tuple[str, list[str]]]:
        return sorted((key, matched) for key, _, matched in index.search(query, 10))

    assert found(plain, "parties") == [("t1", ["parties"])]
    assert found(plain, "party") == [("m1", ["party"])]
    assert found(plain, "run meetings") == []
    # Matched terms are stems.
    assert found(stemming, "parties") == [("m1", ["parti"]), ("t1", ["parti"])]
    assert found(stemming, "party") == found(stemming, "parties")
    assert found(stemming, "run meetings") == [("m1", ["meet"]), ("t1", ["run"]), ("t2", ["run"])]
    assert found(stemming, "ran") == []
    # Changes keep stemming.
    assert stemming.remove(["m1"]) == 1
    stemming.upsert([("memory", "m2", "s3", {"text": "Partying hard"})])
    assert found(stemming, "party") == [("m2", ["parti"]), ("t1", ["parti"])]


def test_save_load_keeps_the_stemming_flag(tmp_path: Path) -> None:
    path = tmp_path / "lexical.bin"
    for stem in [False, True]:
        index = LexicalIndex(stem=stem)
        index.upsert(PROSE)
        index.save(path)
        loaded = LexicalIndex.load(path)
        assert loaded.stem is stem
        for query in ["party", "parties meetings", "running late", "ran"]:
            assert loaded.search(query, 10) == index.search(query, 10)
        assert len(loaded.search("party", 10)) == (2 if stem else 1)
        # Documents upserted after loading are stemmed as the query is.
        loaded.upsert([("memory", "m9", "s9", {"text": "parties"})])
        assert ("m9" in keys(loaded.search("party", 10))) is stem


# English forms that share stems, none with `_` (so a stem is one token again).
FORMS = ["party", "parties", "running", "runs", "run", "meeting", "meetings", "walked", "walks", "happily", "cats"]


@settings(max_examples=100, deadline=None)
@given(
    docs=st.lists(
        st.tuples(
            st.sampled_from(["memory", "turn"]),
            st.sampled_from([f"k{i}" for i in range(6)]),
            st.sampled_from(["g1", "g2"]),
            st.dictionaries(
                st.sampled_from(["text", "title"]),
                st.lists(st.sampled_from(FORMS), max_size=6).map(" ".join),
                max_size=2,
            ),
        ),
        max_size=10,
    ),
    query=st.lists(st.sampled_from(FORMS), min_size=1, max_size=4).map(" ".join),
)
def test_a_stemming_index_is_a_plain_index_of_stems(
    docs: list[tuple[str, str, str, dict[str, str]]], query: str
) -> None:
    stemming = LexicalIndex(stem=True)
    stemming.upsert(docs)
    plain = LexicalIndex()
    plain.upsert(
        [
            (kind, key, group, {name: " ".join(tokenize(text, stem=True)) for name, text in fields.items()})
            for kind, key, group, fields in docs
        ]
    )
    stems = " ".join(tokenize(query, stem=True))
    assert stemming.search(query, 10) == plain.search(stems, 10)
