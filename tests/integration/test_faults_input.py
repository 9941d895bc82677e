"""Fault suite: secrets and bad input through the real handlers against moto.

Model routes name only the deployment's endpoints: an override naming another host is a 400 naming
the allowed ones, and no request reaches that host (a local listener counts them); an allowed second
endpoint gets its own key; a route stored before the deployment changed is ignored at the turn.
Bad input is a 4xx, cheaply: a JSON integer over 4,300 digits and duplicate keys are 400 on every
route and refused by the CLI; a 48 KB alias cycle is refused at once; pushes that keep losing to
concurrent ones are a 409 naming the version that won; a flow file nested 1,200 levels is one line."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
import pytest

from promptpipe.local.environment import LocalEnvironment, local_settings
from promptpipe.local.signing import twilio_form, twilio_signature

BASE = "/conversation/participants"
FLOWS = "/conversation/flows"
PHONE = "+14155550101"
TWILIO_URL = "https://localhost/webhooks/twilio"
JSON = {"content-type": "application/json"}
SECOND_MODEL = "second-model"


# --- OpenAI-compatible listeners ----------------------------------------------------------------------


class Listener:
    """Answers every ``POST …/chat/completions`` with one fixed reply and records who called."""

    def __init__(self, reply: str) -> None:
        self.authorizations: list[str] = []
        self.models: list[str] = []
        body = {
            "id": "chatcmpl-fault",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
        }
        payload = json.dumps(body).encode()
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                request = json.loads(self.rfile.read(length) or b"{}")
                listener.authorizations.append(self.headers.get("Authorization", ""))
                listener.models.append(request.get("model", ""))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def listeners() -> Iterator[dict[str, Listener]]:
    started = {name: Listener(f"reply from {name}") for name in ("default", "second", "foreign")}
    yield started
    for listener in started.values():
        listener.stop()


@pytest.fixture
def routed_env(local_env_factory: Any, listeners: dict[str, Listener], request: pytest.FixtureRequest) -> Any:
    """A stack whose model client is the real OpenAI adapter: the default endpoint (its key
    ``sk-default``) and one listed second endpoint whose key is in Secrets Manager (moto)."""
    from promptpipe.settings import Settings
    from promptpipe.wiring import build_llm

    secret_name = f"promptpipe/second-{request.node.name}"  # Powertools caches secrets per name
    second = {"base_url": listeners["second"].base_url, "models": [SECOND_MODEL], "secret_name": secret_name}
    raw: dict[str, Any] = {
        "openai_api_key": "sk-default",
        "openai_base_url": listeners["default"].base_url,
        "genai_max_retries": 0,
        "llm_endpoints": {"second": second},
    }
    validated = Settings(**raw)  # the local stack copies its overrides in unvalidated
    overrides = {name: getattr(validated, name, value) for name, value in raw.items()}
    llm = build_llm(local_settings(**overrides), {})
    env = local_env_factory(llm=llm, **overrides)
    boto3.client("secretsmanager").create_secret(Name=secret_name, SecretString='{"API_KEY": "sk-second"}')
    return env


def _enroll(env: LocalEnvironment) -> str:
    response = env.api("POST", BASE, json_body={"phone_number": PHONE})
    assert response.status == 201, response.body
    return response.body["result"]["id"]


def _text(env: LocalEnvironment, body: str, sid: str) -> None:
    params = {"MessageSid": sid, "AccountSid": "AC1", "From": PHONE, "To": "+14155550000", "Body": body}
    headers = {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": twilio_signature(TWILIO_URL, params, env.settings.twilio_auth_token or ""),
    }
    assert (
        env.api("POST", "/webhooks/twilio", body=twilio_form(params), headers=headers, base64_body=True).status == 200
    )


# --- item 6: secrets go only where the deployment says ---------------------------------------------


def test_a_route_to_a_foreign_host_is_a_400_naming_the_allowed_ones_and_the_host_hears_nothing(
    routed_env: LocalEnvironment, listeners: dict[str, Listener]
) -> None:
    env = routed_env
    pid = _enroll(env)
    version = env.app.store.load(pid).flow.version
    # When a participants-API caller points intake at a host of their own
    foreign = {"llm_routes": {"intake": {"base_url": listeners["foreign"].base_url}}, "reason": "exfiltrate"}
    response = env.api("POST", f"{BASE}/{pid}/state", json_body=foreign)
    # Then 400, naming what is allowed; nothing is stored
    assert response.status == 400 and response.body["status"] == "error", response.body
    message = response.body["message"]
    assert "is not an endpoint of this deployment" in message
    assert "allowed: the default endpoint (no base_url) with model gpt-4o-mini" in message
    assert f"{listeners['second'].base_url} with model {SECOND_MODEL}" in message
    assert env.app.store.load(pid).flow.version == version
    # And the participant's next turn calls the default endpoint only, with its key
    _text(env, "hello", "SMfault1")
    assert listeners["foreign"].authorizations == []
    assert set(listeners["default"].authorizations) == {"Bearer sk-default"}


def test_a_model_the_deployment_does_not_list_is_a_400(routed_env: LocalEnvironment) -> None:
    pid = _enroll(routed_env)
    body = {"llm_routes": {"feedback": {"model": "o1-pro"}}, "reason": "expensive"}
    response = routed_env.api("POST", f"{BASE}/{pid}/state", json_body=body)
    assert response.status == 400
    assert response.body["message"].startswith(
        "llm_routes.feedback: model 'o1-pro' is not allowed at the default endpoint; allowed: "
    )


def test_an_allowed_second_endpoint_gets_its_own_key(
    routed_env: LocalEnvironment, listeners: dict[str, Listener]
) -> None:
    env = routed_env
    pid = _enroll(env)
    greeted = len(listeners["default"].authorizations)
    second = {"base_url": listeners["second"].base_url, "model": SECOND_MODEL}
    response = env.api("POST", f"{BASE}/{pid}/state", json_body={"llm_routes": {"intake": second}, "reason": "trial"})
    assert response.status == 200, response.body
    _text(env, "hello", "SMfault2")
    # The turn went to the second endpoint with the key from its own secret, never the default key
    assert listeners["second"].authorizations and set(listeners["second"].authorizations) == {"Bearer sk-second"}
    assert set(listeners["second"].models) == {SECOND_MODEL}
    assert len(listeners["default"].authorizations) == greeted  # only the greeting went there
    assert [m.body for m in env.messages(pid)][-1] == "reply from second"


def test_a_stored_route_no_longer_allowed_is_ignored_at_the_turn_with_a_warning(
    routed_env: LocalEnvironment, listeners: dict[str, Listener], caplog: pytest.LogCaptureFixture
) -> None:
    env = routed_env
    pid = _enroll(env)
    # Given a route stored before the deployment's endpoints changed (written straight to the state)
    from promptpipe.flow import routing
    from promptpipe.models.llm_routes import LLMRoute

    session = env.app.sessions.open(pid, "stored-route")
    route = {"intake": LLMRoute(base_url=listeners["foreign"].base_url, model="m")}
    session.apply("store", lambda op: routing.store_participant_routes(op.data.raw, route))
    session.commit(record_event=False)
    # When the participant writes
    with caplog.at_level(logging.WARNING, logger="promptpipe.flow.routing"):
        _text(env, "hello", "SMfault3")
    # Then the foreign host hears nothing, the default endpoint answers, and a warning says why
    assert listeners["foreign"].authorizations == []
    assert [m.body for m in env.messages(pid)][-1] == "reply from default"
    assert any("not allowed here; ignored" in r.getMessage() for r in caplog.records)


# --- item 7: bad input is a 4xx, cheaply ------------------------------------------------------------


@pytest.fixture
def env(local_env_factory: Any) -> LocalEnvironment:
    return local_env_factory()


def _body_routes(pid: str) -> list[tuple[str, str]]:
    return [
        ("POST", BASE),
        ("PUT", f"{BASE}/{pid}"),
        ("POST", f"{BASE}/{pid}/state"),
        ("POST", f"{FLOWS}/validate"),
        ("PUT", f"{FLOWS}/intake"),
    ]


def _stored_versions(env: LocalEnvironment) -> list[int]:
    return [v["version"] for v in env.api("GET", f"{FLOWS}/intake/versions").body["result"]["versions"]]


def test_a_json_integer_over_4300_digits_is_a_400_on_every_route(env: LocalEnvironment) -> None:
    pid = _enroll(env)
    version = env.app.store.load(pid).flow.version
    huge = b'{"phone_number": "+14155550102", "reason": "x", "version": ' + b"9" * 5000 + b"}"
    for method, path in _body_routes(pid):
        response = env.api(method, path, body=huge, headers=JSON)
        assert response.status == 400 and response.body["status"] == "error", (method, path, response)
        assert "an integer of 5000 digits" in response.body["message"], response.body
    # nothing changed
    assert [p["id"] for p in env.api("GET", BASE).body["result"]["participants"]] == [pid]
    assert env.app.store.load(pid).flow.version == version
    assert _stored_versions(env) == [1]


def _flow(**changes: Any) -> dict[str, Any]:
    flow = {
        "id": "intake",
        "primaryGoal": {"type": "GATE", "gate": "G"},
        "gates": {"G": {"satisfiedBy": {"metricsAll": ["habit"]}}},
        "nodes": [{"id": "ask", "produces": ["habit"]}],
    }
    return {**flow, **changes}


def test_duplicate_keys_are_a_400_on_put_as_flows_validate_refuses_them(env: LocalEnvironment) -> None:
    pid = _enroll(env)
    _stored_versions(env)  # the bundled flow is seeded as version 1
    # A gate defined twice: the second silently replaced the first before
    text = json.dumps(_flow())
    twice = text.replace('"gates": {', '"gates": {"G": {"satisfiedBy": {"metricsAll": ["never"]}}, ', 1)
    from promptpipe.controller.definition import parse_text

    assert [str(p) for p in parse_text(twice)[1]] == ["$: duplicate key 'G'"]  # what `flows validate` says
    for method, path in (("PUT", f"{FLOWS}/intake"), ("POST", f"{FLOWS}/validate")):
        response = env.api(method, path, body=twice, headers=JSON)
        assert response.status == 400 and "duplicate key 'G'" in response.body["message"], response.body
    assert _stored_versions(env) == [1]
    enrol_twice = '{"phone_number": "+14155550103", "phone_number": "+14155550104"}'
    response = env.api("POST", BASE, body=enrol_twice, headers=JSON)
    assert response.status == 400 and "duplicate key 'phone_number'" in response.body["message"]
    assert [p["id"] for p in env.api("GET", BASE).body["result"]["participants"]] == [pid]


def test_a_48_kb_alias_cycle_is_refused_at_once(env: LocalEnvironment) -> None:
    # 2,750 aliases in one cycle (48 KB): validating it took minutes (cubic), past the function's timeout
    aliases = {f"a{i}": f"a{(i + 1) % 2750}" for i in range(2750)}
    body = json.dumps(_flow(factAliases=aliases))
    assert 47_000 < len(body) < env.settings.max_api_body_bytes
    answers: list[Any] = []
    worker = threading.Thread(target=lambda: answers.append(env.api("PUT", f"{FLOWS}/intake", body=body, headers=JSON)))
    worker.daemon = True
    worker.start()
    worker.join(timeout=60)  # generous: it takes milliseconds now
    assert answers, "validation of a 3,000-alias cycle did not finish within 60 s"
    problems = answers[0].body["result"]["problems"]
    assert answers[0].status == 400
    assert [p["path"] for p in problems if p["message"].startswith("alias cycle: a0 → a1 → ")] == ["$.factAliases.a0"]


def test_pushes_that_keep_losing_to_concurrent_ones_are_a_409_naming_the_version_that_won(
    env: LocalEnvironment,
) -> None:
    from promptpipe.controller.ports import StoredFlow

    catalog = env.app.deps.flows
    assert catalog is not None
    store = catalog.store
    _stored_versions(env)  # seeded: version 1
    real_put = store.put

    def another_coordinator_first(stored: StoredFlow) -> None:
        """Another push of the same flow lands just before each attempt of this one (DynamoDB's
        transaction condition then refuses this one, as it would under real contention)."""
        if stored.created_by != "other":
            winner = stored.definition.model_copy(update={"description": "theirs"})
            real_put(StoredFlow(definition=winner, created_at=env.clock.now(), created_by="other"))
        real_put(stored)

    store.put = another_coordinator_first  # type: ignore[method-assign]
    try:
        response = env.api("PUT", f"{FLOWS}/intake", json_body=_flow(description="ours"))
    finally:
        store.put = real_put  # type: ignore[method-assign]
    assert response.status == 409, response.body
    assert response.body["result"] == {"flow_id": "intake", "latest_version": 4}
    assert "version 4 won" in response.body["message"]
    assert _stored_versions(env) == [1, 2, 3, 4]
    assert env.api("GET", f"{FLOWS}/intake").body["result"]["description"] == "theirs"


# --- the CLI alike --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "case",
    [
        ("validate", '{"id": "x", "description": ' + "[" * 1200 + "]" * 1200 + "}", 1, "$: JSON is nested deeper"),
        ("push", '{"id": "x", "description": ' + "[" * 1200 + "]" * 1200 + "}", 2, "cannot be read: JSON is nested"),
        ("validate", '{"id": "x", "version": ' + "9" * 5000 + "}", 1, "$: JSON has an integer of 5000 digits"),
        ("push", '{"id": "x", "version": ' + "9" * 5000 + "}", 2, "cannot be read: JSON has an integer of 5000"),
        ("push", '{"id": "x", "id": "y"}', 1, "$: duplicate key 'id'"),
    ],
    ids=["validate-deep", "push-deep", "validate-huge-int", "push-huge-int", "push-duplicate"],
)
def test_the_cli_answers_bad_flow_files_in_one_line_with_the_documented_exit_code(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], case: tuple[str, str, int, str]
) -> None:
    from promptpipe.cli.commands import main

    command, content, code, line = case
    path = tmp_path / "flow.json"
    path.write_text(content)
    # nothing listens there: each file is refused before any call
    assert (
        main(["flows", command, str(path), "--api", "http://127.0.0.1:9"][: 3 if command == "validate" else 5]) == code
    )
    err = capsys.readouterr().err
    assert line in err and "Traceback" not in err, err
    assert err.splitlines()[-1].startswith("promptpipe flows: "), err
