"""The prose analysis as it was written in Python, kept as the reference the Rust
engine (``aircher_mem._core.ProseAnalysis``) is held to, form by form. The cleaning,
the bounds and the result types are ``compress``'s own (unchanged, not duplicated
here). One change from the Python it was: a sentence's centrality sums exact cosines
(integer dot products and squared norms, then one division) in order, as the engine
does, where numpy's matrix products rounded differently."""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from aircher_mem._core import tokenize
from aircher_mem.longterm.compress import Digest, Levels, _texts

MAX_SENTENCES = 200
KEY_POINT_SENTENCES = 2
HEADLINE_CHARS = 300


# ---------------------------------------------------------------------------
# text and words

_WORD = re.compile(r"[$€£]?\w+(?:[.'’\-/:]\w+)*%?")
_POSSESSIVE = re.compile(r"['’]s$", re.I)
_BOUNDARY = re.compile(r"[.!?…]+[\"'”’)\]]*\s+|[。！？]+[\"'”’)\]]*\s*")
_TERMINAL = ".!?…。！？"
_ABBREVIATIONS = frozenset("e.g i.e vs cf approx incl etc mr mrs ms dr prof st jr sr no fig eq al a.m p.m u.s".split())
_STOP_ABBREVIATIONS = frozenset("e.g i.e etc vs cf a.m p.m".split())
_DIGIT = re.compile(r"\d")
_NUMERIC = re.compile(r"^[$€£]?[\d.,:/\-%]+$")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2,}[a-z]")
_DOTTED = re.compile(r"[A-Za-z_]\.[A-Za-z_]")
_BACKTICKS = re.compile(r"`([^`\n]{1,64})`")
_NEGATION = re.compile(r"^(?:not|no|nor|never|cannot|without|none|neither|\w+n['’]t)$", re.I)
_FILLERS = frozenset(
    """wow thanks thank great cool nice awesome ok okay sure yeah yes yep yup nope lol haha
    hahaha hi hello hey bye goodbye oh ah well hmm um uh really totally amazing perfect good
    sounds sound love glad fun interesting right indeed absolutely exactly definitely agree
    true welcome happy wonderful fantastic incredible sweet lovely hear appreciate much lot
    congrats congratulations night morning see later soon care cheers gotcha got alright fine
    sharing share luck wish wishing bet omg impressive super excellent basically honestly
    actually anyway like""".split()
)
_DISCOURSE = (
    r"(?:well|oh|so|yeah|yes|yep|okay|ok|um|uh|hmm|ah|anyway|actually|hey|wow|right|alright|"
    r"like|basically|honestly|also|sure|great|cool|nice)"
)
_LEADING = re.compile(rf"^(?:{_DISCOURSE}(?:\s+{_DISCOURSE})*\s*(?:[,!…—–-]+|\.\.\.)\s*)+", re.I)
_DECISION = re.compile(
    r"\b(?:decided|decide to|we['’]ll use|we['’]ll go with|will use|going with|go with|chose|chosen|"
    r"let['’]s|switched to|switching to|agreed|settled on|opted for|picked)\b",
    re.I,
)


@functools.lru_cache(maxsize=8192)
def _tokens(word: str) -> tuple[str, ...]:
    return tuple(tokenize(word))


def _is_stop(lower: str) -> bool:
    return not _DIGIT.search(lower) and (lower in _STOP_ABBREVIATIONS or not _tokens(lower))


def _surface(word: str) -> str:
    return _POSSESSIVE.sub("", word) or word


def _split(text: str) -> list[str]:
    out: list[str] = []
    for line in text.splitlines():
        line = " ".join(line.split())
        start = 0
        for m in _BOUNDARY.finditer(line):
            if m.group().strip() == ".":
                before = line[start : m.start()].rsplit(None, 1)
                last = before[-1].lower().lstrip("(\"'") if before else ""
                after = line[m.end() : m.end() + 1]
                if last in _ABBREVIATIONS and not (last == "etc" and after.isupper()):
                    continue
                if len(last) == 1 and last.isalpha() and before and before[-1].isupper():
                    continue  # an initial: "J. Smith"
            piece = line[start : m.end()].strip()
            if piece:
                out.append(piece)
            start = m.end()
        piece = line[start:].strip()
        if piece:
            out.append(piece)
    return [s for s in out if any(c.isalnum() for c in s)]


def sentences(text: str) -> list[str]:
    return _split(_texts([text])[0]) if isinstance(text, str) else []


def content_words(text: str) -> list[str]:
    if not isinstance(text, str):
        return []
    out: list[str] = []
    for m in _WORD.finditer(_texts([text])[0]):
        lower = _surface(m.group()).lower()
        if not _is_stop(lower):
            out.append(lower)
    return out


class _Word(NamedTuple):  # a tuple: made for every word of every text examined
    text: str  # as written, possessive dropped
    lower: str
    entity: bool
    numeric: bool
    negation: bool
    stop: bool
    filler: bool


@dataclass(frozen=True, slots=True)
class _Sentence:
    text: str  # as written, whitespace collapsed
    trimmed: str  # leading discourse words dropped
    text_index: int
    words: tuple[_Word, ...]
    small_talk: bool
    question: bool
    decision: bool
    vector: dict[str, int]


def _capitalized(word: str) -> bool:
    return word[:1].isupper()


def _identifier(word: str) -> bool:
    if "_" in word.strip("_") or _CAMEL.search(word):
        return True
    if word.lower() in _ABBREVIATIONS:
        return False
    return bool(_DOTTED.search(word))


def _acronym(word: str) -> bool:
    letters = [c for c in word if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


def _trim(sentence: str) -> str:
    trimmed = _LEADING.sub("", sentence)
    if not trimmed or trimmed == sentence:
        return sentence if not trimmed else trimmed
    first = trimmed[0]
    if first.islower() and len(first.upper()) == 1:
        trimmed = first.upper() + trimmed[1:]
    return trimmed


@functools.lru_cache(maxsize=65_536)
def _word_class(word: str) -> tuple[str, bool, bool, bool, bool, bool]:
    lower = word.lower()
    return (
        lower,
        bool(_DIGIT.search(word)),
        _is_stop(lower),
        bool(_NEGATION.match(word)),
        lower in _FILLERS,
        _identifier(word) or _acronym(word),
    )


def _analyze(texts: Sequence[str], *, vectors: bool = True) -> list[_Sentence]:
    raw: list[tuple[int, str, list[tuple[str, bool, bool]]]] = []
    # (text index, sentence, [(word, at sentence start, in backticks)])
    capitalized_inside: set[str] = set()
    for index, text in enumerate(_texts(texts)):
        for sentence in _split(text):
            code = (
                {_surface(w) for span in _BACKTICKS.findall(sentence) for w in _WORD.findall(span)}
                if "`" in sentence
                else set()
            )
            words: list[tuple[str, bool, bool]] = []
            for position, m in enumerate(_WORD.finditer(sentence)):
                word = m.group()
                if "'" in word or "’" in word:
                    word = _surface(word)
                words.append((word, position == 0, word in code))
                if position and _capitalized(word):
                    capitalized_inside.add(word)
            raw.append((index, sentence, words))
    out: list[_Sentence] = []
    for index, sentence, words in raw:
        classified: list[_Word] = []
        for word, initial, in_code in words:
            lower, numeric, stop, negation, filler, shaped = _word_class(word)
            if negation and initial and lower == "no":  # "No, ..." answers
                negation = False
            named = _capitalized(word) and (not initial or word in capitalized_inside)
            entity = numeric or (not stop and not filler and (in_code or shaped or named))
            classified.append(_Word(word, lower, entity, numeric, negation, stop, filler))
        small_talk = all((w.stop or w.filler) and not w.entity for w in classified)
        tail = sentence.rstrip(" \"')]”’")
        vector = Counter(tokenize(" ".join(w.lower for w in classified if not w.stop), stem=True)) if vectors else ()
        out.append(
            _Sentence(
                text=sentence,
                trimmed=_trim(sentence),
                text_index=index,
                words=tuple(classified),
                small_talk=small_talk,
                question=tail.endswith(("?", "？")),
                decision=bool(_DECISION.search(sentence)) and not tail.endswith(("?", "？")),
                vector=dict(vector),
            )
        )
    return out


# ---------------------------------------------------------------------------
# centrality


def _scores(candidates: list[_Sentence]) -> list[float]:
    talking = [i for i, s in enumerate(candidates) if not s.small_talk]
    norms = [math.sqrt(sum(c * c for c in s.vector.values())) for s in candidates]
    centrality = dict.fromkeys(talking, 0.0)
    if len(talking) > 1:
        for i in talking:
            total = 0.0
            for j in talking:
                if j == i or norms[i] == 0.0 or norms[j] == 0.0:
                    continue
                a, b = candidates[i].vector, candidates[j].vector
                product = sum(count * b.get(token, 0) for token, count in a.items())
                total += product / (norms[i] * norms[j])
            centrality[i] = total
    scores: list[float] = []
    for i, s in enumerate(candidates):
        if s.small_talk:
            scores.append(0.0)
            continue
        content = sum(1 for w in s.words if not w.stop and not w.filler)
        score = centrality[i] + 0.02 * min(content, 10)
        score += 0.25 * any(w.entity and not w.numeric for w in s.words)
        score += 0.25 * any(w.numeric for w in s.words)
        score += 0.25 * s.decision
        scores.append(score / 2 if s.question else score)
    return scores


def _ranked(candidates: list[_Sentence]) -> list[int]:
    pool = candidates[:MAX_SENTENCES]
    scores = _scores(pool)
    return sorted((i for i, s in enumerate(pool) if not s.small_talk), key=lambda i: (-scores[i], i))


def _central(candidates: list[_Sentence], k: int, ranked: list[int] | None = None) -> list[_Sentence]:
    order = _ranked(candidates) if ranked is None else ranked
    return [candidates[i] for i in sorted(order[: max(k, 0)])]


def _join(chosen: list[_Sentence], *, punctuate: bool) -> str:
    parts = [s.trimmed for s in chosen]
    if punctuate and len(parts) > 1:
        parts = [p if p.endswith(tuple(_TERMINAL)) or p[-1] in "\"')]”’" else p + "." for p in parts]
    return " ".join(parts)


def _summary(analyzed: list[_Sentence], sentences: int) -> str:
    return _join(_central(analyzed, sentences), punctuate=True)


def summarize(texts: Sequence[str], *, sentences: int = 3) -> str:
    return _summary(_analyze(texts), sentences)


def key_point(text: str) -> str:
    if not isinstance(text, str):
        return ""
    return _key_point(_analyze([text]), text)


def _key_point(analyzed: list[_Sentence], text: str) -> str:
    out = _join(_central(analyzed, KEY_POINT_SENTENCES), punctuate=False)
    return out if len(out) <= len(text) else out[: len(text)].rstrip()


def _key_words(analyzed: list[_Sentence], *, fillers: bool = False) -> list[_Word]:
    out: list[_Word] = []
    seen: set[str] = set()
    for s in analyzed:
        if s.small_talk:
            continue
        words = s.words
        skipped = len(_WORD.findall(s.text[: len(s.text) - len(s.trimmed)]))
        for w in words[skipped:]:
            if not (w.entity or w.negation or not (w.stop or (w.filler and not fillers))):
                continue
            if w.negation:
                out.append(w)
            elif w.lower not in seen:
                seen.add(w.lower)
                out.append(w)
    return out


def compress(text: str, *, max_words: int = 16, fillers: bool = False) -> str:
    if not isinstance(text, str) or max_words <= 0:
        return ""
    return _compressed(_analyze([text], vectors=False), max_words, fillers)


def _compressed(analyzed: list[_Sentence], max_words: int, fillers: bool) -> str:
    words = _key_words(analyzed, fillers=fillers)
    if len(words) > max_words:
        counts = Counter(w.lower for s in analyzed for w in s.words if not w.stop)
        order = sorted(
            range(len(words)),
            key=lambda i: (not (words[i].entity or words[i].negation), -counts[words[i].lower], i),
        )
        keep = set(order[:max_words])
        words = [w for i, w in enumerate(words) if i in keep]
    return " ".join(w.text if w.entity or w.negation else w.lower for w in words)


def _terms(analyzed: list[_Sentence]) -> list[str]:
    counts: Counter[str] = Counter()
    first: dict[str, tuple[int, int]] = {}  # lower -> (rank group, first position)
    position = 0
    for s in analyzed:
        if s.small_talk:
            continue
        for w in s.words:
            position += 1
            if w.negation or ((w.filler or w.stop) and not w.entity):
                continue
            term = w.lower
            group = 2 if _NUMERIC.match(term) else 0 if w.entity else 1 if len(term) > 2 else 2
            counts[term] += 1
            if term not in first or group < first[term][0]:
                first[term] = (group, first.get(term, (group, position))[1])
    return sorted(first, key=lambda t: (first[t][0], -counts[t], first[t][1]))


def index_form(text: str, *, words: int = 3) -> str:
    if not isinstance(text, str) or words <= 0:
        return ""
    return "_".join(_terms(_analyze([text]))[:words])


def headline(texts: Sequence[str], *, max_words: int = 20) -> str:
    return _headline(_analyze(texts), max_words)


def _headline(analyzed: list[_Sentence], max_words: int, ranked: list[int] | None = None) -> str:
    chosen = _central(analyzed, 1, ranked)
    if not chosen or max_words <= 0:
        return ""
    parts = chosen[0].trimmed.split()
    cut = len(parts) > max_words
    out = " ".join(parts[:max_words])
    if len(out) > HEADLINE_CHARS:
        cut = True
        out = out[: HEADLINE_CHARS - 3]
        out = out.rsplit(" ", 1)[0] if " " in out else out
    if cut:
        out = out.rstrip(" ,;:-—–") + "..."
    return out


def tags(texts: Sequence[str], n: int = 5) -> list[str]:
    return _tags(_analyze(texts), n)


def _tags(analyzed: list[_Sentence], n: int) -> list[str]:
    if n <= 0:
        return []
    terms = _terms(analyzed)
    named = {w.lower for s in analyzed for w in s.words if w.entity}
    entity_terms = [t for t in terms if t in named and not _NUMERIC.match(t)]
    first = entity_terms[: max(n - 2, 1)]
    rest = [t for t in terms if t not in first]
    common = [t for t in rest if t not in named]
    out = first + common[: n - len(first)]
    out += [t for t in rest if t not in out][: n - len(out)]
    return out[:n]


def entities(texts: Sequence[str]) -> list[str]:
    return _entities(_analyze(texts))


def _entities(analyzed: list[_Sentence]) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for s in analyzed:
        for w in s.words:
            if w.entity and w.lower not in seen:
                seen.add(w.lower)
                out.append(w.text)
    return out


def decisions(texts: Sequence[str]) -> list[str]:
    return _decisions(_analyze(texts))


def _decisions(analyzed: list[_Sentence]) -> list[str]:
    out: list[str] = []
    for s in analyzed:
        if s.decision and s.trimmed not in out:
            out.append(s.trimmed)
    return out


def questions(texts: Sequence[str]) -> list[str]:
    return _questions(_analyze(texts))


def _questions(analyzed: list[_Sentence]) -> list[str]:
    if not analyzed:
        return []
    last = analyzed[-1].text_index
    said_last: dict[str, int] = {}  # token -> index of the last text that holds it
    for s in analyzed:
        said_last.update(dict.fromkeys(s.vector, s.text_index))
    out: list[str] = []
    for s in analyzed:
        if not s.question or not s.vector:
            continue
        answered = s.text_index != last and any(said_last[t] > s.text_index for t in s.vector)
        if not answered and s.trimmed not in out:
            out.append(s.trimmed)
    return out


def levels(text: str, *, sentences: int = 3) -> Levels:
    analyzed = _analyze([text])
    return Levels(
        summary=_summary(analyzed, sentences),
        compressed=_compressed(analyzed, 16, False),
        index="_".join(_terms(analyzed)[:3]),
    )


def digest(texts: Sequence[str], *, sentences: int = 3) -> Digest:
    analyzed = _analyze(texts)
    ranked = _ranked(analyzed)
    chosen = _central(analyzed, sentences, ranked)
    by_text: dict[int, list[_Sentence]] = {}
    for sentence in analyzed:
        by_text.setdefault(sentence.text_index, []).append(sentence)
    kept = _texts(texts)
    points = [_key_point(by_text[i], kept[i]) for i in sorted(by_text)]
    return Digest(
        headline=_headline(analyzed, 20, ranked),
        summary=_join(chosen, punctuate=True),
        compressed=_compressed(chosen, 16, False),
        index="_".join(_terms(analyzed)[:3]),
        key_points=[p for p in points if p],
        entities=_entities(analyzed),
        decisions=_decisions(analyzed),
        questions=_questions(analyzed),
        tags=_tags(analyzed, 5),
    )
