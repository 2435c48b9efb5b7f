from __future__ import annotations

import hashlib
import importlib.util
import socket
import threading
from pathlib import Path
from typing import Any

import aircher_mem as am
import pytest
from aircher_mem import tokens
from aircher_mem.engine import TokenCounter, available_encodings
from hypothesis import given, settings
from hypothesis import strategies as st


def tiktoken_count() -> Any:
    """tiktoken's own ``encode_ordinary`` of cl100k_base (from the shipped ranks, so no
    network), counted: what TokenCounter must agree with."""
    import binascii

    import tiktoken

    file_name, _sha, pattern = tokens._ENCODINGS["cl100k_base"]
    fields = Path(tokens._ranks_file(file_name)).read_bytes().split()
    ranks = dict(zip(map(binascii.a2b_base64, fields[::2]), map(int, fields[1::2]), strict=True))
    encoding = tiktoken.Encoding(name="cl100k_base", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    return lambda text: len(encoding.encode_ordinary(text))


@pytest.fixture(scope="module")
def reference() -> Any:
    return tiktoken_count()


# whitespace, newlines, digits, letters, contractions and symbols in the runs that
# pre-tokenizer patterns treat apart, and long runs (a piece merged with the heap)
_RUNS = st.sampled_from(
    [" ", "  ", "\n", "\r\n", "\t", " \n ", "'s", "'LL", "'re", "123", "1234567", "x", "ab", "é", "日本語", "!!", "==>"]
)
_MIXED = st.lists(st.one_of(_RUNS, st.text(max_size=8), st.characters()), max_size=60).map("".join)


@settings(max_examples=1500, deadline=None)
@given(text=st.one_of(_MIXED, st.text(max_size=300)))
def test_counts_are_tiktokens(reference: Any, text: str) -> None:
    counter = TokenCounter()
    assert counter.count(text) == reference(text)
    assert counter.count_many([text, text + " x"]) == [reference(text), reference(text + " x")]


@pytest.mark.parametrize(
    "text",
    [
        "a" * 5000,
        "ab" * 3000,
        "\n" * 700 + "x",
        " " * 900 + "y",
        "1" * 1000,
        "aGVsbG8gd29ybGQ" * 400,  # base64 without spaces: one long piece
        "é" * 2000,
        "\ud800lone \udfff surrogates \ud83d\ude00",
        "<|endoftext|> and <|fim_prefix|>",
    ],
)
def test_long_pieces_and_odd_text_count_as_tiktoken_counts_them(reference: Any, text: str) -> None:
    expected = reference(text)
    assert TokenCounter().count(text) == expected
    assert TokenCounter().count_many([text]) == [expected]


def test_source_files_count_as_tiktoken_counts_them(reference: Any) -> None:
    folder = Path(tokens.__file__).parent
    for path in sorted(folder.rglob("*.py")) + sorted(folder.rglob("*.pyi")):
        text = path.read_text(encoding="utf-8")
        assert TokenCounter().count(text) == reference(text), path


def test_counts_match_cl100k() -> None:
    counter = TokenCounter()
    assert counter.encoding == "cl100k_base"
    assert counter.count("hello world") == 2
    assert counter.count("") == 0
    assert counter.count("<|endoftext|>") > 1  # special-token text counts as plain text
    assert counter.count_many(["hello world", "def f(x):\n    return x\n"]) == [
        2,
        counter.count("def f(x):\n    return x\n"),
    ]
    assert available_encodings() == ["cl100k_base"]


def test_loading_needs_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    tokens._load_encoding.cache_clear()
    assert TokenCounter().count("offline") >= 1


def test_unknown_encoding_is_a_clear_error() -> None:
    with pytest.raises(am.EncodingUnavailableError, match=r"o200k_base.*available: cl100k_base"):
        TokenCounter("o200k_base")


def test_the_encoding_file_ships_in_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    path = Path(str(tokens._ranks_file("cl100k_base.tiktoken")))
    assert path.parent == Path(tokens.__file__).parent / "data" and path.is_file()
    # No other distribution provides it: loading works with tiktoken_ext hidden.
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> Any:
        return None if name.startswith("tiktoken_ext") else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    tokens._load_encoding.cache_clear()
    try:
        assert TokenCounter().count("hello world") == 2
    finally:
        tokens._load_encoding.cache_clear()


def test_tampered_encoding_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    file_name, sha, _pattern = tokens._ENCODINGS["cl100k_base"]
    original = Path(tokens._ranks_file(file_name))
    bad = tmp_path / "data" / "cl100k_base.tiktoken"
    bad.parent.mkdir()
    bad.write_bytes(original.read_bytes()[:-10])
    assert hashlib.sha256(bad.read_bytes()).hexdigest() != sha
    monkeypatch.setattr(tokens, "_ranks_file", lambda name: str(bad))
    tokens._load_encoding.cache_clear()
    try:
        with pytest.raises(am.EncodingUnavailableError, match="does not match the published"):
            TokenCounter()
        monkeypatch.setattr(tokens, "_ranks_file", lambda name: str(tmp_path / "missing"))
        with pytest.raises(am.EncodingUnavailableError, match="cannot read"):
            TokenCounter()
    finally:
        tokens._load_encoding.cache_clear()


def test_an_encoding_loaded_beside_other_work_counts_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tokens._load_encoding.cache_clear()
    try:
        tokens.prefetch("cl100k_base")
        tokens.prefetch("cl100k_base")  # once under way, not started again
        assert [t.name for t in threading.enumerate()].count("aircher-mem-encoding") <= 1
        assert TokenCounter().count("hello world") == 2
        assert "cl100k_base" not in tokens._PENDING
        tokens.prefetch("o200k_base")  # unknown: TokenCounter says so
        with pytest.raises(am.EncodingUnavailableError, match="o200k_base"):
            TokenCounter("o200k_base")
        # a load that fails on its thread fails again, with its error, where it is asked for
        tokens._load_encoding.cache_clear()
        monkeypatch.setattr(tokens, "_ranks_file", lambda name: str(tmp_path / "missing"))
        tokens.prefetch("cl100k_base")
        with pytest.raises(am.EncodingUnavailableError, match="cannot read"):
            TokenCounter()
    finally:
        tokens._load_encoding.cache_clear()


# lines as an assembled context has them, and the characters that could join across one
_PIECES = st.sampled_from(
    [
        "- ",
        "## Critical",
        "[memory 3]",
        " ",
        "  ",
        "\n",
        "\n\n",
        "\r\n",
        "\t",
        ".",
        ")",
        "'s",
        "é",
        "12345",
        "日本",
        "x",
    ]
)
_TEXTS = st.lists(st.one_of(_PIECES, st.text(max_size=12)), max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=_TEXTS)
def test_counting_by_lines_is_counting_the_whole(text: str) -> None:
    counter = TokenCounter()
    assert counter.count_lines(text) == counter.count(text)
    assert counter.count_lines(text) == counter.count(text)  # the lines now remembered


def test_counting_by_lines_splits_after_a_newline_that_a_non_space_follows() -> None:
    counter = TokenCounter()
    text = "## Critical\n- a.\n- b)\n\n## Relevant\n- c  \n \n- d"
    assert counter.count_lines(text) == counter.count(text)
    assert sum(counter.count(p) for p in tokens._LINE_START.split(text)) == counter.count(text)
    assert tokens._LINE_START.split(text) == [
        "## Critical\n",
        "- a.\n",
        "- b)\n\n",
        "## Relevant\n",
        "- c  \n \n",
        "- d",
    ]
