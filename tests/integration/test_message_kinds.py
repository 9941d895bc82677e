"""Every message visible as what it was: non-text traffic posted through the real
webhooks as the providers post it (tests/data/inbound_payloads.json) reads as its kind in the text
transcript (`promptpipe transcript`), the console's participant page and the export, never as an
empty bubble; an edit reads as an edit of the earlier message."""

from __future__ import annotations

import contextlib
import copy
import html
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.cli import coordinator_commands as cli_coordinator
from promptpipe.cli.commands import main
from promptpipe.console.app import Console
from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.coordinator.export import write_export
from promptpipe.local.api_transport import InProcessTransport
from promptpipe.local.environment import LocalEnvironment
from tests.integration.test_receive_inbound import (
    CORPUS,
    OLD,
    greeted,
    meta,
    post_meta,
    post_twilio,
    transcript,
)
from tests.support import enroll_over_api


def edit_of(original_id: str, text: str) -> dict[str, Any]:
    """An edit as Meta posts it: the revoke payload's shape with type ``edit`` and the new text."""
    payload = copy.deepcopy(CORPUS["meta"]["revoke"]["payload"])
    payload["entry"][0]["changes"][0]["value"]["messages"] = [
        {
            "from": "14155550100",
            "id": "wamid.EDIT1",
            "timestamp": "1669233800",
            "type": "edit",
            "edit": {
                "original_message_id": original_id,
                "message": {"type": "text", "text": {"body": text}},
            },
        }
    ]
    return payload


def post_every_kind(env: LocalEnvironment, pid: str) -> None:
    [greeting] = [e for e in transcript(env, pid) if e["kind"] == "greeting"]
    greeting_id = greeting["delivery"]["provider_id"]
    assert greeting_id
    posts = [
        meta("text", text={"body": "I walked to work"}),
        edit_of("wamid.TEXT1", "I cycled to work"),
        meta("reaction", reaction={"message_id": greeting_id, "emoji": "👍"}),
        meta("reaction_removed", reaction={"message_id": greeting_id}),
        meta("image_with_caption"),
        meta("audio"),
        meta("sticker"),
        meta("location"),
        meta("contacts"),
        meta("unknown_131051"),
        meta("system_customer_identity_changed"),
        meta("revoke"),
        CORPUS["meta"]["status_failed"]["payload"],
    ]
    for payload in posts:
        assert post_meta(env, payload).status == 200
    assert post_twilio(env, CORPUS["twilio"]["status_failed_63016"]["form"]).status == 200


EXPECTED = [
    '[edit] Edited their message "I walked to work" to: I cycled to work',
    '[reaction] Reacted 👍 to the coach\'s message "Hi Alex!"',
    '[reaction removed] Removed their reaction to the coach\'s message "Hi Alex!"',
    "[attachment] Sent a photo",
    "[media] Sent a voice message or audio",
    "[media] Sent a sticker",
    "[media] Sent a location",
    "[media] Sent a contact card",
    "[unsupported message] Sent a message of a type the provider does not pass on",
    "[system notice] WhatsApp notice (customer identity changed): Alex's security code changed",
    '[deleted] Deleted their message "I walked to work"',
    "[delivery failed] The provider reported a message failed (code 131053, ERROR_TITLE)",
    "[delivery failed] The provider reported a message failed (code 63016)",
]


@pytest.fixture
def stack(local_env_factory: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[LocalEnvironment, str, CoordinatorClient]:
    llm = greeted(ScriptedLLM()).add(ScriptedLLM.text("Nice walk!")).add(ScriptedLLM.text("Lovely photo!"))
    env = local_env_factory(llm=llm)
    pid = enroll_over_api(env, OLD, name="Alex", timezone="UTC")
    post_every_kind(env, pid)
    client = CoordinatorClient(InProcessTransport(env))

    @contextlib.contextmanager
    def local(_args: Any) -> Iterator[CoordinatorClient]:
        yield client

    monkeypatch.setattr(cli_coordinator, "coordinator_client", local)
    return env, pid, client


def test_the_text_transcript_shows_every_kind_and_the_edit_of_the_earlier_message(
    stack: tuple[LocalEnvironment, str, CoordinatorClient], capsys: pytest.CaptureFixture[str]
) -> None:
    _env, pid, _client = stack
    capsys.readouterr()
    assert main(["transcript", pid, "--demo"]) == 0
    out = capsys.readouterr().out
    shown = [line[6:].split("›", 1)[-1].split("·", 1)[-1].strip() for line in out.splitlines() if line[:2].isdigit()]
    for expected in EXPECTED:
        assert expected in shown, (expected, out)
    # the original message stays as it was written, once; no bubble is empty
    assert sum(s == "I walked to work" for s in shown) == 1
    assert all(s and not s.endswith("]") for s in shown), out


def test_the_console_shows_every_kind(stack: tuple[LocalEnvironment, str, CoordinatorClient]) -> None:
    _env, pid, client = stack
    page = html.unescape(Console(client).participant_page(pid, {}))
    for expected in EXPECTED:
        mark, text = expected[1:].split("] ", 1)
        assert f'<span class="mark">{mark}</span>' in page, mark
        assert f"<p>{text}</p>" in page, text
    assert "<p></p>" not in page


def test_the_export_shows_every_kind(stack: tuple[LocalEnvironment, str, CoordinatorClient], tmp_path: Path) -> None:
    _env, _pid, client = stack
    write_export(client, tmp_path)
    lines = [json.loads(line) for line in (tmp_path / "messages.jsonl").read_text().splitlines()]
    shown = {f"[{line['shown_as']}] {line['shown']}" for line in lines if line["shown_as"]}
    assert set(EXPECTED) <= shown
    assert all(line["shown"] for line in lines)
