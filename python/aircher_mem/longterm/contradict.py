"""Do two short memories contradict each other? Rules, no model, no network.

:func:`detect` compares two memory texts (a fact, a preference, a decision) and
returns a :class:`Verdict` naming the rule that found the disagreement and what
disagrees, or ``None``. Adding a detail, talking about another subject or saying
the same thing in other words is not a contradiction. The rules, tried in order:

- ``correction``: one text corrects what the other affirms ("Actually, the
  database is MySQL, not Postgres" against "The database is Postgres"; "no
  longer", "not ... anymore", "switched from Y to X", "instead of Y", "quit Y",
  "gave up on Y", "moved off Y", "stopped going to Y", "used to Y");
- ``attribute``: both name a value of the same single-valued setting
  (:data:`~aircher_mem.longterm.vocabulary.VOCAB`: database, test runner,
  formatter...) or one of the same kind of named alternatives
  (:data:`~aircher_mem.longterm.vocabulary.ALTERNATIVES`: message broker, cloud
  provider, issue tracker, ORM, license, log level, shell, cloud region...), and the values differ,
  or one text uses a value the other says is not used ("no k8s here"), for the
  same scope (the frontend's test runner is not the backend's) and the same people
  (the speaker's car is not the partner's);
- ``number``: a number, version, date, weekday, time of day or frequency differs in
  the same context ("timeout is 30s" against "timeout is 60s"), or in contexts that
  share a word neither qualifies with a word of its own ("backup retention is 30
  days" / "we keep backups for 7 days", not "the request timeout" / "the connect
  timeout"), for the same people; amounts in different units of one dimension
  are converted ("2 weeks" = "14 days", "half an hour" = "30 minutes"),
  amounts of different units or of different subjects are not compared; the verbs
  that only tie a thing to its amount ("lasts", "is capped at", "expires after")
  are not part of the subject; ages ("34 years old" / "turned forty"), ranks
  ("third grade") and months alone ("born in October") are amounts too, and
  "1,200", "one-week", "for a week" are read as written;
- ``opposite``: the statements overlap in their words and one negates the other
  ("use X" / "never use X") or they take opposite sides of a pair (enable /
  disable, on / off, sync / async, mutable / immutable, true / false...); with
  opposite sides of a pair, a word in common suffices when one text says nothing
  the other does not ("Logging is synchronous" / "All log writes happen
  asynchronously on a background thread");
- ``value``: "S is V" (or "S uses V", "S moved to V", "S works as V", "S: V", "S
  has always been V", "we switched S to V", "we keep S in V", "we collect S with
  V", "V is my favorite S", "S's name is V") with the same subject S and values
  with no word in common ("the message queue is RabbitMQ" / "... is Kafka"),
  unless the two say how in other words ("written in" / "built with") or one
  value is the other's initials ("NYC"); the speaker's own settings have the verb
  for subject ("I live in Berlin" / "I'm based in Lisbon": home; grew up in,
  born in, work at, work as);
- ``state``: the same holder's same thing left in two states that exclude each
  other, with no copula needed: got / lost, owned / still sought, passed / failed
  ("Jon lost his job" / "Jon found a new job"); a text that tells both states, a
  change only considered, or two things told apart by their words are not;
- ``name``: two one-sentence statements of one activity in nearly the same words,
  each with a name the other lacks ("We review code on GitLab" / "Code review
  happens on GitHub");
- ``status``: one person in two states of a kind that hold one at a time
  (married / divorced / single..., left- / right-handed, smoker / non-smoker).

Numbers written onto a word ("-O2", "v3", "sha256") are compared by the number
rule with the numbers written onto the same word.

The decision is symmetric: the rules are tried on (a, b), then on (b, a). Each
text's analysis is cached; only the first :attr:`ContradictionsPolicy.max_chars`
characters of a text are read, so any input returns in bounded time.
:func:`correction` gives what an explicit correction corrects away, for resolving
the older memory automatically.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

from ..config import ContradictionsPolicy
from ..pattern import LazyPattern, lazy
from .vocabulary import ALTERNATIVE_CONTEXT, ALTERNATIVES, VOCAB, VOCAB_RE

__all__ = ["Verdict", "DEFAULT", "detect", "correction"]


@dataclass(frozen=True)
class Verdict:
    """Why two texts contradict: the rule, what disagrees in words, and the rule's
    confidence in 0-1."""

    rule: str
    evidence: str
    score: float


# texts whose analysis is kept, texts whose cheap features (which rules could apply)
# are kept, and words whose stem is
_T = TypeVar("_T")


class _once(Generic[_T]):
    """``functools.cached_property`` without its lock (which Python 3.11 takes on
    every first read, across all instances): a text's parts are found on the
    thread that reads them."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.name = func.__name__

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _once[_T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> _T: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> _T | _once[_T]:
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.func(obj)
        return value


_ANALYSIS_CACHE = 4096
_FEATURE_CACHE = 65536
_WORD_CACHE = 16384

DEFAULT = ContradictionsPolicy()

# -- words -------------------------------------------------------------------------------

_TOKEN = lazy(r"[a-z0-9][a-z0-9+#]*(?:[._/'-][a-z0-9+#]+)*")
# where a clause ends: [.!?;\n]+ before a space or the end, "and" (", and") and the like
# between spaces; its first character read once (the engine skips to the next that may
# begin one, then tests which)
_CLAUSE = lazy(
    r"[.!?;\n,\s](?:(?<=[.!?;\n])[.!?;\n]*(?:\s|$)|(?<=,)\s*(?:and|but|while|whereas)\s"
    r"|(?<=\s)(?:and|but|while|whereas|except)\s)"
)
_SENTENCE_END = lazy(r"[.!?\n]+(?:\s|$)")

_STOP = frozenset(
    "a an the this that these those it its we our us you your i me my they them their he she his her "
    "is are was were be been being am do does did to of in on at for by with from as into onto about "
    "and or but so if then than too also very just only really should must may might can could would "
    "will shall has have had there here all any some each every more most such which who whom what when "
    "where how up out over per via like get got let lets make made now still "
    "i'm i've i'd i'll we're we've we'd we'll you're you've it's he's she's they're they've".split()
)
# Words that say little about which setting a statement is about: dropped from the
# subjects that the number and value rules compare.
_GENERIC = frozenset(
    "use used uses using project repo repository codebase code app application build built run runs running "
    "target targets targeting require requir required requires need needs version toolchain set setting "
    "default currently current now go goes going our we whole everything thing things stuff new environment env "
    "site".split()
)
_NEGATIONS = frozenset(
    "not no never none nobody nothing neither nor without avoid avoids avoided don't doesn't didn't isn't "
    "aren't wasn't weren't won't can't cannot shouldn't mustn't stop stopped dont doesnt isnt arent wont cant "
    "instead rather".split()
)
# Opposite pairs: (affirming side, negating side). A negating word counts as a
# negation, so "telemetry is off" agrees with "no telemetry is sent".
_OPPOSITES: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (frozenset(pos.split()), frozenset(neg.split()))
    for pos, neg in (
        ("always", "never"),
        ("enable enabled enables enabling on", "disable disabled disables disabling off"),
        ("allow allowed allows permitted", "forbid forbidden forbids disallow disallowed prohibited banned"),
        ("sync synchronous synchronously blocking", "async asynchronous asynchronously non-blocking"),
        ("true yes", "false"),
        ("public", "private"),
        ("stateful", "stateless"),
        ("required mandatory", "optional"),
        ("verbose", "quiet silent"),
        ("include included", "exclude excluded"),
        ("like likes liked love loves", "dislike dislikes disliked hate hates"),
        ("parallel concurrently", "serial serially sequential sequentially"),
        ("automatic automatically", "manual manually"),
        ("dark", "light"),
        ("short shorter brief concise", "long longer lengthy detailed verbose"),
        ("pass passed passes", "fail failed fails"),
        ("accept accepted", "reject rejected"),
        ("increase", "decrease"),
        ("with", "without"),
        ("mutable", "immutable read-only readonly"),
        ("encrypted", "unencrypted plaintext"),
        ("secure", "insecure"),
        ("supported", "unsupported deprecated"),
        ("valid", "invalid"),
        ("static statically", "dynamic dynamically"),
        ("eager eagerly", "lazy lazily"),
        ("online", "offline"),
        ("visible", "hidden"),
        ("strict", "lenient loose"),
        ("ascending", "descending"),
        ("uppercase", "lowercase"),
        ("absolute", "relative"),
        ("early", "late"),
        ("fast faster", "slow slower"),
        ("compiled", "interpreted"),
        ("signed", "unsigned"),
        ("married", "single divorced"),
    )
)
_OPPOSITE_WORDS = frozenset(w for pos, neg in _OPPOSITES for w in pos | neg)
# the opposite words that say what state a thing is in (not what someone did to another)
_STATE_OPPOSITES = frozenset(
    "enable enabled enables on disable disabled disables off allowed permitted forbidden disallowed prohibited "
    "banned public private stateful stateless required mandatory optional mutable immutable read-only readonly "
    "encrypted unencrypted plaintext secure insecure supported unsupported deprecated visible hidden online "
    "offline automatic automatically manual manually sync synchronous async asynchronous blocking non-blocking".split()
)
_NEGATIVE_SIDE = frozenset(w for _, neg in _OPPOSITES for w in neg)
# each opposite word: the (pair, side) it stands on, side 1 the negative one
_OPPOSITE_SIDES: dict[str, tuple[tuple[int, int], ...]] = {
    w: tuple((i, int(w in neg)) for i, (pos, neg) in enumerate(_OPPOSITES) if w in pos or w in neg)
    for w in _OPPOSITE_WORDS
}
_NEGATING = _NEGATIONS | _NEGATIVE_SIDE
_NOT_CONTENT_OR_OPPOSITE = _STOP | _NEGATIONS | _OPPOSITE_WORDS
# Single-valued settings whose values may name one thing at two levels of detail.
_COMPATIBLE = {
    frozenset({"linux", "ubuntu"}),
    frozenset({"linux", "debian"}),
    frozenset({"linux", "fedora"}),
    frozenset({"windows", "wsl"}),
    frozenset({"linux", "wsl"}),
    frozenset({"vim", "neovim"}),
    frozenset({"mysql", "mariadb"}),
}
# Where a statement applies; two scopes on both sides that differ are two subjects.
_SCOPES = {
    **dict.fromkeys("frontend front-end ui web js javascript browser".split(), "frontend"),
    **dict.fromkeys("backend back-end server api".split(), "backend"),
    **dict.fromkeys("staging".split(), "staging"),
    **dict.fromkeys("production prod".split(), "production"),
    **dict.fromkeys("dev development local".split(), "development"),
    **dict.fromkeys("docs documentation".split(), "docs"),
    **dict.fromkeys("mobile ios android".split(), "mobile"),
    **dict.fromkeys("analytics warehouse".split(), "analytics"),
    **dict.fromkeys("legacy old".split(), "legacy"),
    **dict.fromkeys("internal".split(), "internal"),
    **dict.fromkeys("public external".split(), "public"),
    **dict.fromkeys("unit".split(), "unit"),
    # unit and integration tests are two scopes; "tests" alone is none ("test
    # coverage" is the coverage)
    **dict.fromkeys("integration e2e end-to-end".split(), "integration"),
    **dict.fromkeys("function functions method methods".split(), "function"),
    **dict.fromkeys("class classes type types".split(), "class"),
    **dict.fromkeys("variable variables".split(), "variable"),
    **dict.fromkeys("constant constants".split(), "constant"),
    **dict.fromkeys("file files filename filenames".split(), "file"),
    **dict.fromkeys("module modules package packages".split(), "module"),
}
# Changes of state: (kind, state, phrases). Two statements about the same holder and
# the same thing in states of one kind that exclude each other disagree: it is held
# or gone ("got a job" / "lost his job"), held or still sought ("looking for a
# studio" / "owns a studio"), passed or failed.
_STATE_PHRASES: tuple[tuple[str, str, str, str], ...] = (
    # (kind, state, one-word phrases, several-word phrases separated by "|")
    (
        "have",
        "held",
        "got gets found landed lands joined joins hired adopted adopts bought buys opened opens started starts "
        "added adds has owns owned launched launches",
        "took up|takes up|take up|signed up|signs up|work at|works at|work for|works for|working at|working for|"
        "still own|still owns|still have|still has",
    ),
    (
        "have",
        "gone",
        # "left" names a thing gone only with a thing held of the same words ("left
        # Google" / "work at Google"), never "the left pane"
        "lost loses quit quits fired sold sells closed closes removed removes dropped drops resigned retired deleted "
        "left leaves",
        "laid off|"
        "gave away|gives away|gave up|gives up|give up|dropped out|drops out|passed away|passes away|"
        "said goodbye|says goodbye|take a break|took a break|takes a break|stopped using|stops using",
    ),
    (
        "have",
        "sought",
        "seeking preparing prepping",
        "looking for|searching for|working on|hoping to|wants to|saving for",
    ),
    ("outcome", "passed", "passed passes aced succeeded", "positive results|positive result"),
    ("outcome", "failed", "failed fails failing flunked", ""),
)
_STATES: dict[tuple[str, ...], tuple[str, str]] = {
    phrase: (kind, state)
    for kind, state, words, groups in _STATE_PHRASES
    for phrase in [(w,) for w in words.split()] + [tuple(g.split()) for g in groups.split("|") if g]
}
_STATE_FIRST = frozenset(phrase[0] for phrase in _STATES)
_STATE_LONGEST = max(len(phrase) for phrase in _STATES)
_STATE_WORDS = frozenset(w for phrase in _STATES for w in phrase)
# pairs of states that cannot hold together
_EXCLUSIVE = frozenset(
    {
        ("held", "gone"),
        ("gone", "held"),
        ("held", "sought"),
        ("sought", "held"),
        ("passed", "failed"),
        ("failed", "passed"),
    }
)
# a change only thought of, feared or asked about says nothing of the state
_HEDGES = frozenset(
    (
        "might may could would if whether worried afraid maybe perhaps considering considers planning plans thinking"
    ).split()
)
# after these a word of _STATES is an auxiliary ("has been", "got to"), not a change
_AUXILIARY_NEXT = frozenset("been be to had not never".split())
# where the thing that changed ends ("lost his job | at the bank")
_OBJECT_END = frozenset(
    "at as in on for from to with by where which who that because after before while since when of than "
    "during until last ago yesterday this next".split()
)
# Verbs and prepositions that only tie a thing to its amount ("sprints last three
# weeks", "lines are capped at 120", "sessions expire after 2 hours", "the API is
# served on port 3000", "backups are kept for 7 days"): left out of an amount's
# context, like "is"
_AMOUNT_VERBS = frozenset(
    "last lasts lasted lasting take takes took taken taking cap caps capped capping set expire expires expired "
    "expiring start starts started starting begin begins began beginning listen listens listened listening "
    "serve serves served serving happen happens happened happening give gives gave time turned turns turning "
    "aged old limited kept keep keeps after within around about under until least approximately roughly since".split()
)
# States of a person of which one holds at a time: (kind, words of each value)
_STATUS_KINDS = (
    ("relationship", "single", "single"),
    ("relationship", "married", "married"),
    ("relationship", "engaged", "engaged"),
    ("relationship", "divorced", "divorced"),
    ("relationship", "widowed", "widowed widow widower"),
    ("hand", "left", "left-handed lefty"),
    ("hand", "right", "right-handed"),
    ("smoking", "smoker", "smoker"),
    ("smoking", "non-smoker", "non-smoker nonsmoker"),
)
_STATUS = {w: (kind, value) for kind, value, words in _STATUS_KINDS for w in words.split()}
# what may follow a state word that says it ("engaged to Chris", "divorced last year",
# "single."), unlike "a single approval", "an engaged audience"
_STATUS_NEXT = frozenset("to with since for in at now again last this and but so until after".split())
# words before a state that say when or how, not whose ("recently married", "still single")
_STATUS_FILLER = frozenset(
    "still became become becomes remain remains remained stay stays stayed happily newly".split()
)
_SYNONYMS = {
    "max": "maximum",
    "min": "minimum",
    "db": "database",
    "repo": "repository",
    "prod": "production",
    "docs": "documentation",
    "doc": "documentation",
    # one thing in two spellings or two words: "two kids" / "three children"
    "kid": "child",
    "kids": "child",
    "children": "child",
    "favourite": "favorite",
    "flight": "fly",
    "born": "birthday",
    "birth": "birthday",
    "flights": "fly",
    "flying": "fly",
    "uptime": "availability",
    "indentation": "indent",
    "land": "arrive",
    "lands": "arrive",
    "landed": "arrive",
    "landing": "arrive",
    "mom": "mother",
    "mum": "mother",
    "dad": "father",
    "folks": "parents",
}

# The people a statement may be about besides its speaker: two texts that name
# different ones ("my wife's birthday", "my birthday") speak of different subjects.
# (Not the words that also name code: a parent class, a child process, a package manager.)
_PEOPLE = {
    **{w: w for w in "wife husband partner girlfriend boyfriend son daughter sister brother".split()},
    **{w: w for w in "friend roommate neighbour boss colleague coworker teammate".split()},
    **{w: w for w in "aunt uncle cousin niece nephew".split()},
    **dict.fromkeys("mother mom mum".split(), "mother"),
    **dict.fromkeys("father dad".split(), "father"),
    **dict.fromkeys("parents folks".split(), "parents"),
    **dict.fromkeys("kid kids children".split(), "kids"),
    **dict.fromkeys("grandmother grandma".split(), "grandmother"),
    **dict.fromkeys("grandfather grandpa".split(), "grandfather"),
}

#: _PEOPLE's words and their possessives ("wife's"), each to its person.
_PEOPLE_FORMS = _PEOPLE | {f"{w}'s": person for w, person in _PEOPLE.items()}

# -- amounts -----------------------------------------------------------------------------

_WORD_NUMBERS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty".split()
    )
} | {w: 10 * i for i, w in enumerate("thirty forty fifty sixty seventy eighty ninety".split(), start=3)}
# "third grade", "5th floor": which one, compared only with the same noun's rank
# ("second" is left out: it is a unit of time too)
_ORDINALS = {
    w: i
    for i, w in enumerate("zeroth first _ third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split())
    if w != "_"
}
_UNITS: dict[str, tuple[str, float]] = {
    **dict.fromkeys("ms msec msecs millisecond milliseconds".split(), ("time", 0.001)),
    **dict.fromkeys("s sec secs second seconds".split(), ("time", 1.0)),
    **dict.fromkeys("m min mins minute minutes".split(), ("time", 60.0)),
    **dict.fromkeys("h hr hrs hour hours".split(), ("time", 3600.0)),
    **dict.fromkeys("d day days".split(), ("time", 86400.0)),
    **dict.fromkeys("w wk wks week weeks".split(), ("time", 604800.0)),
    **dict.fromkeys("month months".split(), ("time", 2592000.0)),
    **dict.fromkeys("y yr yrs year years".split(), ("time", 31536000.0)),
    **dict.fromkeys("b byte bytes".split(), ("size", 1.0)),
    **dict.fromkeys("kb k kib kilobytes".split(), ("size", 1024.0)),
    **dict.fromkeys("mb mib megabytes".split(), ("size", 1024.0**2)),
    **dict.fromkeys("gb gib gigabytes g".split(), ("size", 1024.0**3)),
    **dict.fromkeys("tb tib terabytes".split(), ("size", 1024.0**4)),
    **dict.fromkeys("% percent pct".split(), ("percent", 1.0)),
    **dict.fromkeys("km kms kilometre kilometres kilometer kilometers".split(), ("distance", 1000.0)),
    **dict.fromkeys("mi mile miles".split(), ("distance", 1609.344)),
    **dict.fromkeys("metre metres meter meters".split(), ("distance", 1.0)),
}
_WEEKDAYS = {d: d[:3] for d in "monday tuesday wednesday thursday friday saturday sunday".split()} | {
    d + "s": d[:3] for d in "monday tuesday wednesday thursday friday saturday sunday".split()
}
_MONTHS = {
    m: i + 1
    for i, m in enumerate(
        "january february march april may june july august september october november december".split()
    )
} | {
    m[:3]: i + 1
    for i, m in enumerate(
        "january february march april may june july august september october november december".split()
    )
    if m != "may"
}
# how often, as the seconds between two times: "every N <unit>", "twice a <unit>"
_PERIODS = {unit: scale for unit, (kind, scale) in _UNITS.items() if kind == "time" and len(unit) > 1}
_PERIODS["night"] = _PERIODS["day"]
_FREQUENCIES = {
    "hourly": _PERIODS["hour"],
    "daily": _PERIODS["day"],
    "nightly": _PERIODS["day"],
    "weekly": _PERIODS["week"],
    "monthly": _PERIODS["month"],
    "yearly": _PERIODS["year"],
    "annually": _PERIODS["year"],
}
_TIMES = {"once": 1, "twice": 2, "thrice": 3}
# after a number and a word: a plural noun, what is counted ("100 API requests")
_PLURAL_AHEAD = lazy(r"\s+([a-z]{2,}(?<![su])s)\b")
# "seventy" before "seven": the longest word first in _AMOUNT
_WORD_NUMBER_ALT = "|".join(sorted(_WORD_NUMBERS, key=len, reverse=True))
# "a thousand", "two hundred", "1.5 million": written as the number before _AMOUNT reads them
_BIG = lazy(rf"\b(?P<n>an?|{_WORD_NUMBER_ALT}|\d{{1,3}}(?:\.\d{{1,3}})?)\s+(?P<big>hundred|thousand|million)\b")
_BIG_SCALE = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
# words after a number that say when, not what is counted ("turned 29 last month")
_NOT_UNITS = frozenset(
    "last next this ago now today yesterday tomorrow recently already again "
    "because since until unless although though while before after during except".split()
)
# an age said with no unit: "I'm 34", "my daughter is 7", "she's 40 now"
_AGED_BEFORE = lazy(
    r"(?:\bi'm|\bi am|\b(?:he|she)(?:'s| is)|\b(?:"
    + "|".join(sorted(_PEOPLE, key=len, reverse=True))
    + r")(?:'s| is))\s+(?:now\s+|only\s+|just\s+|already\s+|almost\s+|nearly\s+)?$"
)
_AGED_AFTER = lazy(r"\s*(?:[.,;!?)]|$|(?:now|and|but|so|this|next|last|since|as)\b)")
# what ends a time before it that says how long something may take: "HTTP calls give up
# after 5s", "jobs are killed after 20 min" (a timeout, said without the word)
_GIVES_UP = lazy(
    r"\b(?:(?:gives?|gave) up|(?:is|are|get|gets)? ?(?:killed|aborted|cancell?ed|terminated)|times? out|timed out)"
    r" (?:after|at)\s+$"
)
# counted nouns that count one thing: tries, and people
_COUNTED = {
    **dict.fromkeys("attempt try retry time".split(), "attempt"),
    **dict.fromkeys("peopl person engineer developer dev member".split(), "peopl"),
    **dict.fromkeys("request call req".split(), "request"),
    **dict.fromkeys("approv approval review reviewer".split(), "approv"),
    **dict.fromkeys("character char column col".split(), "character"),
}
# the words after which "a week", "an hour" say how long (not "once a week", "3 a day")
_SINGLE_AFTER = "for in after within about around over under is are only just takes take took lasts last than".split()
_SINGLE_UNITS = frozenset("second minute hour day week month year".split())
_PERIOD_ALT = "|".join(sorted(_PERIODS, key=len, reverse=True))
# after what is counted: the time it is counted in ("per minute", "a second", "/sec")
_RATE = lazy(rf"\s*(?:per|a|an|each|every|/)\s*({_PERIOD_ALT})s?\b")
_UNIT_ALT = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True) if u != "%")
_MONTH_ALT = "|".join(sorted(_MONTHS, key=len, reverse=True))
_NUM = r"\d{1,40}(?:\.\d{1,40})*"
_THOUSANDS = r"\d{1,3}(?:,\d{3}){1,4}(?!\d)"  # "1,200": one number
_AMOUNT_FORMS = (
    r"(?P<iso>\b\d{4}-\d{2}-\d{2}\b)"
    r"|(?P<daytime>\b\d{1,2}(?::\d{2})?\s+(?:in the (?:morning|afternoon|evening)|at night|tonight)\b)"
    r"|(?P<clock>\b\d{1,2}:\d{2}\b(?:\s*[ap]\.?m\b\.?)?)"
    r"|(?P<ampm>\b\d{1,2}\s*[ap]\.?m\b\.?)"
    rf"|(?P<md>\b(?:{_MONTH_ALT})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b)"
    rf"|(?P<dm>\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH_ALT})\b)"
    # "for a week", "in an hour", "after half a minute": one (or half) of a unit of time
    # (its words ahead tested before the words behind)
    r"|(?P<single>(?=(?:half\s+)?an?\s)(?:"
    + "|".join(rf"(?<=\b{w} )" for w in _SINGLE_AFTER)
    + r")(?P<half>half\s+)?an?\s+(?:full\s+)?(?P<sunit>second|minute|hour|day|week|month|year)\b)"
    r"|(?P<quarter>\bq[1-4]\b)"
    r"|(?P<weekday>\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b)"
    r"|(?P<freq>\b(?:hourly|daily|nightly|weekly|monthly|yearly|annually)\b)"
    # "every six hours", "every other day", "twice a week", "3 times per day"
    rf"|(?P<every>\bevery\s+(?:(?P<en>\d{{1,4}}|other|{_WORD_NUMBER_ALT})\s+)?(?P<eunit>{_PERIOD_ALT})s?\b)"
    rf"|(?P<times>\b(?P<tn>once|twice|thrice|(?:\d{{1,4}}|{_WORD_NUMBER_ALT})\s+times)\s+"
    rf"(?:(?:a|an|per|every)\s+(?P<tunit>{_PERIOD_ALT})|(?P<tfreq>hourly|daily|nightly|weekly|monthly|yearly|annually))\b)"
    rf"|(?P<named>\b(?P<name>[a-z][a-z+#.-]{{0,30}}?)[ -]?v?(?P<ver>\d{{1,6}}(?:\.\d{{1,6}}){{1,4}})\b"
    rf"(?!\s*(?:(?:{_UNIT_ALT})\b|%)))"  # "99.9%" is not a version
    r"|(?P<tagged>(?<![\w.])(?P<tag>[a-z]{1,8})(?P<tagn>\d{1,6})(?![\w.]))"
    r"|(?P<ord>(?<![\w.])(?:(?P<ordn>\d{1,3})(?:st|nd|rd|th)|"
    + "|".join(_ORDINALS)
    + r")\s+(?P<ordunit>[a-z]{1,20})\b)"
    # a month alone ("born in October"; "may" only after "in")
    r"|(?P<month>\b(?:january|february|march|april|june|july|august|september|october|november|december)\b"
    r"|(?<=\bin\s)may\b)"
    rf"|(?P<num>(?<![\w.,])(?P<n>{_THOUSANDS}|{_NUM}|{_WORD_NUMBER_ALT})(?P<attached>%|[a-z]{{1,12}})?"
    r"(?!\w|\.\d|,\d)(?:(?:\s*|-)(?P<unit>%|[a-z]{1,20})\b)?)"
)
# Every form begins where a word does: tested first, that spares the engine trying
# each form at every other position (three times faster, the same matches)
_AMOUNT = lazy(r"(?<!\w)(?=\w)(?:" + _AMOUNT_FORMS + ")")
# The forms whose matches hold a digit
_DIGIT_FORMS = ("iso", "daytime", "clock", "ampm", "md", "dm", "quarter", "named", "tagged")


def _failing(forms: str, names: Iterable[str]) -> str:
    """``forms`` with each form of ``names`` made to fail at once (its group kept)."""
    for name in names:
        forms = forms.replace(f"(?P<{name}>", f"(?P<{name}>(?!)", 1)
    return forms


# _AMOUNT for a clause without a digit: its groups and order, the same matches, fewer
# forms tried
_WORD_AMOUNT = lazy(r"(?<!\w)(?=\w)(?:" + _failing(_AMOUNT_FORMS, _DIGIT_FORMS) + ")")
# a clause without a digit or one of these words holds no amount: most skip _AMOUNT
_DIGIT = lazy(r"\d")
# ... nor one "a week" or "half an hour" (_AMOUNT's single): its words, then the form
_SINGLE_FORM = lazy(r"\ban?\s+(?:full\s+)?(?:second|minute|hour|day|week|month|year)\b")
_AMOUNT_WORDS = frozenset(
    [*_WORD_NUMBERS, *_ORDINALS, *_MONTHS, *_WEEKDAYS, *_BIG_SCALE, *_TIMES, "q1", "q2", "q3", "q4", "every"]
    + [f for f in _FREQUENCIES if " " not in f]
)
_VERSION = lazy(r"\d{1,40}(?:\.\d{1,40})+")
_VERSION_WORD = lazy(r"\bversions?\b")

# -- corrections -------------------------------------------------------------------------

_PHRASE = r"[a-z0-9+#][\w+#./'-]*(?:\s+[a-z0-9+#][\w+#./'-]*){0,11}?"
# words without which no pattern of _CORRECTIONS can match: most texts skip them all
_CORRECTION_WORDS = frozenset(
    "from replaced instead longer not stop stopped stops quit quits quitting gave give gives giving off "
    "dropped ditched used".split()
)
# where a given-up thing ends: the end of the clause, another clause, or when
# ("quit coffee; ...", "gave up on Spanish and started Japanese", "quit smoking two years ago")
_WHEN_WORDS = (
    r"and|but|so|then|because|since|after|when|last|this|ago|yesterday|recently|now|years?|months?|weeks?|days?|"
    r"a\s+(?:few|couple|while|year|month|week)|" + "|".join(_WORD_NUMBERS) + r"|\d+"
)
_WHEN_END = rf"(?=\s*(?:[.,;:!?)]|$)|\s+(?:{_WHEN_WORDS})\b)"
# a thing given up ends at a preposition too ("quit volunteering at the shelter");
# what one used to do does not ("used to live in Berlin")
_GIVEN_UP_END = rf"(?=\s*(?:[.,;:!?)]|$)|\s+(?:{_WHEN_WORDS}|at|in|on|with|from)\b)"
_CORRECTIONS: tuple[tuple[LazyPattern, LazyPattern, bool], ...] = (
    # each pattern with a cheap test its text must pass first (most texts hold none), and
    # whether each of its matches begins where one of the test's does (then it is looked
    # for from the test's first match on)
    # "we switched from Y to X", "moved from Y to X", "migrated from Y to X"
    (
        lazy(
            rf"\b(?:switched|switching|switch|moved|moving|migrated|migrating|changed|went)\s+(?:over\s+)?from\s+"
            rf"(?P<y>{_PHRASE})\s+to\s+(?P<x>{_PHRASE})(?=\s*(?:[.,;:!?)]|$|\s+(?:for|in|on|because|since)\b))"
        ),
        lazy(r"\b(?:switched|switching|switch|moved|moving|migrated|migrating|changed|went)\s+(?:over\s+)?from\s"),
        True,
    ),
    # "replaced Y with X"
    (
        lazy(rf"\breplaced\s+(?P<y>{_PHRASE})\s+(?:with|by)\s+(?P<x>{_PHRASE})(?=\s*(?:[.,;:!?)]|$))"),
        lazy(r"\breplaced\s"),
        True,
    ),
    # "Y was replaced by X"
    (
        lazy(
            rf"(?P<y>{_PHRASE})\s+(?:was|were|has been|have been|got|is being)\s+replaced\s+"
            rf"(?:with|by)\s+(?P<x>{_PHRASE})"
        ),
        lazy(r"\breplaced\s+(?:with|by)\s"),
        False,
    ),
    # "X instead of Y" / "instead of Y, X"
    (
        lazy(rf"(?:(?P<x>[\w+#.'-]+)\s+)?\binstead\s+of\s+(?P<y>{_PHRASE})(?=\s*(?:[.,;:!?)]|$))"),
        lazy(r"\binstead\s+of\s"),
        False,
    ),
    # "Y is no longer used" / "no longer Y"
    (
        lazy(rf"(?P<y>{_PHRASE})\s+(?:is|are|was|were)\s+no\s+longer\s+(?:used|needed|in use|supported|an option)\b"),
        lazy(r"\bno\s+longer\s"),
        False,
    ),
    (lazy(rf"\bno\s+longer\s+(?P<y>{_PHRASE})(?=\s*(?:[.,;:!?)]|$))"), lazy(r"\bno\s+longer\s"), True),
    # "not Y anymore", "Y, not ... any more"
    (
        lazy(rf"\bnot\s+(?P<y>{_PHRASE})\s+any\s?(?:more|longer)\b"),
        lazy(r"\bany\s?(?:more|longer)\b"),
        False,
    ),
    # "stop using Y", "stopped using Y"
    (
        lazy(rf"\bstop(?:ped)?\s+using\s+(?P<y>{_PHRASE})(?=\s*(?:[.,;:!?)]|$))"),
        lazy(r"\bstop(?:ped)?\s+using\s"),
        True,
    ),
    # "quit Y", "stopped Y", "gave up (on) Y", "moved off Y", "dropped Y"; "stopped going to Y"
    (
        lazy(
            # not "Redis was dropped from the stack": the given-up thing follows the verb
            r"(?<!\bwas\s)(?<!\bwere\s)(?<!\bbeen\s)(?<!\bis\s)(?<!\bare\s)(?<!\bget\s)(?<!\bgot\s)"
            r"\b(?:quit|quits|quitting|stopped|stops|gave\s+up|give\s+up|gives\s+up|giving\s+up|moved\s+off|"
            r"moving\s+off|dropped|ditched)\s+(?:on\s+)?"
            r"(?:(?:going\s+to|playing|eating|drinking|taking|attending|visiting|doing)\s+)?"
            rf"(?!(?:from|to|in|at|by|out|of|into|off|with|for|over|back|down|up)\b)(?P<y>{_PHRASE}){_GIVEN_UP_END}"
        ),
        lazy(
            r"\b(?:quit|quits|quitting|stopped|stops|dropped|ditched|(?:gave|give|gives|giving)\s+up|"
            r"(?:moved|moving)\s+off)\s"
        ),
        True,
    ),
    # "we used to deploy with Jenkins", "I used to live in Berlin" (not "is used to sign")
    (
        lazy(
            r"(?<!\bis\s)(?<!\bare\s)(?<!\bwas\s)(?<!\bwere\s)(?<!\bbe\s)(?<!\bbeen\s)(?<!\bget\s)"
            rf"(?<!\bgot\s)\bused\s+to\s+(?P<y>{_PHRASE}){_WHEN_END}"
        ),
        lazy(r"\bused\s+to\s"),
        True,
    ),
    # "actually X, not Y" / "X, not Y"
    (
        lazy(rf"(?P<x>[\w+#.'-]+(?:\s+[\w+#.'-]+)?)\s*,\s*(?:and\s+)?not\s+(?P<y>{_PHRASE})(?=\s*(?:[.,;:!?)]|$))"),
        lazy(r",\s*(?:and\s+)?not\s"),
        False,
    ),
)
_LEAD = lazy(r"^(?:(?:use|uses|using|used|is|are|was|were|the|a|an|on|in|with|to|be|being|run|running)\s+)+")


def _undouble(word: str) -> str:
    """ "shipp" (of "shipped") is "ship"; "call", "pass", "buzz" keep both letters."""
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouylsz":
        return word[:-1]
    return word


@functools.lru_cache(maxsize=_WORD_CACHE)
def _stem(word: str) -> str:
    word = _SYNONYMS.get(word, word)
    if len(word) > 4 and word.endswith(("ies", "ied")):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "ches", "shes", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    elif len(word) > 5 and word.endswith("ed"):
        word = _undouble(word[:-2])
    elif len(word) > 6 and word.endswith("ing"):
        word = _undouble(word[:-3])
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    return word


_SCOPE_STEMS = frozenset(_stem(w) for w in _SCOPES)
_SCOPE_OF_STEM = {_stem(w): scope for w, scope in _SCOPES.items()}
_GENERIC_STEMS = frozenset(_stem(w) for w in _GENERIC)


@functools.lru_cache(maxsize=_ANALYSIS_CACHE)
def _clean(text: str, limit: int) -> str:
    """Lower case, at most ``limit`` characters, lone surrogates replaced, one space
    (kept a while: a text's features and its analysis both read it)."""
    head = text[: max(0, limit)]
    if not head.isascii():
        head = head.encode("utf-8", "replace").decode("utf-8").replace("’", "'")
    return " ".join(head.lower().split())


def _words(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _content(words: Iterable[str]) -> frozenset[str]:
    return frozenset(map(_stem, set(words) - _STOP - _NEGATIONS))


def _normalize_phrase(phrase: str, words: int) -> str:
    phrase = _LEAD.sub("", phrase.strip(" .,;:!?'\"()")).strip()
    return " ".join(phrase.split()[:words])


# -- per-text analysis -------------------------------------------------------------------


@dataclass(frozen=True)
class _Amount:
    kind: str  # "time", "size", "percent", "count:<unit>", "plain", "version", "date", ...
    value: object  # a float in base units, a tuple of ints, or a string
    shown: str  # as written
    context: frozenset[str]  # the clause's other words, stemmed
    about: str = ""  # the context's words as written, in their places ("_" the others, "#" the amount)


@dataclass(frozen=True)
class _SubjectValue:
    subject: frozenset[str]
    value: frozenset[str]
    shown_subject: str
    shown_value: str
    relation: str = ""  # the participle before the value ("written" in "is written in Go")


@dataclass(frozen=True)
class _Correction:
    away: str  # the corrected-away phrase
    away_words: frozenset[str]
    to: str  # the replacement, as said (may be empty)
    to_words: frozenset[str]  # the replacement's words
    # the replacement's words not also said elsewhere in the text ("we format with ruff
    # format": "format" is the activity, "ruff" the replacement)
    own_words: frozenset[str] = frozenset()


@dataclass(frozen=True)
class _Change:
    """A change of state said in a clause: who, what, and the state it is left in."""

    kind: str
    state: str
    holder: frozenset[str]  # the content words before the change, stemmed
    thing: frozenset[str]  # what changed, stemmed
    head: str  # the last word of what changed (its noun, mostly)
    shown: str


@dataclass(frozen=True)
class _Status:
    """A person's state of one kind that excludes the kind's others ("married")."""

    kind: str
    value: str
    holder: frozenset[str]  # the content words before it, stemmed
    shown: str


@dataclass(frozen=True)
class _Polarity:
    """A text's or a clause's words and which way it points."""

    content: frozenset[str]  # content words, stemmed, negations and opposite words left out
    negations: int  # negation words and negating sides of opposite pairs
    opposites: tuple[tuple[int, int, str], ...]  # (pair index, side: 0 affirming / 1 negating, word)
    words: tuple[str, ...]  # as written, for the evidence

    @property
    def denies(self) -> bool:
        """Whether a negation word ("not", "never", "instead") is among its words (not
        only the negating side of an opposite pair, as "private")."""
        return not _NEGATIONS.isdisjoint(self.words)


@dataclass(frozen=True)
class _Analysis:
    """What the rules read of one text, each part made when a rule first reads it
    (:func:`detect` runs only the rules whose needs :class:`_Features` show both
    texts meet, so most pairs read few). Its words and clauses are its features'."""

    text: str
    raw: str
    s: ContradictionsPolicy
    features: _Features = dataclasses.field(compare=False, repr=False)

    @_once
    def whole(self) -> _Polarity:
        return _polarity(self.text)

    @property
    def clauses(self) -> tuple[str, ...]:
        return self.features.clauses

    @property
    def content(self) -> frozenset[str]:
        """Content words, stemmed, negations and opposite words left out."""
        return self.whole.content

    @_once
    def negations(self) -> int:
        """Of the whole text: its polarity's, counted without making it unless it is
        made already or will be (one sentence: the opposite rule reads it)."""
        if "whole" in self.__dict__ or self.features.one_sentence:
            return self.whole.negations
        return _negations(_said(self.text)[1])

    @property
    def words(self) -> list[str]:
        return self.features.words

    @property
    def mentions(self) -> frozenset[str]:
        """Content words, stemmed, with the opposite words."""
        return self.features.content

    @_once
    def units(self) -> tuple[_Polarity, ...]:
        """The whole text, then each clause when there are several (the whole text's
        polarity is made only when it is one of them)."""
        return tuple(
            self.whole if unit is self.text else _polarity(unit)
            for unit in _unit_texts(self.text, self.clauses, self.s)
        )

    @_once
    def _values(self) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
        found: tuple[dict[str, set[str]], dict[str, set[str]]] = ({}, {})
        for index, (attribute, canonical) in _known_values(self.words):
            said = ALTERNATIVE_CONTEXT.get(attribute)
            if said is not None and not any(w.startswith(said) for w in self.words):
                continue
            kind_of = _KIND_OF.get(attribute)
            if kind_of is not None and self.words[index + 1 : index + 2] and self.words[index + 1].startswith(kind_of):
                continue  # "the error log", "debug logs": a kind of log, not the level
            if not _negated_at(self.words, index, self.s.negation_window):
                found[0].setdefault(attribute, set()).add(canonical)
            elif _denied_at(self.words, index, self.s.negation_window):
                found[1].setdefault(attribute, set()).add(canonical)
        affirmed, denied = ({k: frozenset(v) for k, v in side.items()} for side in found)
        return affirmed, denied

    @property
    def settings(self) -> dict[str, frozenset[str]]:
        """Attribute -> affirmed canonical values."""
        return self._values[0]

    @property
    def denied(self) -> dict[str, frozenset[str]]:
        """Attribute -> the canonical values it says do not hold ("no Jenkins")."""
        return self._values[1]

    @_once
    def people(self) -> frozenset[str]:
        """The people it names besides its speaker (:data:`_PEOPLE`), possessives included."""
        return frozenset(_PEOPLE_FORMS[w] for w in self.features.present.intersection(_PEOPLE_FORMS))

    @_once
    def scope(self) -> frozenset[str]:
        return frozenset(_SCOPES[w] for w in self.features.present.intersection(_SCOPES))

    @_once
    def amounts(self) -> tuple[_Amount, ...]:
        return _amounts(self.clauses, self.s, self.features.amount_words)

    @property
    def claims(self) -> tuple[_SubjectValue, ...]:
        return self.features.claims

    @_once
    def corrections(self) -> tuple[_Correction, ...]:
        # a text none of whose correction patterns' first tests pass corrects nothing
        if not self.features.correcting:
            return ()
        return _corrections(self.text, self.words, self.s)

    @_once
    def changes(self) -> tuple[_Change, ...]:
        return _changes(self.clauses, self.s)

    @_once
    def names(self) -> tuple[frozenset[str], ...]:
        return _names(self.raw, self.text, self.s)

    @_once
    def statuses(self) -> tuple[_Status, ...]:
        return _statuses(self.clauses)


def _amount(m: re.Match[str], context: frozenset[str], s: ContradictionsPolicy) -> _Amount | None:
    shown = m.group(0).strip()
    if m.group("iso"):
        return _Amount("date", m.group("iso"), shown, context)
    if m.group("daytime"):
        raw = m.group("daytime")
        digits = re.findall(r"\d+", raw)
        hour, minute = int(digits[0]), int(digits[1]) if len(digits) > 1 else 0
        if "morning" in raw:
            hour = 0 if hour == 12 else hour
        elif hour < 12:
            hour += 12
        return _Amount("clock", (hour % 24, minute), shown, context)
    if m.group("clock") or m.group("ampm"):
        raw = m.group("clock") or m.group("ampm")
        digits = re.findall(r"\d+", raw)
        hour, minute = int(digits[0]), int(digits[1]) if len(digits) > 1 else 0
        if "p" in raw[len(digits[0]) :] and hour < 12:
            hour += 12
        if re.search(r"a\.?m", raw) and hour == 12:
            hour = 0
        return _Amount("clock", (hour % 24, minute), shown, context)
    if m.group("md") or m.group("dm"):
        raw = m.group("md") or m.group("dm")
        month = next((n for name, n in _MONTHS.items() if re.search(rf"\b{name}\b", raw)), 0)
        day = int(re.findall(r"\d+", raw)[0])
        return _Amount("date", (month, day), shown, context)
    if m.group("single"):
        kind, scale = _UNITS[m.group("sunit")]
        return _Amount(kind, scale * (0.5 if m.group("half") else 1.0), shown, context)
    if m.group("quarter"):
        return _Amount("quarter", m.group("quarter"), shown, context)
    if m.group("weekday"):
        return _Amount("weekday", _WEEKDAYS.get(m.group("weekday"), m.group("weekday")[:3]), shown, context)
    if m.group("freq"):
        # "the nightly job" names the job; only a frequency that ends its clause or
        # stands before "at"/"on"/"," says how often
        rest = m.string[m.end() :].lstrip()
        if rest and not re.match(r"(?:at|on|in|from|before|after|,|\(|$)", rest):
            return None
        return _Amount("frequency", _FREQUENCIES[m.group("freq")], shown, context)
    if m.group("every"):
        n = m.group("en")
        count = 1 if n is None else 2 if n == "other" else _counted_number(n)
        if count <= 0:
            return None
        return _Amount("frequency", count * _PERIODS[m.group("eunit")], shown, context)
    if m.group("times"):
        said = m.group("tn").split()[0]
        count = _TIMES[said] if said in _TIMES else _counted_number(said)
        if count <= 0:
            return None
        period = _PERIODS[m.group("tunit")] if m.group("tunit") else _FREQUENCIES[m.group("tfreq")]
        return _Amount("frequency", period / count, shown, context)
    if m.group("named"):
        name = m.group("name").strip(".-")
        ver = m.group("ver")
        if any(len(p) > s.max_digits for p in ver.split(".")):
            return None
        if not name or name in _STOP or name in _GENERIC:
            return _Amount("version", tuple(int(p) for p in ver.split(".")), ver, context)
        return _Amount("version", tuple(int(p) for p in ver.split(".")), shown, context | {_stem(name)}, name)
    if m.group("tagged"):
        # a number written onto a word ("-O2", "v3", "sha256", "node20"): the word says
        # what is counted, so only the same word's numbers are compared
        return _Amount("tagged:" + m.group("tag"), int(m.group("tagn")), shown, context)
    if m.group("month"):
        return _Amount("month", _MONTHS[m.group("month")], shown, context)
    if m.group("ord"):
        unit = m.group("ordunit")
        if unit in _STOP or unit in _NEGATIONS:
            return None
        rank = int(m.group("ordn")) if m.group("ordn") else _ORDINALS[m.group(0).split()[0]]
        return _Amount("rank:" + _stem(unit), float(rank), shown, context)
    number_text = m.group("n").replace(",", "")
    attached = m.group("attached")
    if attached and number_text in _WORD_NUMBERS:
        return None  # "ones", "tens": not an amount
    unit = attached or m.group("unit") or ""
    if unit in _NOT_UNITS:
        unit, shown = "", m.group("n")
    if number_text in _WORD_NUMBERS:
        number: float | tuple[int, ...] | str = float(_WORD_NUMBERS[number_text])
    elif _VERSION.fullmatch(number_text):
        parts = number_text.split(".")
        if any(len(p) > s.max_digits for p in parts):
            number = number_text
        elif len(parts) == 2 and not unit:
            number = tuple(int(p) for p in parts)
            if _VERSION_WORD.search(m.string) is not None:
                # "interpreter version for that service: 3.8"
                return _Amount("version", number, shown, context)
        else:
            number = float(number_text) if len(parts) == 2 else tuple(int(p) for p in parts)
    elif len(number_text) > s.max_digits:
        number = number_text
    else:
        number = float(number_text)
    after = m.group("unit")
    if attached == "k" and after and after not in _UNITS and after not in _STOP and isinstance(number, float):
        # "20k users": thousands of what follows, not kilobytes
        number, unit = number * 1000, after
    if isinstance(number, float) and (
        (unit in _UNITS and _UNITS[unit] == _UNITS["years"] and _OLD.match(m.string, m.end()))
        or (
            (not unit or unit in _STOP)
            and (
                _TURNED.search(m.string, 0, m.start()) is not None
                or (
                    _AGED_AFTER.match(m.string, m.start() + len(m.group("n"))) is not None
                    and _AGED_BEFORE.search(m.string, 0, m.start()) is not None
                )
            )
        )
    ):
        # "34 years old" and "just turned forty" are ages, not durations
        return _Amount("age", number, shown, context)
    if unit in _UNITS and isinstance(number, float):
        kind, scale = _UNITS[unit]
        return _Amount(kind, number * scale, shown, context)
    if unit and unit not in _STOP and unit not in _NEGATIONS:
        counted, end = _stem(unit), m.end()
        # "100 API requests": the plural noun after a word that says which is counted
        # (not after "two-space", a measure of what follows)
        joined = m.group("unit") is not None and "-" in m.string[m.end("n") : m.start("unit")]
        plural = None if unit.endswith("s") or joined else _PLURAL_AHEAD.match(m.string, end)
        if plural is not None:
            context = context | ({counted} - _SCOPE_STEMS)  # "eight worker processes": of workers too
            counted, end = _stem(plural.group(1)), plural.end()
            shown = m.string[m.start() : end].strip()
        counted = _COUNTED.get(counted, counted)
        rate = _RATE.match(m.string, end)
        if rate is not None and isinstance(number, float):
            # "100 requests per minute" and "10 requests per second": how many a second
            shown = m.string[m.start() : rate.end()].strip()
            return _Amount("rate:" + counted, number / _PERIODS[rate.group(1)], shown, context)
        return _Amount("count:" + counted, number, shown, context)
    if not context or number_text == "one" or _PARTITIVE.match(m.string, m.end("n")):
        # a bare number with nothing around it says nothing comparable; "one of my
        # friends" says which, not how many; "nice one", "this one" count nothing
        return None
    return _Amount("plain", number, m.group("n") + (attached or ""), context)  # "5 a day": 5


_OLD = lazy(r"[\s-]*old\b")
_PARTITIVE = lazy(r"\s+of\b")
_TURNED = lazy(r"\b(?:turned|turns|turning|aged)\s+$")
_CLAIM = lazy(
    r"^(?P<s>(?:[a-z0-9+#][\w+#./'-]*\s+){0,5}?[a-z0-9+#][\w+#./'-]*)\s+"
    r"(?:is|are|=|:|uses|use|lives in|live in|runs on|run on|moved to|moves to|relocated to|goes to|go to|"
    r"works as|work as|(?:has|have)(?: always)? been)"
    r"\s+(?P<v>.+)$"
)
# "we switched feature flags to Unleash": the thing switched is the subject, where to its value
_CLAIM_SWITCH = lazy(
    r"^(?:[a-z0-9+#][\w+#./'-]*\s+){0,3}?(?:switched|switching|migrated|migrating)\s+(?!from\b|over\b|to\b)"
    r"(?P<s>(?:[a-z0-9+#][\w+#./'-]*\s+){0,3}?[a-z0-9+#][\w+#./'-]*)\s+(?:over\s+)?to\s+(?P<v>.+)$"
)
_CLAIM_COLON = lazy(r"^(?P<s>[a-z0-9+#][\w+#./ '-]{0,60}?)\s*[:=]\s*(?P<v>.+)$")
# "we keep secrets in Vault", "issues are tracked in Jira": the thing kept is the
# subject, where it is kept its value
_CLAIM_KEEP = lazy(
    r"^(?:[a-z0-9+#][\w+#./'-]*\s+){0,3}?(?:keep|keeps|store|stores|host|hosts|track|tracks)\s+"
    r"(?P<s>(?:[a-z0-9+#][\w+#./'-]*\s+){0,3}?[a-z0-9+#][\w+#./'-]*)\s+(?:in|on)\s+(?P<v>.+)$"
)
# "we collect metrics with Datadog", "the user writes notes in Obsidian": what a
# person or team does something to is the subject, the tool or place the value (the
# preposition says which of the two)
_CLAIM_DOER = lazy(
    r"^(?:we|i|they|the\s+team|the\s+user|users)\s+(?:[a-z]+ly\s+)?(?!(?:is|are|was|were|have|has|had|do|does|did|"
    r"will|would|can|could|should|must|may|might|also|still|never|not|don't|didn't)\b)[a-z]+\s+"
    r"(?P<s>(?:[a-z0-9+#][\w+#./'-]*\s+){0,3}?[a-z0-9+#][\w+#./'-]*)\s+(?P<p>with|using|via|in|on)\s+(?P<v>.+)$"
)
# "Alice owns the billing service" says what "the billing service is owned by Alice" says
_CLAIM_OWNER = lazy(
    r"^(?P<v>(?:[a-z0-9+#][\w+#./'-]*\s+){0,2}?[a-z0-9+#][\w+#./'-]*)\s+(?:owns|maintains|leads)\s+"
    r"(?P<s>(?:[a-z0-9+#][\w+#./'-]*\s+){0,3}?[a-z0-9+#][\w+#./'-]*)$"
)
# "I live in Berlin", "these days I'm based in Lisbon": the speaker's own setting, named
# by the verb (where they live, grew up, were born, work, what as)
_CLAIM_SELF = lazy(
    r"^(?:[a-z]+\s+){0,3}?(?:i|we)(?:'m|'re|\s+am|\s+are|\s+was|\s+were)?\s+(?:[a-z]+ly\s+|still\s+|now\s+)?"
    r"(?P<verb>live in|living in|based in|moved to|grew up in|raised in|born in|work at|work for|working at|"
    r"working for|work as|working as)\s+(?P<v>.+)$"
)
_SELF_SLOT = {
    **dict.fromkeys(("live in", "living in", "based in", "moved to"), "home"),
    **dict.fromkeys(("grew up in", "raised in"), "hometown"),
    "born in": "birthplace",
    **dict.fromkeys(("work at", "work for", "working at", "working for"), "employer"),
    **dict.fromkeys(("work as", "working as"), "occupation"),
}
_DOER_RELATION = {"with": "tool", "using": "tool", "via": "tool", "in": "place", "on": "place"}
_LINK = frozenset(
    "written built hosted stored shipped reported scheduled set configured kept located deployed "
    "done handled managed made powered backed called named generated authored sent published tracked scraped "
    "collected owned maintained led "
    "in on with to at by for via through of".split()
)


# a participle of _LINK says how the value relates to the subject: "written in
# Markdown" and "built with MkDocs" answer two questions
_RELATIONS = _LINK - frozenset("in on with to at by for via through of".split())
# participles that answer one question: "built with Sphinx" and "generated with MkDocs"
# name two tools for one job; "written in Markdown" and "built with MkDocs" do not
_RELATION_KIND = {
    **dict.fromkeys("written authored".split(), "language"),
    **dict.fromkeys("built generated made done handled managed powered backed scraped collected".split(), "tool"),
    **dict.fromkeys("hosted stored kept located deployed tracked".split(), "place"),
    **dict.fromkeys("shipped reported sent published".split(), "destination"),
    **dict.fromkeys("called named".split(), "name"),
    **dict.fromkeys("owned maintained led".split(), "owner"),
}


# a relation said as a noun after its subject ("billing service owner: Tom")
_RELATION_NOUNS = {"owner": "owned", "owners": "owned", "maintainer": "maintained", "lead": "led"}

# "Pizza is my favorite food", "develop is our default branch": the possessive's
# noun is the subject, what comes before the copula its value (only for words that
# make the noun single-valued: "Tom is my brother" says nothing of other brothers)
_INVERTED = lazy(
    r"^(?:my|our|his|her|their|the\s+user's|the\s+team's)\s+(?:favorite|favourite|main|primary|default|preferred|"
    r"current|only)\b"
)


def _claims(clause: str, s: ContradictionsPolicy) -> list[_SubjectValue]:
    own = _CLAIM_SELF.match(clause)
    if own is not None:
        return _claim(_SELF_SLOT[own.group("verb")], own.group("v"), "", s)
    m = _CLAIM_COLON.match(clause) or _CLAIM.match(clause) or _CLAIM_SWITCH.match(clause)
    kept = m is None and (m := _CLAIM_KEEP.match(clause)) is not None
    done = m is None and (m := _CLAIM_DOER.match(clause)) is not None
    owned = m is None and (m := _CLAIM_OWNER.match(clause)) is not None
    if m is None:
        return []
    if done and not _AMOUNT_WORDS.isdisjoint(_words(m.group("v"))):
        return []  # "we deploy the app on Fridays": when, not with what
    relation = _DOER_RELATION[m.group("p")] if done else "kept" if kept else "owned" if owned else ""
    out = _claim(m.group("s"), m.group("v"), relation, s)
    if _INVERTED.match(m.group("v")) and not (kept or done or owned):
        out += _claim(m.group("v"), m.group("s"), "", s)
    return out


def _claim(subject_text: str, value_text: str, relation: str, s: ContradictionsPolicy) -> list[_SubjectValue]:
    subject_words = [w for w in _words(subject_text) if w not in _STOP]
    if len(subject_words) > 1 and subject_words[-1] == "name" and subject_words[-2].endswith("'s"):
        # "our dog's name is Buddy" says what "our dog is called Max" says
        subject_words = [*subject_words[:-2], subject_words[-2][:-2]]
        relation = "called"
    elif not relation and len(subject_words) > 1 and subject_words[-1] in _RELATION_NOUNS:
        # "billing service owner: Tom" says what "Maria owns the billing service" says
        relation = _RELATION_NOUNS[subject_words[-1]]
        subject_words = subject_words[:-1]
    # "our one cat", "my two kids": how many is not which
    subject_words = [w for w in subject_words if w not in _WORD_NUMBERS][-s.subject_words :]
    subject = frozenset(_stem(w) for w in subject_words if w not in _GENERIC and w not in _NEGATIONS)
    said = _words(value_text)
    value_words = [w for w in said if w not in _STOP and w not in _LINK][: s.value_words]
    if (
        not subject
        or not value_words
        or any(w in _NEGATIONS for w in said)
        or any(c.isdigit() for w in value_words for c in w)  # amounts are the number rule's
    ):
        return []
    value = frozenset(_stem(w) for w in value_words)
    relation = relation or next((w for w in said if w in _RELATIONS), "")
    relation = _RELATION_KIND.get(relation, relation)
    return [_SubjectValue(subject, value, " ".join(subject_words), " ".join(value_words), relation)]


# "on"/"off" as a state ("is on", "turned off."), not as a preposition ("on save")
_STATE_END = lazy(r"\s*(?:[.,;:!?)]|$|by default\b|for (?:all|every)\b)")
_SWITCHED = frozenset("turned switched toggled flipped".split())
# "X, not Y" denies Y, not the statement
_CONTRAST = lazy(r",\s*(?:and\s+)?not\s+(?=[a-z0-9])")
# "No worries", "no problem", "No, ..." answering: a way of speaking, not a negation
_INTERJECTION = lazy(
    r"\b(?:no|nope|nah)\s+(?:worries|worry|problem|problems|prob|doubt|kidding|way)\b|(?:^|(?<=[.!?]\s))no\s*[,!.]",
    re.IGNORECASE,
)


_PREFER = frozenset("prefer prefers preferred preferring".split())


def _said(text: str) -> tuple[list[str], list[str]]:
    """The words of ``text`` a polarity reads: all of them, and those that count
    (the "on" and "off" that end a statement only)."""
    # each pattern only where its words are: the interjection's all hold "no" or "nah"
    if "not" in text:
        text = _CONTRAST.sub(", ", text)
    if "no" in text or "nah" in text:
        text = _INTERJECTION.sub(" ", text)
    words = _TOKEN.findall(text)
    kept = words
    if "on" in words or "off" in words:  # only those that end a statement ("the cache is off.")
        kept = []
        for m in _TOKEN.finditer(text):
            word = m.group(0)
            if word not in ("on", "off") or _STATE_END.match(text, m.end()) or (kept and kept[-1] in _SWITCHED):
                kept.append(word)
    return words, kept


def _negations(kept: list[str]) -> int:
    """The negations among the words a polarity counts (see _said)."""
    negations = sum(map(_NEGATING.__contains__, kept))
    if "over" in kept and not _PREFER.isdisjoint(kept):
        negations += 1  # "prefer functions over classes" says no to classes
    return negations


@functools.lru_cache(maxsize=_FEATURE_CACHE)
def _polarity(text: str) -> _Polarity:
    words, kept = _said(text)
    negations = _negations(kept)
    opposites: dict[tuple[int, int], str] = {}
    for w in filter(_OPPOSITE_WORDS.__contains__, kept):
        for side in _OPPOSITE_SIDES[w]:
            opposites.setdefault(side, w)
    content = frozenset(map(_stem, set(kept) - _NOT_CONTENT_OR_OPPOSITE - _SWITCHED))
    return _Polarity(
        content, negations, tuple(sorted((i, side, w) for (i, side), w in opposites.items())), tuple(words)
    )


# The settings' values and the named alternatives (a term is in one of the two).
_TERMS = VOCAB | ALTERNATIVES
_VOCAB_LONGEST = max(len(term.split()) for term in _TERMS)
_VOCAB_FIRST = frozenset(term.split()[0] for term in _TERMS)
_TERM_LAST = frozenset(term.split()[-1] for term in _TERMS)


def _known_values(words: list[str]) -> list[tuple[int, tuple[str, str]]]:
    """The settings' values named in ``words`` (longest term first, as ``VOCAB_RE``
    finds them), with the index of each one's first word."""
    firsts = _VOCAB_FIRST.intersection(words)
    if not firsts:  # most texts name none
        return []
    out = []
    after = 0  # the first word not inside a term found
    for i in [i for i, word in enumerate(words) if word in firsts]:  # most words start no term
        if i < after:
            continue
        for k in range(min(_VOCAB_LONGEST, len(words) - i), 0, -1):
            hit = _TERMS.get(" ".join(words[i : i + k]))
            if hit is not None:
                out.append((i, hit))
                after = i + k
                break
    return out


# what ends "from X" before a value ("from X to Y"), and the words after a value that
# say it is gone ("ESLint was removed")
# a value followed by a word so starting names a kind of that thing, not the setting
_KIND_OF = {"log level": "log"}
_TOWARDS = frozenset("to into onto with for".split())
_GONE = frozenset("anymore replaced removed dropped deprecated retired".split())
_WAS = frozenset("was were is are got has have been".split())
# verbs before a value that give it up ("we cancelled Sentry", "dropped Jenkins")
_GIVEN_UP = frozenset(
    "cancelled canceled dropped removed ditched abandoned retired deprecated uninstalled decommissioned "
    "scrapped sunset sunsetted".split()
)
# what a value is said not to be when it is not in use ("pytest is not even installed")
_IN_USE = frozenset("used installed allowed supported enabled needed required permitted adopted available".split())
# words skipped after a value to read whether it is in use ("is not even installed")
_FILLERS = frozenset("even ever really actually currently".split())
# words before "X over Y" that make it a choice ("we chose tabs over spaces")
_PREFERRING = frozenset("prefer prefers preferred chose choose chosen pick picked favour favor favored".split())
_DETERMINERS = frozenset("the a an our their my your its all".split())
# the negations that only say what is left ("instead of X"), which a "to" ends
_LEAVING = frozenset("instead rather from over than longer replaced".split())


def _negated_at(words: list[str], index: int, window: int) -> bool:
    """Is the word at ``index`` said not to hold ("not X", "never use X", "nothing
    goes into X", "we dropped X", "instead of X", "from X", "X, not")?"""
    before = words[max(0, index - window) : index]
    if _given_up(words, index) or any(w in _NEGATIONS and w not in _LEAVING for w in before):
        return True
    start = max(0, index - window)
    towards = [i for i, w in enumerate(before) if w in _TOWARDS]
    if towards:  # "from X to Y": Y is what holds
        start += towards[-1] + 1
    if any(w in _LEAVING and (w != "over" or _preferred(words, at)) for at, w in enumerate(words[start:index], start)):
        return True
    return _gone_after(words, index)


def _preferred(words: list[str], at: int) -> bool:
    """Does the "over" at ``at`` say what was passed over ("Postgres over MySQL",
    "we chose tabs over spaces"), not how ("talk over gRPC")?"""
    return at > 0 and (words[at - 1] in _TERM_LAST or not _PREFERRING.isdisjoint(words[max(0, at - 4) : at]))


def _given_up(words: list[str], index: int) -> bool:
    """Is the word at ``index`` the object of a verb that gives it up ("we cancelled
    Sentry", "dropped the Jenkins setup")?"""
    at = index - 1
    while at >= 0 and words[at] in _DETERMINERS:
        at -= 1
    return at >= 0 and words[at] in _GIVEN_UP


def _gone_after(words: list[str], index: int) -> bool:
    """Do the words after the one at ``index`` say it is gone ("X anymore", "X no
    longer", "X was removed", "X is not even installed")?"""
    after = words[index + 1 : index + 3]
    if not after:
        return False
    if after[0] in _GONE or after == ["no", "longer"] or (after[0] in _WAS and after[-1] in _GONE):
        return True
    rest = [w for w in words[index + 1 : index + 6] if w not in _FILLERS]
    if rest[:1] and rest[0] in _WAS:  # "is not used", "was never adopted"
        rest = rest[1:]
    return len(rest) >= 2 and rest[0] in _NEGATIONS and rest[0] not in _LEAVING and rest[1] in _IN_USE


def _denied_at(words: list[str], index: int, window: int) -> bool:
    """Is the word at ``index`` said to be unused ("not X", "no X", "never use X", "X
    no longer", "X anymore", "we dropped X"), not only left ("from X", "instead of X")?"""
    if _given_up(words, index) or any(w in _NEGATIONS or w == "longer" for w in words[max(0, index - window) : index]):
        return True
    return _gone_after(words, index)


def _corrections(text: str, words: list[str], s: ContradictionsPolicy) -> tuple[_Correction, ...]:
    out: list[_Correction] = []
    if _CORRECTION_WORDS.isdisjoint(words):
        return ()
    # where the first test of any pattern passes: none passes before
    earliest = _ANY_CORRECTION.search(text)
    if earliest is None:
        return ()
    named: list[tuple[str, str]] | None = None  # the settings' values the text names, when first needed
    said: list[str] | None = None  # its words stemmed, when first needed
    for pattern, first, leads in _CORRECTIONS:
        found = first.search(text, earliest.start())
        if found is None:
            continue
        for m in pattern.finditer(text, found.start() if leads else 0):
            away = _normalize_phrase(m.group("y"), s.correction_words)
            away_words = _content(_words(away)) - _GENERIC
            if not away_words:
                continue
            to = _normalize_phrase(m.groupdict().get("x") or "", s.correction_words)
            to_words = _content(_words(to)) - _GENERIC
            if not to_words:
                # "not black anymore: we format with ruff format" names the replacement
                # as another value of the same setting
                attrs = {VOCAB[v.group(1)][0] for v in VOCAB_RE.finditer(away)}
                if attrs and named is None:
                    named = [VOCAB[v.group(1)] for v in VOCAB_RE.finditer(text)]
                values = dict.fromkeys(value for attr, value in named or () if attr in attrs and value not in away)
                to = " ".join(values)
                to_words = _content(_words(to))
            to_words = to_words - away_words
            own: frozenset[str] = frozenset()
            if to_words:
                said = [_stem(w) for w in words] if said is None else said
                to_said = [_stem(w) for w in _words(to)]
                own = frozenset(w for w in to_words if said.count(w) <= to_said.count(w))
            out.append(_Correction(away, away_words, to if to_words else "", to_words, own))
    return tuple(out)


def _clauses(text: str, s: ContradictionsPolicy) -> list[str]:
    return [c for c in (part.strip(" ,:") for part in _CLAUSE.split(text)) if c][: s.max_clauses]


def _unit_texts(text: str, clauses: Sequence[str], s: ContradictionsPolicy) -> Sequence[str]:
    """What the opposite rule compares: a one-sentence text whole and clause by
    clause; a longer text clause by clause only (a negation in one of its sentences
    says nothing about the others)."""
    if len(clauses) <= 1:
        return [text]
    parts = clauses[: s.opposite_clauses]
    return [text, *parts] if _one_sentence(text) else parts


def _state_phrases(words: Sequence[str]) -> list[tuple[int, int, tuple[str, str]]]:
    """The changes of state named in ``words``: (first index, end index, (kind, state)),
    longest phrase first."""
    out = []
    after = 0  # the first word not inside a phrase found
    for i in [i for i, word in enumerate(words) if word in _STATE_FIRST]:
        if i < after:
            continue
        for k in range(min(_STATE_LONGEST, len(words) - i), 0, -1):
            hit = _STATES.get(tuple(words[i : i + k]))
            if hit is not None:
                # "has lost", "got fired", "has been": the word after says what happened
                following = words[i + k] if i + k < len(words) else ""
                if following not in _STATE_FIRST and following not in _AUXILIARY_NEXT:
                    out.append((i, i + k, hit))
                after = i + k
                break
    return out


def _thing(words: Sequence[str], limit: int) -> list[str]:
    """The content words from the start of ``words`` to the first preposition after one
    of them, at most ``limit``, stemmed."""
    out: list[str] = []
    for w in words:
        if w in _OBJECT_END and out:
            break
        if w in _STOP or w in _NEGATIONS or w in _STATE_WORDS or w in _OBJECT_END or w == "own":
            continue
        out.append(_stem(w))
        if len(out) >= limit:
            break
    return out


def _changes(clauses: Sequence[str], s: ContradictionsPolicy) -> tuple[_Change, ...]:
    out: list[_Change] = []
    first_holder: frozenset[str] = frozenset()
    for index, clause in enumerate(clauses):
        words = _words(clause)
        found = _state_phrases(words) if not _STATE_FIRST.isdisjoint(words) else []
        if index == 0:
            first_holder = frozenset(_thing(words, s.subject_words))
        if not found or not _HEDGES.isdisjoint(words) or any(w in _NEGATIONS for w in words if w not in _STATE_WORDS):
            continue
        # "looking for a job she can keep": a change still sought is the clause's state
        start, end, (kind, state) = next((f for f in found if f[2][1] == "sought"), found[0])
        before = [_stem(w) for w in words[:start] if w not in _STOP and w not in _STATE_WORDS]
        thing = _thing(words[end:], s.state_object_words)
        holder = frozenset(before)
        if not thing:
            # "the nightly build passes": what changed is what comes before
            thing = before
        elif not holder and index > 0:
            holder = first_holder  # "Priya joined an agency and started her job there"
        if thing:
            shown = " ".join(words[start:end])
            out.append(_Change(kind, state, holder, frozenset(thing), thing[-1], shown))
    return tuple(out)


# a word of a name: written with a capital inside a sentence
_NAME_TOKEN = lazy(r"[A-Za-z0-9][\w+#'-]*")


def _names(raw: str, text: str, s: ContradictionsPolicy) -> tuple[frozenset[str], ...]:
    """The names a one-sentence text gives (runs of words written with a capital after
    its first word, stemmed): "GitLab", "Docker Hub". A name given to something new
    ("a puppy named Coco") is not an answer to anything, so it is left out."""
    head = raw[: max(0, s.max_chars)]
    if head[1:].lower() == head[1:] or not _one_sentence(text):
        return ()
    out: list[frozenset[str]] = []
    run: list[str] = []
    previous = ""
    last_end = -2
    for k, m in enumerate(_NAME_TOKEN.finditer(head)):
        token = m.group(0)
        lower = token.lower()
        # a name with a digit ("-O2", "GPT4"), a weekday or a month is an amount: the
        # number rule's ("we deploy on Fridays" / "we deploy with Helm")
        if (
            k
            and lower != token
            and lower not in _STOP
            and previous not in ("named", "called")
            and not any(c.isdigit() for c in token)
            and lower not in _WEEKDAYS
            and not (lower in _MONTHS and len(lower) > 3)  # "Jan" may be a person
        ):
            if run and m.start() != last_end + 1:
                out.append(frozenset(run))
                run = []
            run.append(_stem(lower.rstrip("'")))
            last_end = m.end()
        else:
            if run:
                out.append(frozenset(run))
                run = []
            previous = lower
    if run:
        out.append(frozenset(run))
    return tuple(out)


# nouns a number right after names one of many ("step 3", "issue #12", "module m0")
_NAMING = frozenset(
    "step steps rule rules issue issues ticket tickets item items task tasks pr prs phase stage part chapter "
    "section page line lines number no module modules case cases example figure table point question bug "
    "story sprint milestone epic room floor row column".split()
)
_BEFORE = lazy(r"([a-z][a-z.]*)\s*#?\s*$")


def _names_it(clause: str, start: int) -> bool:
    """Whether the number at ``start`` names which one of a kind (it follows a
    naming noun, or "#"), rather than saying how much or which version."""
    m = _BEFORE.search(clause, max(0, start - 40), start)
    return m is not None and m.group(1).rstrip(".") in _NAMING


def _parts(words: Iterable[str]) -> Iterable[str]:
    """The words, and the parts of each hyphenated one ("one-week": one, week)."""
    for word in words:
        yield word
        if "-" in word:
            yield from word.split("-")


def _may_amount(text: str, words: Collection[str]) -> bool:
    """Whether ``text`` (whose words are ``words``) may state an amount: a digit, an
    amount word (alone or in a hyphenated word), or "a week"."""
    if _DIGIT.search(text) is not None or not _AMOUNT_WORDS.isdisjoint(words):
        return True
    if "-" in text and not _AMOUNT_WORDS.isdisjoint(_parts(words)):
        return True
    return not _SINGLE_UNITS.isdisjoint(words) and _SINGLE_FORM.search(text) is not None


def _counted_number(said: str) -> int:
    """A count written in digits (at most four) or as a word."""
    return _WORD_NUMBERS[said] if said in _WORD_NUMBERS else int(said)


def _big(m: re.Match[str]) -> str:
    """A _BIG match as digits ("a thousand": "1000")."""
    n = m.group("n")
    base = 1.0 if n in ("a", "an") else float(_WORD_NUMBERS[n]) if n in _WORD_NUMBERS else float(n)
    value = base * _BIG_SCALE[m.group("big")]
    return str(int(value)) if value.is_integer() else str(value)


# words never in an amount's context
_NOT_CONTEXT = frozenset().union(
    _STOP, _NOT_UNITS, _GENERIC, _AMOUNT_VERBS, _NEGATIONS, _UNITS, _WORD_NUMBERS, _WEEKDAYS, _MONTHS
)


def _amounts(
    clauses: Sequence[str], s: ContradictionsPolicy, amount_words: Collection[str] | None = None
) -> tuple[_Amount, ...]:
    """The amounts the clauses state, each with the clause's other words (at most
    ``max_amounts``). ``amount_words``: those of the text the clauses are of that may
    make a clause state one (:attr:`_Features.amount_words`): a clause's words are the
    text's words between its ends (no word of a text spans the end of a clause), so a
    clause with no digit that holds none of them is passed over unread."""
    amounts: list[_Amount] = []
    for clause in clauses:
        if amount_words is not None and _DIGIT.search(clause) is None and not any(w in clause for w in amount_words):
            continue
        clause_words = _words(clause)
        if not _may_amount(clause, clause_words):
            continue
        if not _BIG_SCALE.keys().isdisjoint(clause_words):
            clause = _BIG.sub(_big, clause)
        for m in (_AMOUNT if _DIGIT.search(clause) else _WORD_AMOUNT).finditer(clause):
            if len(amounts) >= s.max_amounts:
                break
            if _names_it(clause, m.start()):
                continue  # "step 3", "issue #12", "module m0": which one, not how much
            before = clause[: m.start()]
            # "90% coverage": the word after an attached unit is what it is of
            end = m.end("attached") if m.group("num") and m.group("attached") and m.group("unit") else m.end()
            # a bracketed part (an image's caption in a chat turn) is a context of its own
            ahead = _words(before[max(before.rfind("["), before.rfind("]")) + 1 :])
            after = clause[end:]
            cut = min((i for i in (after.find("["), after.find("]")) if i >= 0), default=len(after))
            behind = _words(after[:cut])
            around = ahead + behind
            # "max-line-length": its words too
            around += [part for w in around if "-" in w or "_" in w for part in re.split(r"[-_]+", w) if part]
            context = frozenset(_stem(w) for w in around if w not in _NOT_CONTEXT and not w[0].isdigit())
            if _GIVES_UP.search(before) is not None:
                context |= {"timeout"}
            elif before.endswith(":") and not before[-2:-1].isdigit() and m.group("num"):
                context |= {"port"}  # "binds to :3000", "localhost:8080"
            amount = _amount(m, context, s)
            if amount is not None:
                # the context's words in their places, "_" for the others and "#" for
                # the amount itself: a word just before another qualifies it only if it
                # was so, and how far a word stands from the amount is kept
                words = [*ahead, "#", *behind, *around[len(ahead) + len(behind) :]]
                marked = [w if w == "#" or _stem(w) in amount.context else "_" for w in words]
                about = " ".join([amount.about] * bool(amount.about) + marked)
                amounts.append(_Amount(amount.kind, amount.value, amount.shown, amount.context, about))
    return tuple(amounts)


@functools.lru_cache(maxsize=_ANALYSIS_CACHE)
def _analyse(raw: str, s: ContradictionsPolicy) -> _Analysis:
    features = _features(raw, s)
    return _Analysis(text=features.text, raw=raw[: max(0, s.max_chars)], s=s, features=features)


# -- the rules ---------------------------------------------------------------------------


def _same_subject(a: frozenset[str], b: frozenset[str], *, allow_empty: bool = False) -> bool:
    """One context holds the other (the shorter one says less, not something else),
    and the longer one does not name a scope the shorter lacks ("the docs build")."""
    if not a or not b:
        return allow_empty and not a and not b
    if not (a <= b or b <= a):
        return False
    return not _scopes_differ(a, b)


def _scopes_differ(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two contexts name different scopes ("the docs build"; "api" and
    "backend" are one)."""
    if (a ^ b).isdisjoint(_SCOPE_STEMS):
        return False
    return {_SCOPE_OF_STEM[w] for w in a & _SCOPE_STEMS} != {_SCOPE_OF_STEM[w] for w in b & _SCOPE_STEMS}


def _one_slot(x: _Amount, y: _Amount, distance: int) -> bool:
    """Whether two amounts of one kind say how much of the same thing: one context
    holds the other (:func:`_same_subject`), or they share a word at most
    ``distance`` words from each and neither names a scope the other lacks."""
    if _same_subject(x.context, y.context, allow_empty=True):
        return True
    # a shared word near each amount ("... [a photo of two children] We always look
    # forward to our family camping trip": not what "two" counts)
    shared = _near(x, distance) & _near(y, distance)
    if not shared or _scopes_differ(x.context, y.context):
        return False
    # "the request timeout" and "the connect timeout": a shared word that each side
    # qualifies with a word of its own before it names two things
    mine, theirs = _qualifiers(x.about, shared), _qualifiers(y.about, shared)
    return not any(mine.get(word, frozenset()) - shared and theirs[word] - shared for word in theirs)


def _near(amount: _Amount, distance: int) -> frozenset[str]:
    """The stems of an amount's context words at most ``distance`` words from it (and
    those its form gave it: "timeout" for "give up after")."""
    words = amount.about.split()
    if "#" not in words:
        return amount.context
    at = words.index("#")
    near = {_stem(w) for w in words[max(0, at - distance) : at + distance + 1] if w not in ("_", "#")}
    return frozenset(near | (amount.context - {_stem(w) for w in words}))


def _qualifiers(about: str, shared: frozenset[str]) -> dict[str, frozenset[str]]:
    """For each shared word in ``about`` (stemmed), the stems just before it (not a
    word outside the context: "_")."""
    stems = [_stem(w) for w in about.split()]
    out: dict[str, set[str]] = {}
    for before, stem in itertools.pairwise(stems):
        if stem in shared and before not in ("_", "#"):
            out.setdefault(stem, set()).add(before)
    return {word: frozenset(value) for word, value in out.items()}


def _closeness(x: frozenset[str], y: frozenset[str]) -> float:
    return len(x & y) / len(x | y) if x | y else 1.0


def _other_scopes(a: _Analysis, b: _Analysis) -> bool:
    return bool(a.scope - b.scope) and bool(b.scope - a.scope)


def _other_people(a: _Analysis, b: _Analysis) -> bool:
    """Two subjects: the texts name different people besides the speaker (a rule
    that reads no subject of its own: the speaker's car is not the partner's)."""
    return a.people != b.people


def _rule_correction(a: _Analysis, b: _Analysis, s: ContradictionsPolicy) -> Verdict | None:
    """``b`` corrects away what ``a`` affirms."""
    # b's features first: a text with no correction pattern's words corrects nothing
    if not b.features.correcting or a.negations:
        return None
    for c in b.corrections:
        if any(c.away_words & own.away_words for own in a.corrections):
            continue  # both say it is gone
        # the one who does it is said too: "quit smoking" corrects "is a smoker"
        said = all(w in a.mentions or w + "er" in a.mentions for w in c.away_words)
        if said and not (c.own_words & a.mentions):
            evidence = f"{c.away} corrected to {c.to}" if c.to else f"no longer {c.away}"
            return Verdict("correction", evidence, s.score_correction)
    return None


def _compatible(x: frozenset[str], y: frozenset[str]) -> bool:
    return bool(x & y) or any(frozenset({u, v}) in _COMPATIBLE for u in x for v in y)


def _rule_attribute(a: _Analysis, b: _Analysis, s: ContradictionsPolicy) -> Verdict | None:
    if _other_scopes(a, b) or _other_people(a, b):
        return None
    for attribute in sorted(a.settings.keys() & b.settings.keys()):
        x, y = a.settings[attribute], b.settings[attribute]
        if not _compatible(x, y):
            return Verdict(
                "attribute", f"{attribute}: {', '.join(sorted(x))} vs {', '.join(sorted(y))}", s.score_attribute
            )
    for attribute in sorted(a.settings.keys() & b.denied.keys()):
        both = a.settings[attribute] & b.denied[attribute]
        if both and not b.settings.get(attribute, frozenset()) & both:
            said = ", ".join(sorted(both))
            return Verdict("attribute", f"{attribute}: {said} vs not {said}", s.score_attribute)
    return None


def _equal(x: _Amount, y: _Amount, s: ContradictionsPolicy) -> bool:
    if isinstance(x.value, float) and isinstance(y.value, float):
        scale = max(abs(x.value), abs(y.value), 1e-12)
        return abs(x.value - y.value) <= s.amount_tolerance * scale
    return x.value == y.value


def _counted_plain(x: _Amount, y: _Amount) -> bool:
    """A number without a unit and a count of a thing ("pool size is 20", "50
    connections"): one kind when the bare number's context names the thing counted,
    or they share two words."""
    plain, counted = (x, y) if x.kind == "plain" else (y, x)
    if plain.kind != "plain" or not counted.kind.startswith("count:"):
        return False
    if not isinstance(plain.value, float) or not isinstance(counted.value, float):
        return False
    return counted.kind[6:] in plain.context or len(plain.context & counted.context) >= 2


def _lacks(t: _Analysis, part: str) -> bool:
    """Whether ``part`` of ``t``'s analysis is made already, and empty: a rule that
    needs it on both sides does not make the other side's (a memory scanned against
    its neighbours: its own is made once)."""
    return part in t.__dict__ and not t.__dict__[part]


def _rule_number(a: _Analysis, b: _Analysis, s: ContradictionsPolicy) -> Verdict | None:
    if _other_scopes(a, b) or _other_people(a, b) or _lacks(a, "amounts") or _lacks(b, "amounts"):
        return None
    for x in a.amounts:
        # y is compared with x unless x's own text has an amount closer to y's context
        # ("3.11 is required; 3.12 is tested in CI": 3.12 is about CI)
        comparable = [
            y
            for y in b.amounts
            if (y.kind == x.kind or _counted_plain(x, y))
            and _one_slot(x, y, s.shared_word_distance)
            and not any(
                z.kind == x.kind and _closeness(z.context, y.context) > _closeness(x.context, y.context)
                for z in a.amounts
            )
        ]
        if x.kind == "plain":
            comparable = [y for y in comparable if x.context and y.context]
        if comparable and not any(_equal(x, y, s) for y in comparable):
            y = comparable[0]
            shared = x.context & y.context
            subject = " ".join(w for w in x.about.split() if _stem(w) in shared) or x.kind
            return Verdict("number", f"{subject}: {x.shown} vs {y.shown}", s.score_number)
    return None


def _opposed(
    a: _Polarity, b: _Polarity, s: ContradictionsPolicy, *, loose: bool = True, terse: bool = False
) -> Verdict | None:
    if a.negations % 2 == b.negations % 2 or not a.content or not b.content:
        return None
    if a.content.isdisjoint(b.content):
        return None  # each says something the other does not, and nothing in common (below)
    # each says something the other does not: another object ("run ruff" / "run mypy")
    another = bool(a.content - b.content) and bool(b.content - a.content)
    sides_a = {i: (side, w) for i, side, w in a.opposites}
    sides_b = {i: (side, w) for i, side, w in b.opposites}
    # a pair used on both sides by one text ("enabled here, disabled there") decides nothing
    if len(sides_a) != len(a.opposites) or len(sides_b) != len(b.opposites):
        return None
    flipped = sorted(i for i in sides_a.keys() & sides_b.keys() if sides_a[i][0] != sides_b[i][0])
    overlap = len(a.content & b.content) / len(a.content | b.content)
    if (
        loose
        and flipped
        and a.content & b.content
        and (
            not another
            or (terse and _one_lead(a, b) and sides_a[flipped[0]][1] in _STATE_OPPOSITES and not _scoped_apart(a, b))
        )
    ):
        # two opposite words of one pair ("synchronous" / "asynchronously") on one
        # subject, one side saying more about it: fewer words suffice; each saying
        # more, when they are single sentences that begin with the same word and the
        # words say what state it is in ("Dependabot is enabled for all repositories"
        # / "Dependabot was switched off after the complaints"; not "Ravi passed his
        # math exam" / "Ravi failed his driving test")
        evidence = f"{sides_a[flipped[0]][1]} vs {sides_b[flipped[0]][1]}"
        return Verdict("opposite", evidence, round(s.score_opposite * max(overlap, s.opposite_overlap), 3))
    negated, plain = (a, b) if a.negations % 2 else (b, a)

    def denial() -> str:
        word = next((w for w in negated.words if w in _NEGATIONS or w in _NEGATIVE_SIDE), "not")
        shared = [w for w in plain.words if _stem(w) in negated.content and w not in _STOP]
        return f"{' '.join(shared[:4])}: negated by '{word}'"

    if (
        loose
        and negated.denies
        and negated.content <= plain.content
        and len(plain.content - negated.content) <= s.denied_rest
        and negated.content - _GENERIC_STEMS
        and (terse or len(negated.content) >= s.opposite_min_words or not _TERMS.keys().isdisjoint(negated.words))
    ):
        # the negated side says nothing but what the other affirms, which says little
        # more ("pytest is not allowed here" / "we write our tests with pytest"); one
        # word only in two one-sentence texts or when it names a tool (not "never give
        # up" in a chat turn); and no opposite word the two use alike
        # ("asynchronous" / "async") is what negates it
        if not any(sides_a[i][0] == sides_b[i][0] for i in sides_a.keys() & sides_b.keys()):
            return Verdict("opposite", denial(), round(s.score_opposite * max(overlap, s.opposite_overlap), 3))
    if len(a.content) < s.opposite_min_words or len(b.content) < s.opposite_min_words:
        return None
    if overlap < s.opposite_overlap or another:
        return None
    evidence = f"{sides_a[flipped[0]][1]} vs {sides_b[flipped[0]][1]}" if flipped else denial()
    return Verdict("opposite", evidence, round(s.score_opposite * overlap, 3))


_SCOPING = frozenset("for in on within across".split())


def _scoped_apart(a: _Polarity, b: _Polarity) -> bool:
    """Does each say where it holds, in words the other does not ("enabled for
    images" / "disabled for HTML pages")?"""
    where = []
    for side in (a, b):
        at = next((i for i, w in enumerate(side.words) if w in _SCOPING), None)
        where.append(frozenset() if at is None else frozenset(_stem(w) for w in side.words[at + 1 :]) & side.content)
    return bool(where[0]) and bool(where[1]) and where[0].isdisjoint(where[1])


def _one_lead(a: _Polarity, b: _Polarity) -> bool:
    """Do the two begin with the same content word (their subject)?"""
    first = [next((_stem(w) for w in side.words if _stem(w) in side.content), None) for side in (a, b)]
    return first[0] is not None and first[0] == first[1]


def _one_sentence(text: str) -> bool:
    return _SENTENCE_END.search(text.rstrip(" .!?\n")) is None


def _rule_opposite(a: _Analysis, b: _Analysis, s: ContradictionsPolicy) -> Verdict | None:
    # the units _opposed turns away at once (too few words) are left out first
    loose = not _other_people(a, b) and not _other_scopes(a, b)
    terse = a.features.one_sentence and b.features.one_sentence
    least = 1 if loose else s.opposite_min_words
    ys = [y for y in b.units if len(y.content) >= least]
    if not ys:
        return None
    for x in a.units:
        if len(x.content) < least:
            continue
        for y in ys:
            # (and those with no word in common, _opposed's next test)
            if x.negations % 2 != y.negations % 2 and not x.content.isdisjoint(y.content):
                verdict = _opposed(x, y, s, loose=loose, terse=terse)
                if verdict is not None:
                    return verdict
    return None


def _abbreviates(x: str, y: str) -> bool:
    """Is one of two values the initials of the other ("nyc", "new york city")?"""
    short, long = sorted((x.split(), y.split()), key=len)
    return len(short) == 1 and len(long) > 1 and short[0] == "".join(w[0] for w in long)


def _rule_value(a: _Analysis, b: _Analysis, s: ContradictionsPolicy) -> Verdict | None:
    if a.negations or b.negations or _other_scopes(a, b):
        return None
    for x in a.claims:
        for y in b.claims:
            if (
                x.subject == y.subject
                and not (x.value & y.value)
                and not _abbreviates(x.shown_value, y.shown_value)
                and not (x.value & b.content and y.value & a.content)
                and not (x.relation and y.relation and x.relation != y.relation)
            ):
                return Verdict("value", f"{x.shown_subject}: {x.shown_value} vs {y.shown_value}", s.score_value)
    return None


def _tells_the_change(t: _Analysis, change: _Change, state: str) -> bool:
    """``t`` itself says ``change``'s thing was also in ``state`` ("lost his job and
    found a new one"): it tells the story, it does not contradict it."""
    return any(
        z.kind == change.kind and z.state == state and (z.head in change.thing or change.head in z.thing)
        for z in t.changes
    )


def _rule_state(a: _Analysis, b: _Analysis, s: ContradictionsPolicy) -> Verdict | None:
    """The same holder's same thing is in two states that exclude each other: got and
    lost, sought and owned, passed and failed."""
    if _other_scopes(a, b) or _lacks(a, "changes") or _lacks(b, "changes"):
        return None
    for x in a.changes:
        for y in b.changes:
            if (
                x.kind == y.kind
                and (x.state, y.state) in _EXCLUSIVE
                and ((x.holder & y.holder) or not (x.holder or y.holder))
                and (x.head in y.thing or y.head in x.thing)
                # "a new test" / "a flaky test": each says what the other does not
                and (x.thing <= y.thing or y.thing <= x.thing)
                # "dropped Python 2" / "added Python 3.12" are two things
                and not any(_DIGIT.search(w) for w in x.thing ^ y.thing)
                and not _tells_the_change(a, x, y.state)
                and not _tells_the_change(b, y, x.state)
            ):
                thing = x.head if x.head in y.thing else y.head
                return Verdict("state", f"{thing}: {x.shown} vs {y.shown}", s.score_state)
    return None


def _rule_name(a: _Analysis, b: _Analysis, s: ContradictionsPolicy) -> Verdict | None:
    """Two one-sentence statements of one activity in nearly the same words, each
    with a name the other lacks: two answers to where or with what it is done."""
    if a.negations or b.negations or _other_scopes(a, b):
        return None
    own_a = [n for n in a.names if not n & b.mentions]
    own_b = [n for n in b.names if not n & a.mentions]
    if len(own_a) != 1 or len(own_b) != 1:
        return None
    shared = a.mentions & b.mentions
    if len(shared) < s.name_shared or shared <= _GENERIC_STEMS:
        return None
    rest_a = a.mentions - b.mentions - own_a[0] - _GENERIC_STEMS
    rest_b = b.mentions - a.mentions - own_b[0] - _GENERIC_STEMS
    if len(rest_a) + len(rest_b) > s.name_rest:
        return None
    return Verdict("name", f"{' '.join(sorted(own_a[0]))} vs {' '.join(sorted(own_b[0]))}", s.score_name)


def _statuses(clauses: Sequence[str]) -> tuple[_Status, ...]:
    out: list[_Status] = []
    for clause in clauses:
        words = _words(clause)
        if _STATUS.keys().isdisjoint(words) or any(w in _NEGATIONS for w in words):
            continue
        for i, w in enumerate(words):
            hit = _STATUS.get(w)
            following = words[i + 1] if i + 1 < len(words) else ""
            if hit is None or (following and following not in _STATUS_NEXT):
                continue
            holder = frozenset(
                _stem(v) for v in words[:i] if v not in _STOP and v not in _STATUS_FILLER and not v.endswith("ly")
            )
            out.append(_Status(hit[0], hit[1], holder, w))
    return tuple(out)


def _rule_status(a: _Analysis, b: _Analysis, s: ContradictionsPolicy) -> Verdict | None:
    """One person in two states of a kind that hold one at a time: "John is married" /
    "John got divorced last year", "I'm single" / "I'm engaged to Chris"."""
    for x in a.statuses:
        for y in b.statuses:
            if x.kind == y.kind and x.value != y.value and x.holder == y.holder:
                if any(z.kind == x.kind and z.value == y.value for z in a.statuses):
                    continue  # the text tells both ("divorced and married again")
                if any(z.kind == y.kind and z.value == x.value for z in b.statuses):
                    continue
                return Verdict("status", f"{x.kind}: {x.shown} vs {y.shown}", s.score_status)
    return None


_RULES = (
    _rule_correction,
    _rule_attribute,
    _rule_number,
    _rule_opposite,
    _rule_value,
    _rule_state,
    _rule_name,
    _rule_status,
)

# what every claim of the value rule holds (see _CLAIM and _CLAIM_COLON)
_POLAR = _NEGATIONS | _NEGATIVE_SIDE
_COPULA = lazy(
    r"\b(?:is|are|uses|use|lives in|live in|runs on|run on|moved to|moves to|relocated to|goes to|go to|works as|"
    r"work as|been|based in|grew up in|raised in|born in|work at|work for|working at|working for|working as|"
    r"switched|switching|migrated|migrating|keep|keeps|store|stores|host|hosts|track|tracks)\b|[:=]"
    # a doer's claim (_CLAIM_DOER): one of its subjects, then a preposition
    r"|\b(?:we|i|they|team|user|users)\s.*\b(?:with|using|via|in|on)\s|\b(?:owns|maintains|leads)\s"
)


class _Features:
    """What a text holds that some rule needs: a pair whose features allow no rule
    is not analysed (most neighbours of a memory). Each feature is found when first
    read, and kept: the checks below read the side known to lack a feature first
    (a memory compared with its neighbours, say), so that the other side's is
    never found when it cannot matter."""

    __slots__ = ("__dict__", "present", "raw", "s", "text", "words")

    def __init__(self, raw: str, s: ContradictionsPolicy) -> None:
        self.raw, self.s = raw, s
        self.text = _clean(raw, s.max_chars)
        self.words = _words(self.text)
        self.present = frozenset(self.words)

    @_once
    def clauses(self) -> tuple[str, ...]:
        return tuple(_clauses(self.text, self.s))

    @_once
    def one_sentence(self) -> bool:
        return _one_sentence(self.text)

    @_once
    def claims(self) -> tuple[_SubjectValue, ...]:
        """Its claims ("S is V", see _claims)."""
        return _text_claims(self.text, self.clauses, self.s)

    @_once
    def attributes(self) -> frozenset[str]:
        """The settings it names a value of."""
        return frozenset(attribute for _i, (attribute, _value) in _known_values(self.words))

    @_once
    def amounts(self) -> bool:
        """A digit or an amount word."""
        return _may_amount(self.text, self.present)

    @_once
    def amount_words(self) -> frozenset[str]:
        """Its words (and parts of hyphenated ones) that may make a clause without a
        digit state an amount (see _may_amount)."""
        parts = frozenset(_parts(self.present)) if "-" in self.text else self.present
        return (_AMOUNT_WORDS & parts) | (_SINGLE_UNITS & self.present)

    @_once
    def odd(self) -> tuple[frozenset[str], ...]:
        """The content of its opposite-rule units negated an odd number of times."""
        if self.present.isdisjoint(_POLAR):
            return ()
        odd = []
        for unit in _unit_texts(self.text, self.clauses, self.s):
            if not _POLAR.isdisjoint(_words(unit)):
                polarity = _polarity(unit)
                if polarity.negations % 2 and polarity.content:
                    odd.append(polarity.content)
        return tuple(odd)

    @_once
    def content(self) -> frozenset[str]:
        """Every unit's content words, and more."""
        return frozenset(map(_stem, self.present - _STOP - _NEGATIONS))

    @_once
    def correcting(self) -> bool:
        """A correction pattern's words."""
        return not _CORRECTION_WORDS.isdisjoint(self.present) and _ANY_CORRECTION.search(self.text) is not None

    @_once
    def subjects(self) -> frozenset[frozenset[str]]:
        """The subjects of its claims."""
        return frozenset(c.subject for c in self.claims)

    @_once
    def states(self) -> frozenset[tuple[str, str]]:
        """(kind, state) of every change of state it names."""
        if _STATE_FIRST.isdisjoint(self.present):
            return frozenset()
        return frozenset(hit for _i, _j, hit in _state_phrases(self.words))

    @_once
    def excluded(self) -> frozenset[tuple[str, str]]:
        """The states that exclude one of those."""
        return frozenset((kind, other) for kind, state in self.states for mine, other in _EXCLUSIVE if mine == state)

    @_once
    def names(self) -> frozenset[str]:
        """The words of the names a one-sentence text gives (see _names)."""
        return frozenset(w for name in _names(self.raw, self.text, self.s) for w in name)

    @_once
    def statuses(self) -> frozenset[str]:
        """The kinds of a person's state its words name (see _STATUS)."""
        return frozenset(_STATUS[w][0] for w in self.present if w in _STATUS)

    @_once
    def sides(self) -> frozenset[tuple[int, int]]:
        """The (opposite pair, side) of each opposite word it says."""
        return frozenset(side for w in _OPPOSITE_WORDS.intersection(self.present) for side in _OPPOSITE_SIDES[w])

    def lacks(self, feature: str) -> bool:
        """Whether ``feature`` was found already, and is empty."""
        return feature in self.__dict__ and not self.__dict__[feature]


def _may_claim(text: str) -> bool:
    """Whether ``text`` can hold claims ("S is V"): it is one sentence (in a text of
    several, one is a remark among others, not a setting) and has _COPULA's words
    (every claim's words are)."""
    return _one_sentence(text) and _COPULA.search(text) is not None


def _text_claims(text: str, clauses: Sequence[str], s: ContradictionsPolicy) -> tuple[_SubjectValue, ...]:
    """The claims of ``text``, whose clauses are ``clauses``."""
    if not _may_claim(text):
        return ()
    return tuple(c for clause in clauses if _words(clause) for c in _claims(clause, s))


# the correction patterns' first tests as one pass over a text: those that begin at a
# word boundary under one \b (the same matches; the engine then tests a boundary once
# a position, not once a pattern)
_AT_WORD = [first.pattern[2:] for _pattern, first, _leads in _CORRECTIONS if first.pattern.startswith(r"\b")]
_ELSEWHERE = [first.pattern for _pattern, first, _leads in _CORRECTIONS if not first.pattern.startswith(r"\b")]
_ANY_CORRECTION = lazy("|".join([rf"\b(?:{'|'.join(_AT_WORD)})", *_ELSEWHERE]))


@functools.lru_cache(maxsize=_FEATURE_CACHE)
def _features(raw: str, s: ContradictionsPolicy) -> _Features:
    return _Features(raw, s)


def _both(x: _Features, y: _Features, feature: str) -> tuple[Any, Any] | None:
    """``feature`` of ``x`` and of ``y`` when both have it (not empty), else None;
    the side known to lack it is read first, so the other's is not found."""
    first, second = (y, x) if y.lacks(feature) and not x.lacks(feature) else (x, y)
    one = getattr(first, feature)
    if not one:
        return None
    other = getattr(second, feature)
    if not other:
        return None
    return (one, other) if first is x else (other, one)


def _may_oppose(x: _Features, y: _Features, s: ContradictionsPolicy) -> bool:
    """A unit of ``x`` negated an odd number of times whose words ``y`` holds enough
    of for the opposite rule's overlap (which needs that much of the unit's words in
    one unit of ``y``, so in ``y``)."""
    if any(len(unit & y.content) >= s.opposite_overlap * len(unit) for unit in x.odd):
        return True
    # opposite words of one pair on the two sides, and a word in common
    return any((i, 1 - side) in y.sides for i, side in x.sides) and not x.content.isdisjoint(y.content)


def _excludes(x: _Features, y: _Features) -> bool:
    """A state ``x`` names excludes one ``y`` names; the side known to name none is
    read first."""
    if x.lacks("states") or y.lacks("states"):
        return False
    if "states" in y.__dict__:
        return bool(y.states) and not x.excluded.isdisjoint(y.states)
    return bool(x.excluded) and not x.excluded.isdisjoint(y.states)


def _may_name(x: _Features, y: _Features, s: ContradictionsPolicy) -> bool:
    """Each text has a name the other does not say, they share enough words, and say
    little else (the name rule's conditions, on words that hold the rule's)."""
    if _both(x, y, "names") is None or x.names <= y.content or y.names <= x.content:
        return False
    if len(x.content & y.content) < s.name_shared:
        return False
    rest = len(x.content - y.content - x.names - _GENERIC_STEMS) + len(y.content - x.content - y.names - _GENERIC_STEMS)
    return rest <= s.name_rest


def _could(x: _Features, y: _Features, s: ContradictionsPolicy) -> tuple[bool, ...]:
    """For each rule of :data:`_RULES`, whether it could find ``x``'s and ``y``'s
    texts contradicting: each needs what is checked here (the correction rule a
    correction, the attribute rule the same setting on both sides, the number rule
    amounts on both, the opposite rule a negated unit on one side mostly said on
    the other, the value rule claims about one subject on both, the state rule
    states that exclude each other, the name rule names on both and words in
    common, the status rule a person's state of one kind on both)."""
    attributes, subjects, statuses = _both(x, y, "attributes"), _both(x, y, "subjects"), _both(x, y, "statuses")
    return (
        x.correcting or y.correcting,
        attributes is not None and bool(attributes[0] & attributes[1]),
        _both(x, y, "amounts") is not None,
        _may_oppose(x, y, s) or _may_oppose(y, x, s),
        subjects is not None and not subjects[0].isdisjoint(subjects[1]),
        _excludes(x, y),
        _may_name(x, y, s),
        statuses is not None and bool(statuses[0] & statuses[1]),
    )


def detect(a: str, b: str, *, settings: ContradictionsPolicy = DEFAULT) -> Verdict | None:
    """A :class:`Verdict` when ``a`` and ``b`` contradict each other, else ``None``.
    Never raises on two ``str``; reads at most ``settings.max_chars`` of each."""
    if not isinstance(a, str) or not isinstance(b, str):
        return None
    may = _could(_features(a, settings), _features(b, settings), settings)
    if not any(may):
        return None
    x, y = _analyse(a, settings), _analyse(b, settings)
    if x.text == y.text or not x.text or not y.text:
        return None
    # Only the rules whose needs both texts meet: the parts of the analyses the
    # others would read are never made.
    for rule, could in zip(_RULES, may):
        if not could:
            continue
        verdict = rule(x, y, settings) or rule(y, x, settings)
        if verdict is not None:
            return verdict
    return None


def correction(text: str, *, settings: ContradictionsPolicy = DEFAULT) -> str | None:
    """What an explicit correction corrects away, normalized: ``"postgres"`` for
    "Actually, the database is MySQL, not Postgres"; ``"jenkins"`` for "we no longer
    use Jenkins"; ``None`` when ``text`` corrects nothing."""
    if not isinstance(text, str):
        return None
    found = _analyse(text, settings).corrections
    return found[0].away if found else None
