"""Causal chains (seed 000): decisions with their reasons, consequences and
constraints, recorded or read from turns, found by a question, walked to a depth,
drawn as mermaid, kept across a reopen and gone when forgotten."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import pytest
from aircher_mem import InvalidInputError, Memory, Policy
from aircher_mem.config import ChainsPolicy, ContradictionsPolicy
from aircher_mem.longterm import LongTermMemory, decisions
from conftest import Clock, Store
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

T0 = 1_700_000_000.0


def shape(chain):  # type: ignore[no-untyped-def]
    return (
        [(n.node_type, n.content) for n in chain.nodes],
        [(e.source, e.target, e.edge_type, e.strength) for e in chain.edges],
    )


def test_a_decision_said_in_a_turn_comes_back_with_its_reason_as_text_and_mermaid(make_store: Store) -> None:
    lt = make_store()
    said = lt.add_turn("s", "assistant", "We went with FastAPI because we need async support.", at=T0)
    [decision] = [e for e in said.extracted if e.kind == "decision"]
    assert (decision.action, decision.content, decision.rules) == ("created", "We went with FastAPI", ["chain"])
    chain = lt.query_chain("why did we use FastAPI?")
    assert chain.decision_id == decision.memory_id and chain.reason == ""
    assert shape(chain) == (
        [("decision", "We went with FastAPI"), ("reason", "we need async support")],
        [(2, 1, "justifies", 0.9)],
    )
    assert chain.nodes[1].turn_id == said.turn_id and chain.nodes[1].session_id == "s"
    assert chain.text == "Decision: We went with FastAPI\n  because: we need async support (justifies 0.90)"
    assert chain.mermaid == (
        "graph TD\n"
        '    n1["decision: We went with FastAPI"]\n'
        '    n2("reason: we need async support")\n'
        "    n2 -->|justifies 0.90| n1"
    )


def test_of_the_decisions_recall_finds_the_question_gets_the_one_it_words(
    monkeypatch: pytest.MonkeyPatch, make_store: Store
) -> None:
    lt = make_store()
    built = lt.add_turn("a", "assistant", "The docs site is built with MkDocs because the team writes Markdown.", at=T0)
    moved = lt.add_turn("b", "user", "We're moving the docs from Sphinx to MkDocs because Sphinx is slow.", at=T0 + 60)
    [other] = [e.memory_id for e in built.extracted if e.kind == "decision" or "chain" in e.rules]
    [ours] = [e.memory_id for e in moved.extracted if e.kind == "decision"]
    found = SimpleNamespace(hits=[SimpleNamespace(id=i, kind="decision", turns=[]) for i in (other, ours)])
    monkeypatch.setattr(decisions.recall, "recall", lambda *args, **kwargs: found)  # recall ranks the other first
    assert lt.query_chain("why did we move the docs from Sphinx to MkDocs?").decision_id == ours
    assert lt.query_chain("why is the docs site built with MkDocs?").decision_id == other
    found.hits.reverse()  # as many words of the question each: recall's order decides
    assert lt.query_chain("why MkDocs?").decision_id == ours


def test_a_decision_is_found_through_the_turn_that_said_it(make_store: Store) -> None:
    lt = make_store()
    lt.add_turn("a", "user", "We decided to leave the monolith as it is because the team is small.", at=T0)
    moved = lt.add_turn(
        "b", "user", "The old Jenkins runner kept timing out, so we moved CI to GitHub Actions.", at=T0 + 60
    )
    [ci] = [e.memory_id for e in moved.extracted if e.kind == "decision"]
    assert lt.get(ci).content == "we moved CI to GitHub Actions"  # "Jenkins" is only in the turn
    # the monolith decision shares "leave"; the turn recall finds says Jenkins
    chain = lt.query_chain("why did we leave Jenkins?")
    assert chain.decision_id == ci
    assert [n.content for n in chain.nodes] == [
        "we moved CI to GitHub Actions",
        "The old Jenkins runner kept timing out",
    ]


def test_a_reason_given_in_the_next_turn_joins_the_decision_before_it(make_store: Store) -> None:
    lt = make_store()
    lt.add_turn("s", "assistant", "We picked Redis for the session cache.", at=T0)
    later = lt.add_turn("s", "user", "The main reason was latency.", at=T0 + 60)
    assert later.extracted == []  # the decision is the earlier turn's
    chain = lt.query_chain("why Redis?")
    assert shape(chain) == (
        [("decision", "We picked Redis for the session cache"), ("reason", "latency")],
        [(2, 1, "justifies", 0.8)],
    )
    assert chain.nodes[1].turn_id == later.turn_id


@pytest.mark.parametrize(("window", "decided"), [(2, True), (1, False)])
def test_a_reason_given_after_a_question_why_joins_the_decision(tmp_path: Path, window: int, decided: bool) -> None:
    turns = [
        ("user", "From now on PRs over 400 lines need to be split."),
        ("assistant", "Sure. What's the motivation, so I can put it in the template?"),
        ("user", "Reviews on the big ones were taking 3+ days and people were rubber-stamping them anyway."),
    ]
    with Memory.open(tmp_path, policy=Policy(chains=ChainsPolicy(window_turns=window))) as mem:
        ids = [mem.add_turn("s", role, text, at=T0 + 60 * i).turn_id for i, (role, text) in enumerate(turns)]
        chain = mem.query_chain("why do we split big pull requests?")
        if not decided:  # the turn before the reason is the question: the decision is out of sight
            assert chain.decision_id is None
            return
        assert [(n.node_type, n.content, n.turn_id) for n in chain.nodes] == [
            ("decision", "From now on PRs over 400 lines need to be split", ids[0]),
            ("reason", turns[2][1].rstrip("."), ids[2]),
        ]


def test_record_decision_keeps_reasons_consequences_and_constraints_with_their_edges(make_store: Store) -> None:
    lt = make_store()
    chain = lt.record_decision(
        "Use sessions instead of JWT",
        reasons=["tokens grew too large for the cookie"],
        consequences=["the API needs a Redis"],
        constraints=["the mobile client cannot refresh tokens"],
        strength=0.75,
    )
    assert shape(chain) == (
        [
            ("decision", "Use sessions instead of JWT"),
            ("reason", "tokens grew too large for the cookie"),
            ("consequence", "the API needs a Redis"),
            ("constraint", "the mobile client cannot refresh tokens"),
        ],
        [(1, 3, "leads_to", 0.75), (2, 1, "justifies", 0.75), (4, 1, "blocks", 0.75)],
    )
    assert lt.get(chain.decision_id).kind == "decision"
    assert chain.text == (
        "Decision: Use sessions instead of JWT\n"
        "  because: tokens grew too large for the cookie (justifies 0.75)\n"
        "  constrained by: the mobile client cannot refresh tokens (blocks 0.75)\n"
        "  which led to: the API needs a Redis (leads_to 0.75)"
    )
    # the same decision again: the same memory and nodes, one more reason
    again = lt.record_decision("Use sessions instead of JWT", reasons=["logout must be immediate"])
    assert again.decision_id == chain.decision_id
    assert [n.content for n in again.nodes if n.node_type == "reason"] == [
        "tokens grew too large for the cookie",
        "logout must be immediate",
    ]


def test_a_reason_that_is_an_earlier_decision_joins_the_chains_and_depth_bounds_the_walk(make_store: Store) -> None:
    lt = make_store()
    first = lt.record_decision("We moved to Postgres", reasons=["we needed JSON columns"])
    second = lt.record_decision("We added GIN indexes", reasons=["we moved to Postgres"])
    assert second.decision_id != first.decision_id
    assert (1, 3, "causes", 1.0) in shape(second)[1]  # Postgres (node 1) causes the GIN decision (node 3)
    near = lt.query_chain("why did we add GIN indexes?", max_depth=1)
    assert [n.content for n in near.nodes] == ["We added GIN indexes", "We moved to Postgres", "we moved to Postgres"]
    far = lt.query_chain("why did we add GIN indexes?", max_depth=2)
    assert "we needed JSON columns" in [n.content for n in far.nodes]
    assert "  after: We moved to Postgres (causes 1.00)" in far.text.splitlines()
    alone = lt.query_chain("why did we add GIN indexes?", max_depth=0)
    assert [n.content for n in alone.nodes] == ["We added GIN indexes"] and alone.edges == []


def test_no_chain_says_why(make_store: Store) -> None:
    lt = make_store()
    assert lt.query_chain("why did we use FastAPI?").reason == "no decision with its reasons recorded yet"
    lt.record_decision("Use ruff for linting", reasons=["it is fast"])
    missing = lt.query_chain("why is the sky blue?")
    assert missing.decision_id is None and missing.nodes == [] and missing.mermaid == "graph TD"
    assert missing.reason.startswith("no recorded decision matches")


def test_chains_survive_a_reopen_and_forgetting_the_decision_leaves_nothing_on_disk(
    tmp_path: Path, make_store: Store
) -> None:
    path = tmp_path / "m.duckdb"
    with make_store(path) as lt:
        made = lt.record_decision("Use Kafka for the audit stream", reasons=["the zebra replay requirement"])
        lt.add_turn("s", "assistant", "We chose Celery because the quokka team knows it.", at=T0)
    with make_store(path) as lt:
        assert shape(lt.query_chain("why Kafka?")) == shape(made)
        lt.forget(made.decision_id)
        assert lt.query_chain("why Kafka?").decision_id != made.decision_id
        lt.forget(text="quokka")
        assert lt.query_chain("why Celery?").decision_id is None
    for f in tmp_path.iterdir():
        data = f.read_bytes()
        assert b"zebra" not in data and b"quokka" not in data, f.name


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda lt: lt.record_decision(""), "decision"),
        (lambda lt: lt.record_decision("Use X", reasons="one reason"), "reasons must be a list"),
        (lambda lt: lt.record_decision("Use X", strength=math.nan), "strength"),
        (lambda lt: lt.record_decision("Use X", strength=1.5), "strength"),
        (lambda lt: lt.record_decision("Use X", consequences=["ok"] * 51), "at most 50"),
        (lambda lt: lt.query_chain("why?", max_depth=-1), "max_depth"),
        (lambda lt: lt.query_chain("why?", max_depth=21), "max_depth"),
        (lambda lt: lt.query_chain("why?", max_depth=True), "max_depth"),
        (lambda lt: lt.query_chain(""), "query"),
    ],
)
def test_bad_arguments_are_typed_errors(make_store: Store, call, message: str) -> None:  # type: ignore[no-untyped-def]
    lt = make_store()
    with pytest.raises(InvalidInputError, match=message):
        call(lt)


def test_memory_verbs_explain_and_assembly_carry_the_reasons(tmp_path: Path) -> None:
    with Memory.open(tmp_path) as mem:
        chain = mem.record_decision("Use structlog for logging", reasons=["JSON logs for Loki"])
        assert mem.query_chain("why structlog?").decision_id == chain.decision_id
        explained = mem.explain(chain.decision_id)
        assert explained.chain is not None and shape(explained.chain) == shape(chain)
        context = mem.assemble(query="structlog logging", budget=2000)
        [critical] = [t for t in context.tiers if t.name == "critical"]
        assert any("(because: JSON logs for Loki)" in item.text for item in critical.items)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["Use Redis", "Use Postgres", "Adopt Kafka", "Use Redis for caching"]),
            st.lists(st.sampled_from(["use Redis", "latency", "Use Postgres", "ops know it", "cost"]), max_size=3),
        ),
        min_size=1,
        max_size=6,
    ),
    st.integers(0, 4),
)
def test_a_walk_stays_within_its_depth_and_its_edges_join_its_nodes(make_store: Store, records, depth: int) -> None:  # type: ignore[no-untyped-def]
    lt = make_store()
    for decision, reasons in records:
        lt.record_decision(decision, reasons=reasons)
    chain = lt.query_chain(records[-1][0], max_depth=depth)
    ids = {n.id for n in chain.nodes}
    assert all(e.source in ids and e.target in ids for e in chain.edges)
    # every node is within `depth` edges of the decision
    reach = {chain.nodes[0].id: 0}
    frontier = [chain.nodes[0].id]
    while frontier:
        at = frontier.pop()
        for e in chain.edges:
            for a, b in ((e.source, e.target), (e.target, e.source)):
                if a == at and b not in reach:
                    reach[b] = reach[at] + 1
                    frontier.append(b)
    assert set(reach) == ids and max(reach.values()) <= depth
    assert len(chain.mermaid.splitlines()) == 1 + len(chain.nodes) + len(chain.edges)


def test_an_llm_extractor_adds_a_decisions_reasons_redacted_and_a_bad_item_is_skipped() -> None:
    token = "ghp_" + "a" * 36

    def llm(text: str) -> object:
        return [
            {
                "content": "Use Celery for the email jobs",
                "kind": "decision",
                "importance": 1,
                "reasons": [f"the retries need a broker, key {token}"],
                "constraints": ["cron cannot retry"],
            },
            {"content": "The broker is Redis", "reasons": ["it is fast"]},  # reasons on a fact: skipped
        ]

    lt = LongTermMemory(":memory:", clock=Clock(T0), extractor=llm)
    said = lt.add_turn("s", "user", "Let's settle the email jobs.", at=T0)
    assert "1 invalid llm item(s) skipped (first: reasons are for a decision, not a fact)" in said.notes[0]
    chain = lt.query_chain("why Celery?")
    assert [(n.node_type, n.content.startswith("the retries need a broker")) for n in chain.nodes[1:]] == [
        ("reason", True),
        ("constraint", False),
    ]
    assert token not in chain.text and "[REDACTED:github_token:" in chain.text
    assert sorted((e.edge_type, e.strength) for e in chain.edges) == [("blocks", 0.8), ("justifies", 0.8)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.text(max_size=300),
    st.lists(st.text(max_size=200), max_size=4),
    st.one_of(st.floats(allow_nan=True), st.integers(-5, 5), st.booleans()),
    st.one_of(st.integers(-3, 25), st.booleans(), st.text(max_size=3)),
)
def test_hostile_arguments_are_typed_errors_or_chains(make_store: Store, decision, reasons, strength, depth) -> None:  # type: ignore[no-untyped-def]
    from aircher_mem.errors import AircherError

    lt = make_store()
    for call in (
        lambda: lt.record_decision(decision, reasons=reasons, strength=strength),
        lambda: lt.query_chain(decision or "why?", max_depth=depth),
        lambda: lt.add_turn("s", "assistant", decision or "x"),
    ):
        try:
            call()
        except AircherError:
            pass
    lt.commit()


def test_the_policys_chains_section_sets_the_strengths(tmp_path: Path) -> None:
    policy = Policy(chains=ChainsPolicy(explicit=0.55))
    with Memory.open(tmp_path, policy=policy) as mem:
        mem.add_turn("s", "assistant", "We went with FastAPI because we need async support.")
        chain = mem.query_chain("why did we use FastAPI?")
        assert [e.strength for e in chain.edges] == [0.55]


def test_the_policys_contradictions_section_sets_the_rules(tmp_path: Path) -> None:
    strict = Policy(contradictions=ContradictionsPolicy(max_chars=5))  # reads too little to see anything
    with Memory.open(tmp_path, policy=strict) as mem:
        mem.remember("Always squash commits on merge")
        mem.remember("Never squash commits on merge")
        assert mem.contradictions().contradictions == []
