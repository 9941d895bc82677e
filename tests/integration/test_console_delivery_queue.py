"""The console's needs-a-person queue and each message's delivery, rendered over the participants API
on the local stack (docs/console.md): a skipped message reads in plain words (never its code), a
failed one with the provider code's meaning, each with its channel, free text or template, segments;
the day's cost; and the queue lists every held participant with the reason and the wait."""

from __future__ import annotations

import html
from datetime import UTC, datetime, timedelta
from typing import Any

from promptpipe.console.app import Console
from promptpipe.console.delivery import cost_by_day, delivery_of
from promptpipe.console.queue import reason_words, waited_words
from promptpipe.coordinator.client import CoordinatorClient
from promptpipe.local.api_transport import InProcessTransport
from promptpipe.models.store import DeliveryOutcome, Direction, TranscriptEntry
from tests.integration.test_hold_alerts import _text
from tests.support import enroll_over_api, hand_off_a_new_participant, priced_reply

PHONE = "+12125550163"  # test_hold_alerts' participant phone


def test_a_failed_and_a_skipped_delivery_read_in_plain_words(local_env_factory: Any) -> None:
    env = local_env_factory()
    pid = enroll_over_api(env, PHONE, name="Rosa", timezone="America/New_York")
    _text(env, "walking sounds good", "SMd1", 5)
    client = CoordinatorClient(InProcessTransport(env))
    outbound = [e for e in client.iter_history(pid) if e.direction is Direction.OUTBOUND]
    assert len(outbound) >= 2
    greeting, reply = outbound[0], outbound[-1]
    env.app.deliveries.record_outcomes(
        pid,
        greeting.at,
        {greeting.seq: DeliveryOutcome(status="skipped", reason="outside_window_no_template", at=greeting.at)},
    )
    env.app.deliveries.record_outcomes(
        pid,
        reply.at,
        {
            reply.seq: DeliveryOutcome(
                status="failed", code="30007", reason="undelivered: x", at=reply.at, channel="sms", segments=2
            )
        },
    )

    page = html.unescape(Console(client).participant_page(pid, {}))

    assert "outside_window_no_template" not in page  # never a raw code
    assert 'skipped</span>: <span class="meaning">WhatsApp\'s 24-hour window was closed and no template' in page
    assert (
        'failed</span>: <span class="meaning">the carrier filtered the message as spam (provider code 30007)</span>'
        in page
    )
    assert '<span class="channel">SMS</span> · <span class="form">free text</span> · ' in page
    assert '<span class="segments">2 segments</span>' in page
    # The cost by day: the local outbox's messages counted as SMS segments, the offline coach unpriced
    assert 'id="costs-h">Cost by day' in page and "unpriced: offline-coach" in page


def test_delivery_words_for_every_outcome() -> None:
    at = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)

    def entry(
        delivery: DeliveryOutcome | None, content: str = "Hi there", direction: Direction = Direction.OUTBOUND
    ) -> TranscriptEntry:
        return TranscriptEntry(
            participant_id="p_1",
            at=at,
            seq="e#0",
            direction=direction,
            kind="reply",
            content=content,
            delivery=delivery,
        )

    sent = delivery_of(entry(DeliveryOutcome(status="sent", provider_id="wamid.X", template="daily_prompt_v2")))
    assert sent is not None and (sent.words, sent.channel, sent.form, sent.segments) == (
        "sent",
        "WhatsApp",
        "template daily_prompt_v2",
        None,
    )
    old = delivery_of(entry(None, "ł" * 71))  # an entry from before outcomes: sent; SMS by its id unknown
    assert old is not None and old.words == "sent" and old.channel == "—"
    twilio = delivery_of(entry(DeliveryOutcome(status="sent", provider_id="SM1"), "ł" * 71))
    assert twilio is not None and twilio.channel == "SMS" and twilio.segments == 2  # UCS-2: 70 a segment
    pending = delivery_of(entry(DeliveryOutcome(status="pending")))
    assert pending is not None and pending.words == "not confirmed sent" and "may not have happened" in pending.meaning
    delivered = delivery_of(entry(DeliveryOutcome.model_construct(status="delivered", provider_id="SM2")))
    assert delivered is not None and delivered.outcome == "delivered"
    unknown = delivery_of(entry(DeliveryOutcome(status="failed", code="99999")))
    assert unknown is not None and unknown.meaning == "the provider's code 99999; see its error list"
    assert delivery_of(entry(None, direction=Direction.INBOUND)) is None
    priced = priced_reply(at)
    [day] = cost_by_day([priced], zone=__import__("zoneinfo").ZoneInfo("UTC"))
    assert (day.messages, day.segments, day.model_calls, day.unpriced_calls) == (1, 1, 1, 0)
    assert day.model_usd == 0.15 and round(day.total_usd, 4) == round(0.15 + 0.0083, 4)


def test_the_queue_lists_each_held_participant_with_the_reason_and_the_wait(local_env_factory: Any) -> None:
    env = local_env_factory()
    asked = enroll_over_api(env, PHONE, name="Rosa")
    _text(env, "can I talk to a person", "SMq1", 5)
    handed = hand_off_a_new_participant(env, "+14165550199")
    env.drain()
    enroll_over_api(env, "+12125550170", name="Not held")
    client = CoordinatorClient(InProcessTransport(env))

    page = html.unescape(Console(client).queue_page())

    assert '<span class="count badge" aria-label="2 waiting">2</span>' in page
    rows = page.split('<tr class="reason-')[1:]
    assert [r.split('"', 1)[0] for r in rows] == ["asked", "handoff"] or [r.split('"', 1)[0] for r in rows] == [
        "handoff",
        "asked",
    ]
    assert f'href="/participants/{asked}">Rosa<' in page and f'href="/participants/{handed}">Alex<' in page
    assert "asked for a person" in page and "repeated failure" in page and "Not held" not in page


def test_reason_and_wait_words() -> None:
    now = datetime(2026, 3, 2, 13, 0, tzinfo=UTC)
    assert [waited_words(now - d, now) for d in (timedelta(minutes=7), timedelta(hours=3, minutes=5))] == [
        "7 min",
        "3 h 05 min",
    ]
    assert waited_words(now - timedelta(days=1, hours=2), now) == "1 day 2 h"
    assert waited_words(now - timedelta(days=3), now) == "3 days 0 h" and waited_words(None, now) == "unknown"
    assert (reason_words("safety"), reason_words(None), reason_words("other")) == (
        "safety",
        "repeated failure",
        "other",
    )
