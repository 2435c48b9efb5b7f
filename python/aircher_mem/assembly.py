"""The one context assembly: what goes into an agent's context, in what order,
within which budget, and rendered how. Every caller that assembles context goes
through here:

- the four tiers of ``Memory.assemble``: :func:`fill_tiers` places what
  :mod:`aircher_mem.offers` gathers, :func:`route` is seed 000's router;
- the window before a model call (``DynamicContextManager.prepare_context``, and so
  ``Memory.prepare_context``): :func:`window_pieces` adds the code views and the
  assembled tiers, in order, and :func:`item_to_message` renders each item as a chat
  message;
- the preview of that window (``Memory.preview_context``): :func:`preview`;
- a conversation's context (``LongTermMemory.get_context``): :func:`conversation`;
- the text the Claude Code hooks inject (``SessionStart``, ``UserPromptSubmit``):
  :func:`session_brief` and :func:`prompt_brief` render ``assemble``'s JSON answer
  (the hooks may be a server's clients) within a character budget.

This module only decides and renders: the window itself scores and prunes (the
Rust :class:`ContextWindow`), the callers fetch what is offered.
"""

from __future__ import annotations

import bisect
import operator
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal, NamedTuple, Protocol

from ._core import ContextItem, ContextItemType, ContextWindow, PruneResult

# the hooks' text, in a module that imports nothing (a hook loads it on every prompt)
from .brief import MARKER, TIER_TITLES, Brief, one_line, prompt_brief, session_brief, task_query

# The results and the token counter load when a window is assembled. (Not
# typing.TYPE_CHECKING: type checkers treat any name TYPE_CHECKING as true.)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from .config import AssemblyPolicy
    from .results import (
        ContextPreview,
        Conversation,
        MemoryRecord,
        Reason,
        RelevantCode,
        Routed,
        Tier,
        TierItem,
        Turn,
    )
    from .tokens import TokenCounter

__all__ = [
    "Message",
    "CodeProvider",
    "ContextProvider",
    "Piece",
    "window_pieces",
    "item_to_message",
    "describe",
    "preview",
    "conversation",
    "MARKER",
    "Brief",
    "one_line",
    "TIER_TITLES",
    "task_query",
    "session_brief",
    "prompt_brief",
    "TIERS",
    "Candidate",
    "tier_budgets",
    "fill_tiers",
    "Routable",
    "Hierarchy",
    "route",
]

Message = dict[str, str]

CodeProvider = Callable[[str], Iterable["RelevantCode"]]
"""``provider(user_message)`` -> snippets relevant to it (the knowledge graph)."""

ContextProvider = Callable[[str, int], Sequence["Tier"]]
"""``provider(user_message, budget)`` -> the tiers of the context assembled for
it within ``budget`` tokens (``Memory.assemble``)."""

# -- the window before a model call ----------------------------------------------------


class Piece(NamedTuple):
    """One item to add to the window: its text, its kind and its relevance."""

    content: str
    item_type: ContextItemType
    relevance: float = 1.0


def window_pieces(
    message: str,
    *,
    code: CodeProvider | None,
    context: ContextProvider | None,
    budget: int,
    relevance: Mapping[str, float],
) -> Iterator[Piece]:
    """What goes into the window for ``message``, in this order: the message
    itself; the code relevant to it, best first (the window's code views); then
    the context ``Memory.assemble`` builds for the message within ``budget``
    tokens, one piece per tier that holds anything (its header and its lines, as
    in ``Assembled.context``), each tier with its ``relevance``.

    Each provider is asked only when the pieces before its own have been taken, so
    a caller that adds each piece as it comes sees the same order of effects."""
    yield Piece(message, ContextItemType.UserMessage(None))
    if code is not None:
        for snippet in code(message):
            yield Piece(
                snippet.content,
                ContextItemType.CodeSnippet(snippet.file_path, snippet.line_range),
                snippet.relevance,
            )
    if context is None or budget <= 0:
        return
    for tier in context(message, budget):
        if tier.items:
            text = "\n".join([_HEADERS[tier.name], *("- " + item.text for item in tier.items)])
            yield Piece(text, ContextItemType.AssistantResponse([]), relevance.get(tier.name, 1.0))


def item_to_message(item: ContextItem) -> Message:
    """Chat roles: system prompt -> system, assistant turns -> assistant, everything
    else the agent was shown (user text, tool output, code, task state, graph answers)
    -> user, with a one-line header saying what it is."""
    kind = item.item_type
    if isinstance(kind, ContextItemType.SystemPrompt):
        return {"role": "system", "content": item.content}
    if isinstance(kind, ContextItemType.AssistantResponse):
        return {"role": "assistant", "content": item.content}
    if isinstance(kind, ContextItemType.UserMessage):
        return {"role": "user", "content": item.content}
    if isinstance(kind, ContextItemType.ToolResult):
        where = f" on {kind.file_path}" if kind.file_path else ""
        header = f"[tool result: {kind.tool_name}{where}]"
    elif isinstance(kind, ContextItemType.CodeSnippet):
        header = f"[code: {kind.file_path} lines {kind.line_range[0]}-{kind.line_range[1]}]"
    elif isinstance(kind, ContextItemType.TaskState):
        return {"role": "user", "content": f"[current task {kind.task_id}] {kind.description}"}
    else:
        assert isinstance(kind, ContextItemType.KnowledgeGraphQuery)
        header = f"[code graph: {kind.query}]"
    return {"role": "user", "content": f"{header}\n{item.content}"}


def describe(item: ContextItem) -> str:
    """One short line naming an item: a code view's file and lines, else the start
    of its text."""
    kind = item.item_type
    if isinstance(kind, ContextItemType.CodeSnippet):
        return f"{kind.file_path}:{kind.line_range[0]}-{kind.line_range[1]}"
    one = " ".join(item.content.split())
    return one if len(one) <= 60 else one[:57] + "..."


def preview(
    message: str,
    window: ContextWindow,
    messages: Sequence[Message],
    pruned: PruneResult | None,
    *,
    now: float,
    code_tokens: int,
    notes: list[str],
) -> ContextPreview:
    """The window after ``prepare_context(message)`` returned ``messages``: every
    item with its score at ``now``, tokens and message, and the items the last prune
    (``pruned``) removed that are not back in the window."""
    from .results import ContextEntry, ContextPreview

    items = window.items()
    scores = window.scores(now)
    kept = {item.id for item in items}
    removed = (
        []
        if pruned is None
        else [
            ContextEntry(it.type_name, None, it.token_cost, float(s), describe(it), None)
            for it, s in zip(pruned.removed, pruned.removed_scores)
            if it.id not in kept
        ]
    )
    entries = [
        ContextEntry(it.type_name, m["role"], it.token_cost, float(s), describe(it), m["content"])
        for it, s, m in zip(items, scores, messages)
    ]
    return ContextPreview(
        message,
        window.max_tokens,
        window.threshold,
        code_tokens,
        window.token_count,
        entries,
        removed,
        sum(r.tokens for r in removed),
        notes,
    )


# -- a conversation's context ------------------------------------------------------------


def conversation(session_id: str, turns: Sequence[Turn], ranked: Sequence[MemoryRecord]) -> Conversation:
    """A conversation's context: the session's short-term window (its last turns,
    oldest first, as given) and the top memories by score (as ranked)."""
    from .results import Conversation

    return Conversation(session_id, list(turns), list(ranked))


# -- the four tiers ------------------------------------------------------------------------

TierName = Literal["critical", "relevant", "background", "index"]
TIERS: tuple[TierName, ...] = (
    "critical",
    "relevant",
    "background",
    "index",
)
_HEADERS = {
    "critical": "## Critical",
    "relevant": "## Relevant",
    "background": "## Background",
    "index": "## Index",
}
_SKIPS = 20  # items that do not fit a tier tried past the first, before it is closed


class Candidate(NamedTuple):
    """An item offered to a tier, best first within its tier; ``later``: a filler,
    placed only with what the four tiers left (after every tier before it could
    take more)."""

    tier: str
    kind: str
    ref: str | None
    text: str
    score: float
    reasons: list[Reason]
    later: bool = False


def tier_budgets(budget: int, shares: Sequence[float]) -> list[int]:
    """The four tiers' token budgets: each share of ``budget`` rounded down, the
    index tier given what rounding left."""
    first = [int(budget * share) for share in shares[:3]]
    return [*first, max(0, budget - sum(first))]


def fill_tiers(
    budget: int,
    shares: Sequence[float],
    offered: Mapping[str, Sequence[Candidate]],
    tokens: TokenCounter,
    line_chars: int,
    index: Callable[[list[Candidate]], list[Candidate]] | None = None,
) -> tuple[list[Tier], str, int]:
    """Places ``offered`` items in the four tiers, in tier order: each tier takes its
    items, best first, while they fit its budget plus what the tiers before it
    left (``index``, when given, is offered what the first three left out and
    returns the index tier's items); what is left after the index goes back to the
    tiers in order for the items they could not take and their fillers (``later``).
    An item whose ``ref`` an earlier item has is left out. Returns the tiers, the
    rendered context and its tokens (at most ``budget``: items are dropped from the
    end until the whole text fits)."""
    from .results import Tier, TierItem

    seen: set[str] = set()
    taken: dict[str, list[TierItem]] = {name: [] for name in TIERS}
    given = dict(zip(TIERS, tier_budgets(budget, shares)))
    used = dict.fromkeys(TIERS, 0)
    queue = {name: list(offered.get(name, ())) for name in TIERS}

    def take(name: TierName, allowed: int, first: bool) -> None:
        skipped = 0
        rest = []
        for candidate in queue[name]:
            if candidate.ref is not None and candidate.ref in seen:
                continue
            if skipped > _SKIPS or (first and candidate.later):
                rest.append(candidate)
                continue
            line = "- " + one_line(candidate.text, line_chars)
            size = tokens.count_kept(line)
            # the line and its newline; the first of a tier, its header and the blank line before it too
            cost = size + 1 + (0 if taken[name] else tokens.count_kept(_HEADERS[name]) + 2)
            if used[name] + cost > allowed:
                skipped += 1
                rest.append(candidate)
                continue
            used[name] += cost
            if candidate.ref is not None:
                seen.add(candidate.ref)
            taken[name].append(
                TierItem(candidate.kind, candidate.ref, line[2:], cost, round(candidate.score, 6), candidate.reasons)
            )
        queue[name] = rest

    carry = 0
    for name in TIERS:
        if name == "index" and index is not None:
            left = [c for t in TIERS[:3] for c in queue[t] if c.ref not in seen and not c.later]
            queue[name] = [*queue[name], *index(left)]
        allowed = given[name] + carry
        take(name, allowed, True)
        carry = allowed - used[name]
        given[name] = allowed
    for name in TIERS:  # what is left goes back to the tiers that could take more
        if carry <= 0:
            break
        before = used[name]
        take(name, used[name] + carry, False)
        carry -= used[name] - before
        given[name] += used[name] - before
    context = _render(taken)
    count = tokens.count_lines(context)
    while count > budget:
        last = next(name for name in reversed(TIERS) if taken[name])
        taken[last].pop()
        context = _render(taken)
        count = tokens.count_lines(context)
    tiers = [Tier(name, given[name], sum(i.tokens for i in taken[name]), taken[name]) for name in TIERS]
    return tiers, context, count


def _render(taken: Mapping[str, Sequence[TierItem]]) -> str:
    blocks = []
    for name in TIERS:
        if taken[name]:
            blocks.append("\n".join([_HEADERS[name], *("- " + item.text for item in taken[name])]))
    return "\n\n".join(blocks)


# -- the router ----------------------------------------------------------------------------


class Routable(Protocol):
    """What the router reads of a memory: a stored row or a :class:`MemoryRecord`
    (``score`` the one stored with it)."""

    @property
    def id(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def level(self) -> str: ...
    @property
    def domain(self) -> str | None: ...
    @property
    def module(self) -> str | None: ...
    @property
    def code_ref(self) -> str | None: ...
    @property
    def parent_id(self) -> int | None: ...
    @property
    def score(self) -> float: ...


_MISSES = 20  # memories that do not fit a level tried past the first, before the level is closed
_LEVELS = {"L0": ("L0",), "L1": ("L1",), "L2": ("L2", "L3")}


def _rank(m: Routable) -> tuple[float, int]:
    return (-m.score, m.id)


_ID = operator.attrgetter("id")
# What a memory's place depends on, as a plain tuple (see _placement)
_ROW = operator.attrgetter("level", "score", "domain", "code_ref", "module", "kind", "content")
_CONTENT = 6
_FLOWS = ("workflow", "pattern")


class _Placed(NamedTuple):
    """Where :class:`Hierarchy` put one memory, as its row was then."""

    level: str
    rank: tuple[float, int]
    domain: str | None
    about: tuple[str | None, str | None] | None
    module: str | None
    flow: bool
    content: str


class Hierarchy:
    """The active memories grouped as the router and the index read them: by level
    (L3 with L2; each by stored score, best first, equal scores by id), by domain
    (L1 and below, by id) with each domain's stemmed words, by id, by the code they
    are about (``code_ref``, ``module``; by id), the modules' counts, and the
    workflows and patterns (best stored score first, equal scores by id). It depends
    on the memories' contents, levels, domains, statuses and stored scores only, so
    a caller keeps it while those stay the same, and :meth:`place` moves the
    memories that changed where grouping them all again would."""

    __slots__ = ("_counts", "_placed", "about", "by_domain", "by_id", "by_level", "flows", "modules", "words")

    def __init__(self, memories: Iterable[Routable] = ()) -> None:
        self.by_level: dict[str, list[Routable]] = {"L0": [], "L1": [], "L2": []}
        self.by_domain: dict[str, list[Routable]] = {}
        self.words: dict[str, frozenset[str]] = {}
        self.by_id: dict[int, Routable] = {}
        self.about: dict[tuple[str | None, str | None], list[Routable]] = {}
        self.modules: Counter[str] = Counter()
        self.flows: list[Routable] = []
        self._placed: dict[int, tuple[Any, ...]] = {}  # id -> _ROW of the row as placed
        self._counts: dict[str, Counter[str]] = {}  # see _counted
        for m in sorted(memories, key=_ID):  # in id order: every list below appends in order
            row = self._placed[m.id] = _ROW(m)
            level, domain, about, module, flow = _where(row)
            self.by_id[m.id] = m
            self.by_level[level].append(m)
            if domain is not None:
                self.by_domain.setdefault(domain, []).append(m)
            if about is not None:
                self.about.setdefault(about, []).append(m)
            if module is not None:
                self.modules[module] += 1
            if flow:
                self.flows.append(m)
        for members in self.by_level.values():
            members.sort(key=_rank)
        self.flows.sort(key=_rank)
        for name in self.by_domain:
            self._word(name)

    def place(self, changed: Mapping[int, Routable | None]) -> None:
        """Moves each memory of ``changed`` (its id -> its row while it is active,
        else None) out of where it was and to where its row puts it now (a row
        placed as it was stays)."""
        moving = {
            memory_id: (
                _placement(memory_id, self._placed.get(memory_id)),
                row,
                _placement(memory_id, _ROW(row) if row is not None else None),
            )
            for memory_id, row in changed.items()
        }
        moving = {i: m for i, m in moving.items() if not (m[0] == m[2] and self.by_id.get(i) is m[1])}
        # each touched domain's words, counted by member (its name one of them)
        counts = {
            domain: self._counted(domain)
            for old, _, new in moving.values()
            for domain in {old.domain if old else None, new.domain if new else None}
            if domain is not None
        }
        for memory_id, (old, row, new) in moving.items():
            if old is not None:
                del self._placed[memory_id], self.by_id[memory_id]
                _drop(self.by_level[old.level], memory_id, old.rank, _rank)
                if old.domain is not None:
                    _drop_from(self.by_domain, old.domain, memory_id)
                    _count(counts[old.domain], old.content, -1)
                if old.about is not None:
                    _drop_from(self.about, old.about, memory_id)
                if old.module is not None:
                    self.modules[old.module] -= 1
                    if not self.modules[old.module]:
                        del self.modules[old.module]
                if old.flow:
                    _drop(self.flows, memory_id, old.rank, _rank)
            if row is None or new is None:
                continue
            self._placed[memory_id], self.by_id[memory_id] = _ROW(row), row
            bisect.insort(self.by_level[new.level], row, key=_rank)
            if new.domain is not None:
                bisect.insort(self.by_domain.setdefault(new.domain, []), row, key=_ID)
                _count(counts[new.domain], new.content, 1)
            if new.about is not None:
                bisect.insort(self.about.setdefault(new.about, []), row, key=_ID)
            if new.module is not None:
                self.modules[new.module] += 1
            if new.flow:
                bisect.insort(self.flows, row, key=_rank)
        for domain, count in counts.items():
            if domain in self.by_domain:
                self.words[domain] = frozenset(count)
            else:
                self.words.pop(domain, None)
                self._counts.pop(domain, None)

    def _counted(self, domain: str) -> Counter[str]:
        """The members of ``domain`` holding each of its words (its name counted as
        one), counted the first time the domain changes."""
        count = self._counts.get(domain)
        if count is None:
            count = self._counts[domain] = Counter()
            # the contents as placed: a row changed in place holds its new one already
            for text in [domain, *(self._placed[m.id][_CONTENT] for m in self.by_domain.get(domain, ()))]:
                _count(count, text, 1)
        return count

    def _word(self, domain: str) -> None:
        from ._core import tokenize

        members = self.by_domain[domain]
        # one text: a word is a run of letters, digits and _, so the words of the
        # texts joined are the words of each
        self.words[domain] = frozenset(tokenize(" ".join([domain, *(m.content for m in members)]), stem=True))


def _count(count: Counter[str], text: str, by: int) -> None:
    from ._core import tokenize

    for word in set(tokenize(text, stem=True)):
        count[word] += by
        if not count[word]:
            del count[word]


def _where(
    row: tuple[Any, ...],
) -> tuple[str, str | None, tuple[str | None, str | None] | None, str | None, bool]:
    """The groups a row (its :data:`_ROW`) goes in: its level (L3 with L2), its
    domain (not at L0), the code it is about, its module, whether it is a flow."""
    level, _, domain, code_ref, module, kind, _ = row
    return (
        "L2" if level == "L3" else level,
        domain if level != "L0" and domain else None,
        (code_ref, module) if code_ref or module else None,
        module or None,
        kind in _FLOWS,
    )


def _placement(memory_id: int, row: tuple[Any, ...] | None) -> _Placed | None:
    """Where a row (its :data:`_ROW`) goes, and what it was placed by."""
    if row is None:
        return None
    level, domain, about, module, flow = _where(row)
    return _Placed(level, (-row[1], memory_id), domain, about, module, flow, row[_CONTENT])


def _drop(members: list[Routable], memory_id: int, at: Any, key: Callable[[Routable], Any]) -> None:
    """Takes the memory out of ``members`` (sorted by ``key``, its ``key`` ``at``
    when it was put there)."""
    i = bisect.bisect_left(members, at, key=key)
    if i < len(members) and members[i].id == memory_id:
        del members[i]
    else:  # its row changed under the list: looked for
        del members[next(j for j, m in enumerate(members) if m.id == memory_id)]


def _drop_from(groups: dict[Any, list[Routable]], group: Any, memory_id: int) -> None:
    members = groups[group]
    _drop(members, memory_id, memory_id, _ID)
    if not members:
        del groups[group]


def route(
    query: str,
    known: Hierarchy,
    relevance: Mapping[int, float],
    max_tokens: int,
    policy: AssemblyPolicy,
    tokens: TokenCounter,
    record: Callable[[list[Any]], list[MemoryRecord]],
    dense: Mapping[str, float] | None = None,
) -> Routed:
    """Seed 000's semantic router over the active memories (``known``): every L0
    memory; each domain scored by the share of the query's words its name and
    memories hold, or its ``dense`` score (domain -> the best cosine similarity of
    the query with one of its memories) when higher, and loaded at
    ``route_threshold`` or more; when the memories
    loaded hold under ``route_min_confidence`` of the query's words, the
    ``route_widen`` best domains under the threshold too. In the loaded domains
    (and among the memories of no domain that ``relevance`` ranks), L1 memories
    best first until ``route_l1_share`` of ``max_tokens``, L2 and L3 until
    ``route_l2_share``; then up to ``cross_references`` memories they point to
    (a memory's parent, the L1 memories of an L2 memory's domain, the memories
    about a decision's code). ``relevance`` (memory id -> recall score) orders
    each level, then the score stored when the hierarchy was grouped. ``record``
    turns the memories loaded into the results' records."""
    from ._core import tokenize
    from .results import DomainScore, Routed

    words = set(tokenize(query, stem=True))
    by_level, by_domain, by_id = known.by_level, known.by_domain, known.by_id
    scores = {d: len(words & held) / len(words) if words else 0.0 for d, held in known.words.items()}
    by_dense = {d for d, s in (dense or {}).items() if d in scores and s > scores[d]}
    scores.update({d: float(dense[d]) for d in by_dense} if dense else {})
    chosen = {d for d, s in scores.items() if s >= policy.route_threshold}
    cost: dict[int, int] = {}

    def tokens_of(m: Routable) -> int:
        if m.id not in cost:
            cost[m.id] = tokens.count_kept(m.content)
        return cost[m.id]

    def eligible(m: Routable, domains: set[str]) -> bool:
        return m.level == "L0" or (m.domain in domains if m.domain else m.id in relevance)

    def ranked(level: str, domains: set[str]) -> Iterator[Routable]:
        """A level's memories in the loaded domains, best first: what recall ranks,
        by its score; then the rest in the hierarchy's order (stored score)."""
        recalled = [by_id[i] for i in relevance if i in by_id and by_id[i].level in _LEVELS[level]]
        recalled.sort(key=lambda m: (-relevance[m.id], -m.score, m.id))
        yield from (m for m in recalled if eligible(m, domains))
        yield from (m for m in by_level[level] if m.id not in relevance and eligible(m, domains))

    def pick(domains: set[str]) -> tuple[list[Routable], int]:
        picked: list[Routable] = []
        used = 0
        limits = (
            max_tokens * policy.route_l1_share,
            max_tokens * policy.route_l1_share,
            max_tokens * policy.route_l2_share,
        )
        for level, limit in zip(("L0", "L1", "L2"), limits):
            misses = 0
            for m in ranked(level, domains):
                if used + tokens_of(m) <= limit:
                    picked.append(m)
                    used += tokens_of(m)
                else:
                    misses += 1
                    if misses > _MISSES:
                        break
        return picked, used

    picked, used = pick(chosen)

    def coverage(selected: Sequence[Routable]) -> float:
        if not words:
            return 0.0
        held = set(tokenize(" ".join(m.content for m in selected if m.level != "L0"), stem=True))
        return len(words & held) / len(words)

    confidence = coverage(picked)
    widened: list[str] = []
    if confidence < policy.route_min_confidence and policy.route_widen:
        under = sorted((d for d in scores if d not in chosen and scores[d] > 0.0), key=lambda d: (-scores[d], d))
        widened = under[: policy.route_widen]
        if widened:
            chosen |= set(widened)
            picked, used = pick(chosen)
            confidence = coverage(picked)
    ids = {m.id for m in picked}
    crossed: list[list[int]] = []
    first_l1: dict[str, list[Routable]] = {}  # a domain's first L1 memory, looked up once

    def l1_of(domain: str) -> list[Routable]:
        if domain not in first_l1:
            first_l1[domain] = next(([o] for o in by_domain.get(domain, ()) if o.level == "L1"), [])
        return first_l1[domain]

    for m in list(picked):
        if len(crossed) >= policy.cross_references:
            break
        targets: list[Routable] = []
        if m.parent_id is not None and m.parent_id in by_id:
            targets.append(by_id[m.parent_id])
        if m.level in ("L2", "L3") and m.domain:
            targets += l1_of(m.domain)
        if m.kind == "decision" and (m.code_ref or m.module):
            targets += [o for o in known.about.get((m.code_ref, m.module), []) if o.id != m.id][:2]
        for target in targets:
            if target.id in ids or len(crossed) >= policy.cross_references:
                continue
            if used + tokens_of(target) > max_tokens * policy.route_l2_share:
                continue
            picked.append(target)
            ids.add(target.id)
            used += tokens_of(target)
            crossed.append([m.id, target.id])
    domains = [
        DomainScore(d, round(scores[d], 6), len(by_domain[d]), d in chosen, d in by_dense)
        for d in sorted(scores, key=lambda d: (-scores[d], d))
    ]
    levels_of = Counter(m.level for m in picked)
    loaded = ", ".join(f"{d.domain} ({d.score:.2f}{', dense' if d.dense else ''})" for d in domains if d.chosen)
    loaded = loaded or "none"
    explanation = (
        f"{levels_of['L0']} project (L0) memories, loaded always; domains loaded: {loaded}"
        + (f", widened to {', '.join(widened)} because the confidence was low" if widened else "")
        + f"; {levels_of['L1']} L1 and {levels_of['L2'] + levels_of['L3']} L2/L3 memories"
        + f" within {used} of {max_tokens} tokens"
        + (f"; {len(crossed)} added by cross-reference" if crossed else "")
        + f"; they hold {confidence:.0%} of the query's words."
    )
    return Routed(query, max_tokens, record(picked), used, domains, round(confidence, 6), explanation, crossed)
