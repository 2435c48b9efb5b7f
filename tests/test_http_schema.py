"""schemathesis against the server's own OpenAPI: every operation, valid and invalid
inputs generated from the schema (the coverage phase's boundary and negative cases,
then random ones), through the ASGI app over a Memory of the fixture project with
memories, turns, a task and records in it. Every answer must be no 5xx, conform to
the documented status codes, content type, headers and response schema, and input
the schema calls invalid must be refused (a 4xx). Not checked: that every
schema-valid request is accepted (``positive_data_acceptance``): the schema states
types, choices and lower bounds, while the verbs also refuse blank text and numbers
over their upper limits (a 400, as documented).

Bounded for CI: ``AIRCHER_SCHEMATHESIS_EXAMPLES`` examples per operation (default
15; a longer run by hand: ``AIRCHER_SCHEMATHESIS_EXAMPLES=300 pytest
tests/test_http_schema.py``)."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator

import aircher_mem as am
import pytest
import schemathesis
from aircher_mem import verbs
from aircher_mem.interfaces import http
from conftest import PROJECT, write_files
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import negative_data_rejection, positive_data_acceptance

TOKEN = "schemathesis-token-" + "x" * 32
BASE = "http://127.0.0.1:8787"
EXAMPLES = int(os.environ.get("AIRCHER_SCHEMATHESIS_EXAMPLES", "15"))
SEEN: set[tuple[str, str]] = set()
STATUSES: Counter[int] = Counter()  # every answer's status, for the summary

# One worker runs the whole module in order (conftest: --dist loadfile under -n):
# test_every_route_was_exercised reads SEEN.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[am.Memory]:
    root = write_files(tmp_path_factory.mktemp("schema") / "repo", PROJECT)
    with am.Memory.open(root) as mem:
        mem.index()
        mem.add_turn("s1", "user", "I prefer tabs over spaces in this project.")
        mem.remember("Deploys go through staging first", importance=1, tags=["ops"])
        mem.task("start", "t1", description="Fix the user save")
        mem.record_file_interaction("app/models.py", "edit", line_range=(4, 6))
        mem.record_tool_call("pytest", {"k": "save"}, success=False, error_message="boom")
        yield mem


@pytest.fixture(scope="module")
def api_schema(memory: am.Memory) -> schemathesis.BaseSchema:
    app = http.build_app(memory, token=TOKEN)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, headers={**headers, "Host": "127.0.0.1:8787"})
    schema.config.update(base_url=BASE, headers=headers)
    return schema


def call(case: schemathesis.Case) -> None:
    """Sends ``case`` and checks the answer (schemathesis' own checks: no 5xx,
    documented status, content type, headers and response schema, bad input refused)."""
    SEEN.add((case.method.upper(), case.path))
    response = case.call(base_url=BASE, headers={"Authorization": f"Bearer {TOKEN}"})
    STATUSES[response.status_code] += 1
    assert response.status_code < 500, (case.method, case.formatted_path, case.body, response.text[:500])
    excluded = [positive_data_acceptance]
    if response.status_code == 413:  # over [server] max_body_bytes: refused unread, as documented
        assert response.json()["error"]["code"] == "too_large"
        excluded.append(negative_data_rejection)
    case.validate_response(response, excluded_checks=excluded)


OPERATIONS = (
    [("GET", "/health")]
    + [(v.http_method, v.http_path) for v in verbs.all_verbs("http")]
    + [("POST", path) for path in http.SEED_ROUTES]
)
# Operations with no input the schema can call invalid (none, or optional free text only).
NO_INPUT = {("GET", "/health")} | {
    (v.http_method, v.http_path)
    for v in verbs.all_verbs("http")
    if all(not p.required and p.base is str and not p.choices for p in v.params)
}


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_every_operation_answers_bad_input_with_a_4xx_never_a_5xx(
    api_schema: schemathesis.BaseSchema, method: str, path: str
) -> None:
    """schemathesis' coverage cases (each parameter's boundaries, missing and wrong
    types, for valid and invalid requests), then random valid and invalid ones."""
    operation = api_schema[path][method]
    config = api_schema.config.generation_for(operation=operation)
    modes = [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]
    covered = 0
    for case in api_schema.iter_coverage_cases(operation, generation_modes=modes, generation_config=config):
        call(case)
        covered += 1
    assert covered > 0
    for mode in modes:

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def fuzz(case: schemathesis.Case) -> None:
            call(case)

        try:
            fuzz()
        except Unsatisfiable:
            # nothing of this operation can be made invalid (GET /health, GET /stats: no inputs)
            assert mode is GenerationMode.NEGATIVE and (method, path) in NO_INPUT


def test_every_route_was_exercised() -> None:
    """Runs after the generated tests (file order): each route got requests."""
    if not SEEN:
        pytest.skip("the generated tests did not run (selected out)")
    assert set(OPERATIONS) <= SEEN  # (and methods no route has, which schemathesis tries too)
    assert not [status for status in STATUSES if status >= 500]
    print(f"\nschemathesis: {sum(STATUSES.values())} requests, statuses {dict(sorted(STATUSES.items()))}")


def test_the_schema_is_the_servers_own(api_schema: schemathesis.BaseSchema) -> None:
    """Loaded from GET /openapi.json: every route but that one (schemathesis leaves
    out the schema's own endpoint) is an operation."""
    assert api_schema.raw_schema == json.loads(json.dumps(http.openapi()))
    paths = {(op.method.upper(), op.path) for op in (result.ok() for result in api_schema.get_all_operations())}
    assert paths == set(OPERATIONS)
