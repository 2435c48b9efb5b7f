"""Token counting, entirely offline, exactly as tiktoken counts.

The ``cl100k_base`` ranks ship inside this package (``aircher_mem/data/cl100k_base.tiktoken``,
read as a file), and before use the file's SHA-256 is checked
against the hash tiktoken itself publishes for that encoding, so a tampered or truncated
file is refused. The counting is the Rust core's (:class:`aircher_mem._core.TokenEncoding`):
the count of tiktoken's ``encode_ordinary`` (a test holds them equal), from an encoding
that loads in milliseconds where tiktoken's takes a tenth of a second.
"""

from __future__ import annotations

import functools
import re
import threading

from ._core import TokenEncoding, sha256_hex
from .errors import AircherError, EncodingUnavailableError
from .root import shipped

__all__ = ["TokenCounter", "available_encodings", "prefetch"]

# name -> (file name in aircher_mem/data, sha256 from tiktoken_ext.openai_public,
#          the regex of that encoding, also from tiktoken_ext.openai_public)
_CL100K_PATTERN = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""  # noqa: E501 (the pattern is copied verbatim)
_ENCODINGS = {
    "cl100k_base": (
        "cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _CL100K_PATTERN,
    ),
}


# After a newline that a non-space follows: no token of an encoding above spans it (its
# pieces end at a newline, or are whitespace that a non-space cannot follow), so a
# text's tokens are its lines' tokens.
_LINE_START = re.compile(r"(?<=\n)(?=\S)")


def available_encodings() -> list[str]:
    """Encodings that load without the network."""
    return sorted(_ENCODINGS)


def _ranks_file(file_name: str) -> str:
    """The encoding file shipped in this package's ``data`` folder."""
    return shipped(file_name)


@functools.cache
def _load_encoding(name: str) -> TokenEncoding:
    if name not in _ENCODINGS:
        raise EncodingUnavailableError(
            f"encoding {name!r} is not available offline; available: {', '.join(available_encodings())}"
        )
    file_name, sha256, pattern = _ENCODINGS[name]
    path = _ranks_file(file_name)
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as exc:
        raise EncodingUnavailableError(f"cannot read the {name} encoding file {path}: {exc}") from None
    actual = sha256_hex(data)
    if actual != sha256:
        raise EncodingUnavailableError(
            f"{path} does not match the published {name} hash (sha256 {actual}, expected {sha256}); "
            "reinstall aircher-mem"
        )
    try:
        return TokenEncoding(data, pattern)
    except AircherError as exc:  # the hash matched: this build cannot read the file
        raise EncodingUnavailableError(f"cannot load the {name} encoding: {exc}") from None


#: Encodings loading on a thread of their own (:func:`prefetch`), by name.
_PENDING: dict[str, threading.Thread] = {}


def prefetch(encoding: str) -> None:
    """Starts loading ``encoding`` on a thread of its own, for a caller about to do
    other work before it counts tokens: the load (its SHA-256 checked, then its ranks
    read: about 7 ms, in Rust, without the GIL) runs beside that work, and
    :class:`TokenCounter` then waits for it. An unknown encoding, or a load that
    fails, is left to :class:`TokenCounter` to report."""
    if encoding not in _ENCODINGS or encoding in _PENDING:
        return
    thread = threading.Thread(target=_load_quietly, args=(encoding,), name="aircher-mem-encoding", daemon=True)
    _PENDING[encoding] = thread
    thread.start()


def _load_quietly(encoding: str) -> None:
    try:
        _load_encoding(encoding)
    except AircherError:
        pass  # raised again where the encoding is asked for


def _without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, as tiktoken encodes it."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class TokenCounter:
    """Counts tokens of text with one encoding. Special-token text such as
    ``<|endoftext|>`` in user content is counted as ordinary text, never rejected;
    a lone surrogate counts as U+FFFD, as tiktoken counts it."""

    def __init__(self, encoding: str = "cl100k_base") -> None:
        pending = _PENDING.pop(encoding, None)
        if pending is not None:
            pending.join()
        self._encoding = _load_encoding(encoding)
        self._name = encoding
        self._kept: dict[str, int] = {}

    @property
    def encoding(self) -> str:
        return self._name

    def count(self, text: str) -> int:
        try:
            return self._encoding.count(text)
        except UnicodeEncodeError:
            return self._encoding.count(_without_surrogates(text))

    def count_kept(self, text: str) -> int:
        """:meth:`count`, remembered for the texts counted again and again (a
        memory's line in every assembled context): the last 65,536 texts."""
        known = self._kept.get(text)
        if known is None:
            if len(self._kept) >= 65_536:
                self._kept.clear()
            known = self._kept[text] = self.count(text)
        return known

    def count_lines(self, text: str) -> int:
        """:meth:`count` of ``text`` as the sum of its lines' (each line with the
        blank lines after it), each remembered as :meth:`count_kept` does: the same
        number, cheap for a text whose lines were counted before (an assembled
        context, rendered again after a line was dropped)."""
        return sum(self.count_kept(line) for line in _LINE_START.split(text))

    def count_many(self, texts: list[str]) -> list[int]:
        """Counts a batch in parallel threads (the GIL released)."""
        try:
            return self._encoding.count_many(texts)
        except UnicodeEncodeError:
            return self._encoding.count_many([_without_surrogates(t) for t in texts])
