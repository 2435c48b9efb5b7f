"""Decisions and why they were made, read from conversation turns.

The causal chain tracker keeps decisions with their reasons, consequences and
constraints. This module proposes them from what was said, with cheap regex rules
in the manner of :mod:`.extract` (whose sentence splitting and question test it
shares): offline, deterministic, never raising on a ``str``.

A sentence gives a decision when one of its clauses says that someone chose
("we went with", "I switched to", "let's use", "we decided to", "we can't
upgrade") and the clause is not itself the reason of another ("it failed because
we use an old driver" gives none). The clause's neighbours, cut at connectives,
become its links:

- a *reason* (edge ``justifies``): "because Y", "since Y", "given Y", "as it Y",
  "due to Y", "; the reason is Y", "to avoid Y", "so that Y", "otherwise Y", "X: Y",
  "X; Y", "X - Y", "Y, which is why we X", "Because Y, we X" (what comes before a first
  colon and decides nothing is a heading: "Quick summary: we ruled out X due to Y");
- a *reason* that set the decision off (edge ``causes``): "Y, so we X", "Y. So we
  X";
- a *consequence* (edge ``leads_to``): "X, so Y", "X, which means Y", "X. That
  means Y";
- a *constraint* (edge ``blocks``): the reason of a decision forced on the
  speaker ("we can't X since Y", "we have to X because Y"): it blocks the
  alternative.

A sentence that opens with a reason or consequence lead ("The main reason was
...", "Two reasons: first, ...", "That's because ...", "That means ...") adds a link
to the decision of one of the :attr:`aircher_mem.config.ChainsPolicy.follow_gap`
sentences before it (questions skipped: "why not black?" between a decision and its
answer breaks nothing); so does any sentence that answers a question why ("What
prompted that?", "Any particular reason?"). So a window of turns joined by
newlines can be read at once. Chat shorthand is read as what it stands for ("w/",
"bc", "b/c").

Choice verbs that also describe routine work ("use", "keep", "pin", "add", "run")
make a decision only with a link ("we use Alembic because ..."); the unambiguous
ones ("chose", "went with", "decided", "switched to", "reverted to", "ruled out")
make one alone, so that a reason in the next sentence has something to attach to,
and so do a setting changed and told as done ("I turned off X", "we pinned Y",
"we banned Z", not "I added a test"), a refusal ("we won't add X yet"), one thing
kept over another ("we'll keep X rather than Y") and a rule from here on ("From now
on ...");
a setting as it is now ("mypy is now required") is one only with its reason. Proposals ("we should",
"I'd go with") and undecided talk ("we haven't decided") make none, nor do
questions, encouragement said with a choice's words ("Let's keep going!", "let's make
a difference", "I'll do my best") or a habit of the past ("we used to"). Every
strength comes from the Policy's ``[chains]`` (:class:`aircher_mem.config.ChainsPolicy`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..config import ChainsPolicy
from ..pattern import lazy
from ..plain import Plain
from .extract import _is_question, _sentences

__all__ = [
    "KINDS",
    "EDGES",
    "Link",
    "DecisionCandidate",
    "decisions_in",
]

KINDS = ("reason", "consequence", "constraint")
EDGES = ("justifies", "leads_to", "blocks", "causes")


@dataclass(frozen=True, eq=False, repr=False)
class Link(Plain):
    """A reason, consequence or constraint of a decision, as said."""

    kind: str
    """One of KINDS."""
    text: str
    """The clause, whitespace-collapsed, connective left out."""
    edge: str
    """One of EDGES: ``justifies`` and ``causes`` (reason -> decision), ``leads_to``
    (decision -> consequence), ``blocks`` (constraint -> the alternative)."""
    strength: float
    """0..1, from the connective (see :class:`aircher_mem.config.ChainsPolicy`)."""


@dataclass(frozen=True, eq=False, repr=False)
class DecisionCandidate(Plain):
    """A decision proposed from text, with the links said around it."""

    decision: str
    """The clause that states the decision, as said."""
    links: tuple[Link, ...]
    """In text order; may be empty for an explicit choice ("We picked Redis.")."""
    sentence: str
    """The sentence the decision is in."""


_DEFAULTS = ChainsPolicy()

# ---------------------------------------------------------------------------
# what a decision looks like

_STRONG_VERBS = (
    r"decided|decide|chose|choose|picked(?! up)|pick(?! up)|selected|select|went with|go with|going with|"
    r"opted|opt|settled on|settle on|agreed on|agreed to|agree on|standardi[sz]ed on|standardi[sz]e on|"
    r"ended up (?:with|using|going with|on)|landed on|switched|switch|switching|migrated|migrate|migrating|"
    r"moved (?:to|from|away|over|off)|move (?:to|from|away|over|off)|moving (?:to|from|away|over|off)|"
    r"adopted|adopt|adopting|committed to|commit to|ruled out|rule out|reverted to|revert to|went back to|"
    r"rolled back to"
)
_WEAK_VERBS = (
    r"use|used|using|keep|kept|keeping|stick with|stuck with|sticking with|stick to|stuck to|"
    r"replaced|replace|replacing|dropped|drop|dropping|ditched|ditch|pinned|pin|pinning|"
    r"turned on|turned off|turn on|turn off|enabled|enable|disabled|disable|store|stored|storing|run|"
    r"version|versioned|require|required|added|add|split|set up|rewrote|rewrite|vendored|vendor|"
    r"removed|remove|deprecated|deprecate|do|avoid|avoided|prefer|preferred|rely on|relied on|"
    r"host|hosted|deploy|deployed|cache|cached|limit|enforce|enforced|forbid|ban|banned|block|blocked|"
    r"ship|shipped|introduced|introduce|implement|implemented|skip|skipped|upgrade|upgraded|"
    r"downgrade|downgraded|bump|bumped|restrict|restricted|wrap|wrapped|support|target|moved(?! on)|move(?! on)|"
    r"moving(?! on)|adding|banning|squash|squashed|reverted|revert|made|make|deleted|delete|running|"
    r"write|build|stay on|stay with|commit"
)
# Said in place of a subject before a past tense verb at a clause's start:
# "Turned on WAL mode because ...".
_BARE_VERBS = (
    r"went with|chose|picked(?! up)|switched|moved|migrated|pinned|dropped|replaced|turned on|turned off|"
    r"enabled|disabled|kept|added|removed|set up|decided|opted|settled on|standardi[sz]ed on|vendored|"
    r"bumped|upgraded|downgraded|going with|switching to|sticking with"
)
_STRONG_BARE = frozenset({"went with", "chose", "decided", "opted", "settled on", "going with", "switching to"})
_SUBJECT = r"\b(?:we|i|the team|everyone)"
_STATE = (
    r"(?:is|are|was|were)\s+(?:written|built|implemented|hosted|deployed|stored|kept|served|generated|"
    r"managed|configured|packaged|shipped|run)\s+(?:in|with|on|as|by|via|through)"
)
_AUX = (
    r"(?:'ll|'re|'ve|'m|\s+(?:will|are|am|have|had|do|does|now|also|just|then|finally|eventually|"
    r"ultimately|always|only|both|all|deliberately|intentionally|instead|still|already|never|not|no longer|"
    r"don't|can't|cannot|can not|couldn't|won't|aren't|have to|had to|need to|needed to|must|going to|gonna|"
    r"basically|really|simply|probably|quickly|officially))"
)
_FILLER = r"(?:(?:ok|okay|so|alright|yes|yeah|no|and|but|then|well|agreed|done|right|sure|fine|in the end)[,.!:]?\s+)*"
_MARKER = lazy(
    # one list of verbs after a subject or a "let's" (a choice either way: _is_strong)
    rf"(?:(?P<sub>{_SUBJECT})(?P<aux>{_AUX}{{0,4}})|(?P<lets>\blet(?:'s| us|s)))"
    rf"\s+(?:(?P<strong>{_STRONG_VERBS})|(?P<weak>{_WEAK_VERBS}))\b"
    rf"|\bthe (?:final )?decision (?:is|was)\b|^decision:"
    # a rule from here on ("From now on PRs over 400 lines need to be split")
    rf"|^{_FILLER}(?:from now on|going forward|from today|starting (?:today|now))\b"
    # a setting as it is now, a decision only with its reason ("mypy is now a required check")
    r"|\b(?P<now>(?:is|are) now)\b"
    rf"|^{_FILLER}(?P<bare>{_BARE_VERBS})\b"
    # "instead of 5": a measurement compared, not an alternative dropped
    r"|\b(?P<alt>rather than|instead of|is not an option|isn't an option|is ruled out|is off the table)\b(?!\s+\d)"
    # how a thing is made or kept, a decision only with its reason ("the CLI is written
    # in Go so we can ship one binary")
    rf"|\b(?P<state>{_STATE})\b",
    re.I,
)
_OVER = lazy(r"\b(?:rather than|instead of)\b(?!\s+\d)", re.I)
_FORCED = lazy(
    r"can't|cannot|can not|couldn't|have to|had to|need to|needed to|must|not an option|ruled out|off the table",
    re.I,
)

# ---------------------------------------------------------------------------
# connectives inside a sentence

_HEDGE = lazy(r"\b(?:probably|maybe|perhaps|likely|possibly|presumably|i think|i guess|i suspect)\b", re.I)
_ADVERB = r"(?:(?:probably|maybe|perhaps|likely|possibly|partly|mostly|mainly|largely|simply|just|only|in part)\s+)?"
# (regex, link kind, edge, settings field); "before" links point at the clause
# before the connective, which is the reason of a decision after it.
_CONNECTIVES: tuple[tuple[str, str, str, str], ...] = (
    (rf",?\s+{_ADVERB}(?:because(?: of)?|'cause|cuz|due to|owing to)\b", "reason", "justifies", "explicit"),
    (
        r"[;,:]?\s+(?:and\s+)?the (?:main |primary |real |key |big |biggest |only )?reasons? "
        r"(?:is|was|being|are|were)(?: that)?\b",
        "reason",
        "justifies",
        "explicit",
    ),
    (rf",?\s+{_ADVERB}(?:since|given(?: that)?)\b", "reason", "justifies", "since"),
    (
        r",\s+as\b(?=\s+(?:it|its|they|their|we|our|there|this|that|these|those|the|nobody|no one|both|most)\b)"
        r"|\s+as\b(?=\s+(?:it|they|we|there|nobody)\s)",
        "reason",
        "justifies",
        "since",
    ),
    (
        r",?\s+(?:so that|in order to)\b|\s+to\b(?=\s+(?:avoid|prevent|stop|reduce|cut|make sure|ensure|speed up|"
        r"save|simplify|get rid of|work around|guarantee|minimi[sz]e|lower|protect)\b)"
        r"|,?\s+so\b(?=\s+(?:we|it|they|you|i|users|people|everyone|customers|clients|developers|the \w+|"
        r"that \w+|our \w+)\s+(?:can|could|don't|won't|never|always)\b)",
        "reason",
        "justifies",
        "purpose",
    ),
    (r"[;,]?\s+otherwise\b", "reason", "justifies", "purpose"),
    (r"\s+after\b(?=(?:\s+[\w'-]+){4})", "reason", "causes", "cause"),
    (r"(?<!decision)(?<!reason)(?<!why)[:;]\s+(?=\w)|\s+(?:--?|[–—])\s+(?=\w)", "reason", "justifies", "colon"),
    (
        r",?\s+(?:which|that|this) is (?:why|the reason)\b|,?\s+that's why\b|,?\s+(?:hence|therefore|thus)\b",
        "before",
        "justifies",
        "explicit",
    ),
    (
        r",?\s+(?:which|that|this) means\b|,\s+meaning\b|,?\s+as a result\b|,?\s+that way\b"
        r"|,\s+which (?=(?:lets|allows|gives|makes|keeps|saves|means)\b)",
        "consequence",
        "leads_to",
        "consequence",
    ),
    (
        r",\s+(?:and\s+)?so\b(?!\s+(?:that|far|much|many|on)\b)"
        r"|\s+so\b(?=\s+(?:we|it|they|the|that|this|our|there|you|i|everything|nobody|builds?)\b)",
        "so",
        "leads_to",
        "consequence",
    ),
)
_CONNECTIVE = lazy("|".join(f"(?P<c{i}>{c[0]})" for i, c in enumerate(_CONNECTIVES)), re.I)
# A reason said first: "Because Y, we X", "Given that Y, we X", "To avoid Y, we X".
_FRONTED = lazy(
    rf"^{_FILLER}(?:(?P<explicit>because(?: of)?|due to)|(?P<since>since|given(?: that)?|as)"
    r"|(?P<purpose>in order to|to(?=\s+(?:avoid|prevent|stop|reduce|cut|make sure|ensure|speed up|save|simplify|"
    r"get rid of|work around|guarantee|minimi[sz]e|lower|protect)\b)))\s+",
    re.I,
)

# ---------------------------------------------------------------------------
# sentences that lean on the one before

_FOLLOW_REASON = lazy(
    rf"^{_FILLER}(?:(?:i think|i guess|i believe|probably|maybe|perhaps)[,]?\s+)?"
    r"(?:(?:the (?:main |primary |real |key |big |biggest |other |second )?reasons? (?:is|was|being|are|were)(?: that)?"
    r"|reason:|(?:two|three|four|a few|several|a couple of) reasons?(?::\s+(?:first(?:ly)?|one),?)?"
    r"|(?:that|this|it)(?:'s| is| was) (?:mostly |mainly |partly )?because(?: of)?"
    r"|(?:mostly|mainly|partly|largely|simply|probably|maybe|just|also) because(?: of)?|because(?: of)?"
    r"|the (?:motivation|rationale|thinking|idea|point) (?:is|was)(?: that)?|why:)[:,]?)\s+",
    re.I,
)
_FOLLOW_CONSEQUENCE = lazy(
    rf"^{_FILLER}(?:(?:that|this) (?:means|gives us|lets us)(?: that)?|as a result|so now|that way"
    r"|the (?:upshot|downside|trade-?off|catch|cost) (?:is|was)(?: that)?)[:,]?\s+",
    re.I,
)
_FOLLOW_CAUSE = lazy(
    r"^(?:(?P<why>that's why|that is why|this is why|which is why|hence|therefore|for that reason|"
    r"because of (?:that|this))|(?P<so>so|and so))\b[,]?\s*",
    re.I,
)

# ---------------------------------------------------------------------------
# an answer that picks one of two options a question offered

# A question offering two options ("Webpack or Vite for the admin app?", "are we
# exposing the catalog over REST or GraphQL"): up to three words each side of its "or".
_OPTIONS = lazy(r"([\w.+#/-]+(?:\s+[\w.+#/-]+){0,2})\s+or\s+([\w.+#/-]+(?:\s+[\w.+#/-]+){0,2})", re.I)
_ASKING = lazy(r"^(?:so,?\s+)?(?:are|is|do|does|did|should|shall|will|would|can|could)\s+(?:we|i|you|it|they)\b", re.I)
# The first words of an answer, up to a stop: punctuation, a dash, a connective, the end.
_WORD = r"[\w+#/-]+(?:\.[\w+#/-]+)*"  # a dot only inside ("Node.js", "v1.2"), never the sentence's
_HEAD = lazy(rf"^(?P<head>{_WORD}(?:\s+{_WORD}){{0,2}}?)\s*(?=$|[.,;:!]|\s[-–—]\s|\s(?:because|since|so|as)\b)", re.I)
_DASH = lazy(r"^\s*[-–—]\s+")

# chat shorthand read as the words it stands for ("went w/ pnpm bc ...")
_SHORTHAND = lazy(r"(?<![\w/])(?:(?P<without>w/o)|(?P<with>w/)|(?P<because>b/c|bc|cuz|coz|cos))(?![\w/])", re.I)
# a question asking why something was done, answered by the next sentence
_WHY = lazy(
    r"^(?:so,?\s+|and\s+|but\s+|sure\.?,?\s+)?(?:why\b|how come\b|because\b"
    r"|what (?:prompted|made|changed|drove|motivated|was the (?:reason|motivation|thinking))"
    r"|(?:any|what'?s the|what is the) (?:particular |specific |special )?(?:reason|motivation|rationale|thinking)"
    r"|is (?:that|it|this) (?:mostly |mainly |just )?(?:about|because|for)\b)",
    re.I,
)
_TRIM = " \t,;:.!-–—\"'“”‘’()"
_LEAD = lazy(rf"^{_FILLER}", re.I)


@dataclass
class _Draft:
    decision: str
    sentence: str
    links: list[Link]
    strong: bool  # an explicit choice: a decision even with no link
    forced: bool  # its reasons are constraints
    turn: int = 0  # the line it was said on
    answer: bool = False  # picks one of a question's options: a decision with a reason only
    reported: bool = False  # "I turned off X", "we pinned Y": done, told as done; refused; kept over another


def _clip(text: str, settings: ChainsPolicy) -> str:
    text = " ".join(text.split()).strip(_TRIM)
    return text[: settings.text_chars].rstrip(_TRIM) if len(text) > settings.text_chars else text


def _decision_text(text: str, settings: ChainsPolicy) -> str:
    text = text.strip(_TRIM)
    lead = _LEAD.match(text)
    return _clip(text[lead.end() :] if lead is not None and lead.end() < len(text) else text, settings)


# Encouragement said with a choice's words ("Let's keep going!", "Let's make a
# difference", "I'll do my best"): what follows "keep", "make" or "do" is an
# activity, a pronoun or a cheer, not a thing chosen. ("let's keep using Redis"
# stays a decision: "using" is a choice's verb.)
_CHEERED = frozenset("keep keeps keeping kept make makes making made do doing".split())
_CHEER = lazy(
    r"\s+(?:(?:on\s+)?(?:go|mov|help|push|spread|chas|work|support|motivat|mak|do|improv|inspir|shin|grow|"
    r"smil|danc|rock|fight|believ|try|shar|creat|dream|hustl|celebrat|encourag|lift|cheer)(?:ing\b|in')"
    r"|(?:it|this|that)\s*(?:$|[.!,;-]|up\b|happen\b|work\b|together\b|count\b)"
    r"|each other\b|it through\b|(?:my|our|your) (?:best|part|dreams?)\b|up the good\b"
    r"|(?:an?|some) (?:real |big |positive |lasting |huge |little |)(?:difference|change|impact)\b(?!\s+(?:to|in|of)\b)"
    r"|(?:great|happy|awesome|good|some|lasting) memories\b|things (?:better|happen)\b|the world\b"
    r"|(?:tomorrow|today|this|it) (?:unforgettable|count|special|amazing|awesome)\b)",
    re.I,
)


def _cheer(m: re.Match[str], sentence: str) -> bool:
    """Whether the marker ``m`` of ``sentence`` is encouragement (see _CHEER) or a
    habit of the past ("we used to"), not a choice."""
    weak = (m.group("weak") or "").lower()
    if weak == "used" and sentence[m.end() : m.end() + 4].lower() == " to ":
        return True  # "I used to compete": a habit of the past
    return weak in _CHEERED and _CHEER.match(sentence, m.end()) is not None


def _is_strong(m: re.Match[str]) -> bool:
    if m.group("strong") or m.group("lets"):
        return True
    bare = m.group("bare")
    if bare:
        return bare.lower() in _STRONG_BARE
    # "the decision was", "from now on"
    return m.group("sub") is None and m.group("alt") is None and m.group("state") is None and m.group("now") is None


# The routine verbs that, told as done, change how the project works (not "added",
# "made", "rewrote": an agent reports those all day)
_SETTLED = frozenset(
    "turned on|turned off|enabled|disabled|pinned|dropped|ditched|banned|replaced|reverted|deprecated|"
    "upgraded|downgraded|restricted|blocked".split("|")
)


# the auxiliaries of a refusal: "we won't add", "we're not going to use"
_REFUSING = frozenset(["won't", "will not", "'re not going to", "are not going to", "'m not going to"])


def _is_reported(m: re.Match[str]) -> bool:
    """One of :data:`_SETTLED` after "I" or "we", with no auxiliary that makes it a
    habit or a plan ("we'll pin"); or any routine verb refused by "we" or "I" ("we
    won't add websockets yet")."""
    weak = (m.group("weak") or "").lower()
    aux = " ".join((m.group("aux") or "").lower().split())
    if not m.group("sub") or not weak:
        return False
    return (weak in _SETTLED and aux in ("", "'ve", "have", "just", "also")) or aux in _REFUSING


def _is_forced(m: re.Match[str]) -> bool:
    return bool(_FORCED.search(m.group("aux") or "") or _FORCED.search(m.group("alt") or ""))


def _hedged(text: str) -> bool:
    return _HEDGE.search(text) is not None


def _strength(field: str, hedged: bool, settings: ChainsPolicy) -> float:
    value: float = getattr(settings, field)
    return min(value, settings.hedged) if hedged else value


def _link(kind: str, text: str, edge: str, field: str, hedged: bool, forced: bool, s: ChainsPolicy) -> Link | None:
    text = _clip(text, s)
    lead = _LEAD.match(text + " ")
    if not text or (lead is not None and lead.end() > len(text)):  # "Ok, so we ...": no reason in "Ok"
        return None
    if kind == "reason" and forced and edge == "justifies":
        kind, edge = "constraint", "blocks"
    return Link(kind, text, edge, _strength(field, hedged, s))


def _in_sentence(sentence: str, s: ChainsPolicy, given: Link | None = None) -> _Draft | None:
    """The decision of one sentence with its links (``given`` first, a reason said
    before the sentence), or None."""
    cuts = list(_CONNECTIVE.finditer(sentence))
    # segments: (start, end, index of the connective before it or -1)
    bounds = [0] + [m.end() for m in cuts]
    ends = [m.start() for m in cuts] + [len(sentence)]
    roles = [None] + [_CONNECTIVES[int((m.lastgroup or "c0")[1:])] for m in cuts]
    chosen: int | None = None
    found: re.Match[str] | None = None
    offset = 0  # where the decision's clause may start in its segment
    fronted = _FRONTED.match(sentence[: ends[0]])
    # what comes before a first colon, when it decides nothing, is a heading ("Quick
    # summary of the call: we ruled out MongoDB ..."), not the reason's decision
    colon_first = bool(cuts) and ":" in cuts[0].group(0) and roles[1] is not None and roles[1][3] == "colon"
    for i, (start, end) in enumerate(zip(bounds, ends)):
        role = roles[i]
        if role is not None and role[1] not in ("before", "so") and not (i == 1 and colon_first):
            continue  # a reason or consequence clause is no decision of its own
        offset = 0
        if i == 0 and fronted is not None:
            # "Because Y, we X": the decision comes after Y's comma, or after a
            # word of Y at least ("To avoid flaky tests we run them serially")
            comma = sentence.find(", ", fronted.end(), end)
            offset = comma + 2 if comma >= 0 else fronted.end() + 1
        m = _MARKER.search(sentence[start:end], offset)
        if m is not None and not _cheer(m, sentence[start:end]):
            chosen, found = i, m
            break
    if chosen is None or found is None:
        return None
    start, end = bounds[chosen], ends[chosen]
    forced = _is_forced(found)
    links: list[Link] = [] if given is None else [given]
    decision_from = start
    if chosen == 0 and fronted is not None:
        head = sentence[fronted.end() : found.start()]
        comma = head.rfind(", ")
        cut = fronted.end() + comma + 2 if comma >= 0 else found.start()
        field = fronted.lastgroup or "explicit"
        made = _link("reason", sentence[fronted.end() : cut], "justifies", field, _hedged(sentence[:cut]), forced, s)
        if made is not None:
            links.append(made)
        decision_from = cut
    elif chosen > 1 or (chosen == 1 and not colon_first):
        role = roles[chosen]
        assert role is not None
        before = sentence[: cuts[chosen - 1].start()]
        edge, field = ("justifies", role[3]) if role[1] == "before" else ("causes", "cause")
        made = _link("reason", before, edge, field, _hedged(before), forced, s)
        if made is not None:
            links.append(made)
    decision = _decision_text(sentence[decision_from:end], s)
    for i in range(chosen + 1, len(bounds)):
        joint = cuts[i - 1]
        role = roles[i]
        assert role is not None
        kind, edge, field = role[1], role[2], role[3]
        if kind in ("before", "so"):  # "X, so Y", "X, which is why Y": Y follows from X
            kind, edge, field = "consequence", "leads_to", "consequence"
        hedge = _hedged(sentence[max(0, joint.start() - 20) : joint.end()])
        made = _link(kind, sentence[bounds[i] : ends[i]], edge, field, hedge, forced, s)
        if made is not None:
            links.append(made)
    if not decision:
        return None
    # told as done or refused, or one thing kept over another ("we'll keep versioning
    # in the URL path rather than headers"): the sentence after it may be its reason
    settled = _is_reported(found) or (bool(found.group("sub")) and _OVER.search(decision) is not None)
    return _Draft(decision, sentence, links, _is_strong(found), forced, reported=settled)


def _follow(sentence: str, forced: bool, s: ChainsPolicy) -> Link | None:
    """The link a sentence adds to an earlier decision ("The main reason was Y.")."""
    m = _FOLLOW_REASON.match(sentence)
    if m is not None:
        return _link("reason", sentence[m.end() :], "justifies", "follow", _hedged(m.group(0)), forced, s)
    m = _FOLLOW_CONSEQUENCE.match(sentence)
    if m is not None:
        return _link("consequence", sentence[m.end() :], "leads_to", "follow", _hedged(m.group(0)), False, s)
    return None


# A sentence that goes on with the speaker's next step, not with why.
_NEXT_STEP = lazy(
    r"^(?:i'll|i will|i'm going to|we'll|we will|let me|let's|next|now|then|also|done|thanks|ok|okay)\b", re.I
)


def _adjacent(sentence: str, s: ChainsPolicy, field: str = "adjacent") -> Link | None:
    """The sentence right after a decision said alone (or after a question why it was
    made: ``field`` "follow"), as its reason, unless it moves on."""
    if _NEXT_STEP.match(sentence) or _FOLLOW_CONSEQUENCE.match(sentence):
        return None
    return _link("reason", sentence, "justifies", field, _hedged(sentence), False, s)


def _offered(sentence: str) -> tuple[str, list[str], list[str]] | None:
    """The question and the words on each side of its "or", for a sentence that asks
    to choose between two options; None for any other."""
    if not (_is_question(sentence) or _ASKING.match(sentence)):
        return None
    m = _OPTIONS.search(sentence)
    if m is None:
        return None
    return sentence.strip().rstrip("?").strip(), m.group(1).lower().split(), m.group(2).lower().split()


def _answer(sentence: str, offered: tuple[str, list[str], list[str]], s: ChainsPolicy) -> _Draft | None:
    """The decision of a sentence that opens with one of the options ``offered``
    ("Vite.", "RQ, since ...", "Temporal - a failed run ..."): the option chosen, with
    the question for what it is chosen for, and the links the rest of the sentence
    gives; None when it opens with neither."""
    question, left, right = offered
    lead = _LEAD.match(sentence)
    body = sentence[lead.end() :] if lead is not None else sentence
    m = _HEAD.match(body)
    if m is None:
        return None
    head = m.group("head")
    words = head.lower().split()
    if words != right[: len(words)] and words != left[len(left) - len(words) :]:
        return None
    rest = _DASH.sub(": ", body[m.end("head") :], count=1)
    draft = _in_sentence(f"we chose {head}{rest}", s)
    if draft is None:
        return None
    draft.decision = _clip(f"{head} — {question}", s)
    draft.strong, draft.answer = False, True
    return draft


def _spelled_out(sentence: str) -> str:
    return _SHORTHAND.sub(lambda m: m.lastgroup or "", sentence)


def _read(text: str, s: ChainsPolicy) -> list[DecisionCandidate]:
    drafts: list[_Draft] = []
    why = False  # the last question asked why the latest decision was made
    last: _Draft | None = None  # the latest decision, while follow-ups may attach
    gap = 0
    previous: str | None = None  # the previous sentence that gave no decision
    offered: tuple[str, list[str], list[str]] | None = None  # by the sentence just before
    for turn, line in enumerate(text[: s.scan_chars].splitlines()):
        for raw in _sentences(line):
            asked, offered = offered, _offered(raw[: s.sentence_chars])
            if _is_question(raw):
                why = last is not None and _WHY.match(raw.strip()) is not None
                continue
            sentence = _spelled_out(raw[: s.sentence_chars].replace("’", "'"))
            if asked is not None and offered is None:
                draft = _answer(sentence, asked, s)
                if draft is not None:
                    draft.sentence, draft.turn = raw[: s.sentence_chars], turn
                    drafts.append(draft)
                    last, gap, previous = draft, 0, None
                    continue
            cause = _FOLLOW_CAUSE.match(sentence)
            given: Link | None = None
            if cause is not None and previous is not None:
                # "Y. So we X" / "Y. That's why we X": Y is the reason
                edge, field = ("causes", "cause") if cause.group("so") else ("justifies", "explicit")
                given = _link("reason", previous, edge, field, _hedged(previous), False, s)
            draft = _in_sentence(sentence[cause.end() :] if cause is not None else sentence, s, given)
            if draft is not None:
                draft.sentence = raw[: s.sentence_chars]
                draft.turn = turn
                drafts.append(draft)
                last, gap, previous = draft, 0, None
                continue
            gap += 1
            asked_why, why = why, False
            if last is not None and gap <= s.follow_gap:
                link = _follow(sentence, last.forced, s)
                if link is None and asked_why:  # "Why?" "The old runner kept timing out."
                    link = _adjacent(sentence, s, "follow")
                alone = last.strong or last.answer or last.reported
                if link is None and gap == 1 and alone and not last.links and last.turn == turn:
                    link = _adjacent(sentence, s)
                if link is not None:
                    if link not in last.links:
                        last.links.append(link)
                    gap = 0
                    previous = None
                    continue
            previous = sentence
    # a routine verb ("we use", "we can't drop") is a decision only with a link
    return [DecisionCandidate(d.decision, tuple(d.links), d.sentence) for d in drafts if d.links or d.strong]


def decisions_in(text: str, *, settings: ChainsPolicy | None = None) -> list[DecisionCandidate]:
    """The decisions stated in ``text`` (one turn, or several joined by newlines), in
    text order, each with the reasons, consequences and constraints said with it.

    [] when there is none. Never raises: a non-``str``, or anything the rules trip
    on, gives []. Reads at most ``settings.scan_chars`` characters, each sentence
    cut to ``settings.sentence_chars``, so the time is bounded whatever the input.
    """
    s = settings or _DEFAULTS
    if not isinstance(text, str) or not text:
        return []
    try:
        return _read(text, s)
    except Exception:  # a heuristic on the write path: no candidate beats a failure
        return []
