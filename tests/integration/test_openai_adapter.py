"""OpenAILLM against a local OpenAI-compatible HTTP server: the real SDK, real HTTP, no network."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from promptpipe.adapters.openai_llm import REASONING_INSTRUCTION, LLMCallError, OpenAILLM
from promptpipe.errors import ConfigurationError, LLMError
from promptpipe.models.llm import ChatMessage, ChatRequest, ToolCall, ToolDefinition
from promptpipe.settings import Settings

# --- the fake server --------------------------------------------------------------------------------


@dataclass
class Reply:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    delay_seconds: float = 0.0


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeOpenAIServer:
    """Serves ``POST /v1/chat/completions`` from a queue of scripted replies; records requests."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        # Set at teardown so a handler that is delaying (timeout test) returns at once.
        self.release = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        # A short poll interval keeps shutdown() (each teardown) from waiting the default 0.5 s.
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def reply(
        self,
        body: dict[str, Any],
        *,
        status: int = 200,
        headers: dict[str, str] | None = None,
        delay_seconds: float = 0.0,
    ) -> None:
        self.replies.append(Reply(status, body, headers or {}, delay_seconds))

    def error(self, status: int, message: str = "boom", *, headers: dict[str, str] | None = None) -> None:
        self.reply(
            {"error": {"message": message, "type": "server_error", "code": None}},
            status=status,
            headers=headers,
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append(Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                if self.path != "/v1/chat/completions":
                    reply = Reply(404, {"error": {"message": f"no route {self.path}"}})
                elif server.replies:
                    reply = server.replies.popleft()
                else:
                    reply = Reply(599, {"error": {"message": "fake server: no scripted reply left"}})
                if reply.delay_seconds:
                    server.release.wait(reply.delay_seconds)
                payload = json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    fake = FakeOpenAIServer()
    fake.start()
    yield fake
    fake.stop()


def completion(
    content: str | None = "Hello!",
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    model: str = "gpt-4o-mini-2024-07-18",
    prompt_tokens: int = 42,
    completion_tokens: int = 7,
    finish_reason: str = "stop",
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def make_llm(server: FakeOpenAIServer, **overrides: Any) -> OpenAILLM:
    options: dict[str, Any] = {"api_key": "test", "base_url": server.base_url, "max_retries": 0}
    options.update(overrides)
    return OpenAILLM(**options)


def ticking(*values: float) -> Any:
    it = iter(values)
    return lambda: next(it)


USER_ONLY = ChatRequest(
    messages=[
        ChatMessage(role="system", content="You are a habit coach."),
        ChatMessage(role="user", content="Hi"),
    ]
)

# --- plain replies ----------------------------------------------------------------------------------


def test_plain_text_reply_maps_content_usage_model_and_latency(server: FakeOpenAIServer) -> None:
    server.reply(completion("Hello! Ready to build a habit?"))
    llm = make_llm(server, perf_counter=ticking(10.0, 10.25))

    response = llm.complete(USER_ONLY)

    assert response.content == "Hello! Ready to build a habit?"
    assert response.tool_calls == []
    assert response.model == "gpt-4o-mini-2024-07-18"
    assert response.usage.prompt_tokens == 42
    assert response.usage.completion_tokens == 7
    assert response.usage.total_tokens == 49
    assert response.finish_reason == "stop"
    assert response.latency_ms == pytest.approx(250.0)
    assert response.reasoning is None

    [sent] = server.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer test"
    assert sent.body["model"] == "gpt-4o-mini"
    assert sent.body["temperature"] == 0.1
    assert sent.body["max_tokens"] == 1000
    assert sent.body["messages"] == [
        {"role": "system", "content": "You are a habit coach."},
        {"role": "user", "content": "Hi"},
    ]
    assert "tools" not in sent.body
    assert "tool_choice" not in sent.body


def test_request_settings_override_the_defaults(server: FakeOpenAIServer) -> None:
    server.reply(completion("ok"))
    llm = make_llm(server, model="default-model", temperature=0.9, max_tokens=500)

    llm.complete(USER_ONLY.model_copy(update={"model": "gpt-4.1", "temperature": 0.0, "max_tokens": 64}))

    body = server.requests[0].body
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("gpt-4.1", 0.0, 64)


def test_constructor_defaults_are_sent_when_the_request_sets_none(server: FakeOpenAIServer) -> None:
    server.reply(completion("ok"))
    make_llm(server, model="m-1", temperature=0.7, max_tokens=321).complete(USER_ONLY)

    body = server.requests[0].body
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("m-1", 0.7, 321)


@pytest.mark.parametrize("content", ["", "   \n ", None])
def test_empty_content_is_none(server: FakeOpenAIServer, content: str | None) -> None:
    server.reply(completion(content))
    assert make_llm(server).complete(USER_ONLY).content is None


def test_missing_usage_is_zero_and_missing_model_falls_back_to_requested(server: FakeOpenAIServer) -> None:
    body = completion("ok", model="")
    del body["usage"]
    server.reply(body)

    response = make_llm(server, model="my-model").complete(USER_ONLY)

    assert response.usage.total_tokens == 0
    assert response.model == "my-model"


# --- tools ------------------------------------------------------------------------------------------

SAVE_PROFILE = ToolDefinition(
    name="save_user_profile",
    description="Save what the participant told you.",
    parameters={
        "type": "object",
        "properties": {"habit_domain": {"type": "string"}, "motivational_frame": {"type": "string"}},
        "required": [],
    },
)
SCHEDULER = ToolDefinition(
    name="scheduler",
    description="Set up daily prompts.",
    parameters={"type": "object", "properties": {"action": {"type": "string"}}, "required": ["action"]},
)


def test_tool_calls_round_trip(server: FakeOpenAIServer) -> None:
    raw_profile_args = '{"habit_domain": "fitness",  "motivational_frame": "feel \\u00e9nergique"}'
    raw_scheduler_args = '{"action":"create","fixed_time":"08:30"}'
    server.reply(
        completion(
            None,
            finish_reason="tool_calls",
            tool_calls=[
                {
                    "id": "call_abc",
                    "type": "function",
                    "function": {"name": "save_user_profile", "arguments": raw_profile_args},
                },
                {
                    "id": "call_def",
                    "type": "function",
                    "function": {"name": "scheduler", "arguments": raw_scheduler_args},
                },
            ],
        )
    )
    request = ChatRequest(
        purpose="intake",
        tools=[SAVE_PROFILE, SCHEDULER],
        messages=[
            ChatMessage(role="system", content="You are a habit coach."),
            ChatMessage(role="user", content="I want to run more"),
            ChatMessage(
                role="assistant",
                content=None,
                tool_calls=[ToolCall(id="call_prev", name="save_user_profile", arguments='{"habit_domain":"run"}')],
            ),
            ChatMessage(role="tool", tool_call_id="call_prev", content="✅ Profile saved"),
            ChatMessage(role="user", content="Mornings, 8:30"),
        ],
    )

    response = make_llm(server).complete(request)

    assert response.content is None
    assert response.finish_reason == "tool_calls"
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("call_abc", "save_user_profile", raw_profile_args),
        ("call_def", "scheduler", raw_scheduler_args),
    ]
    assert response.tool_calls[0].parsed_arguments() == {
        "habit_domain": "fitness",
        "motivational_frame": "feel énergique",
    }

    body = server.requests[0].body
    assert body["tool_choice"] == "auto"
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "save_user_profile",
                "description": "Save what the participant told you.",
                "parameters": SAVE_PROFILE.parameters,
            },
        },
        {
            "type": "function",
            "function": {
                "name": "scheduler",
                "description": "Set up daily prompts.",
                "parameters": SCHEDULER.parameters,
            },
        },
    ]
    assert body["messages"][2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_prev",
                "type": "function",
                "function": {"name": "save_user_profile", "arguments": '{"habit_domain":"run"}'},
            }
        ],
    }
    assert body["messages"][3] == {"role": "tool", "content": "✅ Profile saved", "tool_call_id": "call_prev"}
    assert body["messages"][4] == {"role": "user", "content": "Mornings, 8:30"}


def test_content_and_tool_calls_together(server: FakeOpenAIServer) -> None:
    server.reply(
        completion(
            "Saving that now.",
            finish_reason="tool_calls",
            tool_calls=[{"id": "c1", "type": "function", "function": {"name": "scheduler", "arguments": "{}"}}],
        )
    )
    response = make_llm(server).complete(USER_ONLY.model_copy(update={"tools": [SCHEDULER]}))

    assert response.content == "Saving that now."
    assert [c.name for c in response.tool_calls] == ["scheduler"]


# --- errors -----------------------------------------------------------------------------------------


def test_server_error_is_retryable_llm_error_with_status(server: FakeOpenAIServer) -> None:
    server.error(500, "upstream exploded")

    with pytest.raises(LLMError) as caught:
        make_llm(server, max_retries=0).complete(USER_ONLY)

    error = caught.value
    assert isinstance(error, LLMCallError)
    assert error.status_code == 500
    assert error.retryable is True
    assert "HTTP 500" in str(error)
    assert "upstream exploded" in str(error)
    assert error.__cause__ is not None
    assert len(server.requests) == 1


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_client_errors_are_not_retryable(server: FakeOpenAIServer, status: int) -> None:
    server.error(status, "bad request shape")

    with pytest.raises(LLMCallError) as caught:
        make_llm(server, max_retries=2).complete(USER_ONLY)

    assert caught.value.status_code == status
    assert caught.value.retryable is False
    assert f"HTTP {status}" in str(caught.value)
    assert len(server.requests) == 1  # the SDK does not retry these either


def test_rate_limit_is_retried_by_the_sdk_then_raised(server: FakeOpenAIServer) -> None:
    # retry-after-ms keeps the SDK's back-off to a millisecond instead of ~0.5 s.
    server.error(429, "slow down", headers={"retry-after-ms": "1"})
    server.error(429, "slow down", headers={"retry-after-ms": "1"})

    with pytest.raises(LLMCallError) as caught:
        make_llm(server, max_retries=1).complete(USER_ONLY)

    assert len(server.requests) == 2
    assert caught.value.status_code == 429
    assert caught.value.retryable is True
    assert "rate limited" in str(caught.value)


def test_rate_limit_then_success_returns_the_reply(server: FakeOpenAIServer) -> None:
    server.error(429, "slow down", headers={"retry-after-ms": "1"})
    server.reply(completion("second time lucky"))

    response = make_llm(server, max_retries=1).complete(USER_ONLY)

    assert response.content == "second time lucky"
    assert len(server.requests) == 2


def test_timeout_is_retryable_llm_error(server: FakeOpenAIServer) -> None:
    server.reply(completion("too late"), delay_seconds=10.0)  # released at teardown

    with pytest.raises(LLMCallError) as caught:
        make_llm(server, timeout_seconds=0.2, max_retries=0).complete(USER_ONLY)

    assert caught.value.status_code is None
    assert caught.value.retryable is True
    assert "timed out" in str(caught.value)


def test_connection_refused_is_retryable_llm_error() -> None:
    with socket.socket() as probe:  # a port nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    llm = OpenAILLM(api_key="test", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)

    with pytest.raises(LLMCallError) as caught:
        llm.complete(USER_ONLY)

    assert caught.value.status_code is None
    assert caught.value.retryable is True
    assert "connection" in str(caught.value).lower()


def test_no_choices_is_an_llm_error(server: FakeOpenAIServer) -> None:
    body = completion("x")
    body["choices"] = []
    server.reply(body)

    with pytest.raises(LLMCallError, match="no choices"):
        make_llm(server).complete(USER_ONLY)


# --- reasoning capture ------------------------------------------------------------------------------


def test_reasoning_capture_parses_the_json_answer(server: FakeOpenAIServer) -> None:
    server.reply(completion(json.dumps({"thinking": "They want mornings.", "content": "Great, 8:30 it is!"})))

    response = make_llm(server, reasoning_capture=True).complete(USER_ONLY)

    assert response.content == "Great, 8:30 it is!"
    assert response.reasoning == "They want mornings."
    messages = server.requests[0].body["messages"]
    assert len(messages) == 3
    assert messages[-1] == {"role": "system", "content": REASONING_INSTRUCTION}
    assert '"thinking"' in REASONING_INSTRUCTION
    assert '"content"' in REASONING_INSTRUCTION


def test_reasoning_capture_instruction_comes_after_tool_results(server: FakeOpenAIServer) -> None:
    server.reply(completion('{"thinking": "t", "content": "c"}'))
    request = ChatRequest(
        tools=[SCHEDULER],
        messages=[
            ChatMessage(role="user", content="hi"),
            ChatMessage(role="assistant", tool_calls=[ToolCall(id="c1", name="scheduler")]),
            ChatMessage(role="tool", tool_call_id="c1", content="ok"),
        ],
    )

    make_llm(server, reasoning_capture=True).complete(request)

    roles = [m["role"] for m in server.requests[0].body["messages"]]
    assert roles == ["user", "assistant", "tool", "system"]


def test_reasoning_capture_tolerates_a_code_fence(server: FakeOpenAIServer) -> None:
    server.reply(completion('```json\n{"thinking": "fenced", "content": "Hi there"}\n```'))

    response = make_llm(server, reasoning_capture=True).complete(USER_ONLY)

    assert (response.content, response.reasoning) == ("Hi there", "fenced")


@pytest.mark.parametrize(
    "raw",
    [
        "Just plain text, no JSON.",
        '{"thinking": "no content key"}',
        '["a", "list"]',
        '{"content": 42}',
        '{"thinking": "broken", "content": "unterminated',
    ],
)
def test_reasoning_capture_falls_back_to_raw_text(server: FakeOpenAIServer, raw: str) -> None:
    server.reply(completion(raw))

    response = make_llm(server, reasoning_capture=True).complete(USER_ONLY)

    assert response.content == raw
    assert response.reasoning is None


def test_reasoning_capture_empty_content_is_none_but_keeps_reasoning(server: FakeOpenAIServer) -> None:
    server.reply(completion('{"thinking": "nothing to say", "content": "  "}'))

    response = make_llm(server, reasoning_capture=True).complete(USER_ONLY)

    assert response.content is None
    assert response.reasoning == "nothing to say"


def test_reasoning_capture_off_returns_json_text_untouched(server: FakeOpenAIServer) -> None:
    raw = '{"thinking": "secret", "content": "visible"}'
    server.reply(completion(raw))

    response = make_llm(server, reasoning_capture=False).complete(USER_ONLY)

    assert response.content == raw
    assert response.reasoning is None
    assert server.requests[0].body["messages"] == [m.to_openai() for m in USER_ONLY.messages]


# --- construction and cold start --------------------------------------------------------------------


def test_from_settings_uses_genai_settings() -> None:
    settings = Settings(
        openai_api_key="sk-from-settings",
        openai_base_url="http://127.0.0.1:9/v1",
        genai_model="gpt-4.1-mini",
        genai_temperature=0.3,
        genai_max_tokens=256,
        genai_timeout_seconds=12.5,
        genai_max_retries=4,
        llm_reasoning_capture=True,
    )

    llm = OpenAILLM.from_settings(settings)

    assert (llm.model, llm.temperature, llm.max_tokens) == ("gpt-4.1-mini", 0.3, 256)
    assert (llm.timeout_seconds, llm.max_retries, llm.reasoning_capture) == (12.5, 4, True)
    assert OpenAILLM.from_settings(settings, api_key="sk-explicit")._api_key == "sk-explicit"


def test_from_settings_without_a_key_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match=r"^no OpenAI API key: set OPENAI_API_KEY or OPENAI_SECRET_NAME$"):
        OpenAILLM.from_settings(Settings(openai_api_key=None))


def test_an_empty_key_is_a_configuration_error() -> None:
    with pytest.raises(
        ConfigurationError, match=r"^OpenAILLM needs an API key \(OPENAI_API_KEY or OPENAI_SECRET_NAME\)$"
    ):
        OpenAILLM(api_key="")


def test_sdk_is_configured_with_timeout_and_retries(server: FakeOpenAIServer) -> None:
    llm = make_llm(server, timeout_seconds=7.5, max_retries=3)
    llm.warm()

    client = llm._get_client()
    assert client.timeout == 7.5
    assert client.max_retries == 3
    assert str(client.base_url).rstrip("/") == server.base_url


def test_importing_the_adapter_does_not_import_openai() -> None:
    script = (
        "import sys\n"
        "import promptpipe.adapters.openai_llm as m\n"
        "assert 'openai' not in sys.modules, 'imported at module import'\n"
        "llm = m.OpenAILLM(api_key='k', base_url='http://127.0.0.1:9/v1')\n"
        "assert 'openai' not in sys.modules, 'imported by the constructor'\n"
        "llm.warm()\n"
        "assert 'openai' in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


# --- routes, other tool call shapes -----------------------------------------------------------------


def test_a_route_with_its_own_base_url_is_sent_there_and_the_default_stays(server: FakeOpenAIServer) -> None:
    # Given a second OpenAI-compatible endpoint that one route names
    other = FakeOpenAIServer()
    other.start()
    try:
        other.reply(completion("from the route"))
        other.reply(completion("from the route again"))
        server.reply(completion("from the default"))
        keys = {other.base_url: "other-key"}
        llm = make_llm(server, endpoint_key=keys.get)
        routed = USER_ONLY.model_copy(update={"base_url": other.base_url + "/"})
        # When two routed requests and one default request are made
        answers = [llm.complete(routed).content, llm.complete(routed).content, llm.complete(USER_ONLY).content]
    finally:
        other.stop()
    # Then each went to its endpoint, each with its own key
    assert answers == ["from the route", "from the route again", "from the default"]
    assert len(other.requests) == 2 and len(server.requests) == 1
    assert {r.headers["authorization"] for r in other.requests} == {"Bearer other-key"}
    assert server.requests[0].headers["authorization"] == "Bearer test"


def test_a_base_url_with_no_key_of_its_own_is_never_called(server: FakeOpenAIServer) -> None:
    # Given a request naming an endpoint the deployment does not list (listener: a second server)
    foreign = FakeOpenAIServer()
    foreign.start()
    try:
        foreign.reply(completion("exfiltrated"))
        llm = make_llm(server)
        # When it is made / Then it fails before any connection, and the default key went nowhere
        with pytest.raises(LLMCallError, match="is not one this deployment lists; not called") as raised:
            llm.complete(USER_ONLY.model_copy(update={"base_url": foreign.base_url}))
    finally:
        foreign.stop()
    assert foreign.requests == [] and server.requests == []
    assert raised.value.retryable is False


def test_reasoning_that_is_not_text_is_kept_as_json(server: FakeOpenAIServer) -> None:
    server.reply(completion(json.dumps({"thinking": {"goal": "walking", "step": 2}, "content": "Walk after lunch?"})))

    response = make_llm(server, reasoning_capture=True).complete(USER_ONLY)

    assert response.content == "Walk after lunch?"
    assert json.loads(response.reasoning or "") == {"goal": "walking", "step": 2}


def test_a_custom_tool_call_keeps_its_free_text_input(server: FakeOpenAIServer) -> None:
    custom = {"id": "c1", "type": "custom", "custom": {"name": "scheduler", "input": "every day at 8"}}
    server.reply(completion(None, tool_calls=[custom], finish_reason="tool_calls"))

    response = make_llm(server).complete(USER_ONLY)

    assert response.tool_calls == [ToolCall(id="c1", name="scheduler", arguments="every day at 8")]


def test_an_unknown_tool_call_type_is_an_llm_error(server: FakeOpenAIServer) -> None:
    server.reply(completion(None, tool_calls=[{"id": "c2", "type": "mystery"}], finish_reason="tool_calls"))

    with pytest.raises(LLMCallError, match=r"^OpenAI returned an unsupported tool call type 'mystery'$"):
        make_llm(server).complete(USER_ONLY)
