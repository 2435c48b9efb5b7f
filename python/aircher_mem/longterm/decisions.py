"""The decision verbs over the stores: recording a decision with its causal chain,
reading decisions and their reasons from a turn, answering "why did we ...?"
(:mod:`.chains` holds the chains), and resolving a contradiction
(:mod:`.contradictions` finds and lists them)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from ..checks import unix_time
from ..errors import InvalidInputError, UnknownMemoryError
from ..results import CausalChain, Contradiction, Extracted
from . import chains, checks, memories, recall
from .core import StoreCore, using_db
from .extract import Candidate, token_set
from .schema import KINDS, RESOLUTIONS, TurnRow

__all__ = ["record", "from_turn", "attach_said", "query", "resolve"]

# a link of each kind and its edge: a reason justifies the decision, the decision
# leads to a consequence, a constraint blocks (the alternatives)
_EDGES = {"reason": "justifies", "consequence": "leads_to", "constraint": "blocks"}


@using_db
def record(
    lt: StoreCore,
    decision: str,
    reasons: Sequence[str] | None = None,
    consequences: Sequence[str] | None = None,
    constraints: Sequence[str] | None = None,
    *,
    session_id: str = "",
    strength: float = 1.0,
    at: float | dt.datetime | None = None,
) -> CausalChain:
    """Records ``decision`` (a decision memory: merged into one saying the same)
    with its ``reasons`` (justifies), ``consequences`` (leads_to) and
    ``constraints`` (blocks), each edge of ``strength``; committed before it
    returns. Returns its chain."""
    lt._check_open()
    checks.text("decision", decision)
    lists = [
        chains.texts(name, v)
        for name, v in (("reasons", reasons), ("consequences", consequences), ("constraints", constraints))
    ]
    strength = _strength(strength)
    session = checks.redacted(checks.optional_text("session_id", session_id or None)) or ""
    when = lt.clock() if at is None else unix_time("at", at)
    with lt.batch():
        made = memories.remember(lt, decision, kind="decision", importance=1, at=when)
        memory = lt._memories[made.memory_id]
        links = [(kind, text, _EDGES[kind], strength) for kind, texts in zip(_EDGES, lists) for text in texts]
        root = chains.attach(lt, memory, links, when, session, None)
    return chains.chain(lt, root.id, max_depth=5)


def _strength(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
        raise InvalidInputError(f"strength must be a number from 0 to 1, got {checks.short(value)}")
    return float(value)


def from_turn(
    lt: StoreCore, turn: TurnRow, previous: Sequence[TurnRow], extracted: Sequence[Extracted]
) -> list[Extracted]:
    """The decisions ``turn`` states with a reason, consequence or constraint, into
    their chains (the turns before it in the session, ``previous``, are read too, so
    that "The main reason was ..." finds the decision it answers, even after a
    question why; only what this turn says is added). A decision is the memory
    ``extracted`` from the turn that holds its words, else a decision memory of its
    own. Returns what became of the decision memories this turn states that
    ``extracted`` does not hold."""
    from . import chains_extract

    window = "\n".join([*(t.text for t in previous), turn.text])
    out: list[Extracted] = []
    for found in chains_extract.decisions_in(window, settings=lt.chains):
        own = found.sentence in turn.text
        links = [
            (link.kind, link.text, link.edge, link.strength) for link in found.links if own or link.text in turn.text
        ]
        if not links:  # a choice said alone is the extractor's (a decision memory, no chain)
            continue
        words = token_set(found.decision)
        source = turn if own else next((t for t in reversed(previous) if found.sentence in t.text), None)
        same = [e for e in extracted if own and words and words <= token_set(e.content)]
        if same:
            done = same[0]
        else:
            candidate = Candidate(
                content=found.decision,
                kind="decision",
                category="decision",
                slot=None,
                value=None,
                rules=("chain",),
                importance=1,
                tags=("decision",),
            )
            done = memories.ingest(lt, candidate, turn=source, at=turn.at, tags=turn.tags)
            if own:
                out.append(done)
        memory = lt._memories.get(done.memory_id)
        if memory is not None:
            decided_in = source.id if source is not None else None
            chains.attach(lt, memory, links, turn.at, turn.session_id, turn.id, decided_in)
    return out


def attach_said(lt: StoreCore, memory_id: int, links: Sequence[tuple[str, str]], turn: TurnRow) -> None:
    """An extractor's ``links`` (reason, consequence or constraint, text) of the
    decision memory ``memory_id``, said in ``turn``: into its chain, each edge of
    ``[decisions] extractor_strength``."""
    memory = lt._memories.get(memory_id)
    if memory is None:
        return
    strength = lt.decisions.extractor_strength
    said = [(kind, text, _EDGES[kind], strength) for kind, text in links if kind in _EDGES and text]
    chains.attach(lt, memory, said, turn.at, turn.session_id, turn.id)


@using_db
def query(lt: StoreCore, text: str, *, max_depth: int = 5, at: float | dt.datetime | None = None) -> CausalChain:
    """The chain of the decision ``text`` asks about ("why did we use FastAPI?"):
    of the decisions with a chain that recall finds (a decision memory, or one said
    in a turn recall finds), the one whose chain and the turns it was said in hold
    most of the question's words (recall's order breaks ties); else the decision
    whose chain's nodes share the most of the question's words (at least
    ``chain_min_overlap`` of them); an empty chain, with the reason, when none."""
    lt._check_open()
    question = checks.text("query", text, max_chars=100_000)
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or not 0 <= max_depth <= chains.MAX_DEPTH:
        limit = chains.MAX_DEPTH
        raise InvalidInputError(f"max_depth must be an integer from 0 to {limit}, got {checks.short(max_depth)}")
    lt._load()
    roots = {d: r for d in list(lt._chain_of) if d in lt._memories and (r := chains.root_of(lt, d)) is not None}
    if not roots:
        return CausalChain(question, None, [], [], "graph TD", "", "no decision with its reasons recorded yet")
    said_in: dict[int, list[int]] = {}  # a turn -> the decisions said in it
    for decision_id in roots:
        for node_id in lt._chain_of[decision_id]:
            turn_id = lt._nodes[node_id].turn_id
            if turn_id is not None and decision_id not in said_in.setdefault(turn_id, []):
                said_in[turn_id].append(decision_id)
    chained: list[int] = []
    for hit in recall.recall(lt, question, k=10, kinds=[*KINDS, "turn"], at=at).hits:
        found = said_in.get(hit.id, []) if hit.kind == "turn" else [hit.id] if hit.id in roots else []
        for decision_id in [*found, *(d for turn in hit.turns for d in said_in.get(turn.id, []))]:
            if decision_id not in chained:
                chained.append(decision_id)
    wanted = token_set(question)
    best = None
    if chained:
        held = [len(wanted & _words_of(lt, decision_id)) for decision_id in chained]
        best = chained[held.index(max(held))]
    if best is None:
        scored = []
        for decision_id in roots:
            said = set().union(*(token_set(lt._nodes[i].content) for i in lt._chain_of[decision_id]))
            share = len(wanted & said) / len(wanted) if wanted else 0.0
            scored.append((share, decision_id))
        share, decision_id = max(scored, default=(0.0, 0))
        if share < lt.decisions.chain_min_overlap:
            why = f"no recorded decision matches (best word overlap {share:.2f} < {lt.decisions.chain_min_overlap:g})"
            return CausalChain(question, None, [], [], "graph TD", "", why)
        best = decision_id
    return chains.chain(lt, roots[best], max_depth=max_depth, query_text=question)


def _words_of(lt: StoreCore, decision_id: int) -> set[str]:
    """The content words of a decision's chain and of the turns its nodes were said in."""
    words = set(token_set(lt._memories[decision_id].content))
    for node_id in lt._chain_of[decision_id]:
        node = lt._nodes[node_id]
        words |= token_set(node.content)
        turn = lt._turns.get(node.turn_id) if node.turn_id is not None else None
        if turn is not None:
            words |= token_set(turn.text)
    return words


@using_db
def resolve(
    lt: StoreCore,
    contradiction_id: int,
    resolution: str,
    *,
    note: str = "",
    content: str | None = None,
    now: float | dt.datetime | None = None,
) -> Contradiction:
    """Resolves an open contradiction: ``a_wins`` / ``b_wins`` supersede the other
    memory, ``both_valid`` keeps both, ``merged`` stores ``content`` (required) as
    a new memory that supersedes both. Committed before it returns."""
    from . import contradictions

    lt._check_open()
    contradiction_id = checks.positive_id("contradiction_id", contradiction_id)
    resolution = checks.choice("resolution", resolution, RESOLUTIONS)
    note = checks.redacted(checks.optional_text("note", note or None)) or ""
    when = lt.clock() if now is None else unix_time("now", now)
    lt._load()
    row = lt._contradictions.get(contradiction_id)
    if row is None:
        raise UnknownMemoryError(f"no contradiction {contradiction_id}")
    if row.resolution is not None:
        raise InvalidInputError(f"contradiction {contradiction_id} is already resolved ({row.resolution})")
    a, b = lt._memories[row.memory_a], lt._memories[row.memory_b]
    if resolution == "merged":
        if content is None or not str(content).strip():
            raise InvalidInputError("resolution merged needs content: the memory that replaces both")
        with lt.batch():  # one transaction: the new memory, both superseded, the row
            for loser in (a, b):
                loser.status = "archived"  # nothing merges into them meanwhile
                lt._track_active(loser)
            made = memories.remember(lt, content, kind=b.kind, at=when, importance=max(a.importance, b.importance))
            merged = lt._memories[made.memory_id]
            for loser in (a, b):
                contradictions.supersede(lt, loser, merged, when, f"merged into memory {merged.id}")
            row.resolved_at, row.resolution = when, "merged"
            row.resolution_note = note or f"merged into memory {merged.id}"
            lt._touch_contradiction(row)
    else:
        if content is not None:
            raise InvalidInputError(f"content is only for resolution merged, not {resolution}")
        contradictions.settle(lt, row, resolution, note, when)
        lt._commit()
    return contradictions.result(lt, row)
