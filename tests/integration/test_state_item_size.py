"""The flow-state item stays under 8 KB however long the conversation (docs/architecture.md, "The
flow-state item"), through the real handlers on moto: webhook, queue, worker, DynamoDB store.

The item is read back with ``GetItem`` and sized as DynamoDB sizes items (``scripts/bench/item_size.py``).
The participant's words and the coach's replies vary from turn to turn (seeded), so the compressed
history is not flattered by repetition.
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from promptpipe.adapters.aws import aws_client
from promptpipe.adapters.scripted_llm import ScriptedLLM
from promptpipe.local.demo import send_sms
from promptpipe.models.llm import ChatRequest, ChatResponse
from promptpipe.models.state import StateData
from promptpipe.models.store import Direction
from scripts.bench.item_size import ITEM_TARGET_BYTES, dynamodb_item_size

PHONE = "+14155550177"
TURNS = 45
# A reply every two hours, a dozen a day: the item also keeps a day of event records (at most 25,
# ~200 bytes each: docs/architecture.md, "Event records"), which a faster chat fills on its own.
TURN_GAP = timedelta(hours=2)
VOCABULARY = (
    "walk stretch morning coffee water breath minutes habit small step today tomorrow tired busy "
    "great energy sleep park stairs lunch evening focus calm body mind win streak again proud "
    "plan start easy hard try keep going noticed felt better slower quicker gentle routine kitchen "
    "desk window music friend outside weather rain sunny shoes timer alarm after before during"
)
WORDS = tuple(VOCABULARY.split())


class KeyedCoach:
    """Answers each participant message with its own reply (any other call: a fixed greeting)."""

    def __init__(self, replies: dict[str, str]) -> None:
        self.replies = replies
        self.purposes: list[str] = []

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.purposes.append(request.purpose)
        reply = self.replies.get(request.messages[-1].content or "", "Welcome! What habit shall we build?")
        return ScriptedLLM.text(reply)


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def flow_item(env: Any, participant_id: str) -> dict[str, Any]:
    return aws_client("dynamodb", env.settings).get_item(
        TableName=env.settings.table_name,
        Key={"pk": {"S": f"PARTICIPANT#{participant_id}"}, "sk": {"S": "FLOW#conversation"}},
        ConsistentRead=True,
    )["Item"]


def test_the_flow_state_item_stays_under_8_kb_as_turns_accumulate(local_env_factory: Any) -> None:
    # Given a coach whose replies are ~35 words (~220 characters), different every turn
    rng = random.Random(27)
    sent = [sentence(rng, 10) for _ in range(TURNS)]
    replies = [" ".join(sentence(rng, 7) for _ in range(5)) for _ in range(TURNS)]
    coach = KeyedCoach(dict(zip(sent, replies, strict=True)))
    # (without the intake controller, which hands a participant who never answers its questions to
    # a person: every message here gets the model's reply)
    env = local_env_factory(llm=coach, flow_controller_enabled=False)
    created = env.api("POST", "/conversation/participants", json_body={"phone_number": PHONE})
    assert created.status == 201
    pid = created.body["result"]["id"]
    env.drain()  # the greeting
    sizes: list[int] = []
    # When the participant writes TURNS messages of ~10 words, each answered
    for n, text in enumerate(sent):
        env.advance(TURN_GAP)
        assert send_sms(env, PHONE, text, f"SMsize{n:05d}") == 200
        env.drain()
        sizes.append(dynamodb_item_size(flow_item(env, pid)))
    # Then the item never exceeds 8 KB, and stops growing once the history holds its 30 messages
    assert max(sizes) <= ITEM_TARGET_BYTES, sizes
    assert max(sizes[20:]) - min(sizes[20:]) < 200, sizes
    history = StateData({k: v["S"] for k, v in flow_item(env, pid)["state_data"]["M"].items()}).history()
    assert len(history) == 30
    assert [m.content for m in history][-2:] == [sent[-1], replies[TURNS - 1]]
    # And nothing is lost: the transcript holds every message and every reply
    entries, token = env.app.store.list_transcript(pid, limit=1000, next_token=None)
    assert token is None
    inbound = [e.content for e in entries if e.direction is Direction.INBOUND and e.kind == "message"]
    replied = [e.content for e in entries if e.direction is Direction.OUTBOUND and e.kind == "reply"]
    assert inbound == sent
    assert replied == replies
    # And the stored history is the transcript's latest 30 messages
    record = [e.content for e in entries if e.kind in ("message", "reply")]
    assert [m.content for m in history] == record[-30:]
