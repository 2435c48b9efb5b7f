"""Heuristic extraction of long-term memories from one conversation turn.

Optimistic extraction: cheap regex rules run on every turn and propose candidate
memories; an optional LLM can add to them (``run_llm``, ``combine``). The
rules cover mem0's fact categories (identity, preferences, personal details, plans,
work, health, activities, events) plus what a coding agent hears about a project:
project facts, instructions, decisions and state changes.

Each fact yields one :class:`Candidate`, which lists every rule that matched it: a
sentence is one candidate, unless its clauses (joined by ";", ",", "and", "but",
", also") state two facts or more, one of them with a slot ("We use pytest for the
tests and the database is Postgres"): then each such clause is one, so that a
correction supersedes only the fact it corrects. Self-introductions give the
speaker's name and team ("Hi, I'm Dana, lead on billing"; "I moved to the
payments team" moves the team). When the rules can tell that a clause sets a
*single-valued* attribute ("I prefer tabs", "the database is Postgres") the
candidate carries a ``slot``
(subject, attribute) and a normalized ``value``, so that the caller can supersede the
old value of the same slot. A negated setting ("I no longer
use vim") keeps the slot with the value ``"not vim"``: it differs from ``"vim"``, so
the old memory is superseded, and it names what was dropped.

The extractor is pure Python (its word sets come from the Rust tokenizer), never
raises on a ``str`` and looks at no more than ``[longterm] extract_scan_chars``
characters, so it can sit on the write path.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass

from .._core import tokenize
from ..config import LongtermPolicy
from ..pattern import lazy
from ..plain import Plain
from .vocabulary import ATTR_ALIASES, LANGUAGES, VOCAB, VOCAB_RE, known_value

__all__ = [
    "KINDS",
    "CATEGORIES",
    "Candidate",
    "extract",
    "normalize",
    "token_set",
    "jaccard",
    "run_llm",
    "combine",
]

KINDS = ("fact", "decision", "episode")
CATEGORIES = (
    "identity",
    "preference",
    "personal",
    "plan",
    "professional",
    "health",
    "activity",
    "event",
    "state_change",
    "project",
    "decision",
    "instruction",
)
_MAX_VALUE_WORDS = 6
_MIN_FACT_WORDS = 3  # a clause without a slot is a fact of its own from this many words
_DEFAULTS = LongtermPolicy()


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Candidate(Plain):
    """A memory proposed by the extractor, not yet stored."""

    content: str
    """The sentence or clause that matched, whitespace-collapsed, as said (at most
    ``[longterm] extract_content_chars`` characters); a bare setting value said after another is said with the
    other's verb ("We use pytest and Postgres" -> "We use Postgres.")."""
    kind: str
    """One of KINDS."""
    category: str
    """One of CATEGORIES: the category of the most specific rule that matched."""
    slot: tuple[str, str] | None
    """(subject, attribute) of a single-valued attribute the sentence sets, else None."""
    value: str | None
    """The slot's normalized value; None iff slot is None."""
    rules: tuple[str, ...]
    """Sorted ids of every rule that matched ("llm" for LLM candidates)."""
    importance: int
    """1 for instructions, decisions and identity, else 0."""
    tags: tuple[str, ...]
    """Sorted; the categories of every matched rule (so at least ``category``)."""
    links: tuple[tuple[str, str], ...] = ()
    """For a decision an LLM extractor gave reasons for: (reason, consequence or
    constraint, its text), the nodes of its causal chain."""


# ---------------------------------------------------------------------------
# normalization (dedup) helpers

_APOSTROPHES = lazy(r"['’`]")
_NON_WORD = lazy(r"[^\w\s]|_")
# Negations the tokenizer drops as stop words; they flip a statement, so they count.
_NEGATED = lazy(r"n['’]t\b|\b(?:not|no|nor|neither|cannot|without|against)\b", re.I)
_NEGATION_TOKEN = "not"  # a stop word: no text yields it as a token
# A secret as aircher_mem.redact writes it: one word (the tokenizer would split its
# kind and hash into several).
_REDACTED = lazy(r"\[REDACTED:[a-z_]+:[0-9a-f]{12}\]")


def normalize(text: str) -> str:
    """Lower case, apostrophes dropped, other punctuation replaced by spaces,
    whitespace collapsed: ``"Don't  touch main!"`` -> ``"dont touch main"``."""
    text = _APOSTROPHES.sub("", text.lower())
    return " ".join(_NON_WORD.sub(" ", text).split())


def token_set(text: str) -> frozenset[str]:
    """The content words of ``text`` as the lexical index sees them
    (``tokenize(text, stem=True)``: stemmed, identifiers split, stop words left
    out), plus ``"not"`` when it holds a negation the stop words drop
    ("n't", "not", "no", "nor", "neither", "cannot", "without", "against"):
    ``"Don't restart the servers"`` -> ``{"restart", "server", "not"}``. A redacted
    secret (``[REDACTED:<kind>:<hash>]``) is one token, the marker as written."""
    tokens = set(_REDACTED.findall(text))
    tokens.update(tokenize(_REDACTED.sub(" ", text) if tokens else text, stem=True))
    if _NEGATED.search(text):
        tokens.add(_NEGATION_TOKEN)
    return frozenset(tokens)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """``|a & b| / |a | b|``; 0.0 when both are empty."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


# ---------------------------------------------------------------------------
# values

# Where a value phrase ends: clause punctuation or a conjunction / adverb.
_CUT = lazy(
    r"[,;!?()\"“”]|\.(?=\s|$)|\s(?:-|–|—|because|since|but|and|so|which|who|that|as|though|although|when|while|"
    r"if|for|with|now|too|anymore|any more|again|still|instead|yesterday|today|tonight|tomorrow|last|next|"
    r"these days|nowadays|currently|from now on)(?=\s|$|[,.;!?])",
    re.I,
)
_LEADING_ARTICLE = lazy(r"^(?:the|a|an)\s+", re.I)
_VALUE_TRIM = "`'\"“”‘’.,:;!?()[]{}<> "
_NEGATION = lazy(r"n't\b|\b(?:not|no longer|never|against|stopped|quit)\b", re.I)


def _value(phrase: str) -> str | None:
    """Normalize a value phrase: cut at the end of its clause, lower case, leading
    article and surrounding punctuation trimmed. None if empty or too long to be a
    setting's value."""
    m = _CUT.search(phrase)
    if m is not None:
        phrase = phrase[: m.start()]
    phrase = _LEADING_ARTICLE.sub("", phrase.strip(_VALUE_TRIM)).strip(_VALUE_TRIM).lower()
    words = phrase.split()
    if not words or len(words) > _MAX_VALUE_WORDS:
        return None
    return " ".join(words)


def _attribute(phrase: str) -> str:
    """``"Default Branch"`` -> ``"default_branch"``."""
    name = "_".join(normalize(phrase).split())
    return ATTR_ALIASES.get(name, name)


# ---------------------------------------------------------------------------
# rules

_FIRST_SINGULAR = frozenset({"i", "my", "me", "mine", "myself", "i'm", "i've", "i'd", "i'll"})


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class _Ctx(Plain):
    first: str  # subject of a first person singular slot
    content_chars: int  # a candidate's content is cut to this many characters


_Slot = tuple[str, str, str]
_SlotFn = Callable[[re.Match[str], str, _Ctx], "_Slot | None"]


@dataclass(frozen=True, eq=False, repr=False)
class _Rule(Plain):
    id: str
    category: str
    kind: str
    importance: int
    keys: frozenset[str]  # words (or 5-letter word prefixes) of which one must occur: a cheap prefilter
    sources: tuple[str, ...]  # the patterns, compiled (case-insensitive) on the rule's first use
    slot: _SlotFn | None = None
    modifier: bool = False  # listed when it co-occurs with another rule, never alone
    user_only: bool = False  # not run on the assistant's turns (advice, plans, chit-chat)
    needs_person: bool = False  # the sentence must speak of I/me/my/we/our

    @functools.cached_property
    def patterns(self) -> tuple[re.Pattern[str], ...]:
        # not at import: compiling every rule's patterns took tens of milliseconds of
        # each process that opened the store, extracting or not
        return tuple(re.compile(p, re.I) for p in self.sources)


def _subject(word: str | None, ctx: _Ctx) -> str | None:
    if word is None:
        return None
    w = word.lower().replace("’", "'")
    if w in _FIRST_SINGULAR:
        return ctx.first
    return "project"


def _rest(m: re.Match[str], sentence: str) -> str:
    return sentence[m.end() : m.end() + 160]


def _group(m: re.Match[str], name: str) -> str | None:
    return m.groupdict().get(name)


def _fixed(attribute: str) -> _SlotFn:
    """Slot ``attribute`` with the value in group ``v`` (or after the match)."""

    def slot(m: re.Match[str], sentence: str, ctx: _Ctx) -> _Slot | None:
        subject = _subject(_group(m, "s"), ctx)
        raw = _group(m, "v")
        value = _value(raw if raw is not None else _rest(m, sentence))
        if subject is None or value is None:
            return None
        return subject, attribute, value

    return slot


def _setting(m: re.Match[str], sentence: str, ctx: _Ctx) -> _Slot | None:
    """A known setting value after the match: "I prefer tabs", "we use pnpm"."""
    subject = _subject(_group(m, "s"), ctx) or "project"
    rest = _rest(m, sentence)
    cut = _CUT.search(rest)
    obj = rest[: cut.start()] if cut is not None else rest
    lower = f" {obj.lower()}"
    # "from X to Y": the new value counts ("X over Y": the first one, found first).
    if " from " in lower and " to " in lower:
        obj = lower[lower.rfind(" to ") + 4 :]
    hit = known_value(obj)
    if hit is None:
        return None
    attribute, value = hit
    if _NEGATION.search(m.group(0)) or re.search(r"\bany ?more\b", rest, re.I):
        value = f"not {value}"
    return subject, attribute, value


def _generic(m: re.Match[str], sentence: str, ctx: _Ctx) -> _Slot | None:
    """ "the/our/my <attribute> is <value>"."""
    subject = _subject(_group(m, "s"), ctx)
    attribute = _attribute(_group(m, "a") or "")
    raw = _group(m, "v")
    if subject is None or not attribute or raw is None:
        return None
    hit = known_value(raw, attribute)
    value = hit[1] if hit is not None else _value(raw)
    return (subject, attribute, value) if value is not None else None


def _changed(m: re.Match[str], sentence: str, ctx: _Ctx) -> _Slot | None:
    """ "X changed to Y": a known setting, else the named attribute."""
    hit = _setting(m, sentence, ctx)
    if hit is not None:
        return hit
    if _group(m, "a") is None:
        return None
    rest = _rest(m, sentence)
    lower = rest.lower()
    to = lower.find("to ")
    value = _value(rest[to + 3 :]) if to >= 0 else None
    if value is None:
        return None
    return _subject(_group(m, "s"), ctx) or "project", _attribute(_group(m, "a") or ""), value


_FRONTEND = frozenset({"frontend", "front end", "ui", "client", "web app"})
_PROJECT_NOUNS = frozenset(
    "project repo repository codebase code app application backend server service cli library tool core engine".split()
)


def _language(m: re.Match[str], sentence: str, ctx: _Ctx) -> _Slot | None:
    """Only THE language of the project (or its frontend) is single-valued."""
    noun = normalize(_group(m, "n") or "").split()
    value = LANGUAGES.get((_group(m, "v") or "").lower())
    if noun == ["we"]:  # "we write the backend in Go", "we code in Rust"
        what = normalize(_group(m, "o") or "").split()
        noun = ["the", what[-1] if what and what[-1] not in ("everything", "it") else "project"]
    if value is None or len(noun) < 2:
        return None
    head = " ".join(noun[1:])
    if head in _FRONTEND:
        return "project", "frontend_language", value
    if head in _PROJECT_NOUNS:
        return "project", "language", value
    return None


def _me(attribute: str) -> _SlotFn:
    """Slot ``attribute`` of the speaker (whoever says it: "Dana here") with the
    value in group ``v``."""

    def slot(m: re.Match[str], sentence: str, ctx: _Ctx) -> _Slot | None:
        value = _value(_group(m, "v") or "")
        return (ctx.first, attribute, value) if value is not None else None

    return slot


def _team(m: re.Match[str], sentence: str, ctx: _Ctx) -> _Slot | None:
    """The speaker's team or area ("billing"); a known setting value ("I work on
    Linux") is not a team."""
    v = _group(m, "v") or ""
    if known_value(v) is not None:
        return None
    return _me("team")(m, sentence, ctx)


def _location(m: re.Match[str], sentence: str, ctx: _Ctx) -> _Slot | None:
    v = _group(m, "v") or ""
    if known_value(v) is not None:  # "I moved to MySQL" is not a place
        return None
    return _fixed("location")(m, sentence, ctx)


def _rule(
    rule_id: str,
    category: str,
    keys: str,
    *patterns: str,
    kind: str = "fact",
    importance: int = 0,
    slot: _SlotFn | None = None,
    modifier: bool = False,
    user_only: bool = False,
    needs_person: bool = False,
) -> _Rule:
    return _Rule(
        rule_id,
        category,
        kind,
        importance,
        frozenset(keys.split()),
        patterns,
        slot,
        modifier,
        user_only,
        needs_person,
    )


# Capitalized words (names, places) whatever the flags: "Boston", "New York City".
_CAP = r"(?-i:[A-Z][\w'.&-]*)(?: (?:(?-i:[A-Z][\w'.&-]*)|of|de|la))*"
_START = r"^(?:(?:please|also|and|but|so|oh|ok|okay|hey|btw|fyi|important|just|one more thing)[,:!]? )*"
_TIME_PAST = (
    r"\b(?:yesterday|last (?:night|week|weekend|month|year|summer|winter|spring|fall|autumn|time|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|\d{1,3}) "
    r"(?:days?|weeks?|months?|years?) ago|"
    r"on (?:the )?\d{1,2}(?:st|nd|rd|th)? (?:of )?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*|"
    r"on (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w* \d{1,2}(?:st|nd|rd|th)?|"
    r"in (?:19|20)\d\d|\d{4}-\d\d-\d\d|earlier this (?:week|month|year))\b"
)
_TIME_FUTURE = (
    r"\b(?:tomorrow|next (?:week|weekend|month|year|summer|winter|spring|fall|autumn|time|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|wed|thu|fri|sat|sun)|"
    r"later this (?:week|month|year)|this coming \w+|"
    r"in (?:a|two|three|a few|a couple of|\d{1,2}) (?:days|weeks|months|years))\b"
)
_PROJECT_SUBJECT = (
    r"we|ci|the (?:project|repo|repository|codebase|team|app|backend|frontend|service|server|build|ci)|"
    r"this (?:project|repo|repository|codebase)|"
    r"our (?:project|repo|codebase|team|app|backend|frontend|service|ci|build)"
)
_SETTING_HEADS = (
    r"branch|database|db|language|framework|formatter|linter|test runner|runner|package manager|editor|ide|"
    r"indentation|indent|version|port|shell|timezone|license|style guide|host|url|endpoint|registry|orm|queue|"
    r"cache|bundler|compiler|toolchain|runtime|stack|entrypoint|entry point|theme|font|model|provider|cloud|"
    r"target|environment|os|terminal|browser|email|username|handle|line length|max line length"
)

# A name in a self-introduction ("I'm Dana"): capitalized words that are no name
# ("I'm Sure", "I'm French", "Same here") are not taken for one.
_NAME = r"(?-i:[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?)"
_NOT_NAME = (
    r"(?!(?-i:(?:Sure|Fine|Not|Going|Looking|Here|There|Back|Done|Ready|Happy|Glad|Sorry|Good|Great|Okay|Ok|Just|So|"
    r"Very|Really|Also|Still|Now|Afraid|Aware|Excited|Tired|Busy|Free|Home|In|On|At|From|With|Working|Trying|"
    r"Thinking|Using|Getting|Having|Doing|Making|Taking|Leaving|Coming|Talking|Curious|Confused|Stuck|New|Late|"
    r"Right|Wrong|Interested|Certain|Positive|Well|Alright|All|Actually|Currently|The|An?|Same|Nothing|"
    r"Everything|Everyone|Someone|Anyone|Nobody|Somebody|It|This|That|Me|Us|Hi|Hello|Hey|Thanks|American|British|"
    r"English|French|German|Spanish|Italian|Canadian|Chinese|Japanese|Indian|Irish|Scottish|Australian|Mexican|"
    r"Brazilian|Dutch|Swedish|Russian|Polish|Korean|Jewish|Christian|Muslim|Catholic|Vegan|Vegetarian|Single|"
    r"Married|Divorced|Engaged|Gay|Trans|Old|Young|Retired|Pregnant)\b))"
)
_NAME_END = r"(?=\s*(?:[,.!;:)]|—|–|-\s|$)|\s+(?:and|here|from)\b)"
# A team or area ("billing", "the payments team"); words that name no team are not taken.
_TEAM = (
    r"(?P<v>(?!(?:the|it|this|that|them|things|stuff|something|everything|same|weekends?|(?:mon|tues|wednes|"
    r"thurs|fri|satur|sun)days?|a|an|my|our|his|her|their|your|tech|technical|team|project|projects|dev|"
    r"development|time|call|calls|meetings?|way|effort|charge|by|with|to|from|at|in|on|for|example|myself|home|"
    r"site)\b)[\w-]+(?: (?!(?:to|of|for|with|by|at|in|on|from)\b)[\w-]+){0,2}?)"
)
_CLAUSE_END = r"(?=\s*(?:[,.;!]|$)|\s+(?:and|but|now|these days|nowadays)\b)"

_SETTING_WORDS = " ".join(sorted({w for head in _SETTING_HEADS.split("|") for w in head.split()}))

_RULES: tuple[_Rule, ...] = (
    # --- instructions and constraints (said by the user)
    _rule(
        "instruction.never",
        "instruction",
        "never don't dont do should shouldn't must mustn't",
        _START + r"(?:never|don't|do not|dont)\b",
        r"\b(?:you|we) (?:should|must) (?:never|not)\b|\b(?:you|we) (?:shouldn't|mustn't)\b",
        importance=1,
        user_only=True,
    ),
    _rule(
        "instruction.always",
        "instruction",
        "always",
        _START + r"always\b",
        r"\b(?:you|we) (?:should|must) always\b",
        importance=1,
        user_only=True,
    ),
    _rule(
        "instruction.make_sure",
        "instruction",
        "sure ensure",
        _START + r"(?:make sure|be sure|ensure)\b",
        r"\b(?:you|we) (?:should|must) (?:always )?(?:make sure|ensure)\b",
        importance=1,
        user_only=True,
    ),
    _rule(
        "instruction.remember",
        "instruction",
        "remember keep note record reference",
        _START + r"(?:remember|keep in mind|note that|for the record|for future reference)\b",
        importance=1,
        user_only=True,
    ),
    _rule(
        "instruction.must",
        "instruction",
        "must mustn't required allowed",
        r"\b(?:you|we|all \w+|every \w+|commits?|code|tests?|changes|prs?|pull requests?|everything) "
        r"(?:must|mustn't|are required to|is required to|are not allowed to|is not allowed to)\b"
        r"(?! have\b|'ve\b| be so\b)",
        importance=1,
        user_only=True,
    ),
    _rule(
        "instruction.imperative",
        "instruction",
        "use run prefer avoid stick only put write follow stop",
        _START + r"(?:use|run|prefer|avoid|stick (?:to|with)|only use|put|write|follow|stop)\b",
        importance=1,
        slot=_setting,
        user_only=True,
    ),
    # --- decisions
    _rule(
        "decision.decided",
        "decision",
        "decided agreed concluded resolved decision",
        r"\b(?P<s>we|I|the team)(?:'ve| have| had)?(?: \w+)? (?:decided|agreed|concluded|resolved)\b",
        r"\b(?:the|our|my) decision (?:is|was)\b",
        kind="decision",
        importance=1,
        slot=_setting,
    ),
    _rule(
        "decision.chose",
        "decision",
        "chose picked selected went opted settled going go",
        r"\b(?P<s>we|I|the team)(?:'ve| have| had)?(?: \w+)? "
        r"(?:chose|picked(?! up)|selected|went with|opted for|settled on|are going with|will go with)\b",
        r"\b(?P<s>we)(?:'re|'ll) go(?:ing)? with\b",
        kind="decision",
        importance=1,
        slot=_setting,
    ),
    _rule(
        "decision.lets",
        "decision",
        "let's let lets",
        r"\b(?P<s>let's|let us|lets) (?:go with|use|stick with|stick to|switch to|move to|migrate to|pick|choose|"
        r"adopt|drop|standardi[sz]e on)\b",
        kind="decision",
        importance=1,
        slot=_setting,
    ),
    # --- identity
    _rule(
        "identity.name",
        "identity",
        "name name's called call i'm am here",
        r"\b(?P<s>my) name(?:'s| is) (?P<v>" + _CAP + ")",
        r"\b(?P<s>I)(?:'m| am) called (?P<v>" + _CAP + ")",
        r"\bcall (?P<s>me) (?P<v>" + _CAP + ")",
        r"\b(?P<s>I)(?:'m| am) " + _NOT_NAME + r"(?P<v>" + _NAME + r"(?: " + _NAME + r")?)" + _NAME_END,
        r"^(?:(?:hi|hello|hey)[,!]? )?" + _NOT_NAME + r"(?P<v>" + _NAME + r") here(?=\s*(?:[,.!;:]|—|–|-\s|$))",
        importance=1,
        slot=_me("name"),
    ),
    _rule(
        "identity.age",
        "identity",
        "old turned age yo y",
        r"\b(?P<s>I)(?:'m| am) (?:now )?(?P<v>\d{1,3}) (?:years? old|yo|y/o)\b",
        r"\b(?P<s>I) (?:just )?turned (?P<v>\d{1,3})\b",
        r"\b(?P<s>my) age is (?P<v>\d{1,3})\b",
        importance=1,
        slot=_fixed("age"),
    ),
    _rule(
        "identity.pronouns",
        "identity",
        "pronouns",
        r"\b(?P<s>my) pronouns are (?P<v>[a-z]+/[a-z]+(?:/[a-z]+)?)",
        r"\b(?P<s>I) use (?P<v>[a-z]+/[a-z]+) pronouns\b",
        importance=1,
        slot=_fixed("pronouns"),
    ),
    _rule(
        "identity.self",
        "identity",
        (
            "transgender trans nonbinary non binary gay lesbian bisexual queer asexual immigrant "
            "identify came journey identity transition"
        ),
        r"\b(?:I(?:'m| am)|as) an? (?:proud |openly )?(?:transgender|trans|non-?binary|gay|lesbian|bisexual|queer|"
        r"asexual|immigrant)\b",
        r"\bI identify as\b|\bI came out\b|\bmy (?:transgender|trans|gender) (?:journey|identity|transition)\b",
        importance=1,
        needs_person=True,
    ),
    # --- personal details
    _rule(
        "personal.location",
        "personal",
        "live living based reside moved relocated",
        r"\b(?P<s>I)(?:'m| am)? (?:now |currently |still )?(?:live|living|reside|based) in (?P<v>" + _CAP + ")",
        r"\b(?P<s>I)(?:'ve| have)? (?:just |recently )?(?:moved|relocated) to (?P<v>" + _CAP + ")",
        slot=_location,
    ),
    _rule(
        "personal.hometown",
        "personal",
        "from grew hometown home",
        r"\b(?P<s>I)(?:'m| am) (?:originally )?from (?P<v>" + _CAP + ")",
        r"\b(?P<s>I) grew up in (?P<v>" + _CAP + ")",
        r"\b(?P<s>my) home ?town is (?P<v>" + _CAP + ")",
        slot=_fixed("hometown"),
    ),
    _rule(
        "personal.birthday",
        "personal",
        "birthday born",
        r"\b(?P<s>my) birthday is (?:on )?(?P<v>[^,;!?]{1,40})",
        r"\b(?P<s>I) was born on (?P<v>[^,;!?]{1,40})",
        slot=_fixed("birthday"),
    ),
    _rule(
        "personal.relationship",
        "personal",
        "single married divorced engaged widowed separated relationship",
        r"\b(?P<s>I)(?:'m| am) (?:now |currently |still |happily )?(?:a )?(?P<v>single|married|divorced|engaged|"
        r"widowed|separated|in a relationship)\b",
        r"\b(?P<s>I) (?:just |recently )?got (?P<v>married|engaged|divorced)\b",
        slot=_fixed("relationship_status"),
        needs_person=True,
    ),
    _rule(
        "personal.family",
        "personal",
        (
            "wife husband partner spouse girlfriend boyfriend fianc kids kid children child son sons "
            "daughter daughters baby mom mum mother dad father parents brother brothers sister sisters "
            "sibli family fam grand cousin cousins aunt uncle niece nephew twin twins"
        ),
        r"\b(?:my|our|the) (?:wife|husband|partner|spouse|girlfriend|boyfriend|fianc[ée]e?|kids?|children|child|"
        r"sons?|daughters?|baby|mom|mum|mother|dad|father|parents|brothers?|sisters?|siblings?|family|fam|"
        r"grandma|grandmother|grandpa|grandfather|grandparents|cousins?|aunt|uncle|niece|nephew|twins?)\b",
        r"\bI have (?:a |an |two |three |four |\d{1,2} )?(?:kids|children|sons?|daughters?|brothers?|sisters?|"
        r"siblings)\b",
        needs_person=True,
        user_only=True,
    ),
    _rule(
        "personal.friends",
        "personal",
        "friend friends",
        r"\bmy (?:best |close |old |good )?friends?\b",
        user_only=True,
    ),
    _rule(
        "personal.pet",
        "personal",
        (
            "dog dogs cat cats puppy puppies kitten kittens pet pets hamster hamsters parrot parrots "
            "bird birds fish rabbit rabbits bunny horse horses turtle turtles guinea"
        ),
        r"\b(?:my|our) (?:dogs?|cats?|pupp(?:y|ies)|kittens?|pets?|hamsters?|parrots?|birds?|fish|rabbits?|bunny|"
        r"horses?|turtles?|guinea pigs?)\b",
        r"\bI (?:have|adopted|got) (?:a |an |two |three |\d{1,2} )?(?:dogs?|cats?|pupp(?:y|ies)|kittens?|pets?|"
        r"hamsters?|parrots?|rabbits?|horses?)\b",
        user_only=True,
    ),
    # --- professional
    _rule(
        "professional.job_title",
        "professional",
        "work job role position title i'm am",
        r"\b(?P<s>I)(?:'m| am) (?:now |currently |still )?(?:a|an) (?P<v>(?:[\w-]+ ){0,2}(?:engineer|developer|"
        r"programmer|designer|manager|teacher|nurse|doctor|lawyer|banker|student|scientist|analyst|counselor|"
        r"counsellor|therapist|writer|artist|consultant|architect|researcher|accountant|chef|musician|photographer|"
        r"dancer|firefighter|pilot|professor|intern|freelancer|entrepreneur|founder|ceo|cto|mechanic|electrician|"
        r"plumber|pharmacist|dentist|journalist|librarian|officer|instructor|coach|veterinarian|social worker))\b",
        r"\b(?P<s>I) (?:now |currently |still )?work as (?:a |an )?(?P<v>[^,;!?]{1,60})",
        r"\b(?P<s>my) (?:job title|job|role|position|title) is (?:a |an )?(?P<v>[^,;!?]{1,60})",
        slot=_fixed("job_title"),
    ),
    _rule(
        "professional.employer",
        "professional",
        "work working job employed employer company",
        r"\b(?P<s>I)(?:'m| am)? (?:now |currently |still )?work(?:ing)? (?:at|for) (?P<v>" + _CAP + ")",
        r"\b(?P<s>I) (?:just )?(?:got|landed|started) a (?:new )?job at (?P<v>" + _CAP + ")",
        r"\b(?P<s>I)(?:'m| am) employed (?:at|by) (?P<v>" + _CAP + ")",
        r"\b(?P<s>my) (?:employer|company) is (?P<v>" + _CAP + ")",
        slot=_fixed("employer"),
    ),
    _rule(
        "professional.team",
        "professional",
        "work lead leads own owns team squad group moved switched transferred joined joining changed i'm am",
        r"\b(?P<s>I)(?:'m| am) (?:now |currently |still )?(?:on|in|part of) the " + _TEAM + r" (?:team|squad|group)\b",
        r"\b(?P<s>I)(?:'ve| have|'m| am)? (?:just |recently |now )?(?:moved|switched|transferred|joined|changed|"
        r"joining)(?: over)?(?: to)? the " + _TEAM + r" (?:team|squad|group)\b",
        r"\b(?P<s>my) team is (?:now |the )*" + _TEAM + r"(?: team| squad)?" + _CLAUSE_END,
        r"\b(?P<s>I) (?:now |currently |still )?(?:work on|lead) (?:the )?"
        + _TEAM
        + r"(?: team| squad| group| area)?"
        + _CLAUSE_END,
        r"\b(?P<s>I) (?:now |currently |still )?own the "
        + _TEAM
        + r" (?:team|area|service|component|module|codebase|pipeline|repo)"
        + _CLAUSE_END,
        r"\b(?P<s>I)(?:'m| am) (?:now |currently |still )?(?:the |a )?" + _TEAM + r" (?:tech |team )?lead\b",
        r"(?:\bI(?:'m| am) |^|, )(?:now |currently |still )?(?:the |a )?(?:tech |team )?lead (?:on|of|for) (?:the )?"
        + _TEAM
        + r"(?: team| squad)?"
        + _CLAUSE_END,
        slot=_team,
    ),
    _rule(
        "professional.work",
        "professional",
        (
            "job boss manager cowor colle company career business office promo hired internship work "
            "working client clients own"
        ),
        r"\b(?:my (?:job|boss|manager|coworkers?|colleagues?|company|career|business|office|clients?|internship)|"
        r"lost my job|career|promot(?:ed|ion)|got hired|new job|job interview|I work\b|working (?:at|for|as|in)|"
        r"my own (?:business|store|company|studio))\b",
        needs_person=True,
        user_only=True,
    ),
    _rule(
        "professional.study",
        "professional",
        (
            "study studying studies major majoring degree thesis edu educa college school university "
            "uni gradu certi phd master's bachelor's classes class course courses"
        ),
        r"\b(?:studying|I study|majoring|my (?:major|degree|thesis|studies|classes|courses?)|my edu\w*|"
        r"(?:go|going|went|back) to (?:college|school|university|grad school|uni)|graduat\w+|certification|phd|"
        r"master's|bachelor's)\b",
        needs_person=True,
        user_only=True,
    ),
    # --- health
    _rule(
        "health.diet",
        "health",
        "vegan vegetarian pescatarian gluten lactose keto paleo",
        r"\b(?P<s>I)(?:'m| am) (?:now |currently |still )?(?:a )?(?P<v>vegan|vegetarian|pescatarian|gluten[- ]free|"
        r"lactose[- ]intolerant|keto|paleo)\b",
        slot=_fixed("diet"),
        user_only=True,
    ),
    _rule(
        "health.allergy",
        "health",
        "aller",
        r"\b(?:allergic to|allerg(?:y|ies))\b",
        needs_person=True,
        user_only=True,
    ),
    _rule(
        "health.condition",
        "health",
        (
            "diagn suffer suffers suffering recovering doctor thera medication meds surgery injur "
            "diabetes asthma adhd anxiety depression migra arthritis insomnia cancer blood "
            "sprained broke diet eat"
        ),
        r"\b(?:diagnosed with|suffer(?:s|ing)? from|recovering from|my (?:doctor|therapist|medication|meds|surgery|"
        r"injury|diagnosis|health)|diabetes|asthma|adhd|anxiety|depression|migraines?|arthritis|insomnia|cancer|"
        r"high blood pressure|therapy|surgery|injur(?:y|ed)|sprained|broke my|on a (?:\w+ )?diet|"
        r"I (?:don't|do not|can't) eat)\b",
        needs_person=True,
        user_only=True,
    ),
    _rule(
        "health.exercise",
        "health",
        (
            "gym workout work working exerc yoga pilates running jogging kickboxing marathon medit keep "
            "keeping stay staying fitness lift lifting"
        ),
        r"\b(?:gym|work(?:ing)? ?out|exercis\w*|yoga|pilates|running|jogging|kickboxing|marathon|meditat\w*|"
        r"keep(?:ing)? fit|stay(?:ing)? in shape|fitness|lift(?:ing)? weights)\b",
        needs_person=True,
        user_only=True,
    ),
    # --- project facts
    _rule(
        "project.language",
        "project",
        "written implemented built coded write code program",
        r"\b(?P<n>(?:the|this|our) (?:[\w-]+ )?[\w-]+|[\w.-]+) (?:is|are) (?:\w+ )?"
        r"(?:written|implemented|built|coded) in (?P<v>[\w+#]+)",
        r"\b(?P<n>we) (?:write|code|program)(?: (?P<o>the (?:[\w-]+ )?[\w-]+|everything|it))? in (?P<v>[\w+#]+)",
        slot=_language,
    ),
    _rule(
        "project.tests",
        "project",
        "test tests",
        r"\b(?:the )?(?:unit |integration |e2e )?tests? (?:suite )?(?:are |is )?(?:run|runs|ran|running|executed) "
        r"(?:with|using|via|through|by|under)\b",
        r"\brun (?:the )?tests? (?:with|using|via)\b|\bto run (?:the )?tests?,? (?:use|run)\b",
        r"\b(?:the|our) test runner is\b",
        slot=lambda m, sentence, ctx: _test_runner(m, sentence),
    ),
    _rule(
        "project.deploy",
        "project",
        "deploy deploys deployed ship ships hosted",
        r"\b(?P<s>" + _PROJECT_SUBJECT + r"|it)(?: \w+)? (?:deploy(?:s|ed)?|is deployed|are deployed|gets deployed|"
        r"ships?|is hosted|are hosted) (?:to|on) ",
        slot=_fixed("deploy_target"),
    ),
    _rule(
        "project.path",
        "project",
        "lives live located stored kept sits sit in under inside found",
        r"\b(?P<s>the|our) (?P<a>(?:[\w-]+ ){0,2}[\w-]+) (?:lives?|is|are|sits?|is located|are located|is stored|"
        r"are stored|is kept|are kept|can be found) (?:in|at|under|inside) "
        r"(?P<v>`?[\w.~-]*(?:/[\w.~-]*)+`?|`?[\w-]+\.[a-z]{1,5}`?)",
        slot=lambda m, sentence, ctx: _path(m, ctx),
    ),
    _rule(
        "project.setting",
        "project",
        _SETTING_WORDS,
        r"\b(?P<s>the|our) (?P<a>(?:[a-z][\w-]* ){0,2}?(?:" + _SETTING_HEADS + r")) (?:is|are|'s) "
        r"(?:now |still |currently |set to |always )?(?P<v>[^,;!?]{1,80})",
        slot=_generic,
    ),
    _rule(
        "project.uses",
        "project",
        "use uses using rely relies depend depends run runs build builds built",
        r"\b(?P<s>" + _PROJECT_SUBJECT + r")(?:'re| are)?(?: [\w']+){0,2}? (?:use|uses|using|rely on|relies on|"
        r"depend on|depends on|run on|runs on|build with|builds with|is built (?:with|on)|are built (?:with|on))\b",
        slot=_setting,
    ),
    _rule(
        "project.fact",
        "project",
        (
            "project repo repository codebase ci build pipeline api schema monorepo backend frontend "
            "server service migration migrations linter docs dependencies deps"
        ),
        r"\b(?:the|our|this) (?:project|repo|repository|codebase|ci|build|pipeline|api|schema|monorepo|backend|"
        r"frontend|server|service|migrations?|linter|docs|dependencies|deps)\b(?: [\w-]+){0,2}? (?:is|are|has|have|"
        r"needs?|requires?|supports?|contains?|targets?|lives?|fails?|takes?)\b",
    ),
    # --- preferences
    _rule(
        "preference.favorite",
        "preference",
        "favorite favourite fav fave pick go",
        r"\b(?P<s>my) (?:all-time |absolute )?(?:favou?rite|fave?) (?P<a>[a-z]+(?: [a-z]+)?) (?:is|are) "
        r"(?P<v>[^,;!?]{1,60})",
        r"\bmy (?:all-time |absolute )?(?:favou?rite|fave?|top pick|go-to)\b",
        slot=lambda m, sentence, ctx: _favorite(m, sentence, ctx),
    ),
    _rule(
        "preference.setting",
        "preference",
        _SETTING_WORDS,
        r"\b(?P<s>my) (?P<a>(?:[a-z][\w-]* ){0,2}?(?:" + _SETTING_HEADS + r")) (?:is|are|'s) "
        r"(?:now |still |currently |set to |always )?(?P<v>[^,;!?]{1,80})",
        slot=_generic,
    ),
    _rule(
        "preference.prefer",
        "preference",
        "prefer preference",
        r"\b(?P<s>I)(?: [\w']+){0,2}? prefer\b",
        r"\b(?P<s>my) preference is\b",
        slot=_setting,
    ),
    _rule(
        "preference.use",
        "preference",
        "use using on running",
        r"\b(?P<s>I)(?:'m| am)?(?: [\w']+){0,2}? (?:use|using)\b",
        r"\b(?P<s>I)(?:'m| am)(?: \w+)? (?:on|running)(?= (?:a )?(?:linux|ubuntu|debian|fedora|macos|mac os|osx|mac|"
        r"windows|wsl|freebsd)\b)",
        slot=_setting,
    ),
    _rule(
        "preference.dislike",
        "preference",
        "hate dislike detest stand like enjoy fan",
        r"\bI (?:really |just |absolutely )?(?:hate|dislike|detest|can't stand|cannot stand|don't like|do not like|"
        r"don't enjoy)\b",
        r"\bI(?:'m| am) not (?:really )?(?:a )?(?:big )?fan of\b",
        user_only=True,
    ),
    _rule(
        "preference.like",
        "preference",
        "like love enjoy adore into fan passionate keen obsessed",
        r"\bI(?: \w+)? (?:like|love|enjoy|adore)\b",
        r"\bI(?:'m| am|'ve been| have been) (?:really |so |super |totally )?(?:into|a (?:big |huge )?fan of|"
        r"passionate about|keen on|obsessed with)\b",
        user_only=True,
    ),
    # --- state changes (below the rules that name what changed, above plans and events)
    _rule(
        "state_change.switched",
        "state_change",
        "moved switched migrated changed transitioned converted upgraded downgraded",
        r"\b(?P<s>I|" + _PROJECT_SUBJECT + r")(?:'ve| have| had)?(?: (?:just|recently|finally|already|now|completely|"
        r"fully))? (?:moved|switched|migrated|changed|transitioned|converted|upgraded|downgraded)"
        r"(?: over| back| everything)?(?= (?:from|to)\b)",
        slot=_setting,
    ),
    _rule(
        "state_change.changed",
        "state_change",
        "changed switched renamed updated",
        r"\b(?P<s>the|our|my) (?P<a>(?:[\w-]+ ){0,2}?[\w-]+) (?:has |have |was |were |got |is )?"
        r"(?:changed|switched|renamed|updated)(?= (?:from|to)\b)",
        r"\bchanged(?= (?:from|to)\b)",
        slot=_changed,
    ),
    _rule(
        "state_change.no_longer",
        "state_change",
        "longer anymore more stopped quit gave",
        r"\bno longer\b|\bnot (?:\w+ ){0,3}?any ?more\b|n't (?:\w+ ){0,3}?any ?more\b",
        r"\b(?:stopped|quit|gave up) \w+ing\b",
    ),
    # --- plans
    _rule(
        "plan.intent",
        "plan",
        (
            "going gonna planning plan plans hoping hope intend intends intending aiming looking can't "
            "want wanna thinking"
        ),
        r"\b(?:going to|gonna|planning (?:to|on)|plan(?:s)? to|hoping to|hope to|intend(?:s|ing)? to|aiming to|"
        r"looking forward to|can't wait to|want to|wanna|thinking (?:about|of) \w+ing)\b",
        needs_person=True,
        user_only=True,
    ),
    _rule(
        "plan.future",
        "plan",
        "tomorrow next later coming in",
        _TIME_FUTURE,
        needs_person=True,
        user_only=True,
    ),
    # --- events (episodes)
    _rule(
        "event.went",
        "event",
        (
            "went visited attended joined traveled travelled flew got came returned took participated "
            "graduated celebrated competed"
        ),
        r"(?:\b(?:I|we)(?: \w+)? |^(?:just |recently |finally )?)(?:went (?:to|on|out|back|camping|hiking|fishing|"
        r"skiing|shopping|swimming|home)|visited|attended|joined|traveled|travelled|flew|got back|came back|"
        r"returned|took part|participated|graduated|celebrated|competed)\b",
        kind="episode",
        user_only=True,
    ),
    _rule(
        "event.dated",
        "event",
        "yesterday last ago on in earlier",
        _TIME_PAST,
        kind="episode",
        needs_person=True,
        user_only=True,
    ),
    # --- activities and hobbies
    _rule(
        "activity.duration",
        "activity",
        "been",
        r"\b(?:I|we)(?:'ve| have) been (?:\w+ ){0,3}?(?:for (?:\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|"
        r"nine|ten|many|several|a few|a couple of)(?: \w+)? (?:years?|months?|weeks?|decades?)|"
        r"since (?:I was|(?:19|20)\d\d|childhood|high school|college))",
        user_only=True,
    ),
    _rule(
        "activity.hobby",
        "activity",
        (
            "hobby hobbies free spare fun play plays playing practice practise practicing paint "
            "painting draw drawing dance dancing sing singing knit knitting bake baking garden "
            "gardening hike hiking climb climbing surf surfing ski skiing swim swimming collect pottery "
            "photo camping fishing guitar piano violin drums chess games"
        ),
        r"\b(?:my hobb(?:y|ies)|hobby|in my (?:free|spare) time|for fun|I (?:\w+ )?(?:play|practice|practise|paint|"
        r"draw|dance|sing|knit|bake|garden|hike|climb|surf|ski|swim|collect)|painting|drawing|pottery|knitting|"
        r"photography|gardening|hiking|camping|fishing|surfing|skiing|climbing|dancing|swimming|baking|singing|"
        r"guitar|piano|violin|drums|chess|video games|board games)\b",
        needs_person=True,
        user_only=True,
    ),
    # --- a modifier: lists the rule, never a candidate alone
    _rule(
        "state_change.now",
        "state_change",
        "now nowadays days",
        r"\b(?:now|nowadays|these days)\b",
        modifier=True,
    ),
)

_RANK = {rule.id: rank for rank, rule in enumerate(_RULES)}


def _test_runner(m: re.Match[str], sentence: str) -> _Slot | None:
    rest = _rest(m, sentence)
    hit = known_value(rest, "test_runner")
    if hit is not None:
        return "project", "test_runner", hit[1]
    value = _value(rest)
    return ("project", "test_runner", value) if value is not None else None


def _path(m: re.Match[str], ctx: _Ctx) -> _Slot | None:
    attribute = _attribute(_group(m, "a") or "")
    value = (_group(m, "v") or "").strip("`").rstrip(".").lower()
    if not attribute or not value:
        return None
    return "project", f"{attribute}_path", value


def _favorite(m: re.Match[str], sentence: str, ctx: _Ctx) -> _Slot | None:
    if _group(m, "a") is None:
        return None
    hit = _generic(m, sentence, ctx)
    return (hit[0], f"favorite_{hit[1]}", hit[2]) if hit is not None else None


# ---------------------------------------------------------------------------
# sentences

_WORD = lazy(r"[\w']+")
_SENTENCE_END = lazy(r"(?<=[.!?…])\s+")
_PERSON = lazy(r"\b(?:I|I'm|I've|I'd|I'll|me|my|mine|myself|we|we're|we've|our|us)\b", re.I)
_SMALL_TALK = frozenset(
    normalize(s)
    for s in (
        "thanks",
        "thank you",
        "thanks a lot",
        "ty",
        "lol",
        "haha",
        "ok",
        "okay",
        "ok sounds good",
        "sounds good",
        "sounds great",
        "cool",
        "nice",
        "great",
        "awesome",
        "sure",
        "yes",
        "no",
        "yep",
        "nope",
        "hi",
        "hello",
        "hey",
        "bye",
        "wow",
        "got it",
        "perfect",
        "good night",
        "see you",
    )
)


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for line in text.splitlines():
        collapsed = " ".join(line.split())
        if collapsed:
            out.extend(s for s in _SENTENCE_END.split(collapsed) if s)
    return out


def _is_question(sentence: str) -> bool:
    return sentence.rstrip(" \"')]”’").endswith("?")


def _candidate(sentence: str, ctx: _Ctx, role: str) -> Candidate | None:
    content = sentence[: ctx.content_chars].rstrip()
    scan = content.replace("’", "'")  # same length, so offsets stay valid
    lower = scan.lower()
    if len(lower) < 40 and normalize(lower) in _SMALL_TALK:
        return None
    words = set(_WORD.findall(lower))
    words.update([w[:5] for w in words if len(w) > 5])
    person: bool | None = None
    matched: list[tuple[_Rule, re.Match[str]]] = []
    for rule in _RULES:
        if rule.keys.isdisjoint(words) or (rule.user_only and role == "assistant"):
            continue
        if rule.needs_person:
            if person is None:
                person = _PERSON.search(scan) is not None
            if not person:
                continue
        for pattern in rule.patterns:
            m = pattern.search(scan)
            if m is not None:
                matched.append((rule, m))
                break
    if not any(not rule.modifier for rule, _ in matched):
        return None
    top = next(rule for rule, _ in matched if not rule.modifier)
    slot: _Slot | None = None
    for rule, m in matched:
        if rule.slot is not None:
            slot = rule.slot(m, scan, ctx)
            if slot is not None:
                break
    kinds = {rule.kind for rule, _ in matched}
    kind = "decision" if "decision" in kinds else top.kind
    return Candidate(
        content=content,
        kind=kind,
        category=top.category,
        slot=(slot[0], slot[1]) if slot is not None else None,
        value=slot[2] if slot is not None else None,
        rules=tuple(sorted(rule.id for rule, _ in matched)),
        importance=max(rule.importance for rule, _ in matched),
        tags=tuple(sorted({rule.category for rule, _ in matched})),
    )


# Where a sentence's clauses meet: ";", ", ", " and ", " but ", " whereas " (with a
# following "and", "but" or "also" taken along).
_CLAUSE = lazy(
    r"\s*;\s*(?:(?:and|but|also)\s+)*|,\s+(?:(?:and|but|also)\s+)*|\s+(?:and|but|whereas)\s+(?:also\s+)?",
    re.I,
)


def _clauses(sentence: str) -> list[tuple[int, int]]:
    """(start, end) of the sentence's clauses, boundaries left out."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _CLAUSE.finditer(sentence):
        if m.start() > start:
            spans.append((start, m.start()))
        start = max(start, m.end())
    if start < len(sentence):
        spans.append((start, len(sentence)))
    return spans


# The rules whose slot is a known setting value after a verb ("we use pytest"): a
# bare value in the next clause ("and Postgres") is said with the same verb.
_ELLIPTICAL = frozenset(
    {"project.uses", "preference.use", "preference.prefer", "instruction.imperative", "decision.chose", "decision.lets"}
)


def _elliptical(before: Candidate, clause: str, ctx: _Ctx, role: str) -> tuple[str, Candidate | None]:
    """(lead, candidate) for a clause that is a known setting value of another
    attribute than the fact before it sets with a verb: "We use pytest and
    Postgres" -> ("We use ", the candidate of "We use Postgres"); else ("", None)."""
    if before.slot is None or before.value is None or _ELLIPTICAL.isdisjoint(before.rules):
        return "", None
    m = VOCAB_RE.match(clause)
    if m is None or VOCAB[m.group(1).lower()][0] == before.slot[1]:
        return "", None
    value = next(
        (v for v in VOCAB_RE.finditer(before.content) if VOCAB[v.group(1).lower()] == (before.slot[1], before.value)),
        None,
    )
    if value is None or not before.content[: value.start()].strip():
        return "", None
    lead = before.content[: value.start()]
    found = _candidate(lead + clause, ctx, role)
    if found is None or found.slot is None or found.slot[1] != VOCAB[m.group(1).lower()][0]:
        return "", None
    return lead, found


def _facts(sentence: str, ctx: _Ctx, role: str) -> list[Candidate]:
    """One candidate per fact of a sentence that sets a slot: its clauses that the
    rules match on their own (with a slot, or of at least ``_MIN_FACT_WORDS``
    words), each with the clauses after it that are no fact (those before the first
    go to the first). Clauses setting the same slot make one candidate, from the
    first to the last of them, with the last one's value ("I used vim but now I use
    emacs"). A clause that is only a known setting value of another attribute
    than the fact before it sets with a verb is a fact said with that verb ("We use
    pytest and Postgres" -> "We use pytest", "We use Postgres"). A sentence with
    fewer than two facts, or none with a slot, is one candidate."""
    whole = _candidate(sentence, ctx, role)
    if whole is None:
        return []
    spans = _clauses(sentence[: ctx.content_chars])
    if len(spans) < 2:
        return [whole]
    own = [_candidate(sentence[start:end], ctx, role) for start, end in spans]
    # a fact is a clause with a slot, or of _MIN_FACT_WORDS words ("My wife" is none)
    own = [
        c if c is not None and (c.slot is not None or len(c.content.split()) >= _MIN_FACT_WORDS) else None for c in own
    ]
    leads = [""] * len(spans)
    for i in range(1, len(spans)):
        before = own[i - 1]
        if own[i] is None and before is not None:
            leads[i], own[i] = _elliptical(before, sentence[spans[i][0] : spans[i][1]], ctx, role)
    if sum(c is not None for c in own) < 2 or all(c is None or c.slot is None for c in own):
        return [whole]
    # [start, end, the fact's own candidate, the lead it is said with]
    groups: list[tuple[int, int, Candidate, str]] = []
    for (start, end), fact, lead in zip(spans, own, leads, strict=True):
        if fact is None:
            if groups:
                groups[-1] = (groups[-1][0], end, groups[-1][2], groups[-1][3])
            continue
        if fact.slot is not None:
            same = next((i for i, g in enumerate(groups) if g[2].slot == fact.slot), None)
            if same is not None:
                groups[same:] = [(groups[same][0], end, fact, groups[same][3])]
                continue
        groups.append((spans[0][0] if not groups else start, end, fact, lead))
    out: list[Candidate] = []
    for start, end, fact, lead in groups:
        text = lead + sentence[start:end] if len(groups) > 1 else sentence
        found = _candidate(text, ctx, role) if len(groups) > 1 else whole
        if found is None:  # a rule anchored at the clause's start
            found = dataclasses.replace(fact, content=text[: ctx.content_chars].rstrip())
        if fact.slot is not None:
            found = dataclasses.replace(found, slot=fact.slot, value=fact.value)
        out.append(found)
    return out


def extract(
    text: str, *, role: str = "user", speaker: str | None = None, policy: LongtermPolicy | None = None
) -> list[Candidate]:
    """Candidate memories in ``text``, in text order, one per fact: a sentence
    whose clauses (joined by ";", ",", "and", "but", "whereas", ", also") state
    several facts, one with a slot, gives one candidate per clause (see
    ``_facts``), so that a later correction supersedes only the fact it corrects.

    ``role`` is "user" or "assistant": the assistant's instructions, plans, likes and
    personal chatter are not extracted, and its first person is the subject
    "assistant". The user's first person is the subject "user", or ``speaker``
    lower-cased when given; we/our/the project/the repo are the subject "project".
    Questions and small talk yield nothing. Never raises on a ``str``; only the first
    ``policy.extract_scan_chars`` characters are examined, and a candidate's content
    is cut to ``policy.extract_content_chars`` (``policy``: the defaults when None).
    """
    policy = policy or _DEFAULTS
    if not isinstance(text, str) or not text:
        return []
    if role == "assistant":
        first = "assistant"
    else:
        name = " ".join(speaker.split()).lower() if isinstance(speaker, str) else ""
        first = name or "user"
    ctx = _Ctx(first, policy.extract_content_chars)
    out: list[Candidate] = []
    for sentence in _sentences(text[: policy.extract_scan_chars]):
        if _is_question(sentence):
            continue
        out.extend(_facts(sentence, ctx, role))
    return out


# ---------------------------------------------------------------------------
# optional LLM: never raises, never blocks longer than the timeout


def _describe(error: BaseException) -> str:
    try:
        detail = str(error)
    except Exception:
        detail = ""
    name = type(error).__name__
    return f"{name}: {detail}"[:200] if detail else name


def _llm_item(item: object, content_chars: int) -> Candidate | str:
    """A create candidate, or an archive content as ``("archive", content)``; raises
    ValueError on an invalid item."""
    if not isinstance(item, dict):
        raise ValueError("not an object")
    content = item.get("content")
    if not isinstance(content, str) or not content.split():
        raise ValueError("no content")
    content = " ".join(content.split())[:content_chars].rstrip()
    action = item.get("action", "create")
    if action == "archive":
        return content
    if action != "create":
        raise ValueError(f"unknown action {action!r}")
    importance = item.get("importance", 0)
    if importance not in (0, 1) or isinstance(importance, float):
        raise ValueError("importance is not 0 or 1")
    raw_tags = item.get("tags", [])
    if not isinstance(raw_tags, list) or not all(isinstance(t, str) for t in raw_tags):
        raise ValueError("tags is not a list of strings")
    tags = {" ".join(t.lower().split()) for t in raw_tags} - {""}
    kind = item.get("kind", "fact")
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}")
    category = item.get("category")
    if category is None:
        category = next((t for t in sorted(tags) if t in CATEGORIES), None)
        if category is None:
            category = {"decision": "decision", "episode": "event"}.get(kind, "personal")
    if category not in CATEGORIES:
        raise ValueError(f"unknown category {category!r}")
    raw_slot, raw_value = item.get("slot"), item.get("value")
    slot: tuple[str, str] | None = None
    value: str | None = None
    if raw_slot is not None or raw_value is not None:
        if (
            not isinstance(raw_slot, (list, tuple))
            or len(raw_slot) != 2
            or not all(isinstance(p, str) and p.split() for p in raw_slot)
            or not isinstance(raw_value, str)
        ):
            raise ValueError("slot must be [subject, attribute] with a string value")
        value = _value(raw_value) if _CUT.search(raw_value) is None else " ".join(raw_value.lower().split())
        if not value:
            raise ValueError("empty value")
        slot = (" ".join(raw_slot[0].lower().split()), _attribute(raw_slot[1]))
        if not slot[1]:
            raise ValueError("empty attribute")
    links: list[tuple[str, str]] = []
    for field, link in (("reasons", "reason"), ("consequences", "consequence"), ("constraints", "constraint")):
        said = item.get(field, [])
        if not isinstance(said, list) or not all(isinstance(t, str) for t in said):
            raise ValueError(f"{field} is not a list of strings")
        if said and kind != "decision":
            raise ValueError(f"{field} are for a decision, not a {kind}")
        links += [(link, " ".join(t.split())[:content_chars].rstrip()) for t in said if t.split()]
    return Candidate(
        content=content,
        kind=str(kind),
        category=str(category),
        slot=slot,
        value=value,
        rules=("llm",),
        importance=int(importance),
        tags=tuple(sorted(tags | {str(category)})),
        links=tuple(links),
    )


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Called(Plain):
    """What :func:`call_within` got: the callable's return value, or why there is
    none ("" when it returned; else "not run: ...", "timeout after N s" or
    "failed: ...")."""

    out: object = None
    why: str = ""


def call_within(function: Callable[[str], object], argument: str, timeout: float, name: str) -> Called:
    """``function(argument)`` in a daemon thread called ``name``, waiting at most
    ``timeout`` seconds (clamped to [0, threading.TIMEOUT_MAX]; NaN is 0). Never
    raises: what it raised, or a timeout, is in ``why``. A timed-out call keeps
    running in its daemon thread; its result is dropped. (The optional LLM
    callables, the extractor and the summarizer, are called so.)"""
    box: dict[str, object] = {}

    def work() -> None:
        try:
            box["out"] = function(argument)
        except BaseException as error:  # reported in why, never propagated
            box["error"] = error

    try:
        wait = float(timeout)
    except Exception:
        wait = 0.0
    if math.isnan(wait) or wait < 0:
        wait = 0.0
    wait = min(wait, threading.TIMEOUT_MAX)
    try:
        worker = threading.Thread(target=work, name=name, daemon=True)
        worker.start()
        worker.join(wait)
    except Exception as error:
        return Called(why=f"not run: {_describe(error)}")
    if worker.is_alive():
        return Called(why=f"timeout after {wait:g} s")
    if "error" in box:
        failure = box["error"]
        return Called(why=f"failed: {_describe(failure) if isinstance(failure, BaseException) else failure}")
    return Called(box.get("out"))


def run_llm(
    extractor: Callable[[str], object], text: str, *, timeout: float, policy: LongtermPolicy | None = None
) -> tuple[list[Candidate], list[str], str | None]:
    """Ask an LLM extractor for memories, in a daemon thread, waiting at most ``timeout``
    seconds (clamped to [0, threading.TIMEOUT_MAX]; NaN is 0).

    ``extractor(text)`` returns a JSON list (or its text): items
    ``{"content", "importance": 0|1, "tags": [...], "action": "create"|"archive"}`` with
    optional ``"kind"``, ``"category"``, ``"slot": [subject, attribute]`` and
    ``"value"`` (slot and value come together), and for a decision ``"reasons"``,
    ``"consequences"`` and ``"constraints"`` (lists of texts: its causal chain). A missing category is the first tag
    that is a category, else "decision" / "event" / "personal" by kind.

    Returns (candidates to create, with ``rules=("llm",)``; contents to archive; an
    error message or None). Only the first ``policy.llm_max_items`` items are read
    (the rest count as invalid), and each content is cut to
    ``policy.extract_content_chars`` (``policy``: the defaults when None).
    Invalid items are skipped and counted in the message; a
    timeout, an exception or output of the wrong type gives ``([], [], why)``. Never
    raises. A timed-out call keeps running in its daemon thread; its result is dropped.
    """
    policy = policy or _DEFAULTS
    called = call_within(extractor, text, timeout, "aircher-mem-llm-extract")
    if called.why:
        return [], [], f"llm extractor {called.why}"
    out = called.out
    try:
        if isinstance(out, (str, bytes, bytearray)):
            out = json.loads(out)
        if not isinstance(out, list):
            return [], [], f"llm extractor returned {type(out).__name__}, expected a list"
        created: list[Candidate] = []
        archived: list[str] = []
        invalid = max(0, len(out) - policy.llm_max_items)
        first_reason = "too many items" if invalid else ""
        for item in out[: policy.llm_max_items]:
            try:
                result = _llm_item(item, policy.extract_content_chars)
            except ValueError as reason:
                invalid += 1
                first_reason = first_reason or str(reason)
                continue
            if isinstance(result, Candidate):
                created.append(result)
            else:
                archived.append(result)
    except Exception as error:
        return [], [], f"llm extractor output unreadable: {_describe(error)}"
    message = f"{invalid} invalid llm item(s) skipped (first: {first_reason})" if invalid else None
    return created, archived, message


def combine(heuristic: list[Candidate], llm: list[Candidate], mode: str) -> list[Candidate]:
    """Merge the two extractors' candidates by ``extractor.mode``.

    - ``"heuristic"``: ``heuristic``; ``llm`` is ignored.
    - ``"llm"``: ``llm`` when it is non-empty; an empty ``llm`` means the LLM failed
      (or was not asked), so the heuristic candidates are the fallback. A caller that
      trusts an LLM's empty answer returns ``[]`` itself instead of calling this.
    - ``"hybrid"``: ``heuristic``, then the ``llm`` candidates whose ``normalize``d
      content is not already there (nor repeated among the LLM's).

    Raises ValueError for another mode.
    """
    if mode == "heuristic":
        return list(heuristic)
    if mode == "llm":
        return list(llm) if llm else list(heuristic)
    if mode == "hybrid":
        seen = {normalize(c.content) for c in heuristic}
        out = list(heuristic)
        for c in llm:
            key = normalize(c.content)
            if key not in seen:
                seen.add(key)
                out.append(c)
        return out
    raise ValueError(f"unknown extractor mode {mode!r}: expected heuristic, llm or hybrid")
