"""Causal chains (seed 000's tracker): why a decision was made, what it led to and
what blocked the alternatives.

A decision is a memory of kind decision; its chain is a small graph around its
node: reasons (edge ``justifies`` to the decision, or ``causes`` when the reason
set it off), consequences (``leads_to`` from it) and constraints (``blocks``),
each edge with a strength in [0, 1]. Chains come from :func:`record` (the
``record_decision`` verb) and from what turns say (:func:`from_turn`, with the
rules of :mod:`.chains_extract`: "we went with X because Y", "X, so Y", "we can't X
since Y"). A reason or consequence that says what another decision says (their
word overlap at least ``[decisions] chain_link_similarity``) joins the two
chains: the earlier decision ``causes`` the later.

:func:`query` finds the decision a question is about (recall over decisions, the
words of the chains' nodes next) and walks its edges, both ways, up to
``max_depth``; the answer renders as text and as a mermaid ``graph TD``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence

from ..errors import InvalidInputError
from ..results import CausalChain, CausalEdge, CausalNode
from . import checks
from .core import StoreCore
from .extract import jaccard, token_set
from .schema import CausalNodeRow, MemoryRow

__all__ = ["attach", "root_of", "texts", "chain", "of_decision", "reasons_of", "mermaid", "MAX_DEPTH", "MAX_ITEMS"]

MAX_DEPTH = 20  # query_chain walks at most this far, whatever it is asked
MAX_ITEMS = 50  # reasons, consequences or constraints recorded at once, each
_ARROW = {"justifies": "justifies", "causes": "causes", "leads_to": "leads to", "blocks": "blocks"}


def _node(
    lt: StoreCore, decision_id: int, node_type: str, content: str, at: float, session_id: str, turn_id: int | None
) -> CausalNodeRow:
    """The chain's node saying ``content`` (the same words: the one there is)."""
    wanted = token_set(content)
    for node_id in lt._chain_of.get(decision_id, ()):
        node = lt._nodes[node_id]
        if node.node_type == node_type and (node.content == content or (wanted and token_set(node.content) == wanted)):
            return node
    node = CausalNodeRow(lt._next_node, node_type, content, at, session_id, decision_id, turn_id)
    lt._next_node += 1
    lt._nodes[node.id] = node
    lt._chain_of[decision_id].append(node.id)
    lt._touch_node(node)
    return node


def root_of(lt: StoreCore, decision_id: int) -> int | None:
    """The decision node of decision memory ``decision_id``'s chain, if it has one."""
    return next((i for i in lt._chain_of.get(decision_id, ()) if lt._nodes[i].node_type == "decision"), None)


def _decision_node(lt: StoreCore, memory: MemoryRow, at: float, session_id: str, turn_id: int | None) -> CausalNodeRow:
    root = root_of(lt, memory.id)
    if root is not None:
        return lt._nodes[root]
    return _node(lt, memory.id, "decision", memory.content, at, session_id, turn_id)


def attach(
    lt: StoreCore,
    memory: MemoryRow,
    links: Iterable[tuple[str, str, str, float]],
    at: float,
    session_id: str,
    turn_id: int | None,
    decided_in: int | None = None,
) -> CausalNodeRow:
    """Adds ``links`` (kind, text, edge type, strength) to ``memory``'s chain, and
    the edges to other decisions their texts say; the links said in turn
    ``turn_id``, the decision (when its node is new) in ``decided_in`` (default:
    the same turn)."""
    root = _decision_node(lt, memory, at, session_id, turn_id if decided_in is None else decided_in)
    for kind, text, edge, strength in links:
        node = _node(lt, memory.id, kind, text, at, session_id, turn_id)
        if kind == "consequence":
            lt._cause(root.id, node.id, edge, strength)
        else:
            lt._cause(node.id, root.id, edge, strength)
        _join(lt, memory, root, node)
    return root


def _join(lt: StoreCore, memory: MemoryRow, root: CausalNodeRow, node: CausalNodeRow) -> None:
    """A reason (or constraint) saying what an earlier decision says: that decision
    causes this one; a consequence saying what a later one says: this one causes
    it."""
    threshold = lt.decisions.chain_link_similarity
    for other_id, nodes in lt._chain_of.items():
        other = lt._memories.get(other_id)
        if other is None or other_id == memory.id or other.status != "active" or not nodes:
            continue
        similarity = jaccard(token_set(node.content), token_set(other.content))
        if similarity < threshold:
            continue
        other_root = _decision_node(lt, other, node.created_at, node.session_id, None)
        if node.node_type == "consequence":
            lt._cause(root.id, other_root.id, "causes", round(similarity, 3))
        else:
            lt._cause(other_root.id, root.id, "causes", round(similarity, 3))


def texts(field: str, values: Sequence[str] | None) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise InvalidInputError(f"{field} must be a list of texts, got {checks.short(values)}")
    out = [checks.redacted(checks.text(field, v, max_chars=10_000)) or "" for v in values]
    if len(out) > MAX_ITEMS:
        raise InvalidInputError(f"{field}: at most {MAX_ITEMS} at once, got {len(out)}")
    return [" ".join(v.split()) for v in out if v.strip()]


def _result(lt: StoreCore, node: CausalNodeRow) -> CausalNode:
    return CausalNode(
        node.id,
        node.node_type,  # type: ignore[arg-type]  # one of NODE_TYPES
        node.content,
        node.decision_id,
        node.turn_id,
        node.session_id,
        node.created_at,
    )


def chain(lt: StoreCore, root_id: int, *, max_depth: int, query_text: str = "") -> CausalChain:
    """The chain around node ``root_id``: every node within ``max_depth`` edges of
    it (either way), with the edges between them."""
    root = lt._nodes[root_id]
    nexts: dict[int, list[tuple[int, int, str, float]]] = {}
    for (source, target, kind), strength in lt._causal.items():
        nexts.setdefault(source, []).append((source, target, kind, strength))
        nexts.setdefault(target, []).append((source, target, kind, strength))
    seen = {root_id: 0}
    todo = deque([root_id])
    edges: set[tuple[int, int, str, float]] = set()
    while todo:
        at = todo.popleft()
        if seen[at] >= max_depth:
            continue
        for edge in sorted(nexts.get(at, ())):
            edges.add(edge)
            other = edge[1] if edge[0] == at else edge[0]
            if other not in seen and other in lt._nodes:
                seen[other] = seen[at] + 1
                todo.append(other)
    nodes = [_result(lt, lt._nodes[i]) for i in sorted(seen, key=lambda i: (seen[i], i))]
    kept = [
        CausalEdge(s, t, k, w)  # type: ignore[arg-type]  # k: one of EDGE_TYPES
        for s, t, k, w in sorted(edges)
        if s in seen and t in seen
    ]
    return CausalChain(query_text, root.decision_id, nodes, kept, mermaid(nodes, kept), _text(nodes, kept), "")


def of_decision(lt: StoreCore, memory_id: int, max_depth: int = 5) -> CausalChain | None:
    """Decision ``memory_id``'s chain, None when it has none."""
    root = root_of(lt, memory_id)
    return chain(lt, root, max_depth=max_depth) if root is not None else None


def reasons_of(lt: StoreCore, memory_id: int) -> list[str]:
    """The reasons and constraints said for decision ``memory_id``, strongest first."""
    root = root_of(lt, memory_id)
    if root is None:
        return []
    found = [
        (-strength, lt._nodes[source].content)
        for (source, target, kind), strength in lt._causal.items()
        if target == root and kind in ("justifies", "causes", "blocks") and source in lt._nodes
    ]
    return [text for _strength, text in sorted(found)]


def _label(node: CausalNode) -> str:
    text = node.content if len(node.content) <= 80 else node.content[:79] + "…"
    for char, code in (('"', "#quot;"), ("<", "#lt;"), (">", "#gt;"), ("[", "#91;"), ("]", "#93;")):
        text = text.replace(char, code)
    return f"{node.node_type}: {text}"


def mermaid(nodes: Sequence[CausalNode], edges: Sequence[CausalEdge]) -> str:
    """A mermaid ``graph TD`` of the chain: a node per line (decisions in a
    rectangle, reasons rounded, consequences as stadiums, constraints hexagons),
    then an arrow per edge with its type and strength."""
    shapes = {
        "decision": ('["', '"]'),
        "reason": ('("', '")'),
        "consequence": ('(["', '"])'),
        "constraint": ('{{"', '"}}'),
    }
    lines = ["graph TD"]
    for n in nodes:
        left, right = shapes[n.node_type]
        lines.append(f"    n{n.id}{left}{_label(n)}{right}")
    for e in edges:
        lines.append(f"    n{e.source} -->|{_ARROW.get(e.edge_type, e.edge_type)} {e.strength:.2f}| n{e.target}")
    return "\n".join(lines)


def _text(nodes: Sequence[CausalNode], edges: Sequence[CausalEdge]) -> str:
    """Each decision of the chain with its reasons (strongest first), constraints,
    consequences and the decisions it led to."""
    by_id = {n.id: n for n in nodes}
    lines = []
    for n in nodes:
        if n.node_type != "decision":
            continue
        into = sorted((e for e in edges if e.target == n.id and e.source in by_id), key=lambda e: -e.strength)
        out = sorted((e for e in edges if e.source == n.id and e.target in by_id), key=lambda e: -e.strength)
        lines.append(f"Decision: {n.content}")
        for e in into:
            said = {"decision": "after", "constraint": "constrained by"}.get(by_id[e.source].node_type, "because")
            lines.append(f"  {said}: {by_id[e.source].content} ({e.edge_type} {e.strength:.2f})")
        for e in out:
            said = "which led to decision" if by_id[e.target].node_type == "decision" else "which led to"
            lines.append(f"  {said}: {by_id[e.target].content} ({e.edge_type} {e.strength:.2f})")
    return "\n".join(lines)
