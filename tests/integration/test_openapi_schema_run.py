"""A schema-driven run against the participants API, with no new dependency.

Every operation of the OpenAPI document the enrollment function generates is exercised with requests
drawn by hypothesis from the document itself: request bodies from their JSON schema (through a small
JSON-schema → strategy translation for the subset the document uses), path ids (enrolled ones and
arbitrary text) and query values (in and out of their declared ranges, and junk), plus bodies that
break the schema on purpose. The requests go through a ``LocalEnvironment`` (the real handler on
moto). Every response must be below 500, one of the statuses the API answers with, and carry the
``{"status": "ok" | "error", ...}`` envelope, "ok" exactly on 2xx.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from promptpipe.local.environment import LocalEnvironment

ENROLLED = ["+14155550101", "+14155550102", "+14155550103"]
# The statuses the handler answers with (Powertools' 422 is mapped to 400 by the handler, and the
# document lists 400).
ANSWERED = {200, 201, 400, 404, 409}
RUN = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
# Values that are meaningful for a field but vanishingly rare in random text: drawn as well.
HINTS: dict[str, st.SearchStrategy[Any]] = {
    "phone_number": st.one_of(
        st.sampled_from([*ENROLLED, "+1 (415) 555-0199", "4155550198", "+442079460000", "+1415555"]),
        st.from_regex(r"\+1415555[0-9]{4}", fullmatch=True),
    ),
    "timezone": st.sampled_from(["America/Toronto", "Europe/Paris", "UTC", "Mars/Olympus", "america/toronto"]),
}


# --- JSON schema → hypothesis -----------------------------------------------------------------------
def resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    prefix = "#/components/schemas/"
    assert ref.startswith(prefix), ref
    return resolve(document, document["components"]["schemas"][ref.removeprefix(prefix)])


def from_schema(document: dict[str, Any], schema: dict[str, Any], name: str = "") -> st.SearchStrategy[Any]:
    """Values valid for ``schema`` (the subset the document uses: $ref, anyOf, enum, object, string
    with min/maxLength, integer with minimum/maximum, number, boolean, null, array)."""
    schema = resolve(document, schema)
    if "anyOf" in schema and schema.get("type") == "object":  # "at least one of" these fields, non-null
        branches = [b.get("required", []) for b in schema["anyOf"]]
        base = from_schema(document, {k: v for k, v in schema.items() if k != "anyOf"}, name)
        return base.filter(lambda value: any(all(value.get(k) is not None for k in b) for b in branches))
    if "anyOf" in schema:
        return st.one_of([from_schema(document, option, name) for option in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties", {})
        required = set(schema.get("required", []))
        fields = {key: from_schema(document, value, key) for key, value in properties.items()}
        return st.fixed_dictionaries(
            {k: v for k, v in fields.items() if k in required},
            optional={k: v for k, v in fields.items() if k not in required},
        )
    if kind == "array":  # a few items (the cohort check's rows)
        return st.lists(
            from_schema(document, schema.get("items", {}), name), max_size=min(schema.get("maxItems", 3), 3)
        )
    if kind == "string":
        text = st.text(min_size=schema.get("minLength", 0), max_size=min(schema.get("maxLength", 80), 80))
        if "maxLength" in schema:  # the boundary itself
            text = st.one_of(text, st.just("x" * schema["maxLength"]))
        return st.one_of(HINTS[name], text) if name in HINTS else text
    if kind == "integer":
        return st.integers(min_value=_bound(schema, "minimum"), max_value=_bound(schema, "maximum"))
    if kind == "number":
        return st.floats(allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    raise AssertionError(f"schema construct not handled by this run: {schema}")


def _bound(schema: dict[str, Any], key: str) -> int | None:
    return int(schema[key]) if key in schema else None


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=10), children, max_size=3),
    max_leaves=8,
)


def body_strategy(document: dict[str, Any], schema: dict[str, Any]) -> st.SearchStrategy[str]:
    """Mostly schema-valid JSON bodies; some that break it (an unknown field, a wrong type, any JSON,
    not JSON at all)."""
    valid = from_schema(document, schema)
    properties = list(resolve(document, schema).get("properties", {}))
    extra_field = st.builds(lambda body, value: {**body, "unexpected_field": value}, valid, JSON)
    wrong_type = st.builds(
        lambda body, key, value: {**body, key: value}, valid, st.sampled_from(properties or ["unexpected_field"]), JSON
    )
    return st.one_of(
        valid.map(json.dumps),
        valid.map(json.dumps),
        valid.map(json.dumps),
        extra_field.map(json.dumps),
        wrong_type.map(json.dumps),
        JSON.map(json.dumps),
        st.text(max_size=30),
    )


def query_value(document: dict[str, Any], schema: dict[str, Any]) -> st.SearchStrategy[str]:
    """A query string value: in the declared range, just outside it, or junk."""
    schema = resolve(document, schema)
    kind = schema.get("type")
    if kind == "integer":
        low, high = _bound(schema, "minimum"), _bound(schema, "maximum")
        in_range = st.integers(min_value=low, max_value=high)
        edges = st.sampled_from([v for v in (low, high) if v is not None] + [(low or 0) - 1, (high or 0) + 1])
        return st.one_of(in_range, edges, st.integers()).map(str) | st.text(max_size=8)
    if kind == "boolean":
        return st.sampled_from(["true", "false", "True", "0", "1", "yes", ""]) | st.text(max_size=5)
    return st.text(max_size=60)


# --- the run -----------------------------------------------------------------------------------------
def operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """Every (METHOD, path template, operation); deletions last, so the others meet live ids."""
    found = [
        (method.upper(), path, operation)
        for path, item in sorted(document["paths"].items())
        for method, operation in sorted(item.items())
    ]
    return sorted(found, key=lambda op: op[0] == "DELETE")


Request = tuple[str, dict[str, str] | None, str | None]  # path, query, body


def requests(
    document: dict[str, Any], template: str, operation: dict[str, Any], path_ids: st.SearchStrategy[str]
) -> st.SearchStrategy[Request]:
    """Requests for one operation: its path parameters, any subset of its query parameters, its body."""
    parameters = operation.get("parameters", [])
    path_params = [p["name"] for p in parameters if p["in"] == "path"]
    query_params = {p["name"]: query_value(document, p["schema"]) for p in parameters if p["in"] == "query"}
    request_body = operation.get("requestBody")
    body = body_strategy(document, request_body["content"]["application/json"]["schema"]) if request_body else None

    @st.composite
    def draw(data: st.DrawFn) -> Request:
        path = template
        for name in path_params:
            path = path.replace("{" + name + "}", quote(data(path_ids), safe=""))
        query = {name: data(value) for name, value in query_params.items() if data(st.booleans())}
        return path, query or None, data(body) if body is not None else None

    return draw()


def check_response(status: int, body: Any, label: str) -> None:
    assert status < 500, f"{label}: {status} {body}"
    assert status in ANSWERED, f"{label}: {status} {body}"
    assert isinstance(body, dict) and body.get("status") in ("ok", "error"), f"{label}: {body!r}"
    assert (body["status"] == "ok") == (200 <= status < 300), f"{label}: {status} {body}"
    if "message" in body:
        assert isinstance(body["message"], str)


def test_every_operation_of_the_openapi_document_answers_schema_driven_requests_without_a_5xx(
    local_env_factory: Any,
) -> None:
    # Given the local stack with three enrolled participants, and the API's own OpenAPI document
    env: LocalEnvironment = local_env_factory()
    ids = []
    for phone in ENROLLED:
        response = env.api("POST", "/conversation/participants", json_body={"phone_number": phone})
        assert response.status == 201, response.body
        ids.append(response.body["result"]["id"])
    from functions.enrollment.handler import app

    document = json.loads(app.get_openapi_json_schema(title="PromptPipe participants API", version="0.1.0"))
    path_ids = st.one_of(
        st.sampled_from(ids),
        st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=40),
        st.from_regex(r"p_[0-9a-f]{32}", fullmatch=True),
    )
    seen: dict[str, set[int]] = {}

    def exercise(method: str, template: str, operation: dict[str, Any]) -> None:
        label = f"{method} {template}"

        @RUN
        @given(request=requests(document, template, operation, path_ids))
        def run(request: Request) -> None:
            path, query, body = request
            headers = {"content-type": "application/json"} if body is not None else None
            # When the request reaches the handler
            response = env.api(method, path, body=body, headers=headers, query=query)
            # Then no 5xx, a status the API answers with, and the envelope
            check_response(response.status, response.body, label)
            seen.setdefault(label, set()).add(response.status)

        run()

    for method, template, operation in operations(document):
        exercise(method, template, operation)

    # And every operation was exercised, and the run reached both answers of the API: "ok" and "error"
    assert set(seen) == {f"{m} {p}" for m, p, _ in operations(document)}
    statuses = set().union(*seen.values())
    assert statuses & {200, 201} and statuses & {400, 404}
