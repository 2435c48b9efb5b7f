"""How a conversation's structure shapes what a turn is indexed under (for recall).

Two rules, both from how people talk, neither with a tunable:

- **A reply answers the question before it.** "Three times a week." means nothing
  alone; with "How often do you work out with your family?" before it, it is the
  answer to that. A turn that follows another party's turn is indexed with the
  questions (the sentences ending in ``?``) of that turn: :func:`questions`.
- **A name said to someone is an address, not a topic.** In "Thanks, Caroline!"
  said to Caroline, "Caroline" tells nothing about what the turn is about (who
  said a turn is its speaker field): a turn is indexed without the names of the
  parties of the turns next to it, its own speaker's name kept: :func:`unaddressed`.
  Only capitalised name words are taken out, exactly as spelled ("Caroline", not
  "caroline"), so a speaker called "user" or "assistant" takes nothing out of prose.

Both run in time linear in the text (no backtracking regular expressions).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from ..pattern import lazy

__all__ = ["QUESTION_CHARS", "name_words", "party", "questions", "unaddressed"]

#: A reply is indexed with at most this many characters of the questions before it
#: (the last ones: a question closing a long turn is the one answered).
QUESTION_CHARS = 2000

# A sentence: a run of anything but a terminator, then the terminator (if any). One
# match per sentence, each attempt succeeds at once: linear.
_SENTENCE = lazy(r"[^.!?\n\uff1f]+[.!?\n\uff1f]*")
_NAME_WORD = lazy(r"\w+")


def questions(text: str, limit: int = QUESTION_CHARS) -> str:
    """The sentences of ``text`` that end with a question mark (``?`` or ``？``),
    in order, joined by a space; at most the last ``limit`` characters of them
    (whole sentences only, so possibly none). ``"Nice! How often do you run? I
    do."`` -> ``"How often do you run?"``."""
    if "?" not in text and "\uff1f" not in text:
        return ""
    found = [m.group(0).strip() for m in _SENTENCE.finditer(text) if m.group(0).rstrip()[-1:] in ("?", "\uff1f")]
    kept: list[str] = []
    size = 0
    for sentence in reversed(found):
        size += len(sentence) + 1
        if size > limit + 1:
            break
        kept.append(sentence)
    return " ".join(reversed(kept))


def name_words(speaker: str | None) -> tuple[str, ...]:
    """The words of a speaker's name that can be taken out of text as an address:
    those of at least two characters that start with a capital letter, as
    spelled. ``"Ada Lovelace"`` -> ``("Ada", "Lovelace")``; ``"user"`` -> ``()``."""
    if not speaker:
        return ()
    return tuple(w for w in _NAME_WORD.findall(speaker) if len(w) >= 2 and w[0].isupper())


@functools.lru_cache(maxsize=1024)
def _names_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    # Longest first, so "Annabel" is taken whole before "Ann" is tried.
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=lambda n: (-len(n), n)))
    return re.compile(rf"\b(?:{alternatives})\b")


def unaddressed(text: str, addressees: Iterable[str | None], speaker: str | None) -> str:
    """``text`` without the name words (:func:`name_words`) of ``addressees``,
    except those that are also words of the ``speaker``'s own name. Each name is
    replaced by a space. ``unaddressed("Thanks, Caroline! I love it.",
    ["Caroline"], "Melanie")`` -> ``"Thanks,  ! I love it."``."""
    own = set(name_words(speaker))
    names = tuple(sorted(w for w in {w for who in addressees for w in name_words(who)} - own if w in text))
    if not names:
        return text
    return _names_pattern(names).sub(" ", text)


def party(speaker: str | None, role: str) -> str:
    """Who a turn is from, for telling a reply from a continuation: its speaker,
    or without one its role (``user``/``assistant``)."""
    return f"speaker:{speaker}" if speaker else f"role:{role}"
