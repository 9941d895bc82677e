"""The ``LLM`` port over OpenAI Chat Completions (with tools), through the official ``openai`` SDK.

Any OpenAI-compatible endpoint works through ``base_url``; a request naming another endpoint than
the default is sent only to one the deployment lists, with that endpoint's own key
(``endpoint_key``): the default key never leaves for another host. ``openai`` is imported only when the
first client is built: importing it costs over a second of cold start, and functions that never call
the model (the webhook) must not pay it (docs/architecture.md#cold-start).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from promptpipe.errors import ConfigurationError, LLMError
from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse, TokenUsage, ToolCall
from promptpipe.models.llm_routes import endpoint_url

if TYPE_CHECKING:  # type names only; never imported at run time from here
    from openai import OpenAI

    from promptpipe.settings import Settings

REASONING_INSTRUCTION = (
    "Format of your answer: reply with one JSON object and nothing else, of the form "
    '{"thinking": "<your brief reasoning, never shown to the participant>", '
    '"content": "<the message the participant will read>"}. '
    "Use valid JSON (escape quotes and newlines inside strings). If you call tools, call them as usual."
)

# Model families that take ``max_completion_tokens`` (and only the default temperature) instead of
# ``max_tokens``: the reasoning models.
_COMPLETION_TOKENS_PREFIXES = ("o1", "o3", "o4", "gpt-5")

# HTTP statuses worth another attempt later (the SDK itself retries the same set).
_RETRYABLE_STATUSES = frozenset({408, 409, 429})
_CODE_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```$", re.DOTALL)


class LLMCallError(LLMError):
    """An ``LLMError`` raised by this adapter (status and retryability live on ``LLMError``)."""


class OpenAILLM:
    """``LLM`` port adapter: one ``complete`` call is one Chat Completions request (SDK retries
    included). Failures come out as ``LLMCallError`` (an ``LLMError``)."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None = None,
        model: str = "gpt-4o-mini",
        temperature: float = 0.1,
        max_tokens: int = 1000,
        timeout_seconds: float = 30.0,
        max_retries: int = 2,
        reasoning_capture: bool = False,
        perf_counter: Callable[[], float] = time.perf_counter,
        endpoint_key: Callable[[str], str | None] = lambda _url: None,
    ) -> None:
        if not api_key:
            raise ConfigurationError("OpenAILLM needs an API key (OPENAI_API_KEY or OPENAI_SECRET_NAME)")
        self._api_key = api_key
        self._base_url = base_url
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout_seconds = timeout_seconds
        self.max_retries = max_retries
        self.reasoning_capture = reasoning_capture
        self._perf_counter = perf_counter
        self._client: OpenAI | None = None
        # The key of a listed endpoint by its base URL (None: not listed, never called).
        self._endpoint_key = endpoint_key
        self._routed_clients: dict[str, OpenAI] = {}  # per base URL of a model route

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        api_key: str | None = None,
        endpoint_key: Callable[[str], str | None] = lambda _url: None,
    ) -> OpenAILLM:
        """Built from ``GENAI_*``, ``OPENAI_*`` and ``LLM_REASONING_CAPTURE``. ``api_key`` (for
        example read from Secrets Manager by the caller) wins over ``OPENAI_API_KEY``;
        ``endpoint_key`` gives the key of each endpoint of ``LLM_ENDPOINTS`` by base URL."""
        key = api_key or settings.openai_api_key
        if not key:
            raise ConfigurationError("no OpenAI API key: set OPENAI_API_KEY or OPENAI_SECRET_NAME")
        return cls(
            api_key=key,
            base_url=settings.openai_base_url,
            model=settings.genai_model,
            temperature=settings.genai_temperature,
            max_tokens=settings.genai_max_tokens,
            timeout_seconds=settings.genai_timeout_seconds,
            max_retries=settings.genai_max_retries,
            reasoning_capture=settings.llm_reasoning_capture,
            endpoint_key=endpoint_key,
        )

    def warm(self) -> None:
        """Import ``openai`` and build the client now (Lambda init / SnapStart snapshot) rather
        than on the first turn."""
        self._get_client()

    def _get_client(self) -> OpenAI:
        if self._client is None:
            import openai  # lazy on purpose: see the module docstring

            self._client = openai.OpenAI(
                api_key=self._api_key,
                base_url=self._base_url,
                timeout=self.timeout_seconds,
                max_retries=self.max_retries,
            )
        return self._client

    def _client_for(self, base_url: str | None) -> OpenAI:
        """The default client, or one per listed endpoint with that endpoint's key. A base URL the
        deployment does not list is refused here too (the routing refuses it first), before any
        connection: the request and the default key go nowhere."""
        client = self._get_client()
        if not base_url or endpoint_url(base_url) == endpoint_url(self._base_url or ""):
            return client
        url = endpoint_url(base_url)
        routed = self._routed_clients.get(url)
        if routed is None:
            key = self._endpoint_key(url)
            if not key:
                raise LLMCallError(f"model endpoint {url} is not one this deployment lists; not called")
            routed = client.with_options(base_url=url, api_key=key)
            self._routed_clients[url] = routed
        return routed

    def complete(self, request: ChatRequest) -> ChatResponse:
        client = self._client_for(request.base_url)
        import openai  # already in sys.modules once the client exists

        kwargs = self._request_kwargs(request)
        started = self._perf_counter()
        try:
            completion = client.chat.completions.create(**kwargs)
        except openai.OpenAIError as exc:
            raise _translate_error(exc) from exc
        latency_ms = (self._perf_counter() - started) * 1000.0
        return self._to_response(completion, request_model=kwargs["model"], latency_ms=latency_ms)

    def _request_kwargs(self, request: ChatRequest) -> dict[str, Any]:
        messages = [m.to_openai() for m in request.messages]
        if self.reasoning_capture:
            messages.append(ChatMessage(role="system", content=REASONING_INSTRUCTION).to_openai())
        model = request.model or self.model
        max_tokens = self.max_tokens if request.max_tokens is None else request.max_tokens
        kwargs: dict[str, Any] = {"model": model, "messages": messages}
        if uses_max_completion_tokens(model):
            kwargs["max_completion_tokens"] = max_tokens
        else:
            kwargs["temperature"] = self.temperature if request.temperature is None else request.temperature
            kwargs["max_tokens"] = max_tokens
        if request.tools:
            kwargs["tools"] = [t.to_openai() for t in request.tools]
            kwargs["tool_choice"] = request.tool_choice or "auto"
            if request.parallel_tool_calls is not None:
                kwargs["parallel_tool_calls"] = request.parallel_tool_calls
        if request.response_format is not None:
            kwargs["response_format"] = request.response_format
        return kwargs

    def _to_response(self, completion: Any, *, request_model: str, latency_ms: float) -> ChatResponse:
        choices = getattr(completion, "choices", None) or []
        if not choices:
            raise LLMCallError("OpenAI returned no choices", retryable=True)
        choice = choices[0]
        message = choice.message
        content: str | None = message.content
        reasoning: str | None = None
        if self.reasoning_capture and content is not None:
            content, reasoning = parse_reasoning(content)
        if content is not None and not content.strip():
            content = None
        usage = getattr(completion, "usage", None)
        return ChatResponse(
            content=content,
            tool_calls=[_to_tool_call(c) for c in (message.tool_calls or [])],
            model=getattr(completion, "model", None) or request_model,
            usage=TokenUsage(
                prompt_tokens=(usage.prompt_tokens or 0) if usage else 0,
                completion_tokens=(usage.completion_tokens or 0) if usage else 0,
                cached_tokens=_cached_tokens(usage),
            ),
            latency_ms=latency_ms,
            finish_reason=choice.finish_reason,
            reasoning=reasoning,
        )


def uses_max_completion_tokens(model: str) -> bool:
    """Reasoning models reject ``max_tokens`` and a non-default temperature."""
    name = model.rsplit("/", 1)[-1].lower()
    return name.startswith(_COMPLETION_TOKENS_PREFIXES)


def _cached_tokens(usage: Any) -> int:
    """``usage.prompt_tokens_details.cached_tokens`` (absent on older SDKs and on many compatible
    endpoints: then 0)."""
    details = getattr(usage, "prompt_tokens_details", None) if usage is not None else None
    return int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0


def parse_reasoning(text: str) -> tuple[str | None, str | None]:
    """``(content, reasoning)`` from a reply to ``REASONING_INSTRUCTION``. A JSON object with a
    string (or null) ``"content"`` is unpacked; anything else is the content as is, no reasoning.
    One surrounding Markdown code fence is tolerated because models often add it."""
    candidate = text.strip()
    fenced = _CODE_FENCE.match(candidate)
    if fenced:
        candidate = fenced.group(1).strip()
    try:
        value = json.loads(candidate)
    except ValueError:
        return text, None
    if not isinstance(value, dict) or "content" not in value:
        return text, None
    content = value["content"]
    if content is not None and not isinstance(content, str):
        return text, None
    thinking = value.get("thinking")
    if thinking is not None and not isinstance(thinking, str):
        thinking = json.dumps(thinking, ensure_ascii=False)
    return content, (thinking or None)


def _to_tool_call(call: Any) -> ToolCall:
    function = getattr(call, "function", None)
    if function is not None:
        return ToolCall(id=call.id, name=function.name, arguments=function.arguments or "{}")
    custom = getattr(call, "custom", None)  # "custom" tools: free-text input instead of JSON
    if custom is not None:
        return ToolCall(id=call.id, name=custom.name, arguments=custom.input or "{}")
    raise LLMCallError(f"OpenAI returned an unsupported tool call type {getattr(call, 'type', None)!r}")


def _translate_error(exc: Exception) -> LLMCallError:
    """Every SDK failure as an ``LLMCallError`` whose message names the HTTP status when known."""
    import openai  # already imported: the client exists when this runs

    if isinstance(exc, openai.APITimeoutError):
        return LLMCallError("OpenAI request timed out after retries", retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        return LLMCallError(f"OpenAI connection failed after retries: {exc.message}", retryable=True)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        retryable = status in _RETRYABLE_STATUSES or status >= 500
        kind = "rate limited" if isinstance(exc, openai.RateLimitError) else "request failed"
        return LLMCallError(
            f"OpenAI {kind} (HTTP {status}): {_short(exc.message)}", status_code=status, retryable=retryable
        )
    if isinstance(exc, openai.APIError):
        code = getattr(exc, "status_code", None)
        where = f" (HTTP {code})" if code is not None else ""
        return LLMCallError(f"OpenAI API error{where}: {_short(exc.message)}", status_code=code)
    return LLMCallError(f"OpenAI client error: {type(exc).__name__}: {_short(str(exc))}")


def _short(text: str, limit: int = 300) -> str:
    """Provider messages can echo large bodies; keep logs and errors readable."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
