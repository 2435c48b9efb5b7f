"""Deterministic, offline, extractive compression of facts, turns and episodes.

Four levels of one text, after the design notes' "Compression Strategies":
full (the text itself), summary (:func:`key_point`, :func:`summarize`), compressed
(:func:`compress`) and index (:func:`index_form`); :func:`levels` gives the last three.
An episode's warm contents (summary, key points, entities, decisions, open questions)
and cold contents (:func:`headline`, :func:`tags`) come from the same parts.

Everything here is extractive: sentences and words of the input, never new ones, so
"The team decided to use PostgreSQL as the primary database because of its strong
support for JSON operations and the team's existing expertise with it." compresses to
"team decided use PostgreSQL primary database strong support JSON operations existing
expertise" and indexes as "postgresql_json_team", not to an abstraction like
"db:postgres(json,exp)", which takes an LLM. An optional LLM summarizer can be asked
with :func:`ask_summarizer` and the two archivist prompts.

Words: a surface word is a run of letters and digits, with inner ``.``, ``'``, ``-``,
``/`` or ``:`` ("v3.5", "foo.py", "2024-05-01", "3:30"); a possessive "'s" is dropped.
A word is a stop word when the project's tokenizer (``aircher_mem._core.tokenize``)
keeps nothing of it and it holds no digit. An entity is a word with a digit, a code
identifier (``snake_case``, CamelCase, ``foo.py``, any word in backticks), an acronym
("JSON"), or a capitalized word not at the start of its sentence (at the start only
when the same word is capitalized elsewhere not at a start). A sentence is small talk
when all its words are stop words or fillers ("Wow!", "Thanks!", "That's great!").

The analysis runs in Rust (``aircher_mem._core.ProseAnalysis``), without the GIL.
Every function is pure, deterministic and never raises on a ``str``: lone surrogates
and control characters read as spaces, and only the first :data:`MAX_CHARS` characters
are examined (of all texts together, at most :data:`MAX_TEXTS` of them), and sentence
centrality compares at most :data:`MAX_SENTENCES` sentences.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .._core import ProseAnalysis, prose_content_words, prose_digests, prose_levels, prose_sentences
from ..pattern import lazy
from ..plain import Plain
from .extract import _describe, call_within

__all__ = [
    "MAX_CHARS",
    "MAX_TEXTS",
    "MAX_SENTENCES",
    "sentences",
    "content_words",
    "entities",
    "decisions",
    "questions",
    "summarize",
    "key_point",
    "compress",
    "index_form",
    "headline",
    "tags",
    "Levels",
    "Digest",
    "digest",
    "digests",
    "levels",
    "levels_of_many",
    "HOT_TO_WARM_PROMPT",
    "WARM_TO_COLD_PROMPT",
    "ask_summarizer",
]

MAX_CHARS = 20_000
"""Characters examined, of one text or of all texts of a call together; the rest is ignored."""
MAX_TEXTS = 10_000
"""Texts examined per call; later ones are ignored."""
MAX_SENTENCES: int = ProseAnalysis.MAX_SENTENCES
"""Sentences ranked by centrality (the first ones); later sentences are not candidates."""
KEY_POINT_SENTENCES: int = ProseAnalysis.KEY_POINT_SENTENCES
"""Sentences a key point keeps at most."""
HEADLINE_CHARS: int = ProseAnalysis.HEADLINE_CHARS
"""A headline's length at most, "..." included."""

log = logging.getLogger("aircher_mem.longterm")

# ---------------------------------------------------------------------------
# the forms, made by the Rust engine (``aircher_mem._core.ProseAnalysis``)

_UNSAFE = lazy(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def _clean(text: str) -> str:
    return _UNSAFE.sub(" ", text)


def _texts(texts: Sequence[str]) -> list[str]:
    """The examined part of ``texts``, cleaned: at most MAX_TEXTS texts and MAX_CHARS
    characters in all."""
    out: list[str] = []
    budget = MAX_CHARS
    for text in [texts] if isinstance(texts, str) else texts[:MAX_TEXTS]:
        if budget <= 0:
            break
        if not isinstance(text, str):
            continue
        part = text[:budget]
        budget -= len(part)
        out.append(_clean(part))
    return out


def _analysis(texts: Sequence[str]) -> ProseAnalysis:
    return ProseAnalysis(_texts(texts))


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (its first MAX_CHARS characters), whitespace collapsed:
    split after ".", "!", "?", "…" followed by a space, after "。！？", and at line
    breaks; not after an abbreviation ("e.g.", "vs.", "Dr.") or an initial ("J."), nor
    inside a number ("3.5"). Pieces without a letter or digit are left out."""
    return prose_sentences(_texts([text])[0]) if isinstance(text, str) else []


def content_words(text: str) -> list[str]:
    """The words of ``text`` (its first MAX_CHARS characters) that are not stop words,
    lowercased, in order, repeats kept: ``"The team's DB is v3.5"`` ->
    ``["team", "db", "v3.5"]``."""
    return prose_content_words(_texts([text])[0]) if isinstance(text, str) else []


def summarize(texts: Sequence[str], *, sentences: int = 3) -> str:
    """An extractive summary of ``texts``: the ``sentences`` most central sentences,
    in their original order, leading discourse words ("Well,", "Oh,", "So,") dropped,
    joined by spaces (a "." added to a sentence without end punctuation when there are
    several). Small talk is never chosen; "" when there is nothing else. Centrality is
    the sum of a sentence's cosine similarities (over stemmed content-word counts) to
    the other sentences, plus bonuses for entities, numbers and decisions; the first
    MAX_SENTENCES sentences compete, ties go to the earlier one."""
    return _analysis(texts).summary(max(sentences, 0))


def key_point(text: str) -> str:
    """Level 1 of one turn or fact: its KEY_POINT_SENTENCES most central sentences
    (see :func:`summarize`) without small talk or leading discourse words, never longer
    than ``text``; a one-sentence text gives that sentence so trimmed; "" for small talk
    only."""
    if not isinstance(text, str):
        return ""
    return _analysis([text]).key_point(len(text))


def compress(text: str, *, max_words: int = 16, fillers: bool = False) -> str:
    """Level 2: the key words of ``text`` in order, space-separated: entities, numbers
    and dates as written, negations kept, other content words lowercased; stop words,
    fillers (kept with ``fillers``: "like", "love" may be what a question asks
    about), small talk and repeats dropped. Over ``max_words``, common words go
    first (the least frequent, then the latest), then the latest entities."""
    if not isinstance(text, str) or max_words <= 0:
        return ""
    return _analysis([text]).compressed(max_words, bool(fillers))


def index_form(text: str, *, words: int = 3) -> str:
    """Level 3: at most ``words`` key terms of ``text`` (entities first, then the most
    frequent content words, then short words and numbers), lowercased and joined by "_":
    "postgresql_json_team"."""
    if not isinstance(text, str) or words <= 0:
        return ""
    return "_".join(_analysis([text]).terms()[:words])


def headline(texts: Sequence[str], *, max_words: int = 20) -> str:
    """One sentence saying what ``texts`` were about: the most central sentence (see
    :func:`summarize`), cut to ``max_words`` words and HEADLINE_CHARS characters at a
    word boundary, with "..." when cut; "" for small talk only."""
    return _analysis(texts).headline(max(max_words, 0))


def tags(texts: Sequence[str], n: int = 5) -> list[str]:
    """At most ``n`` search tags of ``texts``, lowercased and distinct: up to ``n - 2``
    entities (not pure numbers; most frequent first), then the most frequent content
    words, then more entities and numbers if there is room (ties: first seen)."""
    return _analysis(texts).tags(max(n, 0))


def entities(texts: Sequence[str]) -> list[str]:
    """The entities of ``texts`` as first written, in order of first appearance,
    distinct ignoring case: capitalized names (not at a sentence's start unless
    capitalized elsewhere), acronyms, words with digits (numbers, dates, versions) and
    code (``snake_case``, CamelCase, ``foo.py``, words in backticks)."""
    return _analysis(texts).entities()


def decisions(texts: Sequence[str]) -> list[str]:
    """The sentences of ``texts`` that state a decision ("decided", "we'll use", "going
    with", "chose", "let's", "switched to", "will use", "agreed", "settled on", "opted
    for", ...), not questions, leading discourse words dropped, distinct, in order."""
    return _analysis(texts).decisions()


def questions(texts: Sequence[str]) -> list[str]:
    """The open questions of ``texts``, in order, distinct, leading discourse words
    dropped. A question is a sentence ending in "?" with a content word; it is open when
    it is in the last text examined or no later text shares a content word (stemmed)
    with it. A later text that only shares a word counts as an answer: the rule is
    cheap, not exact."""
    return _analysis(texts).questions()


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Levels(Plain):
    """The compressed levels of a fact or memory; level 0 is the text itself."""

    summary: str
    """Level 1: :func:`summarize` of the text (its key point when it is one sentence)."""
    compressed: str
    """Level 2: :func:`compress` of the text."""
    index: str
    """Level 3: :func:`index_form` of the text."""


def levels(text: str, *, sentences: int = 3) -> Levels:
    """Levels 1-3 of ``text``: its ``sentences``-sentence summary, compressed form and
    index form, with the defaults of :func:`compress` and :func:`index_form`."""
    return levels_of_many([text], sentences=sentences)[0]


def levels_of_many(texts: Sequence[str], *, sentences: int = 3) -> list[Levels]:
    """:func:`levels` of each of ``texts``, in order, made on every core."""
    cleaned = [_texts([text])[0] if isinstance(text, str) else "" for text in texts]
    return [Levels(*made) for made in prose_levels(cleaned, max(sentences, 0))]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Digest(Plain):
    """Everything an episode keeps of its texts, from one reading of them
    (:func:`digest`); each field is what the function of its name gives."""

    headline: str
    summary: str
    compressed: str
    index: str
    key_points: list[str]
    entities: list[str]
    decisions: list[str]
    questions: list[str]
    tags: list[str]


def digest(texts: Sequence[str], *, sentences: int = 3) -> Digest:
    """:func:`headline`, :func:`summarize`, the compressed and index forms of the
    summary's sentences, each text's :func:`key_point` (the non-empty ones),
    :func:`entities`, :func:`decisions`, :func:`questions` and :func:`tags` of
    ``texts``, reading them once (a word is classified once: in the whole of
    ``texts``, a capitalized word at a sentence's start counts as a name when it is
    capitalized inside a sentence of any text)."""
    return digests([texts], sentences=sentences)[0]


def digests(batches: Sequence[Sequence[str]], *, sentences: int = 3) -> list[Digest]:
    """:func:`digest` of each of ``batches``, in order, made on every core."""
    made = prose_digests([_texts(texts) for texts in batches], max(sentences, 0))
    return [Digest(*parts) for parts in made]


# ---------------------------------------------------------------------------
# optional LLM summarizer: never raises, never blocks longer than the timeout

HOT_TO_WARM_PROMPT = """\
Compress the dialogue into a structured summary.
Keep: decisions, facts, entities, open questions.
Drop: small talk, intermediate steps, rejected alternatives.
Answer with one JSON object and nothing else:
{"summary": "2-4 sentences", "key_points": ["..."], "entities": ["..."], \
"decisions": ["..."], "questions": ["open questions"]}"""
"""The archivist's prompt for an episode going from hot to warm."""

WARM_TO_COLD_PROMPT = """\
Compress to the minimum. One sentence: what was this episode about?
Pick 3-5 tags for search.
Goal: enough to decide whether to dig deeper, no more.
Answer with one JSON object and nothing else:
{"headline": "one sentence", "tags": ["tag", "..."]}"""
"""The archivist's prompt for an episode going from warm to cold."""

SUMMARIZER_INPUT_CHARS = 100_000
"""Characters of the texts sent to a summarizer, at most."""
ANSWER_CHARS = 100_000
"""A summarizer's answer (JSON text) is read only up to this length; longer is invalid."""
ANSWER_KEYS = 16
ANSWER_ITEMS = 20
ANSWER_STRING_CHARS = 1_000


def _answer(out: object) -> dict[str, str | list[str]]:
    """The summarizer's answer, checked and cut; raises ValueError when invalid."""
    if isinstance(out, (bytes, bytearray)):
        out = bytes(out[: ANSWER_CHARS + 1]).decode("utf-8", "replace")
    if isinstance(out, str):
        if len(out) > ANSWER_CHARS:
            raise ValueError("answer too long")
        out = json.loads(out)
    if not isinstance(out, dict):
        raise ValueError(f"answer is {type(out).__name__}, expected an object")
    if len(out) > ANSWER_KEYS:
        raise ValueError("too many keys")

    def text(value: object) -> str:
        if not isinstance(value, str):
            raise ValueError("a value is not a string")
        return " ".join(_clean(value[: ANSWER_STRING_CHARS * 2]).split())[:ANSWER_STRING_CHARS].rstrip()

    answer: dict[str, str | list[str]] = {}
    for key, value in out.items():
        if not isinstance(key, str) or not key.strip() or len(key) > 64:
            raise ValueError("a key is not a short string")
        if isinstance(value, list):
            items = [text(v) for v in value[:ANSWER_ITEMS]]
            answer[text(key)] = [v for v in items if v]
        else:
            answer[text(key)] = text(value)
    if not any(answer.values()):
        raise ValueError("empty answer")
    return answer


def ask_summarizer(
    summarizer: Callable[[str], object], prompt: str, texts: Sequence[str], *, timeout: float
) -> dict[str, str | list[str]] | None:
    """Ask an LLM summarizer, in a daemon thread, waiting at most ``timeout`` seconds
    (clamped to [0, threading.TIMEOUT_MAX]; NaN is 0), as ``run_llm`` in
    :mod:`.extract` asks its extractor.

    ``summarizer(prompt + "\\n\\n" + texts joined by newlines)`` (texts cut to
    SUMMARIZER_INPUT_CHARS characters in all) returns a JSON object or its text (at
    most ANSWER_CHARS characters), such as :data:`HOT_TO_WARM_PROMPT` and
    :data:`WARM_TO_COLD_PROMPT` ask for. Its values must be strings or lists of strings:
    strings are whitespace-collapsed and cut to ANSWER_STRING_CHARS characters, lists to
    ANSWER_ITEMS items (empty strings dropped); at most ANSWER_KEYS keys.

    Returns the answer, or None on a timeout, an exception or an invalid answer, each
    logged as a warning on the "aircher_mem.longterm" logger. Never raises. A timed-out
    call keeps running in its daemon thread; its result is dropped.
    """
    try:
        body: list[str] = []
        budget = SUMMARIZER_INPUT_CHARS
        for t in [texts] if isinstance(texts, str) else texts[:MAX_TEXTS]:
            if budget <= 0:
                break
            if isinstance(t, str):
                body.append(_clean(t[:budget]))
                budget -= len(body[-1])
        request = _clean(str(prompt)) + "\n\n" + "\n".join(body)
    except Exception as error:
        log.warning("summarizer not run: %s", _describe(error))
        return None

    called = call_within(summarizer, request, timeout, "aircher-mem-summarizer")
    if called.why:
        log.warning("summarizer %s", called.why)
        return None
    try:
        return _answer(called.out)
    except Exception as error:
        log.warning("summarizer answer invalid: %s", _describe(error))
        return None
