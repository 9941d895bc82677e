"""A minimal OpenAI-compatible Chat Completions endpoint in front of any ``LLM`` (the competent-model
stand-in, in the tests of ``make eval-llm``): ``POST /v1/chat/completions`` on 127.0.0.1.

Only what the project's OpenAI adapter sends and reads: messages (with tool calls and tool results),
tools, ``tool_choice``, ``response_format``; the answer's message, finish reason and usage. The
usage is an estimate (characters / 4) because the wrapped model reports none.

    with ChatCompletionsServer(llm) as server:   # an ephemeral port, a daemon thread
        OpenAILLM(api_key="x", base_url=server.base_url)
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from promptpipe.models.llm import ChatMessage, ChatRequest, ChatResponse, ToolCall, ToolDefinition
from promptpipe.ports import LLM

PATH = "/v1/chat/completions"


def request_from_openai(body: dict[str, Any]) -> ChatRequest:
    """The port's request from a Chat Completions body (no purpose: it is not on the wire)."""
    messages = []
    for raw in body.get("messages", []):
        calls = [
            ToolCall(id=c["id"], name=c["function"]["name"], arguments=c["function"].get("arguments") or "{}")
            for c in raw.get("tool_calls") or []
        ]
        role, content, call_id = raw["role"], raw.get("content"), raw.get("tool_call_id")
        messages.append(ChatMessage(role=role, content=content, tool_calls=calls, tool_call_id=call_id))
    tools = [
        ToolDefinition(
            name=t["function"]["name"],
            description=t["function"].get("description", ""),
            parameters=t["function"].get("parameters", {}),
        )
        for t in body.get("tools") or []
    ]
    choice = body.get("tool_choice")
    return ChatRequest(
        messages=messages,
        tools=tools,
        model=body.get("model"),
        tool_choice=choice if choice in ("auto", "required", "none") else None,
        response_format=body.get("response_format"),
    )


def response_to_openai(response: ChatResponse, body: dict[str, Any], number: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": response.content}
    if response.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in response.tool_calls
        ]
    prompt_tokens = len(json.dumps([body.get("messages"), body.get("tools")], ensure_ascii=False)) // 4
    completion_tokens = len(json.dumps(message, ensure_ascii=False)) // 4
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model") or response.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if response.tool_calls else (response.finish_reason or "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class ChatCompletionsServer:
    """Serves ``llm`` on ``127.0.0.1`` at an ephemeral port until ``close`` (or the ``with`` ends)."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm
        self.requests = 0
        self.models: set[str] = set()  # the ``model`` of every request received
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                if self.path.rstrip("/") != PATH:
                    self._send(404, {"error": {"message": f"unknown path {self.path}"}})
                    return
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                with server._lock:
                    server.requests += 1
                    server.models.add(str(body.get("model")))
                    number = server.requests
                response = server.llm.complete(request_from_openai(body))
                self._send(200, response_to_openai(response, body, number))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return  # quiet: the test output is the report

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="chat-completions", daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ChatCompletionsServer:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
